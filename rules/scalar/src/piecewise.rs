//! Piecewise functions: `abs`, `min`, `max`, `clamp`, rounding, `signum`, `fract`,
//! `copysign`. Each documents the subgradient it uses at its kinks (tabled in the
//! crate's README).

use mochi_core::kit::{binary_rules, rule_trait, unary_rules};
use mochi_core::{Call, Pullback, Real, Scalar};

unary_rules! {
    /// `x.abs()`: d/dx = sign x; **at 0 the derivative is 0** (the subgradient of
    /// least magnitude, so that a minimiser sitting at 0 stays there).
    AbsRule::abs, AbsPullback: |x| x.abs(), |x, _y| if x == T::ZERO { T::ZERO } else { x.signum() };
    /// `x.floor()`: d/dx = 0 everywhere, including at the jumps (integers).
    FloorRule::floor, FloorPullback: |x| x.floor(), |_x, _y| T::ZERO;
    /// `x.ceil()`: d/dx = 0 everywhere, including at the jumps (integers).
    CeilRule::ceil, CeilPullback: |x| x.ceil(), |_x, _y| T::ZERO;
    /// `x.round()`: d/dx = 0 everywhere, including at the jumps (half-integers).
    RoundRule::round, RoundPullback: |x| x.round(), |_x, _y| T::ZERO;
    /// `x.round_ties_even()`: d/dx = 0 everywhere, including at the jumps (half-integers).
    RoundTiesEvenRule::round_ties_even, RoundTiesEvenPullback: |x| x.round_ties_even(), |_x, _y| T::ZERO;
    /// `x.trunc()`: d/dx = 0 everywhere, including at the jumps (nonzero integers).
    TruncRule::trunc, TruncPullback: |x| x.trunc(), |_x, _y| T::ZERO;
    /// `x.signum()`: d/dx = 0 everywhere, including at the jump at 0.
    SignumRule::signum, SignumPullback: |x| x.signum(), |_x, _y| T::ZERO;
    /// `x.fract()` (`x − trunc x`): d/dx = 1, also at the jumps (integers), as for the
    /// continuous part it is.
    FractRule::fract, FractPullback: |x| x.fract(), |_x, _y| T::ONE;
}

binary_rules! {
    /// `a.min(b)`: the cotangent goes to the operand returned; **on a tie it all goes to
    /// the receiver `a`**. `NaN` operands are ignored, like the primal does.
    MinRule::min, MinPullback: |a, b| a.min(b),
        |a, b, _y| if b < a || a.is_nan() { (T::ZERO, T::ONE) } else { (T::ONE, T::ZERO) };
    /// `a.max(b)`: the cotangent goes to the operand returned; **on a tie it all goes to
    /// the receiver `a`**. `NaN` operands are ignored, like the primal does.
    MaxRule::max, MaxPullback: |a, b| a.max(b),
        |a, b, _y| if b > a || a.is_nan() { (T::ZERO, T::ONE) } else { (T::ONE, T::ZERO) };
    /// `x.copysign(s)` (`|x|` with the sign of `s`): ∂/∂x = ±1 (+1 when `x` and `s`
    /// have the same sign bit, which leaves `x` unchanged), **0 at `x = 0`** (as for
    /// `abs`); ∂/∂s = 0 (only the sign of `s` matters).
    CopysignRule::copysign, CopysignPullback: |x, s| x.copysign(s),
        |x, s, _y| {
            let dx = if x == T::ZERO {
                T::ZERO
            } else if x.is_sign_negative() == s.is_sign_negative() {
                T::ONE
            } else {
                -T::ONE
            };
            (dx, T::ZERO)
        };
    /// `x.rem_euclid(r)` (`x − r·⌊x/r⌋`, in `[0, |r|)`): ∂/∂x = 1, ∂/∂r = −⌊x/r⌋ (the
    /// Euclidean quotient), between the jumps; at a jump, the value's own side.
    RemEuclidRule::rem_euclid, RemEuclidPullback: |x, r| x.rem_euclid(r),
        |x, r, _y| (T::ONE, -x.div_euclid(r));
    /// `x.div_euclid(r)`: piecewise constant, d = 0.
    DivEuclidRule::div_euclid, DivEuclidPullback: |x, r| x.div_euclid(r),
        |_x, _r, _y| (T::ZERO, T::ZERO);
}

