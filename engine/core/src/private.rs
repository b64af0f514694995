//! Support for the code `#[differentiable]` generates. Not a public API: names and
//! signatures here change without notice. Rule crates use [`kit`](crate::kit) instead;
//! what generated code shares with them (the pooled [`Stack`], the `pullbackN`
//! constructors) is re-exported here under the paths generated code names.

use crate::TangentVector;
#[cfg(feature = "ndarray")]
use ndarray::{Array, ArrayBase, Data, Dimension, NdIndex};

/// The structural zero of whatever cotangent type inference picks.
#[inline(always)]
pub fn zero<T: TangentVector>() -> T {
    T::zero()
}

/// `*dst += v`.
#[inline(always)]
#[track_caller]
pub fn acc<T: TangentVector>(dst: &mut T, v: T) {
    dst.accumulate(v)
}

/// Takes the cotangent out of `dst`, leaving the structural zero.
#[inline(always)]
pub fn take<T: TangentVector>(dst: &mut T) -> T {
    std::mem::replace(dst, T::zero())
}

/// Drops a cotangent whose value goes nowhere (a local's at its binding), keeping its
/// buffer: a local bound in a loop materialises its cotangent again in the next trip.
#[inline(always)]
pub fn discard<T: TangentVector>(dst: &mut T) {
    dst.reset_zero();
}

/// Takes a value saved in a branch that the forward sweep took.
#[inline(always)]
pub fn unslot<T>(slot: &mut Option<T>) -> T {
    match slot.take() {
        Some(v) => v,
        None => unreachable!("mochi: the reverse sweep entered a branch the forward sweep did not"),
    }
}

/// Identity that pins the type of a pullback's output cotangent to the primal's
/// tangent type, so inference does not need a later use.
#[inline(always)]
pub fn cot_of<P: crate::Tangent + ?Sized>(_primal: &P) -> std::marker::PhantomData<P::Tangent> {
    std::marker::PhantomData
}

/// Shapes of indexable primal containers, kept so that the reverse sweep can
/// materialise a structural-zero cotangent before writing one element of it.
#[diagnostic::on_unimplemented(
    message = "mochi: `{Self}` is indexed with `[..]`, which the derivation reads as an element of a sequence (a slice, a `Vec`, an array, an ndarray or nalgebra array)",
    label = "`{Self}` is indexed with `[..]` further on",
    note = "a type of your own with an `Index` impl has no derivative through it: read its fields (`v.x`), or give it a `#[differentiable]` method that answers the element (`fn at(&self, i: usize) -> f64 {{ match i {{ 0 => self.x, 1 => self.y, _ => self.z }} }}`) and call that"
)]
pub trait IndexShape {
    /// `usize` for sequences, the dimension for ndarray.
    type Shape: Clone;
    /// The shape of `self`.
    fn index_shape(&self) -> Self::Shape;
}

impl<T> IndexShape for [T] {
    type Shape = usize;
    #[inline(always)]
    fn index_shape(&self) -> usize {
        self.len()
    }
}
impl<T> IndexShape for Vec<T> {
    type Shape = usize;
    #[inline(always)]
    fn index_shape(&self) -> usize {
        self.len()
    }
}
impl<T, const N: usize> IndexShape for [T; N] {
    type Shape = usize;
    #[inline(always)]
    fn index_shape(&self) -> usize {
        N
    }
}
#[cfg(feature = "ndarray")]
impl<S: Data, D: Dimension> IndexShape for ArrayBase<S, D> {
    type Shape = D;
    #[inline(always)]
    fn index_shape(&self) -> D {
        self.raw_dim()
    }
}
/// A shape read by index (`x.raw_dim()[0]`): no derivative, so no shape to keep.
#[cfg(feature = "ndarray")]
impl<I> IndexShape for ndarray::Dim<I> {
    type Shape = ();
    #[inline(always)]
    fn index_shape(&self) {}
}
impl<T: IndexShape + ?Sized> IndexShape for &T {
    type Shape = T::Shape;
    #[inline(always)]
    fn index_shape(&self) -> T::Shape {
        (**self).index_shape()
    }
}
impl<T: IndexShape + ?Sized> IndexShape for &mut T {
    type Shape = T::Shape;
    #[inline(always)]
    fn index_shape(&self) -> T::Shape {
        (**self).index_shape()
    }
}

/// The shape of an indexable primal.
#[inline(always)]
pub fn index_shape<T: IndexShape + ?Sized>(x: &T) -> T::Shape {
    x.index_shape()
}

/// Cotangent containers indexed like their primal.
#[diagnostic::on_unimplemented(
    message = "mochi: the cotangent `{Self}` cannot be indexed with `{I}` as its value is",
    note = "a type of your own with an `Index` impl has no derivative through it: read its fields (`v.x`), or give it a `#[differentiable]` method that answers the element and call that"
)]
pub trait IndexTangent<I> {
    /// The cotangent of one element.
    type Elem: TangentVector;
    /// The primal shape type ([`IndexShape::Shape`]).
    type Shape;
    /// Adds `v` to element `i`, materialising a structural zero with `shape` first.
    fn index_acc(&mut self, shape: &Self::Shape, i: I, v: Self::Elem);
    /// Takes element `i` out (the structural zero when the container is one); a
    /// structured container is written out with `shape` first.
    fn index_take(&mut self, shape: &Self::Shape, i: I) -> Self::Elem;
    /// [`index_acc`](Self::index_acc) on a container that [`Densify`] made dense (a
    /// `Vec` indexed by `usize`: no shape check, so no call that returns inside a loop,
    /// which would keep the loop's floats in memory; any other container checks).
    #[inline(always)]
    #[track_caller]
    fn index_acc_dense(&mut self, shape: &Self::Shape, i: I, v: Self::Elem) {
        self.index_acc(shape, i, v);
    }
}

/// The cotangent of a value without a derivative read by index (an element of a shape).
impl<I> IndexTangent<I> for crate::NoTangent {
    type Elem = crate::NoTangent;
    type Shape = ();
    #[inline(always)]
    fn index_acc(&mut self, _shape: &(), _i: I, _v: crate::NoTangent) {}
    #[inline(always)]
    fn index_take(&mut self, _shape: &(), _i: I) -> crate::NoTangent {
        crate::NoTangent
    }
}

impl<T: TangentVector> IndexTangent<usize> for Vec<T> {
    type Elem = T;
    type Shape = usize;
    #[inline(always)]
    #[track_caller]
    fn index_acc(&mut self, shape: &usize, i: usize, v: T) {
        if self.len() != *shape {
            materialise_vec(self, *shape);
        }
        self[i].accumulate(v);
    }
    #[inline(always)]
    #[track_caller]
    fn index_acc_dense(&mut self, _shape: &usize, i: usize, v: T) {
        self[i].accumulate(v);
    }
    #[inline(always)]
    fn index_take(&mut self, _shape: &usize, i: usize) -> T {
        match self.get_mut(i) {
            Some(e) => take(e),
            None => T::zero(),
        }
    }
}

#[cold]
#[track_caller]
fn materialise_vec<T: TangentVector>(v: &mut Vec<T>, len: usize) {
    assert!(
        v.is_empty(),
        "mochi: cotangent has {} elements, primal {len}",
        v.len()
    );
    if v.capacity() < len {
        if let Some(buffer) = crate::kit::recycle::take::<T>(len) {
            *v = buffer;
        }
    }
    v.resize_with(len, T::zero);
}

impl<T: TangentVector, const N: usize> IndexTangent<usize> for [T; N] {
    type Elem = T;
    type Shape = usize;
    #[inline(always)]
    #[track_caller]
    fn index_acc(&mut self, _shape: &usize, i: usize, v: T) {
        self[i].accumulate(v);
    }
    #[inline(always)]
    fn index_take(&mut self, _shape: &usize, i: usize) -> T {
        take(&mut self[i])
    }
}

/// `m[i][j]` on a sequence of sequences: the shape is the outer length and the shape
/// of row `i`, so a structural-zero cotangent is materialised one level at a time
/// (rows of a `Vec<Vec<f64>>` may differ in length).
impl<T: IndexTangent<J> + TangentVector, J> IndexTangent<(usize, J)> for Vec<T> {
    type Elem = T::Elem;
    type Shape = (usize, T::Shape);
    #[inline(always)]
    #[track_caller]
    fn index_acc(&mut self, shape: &(usize, T::Shape), (i, j): (usize, J), v: T::Elem) {
        if self.len() != shape.0 {
            materialise_vec(self, shape.0);
        }
        self[i].index_acc(&shape.1, j, v);
    }
    #[inline(always)]
    fn index_take(&mut self, shape: &(usize, T::Shape), (i, j): (usize, J)) -> T::Elem {
        match self.get_mut(i) {
            Some(row) => row.index_take(&shape.1, j),
            None => <T::Elem as TangentVector>::zero(),
        }
    }
}

impl<T: IndexTangent<J> + TangentVector, J, const N: usize> IndexTangent<(usize, J)> for [T; N] {
    type Elem = T::Elem;
    type Shape = (usize, T::Shape);
    #[inline(always)]
    #[track_caller]
    fn index_acc(&mut self, shape: &(usize, T::Shape), (i, j): (usize, J), v: T::Elem) {
        self[i].index_acc(&shape.1, j, v);
    }
    #[inline(always)]
    fn index_take(&mut self, shape: &(usize, T::Shape), (i, j): (usize, J)) -> T::Elem {
        self[i].index_take(&shape.1, j)
    }
}

#[cfg(feature = "ndarray")]
impl<T, D, I> IndexTangent<I> for Array<T, D>
where
    T: TangentVector,
    D: Dimension,
    I: NdIndex<D>,
{
    type Elem = T;
    type Shape = D;
    #[inline(always)]
    #[track_caller]
    fn index_acc(&mut self, shape: &D, i: I, v: T) {
        if self.shape() != shape.slice() {
            materialise_array(self, shape);
        }
        match self.get_mut(i) {
            Some(e) => e.accumulate(v),
            None => panic!(
                "mochi: index out of bounds for an array of shape {:?}",
                shape.slice()
            ),
        }
    }
    #[inline(always)]
    fn index_take(&mut self, shape: &D, i: I) -> T {
        if self.shape() != shape.slice() && !self.is_empty() {
            materialise_array(self, shape);
        }
        match self.get_mut(i) {
            Some(e) => take(e),
            None => T::zero(),
        }
    }
}

/// Two-dimensional arrays: those `map_axis` and `fold_axis` are differentiated on.
#[cfg(feature = "ndarray")]
#[diagnostic::on_unimplemented(
    message = "mochi: `map_axis` and `fold_axis` are differentiated on two-dimensional arrays; this array's dimension is `{Self}`",
    label = "not a two-dimensional array",
    note = "loop over `a.axis_iter(Axis(k))` and reduce each subview instead"
)]
pub trait Matrix {}
#[cfg(feature = "ndarray")]
impl Matrix for ndarray::Ix2 {}

/// `end`, checked to be within a sub-slice of `len` elements: `x[a..b][c..d]` read as
/// `x[a + c..a + within(d, b - a)]` panics where the slice of a slice does.
#[inline]
#[track_caller]
pub fn within(end: usize, len: usize) -> usize {
    assert!(
        end <= len,
        "range end index {end} out of range for slice of length {len}"
    );
    end
}

/// The multi-index (as `indexed_iter` gives it: `i` for one dimension, `(i, j)` for
/// two, …) of element `k` of `a` in logical order.
#[cfg(feature = "ndarray")]
#[inline]
pub fn unravel<S: Data, D: Dimension>(a: &ArrayBase<S, D>, mut k: usize) -> D::Pattern {
    let shape = a.raw_dim();
    let mut index = D::zeros(shape.ndim());
    // (One dimension: `k` itself, without the division below in every trip.)
    if D::NDIM == Some(1) {
        index[0] = k;
        return index.into_pattern();
    }
    for axis in (0..shape.ndim()).rev() {
        let n = shape[axis].max(1);
        index[axis] = k % n;
        k /= n;
    }
    index.into_pattern()
}

