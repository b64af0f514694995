//! ndarray matrices as faer matrices, without copying when the memory allows.
//!
//! A contiguous row-major or column-major ndarray matrix is the same memory as a
//! faer matrix with the matching strides, so it is handed over as it is; any other
//! layout (a strided slice, a reversed axis) is copied once into column-major order.

use crate::LinalgElem;
use faer::{MatMut, MatRef};
use ndarray::{Array2, ArrayBase, ArrayViewMut2, Data, Ix2, ShapeBuilder};

/// Runs `f` on `a` as a faer matrix: the same memory when `a` is contiguous in
/// either order, a column-major copy otherwise.
pub(crate) fn with_mat_ref<T: LinalgElem, S: Data<Elem = T>, R>(
    a: &ArrayBase<S, Ix2>,
    f: impl FnOnce(MatRef<'_, T>) -> R,
) -> R {
    let (m, n) = a.dim();
    let view = a.view();
    if let Some(rows) = view.to_slice() {
        return f(MatRef::from_row_major_slice(rows, m, n));
    }
    if let Some(cols) = view.reversed_axes().to_slice() {
        return f(MatRef::from_column_major_slice(cols, m, n));
    }
    let copy = column_major_copy(a);
    let cols = copy
        .t()
        .to_slice()
        .expect("a column-major copy is contiguous");
    f(MatRef::from_column_major_slice(cols, m, n))
}

/// A column-major copy of `a`.
pub(crate) fn column_major_copy<T: LinalgElem, S: Data<Elem = T>>(
    a: &ArrayBase<S, Ix2>,
) -> Array2<T> {
    let mut copy = Array2::zeros(a.raw_dim().f());
    copy.assign(a);
    copy
}

/// `a` as a mutable faer matrix. `a` must be contiguous in either order, as the
/// working matrices of this crate are.
pub(crate) fn mat_mut<T: LinalgElem>(a: ArrayViewMut2<'_, T>) -> MatMut<'_, T> {
    let (m, n) = a.dim();
    if a.is_standard_layout() {
        let rows = a.into_slice().expect("standard layout is contiguous");
        MatMut::from_row_major_slice_mut(rows, m, n)
    } else {
        let cols = a
            .reversed_axes()
            .into_slice()
            .expect("working matrices are contiguous in row- or column-major order");
        MatMut::from_column_major_slice_mut(cols, m, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s};

    #[test]
    fn every_layout_reads_the_same_matrix() {
        let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let f = column_major_copy(&a);
        let strided = array![
            [1.0, 9.0, 2.0, 9.0, 3.0],
            [9.0; 5],
            [4.0, 9.0, 5.0, 9.0, 6.0]
        ];
        for m in [a.view(), f.view(), strided.slice(s![..;2, ..;2])] {
            with_mat_ref(&m, |r| {
                assert_eq!((r.nrows(), r.ncols()), (2, 3));
                for i in 0..2 {
                    for j in 0..3 {
                        assert_eq!(r[(i, j)], a[[i, j]]);
                    }
                }
            });
        }
        // the transpose of a contiguous matrix is handed over without a copy
        let t = a.t();
        with_mat_ref(&t, |r| assert_eq!(r[(2, 1)], 6.0));
    }
}
