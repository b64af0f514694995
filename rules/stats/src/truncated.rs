//! The log-density of a Normal truncated to `[lo, hi]`, with its normalising
//! constant: `log N(x; μ, σ) − log Z`, `Z = Φ(β) − Φ(α)`, `α = (lo − μ)/σ`,
//! `β = (hi − μ)/σ`. Either bound may be infinite.
//!
//! `∂ log Z/∂μ = (φ(α) − φ(β))/(σZ)`, `∂ log Z/∂σ = (αφ(α) − βφ(β))/(σZ)`,
//! `∂ log Z/∂hi = φ(β)/(σZ)`, `∂ log Z/∂lo = −φ(α)/(σZ)` (with `αφ(α) = 0` at an
//! infinite bound). The normaliser is computed in `f64` for either element type.

use crate::cdf::{std_normal_interval, std_normal_pdf};
use crate::normal::normal_logpdf;
use mochi_core::kit::Pullback;
use mochi_rules_ndarray::Elem;

/// `z φ(z)`, taken as `0` at `z = ±∞`.
fn z_pdf(z: f64) -> f64 {
    if z.is_finite() {
        z * std_normal_pdf(z)
    } else {
        0.0
    }
}

/// The log-density at `x` of a Normal(`mu`, `sigma`) truncated to `[lo, hi]`
/// (`lo < hi`, either may be infinite); `−∞` outside the interval.
///
/// ```
/// // Truncating to [μ, ∞) doubles the density: log 2 more than the Normal's.
/// let t: f64 = mochi_rules_stats::truncated_normal_logpdf(0.7, 0.0, 1.0, 0.0, f64::INFINITY);
/// let n = mochi_rules_stats::normal_logpdf(0.7, 0.0, 1.0);
/// assert!((t - n - 2.0_f64.ln()).abs() < 1e-14);
/// ```
pub fn truncated_normal_logpdf<T: Elem>(x: T, mu: T, sigma: T, lo: T, hi: T) -> T {
    if x < lo || x > hi {
        return T::neg_infinity();
    }
    let (alpha, beta) = standardised_bounds(mu, sigma, lo, hi);
    normal_logpdf(x, mu, sigma) - T::of_f64(std_normal_interval(alpha, beta).ln())
}

fn standardised_bounds<T: Elem>(mu: T, sigma: T, lo: T, hi: T) -> (f64, f64) {
    let f = |v: T| v.to_f64().expect("a float converts to f64");
    let (mu, sigma) = (f(mu), f(sigma));
    ((f(lo) - mu) / sigma, (f(hi) - mu) / sigma)
}

/// The rule of [`truncated_normal_logpdf`](fn@truncated_normal_logpdf).
pub mod truncated_normal_logpdf {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::truncated_normal_logpdf as __twin;
    use super::*;

    /// Pullback of `truncated_normal_logpdf`: the partial derivatives, computed in
    /// the forward pass (zero outside the support).
    pub struct TruncatedNormalLogpdfPullback<T> {
        partials: [T; 5],
    }

    impl<T: Elem> Pullback for TruncatedNormalLogpdfPullback<T> {
        type Output = T;
        type Args = (T, T, T, T, T);
        fn pullback(self, dy: T, args: (&mut T, &mut T, &mut T, &mut T, &mut T)) {
            let [px, pmu, psigma, plo, phi] = self.partials;
            *args.0 += dy * px;
            *args.1 += dy * pmu;
            *args.2 += dy * psigma;
            *args.3 += dy * plo;
            *args.4 += dy * phi;
        }
    }

    /// `truncated_normal_logpdf(x, mu, sigma, lo, hi)` with its pullback.
    pub fn rrule<T: Elem>(
        x: T,
        mu: T,
        sigma: T,
        lo: T,
        hi: T,
    ) -> (T, TruncatedNormalLogpdfPullback<T>) {
        let y = super::truncated_normal_logpdf(x, mu, sigma, lo, hi);
        if x < lo || x > hi {
            return (
                y,
                TruncatedNormalLogpdfPullback {
                    partials: [T::ZERO; 5],
                },
            );
        }
        let (alpha, beta) = standardised_bounds(mu, sigma, lo, hi);
        let s = sigma.to_f64().expect("a float converts to f64");
        let sz = s * std_normal_interval(alpha, beta);
        let (pa, pb) = (std_normal_pdf(alpha), std_normal_pdf(beta));
        let z = (x - mu) / sigma;
        let dlogz_dmu = T::of_f64((pa - pb) / sz);
        let dlogz_dsigma = T::of_f64((z_pdf(alpha) - z_pdf(beta)) / sz);
        let partials = [
            -z / sigma,
            z / sigma - dlogz_dmu,
            (z * z - T::one()) / sigma - dlogz_dsigma,
            T::of_f64(pa / sz),
            T::of_f64(-pb / sz),
        ];
        (y, TruncatedNormalLogpdfPullback { partials })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TestElem;
    use mochi_core::testing::RuleTest;

    fn truncated<T: TestElem>() {
        let cases = [
            (0.5, 1.0, 2.0, 0.1, 10.0),
            (3.0, 1.0, 0.5, 0.1, 10.0),
            (-0.4, 0.0, 1.0, -1.0, 0.5),
            (0.2, 0.0, 1.0, f64::NEG_INFINITY, 1.0),
        ];
        for (x, mu, s, lo, hi) in cases {
            let args = (
                T::of_f64(x),
                T::of_f64(mu),
                T::of_f64(s),
                T::of_f64(lo),
                T::of_f64(hi),
            );
            RuleTest::new(
                args,
                |a| truncated_normal_logpdf(a.0, a.1, a.2, a.3, a.4),
                |a| truncated_normal_logpdf::rrule(a.0, a.1, a.2, a.3, a.4),
            )
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
    }

    #[test]
    fn truncated_normal_with_its_normaliser() {
        truncated::<f64>();
        truncated::<f32>();
    }

    #[test]
    fn outside_the_support_the_density_is_zero_and_so_is_the_gradient() {
        let (y, pb) = truncated_normal_logpdf::rrule(11.0, 1.0, 2.0, 0.1, 10.0);
        assert_eq!(y, f64::NEG_INFINITY);
        let mut d = (0.0, 0.0, 0.0, 0.0, 0.0);
        pb.pullback(1.0, (&mut d.0, &mut d.1, &mut d.2, &mut d.3, &mut d.4));
        assert_eq!(d, (0.0, 0.0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn the_density_integrates_to_one() {
        // Simpson's rule over [lo, hi] of exp(log-density)
        let (mu, s, lo, hi) = (1.0, 2.0, 0.1, 10.0);
        let n = 4000;
        let h = (hi - lo) / n as f64;
        let f = |x: f64| truncated_normal_logpdf(x, mu, s, lo, hi).exp();
        let mut acc = f(lo) + f(hi);
        for i in 1..n {
            acc += if i % 2 == 1 { 4.0 } else { 2.0 } * f(lo + i as f64 * h);
        }
        assert!((acc * h / 3.0 - 1.0).abs() < 1e-12);
    }
}