/// The index of element `k`, in the order `iter()` visits them, of a sequence whose type
/// the macro cannot see (a local `let s = a.dot(&b);`): `Flat(&s).at(k)` is the
/// multi-index [`unravel`] gives for an ndarray array (through [`FlatArray`]) and `k`
/// itself for anything else, a slice, a `Vec`, a `DVector` (through [`FlatOther`],
/// which method lookup reaches only by autoref, after `FlatArray`).
pub struct Flat<'a, C: ?Sized>(pub &'a C);

/// [`Flat`] of an ndarray array (also behind references): its multi-index.
#[cfg(feature = "ndarray")]
pub trait FlatArray {
    /// `usize` for one dimension, `(usize, usize)` for two, …
    type Ix;
    /// The multi-index of element `k` in logical order.
    fn at(self, k: usize) -> Self::Ix;
}

#[cfg(feature = "ndarray")]
impl<S: Data, D: Dimension> FlatArray for Flat<'_, ArrayBase<S, D>> {
    type Ix = D::Pattern;
    #[inline(always)]
    fn at(self, k: usize) -> D::Pattern {
        unravel(self.0, k)
    }
}

#[cfg(feature = "ndarray")]
impl<S: Data, D: Dimension> FlatArray for Flat<'_, &ArrayBase<S, D>> {
    type Ix = D::Pattern;
    #[inline(always)]
    fn at(self, k: usize) -> D::Pattern {
        unravel(self.0, k)
    }
}

#[cfg(feature = "ndarray")]
impl<S: Data, D: Dimension> FlatArray for Flat<'_, &mut ArrayBase<S, D>> {
    type Ix = D::Pattern;
    #[inline(always)]
    fn at(self, k: usize) -> D::Pattern {
        unravel(self.0, k)
    }
}

/// [`Flat`] of anything that is not an ndarray array: `k`.
pub trait FlatOther {
    /// `k`.
    fn at(self, k: usize) -> usize;
}

impl<C: ?Sized> FlatOther for &Flat<'_, C> {
    #[inline(always)]
    fn at(self, k: usize) -> usize {
        k
    }
}

/// Axis `n` of an array: `outer_iter()` walks `index_axis(axis(0), k)`.
#[cfg(feature = "ndarray")]
#[inline(always)]
pub fn axis(n: usize) -> ndarray::Axis {
    ndarray::Axis(n)
}

/// Piece `k` of `size` along an axis of length `len`, as `axis_chunks_iter(axis, size)`
/// cuts it (the last piece shorter when `size` does not divide `len`).
#[cfg(feature = "ndarray")]
#[inline(always)]
pub fn axis_chunk(k: usize, size: usize, len: usize) -> ndarray::Slice {
    let start = k * size;
    ndarray::Slice::from(start..(start + size).min(len))
}

/// The axis across the lanes of `a.map_axis(along, f)` on a matrix (`1` for `0`, `0`
/// for `1`): lane `i` is `a.index_axis(across(along), i)`.
#[cfg(feature = "ndarray")]
#[inline(always)]
#[track_caller]
pub fn across(along: ndarray::Axis) -> ndarray::Axis {
    match along.index() {
        0 => ndarray::Axis(1),
        1 => ndarray::Axis(0),
        k => panic!("mochi: `map_axis`/`fold_axis` along axis {k} of a two-dimensional array (axes are 0 and 1)"),
    }
}

/// The number of lanes along `along` of a matrix: its number of columns for axis `0`,
/// of rows for axis `1`.
#[cfg(feature = "ndarray")]
#[inline(always)]
#[track_caller]
pub fn lanes<S: Data, D: Dimension + Matrix>(a: &ArrayBase<S, D>, along: ndarray::Axis) -> usize {
    a.len_of(across(along))
}

/// The index of element `k` of lane `lane` along `along` of a matrix.
#[cfg(feature = "ndarray")]
#[inline(always)]
#[track_caller]
pub fn lane_index(along: ndarray::Axis, lane: usize, k: usize) -> [usize; 2] {
    match across(along).index() {
        0 => [lane, k],
        _ => [k, lane],
    }
}

/// A zero vector of `n` elements (one per lane) in the float type `T` of the function:
/// what `map_axis` and `fold_axis` write into.
#[cfg(feature = "ndarray")]
#[inline(always)]
pub fn lane_values<T: Clone + num_traits::Zero>(n: usize) -> ndarray::Array1<T> {
    ndarray::Array1::zeros(n)
}

/// Writes an array cotangent in structural-zero or broadcast form out densely.
#[cfg(feature = "ndarray")]
#[cold]
#[track_caller]
fn materialise_array<T: TangentVector, D: Dimension>(a: &mut Array<T, D>, shape: &D) {
    crate::broadcast::densify(a, shape, || {
        Array::from_shape_simple_fn(shape.clone(), T::zero)
    });
}

/// The shape of `Array2::from_shape_fn(shape, f)` as a dimension (`(2, 3)`, `[2, 3]`,
/// `n`, `a.raw_dim()`), for the loop the derived code writes it as.
#[cfg(feature = "ndarray")]
#[inline]
pub fn shape_dim<Sh: ndarray::ShapeBuilder>(shape: Sh) -> Sh::Dim {
    shape.into_shape_with_order().raw_dim().clone()
}

/// The number of elements of a shape.
#[cfg(feature = "ndarray")]
#[inline]
pub fn dim_size<D: Dimension>(d: &D) -> usize {
    d.size()
}

/// The index (as a pattern: `(i, j)` for two dimensions) of the `k`-th element of an
/// array of shape `d` in standard (row-major) order.
#[cfg(feature = "ndarray")]
#[inline]
pub fn nth_pattern<D: Dimension>(d: &D, k: usize) -> D::Pattern {
    let mut index = d.clone();
    let mut rest = k;
    for axis in (0..d.ndim()).rev() {
        let n = d[axis];
        index[axis] = rest % n;
        rest /= n;
    }
    index.into_pattern()
}

/// How `ndarray::Zip` sees one operand's memory layout (ndarray 0.16's rule): bits for
/// contiguous in row-major order (`1`), in column-major order (`2`), preferring rows
/// (`4`), preferring columns (`8`), and the preference as a score (positive for rows).
#[cfg(feature = "ndarray")]
pub fn zip_layout<S: ndarray::RawData, D: Dimension>(a: &ArrayBase<S, D>) -> (u32, i32) {
    let (dim, strides) = (a.shape(), a.strides());
    let n = dim.len();
    let contiguous = |axes: &mut dyn Iterator<Item = usize>| {
        if dim.contains(&0) {
            return true;
        }
        let mut next = 1isize;
        for k in axes {
            if dim[k] != 1 {
                if strides[k] != next {
                    return false;
                }
                next *= dim[k] as isize;
            }
        }
        true
    };
    let bits = if n <= 1 {
        if n == 0 || strides[0] == 1 || dim[0] <= 1 {
            0b1111
        } else {
            0
        }
    } else if contiguous(&mut (0..n).rev()) {
        if dim.iter().filter(|&&l| l > 1).count() <= 1 {
            0b1111
        } else {
            0b0101
        }
    } else if contiguous(&mut (0..n)) {
        0b1010
    } else if dim[0] > 1 && strides[0] == 1 {
        0b1000
    } else if dim[n - 1] > 1 && strides[n - 1] == 1 {
        0b0100
    } else {
        0
    };
    let on = |b: u32| i32::from(bits & b != 0);
    (bits, (on(1) - on(2)) + (on(4) - on(8)))
}

/// Whether `ndarray::Zip` over operands of these layouts ([`zip_layout`]) and shape `d`
/// visits the elements by columns (the first axis fastest), as it does over
/// column-major operands (a transposed view), rather than in logical order.
#[cfg(feature = "ndarray")]
pub fn zip_by_columns<D: Dimension>(layouts: &[(u32, i32)], d: &D) -> bool {
    let ndim = d.ndim();
    let bits = layouts.iter().fold(0b1111, |b, l| b & l.0);
    let tendency: i32 = layouts.iter().map(|l| l.1).sum();
    if ndim <= 1 {
        false
    } else if bits & 0b0011 != 0 {
        bits & 0b0001 == 0
    } else {
        tendency < 0
    }
}

/// The position in logical (row-major) order of the `k`-th element `Zip` visits over
/// an array of shape `d`: `k` itself, or, by columns, the element whose multi-index
/// counts with the first axis fastest.
#[cfg(feature = "ndarray")]
#[inline]
pub fn zip_position<D: Dimension>(d: &D, k: usize, by_columns: bool) -> usize {
    if !by_columns {
        return k;
    }
    // Axis 0 counts fastest in `k`; in logical order an axis steps over the elements of
    // the axes after it.
    let (mut rest, mut after, mut flat) = (k, d.size(), 0);
    for axis in 0..d.ndim() {
        let len = d[axis].max(1);
        after /= len;
        flat += (rest % len) * after;
        rest /= len;
    }
    flat
}

/// A write through a mutable view (`b.row_mut(i).assign(&v)`), reversed: the part of
/// `b`'s cotangent that `sel` picks is taken out (left zero, as the write overwrote it)
/// and summed down to the shape of the source `v` (`shapes.1`) where `assign` broadcast it.
#[cfg(feature = "ndarray")]
#[track_caller]
pub fn view_take<T, D, E, S, F>(cot: &mut Array<T, D>, shapes: &(D, S), sel: F) -> Array<T, S>
where
    T: TangentVector + Clone + num_traits::Zero,
    D: Dimension,
    E: Dimension,
    S: Dimension,
    F: FnOnce(&mut Array<T, D>) -> ndarray::ArrayViewMut<'_, T, E>,
{
    let (shape, source) = shapes;
    if cot.shape() != shape.slice() {
        materialise_array(cot, shape);
    }
    let mut view = sel(cot);
    let part = view.to_owned();
    view.fill(<T as TangentVector>::zero());
    let mut part = part.into_dyn();
    let target = source.slice();
    while part.ndim() > target.len() {
        part = part.sum_axis(ndarray::Axis(0));
    }
    for (k, &n) in target.iter().enumerate() {
        if n == 1 && part.shape()[k] != 1 {
            part = part
                .sum_axis(ndarray::Axis(k))
                .insert_axis(ndarray::Axis(k));
        }
    }
    match part.into_dimensionality::<S>() {
        Ok(p) => p,
        Err(_) => panic!("mochi: a view's cotangent does not fit its source's shape {target:?}"),
    }
}

/// `b.row_mut(i).fill(c)`, reversed: the part of `b`'s cotangent that `sel` picks is
/// taken out (left zero) and summed, the cotangent of `c`.
#[cfg(feature = "ndarray")]
#[track_caller]
pub fn view_take_sum<T, D, E, F>(cot: &mut Array<T, D>, shape: &D, sel: F) -> T
where
    T: TangentVector + Clone + num_traits::Zero,
    D: Dimension,
    E: Dimension,
    F: FnOnce(&mut Array<T, D>) -> ndarray::ArrayViewMut<'_, T, E>,
{
    if cot.shape() != shape.slice() {
        materialise_array(cot, shape);
    }
    let mut view = sel(cot);
    let sum = view
        .iter()
        .fold(<T as TangentVector>::zero(), |a, b| a + b.clone());
    view.fill(<T as TangentVector>::zero());
    sum
}

/// `dst[i] += v`, materialising `dst` with `shape` if it is a structural zero.
#[inline(always)]
#[track_caller]
pub fn index_acc<C: IndexTangent<I>, I>(dst: &mut C, shape: &C::Shape, i: I, v: C::Elem) {
    dst.index_acc(shape, i, v)
}

