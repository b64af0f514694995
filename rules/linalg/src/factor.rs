//! The Cholesky factor `L` of a positive-definite matrix `K = L Lᵀ`.
//!
//! The factorisation reads only the lower triangle of `K` (as LAPACK's `'L'` does),
//! so the cotangent it returns lives in the lower triangle too: for
//! `S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹`, with `Φ` taking the lower triangle and halving the
//! diagonal, `K̄ᵢⱼ += Sᵢⱼ + Sⱼᵢ` below the diagonal and `K̄ᵢᵢ += Sᵢᵢ` on it.

use crate::bridge::column_major_copy;
use crate::error::NotPositiveDefinite;
use crate::work::{contiguous, solve_transposed_with, Triangle};
use crate::LinalgElem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use mochi_rules_ndarray::cotangent::{dense, output};
use ndarray::{Array2, ArrayBase, Data, Ix2, ShapeBuilder};

rule_trait! {
    /// `cholesky(&k)` as a method: `Call((&k,)).cholesky()`.
    LinalgCholesky::cholesky
}

/// Panics unless `k` is square, naming the function.
#[track_caller]
pub(crate) fn assert_square<S: Data, D>(what: &str, k: &ArrayBase<S, D>)
where
    D: ndarray::Dimension,
{
    assert!(
        k.ndim() == 2 && k.shape()[0] == k.shape()[1],
        "mochi_rules_linalg::{what}: the matrix must be square, got shape {:?}",
        k.shape()
    );
}

/// Factors the column-major matrix `l` in place (lower triangle) and zeroes its
/// strict upper triangle.
pub(crate) fn factor_in_place<T: LinalgElem>(l: &mut Array2<T>) -> Result<(), NotPositiveDefinite> {
    let n = l.nrows();
    T::cholesky_in_place(l.view_mut())?;
    for j in 1..n {
        l.column_mut(j).slice_mut(ndarray::s![..j]).fill(T::ZERO);
    }
    Ok(())
}

/// The lower-triangular Cholesky factor `L` of a symmetric positive-definite `k`
/// (`k = L Lᵀ`), reading only the lower triangle of `k`.
///
/// # Errors
/// [`NotPositiveDefinite`] with the index of the first non-positive pivot.
///
/// # Panics
/// If `k` is not square.
///
/// ```
/// use ndarray::array;
/// let l = mochi_rules_linalg::cholesky(&array![[4.0, 2.0], [2.0, 5.0]]).unwrap();
/// assert_eq!(l, array![[2.0, 0.0], [1.0, 2.0]]);
/// let err = mochi_rules_linalg::cholesky(&array![[1.0, 2.0], [2.0, 1.0]]).unwrap_err();
/// assert_eq!(err.pivot, 1);
/// ```
#[track_caller]
pub fn cholesky<T: LinalgElem, S: Data<Elem = T>>(
    k: &ArrayBase<S, Ix2>,
) -> Result<Array2<T>, NotPositiveDefinite> {
    assert_square("cholesky", k);
    let mut l = column_major_copy(k);
    factor_in_place(&mut l)?;
    Ok(l)
}

/// The rule of [`cholesky`](fn@cholesky).
pub mod cholesky {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::cholesky as __twin;
    use super::*;

    /// Pullback of `cholesky`: the factor (column-major), or nothing when the
    /// factorisation failed (an `Err` output receives no cotangent).
    pub struct CholeskyPullback<T> {
        pub(crate) l: Option<Array2<T>>,
    }

    impl<T: LinalgElem> Pullback for CholeskyPullback<T> {
        type Output = Array2<T>;
        type Args = (Array2<T>,);
        #[track_caller]
        fn pullback(self, dl: Array2<T>, (dk,): (&mut Array2<T>,)) {
            let Some(l) = self.l else { return };
            let Some(dl) = output(dl, &l.raw_dim()) else {
                return;
            };
            if let Some(c) = scaled_identity_adjoint(&l, &dl) {
                // Φ(Lᵀ L̄) = c·I, so S = c·L⁻ᵀL⁻¹ = c·K⁻¹: one triangular inversion and
                // one triangular product instead of a product and two solves.
                crate::inverse::add_scaled_inverse(dk, &l, c);
                return;
            }
            let s = cholesky_adjoint(&l, dl);
            accumulate_lower_symmetrised(dk, &s);
        }
    }

    /// `cholesky(k)` with its pullback.
    #[track_caller]
    pub fn rrule<T: LinalgElem, S: Data<Elem = T>>(
        k: &ArrayBase<S, Ix2>,
    ) -> (Result<Array2<T>, NotPositiveDefinite>, CholeskyPullback<T>) {
        let y = super::cholesky(k);
        let l = y.as_ref().ok().cloned();
        (y, CholeskyPullback { l })
    }
}

