//! Log-determinants of positive-definite matrices: [`logdet`](fn@logdet) from the
//! matrix, [`logdet_cholesky`](fn@logdet_cholesky) from its Cholesky factor.
//!
//! `log det K = 2 Σᵢ log Lᵢᵢ`. For `logdet(K)` the gradient with respect to the
//! symmetric matrix is `K⁻¹`, formed from `L` by one triangular inversion and one
//! triangular product (faer's `llt::inverse`); as `logdet` reads the lower triangle,
//! its cotangent is `K̄ += ȳ (2 tril(K⁻¹, −1) + diag(K⁻¹))`.

use crate::bridge::column_major_copy;
use crate::error::NotPositiveDefinite;
use crate::factor::{assert_square, factor_in_place};
use crate::inverse::{add_scaled_inverse, inverse_lower};
use crate::LinalgElem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use mochi_rules_ndarray::cotangent::dense;
use ndarray::{Array1, Array2, ArrayBase, Data, Ix2};

rule_trait! {
    /// `logdet(&k)` as a method: `Call((&k,)).logdet()`.
    LinalgLogdet::logdet
}
rule_trait! {
    /// `logdet_cholesky(&l)` as a method: `Call((&l,)).logdet_cholesky()`.
    LinalgLogdetCholesky::logdet_cholesky
}

/// `2 Σᵢ log Lᵢᵢ`.
fn twice_log_diagonal<T: LinalgElem, S: Data<Elem = T>>(l: &ArrayBase<S, Ix2>) -> T {
    let two = T::of_f64(2.0);
    l.diag().fold(T::ZERO, |acc, &d| acc + two * d.ln())
}

/// `log det K` of a symmetric positive-definite `k`, by Cholesky (reading only the
/// lower triangle of `k`).
///
/// # Errors
/// [`NotPositiveDefinite`] with the index of the first non-positive pivot.
///
/// # Panics
/// If `k` is not square.
///
/// ```
/// use ndarray::array;
/// let k = array![[4.0, 2.0], [2.0, 5.0]];
/// let value = mochi_rules_linalg::logdet(&k).unwrap();
/// assert!((value - 16.0_f64.ln()).abs() < 1e-12);
/// ```
#[track_caller]
pub fn logdet<T: LinalgElem, S: Data<Elem = T>>(
    k: &ArrayBase<S, Ix2>,
) -> Result<T, NotPositiveDefinite> {
    assert_square("logdet", k);
    let mut l = column_major_copy(k);
    factor_in_place(&mut l)?;
    Ok(twice_log_diagonal(&l))
}

/// The rule of [`logdet`](fn@logdet): `K̄ += ȳ K⁻¹` (lower-triangle convention).
pub mod logdet {
    use super::*;

    /// Pullback of `logdet`: the Cholesky factor, or nothing after an error.
    pub struct LogdetPullback<T> {
        l: Option<Array2<T>>,
    }

    impl<T: LinalgElem> Pullback for LogdetPullback<T> {
        type Output = T;
        type Args = (Array2<T>,);
        #[track_caller]
        fn pullback(self, dy: T, (dk,): (&mut Array2<T>,)) {
            let Some(l) = self.l else { return };
            add_scaled_inverse(dk, &l, dy);
        }
    }

    /// `logdet(k)` with its pullback.
    #[track_caller]
    pub fn rrule<T: LinalgElem, S: Data<Elem = T>>(
        k: &ArrayBase<S, Ix2>,
    ) -> (Result<T, NotPositiveDefinite>, LogdetPullback<T>) {
        assert_square("logdet", k);
        let mut l = column_major_copy(k);
        match factor_in_place(&mut l) {
            Ok(()) => (Ok(twice_log_diagonal(&l)), LogdetPullback { l: Some(l) }),
            Err(e) => (Err(e), LogdetPullback { l: None }),
        }
    }
}

impl<T: LinalgElem, S: Data<Elem = T>> LinalgLogdet for Call<(&ArrayBase<S, Ix2>,)> {
    type Output = Result<T, NotPositiveDefinite>;
    type Pullback = logdet::LogdetPullback<T>;
    #[track_caller]
    fn logdet(self) -> (Self::Output, Self::Pullback) {
        logdet::rrule(self.0 .0)
    }
}

/// `K⁻¹` (both triangles) from the Cholesky factor `l` of `K = L Lᵀ` (only its lower
/// triangle is read): one triangular inversion and one triangular product by faer.
/// A primal helper for rules that need the inverse (its own derivative is not
/// provided).
///
/// # Panics
/// If `l` is not square.
#[track_caller]
pub fn inverse_from_cholesky<T: LinalgElem, S: Data<Elem = T>>(l: &ArrayBase<S, Ix2>) -> Array2<T> {
    assert_square("inverse_from_cholesky", l);
    let mut inv = inverse_lower(l);
    let n = inv.nrows();
    for j in 1..n {
        for i in 0..j {
            inv[[i, j]] = inv[[j, i]];
        }
    }
    inv
}