rule_trait! {
    /// `x.clamp(lo, hi)`: ∂/∂x = 1 **when `lo ≤ x ≤ hi` (bounds included)**, otherwise
    /// the cotangent goes to the active bound (`lo` when `x < lo`, `hi` when `x > hi`).
    /// Panics where the primal does (`lo > hi` or a `NaN` bound).
    ClampRule::clamp
}

/// Which argument of `clamp` the value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClampSide {
    /// `lo ≤ x ≤ hi` (or `x` is `NaN`): the value is `x`.
    Value,
    /// `x < lo`: the value is `lo`.
    Lower,
    /// `x > hi`: the value is `hi`.
    Upper,
}

/// The pullback of [`ClampRule`]: holds which argument the value came from.
#[derive(Clone, Copy, Debug)]
pub struct ClampPullback<T> {
    side: ClampSide,
    _float: std::marker::PhantomData<T>,
}

impl<S: Scalar> ClampRule for Call<(&S, &S, &S)> {
    type Output = S;
    type Pullback = ClampPullback<S>;
    #[inline(always)]
    fn clamp(self) -> (S, ClampPullback<S>) {
        let (x, lo, hi) = (*self.0 .0, *self.0 .1, *self.0 .2);
        let side = if x < lo {
            ClampSide::Lower
        } else if x > hi {
            ClampSide::Upper
        } else {
            ClampSide::Value
        };
        let y = S::of_real(Real::clamp(x.as_real(), lo.as_real(), hi.as_real()));
        (
            y,
            ClampPullback {
                side,
                _float: std::marker::PhantomData,
            },
        )
    }
}