/// `Some(c)` when `tril(L̄)` is diagonal with `Lᵢᵢ L̄ᵢᵢ = 2c` for every `i` (equal to
/// within four ulps), which makes `Φ(Lᵀ L̄) = c·I`. This is the cotangent that
/// `logdet_cholesky` (`L̄ᵢᵢ = 2ȳ/Lᵢᵢ`) hands to `cholesky`; the check reads the lower
/// triangle once and stops at the first entry that rules it out. On duals both tests
/// look at the partials too (`is_zero`, [`LinalgElem::nearly_equal`]), as `==` looks
/// at the value only.
fn scaled_identity_adjoint<T: LinalgElem>(l: &Array2<T>, dl: &Array2<T>) -> Option<T> {
    if l.nrows() == 0 {
        return None;
    }
    let half = T::of_f64(0.5);
    let first = l[[0, 0]] * dl[[0, 0]];
    for (i, row) in dl.rows().into_iter().enumerate() {
        if !T::nearly_equal(l[[i, i]] * row[i], first, 4.0)
            || row.slice(ndarray::s![..i]).iter().any(|v| !v.is_zero())
        {
            return None;
        }
    }
    Some(first * half)
}

/// `S = L⁻ᵀ Φ(Lᵀ tril(L̄)) L⁻¹`, computed in a column-major workspace that reuses
/// `L̄`'s buffer where its layout allows.
fn cholesky_adjoint<T: LinalgElem>(l: &Array2<T>, dl: Array2<T>) -> Array2<T> {
    let n = l.nrows();
    let mut lower_dl = contiguous(dl);
    for ((i, j), v) in lower_dl.indexed_iter_mut() {
        if j > i {
            *v = T::ZERO;
        }
    }
    let mut p = Array2::<T>::zeros((n, n).f());
    // Lᵀ tril(L̄): upper × lower; only the lower triangle of the product is needed.
    T::triangular_matmul_add(
        p.view_mut(),
        crate::elem::TriangularProduct {
            dst_triangle: Triangle::Lower,
            alpha: T::one(),
            lhs: l.t(),
            lhs_structure: Some(Triangle::Upper),
            rhs: lower_dl.view(),
            rhs_structure: Some(Triangle::Lower),
        },
    );
    let half = T::of_f64(0.5);
    p.diag_mut().map_inplace(|d| *d *= half);
    // S = L⁻ᵀ P L⁻¹: P ← L⁻ᵀ P, then Pᵀ ← L⁻ᵀ Pᵀ.
    solve_transposed_with(l, Triangle::Lower, &mut p);
    let mut pt = p.reversed_axes();
    solve_transposed_with(l, Triangle::Lower, &mut pt);
    pt.reversed_axes()
}

/// `K̄ += tril(S + Sᵀ) − diag(S)`: the cotangent of a function that reads the lower
/// triangle of a symmetric matrix, given its symmetric-matrix gradient's `S`.
pub(crate) fn accumulate_lower_symmetrised<T: LinalgElem>(dk: &mut Array2<T>, s: &Array2<T>) {
    let dk = dense(dk, &s.raw_dim());
    let n = s.nrows();
    for i in 0..n {
        for j in 0..i {
            dk[[i, j]] += s[[i, j]] + s[[j, i]];
        }
        dk[[i, i]] += s[[i, i]];
    }
}

