//! The multivariate Normal log-density by Cholesky:
//! `log N(x; μ, K) = −½ rᵀK⁻¹r − ½ log det K − (n/2) log 2π`, `r = x − μ`.
//!
//! With `α = K⁻¹ r`: `x̄ = −ȳ α`, `μ̄ = ȳ α`, and the symmetric gradient with respect
//! to `K` is `½ȳ(ααᵀ − K⁻¹)`; as the factorisation reads the lower triangle of `K`,
//! the cotangent is returned in the lower triangle (doubled below the diagonal).
//! `K⁻¹` comes from the factor (one triangular inversion, one triangular product).

use crate::cdf::LN_SQRT_2PI;
use mochi_core::kit::Pullback;
use mochi_rules_linalg::{
    cholesky, cholesky_solve, inverse_from_cholesky, logdet_cholesky, LinalgElem,
    NotPositiveDefinite,
};
use mochi_rules_ndarray::cotangent::dense;
use ndarray::{Array1, Array2, ArrayBase, Data, Ix1, Ix2};

#[track_caller]
fn check_shapes<S1: Data, S2: Data, S3: Data>(
    x: &ArrayBase<S1, Ix1>,
    mu: &ArrayBase<S2, Ix1>,
    k: &ArrayBase<S3, Ix2>,
) {
    assert!(
        x.len() == mu.len() && k.nrows() == x.len() && k.ncols() == x.len(),
        "mochi_rules_stats::mvnormal_logpdf: x has {} elements, mu {}, and the covariance is {}×{}",
        x.len(),
        mu.len(),
        k.nrows(),
        k.ncols()
    );
}

/// Value, factor and `α = K⁻¹ r`.
fn evaluate<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, S3: Data<Elem = T>>(
    x: &ArrayBase<S1, Ix1>,
    mu: &ArrayBase<S2, Ix1>,
    k: &ArrayBase<S3, Ix2>,
) -> Result<(T, Array2<T>, Array1<T>), NotPositiveDefinite> {
    let l = cholesky(k)?;
    let r = x - mu;
    let alpha = cholesky_solve(&l, &r);
    let n = T::of_usize(x.len());
    let y = -T::of_f64(0.5) * (r.dot(&alpha) + logdet_cholesky(&l)) - n * T::of_f64(LN_SQRT_2PI);
    Ok((y, l, alpha))
}

/// `log N(x; μ, K)` for a covariance `k` that is symmetric positive definite (only
/// its lower triangle is read).
///
/// # Errors
/// [`NotPositiveDefinite`] when the factorisation of `k` fails.
///
/// # Panics
/// If the shapes of `x`, `mu` and `k` disagree.
///
/// ```
/// use ndarray::array;
/// let k = array![[2.0, 0.0], [0.0, 0.5]];
/// let v = mochi_rules_stats::mvnormal_logpdf(&array![1.0, -1.0], &array![0.0, 0.0], &k).unwrap();
/// let each = mochi_rules_stats::normal_logpdf(1.0, 0.0, 2.0_f64.sqrt())
///     + mochi_rules_stats::normal_logpdf(-1.0, 0.0, 0.5_f64.sqrt());
/// assert!((v - each).abs() < 1e-13);
/// ```
#[track_caller]
pub fn mvnormal_logpdf<
    T: LinalgElem,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    S3: Data<Elem = T>,
>(
    x: &ArrayBase<S1, Ix1>,
    mu: &ArrayBase<S2, Ix1>,
    k: &ArrayBase<S3, Ix2>,
) -> Result<T, NotPositiveDefinite> {
    check_shapes(x, mu, k);
    evaluate(x, mu, k).map(|(y, _, _)| y)
}

/// The rule of [`mvnormal_logpdf`](fn@mvnormal_logpdf).
pub mod mvnormal_logpdf {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::mvnormal_logpdf as __twin;
    use super::*;

    /// Pullback of `mvnormal_logpdf`: the Cholesky factor and `α = K⁻¹ r`, or nothing
    /// after an error.
    pub struct MvNormalLogpdfPullback<T> {
        state: Option<(Array2<T>, Array1<T>)>,
    }

    impl<T: LinalgElem> Pullback for MvNormalLogpdfPullback<T> {
        type Output = T;
        type Args = (Array1<T>, Array1<T>, Array2<T>);
        #[track_caller]
        fn pullback(self, dy: T, (dx, dmu, dk): (&mut Array1<T>, &mut Array1<T>, &mut Array2<T>)) {
            let Some((l, alpha)) = self.state else { return };
            let n = alpha.len();
            dense(dx, &alpha.raw_dim()).scaled_add(-dy, &alpha);
            dense(dmu, &alpha.raw_dim()).scaled_add(dy, &alpha);
            let inv = inverse_from_cholesky(&l);
            let dk = dense(dk, &l.raw_dim());
            let half = T::of_f64(0.5) * dy;
            for j in 0..n {
                dk[[j, j]] += half * (alpha[j] * alpha[j] - inv[[j, j]]);
                for i in j + 1..n {
                    dk[[i, j]] += dy * (alpha[i] * alpha[j] - inv[[i, j]]);
                }
            }
        }
    }

    /// `mvnormal_logpdf(x, mu, k)` with its pullback.
    #[track_caller]
    pub fn rrule<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, S3: Data<Elem = T>>(
        x: &ArrayBase<S1, Ix1>,
        mu: &ArrayBase<S2, Ix1>,
        k: &ArrayBase<S3, Ix2>,
    ) -> (Result<T, NotPositiveDefinite>, MvNormalLogpdfPullback<T>) {
        check_shapes(x, mu, k);
        match evaluate(x, mu, k) {
            Ok((y, l, alpha)) => (
                Ok(y),
                MvNormalLogpdfPullback {
                    state: Some((l, alpha)),
                },
            ),
            Err(e) => (Err(e), MvNormalLogpdfPullback { state: None }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TestElem;
    use mochi_core::testing::RuleTest;
    use ndarray::array;

    fn densities<T: TestElem>() {
        let k: Array2<T> =
            array![[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]].mapv(T::of_f64);
        let x: Array1<T> = array![0.4, -1.2, 0.7].mapv(T::of_f64);
        let mu: Array1<T> = array![0.1, 0.0, -0.3].mapv(T::of_f64);
        for k in [
            k.clone(),
            k.t().as_standard_layout().to_owned().reversed_axes(),
        ] {
            check((x.clone(), mu.clone(), k));
        }
        check((
            array![T::of_f64(0.3)],
            array![T::of_f64(-0.1)],
            array![[T::of_f64(0.8)]],
        ));
    }

    fn check<T: TestElem>(args: (Array1<T>, Array1<T>, Array2<T>)) {
        RuleTest::new(
            args,
            |a| mvnormal_logpdf(&a.0, &a.1, &a.2).unwrap(),
            |a| {
                let (y, pb) = mvnormal_logpdf::rrule(&a.0, &a.1, &a.2);
                (y.unwrap(), pb)
            },
        )
        .forward(|a| mvnormal_logpdf(&a.0, &a.1, &a.2).unwrap())
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn multivariate_normal_by_cholesky() {
        densities::<f64>();
        densities::<f32>();
    }

    #[test]
    fn a_covariance_that_is_not_positive_definite_is_an_error() {
        let k = array![[1.0, 2.0], [2.0, 1.0]];
        let err = mvnormal_logpdf(&array![0.0, 0.0], &array![0.0, 0.0], &k).unwrap_err();
        assert_eq!(err.pivot, 1);
    }
}
