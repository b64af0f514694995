//! Accumulating into array cotangents.
//!
//! An array cotangent is the structural zero (an empty array that has not been
//! touched), a dense array of the primal's shape, or a *broadcast form*: an array of
//! the primal's rank whose axes have length 1 or the primal's length, standing for its
//! broadcast to the primal's shape ([`mochi_core::broadcast`]). `sum` leaves a
//! `1 × … × 1` form holding the output cotangent instead of `|x|` copies of it.
//!
//! Every helper here takes the primal's shape, materialises a structural zero or a
//! broadcast form only when it must, and prefers adopting an owned array (no copy) or
//! writing the contribution directly (one pass) over "allocate zeros, then add".

use crate::Elem;
pub use mochi_core::broadcast::{expand, fill, form, uniform, view, Form};
use mochi_core::TangentVector;
use ndarray::{Array, ArrayView, ArrayViewMut, Axis, Dimension, IxDyn, Zip};

/// The output cotangent `dy` of a rule whose output has shape `dim`, in dense form:
/// `None` for the structural zero ("no gradient flows here"), a broadcast form expanded
/// (one allocation; rules that can use the structure read it with [`view`] or
/// [`uniform`] instead).
///
/// # Panics
/// If `dy` does not fit `dim`: a pullback received a cotangent that does not belong to
/// its output.
#[inline]
#[track_caller]
pub fn output<T: Elem, D: Dimension>(dy: Array<T, D>, dim: &D) -> Option<Array<T, D>> {
    match form(&dy, dim) {
        Form::Zero => None,
        _ => Some(expand(dy, dim)),
    }
}

/// `Σ dy` over its expansion to `dim` (a broadcast form counts each element as many
/// times as it is repeated); zero for the structural zero.
#[inline]
#[track_caller]
pub fn total<T: Elem, D: Dimension>(dy: &Array<T, D>, dim: &D) -> T {
    match form(dy, dim) {
        Form::Zero => T::ZERO,
        Form::Dense => dy.sum(),
        Form::Broadcast => dy.sum() * T::of_usize(dim.size() / dy.len()),
    }
}

/// Whether the accumulator `acc` of a primal of shape `dim` is the structural zero. A
/// broadcast form is expanded in place first, so that a `false` answer means `acc` is
/// dense and can be added to in place.
///
/// # Panics
/// If `acc` does not fit `dim`.
#[inline]
#[track_caller]
pub fn is_structural_zero<T: Elem, D: Dimension>(acc: &mut Array<T, D>, dim: &D) -> bool {
    match form(acc, dim) {
        Form::Zero => true,
        Form::Dense => false,
        Form::Broadcast => {
            expand_in_place(acc, dim);
            false
        }
    }
}

#[cold]
fn expand_in_place<T: Elem, D: Dimension>(acc: &mut Array<T, D>, dim: &D) {
    *acc = expand(std::mem::take(acc), dim);
}

/// The dense form of `acc`: zeros of shape `dim` if it held the structural zero, the
/// expansion if it held a broadcast form.
#[inline]
#[track_caller]
pub fn dense<'c, T: Elem, D: Dimension>(acc: &'c mut Array<T, D>, dim: &D) -> &'c mut Array<T, D> {
    if is_structural_zero(acc, dim) {
        *acc = Array::zeros(dim.clone());
    }
    acc
}

/// `acc += src`, adopting `src` without a copy when `acc` is the structural zero. `src`
/// may be in broadcast form (an output cotangent passed on as it is), and stays so when
/// adopted.
#[inline]
#[track_caller]
pub fn add_owned<T: Elem, D: Dimension>(acc: &mut Array<T, D>, dim: &D, src: Array<T, D>) {
    if form(&src, dim) == Form::Zero {
        return;
    }
    if form(acc, dim) == Form::Zero {
        *acc = src;
    } else {
        acc.accumulate(src);
    }
}

/// `acc += src` for a borrowed `src` of the primal's shape (one pass either way).
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

/// `acc += value` in every element. A structural zero becomes the broadcast form
/// holding `value` (one element, not `|x|`), and a broadcast form stays one.
#[inline]
#[track_caller]
pub fn add_fill<T: Elem, D: Dimension>(acc: &mut Array<T, D>, dim: &D, value: T) {
    match form(acc, dim) {
        Form::Zero => *acc = fill(dim, value),
        _ => acc.map_inplace(|a| *a += value),
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
