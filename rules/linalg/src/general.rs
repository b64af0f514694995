//! The general linear solve [`solve`](fn@solve): `X = A⁻¹ B` for a square `A`, by
//! LU with partial pivoting ([`LinalgElem::lu_in_place`]: faer's for floats).
//!
//! `B̄ = A⁻ᵀ X̄` (one more solve with the same factors, transposed) and
//! `Ā −= B̄ Xᵀ` (one matrix product into the accumulator).

use crate::bridge::column_major_copy;
use crate::factor::assert_square;
use crate::work::{contiguous, Rhs};
use crate::LinalgElem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use mochi_rules_ndarray::cotangent::{add_owned, dense, output};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array, Array2, ArrayBase, Axis, Data, Ix2};

rule_trait! {
    /// `solve(&a, &b)` as a method: `Call((&a, &b)).solve()`.
    LinalgSolve::solve
}

/// The matrix of a linear solve is singular: its LU factorisation met a zero pivot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SingularMatrix {
    /// The index of the first zero pivot of `U`.
    pub pivot: usize,
}

impl std::fmt::Display for SingularMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "matrix is singular: the LU pivot at index {} is zero (the system has no unique solution)",
            self.pivot
        )
    }
}

impl std::error::Error for SingularMatrix {}

/// An LU factorisation `P A = L U` in one column-major matrix, with its permutation.
struct Lu<T> {
    lu: Array2<T>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
}

impl<T: LinalgElem> Lu<T> {
    fn factor<S: Data<Elem = T>>(a: &ArrayBase<S, Ix2>) -> Result<Lu<T>, SingularMatrix> {
        let n = a.nrows();
        let mut lu = column_major_copy(a);
        let (mut perm, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
        T::lu_in_place(lu.view_mut(), &mut perm, &mut perm_inv);
        // Decided on the value, so a dual matrix is singular where its value is.
        if let Some(pivot) = lu
            .diag()
            .iter()
            .position(|&d| d == T::ZERO || !d.is_finite())
        {
            return Err(SingularMatrix { pivot });
        }
        Ok(Lu { lu, perm, perm_inv })
    }

    /// `x ← A⁻¹ x` (or `A⁻ᵀ x`).
    fn solve_in_place<D: Rhs>(&self, x: &mut Array<T, D>, transposed: bool) {
        T::lu_solve_in_place(
            self.lu.view(),
            &self.perm,
            &self.perm_inv,
            transposed,
            D::as_matrix_mut(x.view_mut()),
        );
    }
}

/// Solves `A X = B` for a square, non-singular `a`; `b` is a vector or a matrix.
///
/// # Errors
/// [`SingularMatrix`] when the LU factorisation meets a zero pivot.
///
/// # Panics
/// If `a` is not square or `b` has not as many rows as `a`.
///
/// ```
/// use ndarray::array;
/// let x = mochi_rules_linalg::solve(&array![[0.0, 2.0], [1.0, 1.0]], &array![4.0, 3.0]).unwrap();
/// assert!((&x - &array![1.0, 2.0]).iter().all(|e: &f64| e.abs() < 1e-14));
/// ```
#[track_caller]
pub fn solve<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
    a: &ArrayBase<S1, Ix2>,
    b: &ArrayBase<S2, D>,
) -> Result<Array<T, D>, SingularMatrix> {
    solve::rrule(a, b).0
}

/// The rule of [`solve`](fn@solve).
pub mod solve {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::solve as __twin;
    use super::*;

    /// Pullback of `solve`: the LU factors and the solution, or nothing after an error.
    pub struct SolvePullback<T, D> {
        state: Option<(Lu<T>, Array<T, D>)>,
    }

