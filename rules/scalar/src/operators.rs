//! The arithmetic operators on floats: `a + b`, `a - b`, `a * b`, `a / b`, `a % b`, `-x`.
//!
//! Compound assignments (`a += b`) are lowered by `#[differentiable]` to these.

use mochi_core::kit::{rule_trait, unary_rules, Keep};
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
        // A quotient computed but not used passes nothing back, also by a zero divisor
        // (`0 / 0` would be `NaN`).
        if dy.is_zero_cotangent() {
            return;
        }
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

// An operand held by reference once more than the operator's own borrow (`lr * x[0]`
// with `let lr = &c[0];` or `let lr = cfg.get("lr")?;`, a `&f64` that Rust's operators
// take as it is): the rule of the values.
macro_rules! by_reference {
    ($($Rule:ident::$op:ident => $Pullback:ident;)*) => {$(
        impl<S: Scalar> $Rule for Call<(&&S, &S)> {
            type Output = S;
            type Pullback = $Pullback<S>;
            #[inline(always)]
            fn $op(self) -> (S, $Pullback<S>) {
                Call((*self.0 .0, self.0 .1)).$op()
            }
        }
        impl<S: Scalar> $Rule for Call<(&S, &&S)> {
            type Output = S;
            type Pullback = $Pullback<S>;
            #[inline(always)]
            fn $op(self) -> (S, $Pullback<S>) {
                Call((self.0 .0, *self.0 .1)).$op()
            }
        }
    )*};
}
by_reference! {
    AddRule::op_add => AddPullback;
    SubRule::op_sub => SubPullback;
    MulRule::op_mul => MulPullback;
    DivRule::op_div => DivPullback;
    RemRule::op_rem => RemPullback;
}

/// `Keep::new(p).prune()` for a product or quotient whose argument `K` is constant
/// (`mochi_core::kit::keep`): the pullback keeps only what the other argument's
/// partial needs.
pub trait PruneOperator {
    /// The pruned pullback.
    type Out;
    /// Prunes.
    fn prune(self) -> Self::Out;
}

/// The pullback of `c * b` with `c` constant: `c` (`b̄ += ȳ·c`).
#[derive(Clone, Copy, Debug)]
pub struct MulByLeftPullback<T> {
    a: T,
}
/// The pullback of `a * c` with `c` constant: `c` (`ā += ȳ·c`).
#[derive(Clone, Copy, Debug)]
pub struct MulByRightPullback<T> {
    b: T,
}
/// The pullback of `a / c` with `c` constant: `c` (`ā += ȳ/c`).
#[derive(Clone, Copy, Debug)]
pub struct DivByConstPullback<T> {
    b: T,
}

// The pruned pullbacks hold the constant operand only: in a loop whose constant is the
// same on every trip, they are kept once (`kit::hoist`).
impl<S: Scalar> mochi_core::kit::hoist::Invariant for MulByLeftPullback<S> {}
impl<S: Scalar> mochi_core::kit::hoist::Invariant for MulByRightPullback<S> {}
impl<S: Scalar> mochi_core::kit::hoist::Invariant for DivByConstPullback<S> {}

/// The pullback of `a * a` (both factors one value, `K = 2`): `a` once (`ā += ȳ·a` for
/// each factor).
#[derive(Clone, Copy, Debug)]
pub struct SquarePullback<T> {
    a: T,
}
// Each pruned pullback keeps one field of the whole one.
macro_rules! prune {
    ($($Whole:ident, $K:literal => $Pruned:ident { $field:ident };)*) => {$(
        impl<S: Scalar> PruneOperator for Keep<$Whole<S>, $K> {
            type Out = $Pruned<S>;
            #[inline(always)]
            fn prune(self) -> $Pruned<S> {
                $Pruned {
                    $field: self.into_inner().$field,
                }
            }
        }
    )*};
}
prune! {
    MulPullback, 0 => MulByLeftPullback { a };
    MulPullback, 1 => MulByRightPullback { b };
    MulPullback, 2 => SquarePullback { a };
    DivPullback, 1 => DivByConstPullback { b };
}
impl<S: Scalar> Pullback for SquarePullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, db): (&mut S, &mut S)) {
        let g = dy * self.a;
        *da += g;
        *db += g;
    }
}
impl<S: Scalar> Pullback for MulByLeftPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (_, db): (&mut S, &mut S)) {
        *db += dy * self.a;
    }
}
impl<S: Scalar> Pullback for MulByRightPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, _): (&mut S, &mut S)) {
        *da += dy * self.b;
    }
}
impl<S: Scalar> Pullback for DivByConstPullback<S> {
    type Output = S;
    type Args = (S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (da, _): (&mut S, &mut S)) {
        if dy.is_zero_cotangent() {
            return;
        }
        *da += dy / self.b;
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

    /// A pruned pullback gives the active argument what the whole one gives, and
    /// keeps one value instead of two.
    #[test]
    fn constant_arguments_prune_the_pullback() {
        use mochi_core::kit::{Keep, KeepWhole};
        let (a, c) = (1.7_f64, -0.6_f64);
        let whole = |pb: super::MulPullback<f64>| {
            let (mut da, mut db) = (0.0, 0.0);
            pb.pullback(0.3, (&mut da, &mut db));
            (da, db)
        };
        // c * a: the constant is argument 0
        let (_, pb) = Call((&c, &a)).op_mul();
        let (_, want) = whole(pb);
        let pruned = Keep::<_, 0>::new(pb).prune();
        assert_eq!(std::mem::size_of_val(&pruned), 8);
        let (mut dc, mut da) = (0.0, 0.0);
        pruned.pullback(0.3, (&mut dc, &mut da));
        assert_eq!((dc, da), (0.0, want));
        // a * c: argument 1
        let (_, pb) = Call((&a, &c)).op_mul();
        let (want, _) = whole(pb);
        let pruned = Keep::<_, 1>::new(pb).prune();
        let (mut da, mut dc) = (0.0, 0.0);
        pruned.pullback(0.3, (&mut da, &mut dc));
        assert_eq!((da, dc), (want, 0.0));
        // a / c
        let (_, pb) = Call((&a, &c)).op_div();
        let pruned = Keep::<_, 1>::new(pb).prune();
        assert_eq!(std::mem::size_of_val(&pruned), 8);
        let (mut da, mut dc) = (0.0, 0.0);
        pruned.pullback(0.3, (&mut da, &mut dc));
        assert_eq!((da, dc), (0.3 / c, 0.0));
        // a * a, both factors one value: kept once, each factor given ȳ·a
        let (_, pb) = Call((&a, &a)).op_mul();
        let (want, want_b) = whole(pb);
        let pruned = Keep::<_, 2>::new(pb).prune();
        assert_eq!(std::mem::size_of_val(&pruned), 8);
        let (mut d1, mut d2) = (0.0, 0.0);
        pruned.pullback(0.3, (&mut d1, &mut d2));
        assert_eq!((d1, d2), (want, want_b));
        assert_eq!(d1 + d2, 2.0 * a * 0.3);
        // a pullback no crate prunes comes back whole (the fallback)
        let (_, pb) = Call((&c, &a)).op_div();
        let kept = (&Keep::<_, 0>::new(pb)).prune();
        assert_eq!(std::mem::size_of_val(&kept), 16);
        let (mut dc, mut da) = (0.0, 0.0);
        kept.pullback(0.3, (&mut dc, &mut da));
        assert!((da - -0.3 * (c / a) / a).abs() < 1e-15 && (dc - 0.3 / a).abs() < 1e-15);
    }

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
