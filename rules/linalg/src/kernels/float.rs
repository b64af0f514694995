//! [`LinalgElem`] for `f64` and `f32`: every kernel is one faer call (blocked and
//! vectorised), on the ndarray memory itself when it is contiguous.

use crate::bridge::{with_mat_mut, with_mat_ref};
use crate::elem::TriangularProduct;
use crate::error::NotPositiveDefinite;
use crate::work::Triangle;
use crate::LinalgElem;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place, cholesky_in_place_scratch, LltError, LltRegularization,
};
use faer::linalg::cholesky::llt::inverse::{inverse, inverse_scratch};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::lu::partial_pivoting::solve::{
    solve_in_place, solve_in_place_scratch, solve_transpose_in_place,
    solve_transpose_in_place_scratch,
};
use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::perm::PermRef;
use faer::traits::RealField;
use faer::{Accum, Par};
use ndarray::{ArrayView2, ArrayViewMut2};

/// faer's name for a factor read as `structure` (`None`: the whole matrix).
fn block_structure(structure: Option<Triangle>) -> BlockStructure {
    match structure {
        None => BlockStructure::Rectangular,
        Some(Triangle::Lower) => BlockStructure::TriangularLower,
        Some(Triangle::Upper) => BlockStructure::TriangularUpper,
    }
}

fn cholesky<T: LinalgElem + RealField>(a: ArrayViewMut2<'_, T>) -> Result<(), NotPositiveDefinite> {
    let n = a.nrows();
    let mut scratch = MemBuffer::new(cholesky_in_place_scratch::<T>(
        n,
        Par::Seq,
        Default::default(),
    ));
    let stack = MemStack::new(&mut scratch);
    with_mat_mut(a, |a| {
        cholesky_in_place(
            a,
            LltRegularization::default(),
            Par::Seq,
            stack,
            Default::default(),
        )
    })
    .map(|_| ())
    .map_err(|LltError::NonPositivePivot { index }| NotPositiveDefinite { pivot: index })
}

fn cholesky_inverse<T: LinalgElem + RealField>(l: ArrayView2<'_, T>, inv: ArrayViewMut2<'_, T>) {
    let n = l.nrows();
    let mut scratch = MemBuffer::new(inverse_scratch::<T>(n, Par::Seq));
    with_mat_ref(&l, |l| {
        with_mat_mut(inv, |inv| {
            inverse(inv, l, Par::Seq, MemStack::new(&mut scratch))
        })
    });
}

fn solve_triangular<T: LinalgElem + RealField>(
    t: ArrayView2<'_, T>,
    triangle: Triangle,
    x: ArrayViewMut2<'_, T>,
) {
    with_mat_ref(&t, |t| {
        with_mat_mut(x, |x| match triangle {
            Triangle::Lower => solve_lower_triangular_in_place(t, x, Par::Seq),
            Triangle::Upper => solve_upper_triangular_in_place(t, x, Par::Seq),
        })
    });
}

fn triangular_matmul_add<T: LinalgElem + RealField>(
    dst: ArrayViewMut2<'_, T>,
    product: TriangularProduct<'_, '_, T>,
) {
    let TriangularProduct {
        dst_triangle,
        alpha,
        lhs,
        lhs_structure,
        rhs,
        rhs_structure,
    } = product;
    with_mat_ref(&lhs, |lhs| {
        with_mat_ref(&rhs, |rhs| {
            with_mat_mut(dst, |dst| {
                matmul(
                    dst,
                    block_structure(Some(dst_triangle)),
                    Accum::Add,
                    lhs,
                    block_structure(lhs_structure),
                    rhs,
                    block_structure(rhs_structure),
                    alpha,
                    Par::Seq,
                )
            })
        })
    });
}

fn lu<T: LinalgElem + RealField>(
    a: ArrayViewMut2<'_, T>,
    perm: &mut [usize],
    perm_inv: &mut [usize],
) {
    let (m, n) = a.dim();
    let mut scratch = MemBuffer::new(lu_in_place_scratch::<usize, T>(
        m,
        n,
        Par::Seq,
        Default::default(),
    ));
    with_mat_mut(a, |a| {
        lu_in_place(
            a,
            perm,
            perm_inv,
            Par::Seq,
            MemStack::new(&mut scratch),
            Default::default(),
        );
    });
}

fn lu_solve<T: LinalgElem + RealField>(
    lu: ArrayView2<'_, T>,
    perm: &[usize],
    perm_inv: &[usize],
    transposed: bool,
    x: ArrayViewMut2<'_, T>,
) {
    let n = lu.nrows();
    let cols = x.ncols();
    let perm = PermRef::new_checked(perm, perm_inv, n);
    let req = if transposed {
        solve_transpose_in_place_scratch::<usize, T>(n, cols, Par::Seq)
    } else {
        solve_in_place_scratch::<usize, T>(n, cols, Par::Seq)
    };
    let mut scratch = MemBuffer::new(req);
    let stack = MemStack::new(&mut scratch);
    with_mat_ref(&lu, |lu| {
        with_mat_mut(x, |rhs| {
            if transposed {
                solve_transpose_in_place(lu, lu, perm, rhs, Par::Seq, stack)
            } else {
                solve_in_place(lu, lu, perm, rhs, Par::Seq, stack)
            }
        })
    });
}

macro_rules! by_faer {
    ($($float:ty),*) => {$(
        impl LinalgElem for $float {
            #[inline]
            fn cholesky_in_place(a: ArrayViewMut2<'_, Self>) -> Result<(), NotPositiveDefinite> {
                cholesky(a)
            }
            #[inline]
            fn cholesky_inverse(l: ArrayView2<'_, Self>, inv: ArrayViewMut2<'_, Self>) {
                cholesky_inverse(l, inv)
            }
            #[inline]
            fn solve_triangular_in_place(
                t: ArrayView2<'_, Self>,
                triangle: Triangle,
                x: ArrayViewMut2<'_, Self>,
            ) {
                solve_triangular(t, triangle, x)
            }
            #[inline]
            fn triangular_matmul_add(dst: ArrayViewMut2<'_, Self>, product: TriangularProduct<'_, '_, Self>) {
                triangular_matmul_add(dst, product)
            }
            #[inline]
            fn lu_in_place(a: ArrayViewMut2<'_, Self>, perm: &mut [usize], perm_inv: &mut [usize]) {
                lu(a, perm, perm_inv)
            }
            #[inline]
            fn lu_solve_in_place(
                lu: ArrayView2<'_, Self>,
                perm: &[usize],
                perm_inv: &[usize],
                transposed: bool,
                x: ArrayViewMut2<'_, Self>,
            ) {
                lu_solve(lu, perm, perm_inv, transposed, x)
            }
        }
    )*};
}

by_faer!(f64, f32);