    impl<T: LinalgElem, D: Rhs> Pullback for SolvePullback<T, D> {
        type Output = Array<T, D>;
        type Args = (Array2<T>, Array<T, D>);
        #[track_caller]
        fn pullback(self, dx: Array<T, D>, (da, db): (&mut Array2<T>, &mut Array<T, D>)) {
            let Some((lu, x)) = self.state else { return };
            let Some(dx) = output(dx, &x.raw_dim()) else {
                return;
            };
            // B̄ = A⁻ᵀ X̄, in X̄'s buffer
            let mut g = contiguous(dx);
            lu.solve_in_place(&mut g, true);
            // Ā −= B̄ Xᵀ
            let da = dense(da, &lu.lu.raw_dim());
            general_mat_mul(
                -T::one(),
                &D::as_matrix(g.view()),
                &D::as_matrix(x.view()).t(),
                T::one(),
                da,
            );
            add_owned(db, &x.raw_dim(), g);
        }
    }

    /// `solve(a, b)` with its pullback.
    #[track_caller]
    pub fn rrule<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
        a: &ArrayBase<S1, Ix2>,
        b: &ArrayBase<S2, D>,
    ) -> (Result<Array<T, D>, SingularMatrix>, SolvePullback<T, D>) {
        assert_square("solve", a);
        assert_eq!(
            b.len_of(Axis(0)),
            a.nrows(),
            "mochi_rules_linalg::solve: the right-hand side has {} rows, the matrix is {}×{}",
            b.len_of(Axis(0)),
            a.nrows(),
            a.ncols()
        );
        match Lu::factor(a) {
            Ok(lu) => {
                let mut x = b.to_owned();
                lu.solve_in_place(&mut x, false);
                (
                    Ok(x.clone()),
                    SolvePullback {
                        state: Some((lu, x)),
                    },
                )
            }
            Err(e) => (Err(e), SolvePullback { state: None }),
        }
    }
}