/// `log det(L Lᵀ) = 2 Σᵢ log Lᵢᵢ` from a Cholesky factor `l` (only its diagonal is
/// read).
///
/// # Panics
/// If `l` is not square.
///
/// ```
/// use ndarray::array;
/// let l = array![[2.0, 0.0], [1.0, 2.0]];
/// assert!((mochi_rules_linalg::logdet_cholesky(&l) - 16.0_f64.ln()).abs() < 1e-12);
/// ```
#[track_caller]
pub fn logdet_cholesky<T: LinalgElem, S: Data<Elem = T>>(l: &ArrayBase<S, Ix2>) -> T {
    assert_square("logdet_cholesky", l);
    twice_log_diagonal(l)
}

/// The rule of [`logdet_cholesky`](fn@logdet_cholesky): `L̄ᵢᵢ += 2ȳ / Lᵢᵢ`.
pub mod logdet_cholesky {
    use super::*;

    /// Pullback of `logdet_cholesky`: the diagonal of the factor.
    pub struct LogdetCholeskyPullback<T> {
        diagonal: Array1<T>,
    }

    impl<T: LinalgElem> Pullback for LogdetCholeskyPullback<T> {
        type Output = T;
        type Args = (Array2<T>,);
        #[track_caller]
        fn pullback(self, dy: T, (dl,): (&mut Array2<T>,)) {
            let n = self.diagonal.len();
            let two_dy = dy + dy;
            dense(dl, &ndarray::Ix2(n, n))
                .diag_mut()
                .zip_mut_with(&self.diagonal, |d, &l| *d += two_dy / l);
        }
    }

    /// `logdet_cholesky(l)` with its pullback.
    #[track_caller]
    pub fn rrule<T: LinalgElem, S: Data<Elem = T>>(
        l: &ArrayBase<S, Ix2>,
    ) -> (T, LogdetCholeskyPullback<T>) {
        let y = super::logdet_cholesky(l);
        (
            y,
            LogdetCholeskyPullback {
                diagonal: l.diag().to_owned(),
            },
        )
    }
}

impl<T: LinalgElem, S: Data<Elem = T>> LinalgLogdetCholesky for Call<(&ArrayBase<S, Ix2>,)> {
    type Output = T;
    type Pullback = logdet_cholesky::LogdetCholeskyPullback<T>;
    #[track_caller]
    fn logdet_cholesky(self) -> (T, Self::Pullback) {
        logdet_cholesky::rrule(self.0 .0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, spd, TestElem};
    use mochi_core::testing::RuleTest;

    fn determinants<T: TestElem>() {
        for n in [0, 1, 5] {
            for k in layouts(&spd::<T>(n, 20 + n as u64)) {
                // d log det K = tr(K⁻¹ dK)
                RuleTest::new(
                    (k.clone(),),
                    |a| logdet(&a.0).unwrap(),
                    |a| {
                        let (y, pb) = logdet::rrule(&a.0);
                        (y.unwrap(), pb)
                    },
                )
                .tolerance(T::RTOL, T::ATOL)
                .run();
                let l = crate::cholesky(&k).unwrap();
                // d(2 Σ log Lᵢᵢ)/dLᵢᵢ = 2/Lᵢᵢ
                RuleTest::new(
                    (l,),
                    |a| logdet_cholesky(&a.0),
                    |a| logdet_cholesky::rrule(&a.0),
                )
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
            }
        }
        let k = spd::<T>(3, 21);
        RuleTest::new(
            (k.clone(),),
            |a| logdet(&a.0).unwrap(),
            |a| {
                let (y, pb) = Call((&a.0,)).logdet();
                (y.unwrap(), pb)
            },
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (k,),
            |a| logdet_cholesky(&a.0),
            |a| Call((&a.0,)).logdet_cholesky(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn log_determinants() {
        determinants::<f64>();
        determinants::<f32>();
    }

    #[test]
    fn logdet_of_a_singular_matrix_is_an_error() {
        let k = ndarray::array![[1.0, 1.0], [1.0, 1.0]];
        assert_eq!(logdet(&k).unwrap_err().pivot, 1);
    }
}

#[cfg(test)]
mod inverse_tests {
    use super::*;
    use crate::test_support::spd;

    #[test]
    fn inverse_from_the_factor_inverts_the_matrix() {
        let k = spd::<f64>(6, 40);
        let inv = inverse_from_cholesky(&crate::cholesky(&k).unwrap());
        let eye = Array2::<f64>::eye(6);
        // ‖K K⁻¹ − I‖ within eps · 8 · n · cond-ish scale
        let err = (&k.dot(&inv) - &eye)
            .iter()
            .fold(0.0_f64, |m, e| m.max(e.abs()));
        assert!(err < f64::EPSILON * 8.0 * 6.0 * 100.0, "error {err}");
        assert_eq!(inv, inv.t());
    }
}
