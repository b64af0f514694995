//! The log-density of a Normal truncated to `[lo, hi]`, with its normalising
//! constant: `log N(x; μ, σ) − log Z`, `Z = Φ(β) − Φ(α)`, `α = (lo − μ)/σ`,
//! `β = (hi − μ)/σ`. Either bound may be infinite.
//!
//! `∂ log Z/∂μ = (φ(α) − φ(β))/(σZ)`, `∂ log Z/∂σ = (αφ(α) − βφ(β))/(σZ)`,
//! `∂ log Z/∂hi = φ(β)/(σZ)`, `∂ log Z/∂lo = −φ(α)/(σZ)` (with `αφ(α) = 0` at an
//! infinite bound). `Z` is computed in `f64` (in the tail that keeps its relative
//! precision) and carried to the element type with its first-order change, so that on
//! dual numbers (forward mode, and the pullback run on duals for Hessians) `log Z` and
//! the partials above have their derivatives too.

use crate::cdf::{std_normal_interval, std_normal_pdf};
use crate::normal::normal_logpdf;
use mochi_core::kit::Pullback;
use mochi_rules_ndarray::Elem;

/// The value of an element as `f64`.
fn value<T: Elem>(v: T) -> f64 {
    v.to_f64().expect("a float converts to f64")
}

/// `φ(z)` in the element type; `0` at `z = ±∞`.
fn pdf<T: Elem>(z: T) -> T {
    if value(z).is_finite() {
        (-(z * z) * T::of_f64(0.5)).exp() * T::of_f64((2.0 * std::f64::consts::PI).sqrt().recip())
    } else {
        T::ZERO
    }
}

/// `z φ(z)` in the element type, taken as `0` at `z = ±∞`.
fn z_pdf<T: Elem>(z: T) -> T {
    if value(z).is_finite() {
        z * pdf(z)
    } else {
        T::ZERO
    }
}

/// `Z = Φ(β) − Φ(α)` in the element type: the `f64` value, plus its first-order change
/// `φ(β)·(β − β₀) − φ(α)·(α − α₀)` (exactly zero on floats; the partials on duals). An
/// infinite bound does not move `Z`.
fn normaliser<T: Elem>(alpha: T, beta: T) -> T {
    let (a, b) = (value(alpha), value(beta));
    let mut z = T::of_f64(std_normal_interval(a, b));
    if b.is_finite() {
        z += (beta - T::of_f64(b)) * T::of_f64(std_normal_pdf(b));
    }
    if a.is_finite() {
        z -= (alpha - T::of_f64(a)) * T::of_f64(std_normal_pdf(a));
    }
    z
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
    normal_logpdf(x, mu, sigma) - normaliser(alpha, beta).ln()
}

/// `α = (lo − μ)/σ` and `β = (hi − μ)/σ`; an infinite bound stays infinite (with no
/// partials, which `∞ − μ` on duals would make NaN).
fn standardised_bounds<T: Elem>(mu: T, sigma: T, lo: T, hi: T) -> (T, T) {
    let bound = |v: T| {
        if value(v).is_finite() {
            (v - mu) / sigma
        } else {
            T::of_f64(value(v))
        }
    };
    (bound(lo), bound(hi))
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
        let sz = sigma * normaliser(alpha, beta);
        let (pa, pb) = (pdf(alpha), pdf(beta));
        let z = (x - mu) / sigma;
        let dlogz_dmu = (pa - pb) / sz;
        let dlogz_dsigma = (z_pdf(alpha) - z_pdf(beta)) / sz;
        let partials = [
            -z / sigma,
            z / sigma - dlogz_dmu,
            (z * z - T::one()) / sigma - dlogz_dsigma,
            pa / sz,
            -pb / sz,
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
            .forward(|a| truncated_normal_logpdf(a.0, a.1, a.2, a.3, a.4))
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

    /// The pullback run on duals (what a Hessian runs): its partials carry the second
    /// derivatives, checked against central differences of the `f64` gradient.
    #[test]
    fn the_pullback_on_duals_carries_second_derivatives() {
        use mochi_core::Dual;
        let point = [0.4_f64, 0.9, 1.3, -0.5, 2.5];
        let gradient = |p: [f64; 5]| {
            let (_, pb) = truncated_normal_logpdf::rrule(p[0], p[1], p[2], p[3], p[4]);
            let mut g = [0.0; 5];
            let [a, b, c, d, e] = &mut g;
            pb.pullback(1.0, (a, b, c, d, e));
            g
        };
        for k in 0..5 {
            let d: [Dual<1>; 5] =
                std::array::from_fn(|i| Dual::new(point[i], [f64::from(u8::from(i == k))]));
            let (_, pb) = truncated_normal_logpdf::rrule(d[0], d[1], d[2], d[3], d[4]);
            let mut g = [Dual::<1>::constant(0.0); 5];
            let [a, b, c, e, f] = &mut g;
            pb.pullback(Dual::constant(1.0), (a, b, c, e, f));
            let h = 1e-5;
            let (mut up, mut down) = (point, point);
            up[k] += h;
            down[k] -= h;
            let (gu, gd) = (gradient(up), gradient(down));
            for i in 0..5 {
                let fd = (gu[i] - gd[i]) / (2.0 * h);
                assert!(
                    (g[i].partials[0] - fd).abs() < 1e-6 * (1.0 + fd.abs()),
                    "∂²/∂{i}∂{k}: {} vs {fd}",
                    g[i].partials[0]
                );
            }
        }
    }
}
