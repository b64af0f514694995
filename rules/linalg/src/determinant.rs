//! Log-determinants of positive-definite matrices: [`logdet`](fn@logdet) from the
//! matrix, [`logdet_cholesky`](fn@logdet_cholesky) from its Cholesky factor.
//!
//! `log det K = 2 Σᵢ log Lᵢᵢ`. For `logdet(K)` the gradient with respect to the
//! symmetric matrix is `K⁻¹`, formed from `L` by one triangular inversion and one
//! triangular product (faer's `llt::inverse` for floats); as `logdet` reads the lower triangle,
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
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::logdet as __twin;
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
/// triangle is read): one triangular inversion and one triangular product (by faer
/// for floats). It runs on duals (forward mode) like every function here, and its rule
/// ([`mod@inverse_from_cholesky`]) carries a gradient back into `l`.
///
/// ```
/// use ndarray::array;
/// let l = array![[2.0_f64, 0.0], [1.0, 2.0]]; // K = [[4, 2], [2, 5]]
/// let inv = mochi_rules_linalg::inverse_from_cholesky(&l);
/// assert!((inv[[0, 0]] - 5.0 / 16.0).abs() < 1e-14);
/// assert!((inv[[0, 1]] + 2.0 / 16.0).abs() < 1e-14);
/// ```
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

/// The rule of [`inverse_from_cholesky`](fn@inverse_from_cholesky): `Y = (L Lᵀ)⁻¹`,
/// `dY = −Y (dL Lᵀ + L dLᵀ) Y`, so `L̄ += tril(−(Y Ȳ Y + Y Ȳᵀ Y) L)` (only the lower
/// triangle of `l` is read, so nothing flows above it).
pub mod inverse_from_cholesky {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::inverse_from_cholesky as __twin;
    use super::*;

    /// Pullback of `inverse_from_cholesky`: the factor's lower triangle and the inverse.
    pub struct InverseFromCholeskyPullback<T> {
        l: Array2<T>,
        inv: Array2<T>,
    }

    impl<T: LinalgElem> Pullback for InverseFromCholeskyPullback<T> {
        type Output = Array2<T>;
        type Args = (Array2<T>,);
        #[track_caller]
        fn pullback(self, dy: Array2<T>, (dl,): (&mut Array2<T>,)) {
            let dim = self.inv.raw_dim();
            let Some(dy) = mochi_rules_ndarray::cotangent::output(dy, &dim) else {
                return;
            };
            let g = self.inv.dot(&dy).dot(&self.inv);
            let mut step = (&g + &g.t()).dot(&self.l);
            for ((i, j), v) in step.indexed_iter_mut() {
                *v = if j > i { T::ZERO } else { -*v };
            }
            *dense(dl, &dim) += &step;
        }
    }

    /// `inverse_from_cholesky(l)` with its pullback.
    #[track_caller]
    pub fn rrule<T: LinalgElem, S: Data<Elem = T>>(
        l: &ArrayBase<S, Ix2>,
    ) -> (Array2<T>, InverseFromCholeskyPullback<T>) {
        let inv = super::inverse_from_cholesky(l);
        let lower = l.to_owned().tril(0);
        (inv.clone(), InverseFromCholeskyPullback { l: lower, inv })
    }
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
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::logdet_cholesky as __twin;
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
    use crate::test_support::{
        assert_close, layouts, partial, random, seeded, spd, value, TestElem,
    };
    use mochi_core::testing::RuleTest;
    use mochi_core::Dual;
    use ndarray::{array, Array1};

    /// A symmetric direction: `(A + Aᵀ) / 2` for a standard-normal `A`.
    fn symmetric(n: usize, seed: u64) -> Array2<f64> {
        let a = random::<f64>(n, n, seed);
        (&a + &a.t()) * 0.5
    }

    /// `Σᵢⱼ Aᵢⱼ Bⱼᵢ = tr(A B)`.
    fn trace_of_product(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        a.dot(b).diag().sum()
    }

