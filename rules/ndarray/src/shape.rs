//! Views and shapes: `t`, `reversed_axes`, `view`, `to_owned`, `clone`, `slice` (with
//! `s![..]`), `slice_axis`, `index_axis`, `select`, `insert_axis`,
//! `into_shape`/`to_shape`, `broadcast`.
//!
//! These move no numbers in the primal (or copy them unchanged), so their
//! pullbacks move the cotangent back: adopting the owned output cotangent when
//! the shapes agree (`view`, `to_owned`, and `t` by reversing its axes, no copy),
//! adding into a slice of the input's cotangent (`slice`, `select`), or summing over
//! the copies a broadcast made.

use crate::cotangent::{add_owned, add_unbroadcast, dense, is_structural_zero, output, view};
use crate::Elem;
use mochi_core::kit::{inactive_methods, rule_trait, IdentityPullback};
use mochi_core::{Call, NoTangent, Pullback};
use ndarray::{
    Array, Array1, ArrayBase, ArrayView, Axis, CowArray, Data, Dimension, IntoDimension, Order,
    RawDataClone, RemoveAxis, ShapeArg, ShapeError, Slice, SliceArg,
};
use std::marker::PhantomData;

inactive_methods! {
    /// `x.shape()`: the axes' lengths, no derivative.
    NdShapeOf::shape() -> &'a [usize], impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
    /// `x.dim()`: the shape as a pattern (`(rows, columns)`), no derivative.
    NdDim::dim() -> D::Pattern, impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
    /// `x.raw_dim()`: the shape as a `Dim`, no derivative.
    NdRawDim::raw_dim() -> D, impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
    /// `x.ndim()`: the number of axes, no derivative.
    NdNdim::ndim() -> usize, impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
    /// `x.strides()`: no derivative.
    NdStrides::strides() -> &'a [isize], impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
    /// `x.len_of(axis)`: no derivative.
    NdLenOf::len_of(axis: Axis) -> usize, impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
    /// `x.is_standard_layout()`: no derivative.
    NdIsStandardLayout::is_standard_layout() -> bool, impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
    /// `x.nrows()` of a matrix: no derivative.
    NdNrows::nrows() -> usize, impl['a, S: Data] for &'a ArrayBase<S, ndarray::Ix2>;
    /// `x.ncols()` of a matrix: no derivative.
    NdNcols::ncols() -> usize, impl['a, S: Data] for &'a ArrayBase<S, ndarray::Ix2>;
    /// `x.is_square()` of a matrix: no derivative.
    NdIsSquare::is_square() -> bool, impl['a, S: Data] for &'a ArrayBase<S, ndarray::Ix2>;
}

rule_trait! {
    /// `x.t()`: `Call((&x,)).t()`.
    NdT::t
}
rule_trait! {
    /// `x.reversed_axes()` (which takes `x` by value): `Call((&x,)).reversed_axes()`, the
    /// transpose of a clone of `x` (of the view itself for a view: no copy).
    NdReversedAxes::reversed_axes
}
rule_trait! {
    /// `x.permuted_axes(axes)` (which takes `x` by value): `Call((&x, &axes))
    /// .permuted_axes()`, a clone of `x` with axis `axes[i]` as its axis `i` (of the view
    /// itself for a view: no copy).
    NdPermutedAxes::permuted_axes
}
rule_trait! {
    /// `x.swap_axes(a, b);` in place, of a differentiable array: `x =
    /// Call((&x, &a, &b)).swapped_axes();`, a clone of `x` with axes `a` and `b` swapped.
    NdSwappedAxes::swapped_axes
}
rule_trait! {
    /// `x.view()`: `Call((&x,)).view()`.
    NdView::view
}
rule_trait! {
    /// `x.to_owned()`: `Call((&x,)).to_owned()`.
    NdToOwned::to_owned
}
rule_trait! {
    /// `x.flatten()`: `Call((&x,)).flatten()`, the elements in logical order (as
    /// `x.iter()` visits them) in a vector.
    NdFlatten::flatten
}
rule_trait! {
    /// `x.clone()`: `Call((&x,)).clone()`.
    NdClone::clone
}
rule_trait! {
    /// `x.slice(s![..])`: `Call((&x, &info)).slice()`.
    NdSlice::slice
}
rule_trait! {
    /// `x.slice_axis(axis, slice)`: `Call((&x, &axis, &slice)).slice_axis()`.
    NdSliceAxis::slice_axis
}
rule_trait! {
    /// `x.index_axis(axis, i)`: `Call((&x, &axis, &i)).index_axis()`; also what
    /// `axis_iter`, `outer_iter` loops become.
    NdIndexAxis::index_axis
}
rule_trait! {
    /// `x.insert_axis(axis)`: `Call((&x, &axis)).insert_axis()`.
    NdInsertAxis::insert_axis
}
rule_trait! {
    /// `x.into_shape(shape)` (the logical-order reshape of `into_shape_with_order`):
    /// `Call((&x, &shape)).into_shape()`.
    NdIntoShape::into_shape
}
rule_trait! {
    /// `x.into_shape_with_order(shape)`: `Call((&x, &shape)).into_shape_with_order()`.
    NdIntoShapeWithOrder::into_shape_with_order
}
rule_trait! {
    /// `x.to_shape(shape)`: `Call((&x, &shape)).to_shape()`.
    NdToShape::to_shape
}
rule_trait! {
    /// `x.broadcast(shape)`: `Call((&x, &shape)).broadcast()`.
    NdBroadcast::broadcast
}

/// Pullback of an operation that copies its input unchanged (`to_owned`, `clone`):
/// adopts the output cotangent.
pub struct OwnedCopyPullback<T, D> {
    dim: D,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for OwnedCopyPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx,): (&mut Array<T, D>,)) {
        // A broadcast form is passed on as it is.
        add_owned(dx, &self.dim, dy);
    }
}

fn identity<T, D: Dimension>(dim: D) -> OwnedCopyPullback<T, D> {
    OwnedCopyPullback {
        dim,
        _t: PhantomData,
    }
}

/// Pullback of `flatten()`: the vector's cotangent, in logical order, added into `x̄`.
pub struct FlattenPullback<T, D> {
    dim: D,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for FlattenPullback<T, D> {
    type Output = Array1<T>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: Array1<T>, (dx,): (&mut Array<T, D>,)) {
        let Some(dy) = output(dy, &ndarray::Ix1(self.dim.size())) else {
            return;
        };
        dense(dx, &self.dim)
            .iter_mut()
            .zip(dy.iter())
            .for_each(|(d, &y)| *d += y);
    }
}

/// `x.flatten()` (ndarray's gives a `CowArray` that borrows a standard-layout `x`): an
/// owned vector here, whose pullback writes back in the same order.
impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdFlatten for Call<(&ArrayBase<S, D>,)> {
    type Output = Array1<T>;
    type Pullback = FlattenPullback<T, D>;
    #[inline]
    fn flatten(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        let y = Array1::from_iter(x.iter().cloned());
        (
            y,
            FlattenPullback {
                dim: x.raw_dim(),
                _t: PhantomData,
            },
        )
    }
}

/// `x.view()`: the same values, so the view's cotangent is added into `x̄` as it is
/// (a zero-sized pullback; a broadcast form stays one).
impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension> NdView for Call<(&'a ArrayBase<S, D>,)> {
    type Output = ArrayView<'a, T, D>;
    type Pullback = IdentityPullback<Array<T, D>>;
    #[inline(always)]
    fn view(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (x.view(), IdentityPullback::new())
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdToOwned for Call<(&ArrayBase<S, D>,)> {
    type Output = Array<T, D>;
    type Pullback = OwnedCopyPullback<T, D>;
    #[inline]
    fn to_owned(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (x.to_owned(), identity(x.raw_dim()))
    }
}

impl<T: Elem, S: Data<Elem = T> + RawDataClone, D: Dimension> NdClone
    for Call<(&ArrayBase<S, D>,)>
{
    type Output = ArrayBase<S, D>;
    type Pullback = OwnedCopyPullback<T, D>;
    #[inline]
    fn clone(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (x.clone(), identity(x.raw_dim()))
    }
}

/// Pullback of `t()`: adopts the output cotangent with its axes reversed (no copy).
pub struct TransposePullback<T, D> {
    dim: D,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for TransposePullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx,): (&mut Array<T, D>,)) {
        // A broadcast form reversed is the broadcast form of the transpose.
        add_owned(dx, &self.dim, dy.reversed_axes());
    }
}

impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension> NdT for Call<(&'a ArrayBase<S, D>,)> {
    type Output = ArrayView<'a, T, D>;
    type Pullback = TransposePullback<T, D>;
    #[inline]
    fn t(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (
            x.t(),
            TransposePullback {
                dim: x.raw_dim(),
                _t: PhantomData,
            },
        )
    }
}

impl<T: Elem, S: Data<Elem = T> + RawDataClone, D: Dimension> NdReversedAxes
    for Call<(&ArrayBase<S, D>,)>
{
    type Output = ArrayBase<S, D>;
    type Pullback = TransposePullback<T, D>;
    #[inline]
    fn reversed_axes(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (
            x.clone().reversed_axes(),
            TransposePullback {
                dim: x.raw_dim(),
                _t: PhantomData,
            },
        )
    }
}

/// Pullback of `permuted_axes(axes)` and `swap_axes(a, b)`: adopts the output
/// cotangent with the inverse permutation of its axes (no copy).
pub struct PermutePullback<T, D> {
    dim: D,
    /// The inverse permutation: the output's axis `inverse[i]` is the input's axis `i`.
    inverse: D,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for PermutePullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        // A broadcast form permuted is the broadcast form of the permutation.
        add_owned(dx, &self.dim, dy.permuted_axes(self.inverse));
    }
}