/// A cotangent and its primal's shape, made dense once at the top of the reverse sweep
/// for [`index_acc_dense`]: `Densify(&mut c, &shape).densify()` materialises a `Vec`
/// indexed by `usize` ([`DensifyVec`], chosen by value) and leaves any other container
/// as it is ([`DensifyAny`], chosen at the autoref step).
pub struct Densify<'a, C, S>(pub &'a mut C, pub &'a S);

/// [`Densify`] of a `Vec` with a `usize` shape.
pub trait DensifyVec {
    /// Materialises a structural zero.
    fn densify(self);
}

impl<T: TangentVector> DensifyVec for Densify<'_, Vec<T>, usize> {
    #[inline(always)]
    #[track_caller]
    fn densify(self) {
        if self.0.len() != *self.1 {
            materialise_vec(self.0, *self.1);
        }
    }
}

/// [`Densify`] of any other container: nothing to do ([`index_acc_dense`] checks).
pub trait DensifyAny {
    /// Does nothing.
    fn densify(&self);
}

impl<C, S> DensifyAny for Densify<'_, C, S> {
    #[inline(always)]
    fn densify(&self) {}
}

/// `dst[i] += v` on a cotangent [`Densify`] made dense.
#[inline(always)]
#[track_caller]
pub fn index_acc_dense<C: IndexTangent<I>, I>(dst: &mut C, shape: &C::Shape, i: I, v: C::Elem) {
    dst.index_acc_dense(shape, i, v)
}

/// Takes `dst[i]` (the cotangent of an element about to be overwritten).
#[inline(always)]
pub fn index_take<C: IndexTangent<I>, I>(dst: &mut C, shape: &C::Shape, i: I) -> C::Elem {
    dst.index_take(shape, i)
}

pub use crate::kit::hoist::{
    Hoist, HoistFixed, HoistFixedWhole, HoistInvariant, HoistSlot, HoistWhole, Unhoist,
    UnhoistInvariant, UnhoistWhole,
};
pub use crate::kit::keep::{Keep, KeepCall, Kept};
pub use crate::rule::{
    pullback1, pullback10, pullback11, pullback12, pullback2, pullback3, pullback4, pullback5,
    pullback6, pullback7, pullback8, pullback9, FirstArg,
};
pub use crate::scalar::{shape, Shape};
pub use crate::twin_struct::{LiftField, TwinOf};
pub use crate::Call;

/// The structural zero of the cotangent type that `ty` names.
#[inline(always)]
pub fn zero_for<T: TangentVector>(_ty: std::marker::PhantomData<T>) -> T {
    T::zero()
}

/// Calls a pullback (keeps generated code short).
#[inline(always)]
pub fn pull<P: crate::Pullback>(
    pb: P,
    output: P::Output,
    args: <P::Args as crate::Accumulators>::Mut<'_>,
) {
    pb.pullback(output, args)
}

/// The number of elements of a sequence a `for` loop or an iterator chain walks: a
/// slice, a `Vec`, an array, an ndarray array or view of any dimension (in logical
/// order), a nalgebra matrix, or a reference to one.
#[diagnostic::on_unimplemented(
    message = "mochi: a `for` loop or iterator chain over `{Self}` is differentiated element by element over a sequence read by position (a slice, a `Vec`, an array, an ndarray array, a nalgebra matrix)",
    label = "not a sequence read by position",
    note = "walk it by an index loop over what it holds, or collect what the loop reads into a `Vec` first"
)]
pub trait SeqLen {
    /// The number of elements.
    fn seq_len(&self) -> usize;
}
impl<T> SeqLen for [T] {
    #[inline(always)]
    fn seq_len(&self) -> usize {
        self.len()
    }
}
impl<T> SeqLen for Vec<T> {
    #[inline(always)]
    fn seq_len(&self) -> usize {
        self.len()
    }
}
impl<T, const N: usize> SeqLen for [T; N] {
    #[inline(always)]
    fn seq_len(&self) -> usize {
        N
    }
}
impl<X: SeqLen + ?Sized> SeqLen for &X {
    #[inline(always)]
    fn seq_len(&self) -> usize {
        (**self).seq_len()
    }
}
impl<X: SeqLen + ?Sized> SeqLen for &mut X {
    #[inline(always)]
    fn seq_len(&self) -> usize {
        (**self).seq_len()
    }
}
/// (An array of two or more dimensions is walked in logical order, the order `iter()`
/// visits it, its element `k` read at the multi-index `Flat(&a).at(k)`.)
#[cfg(feature = "ndarray")]
impl<S: Data, D: Dimension> SeqLen for ArrayBase<S, D> {
    #[inline(always)]
    fn seq_len(&self) -> usize {
        self.len()
    }
}

/// The length of a sequence walked by `for v in x.iter_mut()` (rewritten as an index
/// loop).
#[diagnostic::on_unimplemented(
    message = "mochi: `iter_mut()` over `{Self}` is differentiated as an index loop over a sequence read by position (a slice, a `Vec`, an array, an ndarray array, a nalgebra matrix)",
    label = "not a sequence read by position",
    note = "write the loop over the positions of what it holds, `for i in 0..n {{ v[i] = … }}`"
)]
pub trait ElementsLen {
    /// The number of elements.
    fn elements_len(&self) -> usize;
}
impl<X: SeqLen + ?Sized> ElementsLen for X {
    #[inline(always)]
    fn elements_len(&self) -> usize {
        self.seq_len()
    }
}

/// [`ElementsLen::elements_len`] of `x`.
#[inline(always)]
pub fn elements_len<T: ElementsLen + ?Sized>(x: &T) -> usize {
    x.elements_len()
}

/// The position of `x[start..end].first().unwrap()` in `x`: `start`, or the panic of
/// `unwrap` when the range is empty.
#[inline(always)]
#[track_caller]
pub fn first_index(start: usize, end: usize) -> usize {
    if start >= end {
        panic!("called `Option::unwrap()` on a `None` value");
    }
    start
}

/// The position of `x[start..end].last().unwrap()` in `x`: `end - 1`, or the panic of
/// `unwrap` when the range is empty.
#[inline(always)]
#[track_caller]
pub fn last_index(start: usize, end: usize) -> usize {
    if start >= end {
        panic!("called `Option::unwrap()` on a `None` value");
    }
    end - 1
}

/// The length of a sequence for `for v in x.iter()` loops.
#[inline(always)]
pub fn seq_len<T: SeqLen + ?Sized>(x: &T) -> usize {
    x.seq_len()
}

/// The cotangent of the element `v.push(e)` added, taken off the end of `v`'s (a zero
/// when `v`'s is a structural zero).
#[inline(always)]
pub fn pop_cot<T: TangentVector>(cot: &mut Vec<T>) -> T {
    cot.pop().unwrap_or_else(T::zero)
}

/// The cotangent of the value `m[i].push(v)` added to row `i` of a `Vec<Vec<T>>`, taken
/// off the end of that row's (a structural zero when the rows' or the row's is one).
#[inline(always)]
pub fn pop_row_cot<T: TangentVector>(cot: &mut [Vec<T>], i: usize) -> T {
    cot.get_mut(i).and_then(Vec::pop).unwrap_or_else(T::zero)
}

/// The cotangents of the `n` elements `m[i].extend_from_slice(s)` added to row `i`,
/// taken off the end of that row's (a structural zero when the rows' or the row's is
/// one).
#[inline(always)]
#[track_caller]
pub fn split_row_cot<T: TangentVector>(cot: &mut [Vec<T>], i: usize, n: usize) -> Vec<T> {
    match cot.get_mut(i) {
        Some(row) => split_cot(row, n),
        None => Vec::new(),
    }
}

/// The cotangents of the `n` elements `v.extend_from_slice(s)` added, taken off the end
/// of `v`'s (a structural zero when `v`'s is one).
#[inline(always)]
#[track_caller]
pub fn split_cot<T: TangentVector>(cot: &mut Vec<T>, n: usize) -> Vec<T> {
    if cot.is_empty() {
        return Vec::new();
    }
    assert!(
        n <= cot.len(),
        "mochi: a buffer's cotangent has {} elements, fewer than the {n} it grew by",
        cot.len()
    );
    cot.split_off(cot.len() - n)
}

/// The permutation that sorts `v` by `cmp` (stably, as `sort_by` does): element `k` of
/// the sorted sequence is `v[p[k]]`.
pub fn sort_permutation<T, F: FnMut(&T, &T) -> std::cmp::Ordering>(
    v: &[T],
    mut cmp: F,
) -> Vec<usize> {
    let mut p: Vec<usize> = (0..v.len()).collect();
    p.sort_by(|&i, &j| cmp(&v[i], &v[j]));
    p
}

/// The arrangement `v.select_nth_unstable_by(k, cmp)` makes, as positions: element `j`
/// after the call is `v[p[j]]`. The selection runs on the positions with the same
/// comparisons, so it moves them as it would move the elements.
#[track_caller]
pub fn select_permutation<T, F: FnMut(&T, &T) -> std::cmp::Ordering>(
    v: &[T],
    k: usize,
    mut cmp: F,
) -> Vec<usize> {
    let mut p: Vec<usize> = (0..v.len()).collect();
    p.select_nth_unstable_by(k, |&i, &j| cmp(&v[i], &v[j]));
    p
}

/// Reverses a saved loop iterator (ranges, `.rev()`, `.step_by(k)`).
#[inline(always)]
pub fn rev_iter<I: IntoIterator>(it: I) -> std::iter::Rev<I::IntoIter>
where
    I::IntoIter: DoubleEndedIterator,
{
    it.into_iter().rev()
}

pub use rand::Rng;

pub use crate::kit::tape::{Saved, Site, Stack};

pub use crate::forward::over_reverse::{
    duals_along, extend_dense, first_partials, DataPartials, SeedData,
};

/// A float constant in the scalar type of a generic twin or a generic function's rule
/// (`2.0` → `lit::<T>(2.0)`): `T::from_f64`, rounded for `f32`, partials zero for a dual.
#[inline(always)]
pub fn lit<T: crate::Scalar>(value: f64) -> T {
    T::of_real(<T::Real as crate::Real>::from_f64(value))
}

/// `v as f64` in a generic twin, of a value whose type the syntax does not show (a
/// struct's field, a name bound by a pattern): an integer or a `bool` in the twin's
/// scalar, as `as f64` converts it (no derivative), and the twin's scalar itself
/// unchanged, as `as f64` of an `f64` keeps its value and its derivative.
#[diagnostic::on_unimplemented(
    message = "mochi: `as f64` of a `{Self}` has no generic form",
    label = "cast here",
    note = "the generic form converts integers, `bool`s and the function's own float type"
)]
pub trait CastFloat<T> {
    /// The value in the twin's scalar.
    fn cast_float(self) -> T;
}

impl<T: crate::Scalar> CastFloat<T> for T {
    #[inline(always)]
    fn cast_float(self) -> T {
        self
    }
}

impl<T: crate::Scalar> CastFloat<T> for bool {
    #[inline(always)]
    fn cast_float(self) -> T {
        lit::<T>(if self { 1.0 } else { 0.0 })
    }
}