impl<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs> LinalgSolve
    for Call<(&ArrayBase<S1, Ix2>, &ArrayBase<S2, D>)>
{
    type Output = Result<Array<T, D>, SingularMatrix>;
    type Pullback = solve::SolvePullback<T, D>;
    #[track_caller]
    fn solve(self) -> (Self::Output, Self::Pullback) {
        let (a, b) = self.0;
        solve::rrule(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_close, assert_dual_gradient_matches_finite_differences, layouts, partial, random,
        seeded, value, TestElem,
    };
    use mochi_core::testing::RuleTest;
    use mochi_core::Dual;
    use ndarray::{array, Array1};

    /// A standard-normal `n × n` matrix made well-conditioned (`3` added to the
    /// diagonal), with an off-diagonal entry that makes pivoting swap the first rows.
    fn well_conditioned(n: usize, seed: u64) -> Array2<f64> {
        let mut a = random::<f64>(n, n, seed);
        a.diag_mut().map_inplace(|d| *d += 3.0);
        if n > 1 {
            a[[1, 0]] = 10.0;
        }
        a
    }

    fn solves<T: TestElem>() {
        for n in [1, 5] {
            let mut a = random::<T>(n, n, 50);
            a.diag_mut().map_inplace(|d| *d += T::of_f64(3.0));
            for a in layouts(&a) {
                let bm = random::<T>(n, 2, 51);
                let bv: Array1<T> = random::<T>(n, 1, 52).column(0).to_owned();
                RuleTest::new(
                    (a.clone(), bm),
                    |a| super::solve(&a.0, &a.1).unwrap(),
                    |a| {
                        let (x, pb) = solve::rrule(&a.0, &a.1);
                        (x.unwrap(), pb)
                    },
                )
                .forward(|a| super::solve(&a.0, &a.1).unwrap())
                .tolerance(T::RTOL, T::ATOL)
                .run();
                RuleTest::new(
                    (a, bv),
                    |a| super::solve(&a.0, &a.1).unwrap(),
                    |a| {
                        let (x, pb) = Call((&a.0, &a.1)).solve();
                        (x.unwrap(), pb)
                    },
                )
                .forward(|a| super::solve(&a.0, &a.1).unwrap())
                .tolerance(T::RTOL, T::ATOL)
                .run();
            }
        }
    }

    #[test]
    fn general_solve_with_pivoting() {
        solves::<f64>();
        solves::<f32>();
    }

    #[test]
    fn a_singular_matrix_is_an_error() {
        let a = array![[1.0, 2.0], [2.0, 4.0]];
        let err = super::solve(&a, &array![1.0, 1.0]).unwrap_err();
        assert_eq!(err.pivot, 1);
        assert!(err.to_string().contains("singular"));
        // on duals too: singular by value, whatever the partials
        let ad = seeded(&a, [&array![[1.0, 0.0], [0.0, 1.0]]]);
        let b = array![Dual::constant(1.0), Dual::constant(1.0)];
        assert_eq!(
            super::solve(&ad, &b).unwrap_err(),
            SingularMatrix { pivot: 1 }
        );
        let (x, pb) = Call((&ad, &b)).solve();
        assert!(x.is_err());
        let (mut da, mut db) = (Array2::zeros((0, 0)), Array1::zeros(0));
        pb.pullback(Array1::ones(2), (&mut da, &mut db));
        assert!(da.is_empty() && db.is_empty());
        let zero = Array2::<Dual<1>>::zeros((3, 3));
        assert_eq!(super::solve(&zero, &Array1::zeros(3)).unwrap_err().pivot, 0);
        let mut nan = seeded(&Array2::eye(2), [&Array2::ones((2, 2))]);
        nan[[1, 1]] = Dual::constant(f64::NAN);
        assert_eq!(super::solve(&nan, &Array1::zeros(2)).unwrap_err().pivot, 1);
    }

    #[test]
    fn solve_on_duals_carries_the_closed_form_derivative() {
        for n in [1, 3, 6] {
            let a = well_conditioned(n, 90 + n as u64);
            let v = random::<f64>(n, n, 91);
            let b = random::<f64>(n, 2, 92);
            let w = random::<f64>(n, 2, 93);
            let zero_a = Array2::zeros((n, n));
            let zero_b = Array2::zeros((n, 2));
            // direction 0 moves A along V, direction 1 moves B along W
            let xd = super::solve(&seeded(&a, [&v, &zero_a]), &seeded(&b, [&zero_b, &w])).unwrap();
            let x = super::solve(&a, &b).unwrap();
            assert_close("X", &value(&xd), &x, 1e-13);
            // d(A⁻¹B) = −A⁻¹ V A⁻¹ B along A, A⁻¹ W along B
            let along_a = -super::solve(&a, &v.dot(&x)).unwrap();
            let along_b = super::solve(&a, &w).unwrap();
            assert_close("dX along A", &partial(&xd, 0), &along_a, 1e-10);
            assert_close("dX along B", &partial(&xd, 1), &along_b, 1e-10);
            // and for a vector right-hand side
            let bv = b.column(0).to_owned();
            let xv = super::solve(&seeded(&a, [&v]), &bv.mapv(Dual::constant)).unwrap();
            assert_close(
                "dx along A",
                &partial(&xv, 0),
                &along_a.column(0).to_owned(),
                1e-10,
            );
        }
    }

    /// `(Ā, B̄)` from `solve`'s pullback of a fixed `X̄`, flattened.
    fn solve_gradient<T: LinalgElem>(a: &Array2<T>, b: &Array2<f64>, dx: &Array2<f64>) -> Vec<T> {
        let (x, pb) = solve::rrule(a, &b.mapv(T::of_f64));
        assert!(x.is_ok());
        let (mut da, mut db) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
        pb.pullback(dx.mapv(T::of_f64), (&mut da, &mut db));
        da.into_iter().chain(db).collect()
    }

    #[test]
    fn the_solve_pullback_runs_on_duals() {
        for n in [1, 4] {
            let a = well_conditioned(n, 94 + n as u64);
            let v = random::<f64>(n, n, 95);
            let b = random::<f64>(n, 3, 96);
            let dx = random::<f64>(n, 3, 97);
            assert_dual_gradient_matches_finite_differences(
                &a,
                &v,
                |a| solve_gradient(a, &b, &dx),
                |a| solve_gradient(a, &b, &dx),
            );
        }
    }
}