/// The pullback of the permutation `axes` of an array of shape `dim`.
fn permute_pullback<T, D: Dimension>(dim: D, axes: &D) -> PermutePullback<T, D> {
    let mut inverse = D::zeros(axes.ndim());
    for (i, &a) in axes.slice().iter().enumerate() {
        inverse[a] = i;
    }
    PermutePullback {
        dim,
        inverse,
        _t: PhantomData,
    }
}

impl<T: Elem, S: Data<Elem = T> + RawDataClone, D: Dimension, A> NdPermutedAxes
    for Call<(&ArrayBase<S, D>, &A)>
where
    A: IntoDimension<Dim = D> + Clone,
{
    type Output = ArrayBase<S, D>;
    type Pullback = PermutePullback<T, D>;
    #[track_caller]
    fn permuted_axes(self) -> (Self::Output, Self::Pullback) {
        let (x, axes) = self.0;
        let axes = axes.clone().into_dimension();
        // (ndarray checks the permutation, and panics naming it, as the primal does.)
        let y = x.clone().permuted_axes(axes.clone());
        (y, permute_pullback(x.raw_dim(), &axes))
    }
}

/// Pullback of `swapped_axes`: the permutation swapping two axes is its own inverse.
pub struct SwapPullback<T, D> {
    inner: PermutePullback<T, D>,
}

