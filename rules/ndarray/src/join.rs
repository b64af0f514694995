//! Joining arrays: `ndarray::concatenate(axis, &[views])` and
//! `ndarray::stack(axis, &[views])`.
//!
//! Generated code calls `Call((&axis, &list)).concatenate()` where `list` is the
//! list of views as written: an array `[ArrayView; N]`, a `Vec<ArrayView>`, a slice,
//! or a reference to one of these ([`ViewList`]). The cotangent of the list is the
//! list of the views' cotangents (`[Array; N]` or `Vec<Array>`), and the pullback
//! hands each piece of the output cotangent to its input.

use crate::cotangent::{add_view, output};
use crate::Elem;
use mochi_core::kit::rule_trait;
use mochi_core::{Call, NoTangent, Pullback, Tangent, TangentVector};
use ndarray::{Array, ArrayView, Axis, Dimension, RemoveAxis, ShapeError, Slice};
use std::marker::PhantomData;

rule_trait! {
    /// `ndarray::concatenate(axis, &views)`: `Call((&axis, &views)).concatenate()`.
    NdConcatenate::concatenate
}
rule_trait! {
    /// `ndarray::stack(axis, &views)`: `Call((&axis, &views)).stack()`.
    NdStack::stack
}

/// A cotangent of a list of arrays, as one mutable slice of array cotangents.
pub trait CotangentList<T, D>: TangentVector {
    /// The `n` cotangents, materialising a structural-zero list first.
    fn slots(&mut self, n: usize) -> &mut [Array<T, D>];
}

impl<T: Elem, D: Dimension, const N: usize> CotangentList<T, D> for [Array<T, D>; N] {
    fn slots(&mut self, _n: usize) -> &mut [Array<T, D>] {
        self
    }
}

impl<T: Elem, D: Dimension> CotangentList<T, D> for Vec<Array<T, D>> {
    fn slots(&mut self, n: usize) -> &mut [Array<T, D>] {
        if self.is_empty() {
            self.resize_with(n, TangentVector::zero);
        }
        self
    }
}

/// A list of array views, as generated code passes it to `concatenate` and `stack`.
pub trait ViewList: Tangent {
    /// The element type of the views.
    type Elem: Elem;
    /// The dimension of the views.
    type Dim: Dimension;
    /// The views, in order (reborrowed).
    fn views(&self) -> Vec<ArrayView<'_, Self::Elem, Self::Dim>>;
}

/// `ViewList` for lists of arrays of one kind: an array of them, a slice, a `Vec`.
macro_rules! view_lists {
    ($([$($lt:lifetime)?] $array:ty;)*) => {$(
        impl<$($lt,)? T: Elem, D: Dimension, const N: usize> ViewList for [$array; N] {
            type Elem = T;
            type Dim = D;
            fn views(&self) -> Vec<ArrayView<'_, T, D>> {
                self.iter().map(|v| v.view()).collect()
            }
        }
        impl<$($lt,)? T: Elem, D: Dimension> ViewList for [$array] {
            type Elem = T;
            type Dim = D;
            fn views(&self) -> Vec<ArrayView<'_, T, D>> {
                self.iter().map(|v| v.view()).collect()
            }
        }
        impl<$($lt,)? T: Elem, D: Dimension> ViewList for Vec<$array> {
            type Elem = T;
            type Dim = D;
            fn views(&self) -> Vec<ArrayView<'_, T, D>> {
                self.iter().map(|v| v.view()).collect()
            }
        }
    )*};
}

// (Also a sequence of owned arrays, `&heads` where the function wrote
// `heads.iter().map(|a| a.view()).collect::<Vec<_>>()`: its cotangent is the arrays'.)
view_lists! {
    ['v] ArrayView<'v, T, D>;
    [] Array<T, D>;
}
impl<L: ViewList + ?Sized> ViewList for &L {
    type Elem = L::Elem;
    type Dim = L::Dim;
    fn views(&self) -> Vec<ArrayView<'_, L::Elem, L::Dim>> {
        (**self).views()
    }
}

/// Marks the element type and the list-cotangent type a [`JoinPullback`] works on.
type ListOf<T, C> = (T, fn(&mut C));

/// Pullback of `concatenate` and `stack`: the axis and the inputs' shapes.
pub struct JoinPullback<T, D, E, C> {
    axis: Axis,
    dims: Vec<D>,
    out: E,
    stacked: bool,
    _t: PhantomData<ListOf<T, C>>,
}