macro_rules! cast_float_int {
    ($($t:ty),*) => {$(
        impl<T: crate::Scalar> CastFloat<T> for $t {
            #[inline(always)]
            fn cast_float(self) -> T {
                lit::<T>(self as f64)
            }
        }
    )*};
}
cast_float_int!(usize, isize, u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

/// The rule of [`CastFloat`] in a derived twin (the Hessian runs the reverse mode over
/// the twin): `Call((&v,)).cast_float(PhantomData::<T>)`, the identity on the twin's
/// scalar (d/dv = 1) and a constant from an integer or a `bool` (no tangent).
pub trait CastFloatRule<To> {
    /// The value in the twin's scalar.
    type Output;
    /// Its pullback.
    type Pullback;
    /// The cast and its pullback.
    fn cast_float(self, to: std::marker::PhantomData<To>) -> (Self::Output, Self::Pullback);
}

/// The pullback of [`CastFloatRule`] on the twin's scalar: adds `ȳ`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CastFloatPullback<S>(std::marker::PhantomData<fn(S)>);

impl<S: crate::Scalar> CastFloatRule<S> for Call<(&S,)> {
    type Output = S;
    type Pullback = CastFloatPullback<S>;
    #[inline(always)]
    fn cast_float(self, _: std::marker::PhantomData<S>) -> (S, CastFloatPullback<S>) {
        (*self.0 .0, CastFloatPullback(std::marker::PhantomData))
    }
}

impl<S: crate::Scalar> crate::Pullback for CastFloatPullback<S> {
    type Output = S;
    type Args = (S,);
    #[inline(always)]
    fn pullback(self, dy: S, (dx,): (&mut S,)) {
        *dx += dy;
    }
}

/// The pullback of [`CastFloatRule`] from an integer or a `bool`: nothing to add.
#[derive(Clone, Copy, Debug, Default)]
pub struct CastConstPullback<S>(std::marker::PhantomData<fn(S)>);

impl<S: crate::Scalar> crate::Pullback for CastConstPullback<S> {
    type Output = S;
    type Args = (crate::NoTangent,);
    #[inline(always)]
    fn pullback(self, _dy: S, _args: (&mut crate::NoTangent,)) {}
}

macro_rules! cast_float_const_rule {
    ($($t:ty),*) => {$(
        impl<S: crate::Scalar> CastFloatRule<S> for Call<(&$t,)> {
            type Output = S;
            type Pullback = CastConstPullback<S>;
            #[inline(always)]
            fn cast_float(self, _: std::marker::PhantomData<S>) -> (S, CastConstPullback<S>) {
                (CastFloat::<S>::cast_float(*self.0 .0), CastConstPullback(std::marker::PhantomData))
            }
        }
    )*};
}
cast_float_const_rule!(bool, usize, isize, u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

/// A constant defined outside a function (`const N: usize`, `const SCALE: f64`,
/// `std::f64::consts::PI` after a `use`), as the generic twin of the function sees it:
/// floats in the twin's scalar `T`, everything else as it is.
pub trait LiftConst<T> {
    /// The constant's type in the twin.
    type Out;
    /// The constant in the twin.
    fn lift_const(self) -> Self::Out;
}

impl<T: crate::Scalar> LiftConst<T> for f64 {
    type Out = T;
    #[inline(always)]
    fn lift_const(self) -> T {
        lit(self)
    }
}

impl<T: crate::Scalar> LiftConst<T> for f32 {
    type Out = T;
    #[inline(always)]
    fn lift_const(self) -> T {
        lit(f64::from(self))
    }
}

/// An array of constants (`[f64; N]`, `[[f64; N]; M]`, `[(f64, f64, bool); N]` of a
/// table of cases): each element lifted.
impl<T, X: LiftConst<T>, const N: usize> LiftConst<T> for [X; N] {
    type Out = [X::Out; N];
    #[inline(always)]
    fn lift_const(self) -> [X::Out; N] {
        self.map(LiftConst::lift_const)
    }
}

impl<T, X: LiftConst<T> + Clone> LiftConst<T> for &[X] {
    type Out = Vec<X::Out>;
    #[inline(always)]
    fn lift_const(self) -> Vec<X::Out> {
        self.iter().map(|v| v.clone().lift_const()).collect()
    }
}

/// A fixed-size array from the `N` values the companions cut for an argument `[T; N]`.
///
/// # Panics
/// If `v` has another length (the companions cut it by the argument's own length).
#[inline]
pub fn to_array<T, const N: usize>(v: Vec<T>) -> [T; N] {
    let n = v.len();
    v.try_into()
        .unwrap_or_else(|_| panic!("mochi: {n} values for an array of {N}"))
}

/// Data `c` (an argument the companions take as constants: `&[Vec<f64>]`, `&[(f64,
/// f64)]`) in the scalar of `like`'s elements, for the generic twin.
#[inline]
pub fn lift_data_like<T, C: LiftConst<T>>(c: C, _like: &[T]) -> C::Out {
    c.lift_const()
}

/// Data of a function's argument in its generic twin (`xs: &[Vec<f64>]`, `data: &[(f64,
/// f64)]`): its floats in the twin's scalar, without a derivative.
/// A borrowed fixed-size array of data (`p: &[[f64; 2]; 4]`, `&[f64; 3]`): its elements
/// lifted, an array again.
impl<T, X: LiftConst<T> + Clone, const N: usize> LiftConst<T> for &[X; N] {
    type Out = [X::Out; N];
    #[inline(always)]
    fn lift_const(self) -> [X::Out; N] {
        self.clone().map(|v| v.lift_const())
    }
}

impl<T, X: LiftConst<T> + Clone> LiftConst<T> for &Vec<X> {
    type Out = Vec<X::Out>;
    #[inline(always)]
    fn lift_const(self) -> Vec<X::Out> {
        self.iter().map(|v| v.clone().lift_const()).collect()
    }
}

impl<T, X: LiftConst<T>> LiftConst<T> for Vec<X> {
    type Out = Vec<X::Out>;
    #[inline(always)]
    fn lift_const(self) -> Vec<X::Out> {
        self.into_iter().map(LiftConst::lift_const).collect()
    }
}

/// Tuples of constants, each part lifted (a table of `(strike, maturity, is_call)`).
macro_rules! lift_const_tuple {
    ($($p:ident $i:tt),+) => {
        impl<T, $($p: LiftConst<T>),+> LiftConst<T> for ($($p,)+) {
            type Out = ($($p::Out,)+);
            #[inline(always)]
            fn lift_const(self) -> Self::Out {
                ($(self.$i.lift_const(),)+)
            }
        }
    };
}
lift_const_tuple!(A 0, B 1);
lift_const_tuple!(A 0, B 1, C 2);
lift_const_tuple!(A 0, B 1, C 2, D 3);
lift_const_tuple!(A 0, B 1, C 2, D 3, E 4);
lift_const_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

macro_rules! lift_const_as_is {
    ($($t:ty),*) => {$(
        impl<T> LiftConst<T> for $t {
            type Out = $t;
            #[inline(always)]
            fn lift_const(self) -> $t {
                self
            }
        }
    )*};
}
crate::tangent::for_sized_no_tangent_types!(lift_const_as_is);
lift_const_as_is!(&'static str);

/// A constant defined outside a function, in the generic twin of the function:
/// `(&ConstOf(N, PhantomData::<T>)).lift_or_keep()` is `N` lifted by [`LiftConst`]
/// when its type has an impl (floats become `T`), and `N` as it is otherwise (a
/// constant struct, an `Option`): method resolution tries [`LiftConstBy`] on the value
/// before [`KeepConstBy`] on the reference.
pub struct ConstOf<C, T>(pub C, pub std::marker::PhantomData<T>);

/// The constant lifted (see [`ConstOf`]).
pub trait LiftConstBy<T> {
    /// The constant's type in the twin.
    type Out;
    /// The constant in the twin.
    fn lift_or_keep(&self) -> Self::Out;
}

impl<C: LiftConst<T> + Clone, T> LiftConstBy<T> for ConstOf<C, T> {
    type Out = C::Out;
    #[inline(always)]
    fn lift_or_keep(&self) -> C::Out {
        self.0.clone().lift_const()
    }
}

/// A lifted constant passed as an argument (`horner(z, COEFFS)`, see [`ConstOf`]): the
/// lifted copy of a slice constant, a `Vec`, lent as the slice the function takes
/// ([`ConstUseSlice`]); any other lifted constant as it is ([`ConstUseOther`]). Called
/// with method syntax, `ConstUse(&c).at_use()`, so that the slice's impl, by value, is
/// tried before the other's, by reference.
pub struct ConstUse<'a, C>(pub &'a C);

/// See [`ConstUse`].
pub trait ConstUseSlice<'a, T> {
    /// The lifted slice, borrowed.
    fn at_use(self) -> &'a [T];
}

impl<'a, T> ConstUseSlice<'a, T> for ConstUse<'a, Vec<T>> {
    #[inline(always)]
    fn at_use(self) -> &'a [T] {
        self.0
    }
}

/// See [`ConstUse`].
pub trait ConstUseOther<C> {
    /// The lifted constant, copied.
    fn at_use(self) -> C;
}

impl<C: Clone> ConstUseOther<C> for &ConstUse<'_, C> {
    #[inline(always)]
    fn at_use(self) -> C {
        self.0.clone()
    }
}

/// The constant as it is (see [`ConstOf`]).
pub trait KeepConstBy {
    /// The constant's own type.
    type Out;
    /// The constant, unchanged.
    fn lift_or_keep(&self) -> Self::Out;
}

impl<C: Clone, T> KeepConstBy for &ConstOf<C, T> {
    type Out = C;
    #[inline(always)]
    fn lift_or_keep(&self) -> C {
        self.0.clone()
    }
}

/// An argument of a plain function called in a generic twin with a value read from a
/// constant (`lg(y + 1.0)` in `for &y in YS.iter()`, where the twin's `YS` holds its
/// scalar): the value back in the `f64` the function takes, element by element (`[T; 2]`
/// → `[f64; 2]`); integers and `bool`s as they are. Called with method syntax, so a
/// reference (`y` of `for y in YS.iter()`) is read through. [`UnliftF32`] for a function
/// over `f32`.
pub trait UnliftF64 {
    /// The plain value's type.
    type Plain;
    /// The plain value.
    fn unlift_f64(&self) -> Self::Plain;
}

/// [`UnliftF64`] for a function over `f32`.
pub trait UnliftF32 {
    /// The plain value's type.
    type Plain;
    /// The plain value.
    fn unlift_f32(&self) -> Self::Plain;
}

impl<S: crate::Scalar> UnliftF64 for S {
    type Plain = f64;
    #[inline(always)]
    fn unlift_f64(&self) -> f64 {
        crate::Real::to_f64(self.as_real())
    }
}

impl<S: crate::Scalar> UnliftF32 for S {
    type Plain = f32;
    #[inline(always)]
    fn unlift_f32(&self) -> f32 {
        crate::Real::to_f64(self.as_real()) as f32
    }
}

macro_rules! unlift_containers {
    ($tr:ident, $m:ident) => {
        impl<U: $tr, const N: usize> $tr for [U; N] {
            type Plain = [U::Plain; N];
            #[inline]
            fn $m(&self) -> Self::Plain {
                std::array::from_fn(|k| self[k].$m())
            }
        }
        impl<U: $tr> $tr for Vec<U> {
            type Plain = Vec<U::Plain>;
            #[inline]
            fn $m(&self) -> Self::Plain {
                self.iter().map(|u| u.$m()).collect()
            }
        }
    };
}
unlift_containers!(UnliftF64, unlift_f64);
unlift_containers!(UnliftF32, unlift_f32);

/// Tuples (`cexp((0.0, w))` of a helper taking a pair), part by part.
macro_rules! unlift_tuple {
    ($($p:ident $i:tt),+) => {
        impl<$($p: UnliftF64),+> UnliftF64 for ($($p,)+) {
            type Plain = ($($p::Plain,)+);
            #[inline(always)]
            fn unlift_f64(&self) -> Self::Plain {
                ($(self.$i.unlift_f64(),)+)
            }
        }
        impl<$($p: UnliftF32),+> UnliftF32 for ($($p,)+) {
            type Plain = ($($p::Plain,)+);
            #[inline(always)]
            fn unlift_f32(&self) -> Self::Plain {
                ($(self.$i.unlift_f32(),)+)
            }
        }
    };
}
unlift_tuple!(A 0, B 1);
unlift_tuple!(A 0, B 1, C 2);
unlift_tuple!(A 0, B 1, C 2, D 3);