impl<T: Elem, D: Dimension> Pullback for SwapPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, NoTangent, NoTangent);
    #[track_caller]
    fn pullback(
        self,
        dy: Array<T, D>,
        (dx, _, _): (&mut Array<T, D>, &mut NoTangent, &mut NoTangent),
    ) {
        self.inner.pullback(dy, (dx, &mut NoTangent));
    }
}

impl<T: Elem, S: Data<Elem = T> + RawDataClone, D: Dimension> NdSwappedAxes
    for Call<(&ArrayBase<S, D>, &usize, &usize)>
{
    type Output = ArrayBase<S, D>;
    type Pullback = SwapPullback<T, D>;
    #[track_caller]
    fn swapped_axes(self) -> (Self::Output, Self::Pullback) {
        let (x, &a, &b) = self.0;
        let mut y = x.clone();
        y.swap_axes(a, b);
        let mut axes = D::zeros(x.ndim());
        for (i, v) in axes.slice_mut().iter_mut().enumerate() {
            *v = i;
        }
        axes.slice_mut().swap(a, b);
        let inner = permute_pullback(x.raw_dim(), &axes);
        (y, SwapPullback { inner })
    }
}

/// Pullback of `slice(info)`: the input's shape and the slice; adds the output
/// cotangent into that slice of the input's.
pub struct SlicePullback<T, D: Dimension, I: SliceArg<D>> {
    dim: D,
    out: I::OutDim,
    info: I,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension, I: SliceArg<D>> Pullback for SlicePullback<T, D, I> {
    type Output = Array<T, I::OutDim>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        let Some(dy) = output(dy, &self.out) else {
            return;
        };
        dense(dx, &self.dim)
            .slice_mut(&self.info)
            .zip_mut_with(&dy, |d, &y| *d += y);
    }
}

impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension, I: SliceArg<D> + Clone> NdSlice
    for Call<(&'a ArrayBase<S, D>, &I)>
{
    type Output = ArrayView<'a, T, I::OutDim>;
    type Pullback = SlicePullback<T, D, I>;
    #[track_caller]
    fn slice(self) -> (Self::Output, Self::Pullback) {
        let (x, info) = self.0;
        let y = x.slice(info);
        let pb = SlicePullback {
            dim: x.raw_dim(),
            out: y.raw_dim(),
            info: info.clone(),
            _t: PhantomData,
        };
        (y, pb)
    }
}

rule_trait! {
    /// `m.row(i)` of a matrix: `Call((&m, &i)).row()`, the slice `s![i, ..]`.
    NdRow::row
}
rule_trait! {
    /// `m.column(j)` of a matrix: `Call((&m, &j)).column()`, the slice `s![.., j]`.
    NdColumn::column
}

/// The slice of row `i` (`column`: false) or column `i` (`column`: true) of a matrix.
type LineInfo = ndarray::SliceInfo<[ndarray::SliceInfoElem; 2], ndarray::Ix2, ndarray::Ix1>;

fn line_info(i: usize, column: bool) -> LineInfo {
    if column {
        ndarray::s![.., i]
    } else {
        ndarray::s![i, ..]
    }
}

impl<'a, T: Elem, S: Data<Elem = T>> NdRow for Call<(&'a ArrayBase<S, ndarray::Ix2>, &usize)> {
    type Output = ArrayView<'a, T, ndarray::Ix1>;
    type Pullback = SlicePullback<T, ndarray::Ix2, LineInfo>;
    #[track_caller]
    fn row(self) -> (Self::Output, Self::Pullback) {
        let (x, i) = self.0;
        Call((x, &line_info(*i, false))).slice()
    }
}

