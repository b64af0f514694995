//! Bijections from the real line to constrained parameters, each returning the
//! constrained value and the log-Jacobian `log |dx/du|` that a log-density in
//! unconstrained space adds: [`to_positive`](fn@to_positive) (`exp`, onto
//! `(0, ∞)`) and [`to_interval`](fn@to_interval) (scaled logistic, onto `(a, b)`).

use mochi_core::kit::Pullback;
use mochi_rules_ndarray::Elem;

/// `log(1 + eᵛ)` without overflow.
fn softplus<T: Elem>(v: T) -> T {
    if v > T::ZERO {
        v + (-v).exp().ln_1p()
    } else {
        v.exp().ln_1p()
    }
}

/// The logistic function `1/(1 + e⁻ᵘ)` without overflow.
fn logistic<T: Elem>(u: T) -> T {
    if u >= T::ZERO {
        (T::one() + (-u).exp()).recip()
    } else {
        let e = u.exp();
        e / (T::one() + e)
    }
}

/// `x = eᵘ ∈ (0, ∞)` and its log-Jacobian `log |dx/du| = u`.
///
/// ```
/// let (x, log_jacobian) = mochi_rules_stats::to_positive(0.0_f64);
/// assert_eq!((x, log_jacobian), (1.0, 0.0));
/// ```
pub fn to_positive<T: Elem>(u: T) -> (T, T) {
    (u.exp(), u)
}

/// The rule of [`to_positive`](fn@to_positive): `ū = x̄ eᵘ + j̄`.
pub mod to_positive {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::to_positive as __twin;
    use super::*;

    /// Pullback of `to_positive`: `eᵘ`.
    pub struct ToPositivePullback<T> {
        x: T,
    }

    impl<T: Elem> Pullback for ToPositivePullback<T> {
        type Output = (T, T);
        type Args = (T,);
        fn pullback(self, (dx, dlogj): (T, T), (du,): (&mut T,)) {
            *du += dx * self.x + dlogj;
        }
    }

    /// `to_positive(u)` with its pullback.
    pub fn rrule<T: Elem>(u: T) -> ((T, T), ToPositivePullback<T>) {
        let (x, j) = super::to_positive(u);
        ((x, j), ToPositivePullback { x })
    }
}

/// `x = a + (b − a)·σ(u) ∈ (a, b)`, `σ` the logistic function, and its log-Jacobian
/// `log |dx/du| = log(b − a) + log σ(u) + log(1 − σ(u))`, computed without overflow
/// for large `|u|`.
///
/// ```
/// let (x, log_jacobian) = mochi_rules_stats::to_interval(0.0_f64, 0.1, 10.0);
/// assert!((x - 5.05).abs() < 1e-14);
/// assert!((log_jacobian - (9.9_f64 / 4.0).ln()).abs() < 1e-14);
/// ```
pub fn to_interval<T: Elem>(u: T, a: T, b: T) -> (T, T) {
    let s = logistic(u);
    let x = a + (b - a) * s;
    (x, (b - a).ln() - softplus(-u) - softplus(u))
}

/// The rule of [`to_interval`](fn@to_interval).
///
/// `∂x/∂u = (b − a)σ(1 − σ)`, `∂x/∂a = 1 − σ`, `∂x/∂b = σ`; for the log-Jacobian
/// `∂/∂u = 1 − 2σ`, `∂/∂a = −1/(b − a)`, `∂/∂b = 1/(b − a)`.
pub mod to_interval {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::to_interval as __twin;
    use super::*;

    /// Pullback of `to_interval`: `σ(u)` and `b − a`.
    pub struct ToIntervalPullback<T> {
        s: T,
        width: T,
    }

    impl<T: Elem> Pullback for ToIntervalPullback<T> {
        type Output = (T, T);
        type Args = (T, T, T);
        fn pullback(self, (dx, dj): (T, T), (du, da, db): (&mut T, &mut T, &mut T)) {
            let (s, w) = (self.s, self.width);
            let one = T::one();
            *du += dx * w * s * (one - s) + dj * (one - s - s);
            *da += dx * (one - s) - dj / w;
            *db += dx * s + dj / w;
        }
    }

    /// `to_interval(u, a, b)` with its pullback.
    pub fn rrule<T: Elem>(u: T, a: T, b: T) -> ((T, T), ToIntervalPullback<T>) {
        let y = super::to_interval(u, a, b);
        (
            y,
            ToIntervalPullback {
                s: logistic(u),
                width: b - a,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TestElem;
    use mochi_core::testing::RuleTest;

    fn bijections<T: TestElem>() {
        for u in [-3.0, -0.2, 0.0, 1.5] {
            RuleTest::new(
                (T::of_f64(u),),
                |a| to_positive(a.0),
                |a| to_positive::rrule(a.0),
            )
            .forward(|a| to_positive(a.0))
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
            RuleTest::new(
                (T::of_f64(u), T::of_f64(0.1), T::of_f64(10.0)),
                |a| to_interval(a.0, a.1, a.2),
                |a| to_interval::rrule(a.0, a.1, a.2),
            )
            .forward(|a| to_interval(a.0, a.1, a.2))
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
    }

    #[test]
    fn positive_and_interval_bijections() {
        bijections::<f64>();
        bijections::<f32>();
    }

    #[test]
    fn extreme_arguments_stay_finite() {
        let (x, j) = to_interval(800.0_f64, 0.1, 10.0);
        assert!((x - 10.0).abs() < 1e-12 && j.is_finite());
        let (x, j) = to_interval(-800.0_f64, 0.1, 10.0);
        assert!((x - 0.1).abs() < 1e-12 && j.is_finite());
        // the log-Jacobian is the log of the derivative dx/du
        let (u, h) = (0.7_f64, 1e-6);
        let d = (to_interval(u + h, 0.1, 10.0).0 - to_interval(u - h, 0.1, 10.0).0) / (2.0 * h);
        assert!((d.ln() - to_interval(u, 0.1, 10.0).1).abs() < 1e-8);
    }
}