macro_rules! unlift_as_is {
    ($($t:ty),*) => {$(
        impl UnliftF64 for $t {
            type Plain = $t;
            #[inline(always)]
            fn unlift_f64(&self) -> $t {
                *self
            }
        }
        impl UnliftF32 for $t {
            type Plain = $t;
            #[inline(always)]
            fn unlift_f32(&self) -> $t {
                *self
            }
        }
    )*};
}
unlift_as_is!(usize, isize, u8, u16, u32, u64, i8, i16, i32, i64, bool, char);

/// A borrowed argument of a plain function called in a generic twin that the syntax does
/// not show holds floats (`helper(&ls, 1.0)` of a `let ls = vec![LS[0], LS[1]];`, which
/// the twin holds in its scalar): `(&UnliftArg(&ls)).unlift_or_keep_f64()` is the value
/// read back to the `f64` the function takes when its type has an impl of [`UnliftF64`]
/// (floats, integers, `Vec`s, arrays, tuples of them), and the borrow as it is otherwise
/// (a struct of the user's): method resolution tries [`UnliftArgF64`] on the value
/// before [`KeepArgF64`] on the reference. (`_f32`: the same for a function over `f32`.)
pub struct UnliftArg<'a, A>(pub &'a A);

macro_rules! unlift_arg_traits {
    ($unlift:ident, $keep:ident, $by:ident, $read:ident, $m:ident, $which:literal) => {
        #[doc = concat!("The argument read back (see [`UnliftArg`])", $which, ".")]
        pub trait $unlift {
            /// The argument's type in the plain function.
            type Out;
            /// The argument in the plain function.
            fn $m(&self) -> Self::Out;
        }

        impl<A: $by> $unlift for UnliftArg<'_, A> {
            type Out = A::Plain;
            #[inline(always)]
            fn $m(&self) -> A::Plain {
                self.0.$read()
            }
        }

        #[doc = concat!("The argument as it is (see [`UnliftArg`])", $which, ".")]
        pub trait $keep {
            /// The argument's own type, borrowed.
            type Out;
            /// The argument, unchanged.
            fn $m(&self) -> Self::Out;
        }

        impl<'a, A> $keep for &UnliftArg<'a, A> {
            type Out = &'a A;
            #[inline(always)]
            fn $m(&self) -> &'a A {
                self.0
            }
        }
    };
}
unlift_arg_traits!(
    UnliftArgF64,
    KeepArgF64,
    UnliftF64,
    unlift_f64,
    unlift_or_keep_f64,
    ""
);
unlift_arg_traits!(
    UnliftArgF32,
    KeepArgF32,
    UnliftF32,
    unlift_f32,
    unlift_or_keep_f32,
    ", for a function over `f32`"
);

/// What a plain function returns in the generic twin of a function that calls it with
/// no derivative (`sgn(t)` of a constant `t`): `(&mut PlainOf(Some(r), PhantomData::<T>))
/// .lift_or_keep_plain()` is `r` lifted by [`LiftConst`] when its type has an impl (a
/// float becomes `T`), and `r` as it is otherwise (any type, `Clone` or not): method
/// resolution tries [`LiftPlainBy`] on the `&mut` before [`KeepPlainBy`] on a `&mut`
/// of it.
pub struct PlainOf<R, T>(pub Option<R>, pub std::marker::PhantomData<T>);

/// The result lifted (see [`PlainOf`]).
pub trait LiftPlainBy {
    /// The result's type in the twin.
    type Out;
    /// The result in the twin.
    fn lift_or_keep_plain(self) -> Self::Out;
}

impl<R: LiftConst<T>, T> LiftPlainBy for &mut PlainOf<R, T> {
    type Out = R::Out;
    #[inline(always)]
    fn lift_or_keep_plain(self) -> R::Out {
        self.0.take().expect("taken once").lift_const()
    }
}

/// The result as it is (see [`PlainOf`]).
pub trait KeepPlainBy {
    /// The result's own type.
    type Out;
    /// The result, unchanged.
    fn lift_or_keep_plain(self) -> Self::Out;
}

impl<R, T> KeepPlainBy for &mut &mut PlainOf<R, T> {
    type Out = R;
    #[inline(always)]
    fn lift_or_keep_plain(self) -> R {
        self.0.take().expect("taken once")
    }
}

/// The rule of [`lit`](fn@lit): a constant (only integers and constants are written as
/// `lit`; a cast of a float has no twin), so its pullback adds nothing. Called when the
/// converted value reads a differentiable struct, as `self.n as f64` of an integer field
/// does in a method's twin.
pub mod lit {
    /// `lit::<T>(value)` and a pullback that adds nothing.
    #[inline(always)]
    pub fn rrule<T: crate::Scalar>(
        value: f64,
    ) -> (T, impl crate::Pullback<Output = T::Tangent, Args = (f64,)>) {
        (
            super::lit(value),
            crate::rule::pullback1(|_: T::Tangent, _: (&mut f64,)| {}),
        )
    }
}

/// Why a function has no higher-order companions: the bound of its `f::hessian`,
/// `f::hvp`, `f::jvp`, `f::jacobian` and `f::value_gradient_and_hessian`, which nothing
/// meets, so that calling one is an error naming the reason.
#[diagnostic::on_unimplemented(
    message = "this function has no higher-order companions (`jvp`, `hvp`, `hessian`, `jacobian`): {Why}",
    label = "mochi runs these on a generic form of the function, and it has none",
    note = "write the function generic over its float type (`fn f<T: num_traits::Float>(x: &[T]) -> T`); the companion's documentation names what has no generic form"
)]
pub trait HigherOrder<Why>: sealed::Never {
    /// Never called: no type implements the trait.
    fn unreachable<R>() -> R;
}

/// [`HigherOrder`] for a method that did not ask for its companions, with the fix in
/// its message.
#[diagnostic::on_unimplemented(
    message = "this method has no higher-order companions (`jvp`, `hvp`, `hessian`, `jacobian`): methods have them when asked",
    label = "not asked for on this method",
    note = "write `#[differentiable(higher_order)]` on the method (a `&self` method of a struct deriving `Tangent` whose fields are `f64`, integers, `bool`, `String`, `Vec`s of these or ndarray arrays of `f64`)"
)]
pub trait MethodHigherOrder<Why>: sealed::Never {
    /// Never called: no type implements the trait.
    fn unreachable<R>() -> R;
}

mod sealed {
    /// Implemented by no type.
    pub trait Never {}
}

/// The scalar of a struct's generic mirror (written by `#[derive(Tangent)]`): the
/// stand-in twin of a method without one takes the mirror, which names the scalar.
pub trait MirrorScalar {
    /// The mirror's scalar.
    type Scalar;
}

/// A value of the user's type built from constants (`V2::zero()`), in the generic twin
/// of a function: its floats in the twin's scalar, without a derivative.
#[inline]
pub fn lift_value<T: crate::Scalar, R: LiftField>(r: R) -> R::Of<T> {
    r.lift(&mut |v| lit(v))
}

/// A variant's field bound by a pattern in a generic twin (`Ease::InPow(p) =>
/// t.powf(*p)`), lifted to the twin's scalar beside it: [`ref_like`] hands the lifted
/// value on as the pattern bound the field, by reference (`match self` of a `&self`
/// method, so `*p` still reads it) or by value.
pub trait RefLike<'a, V: 'a> {
    /// `&'a V` for a field bound by reference, `V` for one bound by value.
    type Out;
    /// The lifted value `v`, as the field was bound.
    fn like(self, v: &'a V) -> Self::Out;
}

impl<'a, V: 'a, X: ?Sized> RefLike<'a, V> for &X {
    type Out = &'a V;
    #[inline(always)]
    fn like(self, v: &'a V) -> &'a V {
        v
    }
}

impl<'a, V: 'a, X: ?Sized> RefLike<'a, V> for &mut X {
    type Out = &'a V;
    #[inline(always)]
    fn like(self, v: &'a V) -> &'a V {
        v
    }
}

macro_rules! ref_like_by_value {
    ($($t:ty),*) => {$(
        impl<'a, V: Clone + 'a> RefLike<'a, V> for $t {
            type Out = V;
            #[inline(always)]
            fn like(self, v: &'a V) -> V {
                v.clone()
            }
        }
    )*};
}
ref_like_by_value!(f64, f32, usize, u8, u16, u32, u64, u128, isize, i8, i16, i32, i64, i128, bool);

/// See [`RefLike`].
#[inline(always)]
pub fn ref_like<'a, V: 'a, O: RefLike<'a, V>>(bound: O, lifted: &'a V) -> O::Out {
    bound.like(lifted)
}

/// A borrowed value handed to a method's rule or twin as its receiver: the reference
/// itself for a `&self` (or `&mut self`) method, a shared one for a `&self` method given
/// `&mut v`, a clone for one taking `self` by value (`fn conj(self)`), as the callee's
/// parameter asks (the call cannot see which the method takes).
pub trait Receive<X> {
    /// The receiver as the twin takes it.
    fn receive(self) -> X;
}

impl<'a, M: ?Sized> Receive<&'a M> for &'a M {
    #[inline(always)]
    fn receive(self) -> &'a M {
        self
    }
}

impl<M: Clone> Receive<M> for &M {
    #[inline(always)]
    fn receive(self) -> M {
        self.clone()
    }
}

impl<'a, M: ?Sized> Receive<&'a mut M> for &'a mut M {
    #[inline(always)]
    fn receive(self) -> &'a mut M {
        self
    }
}

impl<'a, M: ?Sized> Receive<&'a M> for &'a mut M {
    #[inline(always)]
    fn receive(self) -> &'a M {
        self
    }
}

impl<M: Clone> Receive<M> for &mut M {
    #[inline(always)]
    fn receive(self) -> M {
        self.clone()
    }
}

/// A method taking `self` by value called on a reference the loop or chain gives
/// (`for e in TABLE.iter() { e.by_value(t) }`): a clone of the value, as the call's
/// auto-deref copies it.
impl<M: Clone> Receive<M> for &&M {
    #[inline(always)]
    fn receive(self) -> M {
        (*self).clone()
    }
}

/// See [`Receive`].
#[inline(always)]
pub fn receiver<X, R: Receive<X>>(r: R) -> X {
    r.receive()
}

/// The result of a call named like a length query (`.len()`, `.count()`,
/// `.capacity()`, `.nrows()`, `.ncols()`, `.ndim()`) on a value with a derivative:
/// the derivation reads every such call as a length, without a derivative, which an
/// integer is. A float there is a method of the user's with that name, whose
/// derivative would be lost: [`length_result`] refuses it.
#[diagnostic::on_unimplemented(
    message = "mochi: this call named like a length query (`.len()`, `.count()`, `.capacity()`, `.nrows()`, `.ncols()`, `.ndim()`) returns `{Self}`, not an integer",
    label = "read as a length, without a derivative",
    note = "mochi reads every call of these names as a length, whose result carries no derivative, so this one's would be lost: it is a method of your own; give it another name (`length`, `size`, `norm`) and mark it `#[differentiable]`"
)]
pub trait LengthResult {}

macro_rules! length_results {
    ($($t:ty),*) => {$(impl LengthResult for $t {})*};
}
length_results!(usize, u8, u16, u32, u64, u128, isize, i8, i16, i32, i64, i128);

/// See [`LengthResult`].
#[inline(always)]
pub fn length_result<T: LengthResult>(n: T) -> T {
    n
}

/// `Real` (or `Float`) written as a type in a `#[differentiable]` function, `type Real =
/// f64;`: the macro reads the alias as `f64` (names it cannot resolve), and checks so.
#[diagnostic::on_unimplemented(
    message = "`#[differentiable]` reads the type `Real` (or `Float`) as an alias of `f64`, but here it is `{Self}`",
    label = "not `f64`",
    note = "write the float type itself (`f64` or `f32`) in the function's signature and body"
)]
pub trait FloatAliasIsF64 {}

impl FloatAliasIsF64 for f64 {}

/// Checks [`FloatAliasIsF64`] where the function is written.
pub const fn float_alias_is_f64<A: FloatAliasIsF64>() {}

