//! Log-densities of the Normal and LogNormal distributions, for one observation
//! ([`normal_logpdf`](fn@normal_logpdf), [`lognormal_logpdf`](fn@lognormal_logpdf))
//! and summed over an array of observations with shared parameters
//! ([`normal_logpdf_sum`](fn@normal_logpdf_sum),
//! [`lognormal_logpdf_sum`](fn@lognormal_logpdf_sum)).
//!
//! With `z = (x − μ)/σ`: `log N(x; μ, σ) = −z²/2 − log σ − log √(2π)`, and
//! `∂/∂x = −z/σ`, `∂/∂μ = z/σ`, `∂/∂σ = (z² − 1)/σ`. LogNormal is Normal at `log x`
//! with the Jacobian `−log x`.

use crate::cdf::LN_SQRT_2PI;
use mochi_core::kit::Pullback;
use mochi_rules_ndarray::cotangent::dense;
use mochi_rules_ndarray::Elem;
use ndarray::{Array, ArrayBase, Data, Dimension, Zip};

/// `−½Σz² − n(log σ + log √(2π))`: the Normal log-density summed over `n`
/// observations whose standardised values `z = (x − μ)/σ` have squares summing to
/// `sum_z2`.
fn from_standardised<T: Elem>(sum_z2: T, n: T, sigma: T) -> T {
    -T::of_f64(0.5) * sum_z2 - n * (sigma.ln() + T::of_f64(LN_SQRT_2PI))
}

/// `μ̄ += ȳ Σz/σ`, `σ̄ += ȳ (Σz² − n)/σ`: the parameters' share of the pullback of
/// [`from_standardised`], for the Normal and (at `log x`) the LogNormal.
fn add_location_scale<T: Elem>(
    dy: T,
    (sum_z, sum_z2, n): (T, T, T),
    sigma: T,
    dmu: &mut T,
    dsigma: &mut T,
) {
    *dmu += dy * sum_z / sigma;
    *dsigma += dy * (sum_z2 - n) / sigma;
}

/// `log N(x; μ, σ)`: the log-density of a Normal with mean `mu` and standard
/// deviation `sigma > 0` at `x`.
///
/// ```
/// let v: f64 = mochi_rules_stats::normal_logpdf(0.0, 0.0, 1.0);
/// assert!((v + 0.5 * (2.0 * std::f64::consts::PI).ln()).abs() < 1e-15);
/// ```
pub fn normal_logpdf<T: Elem>(x: T, mu: T, sigma: T) -> T {
    let z = (x - mu) / sigma;
    from_standardised(z * z, T::one(), sigma)
}

/// The rule of [`normal_logpdf`](fn@normal_logpdf).
pub mod normal_logpdf {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::normal_logpdf as __twin;
    use super::*;

    /// Pullback of `normal_logpdf`: `z` and `σ`.
    pub struct NormalLogpdfPullback<T> {
        z: T,
        sigma: T,
    }

    impl<T: Elem> Pullback for NormalLogpdfPullback<T> {
        type Output = T;
        type Args = (T, T, T);
        fn pullback(self, dy: T, (dx, dmu, dsigma): (&mut T, &mut T, &mut T)) {
            let (z, s) = (self.z, self.sigma);
            *dx -= dy * z / s;
            add_location_scale(dy, (z, z * z, T::one()), s, dmu, dsigma);
        }
    }

    /// `normal_logpdf(x, mu, sigma)` with its pullback.
    pub fn rrule<T: Elem>(x: T, mu: T, sigma: T) -> (T, NormalLogpdfPullback<T>) {
        let z = (x - mu) / sigma;
        (
            from_standardised(z * z, T::one(), sigma),
            NormalLogpdfPullback { z, sigma },
        )
    }
}

/// `log LogNormal(x; μ, σ) = log N(log x; μ, σ) − log x`, for `x > 0`.
///
/// ```
/// let v: f64 = mochi_rules_stats::lognormal_logpdf(1.0, 0.0, 1.0);
/// assert!((v - mochi_rules_stats::normal_logpdf(0.0, 0.0, 1.0)).abs() < 1e-15);
/// ```
pub fn lognormal_logpdf<T: Elem>(x: T, mu: T, sigma: T) -> T {
    let lx = x.ln();
    normal_logpdf(lx, mu, sigma) - lx
}

/// The rule of [`lognormal_logpdf`](fn@lognormal_logpdf).
pub mod lognormal_logpdf {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::lognormal_logpdf as __twin;
    use super::*;

    /// Pullback of `lognormal_logpdf`: `x`, `z = (log x − μ)/σ` and `σ`.
    pub struct LognormalLogpdfPullback<T> {
        x: T,
        z: T,
        sigma: T,
    }

    impl<T: Elem> Pullback for LognormalLogpdfPullback<T> {
        type Output = T;
        type Args = (T, T, T);
        fn pullback(self, dy: T, (dx, dmu, dsigma): (&mut T, &mut T, &mut T)) {
            let (z, s) = (self.z, self.sigma);
            // ∂/∂x = (−z/σ − 1)/x
            *dx += dy * (-z / s - T::one()) / self.x;
            add_location_scale(dy, (z, z * z, T::one()), s, dmu, dsigma);
        }
    }

