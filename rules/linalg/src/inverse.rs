//! The inverse of a positive-definite matrix from its Cholesky factor, in the
//! lower-triangle convention: what the pullbacks of `cholesky` and `logdet` add.

use crate::LinalgElem;
use mochi_rules_ndarray::cotangent::dense;
use ndarray::{Array2, ArrayBase, Data, Ix2, ShapeBuilder};

/// The lower triangle of `K⁻¹` (column-major; the strict upper triangle is zero) from
/// the Cholesky factor `l` of `K = L Lᵀ` ([`LinalgElem::cholesky_inverse`]: for floats
/// one triangular inversion and one triangular product by faer).
pub(crate) fn inverse_lower<T: LinalgElem, S: Data<Elem = T>>(l: &ArrayBase<S, Ix2>) -> Array2<T> {
    let n = l.nrows();
    let mut inv = Array2::<T>::zeros((n, n).f());
    T::cholesky_inverse(l.view(), inv.view_mut());
    inv
}

/// `K̄ += c·K⁻¹` in the lower-triangle convention (`2c` below the diagonal, `c` on
/// it), `K⁻¹` formed from the Cholesky factor `l` of `K` (lower triangle only).
pub(crate) fn add_scaled_inverse<T: LinalgElem>(dk: &mut Array2<T>, l: &Array2<T>, c: T) {
    let inv = inverse_lower(l);
    let dk = dense(dk, &l.raw_dim());
    let two_c = c + c;
    // Column by column: `inv` is column-major.
    for (j, column) in inv.columns().into_iter().enumerate() {
        dk[[j, j]] += c * column[j];
        for (i, &v) in column.iter().enumerate().skip(j + 1) {
            dk[[i, j]] += two_c * v;
        }
    }
}
