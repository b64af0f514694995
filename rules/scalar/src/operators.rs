//! The arithmetic operators on floats: `a + b`, `a - b`, `a * b`, `a / b`, `a % b`, `-x`.
//!
//! Compound assignments (`a += b`) are lowered by `#[differentiable]` to these.

use mochi_core::kit::{rule_trait, unary_rules};
use mochi_core::{Call, Pullback, Real, Scalar};
// The operators are written out rather than through `binary_rules!`: each pullback
// keeps only what its partials need (`+` and `−` keep nothing), because in loops the
// pullbacks are what a gradient stores per iteration.

rule_trait!(
    /// `a + b`: ∂/∂a = 1, ∂/∂b = 1.
    AddRule::op_add
);
rule_trait!(
    /// `a - b`: ∂/∂a = 1, ∂/∂b = −1.
    SubRule::op_sub
);
rule_trait!(
    /// `a * b`: ∂/∂a = b, ∂/∂b = a.
    MulRule::op_mul
);
rule_trait!(
    /// `a / b`: ∂/∂a = 1/b, ∂/∂b = −a/b² (computed as −y/b, which does not overflow
    /// where `a/b` does not).
    DivRule::op_div
);
rule_trait!(
    /// `a % b` (`= a − b·trunc(a/b)`): ∂/∂a = 1, ∂/∂b = −trunc(a/b), the one-sided
    /// derivative away from the jumps at multiples of `b`.
    RemRule::op_rem
);

/// The pullback of [`AddRule`]: nothing to keep.
#[derive(Clone, Copy, Debug)]
pub struct AddPullback<T>(std::marker::PhantomData<T>);
/// The pullback of [`SubRule`]: nothing to keep.
#[derive(Clone, Copy, Debug)]
pub struct SubPullback<T>(std::marker::PhantomData<T>);
/// The pullback of [`MulRule`]: both factors.
#[derive(Clone, Copy, Debug)]
pub struct MulPullback<T> {
    a: T,
    b: T,
}
/// The pullback of [`DivRule`]: the divisor and the quotient.
#[derive(Clone, Copy, Debug)]
pub struct DivPullback<T> {
    b: T,
    y: T,
}
/// The pullback of [`RemRule`]: `trunc(a/b)`.
#[derive(Clone, Copy, Debug)]
pub struct RemPullback<T> {
    q: T,
}

// One impl per operator for every `Scalar` (f64, f32, duals): what generic code bounded
// by `Scalar` needs, and what forward-over-reverse runs on.
impl<S: Scalar> AddRule for Call<(&S, &S)> {
    type Output = S;
    type Pullback = AddPullback<S>;
    #[inline(always)]
    fn op_add(self) -> (S, AddPullback<S>) {
        (
            *self.0 .0 + *self.0 .1,
            AddPullback(std::marker::PhantomData),
        )
    }
}
impl<S: Scalar> Pullback for AddPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, db): (&mut S, &mut S)) {
        *da += dy;
        *db += dy;
    }
}
impl<S: Scalar> SubRule for Call<(&S, &S)> {
    type Output = S;
    type Pullback = SubPullback<S>;
    #[inline(always)]
    fn op_sub(self) -> (S, SubPullback<S>) {
        (
            *self.0 .0 - *self.0 .1,
            SubPullback(std::marker::PhantomData),
        )
    }
}
impl<S: Scalar> Pullback for SubPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, db): (&mut S, &mut S)) {
        *da += dy;
        *db -= dy;
    }
}
impl<S: Scalar> MulRule for Call<(&S, &S)> {
    type Output = S;
    type Pullback = MulPullback<S>;
    #[inline(always)]
    fn op_mul(self) -> (S, MulPullback<S>) {
        let (a, b) = (*self.0 .0, *self.0 .1);
        (a * b, MulPullback { a, b })
    }
}
impl<S: Scalar> Pullback for MulPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, db): (&mut S, &mut S)) {
        *da += dy * self.b;
        *db += dy * self.a;
    }
}
impl<S: Scalar> DivRule for Call<(&S, &S)> {
    type Output = S;
    type Pullback = DivPullback<S>;
    #[inline(always)]
    fn op_div(self) -> (S, DivPullback<S>) {
        let (a, b) = (*self.0 .0, *self.0 .1);
        let y = a / b;
        (y, DivPullback { b, y })
    }
}
impl<S: Scalar> Pullback for DivPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, db): (&mut S, &mut S)) {
        let g = dy / self.b;
        *da += g;
        *db -= g * self.y;
    }
}
impl<S: Scalar> RemRule for Call<(&S, &S)> {
    type Output = S;
    type Pullback = RemPullback<S>;
    #[inline(always)]
    fn op_rem(self) -> (S, RemPullback<S>) {
        let (a, b) = (*self.0 .0, *self.0 .1);
        let q = S::of_real(Real::trunc((a / b).as_real()));
        (a % b, RemPullback { q })
    }
}
impl<S: Scalar> Pullback for RemPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, db): (&mut S, &mut S)) {
        *da += dy;
        *db -= dy * self.q;
    }
}

unary_rules! {
    /// `-x`: d/dx = −1.
    NegRule::op_neg, NegPullback: |x| -x, |_x, _y| -T::ONE;
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use mochi_core::kit::{check_binary, check_unary};
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