/// `Self` is `T`: the stand-in twin of an associated constructor whose `impl` block has
/// no generic forms names the struct's mirror through a parameter this pins, so that
/// the struct need not have one where the stand-in is written, only where it is called.
pub trait SameType<T: ?Sized> {}

impl<T: ?Sized> SameType<T> for T {}

/// The reasons [`HigherOrder`] names.
pub mod because {
    /// The function is a method.
    pub struct ItIsAMethod;
    /// The function is a method that did not ask for them: methods get them with
    /// `#[differentiable(higher_order)]` (their struct must derive `Tangent`).
    pub struct MethodsHaveThemWithDifferentiableHigherOrder;
    /// An argument is not `f64`, `&[f64]`, `&Vec<f64>`, `Vec<f64>` or a type without
    /// floats.
    pub struct AnArgumentIsNotAFloatASliceOrAVecOfFloats;
    /// The result is not `f64` or `Vec<f64>`.
    pub struct ItsResultIsNotAFloatOrAVecOfFloats;
    /// The body calls a function or method that has no generic form.
    pub struct ItCallsAFunctionOrMethodWithoutAGenericForm;
    /// The function is generic over more than one type, or over a non-float type.
    pub struct ItIsGenericOverMoreThanOneScalarType;
    /// The body uses syntax that cannot change its float type (a cast of a float to an
    /// integer, an array type, a struct, `f32`).
    pub struct ItUsesSyntaxWithoutAGenericForm;
    /// The function is an associated function (without `self`) in an `impl` block,
    /// where its companions' modules cannot sit: declared outside the `impl`, it has them.
    pub struct ItIsAnAssociatedFunctionDeclareItOutsideTheImpl;
    /// The `higher-order` feature of `mochi-ad` is off: no function has these
    /// companions (which halves the build time of differentiable code).
    pub struct TheHigherOrderFeatureOfMochiIsOff;
}
/// The pullback type of the rule of a function that has no generic form, as its
/// `f::__twin::rrule` names it: a generic twin that calls such a function still
/// type-checks, and building one of its higher-order companions fails at compile
/// time with the callee's reason (the rule's body evaluates a constant that panics).
pub struct NoTwinPullback<O, A> {
    never: std::convert::Infallible,
    _types: std::marker::PhantomData<fn(O, A)>,
}

impl<O, A: crate::Accumulators> crate::Pullback for NoTwinPullback<O, A> {
    type Output = O;
    type Args = A;
    fn pullback(self, _: O, _: <A as crate::Accumulators>::Mut<'_>) {
        match self.never {}
    }
}

#[cfg(feature = "ndarray")]
pub use crate::forward::over_reverse::{hessian_by_blocks, jacobian_by_blocks};

/// The matrix type of the dense Hessians and Jacobians that the forward-over-reverse
/// companions return.
#[cfg(feature = "ndarray")]
pub type DenseMatrix = ndarray::Array2<f64>;

/// The vector type of the higher-order companions' `Array1` results, in their float
/// type (`f32` for a function over `f32`).
#[cfg(feature = "ndarray")]
pub type DenseVectorOf<T> = ndarray::Array1<T>;

/// [`DenseMatrix`] in the companions' float type (`f32` for a function over `f32`).
#[cfg(feature = "ndarray")]
pub type DenseMatrixOf<T> = ndarray::Array2<T>;

/// The `Array1` of `v`'s elements: a point, a direction or a cotangent of an `Array1`
/// argument, cut from a flat vector.
#[cfg(feature = "ndarray")]
#[inline]
pub fn array1_from<T>(v: Vec<T>) -> ndarray::Array1<T> {
    ndarray::Array1::from(v)
}

/// The array of shape `dim` holding `v` in logical (row-major) order: a point, a
/// direction or a cotangent of an array argument, cut from a flat vector.
#[cfg(feature = "ndarray")]
#[inline]
pub fn array_from_shape<T, D: Dimension>(dim: D, v: Vec<T>) -> Array<T, D> {
    match Array::from_shape_vec(dim, v) {
        Ok(a) => a,
        Err(e) => unreachable!("mochi: a flat vector cut to an array's shape: {e}"),
    }
}

/// An owned array, as generated signatures name one (`DenseArray<f64, Ix2>`).
#[cfg(feature = "ndarray")]
pub type DenseArray<T, D> = Array<T, D>;

/// The dimension types generated signatures name.
#[cfg(feature = "ndarray")]
pub use ndarray::{Ix0, Ix1, Ix2, Ix3, Ix4, Ix5, Ix6, IxDyn};

/// Writes `values` into row `i` of `m` (a row of a Jacobian by reverse mode).
#[cfg(feature = "ndarray")]
pub fn set_row<T: Copy + Into<f64>>(m: &mut DenseMatrix, i: usize, values: &[T]) {
    m.row_mut(i)
        .iter_mut()
        .zip(values)
        .for_each(|(a, b)| *a = (*b).into());
}

/// The 1×1 [`DenseMatrix`] `[[v]]`: the Hessian of a function of one scalar.
#[cfg(feature = "ndarray")]
#[inline]
pub fn dense_1x1(v: f64) -> DenseMatrix {
    ndarray::Array2::from_elem((1, 1), v)
}

/// The tangent of `R`, written by generated signatures as
/// `<fn(&'static ()) -> R as TangentOfOutput>::Tangent`.
///
/// A type such as `View<f64>` may hide a lifetime parameter (`View<'a, f64>`), and a
/// signature cannot name `<View<f64> as Tangent>::Tangent` in its return type without
/// tying it to an argument's lifetime. In the output of a function-pointer type whose
/// only input is `&'static ()`, every elided lifetime is `'static` by the ordinary
/// elision rules, so the type is lifetime-free and its tangent can be named for any
/// type, without knowing which types have hidden lifetimes.
pub trait TangentOfOutput {
    /// The tangent of the output type.
    type Tangent;
}

impl<R: crate::Tangent> TangentOfOutput for fn(&'static ()) -> R {
    type Tangent = R::Tangent;
}

/// The generic mirror over `T` of a type of the user's `R` ([`TwinOf`]), written by the
/// stand-ins of functions without a generic form as
/// The generic mirror of the user's struct `X` with floats of type `T`, named through
/// `X` itself: the generic form builds `TwinStruct::<T, Pt> { x: a, y: b }`, which
/// needs no name beyond `Pt` in scope (a module that imports `Pt` alone sees no
/// `__MochiTwinPt`).
pub type TwinStruct<T, X> = <X as TwinOf<T>>::Twin;

/// `<fn(&'static ()) -> R as TwinOfOutput<T>>::Twin`, for the reason
/// [`TangentOfOutput`] gives: `R` may hide a lifetime parameter.
pub trait TwinOfOutput<T> {
    /// The mirror.
    type Twin: crate::Tangent;
}

impl<T: crate::Scalar, R: TwinOf<T>> TwinOfOutput<T> for fn(&'static ()) -> R {
    type Twin = R::Twin;
}

/// The seed `ȳ = 1` of a scalar output.
#[diagnostic::on_unimplemented(
    message = "`gradient` needs a scalar output (f64 or f32), but the function returns a value with tangent `{Self}`",
    label = "use `f::pullback` and pass the output cotangent yourself"
)]
pub trait Seed {
    /// `1`. Not named `one`: the gradient companions of a generic function bound `T:
    /// Seed`, and a method `one` would collide with `num_traits::One::one` in the body.
    fn unit_cotangent() -> Self;
}
// Over `Scalar` (f64, f32 and duals, which forward-over-reverse seeds with a constant
// 1), as a blanket impl so that `T: Scalar` implies it.
impl<S: crate::Scalar> Seed for S {
    #[inline(always)]
    fn unit_cotangent() -> Self {
        S::of_real(<S::Real as crate::Real>::ONE)
    }
}

/// An `Option` output is seeded where it is `Some`: `gradient` of a function returning
/// `Option<f64>` is `Some(g)` where it returns a value.
impl<S: crate::Scalar> Seed for Option<S> {
    #[inline(always)]
    fn unit_cotangent() -> Self {
        Some(S::unit_cotangent())
    }
}

/// The seed of a scalar output.
#[inline(always)]
pub fn seed<T: Seed>() -> T {
    T::unit_cotangent()
}

/// Cotangents that can be added into a cotangent of another, equivalent type (an array
/// literal passed where a slice is expected: `[T; N]` ← `Vec<T>`).
pub trait AccumulateFrom<S> {
    /// `self += src`.
    fn accumulate_from(&mut self, src: S);
}
impl<T: TangentVector> AccumulateFrom<T> for T {
    #[inline(always)]
    fn accumulate_from(&mut self, src: T) {
        self.accumulate(src)
    }
}
impl<T: TangentVector, const N: usize> AccumulateFrom<Vec<T>> for [T; N] {
    #[track_caller]
    fn accumulate_from(&mut self, src: Vec<T>) {
        if src.is_empty() {
            return;
        }
        assert_eq!(src.len(), N, "mochi: cotangent length mismatch");
        for (d, s) in self.iter_mut().zip(src) {
            d.accumulate(s);
        }
    }
}

/// An array passed `&mut` where a slice is expected (`fill(&mut p)` with `let mut p =
/// [0.0; 2]`): its cotangent, as the callee's pullback takes it, before the pullback.
impl<T: TangentVector + Clone, const N: usize> AccumulateFrom<[T; N]> for Vec<T> {
    #[track_caller]
    fn accumulate_from(&mut self, src: [T; N]) {
        if self.is_empty() {
            *self = src.to_vec();
            return;
        }
        assert_eq!(self.len(), N, "mochi: cotangent length mismatch");
        for (d, s) in self.iter_mut().zip(src) {
            d.accumulate(s);
        }
    }
}

/// `a.to_vec()`, `a.as_slice()` of a one-dimensional array: the `Vec` cotangent of the
/// result goes back into the array's.
#[cfg(feature = "ndarray")]
impl<T: TangentVector> AccumulateFrom<Vec<T>> for ndarray::Array1<T> {
    #[track_caller]
    fn accumulate_from(&mut self, src: Vec<T>) {
        self.accumulate(ndarray::Array1::from(src));
    }
}

/// `Some(e)`: the `Option` cotangent of the result goes back into `e`'s (nothing from
/// `None`, the structural zero).
impl<T: TangentVector> AccumulateFrom<Option<T>> for T {
    #[inline(always)]
    fn accumulate_from(&mut self, src: Option<T>) {
        if let Some(v) = src {
            self.accumulate(v);
        }
    }
}

/// An accumulator that can take the place of a callee's argument cotangent `S`: itself
/// (`S` is its own type), or an array's for a `Vec` (an array given where the callee
/// takes a slice), through a temporary added in after the callee's pullback.
pub trait ArgCot<S> {
    /// Runs `f` on an accumulator of type `S` that ends up in `self`.
    fn with_arg_cot(&mut self, f: impl FnOnce(&mut S));
}
impl<T> ArgCot<T> for T {
    #[inline(always)]
    fn with_arg_cot(&mut self, f: impl FnOnce(&mut T)) {
        f(self)
    }
}
impl<T: TangentVector, const N: usize> ArgCot<Vec<T>> for [T; N] {
    #[inline]
    #[track_caller]
    fn with_arg_cot(&mut self, f: impl FnOnce(&mut Vec<T>)) {
        let mut tmp = Vec::new();
        f(&mut tmp);
        self.accumulate_from(tmp);
    }
}

/// `f` run on an accumulator for a callee's argument cotangent that adds into `d`
/// ([`ArgCot`]).
#[inline(always)]
pub fn with_arg_cot<D: ArgCot<S>, S>(d: &mut D, f: impl FnOnce(&mut S)) {
    d.with_arg_cot(f)
}

/// `*dst += src` across equivalent cotangent types.
#[inline(always)]
pub fn acc_from<D: AccumulateFrom<S>, S>(dst: &mut D, src: S) {
    dst.accumulate_from(src)
}