    /// `lognormal_logpdf(x, mu, sigma)` with its pullback.
    pub fn rrule<T: Elem>(x: T, mu: T, sigma: T) -> (T, LognormalLogpdfPullback<T>) {
        let lx = x.ln();
        let z = (lx - mu) / sigma;
        (
            from_standardised(z * z, T::one(), sigma) - lx,
            LognormalLogpdfPullback { x, z, sigma },
        )
    }
}

/// `Σᵢ log N(xᵢ; μ, σ)` over every element of `x`.
///
/// ```
/// let x = ndarray::array![0.5, -1.0];
/// let s: f64 = mochi_rules_stats::normal_logpdf_sum(&x, 0.2, 1.3);
/// let each = mochi_rules_stats::normal_logpdf(0.5, 0.2, 1.3) + mochi_rules_stats::normal_logpdf(-1.0, 0.2, 1.3);
/// assert!((s - each).abs() < 1e-14);
/// ```
pub fn normal_logpdf_sum<T: Elem, S: Data<Elem = T>, D: Dimension>(
    x: &ArrayBase<S, D>,
    mu: T,
    sigma: T,
) -> T {
    let inv = sigma.recip();
    let sum_z2 = x.fold(T::ZERO, |acc, &v| {
        let z = (v - mu) * inv;
        acc + z * z
    });
    from_standardised(sum_z2, T::of_usize(x.len()), sigma)
}

/// The rule of [`normal_logpdf_sum`](fn@normal_logpdf_sum).
pub mod normal_logpdf_sum {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::normal_logpdf_sum as __twin;
    use super::*;

    /// Pullback of `normal_logpdf_sum`: a copy of `x`, `μ`, `σ`, and `Σz`, `Σz²`.
    pub struct NormalLogpdfSumPullback<T, D> {
        x: Array<T, D>,
        mu: T,
        sigma: T,
        sum_z: T,
        sum_z2: T,
    }

    impl<T: Elem, D: Dimension> Pullback for NormalLogpdfSumPullback<T, D> {
        type Output = T;
        type Args = (Array<T, D>, T, T);
        #[track_caller]
        fn pullback(self, dy: T, (dx, dmu, dsigma): (&mut Array<T, D>, &mut T, &mut T)) {
            let (mu, s) = (self.mu, self.sigma);
            let n = T::of_usize(self.x.len());
            add_location_scale(dy, (self.sum_z, self.sum_z2, n), s, dmu, dsigma);
            // ∂/∂xᵢ = −(xᵢ − μ)/σ²
            let scale = -dy / (s * s);
            dense(dx, &self.x.raw_dim()).zip_mut_with(&self.x, |d, &v| *d += scale * (v - mu));
        }
    }

    /// `normal_logpdf_sum(x, mu, sigma)` with its pullback.
    pub fn rrule<T: Elem, S: Data<Elem = T>, D: Dimension>(
        x: &ArrayBase<S, D>,
        mu: T,
        sigma: T,
    ) -> (T, NormalLogpdfSumPullback<T, D>) {
        let inv = sigma.recip();
        let (sum_z, sum_z2) = x.fold((T::ZERO, T::ZERO), |(a, b), &v| {
            let z = (v - mu) * inv;
            (a + z, b + z * z)
        });
        let y = from_standardised(sum_z2, T::of_usize(x.len()), sigma);
        (
            y,
            NormalLogpdfSumPullback {
                x: x.to_owned(),
                mu,
                sigma,
                sum_z,
                sum_z2,
            },
        )
    }
}

/// `Σᵢ log LogNormal(xᵢ; μ, σ)` over every element of `x` (all positive).
///
/// ```
/// let x = ndarray::array![0.5, 2.0];
/// let s: f64 = mochi_rules_stats::lognormal_logpdf_sum(&x, 0.2, 1.3);
/// let each = mochi_rules_stats::lognormal_logpdf(0.5, 0.2, 1.3) + mochi_rules_stats::lognormal_logpdf(2.0, 0.2, 1.3);
/// assert!((s - each).abs() < 1e-14);
/// ```
pub fn lognormal_logpdf_sum<T: Elem, S: Data<Elem = T>, D: Dimension>(
    x: &ArrayBase<S, D>,
    mu: T,
    sigma: T,
) -> T {
    lognormal_logpdf_sum::rrule_parts(x, mu, sigma).0
}

/// The rule of [`lognormal_logpdf_sum`](fn@lognormal_logpdf_sum).
pub mod lognormal_logpdf_sum {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::lognormal_logpdf_sum as __twin;
    use super::*;

    /// Pullback of `lognormal_logpdf_sum`: copies of `x` and `log x`, `μ`, `σ`, and
    /// `Σz`, `Σz²`.
    pub struct LognormalLogpdfSumPullback<T, D> {
        x: Array<T, D>,
        log_x: Array<T, D>,
        mu: T,
        sigma: T,
        sum_z: T,
        sum_z2: T,
    }

