//! Accumulating into array cotangents.
//!
//! An array accumulator is either the structural zero (an empty array that has not
//! been touched) or a dense array of the primal's shape. Every helper here takes the
//! primal's shape, materialises the structural zero only when it must, and prefers
//! adopting an owned array (no copy) or writing the contribution directly (one pass)
//! over "allocate zeros, then add".

use crate::Elem;
use ndarray::{Array, ArrayView, ArrayViewMut, Axis, Dimension, IxDyn, Zip};

/// Whether `acc` is the structural zero of a cotangent of shape `dim` (rather than a
/// dense cotangent of that shape).
///
/// # Panics
/// If `acc` is dense but of another shape: a pullback received a cotangent that does
/// not belong to its argument.
#[inline]
#[track_caller]
pub fn is_structural_zero<T, D: Dimension>(acc: &Array<T, D>, dim: &D) -> bool {
    if acc.shape() == dim.slice() {
        return false;
    }
    assert!(
        acc.is_empty(),
        "mochi: cotangent shape mismatch: an accumulator of shape {:?} for a primal of shape {:?}",
        acc.shape(),
        dim.slice()
    );
    true
}

/// The dense form of `acc`: zeros of shape `dim` if it held the structural zero.
#[inline]
#[track_caller]
pub fn dense<'c, T: Elem, D: Dimension>(acc: &'c mut Array<T, D>, dim: &D) -> &'c mut Array<T, D> {
    if is_structural_zero(acc, dim) {
        *acc = Array::zeros(dim.clone());
    }
    acc
}

/// `acc += src`, adopting `src` without a copy when `acc` is the structural zero.
#[inline]
#[track_caller]
pub fn add_owned<T: Elem, D: Dimension>(acc: &mut Array<T, D>, dim: &D, src: Array<T, D>) {
    if is_structural_zero(acc, dim) {
        *acc = src;
    } else {
        acc.zip_mut_with(&src, |a, &s| *a += s);
    }
}

/// `acc += src` for a borrowed `src` of the same shape (one pass either way).
#[inline]
#[track_caller]
pub fn add_view<T: Elem, D: Dimension>(acc: &mut Array<T, D>, dim: &D, src: ArrayView<'_, T, D>) {
    if is_structural_zero(acc, dim) {
        *acc = src.to_owned();
    } else {
        acc.zip_mut_with(&src, |a, &s| *a += s);
    }
}

/// `acc += alpha · src`.
#[inline]
#[track_caller]
pub fn add_scaled<T: Elem, D: Dimension>(
    acc: &mut Array<T, D>,
    dim: &D,
    alpha: T,
    src: ArrayView<'_, T, D>,
) {
    if is_structural_zero(acc, dim) {
        *acc = src.mapv(|s| alpha * s);
    } else {
        acc.scaled_add(alpha, &src);
    }
}

/// `acc += value` in every element.
#[inline]
#[track_caller]
pub fn add_fill<T: Elem, D: Dimension>(acc: &mut Array<T, D>, dim: &D, value: T) {
    if is_structural_zero(acc, dim) {
        *acc = Array::from_elem(dim.clone(), value);
    } else {
        acc.map_inplace(|a| *a += value);
    }
}

/// `acc += unbroadcast(src)`: `src` has the shape of a broadcast of the primal
/// (`dim`), and every element of the primal collects the sum of its copies.
///
/// Leading axes that broadcasting added, and axes of length 1 that it stretched,
/// are summed over without a temporary.
#[track_caller]
pub fn add_unbroadcast<T: Elem, D: Dimension, E: Dimension>(
    acc: &mut Array<T, D>,
    dim: &D,
    src: ArrayView<'_, T, E>,
) {
    if src.shape() == dim.slice() {
        let src = src
            .into_dimensionality::<D>()
            .expect("same shape, same rank");
        add_view(acc, dim, src);
        return;
    }
    let acc = dense(acc, dim);
    let extra = src.ndim().checked_sub(dim.ndim()).unwrap_or_else(|| {
        panic!(
            "mochi: cannot reduce a cotangent of shape {:?} to shape {:?}",
            src.shape(),
            dim.slice()
        )
    });
    let mut dst = acc.view_mut().into_dyn();
    for _ in 0..extra {
        dst.insert_axis_inplace(Axis(0));
    }
    reduce_into(dst, src.into_dyn());
}