impl<T: LinalgElem, S: Data<Elem = T>> LinalgCholesky for Call<(&ArrayBase<S, Ix2>,)> {
    type Output = Result<Array2<T>, NotPositiveDefinite>;
    type Pullback = cholesky::CholeskyPullback<T>;
    #[track_caller]
    fn cholesky(self) -> (Self::Output, Self::Pullback) {
        cholesky::rrule(self.0 .0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_close, assert_dual_gradient_matches_finite_differences, layouts, partial, random,
        seeded, spd, value, TestElem,
    };
    use mochi_core::testing::RuleTest;
    use mochi_core::Dual;
    use ndarray::array;

    /// `logdet_cholesky(cholesky(K))`, whose pullback takes the `c·I` short path.
    fn composed_logdet<T: TestElem>() {
        for n in [1, 2, 6] {
            for k in layouts(&spd::<T>(n, 40 + n as u64)) {
                RuleTest::new(
                    (k,),
                    |a| crate::logdet_cholesky(&cholesky(&a.0).unwrap()),
                    |a| {
                        let (l, pl) = cholesky::rrule(&a.0);
                        let l = l.unwrap();
                        let (y, py) = crate::logdet_cholesky::rrule(&l);
                        let pb =
                            mochi_core::kit::pullback1(move |dy: T, (dk,): (&mut Array2<T>,)| {
                                let mut dl = Array2::zeros((0, 0));
                                py.pullback(dy, (&mut dl,));
                                assert!(
                                    scaled_identity_adjoint(&l, &dl).is_some(),
                                    "the short path is taken"
                                );
                                pl.pullback(dl, (dk,));
                            });
                        (y, pb)
                    },
                )
                .forward(|a| crate::logdet_cholesky(&cholesky(&a.0).unwrap()))
                .tolerance(T::RTOL, T::ATOL)
                .run();
            }
        }
    }

    #[test]
    fn cholesky_then_logdet_takes_the_short_path() {
        composed_logdet::<f64>();
        composed_logdet::<f32>();
        // The short path gives what the general path gives.
        let k = spd::<f64>(5, 49);
        let l = cholesky(&k).unwrap();
        let dl = Array2::from_diag(&l.diag().mapv(|d| 1.5 / d));
        let short = {
            let mut dk = Array2::zeros((0, 0));
            cholesky::CholeskyPullback { l: Some(l.clone()) }.pullback(dl.clone(), (&mut dk,));
            dk
        };
        let mut general = Array2::zeros((5, 5));
        accumulate_lower_symmetrised(&mut general, &cholesky_adjoint(&l, dl));
        assert!((short - general).iter().all(|d| d.abs() < 1e-10));
    }

    fn factors<T: TestElem>() {
        for n in [0, 1, 4, 7] {
            for k in layouts(&spd::<T>(n, 10 + n as u64)) {
                RuleTest::new(
                    (k,),
                    |a| cholesky(&a.0).unwrap(),
                    |a| {
                        let (l, pb) = cholesky::rrule(&a.0);
                        (l.unwrap(), pb)
                    },
                )
                .forward(|a| cholesky(&a.0).unwrap())
                .tolerance(T::RTOL, T::ATOL)
                .run();
            }
        }
        let k = spd::<T>(3, 11);
        RuleTest::new(
            (k,),
            |a| cholesky(&a.0).unwrap(),
            |a| {
                let (l, pb) = Call((&a.0,)).cholesky();
                (l.unwrap(), pb)
            },
        )
        .forward(|a| cholesky(&a.0).unwrap())
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn cholesky_factor() {
        factors::<f64>();
        factors::<f32>();
    }

    #[test]
    fn the_factor_reproduces_the_matrix_and_ignores_the_upper_triangle() {
        let k = spd::<f64>(6, 12);
        let l = cholesky(&k).unwrap();
        let n = 6.0;
        // ‖L Lᵀ − K‖ within rounding (eps · 8 · n · ‖K‖)
        let err = (&l.dot(&l.t()) - &k)
            .iter()
            .fold(0.0_f64, |m, e| m.max(e.abs()));
        assert!(err < f64::EPSILON * 8.0 * n * k.iter().fold(0.0_f64, |m, e| m.max(e.abs())));
        let mut junk = k.clone();
        junk[[0, 5]] = 1e6;
        assert_eq!(cholesky(&junk).unwrap(), l);
    }

    #[test]
    fn a_matrix_that_is_not_positive_definite_is_an_error_naming_the_pivot() {
        let k = array![[4.0, 2.0, 0.0], [2.0, 5.0, 0.0], [0.0, 0.0, -1.0]];
        let err = cholesky(&k).unwrap_err();
        assert_eq!(err, NotPositiveDefinite { pivot: 2 });
        assert!(err.to_string().contains("pivot at index 2"));
        let (y, pb) = Call((&k,)).cholesky();
        assert!(y.is_err());
        // the pullback of a failed factorisation adds nothing
        let mut dk = Array2::zeros((0, 0));
        pb.pullback(Array2::ones((3, 3)), (&mut dk,));
        assert!(dk.is_empty());
        let nan = array![[f64::NAN]];
        assert_eq!(cholesky(&nan).unwrap_err().pivot, 0);
    }

    /// A symmetric direction: `(A + Aᵀ) / 2` for a standard-normal `A`.
    fn symmetric(n: usize, seed: u64) -> Array2<f64> {
        let a = random::<f64>(n, n, seed);
        (&a + &a.t()) * 0.5
    }

    #[test]
    fn cholesky_on_duals_carries_the_closed_form_derivative() {
        for n in [1, 3, 6] {
            let k = spd::<f64>(n, 70 + n as u64);
            let (v0, v1) = (symmetric(n, 71), symmetric(n, 72));
            let l = cholesky(&k).unwrap();
            let ld = cholesky(&seeded(&k, [&v0, &v1])).unwrap();
            assert_close("the value", &value(&ld), &l, 1e-14);
            // dL = L Φ(L⁻¹ dK L⁻ᵀ), Φ the lower triangle with the diagonal halved
            let l_inv = crate::solve_lower_triangular(&l, &Array2::<f64>::eye(n));
            for (i, v) in [v0, v1].iter().enumerate() {
                let mut phi = l_inv.dot(v).dot(&l_inv.t()).tril(0);
                phi.diag_mut().map_inplace(|d| *d *= 0.5);
                assert_close("dL", &partial(&ld, i), &l.dot(&phi), 1e-10);
            }
        }
    }

    /// `K̄` from `cholesky`'s pullback of a fixed `L̄`, flattened.
    fn cholesky_gradient<T: LinalgElem>(k: &Array2<T>, dl: &Array2<f64>) -> Vec<T> {
        let (l, pb) = cholesky::rrule(k);
        assert!(l.is_ok());
        let mut dk = Array2::zeros((0, 0));
        pb.pullback(dl.mapv(T::of_f64), (&mut dk,));
        dk.into_iter().collect()
    }

    /// `K̄` of `logdet_cholesky(cholesky(K))` through both pullbacks, flattened.
    fn composed_gradient<T: LinalgElem>(k: &Array2<T>) -> Vec<T> {
        let (l, pl) = cholesky::rrule(k);
        let l = l.unwrap();
        let (_, pd) = crate::logdet_cholesky::rrule(&l);
        let mut dl = Array2::zeros((0, 0));
        pd.pullback(T::one(), (&mut dl,));
        let mut dk = Array2::zeros((0, 0));
        pl.pullback(dl, (&mut dk,));
        dk.into_iter().collect()
    }

    #[test]
    fn the_cholesky_pullback_runs_on_duals() {
        for n in [1, 4] {
            let k = spd::<f64>(n, 73 + n as u64);
            let v = symmetric(n, 74);
            let dl = random::<f64>(n, n, 75);
            assert_dual_gradient_matches_finite_differences(
                &k,
                &v,
                |k| cholesky_gradient(k, &dl),
                |k| cholesky_gradient(k, &dl),
            );
            assert_dual_gradient_matches_finite_differences(
                &k,
                &v,
                composed_gradient,
                composed_gradient,
            );
        }
    }

    #[test]
    fn the_short_path_looks_at_the_partials_of_the_cotangent() {
        let l = cholesky(&spd::<f64>(3, 76))
            .unwrap()
            .mapv(Dual::<1>::constant);
        let mut dl = Array2::from_diag(&l.diag().mapv(|d| Dual::constant(2.0) / d));
        assert!(scaled_identity_adjoint(&l, &dl).is_some());
        // A zero by value that moves: `Φ(Lᵀ L̄)` is not a multiple of `I` along it.
        dl[[2, 0]] = Dual::new(0.0, [1.0]);
        assert!(scaled_identity_adjoint(&l, &dl).is_none());
        dl[[2, 0]] = Dual::constant(0.0);
        dl[[1, 1]].partials[0] = 0.25;
        assert!(scaled_identity_adjoint(&l, &dl).is_none());
    }

    #[test]
    fn a_dual_matrix_that_is_not_positive_definite_by_value_is_the_same_error() {
        let k = array![[4.0, 2.0, 0.0], [2.0, 5.0, 0.0], [0.0, 0.0, -1.0]];
        let kd = seeded(&k, [&Array2::ones((3, 3))]);
        assert_eq!(cholesky(&kd).unwrap_err(), NotPositiveDefinite { pivot: 2 });
        let (y, pb) = Call((&kd,)).cholesky();
        assert_eq!(y.unwrap_err().pivot, 2);
        let mut dk = Array2::zeros((0, 0));
        pb.pullback(Array2::ones((3, 3)), (&mut dk,));
        assert!(dk.is_empty());
        // A zero pivot is not positive, however its partial moves.
        let zero = array![[Dual::new(0.0, [1.0])]];
        assert_eq!(cholesky(&zero).unwrap_err().pivot, 0);
        let nan = array![
            [Dual::<2>::new(1.0, [0.0; 2]), Dual::constant(0.0)],
            [Dual::constant(f64::NAN), Dual::constant(1.0)]
        ];
        assert_eq!(cholesky(&nan).unwrap_err().pivot, 1);
        let infinite = array![[Dual::<1>::constant(f64::INFINITY)]];
        assert_eq!(
            cholesky(&infinite).unwrap_err(),
            cholesky(&array![[f64::INFINITY]]).unwrap_err()
        );
    }

    #[test]
    #[should_panic(expected = "mochi_rules_linalg::cholesky: the matrix must be square")]
    fn a_rectangular_matrix_panics() {
        let _ = cholesky(&Array2::<f64>::zeros((2, 3)));
    }
}