    impl<T: Elem, D: Dimension> Pullback for LognormalLogpdfSumPullback<T, D> {
        type Output = T;
        type Args = (Array<T, D>, T, T);
        #[track_caller]
        fn pullback(self, dy: T, (dx, dmu, dsigma): (&mut Array<T, D>, &mut T, &mut T)) {
            let (mu, s) = (self.mu, self.sigma);
            let n = T::of_usize(self.x.len());
            add_location_scale(dy, (self.sum_z, self.sum_z2, n), s, dmu, dsigma);
            // ∂/∂xᵢ = (−(log xᵢ − μ)/σ² − 1)/xᵢ
            let inv_s2 = (s * s).recip();
            Zip::from(dense(dx, &self.x.raw_dim()))
                .and(&self.x)
                .and(&self.log_x)
                .for_each(|d, &x, &lx| *d += dy * (-(lx - mu) * inv_s2 - T::one()) / x);
        }
    }

    /// Value, `log x`, `Σz`, `Σz²`.
    pub(super) fn rrule_parts<T: Elem, S: Data<Elem = T>, D: Dimension>(
        x: &ArrayBase<S, D>,
        mu: T,
        sigma: T,
    ) -> (T, Array<T, D>, T, T) {
        let log_x = x.mapv(|v| v.ln());
        let inv = sigma.recip();
        let (sum_z, sum_z2, sum_lx) = log_x.fold((T::ZERO, T::ZERO, T::ZERO), |(a, b, c), &lx| {
            let z = (lx - mu) * inv;
            (a + z, b + z * z, c + lx)
        });
        let y = from_standardised(sum_z2, T::of_usize(x.len()), sigma) - sum_lx;
        (y, log_x, sum_z, sum_z2)
    }

    /// `lognormal_logpdf_sum(x, mu, sigma)` with its pullback.
    pub fn rrule<T: Elem, S: Data<Elem = T>, D: Dimension>(
        x: &ArrayBase<S, D>,
        mu: T,
        sigma: T,
    ) -> (T, LognormalLogpdfSumPullback<T, D>) {
        let (y, log_x, sum_z, sum_z2) = rrule_parts(x, mu, sigma);
        (
            y,
            LognormalLogpdfSumPullback {
                x: x.to_owned(),
                log_x,
                mu,
                sigma,
                sum_z,
                sum_z2,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TestElem;
    use mochi_core::testing::RuleTest;
    use ndarray::{array, Array1, Array2};

    fn scalars<T: TestElem>() {
        for (x, mu, s) in [(0.3, -0.2, 1.1), (-2.0, 0.5, 0.4), (1.0, 1.0, 2.0)] {
            let args = (T::of_f64(x), T::of_f64(mu), T::of_f64(s));
            RuleTest::new(
                args,
                |a| normal_logpdf(a.0, a.1, a.2),
                |a| normal_logpdf::rrule(a.0, a.1, a.2),
            )
            .forward(|a| normal_logpdf(a.0, a.1, a.2))
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
            let args = (T::of_f64(x.abs() + 0.2), T::of_f64(mu), T::of_f64(s));
            RuleTest::new(
                args,
                |a| lognormal_logpdf(a.0, a.1, a.2),
                |a| lognormal_logpdf::rrule(a.0, a.1, a.2),
            )
            .forward(|a| lognormal_logpdf(a.0, a.1, a.2))
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
    }

    #[test]
    fn normal_and_lognormal_of_one_observation() {
        scalars::<f64>();
        scalars::<f32>();
    }

    fn sums<T: TestElem>() {
        let xs: Array1<T> = array![0.4, 1.7, 0.9, 2.5].mapv(T::of_f64);
        let m: Array2<T> = array![[0.4, 1.7], [0.9, 2.5], [1.1, 0.3]].mapv(T::of_f64);
        let (mu, s) = (T::of_f64(0.3), T::of_f64(0.8));
        RuleTest::new(
            (xs.clone(), mu, s),
            |a| normal_logpdf_sum(&a.0, a.1, a.2),
            |a| normal_logpdf_sum::rrule(&a.0, a.1, a.2),
        )
        .forward(|a| normal_logpdf_sum(&a.0, a.1, a.2))
        .tolerance(T::RTOL, T::ATOL)
        .expect_no_alloc()
        .run();
        RuleTest::new(
            (m.t().to_owned(), mu, s),
            |a| lognormal_logpdf_sum(&a.0, a.1, a.2),
            |a| lognormal_logpdf_sum::rrule(&a.0, a.1, a.2),
        )
        .forward(|a| lognormal_logpdf_sum(&a.0, a.1, a.2))
        .tolerance(T::RTOL, T::ATOL)
        .expect_no_alloc()
        .run();
        let empty = Array1::<T>::zeros(0);
        RuleTest::new(
            (empty, mu, s),
            |a| lognormal_logpdf_sum(&a.0, a.1, a.2),
            |a| lognormal_logpdf_sum::rrule(&a.0, a.1, a.2),
        )
        .forward(|a| lognormal_logpdf_sum(&a.0, a.1, a.2))
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn sums_over_arrays_of_observations() {
        sums::<f64>();
        sums::<f32>();
    }
}
