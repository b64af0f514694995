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

/// Runs `f` on `a` as a mutable faer matrix: the same memory when `a` is contiguous
/// in either order (the working matrices of this crate are), a column-major copy
/// written back afterwards otherwise.
pub(crate) fn with_mat_mut<T: LinalgElem, R>(
    mut a: ArrayViewMut2<'_, T>,
    f: impl FnOnce(MatMut<'_, T>) -> R,
) -> R {
    let (m, n) = a.dim();
    if a.is_standard_layout() {
        let rows = a.into_slice().expect("standard layout is contiguous");
        return f(MatMut::from_row_major_slice_mut(rows, m, n));
    }
    if a.view().reversed_axes().is_standard_layout() {
        let cols = a
            .reversed_axes()
            .into_slice()
            .expect("the reversed axes are in standard layout");
        return f(MatMut::from_column_major_slice_mut(cols, m, n));
    }
    let mut copy = column_major_copy(&a);
    let result = {
        let cols = copy
            .view_mut()
            .reversed_axes()
            .into_slice()
            .expect("a column-major copy is contiguous");
        f(MatMut::from_column_major_slice_mut(cols, m, n))
    };
    a.assign(&copy);
    result
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

    #[test]
    fn a_mutable_matrix_of_any_layout_is_written_back() {
        let mut strided = Array2::<f64>::zeros((4, 6));
        let mut row_major = Array2::<f64>::zeros((2, 3));
        let mut column_major = Array2::<f64>::zeros((2, 3).f());
        let fill = |mut m: MatMut<'_, f64>| {
            for i in 0..2 {
                for j in 0..3 {
                    m[(i, j)] = (3 * i + j) as f64;
                }
            }
        };
        with_mat_mut(strided.slice_mut(s![..;2, ..;2]), fill);
        with_mat_mut(row_major.view_mut(), fill);
        with_mat_mut(column_major.view_mut(), fill);
        let expected = array![[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]];
        assert_eq!(strided.slice(s![..;2, ..;2]), expected);
        assert_eq!(row_major, expected);
        assert_eq!(column_major, expected);
        // the rest of the strided buffer is untouched
        assert_eq!(strided.sum(), expected.sum());
    }
}
