//! Reading output cotangents and writing into accumulators.
//!
//! A cotangent of a matrix with a dynamic dimension may be the structural zero (no
//! element); pullbacks read `ȳ` through [`output`] (which gives `None` for it) and
//! write into an accumulator through [`dense`] (which writes a structural zero out
//! first). Both hand out column-major views with dynamic sizes, so every pullback
//! kernel is written once for dynamic and static sizes, without allocating.

use crate::Elem;
use nalgebra::allocator::Allocator;
use nalgebra::{DMatrixView, DMatrixViewMut, DefaultAllocator, Dim, OMatrix};

/// A column-major view of an owned matrix, with dynamic sizes.
#[inline]
pub(crate) fn view<T: Elem, R: Dim, C: Dim>(m: &OMatrix<T, R, C>) -> DMatrixView<'_, T>
where
    DefaultAllocator: Allocator<R, C>,
{
    DMatrixView::from_slice(m.as_slice(), m.nrows(), m.ncols())
}

/// The output cotangent `dy` of an output of `shape`, or `None` for the structural zero.
///
/// # Panics
/// If `dy` is dense but of another shape.
#[inline]
#[track_caller]
pub(crate) fn output<T: Elem, R: Dim, C: Dim>(
    dy: &OMatrix<T, R, C>,
    shape: (usize, usize),
) -> Option<DMatrixView<'_, T>>
where
    DefaultAllocator: Allocator<R, C>,
{
    if dy.is_empty() {
        return None;
    }
    assert_eq!(
        dy.shape(),
        shape,
        "mochi: the output cotangent has shape {:?}, the output {:?}",
        dy.shape(),
        shape
    );
    Some(view(dy))
}

/// The accumulator `acc` of a primal of `shape`, dense (a structural zero is written out
/// as zeros first), as a mutable view.
///
/// # Panics
/// If `acc` is dense but of another shape.
#[inline]
#[track_caller]
pub(crate) fn dense<T: Elem, R: Dim, C: Dim>(
    acc: &mut OMatrix<T, R, C>,
    shape: (usize, usize),
) -> DMatrixViewMut<'_, T>
where
    DefaultAllocator: Allocator<R, C>,
{
    if acc.shape() != shape {
        assert!(
            acc.is_empty(),
            "mochi: a cotangent of shape {:?} does not fit a primal of shape {:?}",
            acc.shape(),
            shape
        );
        *acc =
            OMatrix::from_element_generic(R::from_usize(shape.0), C::from_usize(shape.1), T::ZERO);
    }
    let (rows, cols) = shape;
    DMatrixViewMut::from_slice(acc.as_mut_slice(), rows, cols)
}

/// `acc += α · x` for a primal of `x`'s shape.
#[inline]
#[track_caller]
pub(crate) fn add_scaled<T: Elem, R: Dim, C: Dim>(
    acc: &mut OMatrix<T, R, C>,
    alpha: T,
    x: DMatrixView<'_, T>,
) where
    DefaultAllocator: Allocator<R, C>,
{
    let mut acc = dense(acc, x.shape());
    acc.iter_mut()
        .zip(x.iter())
        .for_each(|(a, &v)| *a += alpha * v);
}

/// `⟨a, b⟩`, the sum of elementwise products.
#[inline]
pub(crate) fn inner<T: Elem>(a: DMatrixView<'_, T>, b: DMatrixView<'_, T>) -> T {
    a.iter()
        .zip(b.iter())
        .fold(T::ZERO, |s, (&x, &y)| s + x * y)
}

/// What a pullback that keeps no matrix records of its types: the element type and the
/// two dimensions (`fn() -> …` keeps it `Send`, `Sync` and covariant).
pub(crate) type Marker<T, R, C> = std::marker::PhantomData<fn() -> (T, R, C)>;
