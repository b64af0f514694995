//! Reading array cotangents that may be in broadcast form.
//!
//! An array cotangent is in one of three forms: the *structural zero* (an empty array),
//! *dense* (the primal's shape), or *broadcast*: a non-empty array of the primal's rank
//! whose every axis has length 1 or the primal's length, standing for its broadcast to
//! the primal's shape. `sum` leaves the cotangent `c` of its input as a `1 × … × 1`
//! array instead of filling `|x|` copies of `c`; a rule that can use the structure
//! (kron's pullback: `Ā = c·ΣB`) reads it with [`uniform`], and every other rule reads a
//! view of the expansion with [`view`], which costs nothing (zero strides). See
//! `design-docs/tangents.md`.

use super::TangentVector;
use ndarray::{Array, ArrayView, Dimension};

/// How an array cotangent stores itself, relative to its primal's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The structural zero: nothing was accumulated.
    Zero,
    /// A broadcast form: stands for its expansion to the primal's shape.
    Broadcast,
    /// The primal's shape.
    Dense,
}

/// The form of `t`, a cotangent of a primal of shape `dim`.
///
/// # Panics
/// If `t` is neither empty nor broadcastable to `dim`: a pullback received a
/// cotangent that does not belong to its argument.
///
/// ```
/// use mochi_core::broadcast::{form, Form};
/// use ndarray::{array, Array2, Ix2};
/// let dim = Ix2(2, 3);
/// assert_eq!(form(&Array2::<f64>::zeros((0, 0)), &dim), Form::Zero);
/// assert_eq!(form(&array![[1.0]], &dim), Form::Broadcast);
/// assert_eq!(form(&array![[1.0, 2.0, 3.0]], &dim), Form::Broadcast);
/// assert_eq!(form(&Array2::<f64>::ones((2, 3)), &dim), Form::Dense);
/// ```
#[inline]
#[track_caller]
pub fn form<T, D: Dimension>(t: &Array<T, D>, dim: &D) -> Form {
    if t.shape() == dim.slice() {
        return Form::Dense;
    }
    if t.is_empty() {
        return Form::Zero;
    }
    assert!(
        fits(t.shape(), dim.slice()),
        "mochi: cotangent shape mismatch: a cotangent of shape {:?} for a primal of shape {:?}",
        t.shape(),
        dim.slice()
    );
    Form::Broadcast
}

/// Whether an array of shape `from` broadcasts to `to` without adding axes: the
/// same rank, and every axis of length 1 or `to`'s length.
#[inline]
pub(crate) fn fits(from: &[usize], to: &[usize]) -> bool {
    from.len() == to.len() && from.iter().zip(to).all(|(&m, &n)| m == n || m == 1)
}

/// A view of the expansion of `t` to `dim` (zero strides along broadcast axes, no
/// copy), or `None` for the structural zero.
///
/// # Panics
/// As [`form`].
#[inline]
#[track_caller]
pub fn view<'a, T, D: Dimension>(t: &'a Array<T, D>, dim: &D) -> Option<ArrayView<'a, T, D>> {
    match form(t, dim) {
        Form::Zero => None,
        Form::Dense => Some(t.view()),
        Form::Broadcast => Some(t.broadcast(dim.clone()).expect("checked by `form`")),
    }
}

/// The value `c` when `t` stands for `c` in every component (a broadcast form with
/// one element, or a dense array of one element); `None` otherwise.
///
/// ```
/// use mochi_core::broadcast::uniform;
/// use ndarray::{array, Ix2};
/// assert_eq!(uniform(&array![[2.5]], &Ix2(40, 40)), Some(2.5));
/// assert_eq!(uniform(&array![[2.5, 1.0]], &Ix2(40, 2)), None);
/// ```
#[inline]
#[track_caller]
pub fn uniform<T: Clone, D: Dimension>(t: &Array<T, D>, dim: &D) -> Option<T> {
    match form(t, dim) {
        Form::Zero => None,
        _ if t.len() == 1 => t.iter().next().cloned(),
        _ => None,
    }
}

/// `t` expanded to `dim` if it is in broadcast form (one allocation); a dense
/// cotangent or the structural zero is returned as it is.
///
/// # Panics
/// As [`form`].
#[inline]
#[track_caller]
pub fn expand<T: Clone, D: Dimension>(t: Array<T, D>, dim: &D) -> Array<T, D> {
    match form(&t, dim) {
        Form::Broadcast => {
            let mut t = t;
            expansion(&mut t, dim)
        }
        _ => t,
    }
}

/// The expansion of a broadcast form `t` to `dim`: a fill for a one-element form
/// (one pass of stores), an elementwise copy of the zero-strided view otherwise.
/// `t` is left empty; a one-element form is freed before the expansion is
/// allocated, which keeps the allocator from splitting its heap around it.
pub(crate) fn expansion<T: Clone, D: Dimension>(t: &mut Array<T, D>, dim: &D) -> Array<T, D> {
    let empty = Array::from_shape_vec(D::zeros(dim.ndim()), Vec::new())
        .expect("an all-zero shape holds no elements");
    let t = std::mem::replace(t, empty);
    if t.len() == 1 {
        let value = t.iter().next().cloned().expect("one element");
        drop(t);
        Array::from_elem(dim.clone(), value)
    } else {
        t.broadcast(dim.clone())
            .expect("checked by `form`")
            .to_owned()
    }
}

/// The broadcast form holding `value` for a primal of shape `dim`: an array of
/// `dim`'s rank with every axis of length 1 (or the primal's own shape when that
/// has one element).
#[inline]
pub fn fill<T: Clone, D: Dimension>(dim: &D, value: T) -> Array<T, D> {
    let mut shape = dim.clone();
    shape.slice_mut().iter_mut().for_each(|n| *n = 1);
    Array::from_elem(shape, value)
}

/// `shape` with axis `k` replaced by 1.
#[inline]
pub fn squeeze_axis<D: Dimension>(dim: &D, k: usize) -> D {
    let mut d = dim.clone();
    d.slice_mut()[k] = 1;
    d
}

/// Used by [`Tangent::densify`](super::Tangent::densify) for arrays.
pub(crate) fn densify<T: TangentVector + Clone, D: Dimension>(
    t: &mut Array<T, D>,
    dim: &D,
    zero: impl FnOnce() -> Array<T, D>,
) {
    match form(t, dim) {
        Form::Dense => {}
        Form::Zero => *t = zero(),
        Form::Broadcast => *t = expansion(t, dim),
    }
}