/// Pins the type of a cotangent accumulator to a tangent type recorded in the forward
/// sweep (closure parameters have no written types).
#[inline(always)]
pub fn pin<T>(_acc: &T, _ty: std::marker::PhantomData<T>) {}

/// Adds the cotangent of an `unwrap`ped (or `expect`ed) value into its wrapper's: an
/// `Option`'s cotangent is an `Option`, a `Result`'s is its value's own.
pub trait AccUnwrapped<V> {
    /// `self += v`, `v` being the cotangent of the wrapped value.
    fn acc_unwrapped(&mut self, v: V);
}

impl<V: TangentVector> AccUnwrapped<V> for Option<V> {
    #[inline(always)]
    #[track_caller]
    fn acc_unwrapped(&mut self, v: V) {
        match self {
            Some(d) => d.accumulate(v),
            None => *self = Some(v),
        }
    }
}

impl<V: TangentVector> AccUnwrapped<V> for V {
    #[inline(always)]
    #[track_caller]
    fn acc_unwrapped(&mut self, v: V) {
        self.accumulate(v)
    }
}

/// Whether an `Option` is `Some` or a `Result` is `Ok`: `o.unwrap_or(d)` takes the
/// value's branch.
pub trait Present {
    /// `is_some()` / `is_ok()`.
    fn present(&self) -> bool;
}
impl<T> Present for Option<T> {
    #[inline(always)]
    fn present(&self) -> bool {
        self.is_some()
    }
}
impl<T, E> Present for Result<T, E> {
    #[inline(always)]
    fn present(&self) -> bool {
        self.is_ok()
    }
}
/// `if let Some(b) = &t.b`: the `Option` behind a reference.
impl<P: Present + ?Sized> Present for &P {
    #[inline(always)]
    fn present(&self) -> bool {
        (**self).present()
    }
}

/// The result type of `gradient` for a function returning an `Option` or a `Result`:
/// the gradient where the function has a value (`Some(g)`, `Ok(g)`), and its `None` or
/// its error where it has none, so a failed evaluation never reads as a zero gradient.
pub trait Outcome {
    /// `Option<G>` or `Result<G, E>`.
    type With<G>;
    /// `g` in place of the value, or the absence or error as it is.
    fn with<G>(self, g: G) -> Self::With<G>;
}
impl<T> Outcome for Option<T> {
    type With<G> = Option<G>;
    #[inline(always)]
    fn with<G>(self, g: G) -> Option<G> {
        self.map(|_| g)
    }
}
impl<T, E> Outcome for Result<T, E> {
    type With<G> = Result<G, E>;
    #[inline(always)]
    fn with<G>(self, g: G) -> Result<G, E> {
        self.map(|_| g)
    }
}

/// The error of a `Result` that `?` returns early with, held so that it can be moved
/// out through a shared reference: the transform carries a `return` as a flag, after
/// which Rust would see the `Result` moved ([`err_slot`], [`take_err`]).
pub struct ErrSlot<E>(std::cell::Cell<Option<E>>);

impl<E> std::fmt::Debug for ErrSlot<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ErrSlot")
    }
}

/// `r` with its error in an [`ErrSlot`] (`e?` is `let r = err_slot(e); if r.is_err() {
/// return Err(From::from(take_err(&r))) }` and then `r.unwrap()`).
#[inline(always)]
pub fn err_slot<T, E>(r: Result<T, E>) -> Result<T, ErrSlot<E>> {
    r.map_err(|e| ErrSlot(std::cell::Cell::new(Some(e))))
}

/// The rule of [`err_slot`](fn@err_slot): the value's cotangent passes through.
pub mod err_slot {
    /// The pullback of `err_slot`: the value's cotangent, added into `r`'s.
    pub struct ErrSlotPullback<T>(std::marker::PhantomData<fn(T)>);

    impl<T: crate::TangentVector> crate::Pullback for ErrSlotPullback<T> {
        type Output = T;
        type Args = (T,);
        #[inline(always)]
        fn pullback(self, dy: T, (dr,): (&mut T,)) {
            crate::TangentVector::accumulate(dr, dy)
        }
    }

    /// `err_slot(r)` and its pullback.
    #[inline(always)]
    pub fn rrule<T: crate::Tangent, E>(
        r: Result<T, E>,
    ) -> (Result<T, super::ErrSlot<E>>, ErrSlotPullback<T::Tangent>) {
        (
            super::err_slot(r),
            ErrSlotPullback(std::marker::PhantomData),
        )
    }
}

/// The error of an `Err` made by [`err_slot`], moved out (once).
#[track_caller]
pub fn take_err<T, E>(r: &Result<T, ErrSlot<E>>) -> E {
    match r {
        Err(slot) => slot
            .0
            .take()
            .expect("mochi: internal: the error of a `?` was taken twice"),
        Ok(_) => unreachable!("mochi: internal: `take_err` of an `Ok`"),
    }
}

/// A rule method's name as a type (its FNV-1a hash, `macros/src/lower/norule.rs`,
/// `rule_name`): the first parameter of [`OwnedRule`].
pub struct RuleName<const H: u64>;

/// The rules of the crate's own types reached without their traits in scope: a type
/// imported by name (`use crate::geom::V2;`) brings no trait with it, so a call site
/// that has no rule trait for `Call((&a, &b)).dot()` in scope finds this trait's
/// `impl` instead, through a bridge of its own that names `dot`'s [`RuleName`] and
/// leaves `O` to inference. Each rule trait of a `#[differentiable]` `impl` block has
/// one `impl` of this trait, `O` a marker type of that rule trait (so the `impl` is the
/// crate's own, and two rules of one type, `V2 * f64` and `V2 * V2`, do not overlap),
/// delegating to it; rustc picks the one whose rule trait the arguments satisfy. An
/// associated function's rule is also keyed by its name and its type, `N` being
/// `(RuleName<H>, Vec3)` of `Vec3::new`, so that a call written with a path (`V::new(..)`
/// of `use geom::Vec3 as V;`, `geom::Vec3::new(..)`, one of two types named `Pt`) names
/// the type it means.
pub trait OwnedRule<N, O> {
    /// The rule's value.
    type Output;
    /// Its pullback.
    type Pullback;
    /// The value and the pullback.
    fn owned_rule(self) -> (Self::Output, Self::Pullback);
}

/// An argument of a rule call (`Call((&a, &b))`: each value behind one reference more
/// than the caller held it, or as many) as the value a user's method takes: `&V3` from
/// `&V3` or `&&V3`. See `companion.rs`, `method_rule_trait`.
pub trait Peel<T: ?Sized> {
    /// The value.
    fn peel(&self) -> &T;
}
impl<T: ?Sized> Peel<T> for T {
    #[inline(always)]
    fn peel(&self) -> &T {
        self
    }
}
impl<T: ?Sized> Peel<T> for &T {
    #[inline(always)]
    fn peel(&self) -> &T {
        self
    }
}
/// A `Vec` lent where the method takes a slice (`l.forward(&h)` of an `h: Vec<f64>`
/// for a `fn forward(&self, x: &[f64])`), as a call's deref coercion lends it.
impl<T> Peel<[T]> for Vec<T> {
    #[inline(always)]
    fn peel(&self) -> &[T] {
        self
    }
}
impl<T> Peel<[T]> for &Vec<T> {
    #[inline(always)]
    fn peel(&self) -> &[T] {
        self
    }
}

/// A clone of the value behind zero or one reference (see [`Peel`]): what a rule of a
/// method taking `self` by value gives the method, the call borrowing it. Only for a
/// `Clone` type, so that a struct without `Clone` has no such rule (its method is
/// reached by path, `S::consume(s)`) instead of an `impl` that cannot compile.
pub trait PeelOwned<T> {
    /// A clone of the value.
    fn peel_owned(&self) -> T;
}
impl<T: Clone> PeelOwned<T> for T {
    #[inline(always)]
    fn peel_owned(&self) -> T {
        self.clone()
    }
}
impl<T: Clone> PeelOwned<T> for &T {
    #[inline(always)]
    fn peel_owned(&self) -> T {
        (*self).clone()
    }
}

/// [`Present::present`].
#[inline(always)]
pub fn present<W: Present>(w: &W) -> bool {
    w.present()
}

/// `*dst += v` for the cotangent `v` of `w.unwrap()` and the cotangent `dst` of `w`.
#[inline(always)]
#[track_caller]
pub fn acc_unwrapped<W: AccUnwrapped<V>, V>(dst: &mut W, v: V) {
    dst.acc_unwrapped(v)
}

/// `dst[range] += src` for the cotangent `src` of a sub-slice `&x[range]` of a sequence
/// of length `len` whose cotangent is `dst` (a structural zero is written out first; an
/// empty `src` is the structural zero and adds nothing). `src`'s elements are moved out
/// and it is left empty (the structural zero) with its buffer, so that the sub-slice
/// argument of a call inside a loop reuses one buffer on every trip.
#[inline]
#[track_caller]
pub fn acc_range_from<T: TangentVector, D: RangeCotangent<T> + ?Sized>(
    dst: &mut D,
    len: usize,
    range: (std::ops::Bound<usize>, std::ops::Bound<usize>),
    src: &mut Vec<T>,
) {
    if src.is_empty() {
        return;
    }
    let part = &mut dst.dense(len)[range];
    assert_eq!(
        part.len(),
        src.len(),
        "mochi: the cotangent of a sub-slice has {} elements, the sub-slice {}",
        src.len(),
        part.len()
    );
    for (d, s) in part.iter_mut().zip(src.drain(..)) {
        d.accumulate(s);
    }
}

/// The cotangent of a sequence that a sub-slice's cotangent is added into: a `Vec`'s
/// (materialised at the sequence's length when it is a structural zero) or a fixed-size
/// array's (`let a = [x[0], x[1]]; a[..].iter()`).
pub trait RangeCotangent<T> {
    /// The dense cotangent of a sequence of `len` elements.
    fn dense(&mut self, len: usize) -> &mut [T];
}

impl<T: TangentVector> RangeCotangent<T> for Vec<T> {
    #[inline]
    fn dense(&mut self, len: usize) -> &mut [T] {
        if self.len() != len {
            materialise_vec(self, len);
        }
        self
    }
}

impl<T, const N: usize> RangeCotangent<T> for [T; N] {
    #[inline]
    fn dense(&mut self, _len: usize) -> &mut [T] {
        self
    }
}

/// `cmp(a, b)`, for a comparator of `max_by`/`min_by` called on the values of a chain
/// (its parameters typed by the call, as `Iterator::max_by` types them).
#[inline(always)]
pub fn ordering<T: ?Sized>(
    a: &T,
    b: &T,
    cmp: impl FnOnce(&T, &T) -> std::cmp::Ordering,
) -> std::cmp::Ordering {
    cmp(a, b)
}

/// The order of `a` and `b` by `key` (a `max_by_key`'s, written as a loop): the closure
/// gets its argument type here, where a `let` would leave it to inference.
pub fn ordering_by_key<T: ?Sized, K: Ord>(
    a: &T,
    b: &T,
    key: impl Fn(&T) -> K,
) -> std::cmp::Ordering {
    key(a).cmp(&key(b))
}

/// The length of the window `&x[base..end]` of a sequence of length `len`, with the
/// checks of slice indexing (generated code reads a window kept in a local, `let w =
/// &x[a..b];`, through `x` itself: [`window_at`]).
#[inline(always)]
#[track_caller]
pub fn window_len(len: usize, base: usize, end: usize) -> usize {
    if base > end {
        panic!("slice index starts at {base} but ends at {end}");
    }
    if end > len {
        panic!("range end index {end} out of range for slice of length {len}");
    }
    end - base
}

