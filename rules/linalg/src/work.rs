//! What the rules share around the kernels of [`LinalgElem`]: right-hand sides as
//! matrices, triangles, and triangular solves and rank-k updates on ndarray arrays.

use crate::LinalgElem;
use ndarray::{
    Array, Array2, ArrayBase, ArrayView2, ArrayViewMut2, Axis, Data, Dimension, Ix1, Ix2,
};

/// Right-hand sides of a solve: vectors (`Ix1`) and matrices (`Ix2`).
pub trait Rhs: Dimension {
    /// The right-hand side as an `n × k` matrix (`k = 1` for a vector).
    fn as_matrix<T>(v: ndarray::ArrayView<'_, T, Self>) -> ArrayView2<'_, T>;
    /// The right-hand side as a mutable `n × k` matrix.
    fn as_matrix_mut<T>(v: ndarray::ArrayViewMut<'_, T, Self>) -> ArrayViewMut2<'_, T>;
}

impl Rhs for Ix1 {
    fn as_matrix<T>(v: ndarray::ArrayView<'_, T, Ix1>) -> ArrayView2<'_, T> {
        v.insert_axis(Axis(1))
    }
    fn as_matrix_mut<T>(v: ndarray::ArrayViewMut<'_, T, Ix1>) -> ArrayViewMut2<'_, T> {
        v.insert_axis(Axis(1))
    }
}

impl Rhs for Ix2 {
    fn as_matrix<T>(v: ndarray::ArrayView<'_, T, Ix2>) -> ArrayView2<'_, T> {
        v
    }
    fn as_matrix_mut<T>(v: ndarray::ArrayViewMut<'_, T, Ix2>) -> ArrayViewMut2<'_, T> {
        v
    }
}

/// Which triangle of a square matrix a kernel of [`LinalgElem`] reads or writes (the
/// other is never touched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangle {
    /// The lower triangle and the diagonal.
    Lower,
    /// The upper triangle and the diagonal.
    Upper,
}

impl Triangle {
    /// The other triangle: that of the transpose.
    pub fn transposed(self) -> Triangle {
        match self {
            Triangle::Lower => Triangle::Upper,
            Triangle::Upper => Triangle::Lower,
        }
    }
}

/// `x` made contiguous in row- or column-major order (a copy only if it is neither).
pub(crate) fn contiguous<T: LinalgElem, D: Dimension>(x: Array<T, D>) -> Array<T, D> {
    let reversed_is_standard = x.view().reversed_axes().is_standard_layout();
    if x.is_standard_layout() || reversed_is_standard {
        x
    } else {
        x.as_standard_layout().into_owned()
    }
}

/// `x ← T⁻¹ x` for an ndarray triangular matrix `t`.
pub(crate) fn solve_with<T: LinalgElem, S: Data<Elem = T>, D: Rhs>(
    t: &ArrayBase<S, Ix2>,
    triangle: Triangle,
    x: &mut Array<T, D>,
) {
    T::solve_triangular_in_place(t.view(), triangle, D::as_matrix_mut(x.view_mut()));
}

/// `x ← T⁻ᵀ x` for an ndarray triangular matrix `t`.
pub(crate) fn solve_transposed_with<T: LinalgElem, S: Data<Elem = T>, D: Rhs>(
    t: &ArrayBase<S, Ix2>,
    triangle: Triangle,
    x: &mut Array<T, D>,
) {
    T::solve_triangular_in_place(t.t(), triangle.transposed(), D::as_matrix_mut(x.view_mut()));
}

/// `dst += α · triangle(u vᵀ)` for `n × k` matrices `u` and `v`; only `triangle` of
/// `dst` is written.
pub(crate) fn add_triangle_of_product<T: LinalgElem>(
    dst: &mut Array2<T>,
    triangle: Triangle,
    alpha: T,
    u: ArrayView2<'_, T>,
    v: ArrayView2<'_, T>,
) {
    T::triangular_matmul_add(
        dst.view_mut(),
        crate::elem::TriangularProduct {
            dst_triangle: triangle,
            alpha,
            lhs: u,
            lhs_structure: None,
            rhs: v.reversed_axes(),
            rhs_structure: None,
        },
    );
}