/// `acc += unbroadcast(src)` for an owned `src`, adopted when no reduction is needed.
#[track_caller]
pub fn add_unbroadcast_owned<T: Elem, D: Dimension, E: Dimension>(
    acc: &mut Array<T, D>,
    dim: &D,
    src: Array<T, E>,
) {
    if src.shape() == dim.slice() {
        let src = src
            .into_dimensionality::<D>()
            .expect("same shape, same rank");
        add_owned(acc, dim, src);
    } else {
        add_unbroadcast(acc, dim, src.view());
    }
}

/// `acc += unbroadcast(f(ȳ, other))` where `other` broadcasts to the shape of `ȳ`.
/// One pass and no temporary when the accumulator has the output's shape.
#[track_caller]
pub fn add_unbroadcast_zip<T: Elem, D: Dimension, O: Dimension, E: Dimension>(
    acc: &mut Array<T, D>,
    dim: &D,
    dy: ArrayView<'_, T, O>,
    other: ArrayView<'_, T, E>,
    f: impl Fn(T, T) -> T,
) {
    if dy.shape() == dim.slice() {
        let dy = dy
            .into_dimensionality::<D>()
            .expect("same shape, same rank");
        if is_structural_zero(acc, dim) {
            *acc = Zip::from(&dy)
                .and_broadcast(&other)
                .map_collect(|&y, &o| f(y, o));
        } else {
            Zip::from(&mut *acc)
                .and(&dy)
                .and_broadcast(&other)
                .for_each(|a, &y, &o| *a += f(y, o));
        }
    } else {
        let tmp = Zip::from(&dy)
            .and_broadcast(&other)
            .map_collect(|&y, &o| f(y, o));
        add_unbroadcast(acc, dim, tmp.view());
    }
}

/// `dst += src` summed over every axis where `dst` has length 1 and `src` more.
fn reduce_into<T: Elem>(mut dst: ArrayViewMut<'_, T, IxDyn>, src: ArrayView<'_, T, IxDyn>) {
    let stretched = (0..src.ndim()).find(|&k| dst.len_of(Axis(k)) != src.len_of(Axis(k)));
    match stretched {
        None => dst.zip_mut_with(&src, |d, &s| *d += s),
        Some(k) => {
            assert_eq!(
                dst.len_of(Axis(k)),
                1,
                "mochi: cannot reduce a cotangent of shape {:?} to shape {:?}",
                src.shape(),
                dst.shape()
            );
            for part in src.axis_iter(Axis(k)) {
                reduce_into(dst.view_mut().index_axis_move(Axis(k), 0), part);
            }
        }
    }
}

/// `acc += unbroadcast(f(ȳ, p, q))` where `p` and `q` broadcast to the shape of `ȳ`.
/// One pass and no temporary when the accumulator has the output's shape.
#[track_caller]
pub fn add_unbroadcast_zip2<T: Elem, D: Dimension, O: Dimension, E: Dimension, F: Dimension>(
    acc: &mut Array<T, D>,
    dim: &D,
    dy: ArrayView<'_, T, O>,
    p: ArrayView<'_, T, E>,
    q: ArrayView<'_, T, F>,
    f: impl Fn(T, T, T) -> T,
) {
    if dy.shape() == dim.slice() {
        let dy = dy
            .into_dimensionality::<D>()
            .expect("same shape, same rank");
        if is_structural_zero(acc, dim) {
            *acc = Zip::from(&dy)
                .and_broadcast(&p)
                .and_broadcast(&q)
                .map_collect(|&y, &p, &q| f(y, p, q));
        } else {
            Zip::from(&mut *acc)
                .and(&dy)
                .and_broadcast(&p)
                .and_broadcast(&q)
                .for_each(|a, &y, &p, &q| *a += f(y, p, q));
        }
    } else {
        let tmp = Zip::from(&dy)
            .and_broadcast(&p)
            .and_broadcast(&q)
            .map_collect(|&y, &p, &q| f(y, p, q));
        add_unbroadcast(acc, dim, tmp.view());
    }
}