/// How many windows of length `size` an array of length `len` has (ndarray's
/// `windows(size)` of a one-dimensional array, which generated code reads by index):
/// none when `size` is larger.
///
/// # Panics
/// If `size` is zero, as ndarray's `windows` does.
#[inline(always)]
#[track_caller]
pub fn window_count(len: usize, size: usize) -> usize {
    assert!(size > 0, "window size must be greater than zero");
    (len + 1).saturating_sub(size)
}

/// The index in the sequence of element `j` of a window that starts at `base` and holds
/// `len` elements, with the check of indexing the window itself.
#[inline(always)]
#[track_caller]
pub fn window_at(base: usize, j: usize, len: usize) -> usize {
    if j >= len {
        panic!("index out of bounds: the len is {len} but the index is {j}");
    }
    base + j
}

/// The bounds of a range expression, to keep for the reverse sweep.
#[inline(always)]
pub fn range_bounds<R: std::ops::RangeBounds<usize>>(
    r: R,
) -> (std::ops::Bound<usize>, std::ops::Bound<usize>) {
    (r.start_bound().cloned(), r.end_bound().cloned())
}

/// `v.copy_within(src, dest)` of a slice of `len` elements as the macro gathers it:
/// the first position the copy reads, the number of elements, and `dest`; panics where
/// `copy_within` does.
#[inline]
#[track_caller]
pub fn copy_source<R: std::ops::RangeBounds<usize>>(
    src: R,
    dest: usize,
    len: usize,
) -> (usize, usize, usize) {
    use std::ops::Bound;
    let start = match src.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s
            .checked_add(1)
            .expect("attempted to index slice from after maximum usize"),
        Bound::Unbounded => 0,
    };
    let end = match src.end_bound() {
        Bound::Included(&e) => e
            .checked_add(1)
            .expect("attempted to index slice up to maximum usize"),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end,
        "slice index starts at {start} but ends at {end}"
    );
    assert!(
        end <= len,
        "range end index {end} out of range for slice of length {len}"
    );
    let count = end - start;
    assert!(dest <= len - count, "dest is out of bounds");
    (start, count, dest)
}

/// A value with no derivative, which a macro in differentiable code may take: the
/// check `#[differentiable]` puts before a macro that mentions an active name (an index
/// the activity analysis counted active, `s![.., n]` with `n = x.nrows()`).
#[diagnostic::on_unimplemented(
    message = "mochi: a macro cannot be differentiated, and this one is given a value of type `{Self}`, which carries a derivative",
    label = "expand the macro by hand, or wrap the value in `mochi::no_grad(..)`"
)]
pub trait Constant {}

macro_rules! constant_types {
    ($($t:ty),*) => {
        $(impl Constant for $t {})*
    };
}
use crate::NoTangent;
crate::tangent::for_no_tangent_types!(constant_types);
impl<T: Constant + ?Sized> Constant for &T {}
impl<T: Constant + ?Sized> Constant for &mut T {}
impl<T: Constant> Constant for [T] {}
impl<T: Constant, const N: usize> Constant for [T; N] {}
impl<T: Constant> Constant for Vec<T> {}
impl<T: Constant> Constant for Option<T> {}
impl<T: Constant> Constant for std::ops::Range<T> {}
impl<T: Constant> Constant for std::ops::RangeInclusive<T> {}
macro_rules! constant_tuples {
    ($(($($T:ident),+))*) => {$(impl<$($T: Constant),+> Constant for ($($T,)+) {})*};
}
constant_tuples! { (A) (A, B) (A, B, C) (A, B, C, D) }
#[cfg(feature = "ndarray")]
impl<I> Constant for ndarray::Dim<I> {}
#[cfg(feature = "ndarray")]
impl Constant for ndarray::Axis {}

/// Checks at compile time that a value a macro takes carries no derivative
/// ([`Constant`]).
#[inline(always)]
pub fn constant_in_macro<T: Constant + ?Sized>(_value: &T) {}

/// A vector result's entries in order, and back: how `jvp` and `jacobian` read the
/// result of a function returning a fixed-size array `[T; N]` or a tuple of floats
/// `(T, T, ..)` (up to 12), and shape their value and rows like it.
pub trait OutputParts<E>: Sized {
    /// The entries, in order.
    fn into_parts(self) -> Vec<E>;
    /// The result of these entries (as many as the result holds).
    fn from_parts(v: Vec<E>) -> Self;
}

impl<E, const N: usize> OutputParts<E> for [E; N] {
    #[inline]
    fn into_parts(self) -> Vec<E> {
        Vec::from(self)
    }
    #[inline]
    fn from_parts(v: Vec<E>) -> Self {
        let n = v.len();
        match v.try_into() {
            Ok(a) => a,
            Err(_) => unreachable!("mochi: {n} entries for a result of {N}"),
        }
    }
}

macro_rules! output_parts_of_tuples {
    ($(($($t:ident)+))*) => {$(
        impl<E> OutputParts<E> for ($(output_parts_of_tuples!(@e $t),)+) {
            #[inline]
            fn into_parts(self) -> Vec<E> {
                let ($($t,)+) = self;
                vec![$($t),+]
            }
            #[inline]
            fn from_parts(v: Vec<E>) -> Self {
                let n = v.len();
                let mut it = v.into_iter();
                ($(output_parts_of_tuples!(@next it n $t),)+)
            }
        }
    )*};
    (@e $t:ident) => { E };
    (@next $it:ident $n:ident $t:ident) => {
        match $it.next() {
            Some(e) => e,
            None => unreachable!("mochi: {} entries for a tuple result", $n),
        }
    };
}

output_parts_of_tuples! {
    (a b) (a b c) (a b c d) (a b c d e) (a b c d e f) (a b c d e f g) (a b c d e f g h)
    (a b c d e f g h i) (a b c d e f g h i j) (a b c d e f g h i j k)
    (a b c d e f g h i j k l)
}

/// [`OutputParts::into_parts`].
#[inline]
pub fn into_parts<E, O: OutputParts<E>>(o: O) -> Vec<E> {
    o.into_parts()
}

/// [`OutputParts::from_parts`].
#[inline]
pub fn from_parts<E, O: OutputParts<E>>(v: Vec<E>) -> O {
    O::from_parts(v)
}

/// `no_grad(e)` in code that may run on [`Dual`](crate::Dual) numbers (a function's
/// generic form, a function generic over its scalar): the value of `e` with every
/// partial zero, so that no derivative flows through it in forward mode either (as none
/// flows in reverse mode). `#[differentiable]` writes a user's `no_grad(e)` there as
/// `no_grad({ use StopStrip as _; …; (&&&Stop::new(e)).stop() })`, which method
/// resolution reads in that order: a value whose type has [`NoPartials`] (a scalar, a
/// `Vec`, an array, a tuple or an `Option` of them) loses its partials; a value (or a
/// `Vec` of values) of a type bounded by `num_traits::Float` alone is converted to
/// `f64` and back; any other (an integer, a slice, a value of the user's) is passed as
/// it is.
///
/// ```
/// use mochi_core::private::{Stop, StopFloat as _, StopKeep as _, StopStrip as _};
/// use mochi_core::Dual;
/// let d = (&&&Stop::new(Dual::new(2.0, [1.0]))).stop();
/// assert_eq!((d.value, d.partials), (2.0, [0.0]));
/// let n = (&&&Stop::new(3_usize)).stop();
/// assert_eq!(n, 3);
/// ```
pub struct Stop<T>(std::cell::Cell<Option<T>>);

impl<T> Stop<T> {
    /// Holds `value` until [`stop`](StopStrip::stop) takes it.
    #[inline(always)]
    pub fn new(value: T) -> Self {
        Stop(std::cell::Cell::new(Some(value)))
    }
    #[inline(always)]
    fn take(&self) -> T {
        match self.0.take() {
            Some(v) => v,
            None => unreachable!("mochi: a Stop is read once"),
        }
    }
}

/// See [`Stop`]: a value whose partials can be set to zero.
pub trait NoPartials {
    /// The value, its partials zero (the identity on `f64` and `f32`).
    fn no_partials(self) -> Self;
}

impl NoPartials for f64 {
    #[inline(always)]
    fn no_partials(self) -> f64 {
        self
    }
}
impl NoPartials for f32 {
    #[inline(always)]
    fn no_partials(self) -> f32 {
        self
    }
}
impl<const N: usize> NoPartials for crate::Dual<N> {
    #[inline(always)]
    fn no_partials(self) -> Self {
        crate::Dual {
            value: self.value,
            partials: [0.0; N],
        }
    }
}
impl<T: NoPartials> NoPartials for Vec<T> {
    fn no_partials(self) -> Self {
        self.into_iter().map(NoPartials::no_partials).collect()
    }
}
impl<T: NoPartials, const N: usize> NoPartials for [T; N] {
    fn no_partials(self) -> Self {
        self.map(NoPartials::no_partials)
    }
}
impl<T: NoPartials> NoPartials for Option<T> {
    fn no_partials(self) -> Self {
        self.map(NoPartials::no_partials)
    }
}
impl<A: NoPartials, B: NoPartials> NoPartials for (A, B) {
    fn no_partials(self) -> Self {
        (self.0.no_partials(), self.1.no_partials())
    }
}
impl<A: NoPartials, B: NoPartials, C: NoPartials> NoPartials for (A, B, C) {
    fn no_partials(self) -> Self {
        (
            self.0.no_partials(),
            self.1.no_partials(),
            self.2.no_partials(),
        )
    }
}

/// [`Stop`] of a value with [`NoPartials`]: its partials zeroed.
pub trait StopStrip {
    /// The value's type.
    type Out;
    /// The value without partials.
    fn stop(self) -> Self::Out;
}
impl<T: NoPartials> StopStrip for &&&Stop<T> {
    type Out = T;
    #[inline(always)]
    fn stop(self) -> T {
        self.take().no_partials()
    }
}

/// [`Stop`] of a value of a type bounded by `num_traits::Float` alone (a function
/// generic over `T: Float`): through `f64` and back, which keeps the value and drops
/// the partials.
pub trait StopFloat {
    /// The value's type.
    type Out;
    /// The value without partials.
    fn stop(self) -> Self::Out;
}
impl<T: num_traits::Float> StopFloat for &&Stop<T> {
    type Out = T;
    #[inline(always)]
    fn stop(self) -> T {
        let v = self.take();
        v.to_f64().and_then(T::from).unwrap_or(v)
    }
}

/// [`Stop`] of a `Vec` of a type bounded by `num_traits::Float` alone: each element
/// through `f64` and back.
pub trait StopFloats {
    /// The value's type.
    type Out;
    /// The value without partials.
    fn stop(self) -> Self::Out;
}
impl<T: num_traits::Float> StopFloats for &&Stop<Vec<T>> {
    type Out = Vec<T>;
    fn stop(self) -> Vec<T> {
        self.take()
            .into_iter()
            .map(|v| v.to_f64().and_then(T::from).unwrap_or(v))
            .collect()
    }
}

/// [`Stop`] of any other value: the value as it is.
pub trait StopKeep {
    /// The value's type.
    type Out;
    /// The value.
    fn stop(self) -> Self::Out;
}
impl<T> StopKeep for &Stop<T> {
    type Out = T;
    #[inline(always)]
    fn stop(self) -> T {
        self.take()
    }
}

/// A two-argument pullback with its arguments swapped: the rule of `s * v` with a float
/// on the left (`impl Mul<V2> for f64`), which runs the rule of the struct's hidden
/// method `v.__mochi_f64_mul(s)` and hands its cotangents back in the operator's order.
pub struct SwapPullback<P>(pub P);

impl<P, A, B> crate::Pullback for SwapPullback<P>
where
    P: crate::Pullback<Args = (A, B)>,
    A: TangentVector,
    B: TangentVector,
{
    type Output = P::Output;
    type Args = (B, A);
    #[inline(always)]
    fn pullback(self, output: P::Output, (b, a): (&mut B, &mut A)) {
        self.0.pullback(output, (a, b))
    }
}