    /// A symmetric `M` in the lower-triangle convention of cotangents: `2 tril(M, −1) +
    /// diag(M)`, zero above the diagonal.
    fn lower_convention(m: &Array2<f64>) -> Array2<f64> {
        let mut c = m.tril(-1) * 2.0;
        c.diag_mut().assign(&m.diag());
        c
    }

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
                .forward(|a| logdet(&a.0).unwrap())
                .tolerance(T::RTOL, T::ATOL)
                .run();
                let l = crate::cholesky(&k).unwrap();
                // d(2 Σ log Lᵢᵢ)/dLᵢᵢ = 2/Lᵢᵢ
                RuleTest::new(
                    (l,),
                    |a| logdet_cholesky(&a.0),
                    |a| logdet_cholesky::rrule(&a.0),
                )
                .forward(|a| logdet_cholesky(&a.0))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                // d(L Lᵀ)⁻¹ = −Y (dL Lᵀ + L dLᵀ) Y, from the lower triangle
                let l = crate::cholesky(&k).unwrap();
                RuleTest::new(
                    (l,),
                    |a| inverse_from_cholesky(&a.0),
                    |a| inverse_from_cholesky::rrule(&a.0),
                )
                .forward(|a| inverse_from_cholesky(&a.0))
                .tolerance(T::RTOL, T::ATOL)
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
        .forward(|a| logdet(&a.0).unwrap())
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (k,),
            |a| logdet_cholesky(&a.0),
            |a| Call((&a.0,)).logdet_cholesky(),
        )
        .forward(|a| logdet_cholesky(&a.0))
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
        // on duals too, whatever the partials: singular by value is singular
        let kd = seeded(&k, [&array![[1.0, 0.0], [0.0, 1.0]]]);
        assert_eq!(logdet(&kd).unwrap_err(), NotPositiveDefinite { pivot: 1 });
        let (y, pb) = logdet::rrule(&kd);
        assert!(y.is_err());
        let mut dk = Array2::zeros((0, 0));
        pb.pullback(Dual::constant(1.0), (&mut dk,));
        assert!(dk.is_empty());
        let nan = array![[Dual::<1>::constant(f64::NAN)]];
        assert_eq!(logdet(&nan).unwrap_err().pivot, 0);
    }

    #[test]
    fn logdet_on_duals_is_the_trace_of_the_inverse_along_the_direction() {
        for n in [1, 3, 6] {
            let k = spd::<f64>(n, 80 + n as u64);
            let inv = inverse_from_cholesky(&crate::cholesky(&k).unwrap());
            let v = symmetric(n, 81);
            // Only the lower triangle is read: a direction in it moves the symmetric
            // matrix by W + tril(W, −1)ᵀ.
            let w = random::<f64>(n, n, 82).tril(0);
            let moved_by_w = &w + &w.tril(-1).t();
            let y = logdet(&seeded(&k, [&v, &w])).unwrap();
            assert!((y.value - logdet(&k).unwrap()).abs() < 1e-13);
            // d log det K = tr(K⁻¹ dK)
            let expected = [
                trace_of_product(&inv, &v),
                trace_of_product(&inv, &moved_by_w),
            ];
            for (i, e) in expected.iter().enumerate() {
                assert!(
                    (y.partials[i] - e).abs() <= 1e-10 * e.abs().max(1.0),
                    "direction {i}: {} against {e}",
                    y.partials[i]
                );
            }
        }
    }

    #[test]
    fn the_logdet_pullback_runs_on_duals() {
        for n in [1, 4] {
            let k = spd::<f64>(n, 83 + n as u64);
            let v = symmetric(n, 84);
            let inv = inverse_from_cholesky(&crate::cholesky(&k).unwrap());
            // d(K⁻¹) = −K⁻¹ dK K⁻¹
            let d_inv = -inv.dot(&v).dot(&inv);
            let kd = seeded(&k, [&v]);
            for dy in [Dual::constant(1.0), Dual::new(2.0, [0.5])] {
                let (y, pb) = logdet::rrule(&kd);
                assert!(y.is_ok());
                let mut dk = Array2::zeros((0, 0));
                pb.pullback(dy, (&mut dk,));
                // K̄ = ȳ K⁻¹ (lower convention), so dK̄ = ȳ d(K⁻¹) + dȳ K⁻¹
                let expected_value = lower_convention(&inv) * dy.value;
                let expected = lower_convention(&(&d_inv * dy.value + &inv * dy.partials[0]));
                assert_close("K̄", &value(&dk), &expected_value, 1e-13);
                assert_close("dK̄", &partial(&dk, 0), &expected, 1e-10);
            }
        }
    }

    /// `½ (log det K + yᵀ K⁻¹ y)`, written once for any element type.
    fn gaussian_energy<T: LinalgElem>(k: &Array2<T>, y: &Array1<T>) -> T {
        let l = crate::cholesky(k).unwrap();
        let alpha = crate::cholesky_solve(&l, y);
        (logdet_cholesky(&l) + y.dot(&alpha)) * T::of_f64(0.5)
    }

    #[test]
    fn a_generic_function_of_the_rules_runs_in_forward_mode() {
        let n = 5;
        let k = spd::<f64>(n, 86);
        let y: Array1<f64> = random::<f64>(n, 1, 87).column(0).to_owned();
        let v = symmetric(n, 88);
        let w: Array1<f64> = random::<f64>(n, 1, 89).column(0).to_owned();
        let z = Array2::zeros((n, n));
        let e = gaussian_energy(&seeded(&k, [&v, &z]), &seeded(&y, [&Array1::zeros(n), &w]));
        assert!((e.value - gaussian_energy(&k, &y)).abs() < 1e-12);
        let inv = inverse_from_cholesky(&crate::cholesky(&k).unwrap());
        let alpha = inv.dot(&y);
        // ∂/∂K along V: ½ tr(K⁻¹V) − ½ αᵀVα;  ∂/∂y along w: αᵀw  (α = K⁻¹y)
        let expected = [
            0.5 * trace_of_product(&inv, &v) - 0.5 * alpha.dot(&v.dot(&alpha)),
            alpha.dot(&w),
        ];
        for (i, ex) in expected.iter().enumerate() {
            assert!(
                (e.partials[i] - ex).abs() <= 1e-10 * ex.abs().max(1.0),
                "direction {i}: {} against {ex}",
                e.partials[i]
            );
        }
    }
}

#[cfg(test)]
mod inverse_tests {
    use super::*;
    use crate::test_support::{assert_close, partial, random, seeded, spd, value};

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

    #[test]
    fn inverse_from_the_factor_of_duals_carries_the_derivative_of_the_inverse() {
        let k = spd::<f64>(5, 41);
        let a = random::<f64>(5, 5, 42);
        let v = (&a + &a.t()) * 0.5;
        let inv = inverse_from_cholesky(&crate::cholesky(&k).unwrap());
        let l = crate::cholesky(&seeded(&k, [&v])).unwrap();
        let inv_d = inverse_from_cholesky(&l);
        // d(K⁻¹) = −K⁻¹ dK K⁻¹
        let expected = -inv.dot(&v).dot(&inv);
        assert_close("K⁻¹", &value(&inv_d), &inv, 1e-12);
        assert_close("d(K⁻¹)", &partial(&inv_d, 0), &expected, 1e-10);
    }
}