impl<'a, T: Elem, S: Data<Elem = T>> NdColumn for Call<(&'a ArrayBase<S, ndarray::Ix2>, &usize)> {
    type Output = ArrayView<'a, T, ndarray::Ix1>;
    type Pullback = SlicePullback<T, ndarray::Ix2, LineInfo>;
    #[track_caller]
    fn column(self) -> (Self::Output, Self::Pullback) {
        let (x, j) = self.0;
        Call((x, &line_info(*j, true))).slice()
    }
}

/// Pullback of `slice_axis(axis, slice)`.
pub struct SliceAxisPullback<T, D> {
    dim: D,
    out: D,
    axis: Axis,
    slice: Slice,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for SliceAxisPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, NoTangent, NoTangent);
    #[track_caller]
    fn pullback(
        self,
        dy: Array<T, D>,
        (dx, _, _): (&mut Array<T, D>, &mut NoTangent, &mut NoTangent),
    ) {
        let Some(dy) = output(dy, &self.out) else {
            return;
        };
        dense(dx, &self.dim)
            .slice_axis_mut(self.axis, self.slice)
            .zip_mut_with(&dy, |d, &y| *d += y);
    }
}

impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension> NdSliceAxis
    for Call<(&'a ArrayBase<S, D>, &Axis, &Slice)>
{
    type Output = ArrayView<'a, T, D>;
    type Pullback = SliceAxisPullback<T, D>;
    #[track_caller]
    fn slice_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis, &slice) = self.0;
        let y = x.slice_axis(axis, slice);
        let pb = SliceAxisPullback {
            dim: x.raw_dim(),
            out: y.raw_dim(),
            axis,
            slice,
            _t: PhantomData,
        };
        (y, pb)
    }
}

/// Pullback of `index_axis(axis, i)`: adds the output cotangent into subview `i` of
/// the input's along `axis`.
pub struct IndexAxisPullback<T, D: Dimension> {
    dim: D,
    out: D::Smaller,
    axis: Axis,
    index: usize,
    _t: PhantomData<T>,
}

impl<T: Elem, D: RemoveAxis> Pullback for IndexAxisPullback<T, D> {
    type Output = Array<T, D::Smaller>;
    type Args = (Array<T, D>, NoTangent, NoTangent);
    #[track_caller]
    fn pullback(
        self,
        dy: Self::Output,
        (dx, _, _): (&mut Array<T, D>, &mut NoTangent, &mut NoTangent),
    ) {
        let Some(dy) = output(dy, &self.out) else {
            return;
        };
        dense(dx, &self.dim)
            .index_axis_mut(self.axis, self.index)
            .zip_mut_with(&dy, |d, &y| *d += y);
    }
}

impl<'a, T: Elem, S: Data<Elem = T>, D: RemoveAxis> NdIndexAxis
    for Call<(&'a ArrayBase<S, D>, &Axis, &usize)>
{
    type Output = ArrayView<'a, T, D::Smaller>;
    type Pullback = IndexAxisPullback<T, D>;
    #[track_caller]
    fn index_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis, &index) = self.0;
        let y = x.index_axis(axis, index);
        let pb = IndexAxisPullback {
            dim: x.raw_dim(),
            out: y.raw_dim(),
            axis,
            index,
            _t: PhantomData,
        };
        (y, pb)
    }
}

rule_trait! {
    /// `x.select(axis, &indices)`: `Call((&x, &axis, &indices)).select()`, the indices a
    /// slice, `Vec` or array of `usize`. The pullback adds each selected subview's
    /// cotangent back into the subview it copies, so a repeated index collects every
    /// copy's.
    NdSelect::select
}

/// Pullback of `select(axis, indices)`: the input's and output's shapes, the axis and
/// the indices.
pub struct SelectPullback<T, D> {
    dim: D,
    out: D,
    axis: Axis,
    indices: Vec<usize>,
    _t: PhantomData<T>,
}