impl<T: Elem, D: Dimension, E: Dimension + RemoveAxis, C: CotangentList<T, D>> Pullback
    for JoinPullback<T, D, E, C>
{
    type Output = Array<T, E>;
    type Args = (NoTangent, C);
    #[track_caller]
    fn pullback(self, dy: Array<T, E>, (_, dlist): (&mut NoTangent, &mut C)) {
        let Some(dy) = output(dy, &self.out) else {
            return;
        };
        let slots = dlist.slots(self.dims.len());
        let mut start = 0;
        for (i, (slot, dim)) in slots.iter_mut().zip(&self.dims).enumerate() {
            if self.stacked {
                let piece = dy
                    .index_axis(self.axis, i)
                    .into_dimensionality::<D>()
                    .expect("stack adds one axis");
                add_view(slot, dim, piece);
            } else {
                let len = dim[self.axis.index()];
                let piece = dy
                    .slice_axis(self.axis, Slice::from(start..start + len))
                    .into_dimensionality::<D>()
                    .expect("concatenate keeps the rank");
                add_view(slot, dim, piece);
                start += len;
            }
        }
    }
}

/// The rule of `ndarray::concatenate(axis, &views)`: `#[differentiable]` lowers the call
/// to `concatenate::rrule(axis, &views)`.
pub mod concatenate {
    use super::*;

    /// `ndarray::concatenate(axis, views)` with its pullback.
    #[inline(always)]
    #[track_caller]
    #[allow(clippy::type_complexity)]
    pub fn rrule<L>(
        axis: Axis,
        views: &L,
    ) -> (
        Result<Array<L::Elem, L::Dim>, ShapeError>,
        JoinPullback<L::Elem, L::Dim, L::Dim, L::Tangent>,
    )
    where
        L: ViewList + ?Sized,
        L::Dim: RemoveAxis,
        L::Tangent: CotangentList<L::Elem, L::Dim>,
    {
        Call((&axis, views)).concatenate()
    }
}

/// The rule of `ndarray::stack(axis, &views)`: `#[differentiable]` lowers the call to
/// `stack::rrule(axis, &views)`.
pub mod stack {
    use super::*;

    /// `ndarray::stack(axis, views)` with its pullback.
    #[inline(always)]
    #[track_caller]
    #[allow(clippy::type_complexity)]
    pub fn rrule<L>(
        axis: Axis,
        views: &L,
    ) -> (
        Result<Array<L::Elem, <L::Dim as Dimension>::Larger>, ShapeError>,
        JoinPullback<L::Elem, L::Dim, <L::Dim as Dimension>::Larger, L::Tangent>,
    )
    where
        L: ViewList + ?Sized,
        <L::Dim as Dimension>::Larger: RemoveAxis,
        L::Tangent: CotangentList<L::Elem, L::Dim>,
    {
        Call((&axis, views)).stack()
    }
}

impl<L> NdConcatenate for Call<(&Axis, &L)>
where
    L: ViewList + ?Sized,
    L::Dim: RemoveAxis,
    L::Tangent: CotangentList<L::Elem, L::Dim>,
{
    type Output = Result<Array<L::Elem, L::Dim>, ShapeError>;
    type Pullback = JoinPullback<L::Elem, L::Dim, L::Dim, L::Tangent>;
    #[track_caller]
    fn concatenate(self) -> (Self::Output, Self::Pullback) {
        let (&axis, list) = self.0;
        let views = list.views();
        let y = ndarray::concatenate(axis, &views);
        let out = y
            .as_ref()
            .map(|y| y.raw_dim())
            .unwrap_or_else(|_| L::Dim::zeros(views.first().map_or(1, |v| v.ndim())));
        let dims = views.iter().map(|v| v.raw_dim()).collect();
        (
            y,
            JoinPullback {
                axis,
                dims,
                out,
                stacked: false,
                _t: PhantomData,
            },
        )
    }
}

