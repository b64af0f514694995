//! The arithmetic operators on floats: `a + b`, `a - b`, `a * b`, `a / b`, `a % b`, `-x`.
//!
//! Compound assignments (`a += b`) are lowered by `#[differentiable]` to these.

binary_rules! {
    /// `a + b`: ∂/∂a = 1, ∂/∂b = 1.
    AddRule::op_add, AddPullback: |a, b| a + b, |_a, _b, _y| (1.0, 1.0);
    /// `a - b`: ∂/∂a = 1, ∂/∂b = −1.
    SubRule::op_sub, SubPullback: |a, b| a - b, |_a, _b, _y| (1.0, -1.0);
    /// `a * b`: ∂/∂a = b, ∂/∂b = a.
    MulRule::op_mul, MulPullback: |a, b| a * b, |a, b, _y| (b, a);
    /// `a / b`: ∂/∂a = 1/b, ∂/∂b = −a/b² (computed as −y/b, which does not overflow
    /// where `a/b` does not).
    DivRule::op_div, DivPullback: |a, b| a / b, |_a, b, y| (b.recip(), -y / b);
    /// `a % b` (`= a − b·trunc(a/b)`): ∂/∂a = 1, ∂/∂b = −trunc(a/b), the one-sided
    /// derivative away from the jumps at multiples of `b`.
    RemRule::op_rem, RemPullback: |a, b| a % b, |a, b, _y| (1.0, -(a / b).trunc());
}

unary_rules! {
    /// `-x`: d/dx = −1.
    NegRule::op_neg, NegPullback: |x| -x, |_x, _y| -1.0;
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{check_binary, check_unary};
    use mochi_core::{Call, Pullback};

    #[test]
    fn add_sub_mul_div_rem() {
        let pairs = [(1.5, -0.7), (-3.0, 2.5), (0.2, 8.0), (1e3, 1e-3)];
        check_binary!(op_add, |a, b| a + b, pairs);
        check_binary!(op_sub, |a, b| a - b, pairs);
        check_binary!(op_mul, |a, b| a * b, pairs);
        check_binary!(op_div, |a, b| a / b, pairs);
        // Away from the jumps of `%` (where a/b is an integer).
        check_binary!(
            op_rem,
            |a, b| a % b,
            [(7.3, 2.0), (-7.3, 2.0), (5.5, -1.5), (0.4, 3.0)]
        );
    }

    #[test]
    fn neg() {
        check_unary!(op_neg, |x| -x, [-2.0, 0.0, 0.5, 1e10]);
    }

    #[test]
    fn an_argument_used_twice_collects_both_contributions() {
        // x * x: both pullback outputs land in the same accumulator in generated code.
        let x = 3.0_f64;
        let (y, pb) = Call((&x, &x)).op_mul();
        let (mut da, mut db) = (0.0, 0.0);
        pb.pullback(1.0, (&mut da, &mut db));
        assert_eq!((y, da + db), (9.0, 6.0)); // d(x²)/dx = 2x
    }

    #[test]
    fn division_by_zero_propagates_like_the_primal() {
        let (y, pb) = Call((&1.0_f64, &0.0)).op_div();
        let (mut da, mut db) = (0.0, 0.0);
        pb.pullback(1.0, (&mut da, &mut db));
        assert_eq!(y, f64::INFINITY);
        assert_eq!(da, f64::INFINITY); // 1/0
        assert_eq!(db, f64::NEG_INFINITY); // −∞/0
    }
}