impl<T: Elem, D: RemoveAxis> Pullback for SelectPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, NoTangent, NoTangent);
    #[track_caller]
    fn pullback(
        self,
        dy: Array<T, D>,
        (dx, _, _): (&mut Array<T, D>, &mut NoTangent, &mut NoTangent),
    ) {
        // A broadcast-form `ȳ` is read through a view (no expansion).
        let Some(dy) = view(&dy, &self.out) else {
            return;
        };
        let dx = dense(dx, &self.dim);
        for (&i, dy) in self.indices.iter().zip(dy.axis_iter(self.axis)) {
            dx.index_axis_mut(self.axis, i)
                .zip_mut_with(&dy, |d, &y| *d += y);
        }
    }
}

impl<T: Elem, S: Data<Elem = T>, D: RemoveAxis, I: AsRef<[usize]> + ?Sized> NdSelect
    for Call<(&ArrayBase<S, D>, &Axis, &I)>
{
    type Output = Array<T, D>;
    type Pullback = SelectPullback<T, D>;
    #[track_caller]
    fn select(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis, indices) = self.0;
        let indices = indices.as_ref();
        let y = x.select(axis, indices);
        let pb = SelectPullback {
            dim: x.raw_dim(),
            out: y.raw_dim(),
            axis,
            indices: indices.to_vec(),
            _t: PhantomData,
        };
        (y, pb)
    }
}

/// Pullback of `insert_axis(axis)`: removes the axis from the output cotangent and
/// adopts it (no copy).
pub struct InsertAxisPullback<T, D> {
    dim: D,
    axis: Axis,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for InsertAxisPullback<T, D> {
    type Output = Array<T, D::Larger>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        let out = self.dim.insert_axis(self.axis);
        let Some(dy) = output(dy, &out) else {
            return;
        };
        let back = dy
            .index_axis_move(self.axis, 0)
            .into_dimensionality::<D>()
            .expect("removing the inserted axis restores the rank");
        add_owned(dx, &self.dim, back);
    }
}

impl<T: Elem, S: Data<Elem = T> + RawDataClone, D: Dimension> NdInsertAxis
    for Call<(&ArrayBase<S, D>, &Axis)>
{
    type Output = ArrayBase<S, D::Larger>;
    type Pullback = InsertAxisPullback<T, D>;
    #[track_caller]
    fn insert_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis) = self.0;
        let pb = InsertAxisPullback {
            dim: x.raw_dim(),
            axis,
            _t: PhantomData,
        };
        (x.clone().insert_axis(axis), pb)
    }
}

/// Pullback of a reshape: reshapes the output cotangent back in the same order.
/// The output of a failed reshape (`Err`) never receives a cotangent.
pub struct ReshapePullback<T, D, E> {
    dim: D,
    out: E,
    order: Order,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension, E: Dimension> Pullback for ReshapePullback<T, D, E> {
    type Output = Array<T, E>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Array<T, E>, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        let Some(dy) = output(dy, &self.out) else {
            return;
        };
        let back = dy
            .to_shape((self.dim.clone(), self.order))
            .expect("the cotangent has as many elements as the input");
        if is_structural_zero(dx, &self.dim) {
            *dx = back.into_owned();
        } else {
            dx.zip_mut_with(&back, |d, &y| *d += y);
        }
    }
}

fn reshape_parts<E: ShapeArg>(shape: E) -> (E::Dim, Order) {
    let (dim, order) = shape.into_shape_and_order();
    (dim, order.unwrap_or(Order::RowMajor))
}

macro_rules! into_shape_rule {
    ($Trait:ident, $method:ident) => {
        impl<
                'a,
                'b,
                T: Elem,
                S: Data<Elem = T> + RawDataClone,
                D: Dimension,
                E: ShapeArg + Clone,
            > $Trait for Call<(&'a ArrayBase<S, D>, &'b E)>
        {
            type Output = Result<ArrayBase<S, E::Dim>, ShapeError>;
            type Pullback = ReshapePullback<T, D, E::Dim>;
            #[track_caller]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (x, shape) = self.0;
                let (out, order) = reshape_parts(shape.clone());
                let y = x.clone().into_shape_with_order((out.clone(), order));
                (
                    y,
                    ReshapePullback {
                        dim: x.raw_dim(),
                        out,
                        order,
                        _t: PhantomData,
                    },
                )
            }
        }
    };
}
into_shape_rule!(NdIntoShape, into_shape);
into_shape_rule!(NdIntoShapeWithOrder, into_shape_with_order);

impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension, E: ShapeArg + Clone> NdToShape
    for Call<(&'a ArrayBase<S, D>, &E)>
{
    type Output = Result<CowArray<'a, T, E::Dim>, ShapeError>;
    type Pullback = ReshapePullback<T, D, E::Dim>;
    #[track_caller]
    fn to_shape(self) -> (Self::Output, Self::Pullback) {
        let (x, shape) = self.0;
        let (out, order) = reshape_parts(shape.clone());
        let y = x.to_shape((out.clone(), order));
        (
            y,
            ReshapePullback {
                dim: x.raw_dim(),
                out,
                order,
                _t: PhantomData,
            },
        )
    }
}

/// Pullback of `broadcast(shape)`: sums the output cotangent over the copies.
pub struct BroadcastPullback<T, D, E> {
    dim: D,
    out: E,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension, E: Dimension> Pullback for BroadcastPullback<T, D, E> {
    type Output = Option<Array<T, E>>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        if let Some(dy) = dy {
            if let Some(dy) = view(&dy, &self.out) {
                add_unbroadcast(dx, &self.dim, dy);
            }
        }
    }
}

impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension, E: IntoDimension + Clone> NdBroadcast
    for Call<(&'a ArrayBase<S, D>, &E)>
{
    type Output = Option<ArrayView<'a, T, E::Dim>>;
    type Pullback = BroadcastPullback<T, D, E::Dim>;
    #[track_caller]
    fn broadcast(self) -> (Self::Output, Self::Pullback) {
        let (x, shape) = self.0;
        let out = shape.clone().into_dimension();
        let y = x.broadcast(out.clone());
        (
            y,
            BroadcastPullback {
                dim: x.raw_dim(),
                out,
                _t: PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, random, TestElem};
    use mochi_core::testing::RuleTest;
    use ndarray::{s, Ix1, Ix2, Ix3};

    fn views<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 2), Ix2(3, 4)] {
            for (_, x) in layouts::<T, _>(shape, 40) {
                let args = (x,);
                // the transpose's cotangent is the output cotangent transposed back
                RuleTest::new(
                    args.clone(),
                    |a| a.0.t().to_owned(),
                    |a| {
                        let (y, pb) = Call((&a.0,)).t();
                        (y.to_owned(), pb)
                    },
                )
                .forward(|a| a.0.t().to_owned())
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    args.clone(),
                    |a| a.0.to_owned(),
                    |a| {
                        let (y, pb) = Call((&a.0,)).view();
                        (y.to_owned(), pb)
                    },
                )
                .forward(|a| a.0.to_owned())
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    args.clone(),
                    |a| a.0.to_owned(),
                    |a| Call((&a.0,)).to_owned(),
                )
                .forward(|a| a.0.to_owned())
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(args, |a| a.0.clone(), |a| Call((&a.0,)).clone())
                    .forward(|a| a.0.clone())
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
            }
        }
    }

    fn reversals<T: TestElem>() {
        for shape in [Ix3(1, 1, 1), Ix3(0, 2, 1), Ix3(2, 3, 4)] {
            for (_, x) in layouts::<T, _>(shape, 48) {
                // the reversal's cotangent is the output cotangent reversed back
                RuleTest::new(
                    (x.clone(),),
                    |a| a.0.clone().reversed_axes(),
                    |a| Call((&a.0,)).reversed_axes(),
                )
                .forward(|a| a.0.clone().reversed_axes())
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                // of a view: a view again
                RuleTest::new(
                    (x,),
                    |a| a.0.view().reversed_axes().to_owned(),
                    |a| {
                        let x = a.0.view();
                        let (y, pb) = Call((&x,)).reversed_axes();
                        (y.to_owned(), pb)
                    },
                )
                .forward(|a| a.0.view().reversed_axes().to_owned())
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
            }
        }
    }

    #[test]
    fn reversed_axes() {
        reversals::<f64>();
        reversals::<f32>();
    }

    fn permutations<T: TestElem>() {
        for shape in [Ix3(1, 1, 1), Ix3(0, 2, 1), Ix3(2, 3, 4)] {
            for (_, x) in layouts::<T, _>(shape, 50) {
                for axes in [[2usize, 0, 1], [1, 0, 2], [0, 1, 2], [1, 2, 0]] {
                    // the permutation's cotangent is the output cotangent permuted back
                    RuleTest::new(
                        (x.clone(), ()),
                        |a| a.0.clone().permuted_axes(axes),
                        |a| Call((&a.0, &axes)).permuted_axes(),
                    )
                    .forward(|a| a.0.clone().permuted_axes(axes))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                }
                fn swapped<E: Clone>(
                    x: &Array<E, ndarray::Ix3>,
                    i: usize,
                    j: usize,
                ) -> Array<E, ndarray::Ix3> {
                    let mut y = x.clone();
                    y.swap_axes(i, j);
                    y
                }
                for (i, j) in [(0usize, 2usize), (1, 0), (1, 1)] {
                    RuleTest::new(
                        (x.clone(), i, j),
                        |a| swapped(&a.0, a.1, a.2),
                        |a| Call((&a.0, &a.1, &a.2)).swapped_axes(),
                    )
                    .forward(|a| swapped(&a.0, a.1, a.2))
                    .tolerance(T::RTOL, T::ATOL)
                    .run();
                }
            }
        }
    }

    #[test]
    fn permuted_and_swapped_axes() {
        permutations::<f64>();
        permutations::<f32>();
    }

    fn selections<T: TestElem>() {
        let cases: [&[usize]; 4] = [&[2, 0], &[1, 1, 0, 1], &[], &[0, 1, 2]];
        for (_, x) in layouts::<T, _>(Ix2(3, 4), 49) {
            for axis in 0..2 {
                for indices in cases {
                    // repeated indices collect every copy's cotangent
                    RuleTest::new(
                        (x.clone(), axis, ()),
                        |a| a.0.select(Axis(a.1), indices),
                        |a| Call((&a.0, &Axis(a.1), indices)).select(),
                    )
                    .forward(|a| a.0.select(Axis(a.1), indices))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                }
            }
        }
        // rank 3, the indices as a `Vec` and as an array
        let x = random::<T, _>(Ix3(3, 2, 4), 50);
        let indices = vec![3, 0, 3];
        RuleTest::new(
            (x.clone(), (), ()),
            |a| a.0.select(Axis(2), &indices),
            |a| Call((&a.0, &Axis(2), &indices)).select(),
        )
        .forward(|a| a.0.select(Axis(2), &indices))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (x, (), ()),
            |a| a.0.select(Axis(0), &[2, 2]),
            |a| Call((&a.0, &Axis(0), &[2, 2])).select(),
        )
        .forward(|a| a.0.select(Axis(0), &[2, 2]))
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn select_with_repeated_indices() {
        selections::<f64>();
        selections::<f32>();
    }

    #[test]
    fn select_scatters_back_into_the_selected_rows() {
        let x = ndarray::array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        // a slice variable passed as it is: the rule receives `&&[usize]`
        let indices: &[usize] = &[2, 0, 2];
        let (y, pb) = Call((&x, &Axis(0), &indices)).select();
        assert_eq!(y, x.select(Axis(0), &[2, 0, 2]));
        let mut dx = Array::zeros((0, 0));
        pb.pullback(
            ndarray::array![[1.0, 10.0], [100.0, 1000.0], [2.0, 20.0]],
            (&mut dx, &mut NoTangent, &mut NoTangent),
        );
        assert_eq!(
            dx,
            ndarray::array![[100.0, 1000.0], [0.0, 0.0], [3.0, 30.0]]
        );
    }

    #[test]
    fn transpose_view_to_owned_clone() {
        views::<f64>();
        views::<f32>();
    }

    fn slices<T: TestElem>() {
        for (_, x) in layouts::<T, _>(Ix2(5, 4), 41) {
            let args = (x, ());
            RuleTest::new(
                args.clone(),
                |a| a.0.slice(s![1..4;2, ..;-1]).to_owned(),
                |a| {
                    let (y, pb) = Call((&a.0, &s![1..4;2, ..;-1])).slice();
                    (y.to_owned(), pb)
                },
            )
            .forward(|a| a.0.slice(s![1..4;2, ..;-1]).to_owned())
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
            // an index collapses an axis
            RuleTest::new(
                args.clone(),
                |a| a.0.slice(s![2, 1..]).to_owned(),
                |a| {
                    let (y, pb) = Call((&a.0, &s![2, 1..])).slice();
                    (y.to_owned(), pb)
                },
            )
            .forward(|a| a.0.slice(s![2, 1..]).to_owned())
            .tolerance(T::RTOL, T::ATOL)
            .run();
            // an empty slice
            RuleTest::new(
                args,
                |a| a.0.slice(s![2..2, ..]).to_owned(),
                |a| {
                    let (y, pb) = Call((&a.0, &s![2..2, ..])).slice();
                    (y.to_owned(), pb)
                },
            )
            .forward(|a| a.0.slice(s![2..2, ..]).to_owned())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        }
        let x = random::<T, _>(Ix2(4, 3), 42);
        RuleTest::new(
            (x, 1usize, ()),
            |a| a.0.slice_axis(Axis(a.1), Slice::new(0, None, 2)).to_owned(),
            |a| {
                let (y, pb) = Call((&a.0, &Axis(a.1), &Slice::new(0, None, 2))).slice_axis();
                (y.to_owned(), pb)
            },
        )
        .forward(|a| a.0.slice_axis(Axis(a.1), Slice::new(0, None, 2)).to_owned())
        .tolerance(T::RTOL, T::ATOL)
        .expect_no_alloc()
        .run();
        for axis in 0..3 {
            let x = random::<T, _>(Ix3(3, 4, 2), 44 + axis as u64);
            RuleTest::new(
                (x, (), 1usize),
                |a| a.0.index_axis(Axis(axis), a.2).to_owned(),
                |a| {
                    let (y, pb) = Call((&a.0, &Axis(axis), &a.2)).index_axis();
                    (y.to_owned(), pb)
                },
            )
            .forward(|a| a.0.index_axis(Axis(axis), a.2).to_owned())
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
    }

    #[test]
    fn slice_and_slice_axis() {
        slices::<f64>();
        slices::<f32>();
    }

    fn reshapes<T: TestElem>() {
        for (_, x) in layouts::<T, _>(Ix2(2, 3), 43) {
            RuleTest::new(
                (x.clone(), 0usize),
                |a| a.0.clone().insert_axis(Axis(1)),
                |a| Call((&a.0, &Axis(1))).insert_axis(),
            )
            .forward(|a| a.0.clone().insert_axis(Axis(1)))
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
            RuleTest::new(
                (x.clone(), ()),
                |a| a.0.to_shape((3, 2)).unwrap().into_owned(),
                |a| {
                    let (y, pb) = Call((&a.0, &(3, 2))).to_shape();
                    (y.unwrap().into_owned(), pb)
                },
            )
            .forward(|a| a.0.to_shape((3, 2)).unwrap().into_owned())
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new(
                (x, ()),
                |a| {
                    a.0.to_shape(((6,), Order::ColumnMajor))
                        .unwrap()
                        .into_owned()
                },
                |a| {
                    let (y, pb) = Call((&a.0, &((6,), Order::ColumnMajor))).to_shape();
                    (y.unwrap().into_owned(), pb)
                },
            )
            .forward(|a| {
                a.0.to_shape(((6,), Order::ColumnMajor))
                    .unwrap()
                    .into_owned()
            })
            .tolerance(T::RTOL, T::ATOL)
            .run();
        }
        // `into_shape*` needs memory contiguous in the order asked for, as the primal does
        let [(_, row_major), (_, column_major), ..] = &layouts::<T, _>(Ix2(2, 3), 47)[..] else {
            unreachable!("four layouts")
        };
        RuleTest::new(
            (column_major.clone(), ()),
            |a| {
                a.0.clone()
                    .into_shape_with_order(((6,), Order::ColumnMajor))
                    .unwrap()
            },
            |a| {
                let (y, pb) = Call((&a.0, &((6,), Order::ColumnMajor))).into_shape_with_order();
                (y.unwrap(), pb)
            },
        )
        .forward(|a| {
            a.0.clone()
                .into_shape_with_order(((6,), Order::ColumnMajor))
                .unwrap()
        })
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (row_major.clone(), ()),
            |a| a.0.clone().into_shape_with_order((1, 6, 1)).unwrap(),
            |a| {
                let (y, pb) = Call((&a.0, &(1, 6, 1))).into_shape();
                (y.unwrap(), pb)
            },
        )
        .forward(|a| a.0.clone().into_shape_with_order((1, 6, 1)).unwrap())
        .tolerance(T::RTOL, T::ATOL)
        .run();
        // broadcast a row to a matrix, and a matrix to rank 3: the cotangent sums the copies
        let row = random::<T, _>(Ix2(1, 3), 44);
        RuleTest::new(
            (row, ()),
            |a| a.0.broadcast((4, 3)).map(|v| v.to_owned()),
            |a| {
                let (y, pb) = Call((&a.0, &(4, 3))).broadcast();
                (y.map(|v| v.to_owned()), pb)
            },
        )
        .forward(|a| a.0.broadcast((4, 3)).map(|v| v.to_owned()))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let m = random::<T, _>(Ix2(2, 3), 45);
        RuleTest::new(
            (m, ()),
            |a| a.0.broadcast(Ix3(2, 2, 3)).map(|v| v.to_owned()),
            |a| {
                let (y, pb) = Call((&a.0, &Ix3(2, 2, 3))).broadcast();
                (y.map(|v| v.to_owned()), pb)
            },
        )
        .forward(|a| a.0.broadcast(Ix3(2, 2, 3)).map(|v| v.to_owned()))
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn insert_axis_reshape_broadcast() {
        reshapes::<f64>();
        reshapes::<f32>();
    }

    #[test]
    fn failed_reshape_and_broadcast_report_like_the_primal() {
        let x = random::<f64, _>(Ix1(5), 46);
        let (y, _) = Call((&x, &(2, 2))).into_shape();
        assert!(y.is_err());
        let (b, _) = Call((&x, &(3, 4))).broadcast();
        assert!(b.is_none());
    }
}