impl<S: Scalar> Pullback for ClampPullback<S> {
    type Output = S;
    type Args = (S, S, S);
    #[inline(always)]
    fn pullback(self, dy: S, (dx, dlo, dhi): (&mut S, &mut S, &mut S)) {
        match self.side {
            ClampSide::Value => *dx += dy,
            ClampSide::Lower => *dlo += dy,
            ClampSide::Upper => *dhi += dy,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{derivative, partials};
    use mochi_core::kit::{check_binary, check_unary, F32_RTOL};
    use mochi_core::testing::RuleTest;
    use mochi_core::{Call, Dual, Pullback, Real};

    #[test]
    fn abs_away_from_the_kink_and_at_it() {
        check_unary!(abs, |x| x.abs(), [-3.0, -1e-7, 2e-9, 5.0]);
        assert_eq!(derivative(Call((&0.0_f64,)).abs().1), 0.0);
        assert_eq!(derivative(Call((&-0.0_f32,)).abs().1), 0.0);
        assert_eq!(derivative(Call((&-2.0_f32,)).abs().1), -1.0);
    }

    #[test]
    fn rounding_functions_have_zero_derivative() {
        let points = [-2.7, -0.2, 0.3, 1.5001, 41.9];
        check_unary!(floor, |x| x.floor(), points);
        check_unary!(ceil, |x| x.ceil(), points);
        check_unary!(round, |x| x.round(), [-2.7, -0.2, 0.3, 1.4, 41.9]);
        check_unary!(
            round_ties_even,
            |x| x.round_ties_even(),
            [-2.7, -0.2, 0.3, 1.4, 41.9]
        );
        check_unary!(trunc, |x| x.trunc(), points);
        check_unary!(signum, |x| x.signum(), [-2.0, -1e-30, 1e-30, 7.0]);
        check_unary!(fract, |x| x.fract(), points);
        // At the jumps themselves, by the table.
        for (x, rule) in [
            (2.0_f64, "floor"),
            (2.0, "ceil"),
            (2.5, "round"),
            (2.5, "round_ties_even"),
            (3.0, "trunc"),
            (0.0, "signum"),
        ] {
            let d = match rule {
                "floor" => derivative(Call((&x,)).floor().1),
                "ceil" => derivative(Call((&x,)).ceil().1),
                "round" => derivative(Call((&x,)).round().1),
                "round_ties_even" => derivative(Call((&x,)).round_ties_even().1),
                "trunc" => derivative(Call((&x,)).trunc().1),
                _ => derivative(Call((&x,)).signum().1),
            };
            assert_eq!(d, 0.0, "{rule} at {x}");
        }
        assert_eq!(derivative(Call((&3.0_f64,)).fract().1), 1.0);
    }

    #[test]
    fn min_and_max_away_from_ties() {
        let pairs = [(1.0, 2.0), (2.0, 1.0), (-3.0, -3.5), (0.0, 1e-3)];
        check_binary!(min, |a, b| a.min(b), pairs);
        check_binary!(max, |a, b| a.max(b), pairs);
    }

    #[test]
    fn ties_go_to_the_receiver() {
        assert_eq!(partials(Call((&1.5_f64, &1.5)).max().1), (1.0, 0.0));
        assert_eq!(partials(Call((&1.5_f32, &1.5)).min().1), (1.0, 0.0));
        assert_eq!(partials(Call((&0.0_f64, &-0.0)).max().1), (1.0, 0.0));
    }

    #[test]
    fn nan_operands_of_min_and_max_are_ignored_like_the_primal() {
        let (y, pb) = Call((&f64::NAN, &2.0)).max();
        assert_eq!((y, partials(pb)), (2.0, (0.0, 1.0)));
        let (y, pb) = Call((&2.0_f64, &f64::NAN)).min();
        assert_eq!((y, partials(pb)), (2.0, (1.0, 0.0)));
    }

    #[test]
    fn clamp_inside_outside_and_on_the_bounds() {
        for x in [-5.0_f64, -0.5, 0.25, 3.0] {
            RuleTest::new(
                (x, -1.0, 2.0),
                |a| a.0.clamp(a.1, a.2),
                |a| Call((&a.0, &a.1, &a.2)).clamp(),
            )
            .jvp(|a, t| {
                let d = |v: f64, dv: f64| Dual::<1>::new(v, [dv]);
                Real::clamp(d(a.0, t.0), d(a.1, t.1), d(a.2, t.2)).partials[0]
            })
            .expect_no_alloc()
            .run();
            RuleTest::new(
                (x as f32, -1.0_f32, 2.0_f32),
                |a| a.0.clamp(a.1, a.2),
                |a| Call((&a.0, &a.1, &a.2)).clamp(),
            )
            .forward(|a| a.0.clamp(a.1, a.2))
            .run();
        }
        let grads = |x: f64, lo: f64, hi: f64| {
            let (_, pb) = Call((&x, &lo, &hi)).clamp();
            let (mut dx, mut dlo, mut dhi) = (0.0, 0.0, 0.0);
            pb.pullback(1.0, (&mut dx, &mut dlo, &mut dhi));
            (dx, dlo, dhi)
        };
        assert_eq!(grads(-1.0, -1.0, 2.0), (1.0, 0.0, 0.0)); // on lo: to x
        assert_eq!(grads(2.0, -1.0, 2.0), (1.0, 0.0, 0.0)); // on hi: to x
        assert_eq!(grads(-1.5, -1.0, 2.0), (0.0, 1.0, 0.0));
        assert_eq!(grads(7.0, -1.0, 2.0), (0.0, 0.0, 1.0));
        assert_eq!(grads(1.0, 1.0, 1.0), (1.0, 0.0, 0.0)); // lo = hi = x
    }

    #[test]
    #[should_panic]
    fn clamp_panics_where_the_primal_does() {
        let _ = Call((&0.0_f64, &2.0, &1.0)).clamp();
    }

    #[test]
    fn copysign() {
        let pairs = [(1.5, -2.0), (-1.5, -2.0), (-0.7, 3.0), (4.0, 0.5)];
        check_binary!(copysign, |x, s| x.copysign(s), pairs);
        assert_eq!(partials(Call((&0.0_f64, &-1.0)).copysign().1), (0.0, 0.0));
        assert_eq!(partials(Call((&2.0_f32, &-0.0)).copysign().1), (-1.0, 0.0));
        let _ = F32_RTOL;
    }
}
