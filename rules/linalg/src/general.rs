//! The general linear solve [`solve`](fn@solve): `X = A⁻¹ B` for a square `A`, by
//! LU with partial pivoting (faer).
//!
//! `B̄ = A⁻ᵀ X̄` (one more solve with the same factors, transposed) and
//! `Ā −= B̄ Xᵀ` (one matrix product into the accumulator).

use crate::bridge::{column_major_copy, mat_mut, with_mat_ref};
use crate::factor::assert_square;
use crate::work::{contiguous, Rhs};
use crate::LinalgElem;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::lu::partial_pivoting::solve::{
    solve_in_place, solve_in_place_scratch, solve_transpose_in_place,
    solve_transpose_in_place_scratch,
};
use faer::perm::PermRef;
use faer::Par;
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
        let mut scratch = MemBuffer::new(lu_in_place_scratch::<usize, T>(
            n,
            n,
            Par::Seq,
            Default::default(),
        ));
        lu_in_place(
            mat_mut(lu.view_mut()),
            &mut perm,
            &mut perm_inv,
            Par::Seq,
            MemStack::new(&mut scratch),
            Default::default(),
        );
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
        let n = self.lu.nrows();
        let k = x.len_of(Axis(0)).max(1);
        let cols = x.len() / k;
        let perm = PermRef::new_checked(&self.perm, &self.perm_inv, n);
        let req = if transposed {
            solve_transpose_in_place_scratch::<usize, T>(n, cols, Par::Seq)
        } else {
            solve_in_place_scratch::<usize, T>(n, cols, Par::Seq)
        };
        let mut scratch = MemBuffer::new(req);
        let stack = MemStack::new(&mut scratch);
        let rhs = mat_mut(D::as_matrix_mut(x.view_mut()));
        with_mat_ref(&self.lu, |lu| {
            if transposed {
                solve_transpose_in_place(lu, lu, perm, rhs, Par::Seq, stack)
            } else {
                solve_in_place(lu, lu, perm, rhs, Par::Seq, stack)
            }
        });
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
    use crate::test_support::{layouts, random, TestElem};
    use mochi_core::testing::RuleTest;
    use ndarray::{array, Array1};

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
    }
}