impl<L> NdStack for Call<(&Axis, &L)>
where
    L: ViewList + ?Sized,
    <L::Dim as Dimension>::Larger: RemoveAxis,
    L::Tangent: CotangentList<L::Elem, L::Dim>,
{
    type Output = Result<Array<L::Elem, <L::Dim as Dimension>::Larger>, ShapeError>;
    type Pullback = JoinPullback<L::Elem, L::Dim, <L::Dim as Dimension>::Larger, L::Tangent>;
    #[track_caller]
    fn stack(self) -> (Self::Output, Self::Pullback) {
        let (&axis, list) = self.0;
        let views = list.views();
        let y = ndarray::stack(axis, &views);
        let out = y.as_ref().map(|y| y.raw_dim()).unwrap_or_else(|_| {
            <L::Dim as Dimension>::Larger::zeros(views.first().map_or(1, |v| v.ndim() + 1))
        });
        let dims = views.iter().map(|v| v.raw_dim()).collect();
        (
            y,
            JoinPullback {
                axis,
                dims,
                out,
                stacked: true,
                _t: PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, TestElem};
    use mochi_core::testing::RuleTest;
    use ndarray::{Array2, Ix2};

    fn joins<T: TestElem>() {
        let firsts = layouts::<T, _>(Ix2(2, 3), 70);
        let seconds = layouts::<T, _>(Ix2(1, 3), 71);
        let thirds = layouts::<T, _>(Ix2(2, 3), 72);
        for i in 0..4 {
            let (a, b, c) = (
                firsts[i].1.clone(),
                seconds[i].1.clone(),
                thirds[i].1.clone(),
            );
            // the list is a `Vec` of owned arrays in the arguments; the rule sees views
            let args = (0usize, vec![a.clone(), b.clone()]);
            RuleTest::new(
                args,
                |a| ndarray::concatenate(Axis(a.0), &[a.1[0].view(), a.1[1].view()]).unwrap(),
                |a| {
                    let views = vec![a.1[0].view(), a.1[1].view()];
                    let (y, pb) = Call((&Axis(a.0), &views)).concatenate();
                    (y.unwrap(), concat_args(pb))
                },
            )
            .forward(|a| ndarray::concatenate(Axis(a.0), &[a.1[0].view(), a.1[1].view()]).unwrap())
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
            RuleTest::new(
                (1usize, vec![a.clone(), c.clone()]),
                |a| ndarray::stack(Axis(a.0), &[a.1[0].view(), a.1[1].view()]).unwrap(),
                |a| {
                    let views = [a.1[0].view(), a.1[1].view()];
                    let (y, pb) = Call((&Axis(a.0), &views)).stack();
                    (y.unwrap(), stack_args(pb))
                },
            )
            .forward(|a| ndarray::stack(Axis(a.0), &[a.1[0].view(), a.1[1].view()]).unwrap())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        }
    }

    /// The list's cotangent is `Vec<Array>` for a `Vec` of views: what the arguments'
    /// `Vec<Array>` has, so the pullback is the test's as it is.
    fn concat_args<T: Elem>(
        pb: JoinPullback<T, ndarray::Ix2, ndarray::Ix2, Vec<Array2<T>>>,
    ) -> JoinPullback<T, ndarray::Ix2, ndarray::Ix2, Vec<Array2<T>>> {
        pb
    }

    /// An array `[ArrayView; 2]` has an `[Array; 2]` cotangent; the test's arguments
    /// hold a `Vec`, so the pullback is adapted to a `Vec<Array>` accumulator.
    fn stack_args<T: Elem>(
        pb: JoinPullback<T, ndarray::Ix2, ndarray::Ix3, [Array2<T>; 2]>,
    ) -> impl Pullback<Output = ndarray::Array3<T>, Args = (NoTangent, Vec<Array2<T>>)> {
        mochi_core::FnPullback::new(
            move |dy, (dn, dlist): (&mut NoTangent, &mut Vec<Array2<T>>)| {
                let mut pair: [Array2<T>; 2] = TangentVector::zero();
                if !dlist.is_empty() {
                    pair = [std::mem::take(&mut dlist[0]), std::mem::take(&mut dlist[1])];
                }
                pb.pullback(dy, (dn, &mut pair));
                let [p, q] = pair;
                *dlist = vec![p, q];
            },
        )
    }

    #[test]
    fn concatenate_and_stack() {
        joins::<f64>();
        joins::<f32>();
    }

    #[test]
    fn incompatible_pieces_are_an_error_like_the_primal() {
        let a = Array2::<f64>::zeros((2, 3));
        let b = Array2::<f64>::zeros((2, 4));
        let (y, _) = Call((&Axis(0), &[a.view(), b.view()])).concatenate();
        assert!(y.is_err());
    }
}
