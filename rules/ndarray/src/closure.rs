//! Adapters that take a closure: `mapv`, `map`, `fold`, and `zip_map`, which
//! `Zip::from(&a).and(&b).map_collect(|&x, &y| …)` runs: `Zip::from(&a)` and `.and(&b)`
//! are rules building the operands as a tuple of views, and `.map_collect(f)` on that
//! tuple is the closure adapter.
//!
//! `#[differentiable]` turns the user's closure into a *derived closure* that
//! returns the element's value and its pullback, and passes the closure's captured
//! variables as one tuple `caps` (`()` when it captures nothing). The forward pass
//! runs the derived closure on every element in logical (row-major) order and keeps
//! the element pullbacks; the reverse pass runs them backwards, adding each
//! element's cotangent into the array's accumulator and the captures' cotangents into
//! the one captures accumulator.

use crate::cotangent::{dense, view};
use crate::Elem;
use mochi_core::kit::rule_trait;
use mochi_core::{Call, Pullback, Tangent, TangentVector};
use ndarray::{Array, ArrayBase, ArrayView, Data, Dimension, Zip};
use std::marker::PhantomData;

/// `x.mapv(f)`: `Call((&x, &caps)).mapv(derived)`, the derived closure taking the
/// element by value.
pub trait NdMapv<F> {
    /// The primal output.
    type Output;
    /// The pullback.
    type Pullback: Pullback;
    /// Maps every element through the derived closure.
    fn mapv(self, f: F) -> (Self::Output, Self::Pullback);
}

/// `x.map(f)`: `Call((&x, &caps)).map(derived)`, the derived closure taking the
/// element by reference.
pub trait NdMap<F> {
    /// The primal output.
    type Output;
    /// The pullback.
    type Pullback: Pullback;
    /// Maps every element through the derived closure.
    fn map(self, f: F) -> (Self::Output, Self::Pullback);
}

/// Two arrays' elements in pairs through a derived closure: `Call((&a, &b,
/// &caps)).zip_map(derived)`, the derived closure taking both elements by value (what
/// `.map_collect(f)` of `Zip::from(&a).and(&b)` runs).
pub trait NdZipMap<F> {
    /// The primal output.
    type Output;
    /// The pullback.
    type Pullback: Pullback;
    /// Maps every pair of elements through the derived closure.
    fn zip_map(self, f: F) -> (Self::Output, Self::Pullback);
}

/// `x.fold(init, f)`: `Call((&x, &init, &caps)).fold(derived)`, the derived closure
/// taking the accumulator by value and the element by reference.
pub trait NdFold<F> {
    /// The primal output.
    type Output;
    /// The pullback.
    type Pullback: Pullback;
    /// Folds the elements, in logical order, through the derived closure.
    fn fold(self, f: F) -> (Self::Output, Self::Pullback);
}

rule_trait! {
    /// `Zip::from(&a)`: `Call((&a,)).zip_from()`, the zip's operands as the tuple
    /// `(a.view(),)`.
    NdZipFrom::zip_from
}
rule_trait! {
    /// `zip.and(&b)` of the operands `Zip::from` made: `Call((&zip, &b)).and()`, the
    /// tuple `(a_view, b.view())`.
    NdZipAnd::and
}

/// `zip.map_collect(f)` of two operands: `Call((&(a, b), &caps)).map_collect(derived)`,
/// the derived closure taking both elements by value.
pub trait NdMapCollect<F> {
    /// The primal output.
    type Output;
    /// The pullback.
    type Pullback: Pullback;
    /// Maps every pair of elements through the derived closure.
    fn map_collect(self, f: F) -> (Self::Output, Self::Pullback);
}

/// Pullback of `Zip::from(&a)`: `ā += z̄.0`. Zero-sized.
pub struct ZipFromPullback<T, D>(PhantomData<fn() -> (T, D)>);

impl<T: Elem, D: Dimension> Pullback for ZipFromPullback<T, D> {
    type Output = (Array<T, D>,);
    type Args = (Array<T, D>,);
    #[inline(always)]
    #[track_caller]
    fn pullback(self, (dz,): (Array<T, D>,), (da,): (&mut Array<T, D>,)) {
        da.accumulate(dz);
    }
}

impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension> NdZipFrom for Call<(&'a ArrayBase<S, D>,)> {
    type Output = (ArrayView<'a, T, D>,);
    type Pullback = ZipFromPullback<T, D>;
    #[inline(always)]
    fn zip_from(self) -> (Self::Output, Self::Pullback) {
        ((self.0 .0.view(),), ZipFromPullback(PhantomData))
    }
}

/// Pullback of `zip.and(&b)`: `z̄.0 += ȳ.0`, `b̄ += ȳ.1`. Zero-sized.
pub struct ZipAndPullback<T, D>(PhantomData<fn() -> (T, D)>);

impl<T: Elem, D: Dimension> Pullback for ZipAndPullback<T, D> {
    type Output = (Array<T, D>, Array<T, D>);
    type Args = ((Array<T, D>,), Array<T, D>);
    #[inline(always)]
    #[track_caller]
    fn pullback(
        self,
        (da, db): (Array<T, D>, Array<T, D>),
        (dz, dbacc): (&mut (Array<T, D>,), &mut Array<T, D>),
    ) {
        dz.0.accumulate(da);
        dbacc.accumulate(db);
    }
}

impl<'a, 'b, T: Elem, S: Data<Elem = T>, D: Dimension> NdZipAnd
    for Call<(&(ArrayView<'a, T, D>,), &'b ArrayBase<S, D>)>
{
    type Output = (ArrayView<'a, T, D>, ArrayView<'b, T, D>);
    type Pullback = ZipAndPullback<T, D>;
    #[inline(always)]
    fn and(self) -> (Self::Output, Self::Pullback) {
        let (z, b) = self.0;
        ((z.0.clone(), b.view()), ZipAndPullback(PhantomData))
    }
}

/// Pullback of `map_collect` on two operands: the pairs' pullback, its accumulators
/// taken from the operands' tuple.
pub struct MapCollectPullback<P, D>(ZipMapPullback<P, D>);

impl<T, D, O, C, P> Pullback for MapCollectPullback<P, D>
where
    T: Elem,
    D: Dimension,
    O: TangentVector,
    C: TangentVector,
    P: Pullback<Output = O, Args = (T, T, C)>,
{
    type Output = Array<O, D>;
    type Args = ((Array<T, D>, Array<T, D>), C);
    #[inline]
    #[track_caller]
    fn pullback(self, dy: Array<O, D>, (dz, dcaps): (&mut (Array<T, D>, Array<T, D>), &mut C)) {
        self.0.pullback(dy, (&mut dz.0, &mut dz.1, dcaps));
    }
}

impl<'a, 'b, T, D, C, F, O, P> NdMapCollect<F>
    for Call<(&(ArrayView<'a, T, D>, ArrayView<'b, T, D>), &C)>
where
    T: Elem,
    D: Dimension,
    C: Tangent,
    F: FnMut(T, T, &C) -> (O, P),
    O: Tangent,
    P: Pullback<Output = O::Tangent, Args = (T, T, C::Tangent)>,
{
    type Output = Array<O, D>;
    type Pullback = MapCollectPullback<P, D>;
    #[inline]
    #[track_caller]
    fn map_collect(self, f: F) -> (Self::Output, Self::Pullback) {
        let (z, caps) = self.0;
        let (y, pb) = Call((&z.0, &z.1, caps)).zip_map(f);
        (y, MapCollectPullback(pb))
    }
}

/// A view of `x` with every axis reversed: its logical order is `x`'s backwards, in
/// any memory layout and without a copy.
fn backwards<T, D: Dimension>(mut v: ndarray::ArrayView<'_, T, D>) -> ndarray::ArrayView<'_, T, D> {
    (0..v.ndim()).for_each(|k| v.invert_axis(ndarray::Axis(k)));
    v
}

/// The dense accumulator of `dim`'s shape, viewed backwards (see [`backwards`]).
#[track_caller]
fn backwards_mut<'c, T: Elem, D: Dimension>(
    acc: &'c mut Array<T, D>,
    dim: &D,
) -> ndarray::ArrayViewMut<'c, T, D> {
    let mut v = dense(acc, dim).view_mut();
    (0..v.ndim()).for_each(|k| v.invert_axis(ndarray::Axis(k)));
    v
}

/// The array of values and the pullbacks of a derived closure over `x`'s elements, as
/// ndarray's `map` makes them: a standard-layout array in logical order (a plain loop
/// over its slice: the element iterator checks its layout on every step); another
/// array contiguous in memory in memory order, the result laid out as `x` (a
/// transposed view maps to a column-major array, which a later `fold` walks by
/// columns), with the logical positions of the visits; any other in logical order.
#[inline(always)]
fn map_elements<T, S, D, O, P>(
    x: &ArrayBase<S, D>,
    mut f: impl FnMut(&T) -> (O, P),
) -> (Array<O, D>, Vec<P>, Option<Vec<usize>>)
where
    S: Data<Elem = T>,
    D: Dimension,
{
    let mut pullbacks = Vec::with_capacity(x.len());
    // The values collected from a `map` (not pushed beside the pullbacks): in that shape
    // LLVM fuses a `sin` and a `cos` of one element into one `sincos` call, which the
    // pushing loop lost (`sum_sin_1000` 1.48 → 2.31 times its primal).
    let mut one = |v: &T| {
        let (y, pb) = f(v);
        pullbacks.push(pb);
        y
    };
    if let Some(xs) = x.as_slice() {
        let values: Vec<O> = xs.iter().map(&mut one).collect();
        let y = Array::from_shape_vec(x.raw_dim(), values).expect("one value per element");
        return (y, pullbacks, None);
    }
    if x.as_slice_memory_order().is_some() {
        let y = x.map(&mut one);
        return (y, pullbacks, Some(memory_order(x)));
    }
    let values: Vec<O> = x.iter().map(&mut one).collect();
    let y = Array::from_shape_vec(x.raw_dim(), values).expect("one value per element");
    (y, pullbacks, None)
}

/// The logical positions `0..n` of `x`'s elements, in an array of `x`'s shape.
fn positions<T, S: Data<Elem = T>, D: Dimension>(x: &ArrayBase<S, D>) -> Array<usize, D> {
    Array::from_shape_vec(x.raw_dim(), (0..x.len()).collect::<Vec<usize>>())
        .expect("one position per element")
}

/// The logical positions of `x`'s elements in memory order (`x` contiguous in memory):
/// every axis walked towards higher addresses, the axes by decreasing stride.
fn memory_order<T, S: Data<Elem = T>, D: Dimension>(x: &ArrayBase<S, D>) -> Vec<usize> {
    let positions = positions(x);
    let mut view = positions.view();
    let strides: Vec<isize> = x.strides().to_vec();
    for (k, s) in strides.iter().enumerate() {
        if *s < 0 {
            view.invert_axis(ndarray::Axis(k));
        }
    }
    let mut axes: Vec<usize> = (0..x.ndim()).collect();
    axes.sort_by_key(|&k| std::cmp::Reverse(strides[k].unsigned_abs()));
    let mut permutation = x.raw_dim();
    for (k, a) in axes.into_iter().enumerate() {
        permutation[k] = a;
    }
    view.permuted_axes(permutation).iter().copied().collect()
}

/// The element pullbacks may run in logical order rather than backwards: they are
/// independent (a closure reads its captures, it does not write them, and the
/// captures' cotangents only add up), and without drop glue none holds a tape whose
/// carved stacks are best read back last-made first. Forwards over the slices of
/// standard-layout arrays is a plain loop; the reversed views index every element
/// (a third of `simple_mlp`'s `relu` pullback).
#[inline(always)]
fn forwards_ok<P>() -> bool {
    !std::mem::needs_drop::<P>()
}

/// `ȳ` read in logical order without indexing: its slice, or, for the broadcast form of
/// one value (every stride zero: the cotangent `sum` hands back), that value repeated.
/// `None` for any other layout.
fn seeds<'a, O, D: Dimension>(dy: &'a ArrayView<'_, O, D>) -> Option<Seeds<'a, O>> {
    if let Some(s) = dy.as_slice() {
        return Some(Seeds::Slice(s));
    }
    if dy.strides().iter().all(|&s| s == 0) {
        return dy.iter().next().map(Seeds::One);
    }
    None
}

enum Seeds<'a, O> {
    Slice(&'a [O]),
    One(&'a O),
}

/// Pullback of `mapv`/`map`: the element pullbacks in logical order.
pub struct MapPullback<P, D> {
    dim: D,
    pullbacks: Vec<P>,
    /// The logical positions of the elements in the order they were mapped, when not
    /// the logical order (see `map_elements`).
    order: Option<Vec<usize>>,
}

impl<T, D, O, C, P> Pullback for MapPullback<P, D>
where
    T: Elem,
    D: Dimension,
    O: TangentVector,
    C: TangentVector,
    P: Pullback<Output = O, Args = (T, C)>,
{
    type Output = Array<O, D>;
    type Args = (Array<T, D>, C);
    #[track_caller]
    fn pullback(self, dy: Array<O, D>, (dx, dcaps): (&mut Array<T, D>, &mut C)) {
        // A broadcast-form `ȳ` is read through its expansion (zero strides, no copy).
        let Some(dy) = view(&dy, &self.dim) else {
            return;
        };
        let dx = dense(dx, &self.dim);
        if let Some(order) = self.order {
            let dys: Vec<&O> = dy.iter().collect();
            let mut dxs: Vec<&mut T> = dx.iter_mut().collect();
            for (pb, k) in self.pullbacks.into_iter().zip(order) {
                pb.pullback(dys[k].clone(), (&mut *dxs[k], &mut *dcaps));
            }
            return;
        }
        if let (true, Some(dys), Some(dxs)) = (forwards_ok::<P>(), seeds(&dy), dx.as_slice_mut()) {
            match dys {
                Seeds::Slice(dys) => {
                    for ((pb, dyi), dxi) in self.pullbacks.into_iter().zip(dys).zip(dxs) {
                        pb.pullback(dyi.clone(), (dxi, &mut *dcaps));
                    }
                }
                Seeds::One(d) => {
                    for (pb, dxi) in self.pullbacks.into_iter().zip(dxs) {
                        pb.pullback(d.clone(), (dxi, &mut *dcaps));
                    }
                }
            }
            return;
        }
        let mut dxs = backwards_mut(dx, &self.dim);
        let pairs = self
            .pullbacks
            .into_iter()
            .rev()
            .zip(backwards(dy))
            .zip(dxs.iter_mut());
        for ((pb, dyi), dxi) in pairs {
            pb.pullback(dyi.clone(), (dxi, &mut *dcaps));
        }
    }
}

impl<T, S, D, C, F, O, P> NdMapv<F> for Call<(&ArrayBase<S, D>, &C)>
where
    T: Elem,
    S: Data<Elem = T>,
    D: Dimension,
    C: Tangent,
    F: FnMut(T, &C) -> (O, P),
    O: Tangent,
    P: Pullback<Output = O::Tangent, Args = (T, C::Tangent)>,
{
    type Output = Array<O, D>;
    type Pullback = MapPullback<P, D>;
    fn mapv(self, mut f: F) -> (Self::Output, Self::Pullback) {
        let (x, caps) = self.0;
        let (y, pullbacks, order) = map_elements(x, |&v| f(v, caps));
        (
            y,
            MapPullback {
                dim: x.raw_dim(),
                pullbacks,
                order,
            },
        )
    }
}

impl<T, S, D, C, F, O, P> NdMap<F> for Call<(&ArrayBase<S, D>, &C)>
where
    T: Elem,
    S: Data<Elem = T>,
    D: Dimension,
    C: Tangent,
    F: FnMut(&T, &C) -> (O, P),
    O: Tangent,
    P: Pullback<Output = O::Tangent, Args = (T, C::Tangent)>,
{
    type Output = Array<O, D>;
    type Pullback = MapPullback<P, D>;
    fn map(self, mut f: F) -> (Self::Output, Self::Pullback) {
        let (x, caps) = self.0;
        let (y, pullbacks, order) = map_elements(x, |v| f(v, caps));
        (
            y,
            MapPullback {
                dim: x.raw_dim(),
                pullbacks,
                order,
            },
        )
    }
}

/// Pullback of `zip_map`: the element pullbacks in logical order.
pub struct ZipMapPullback<P, D> {
    dim: D,
    pullbacks: Vec<P>,
}

impl<T, D, O, C, P> Pullback for ZipMapPullback<P, D>
where
    T: Elem,
    D: Dimension,
    O: TangentVector,
    C: TangentVector,
    P: Pullback<Output = O, Args = (T, T, C)>,
{
    type Output = Array<O, D>;
    type Args = (Array<T, D>, Array<T, D>, C);
    #[track_caller]
    fn pullback(
        self,
        dy: Array<O, D>,
        (da, db, dcaps): (&mut Array<T, D>, &mut Array<T, D>, &mut C),
    ) {
        let Some(dy) = view(&dy, &self.dim) else {
            return;
        };
        let (da, db) = (dense(da, &self.dim), dense(db, &self.dim));
        if let (true, Some(dys), Some(das), Some(dbs)) = (
            forwards_ok::<P>(),
            seeds(&dy),
            da.as_slice_mut(),
            db.as_slice_mut(),
        ) {
            let pairs = self.pullbacks.into_iter().zip(das.iter_mut().zip(dbs));
            match dys {
                Seeds::Slice(dys) => {
                    for ((pb, (dai, dbi)), dyi) in pairs.zip(dys) {
                        pb.pullback(dyi.clone(), (dai, dbi, &mut *dcaps));
                    }
                }
                Seeds::One(d) => {
                    for (pb, (dai, dbi)) in pairs {
                        pb.pullback(d.clone(), (dai, dbi, &mut *dcaps));
                    }
                }
            }
            return;
        }
        let mut das = backwards_mut(da, &self.dim);
        let mut dbs = backwards_mut(db, &self.dim);
        let items = self
            .pullbacks
            .into_iter()
            .rev()
            .zip(backwards(dy))
            .zip(das.iter_mut())
            .zip(dbs.iter_mut());
        for (((pb, dyi), dai), dbi) in items {
            pb.pullback(dyi.clone(), (dai, dbi, &mut *dcaps));
        }
    }
}

impl<T, S1, S2, D, C, F, O, P> NdZipMap<F> for Call<(&ArrayBase<S1, D>, &ArrayBase<S2, D>, &C)>
where
    T: Elem,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D: Dimension,
    C: Tangent,
    F: FnMut(T, T, &C) -> (O, P),
    O: Tangent,
    P: Pullback<Output = O::Tangent, Args = (T, T, C::Tangent)>,
{
    type Output = Array<O, D>;
    type Pullback = ZipMapPullback<P, D>;
    #[track_caller]
    fn zip_map(self, mut f: F) -> (Self::Output, Self::Pullback) {
        let (a, b, caps) = self.0;
        // Zip checks the shapes and panics as `map_collect` would on a mismatch.
        let _ = Zip::from(a).and(b);
        let mut pullbacks = Vec::with_capacity(a.len());
        // Collected from a `map`, as in `map_elements`.
        let mut one = |(&u, &v): (&T, &T)| {
            let (y, pb) = f(u, v, caps);
            pullbacks.push(pb);
            y
        };
        let values: Vec<O> = match (a.as_slice(), b.as_slice()) {
            (Some(us), Some(vs)) => us.iter().zip(vs).map(&mut one).collect(),
            _ => a.iter().zip(b.iter()).map(&mut one).collect(),
        };
        let y = Array::from_shape_vec(a.raw_dim(), values).expect("one value per element");
        (
            y,
            ZipMapPullback {
                dim: a.raw_dim(),
                pullbacks,
            },
        )
    }
}

/// Pullback of `fold`: the element pullbacks in the order `fold` visited the elements
/// (`order`: their logical positions, when not the logical order).
pub struct FoldPullback<P, D> {
    dim: D,
    pullbacks: Vec<P>,
    order: Option<Vec<usize>>,
}

impl<T, D, A, C, P> Pullback for FoldPullback<P, D>
where
    T: Elem,
    D: Dimension,
    A: TangentVector,
    C: TangentVector,
    P: Pullback<Output = A, Args = (A, T, C)>,
{
    type Output = A;
    type Args = (Array<T, D>, A, C);
    #[track_caller]
    fn pullback(self, dy: A, (dx, dinit, dcaps): (&mut Array<T, D>, &mut A, &mut C)) {
        let mut dacc = dy;
        match self.order {
            None => {
                let mut dxs = backwards_mut(dx, &self.dim);
                for (pb, dxi) in self.pullbacks.into_iter().rev().zip(dxs.iter_mut()) {
                    let mut dprev = A::zero();
                    pb.pullback(dacc, (&mut dprev, dxi, &mut *dcaps));
                    dacc = dprev;
                }
            }
            Some(order) => {
                let mut dxs: Vec<&mut T> = dense(dx, &self.dim).iter_mut().collect();
                for (pb, k) in self
                    .pullbacks
                    .into_iter()
                    .rev()
                    .zip(order.into_iter().rev())
                {
                    let mut dprev = A::zero();
                    pb.pullback(dacc, (&mut dprev, &mut *dxs[k], &mut *dcaps));
                    dacc = dprev;
                }
            }
        }
        dinit.accumulate(dacc);
    }
}

impl<T, S, D, A, C, F, P> NdFold<F> for Call<(&ArrayBase<S, D>, &A, &C)>
where
    T: Elem,
    S: Data<Elem = T>,
    D: Dimension,
    A: Tangent + Clone,
    C: Tangent,
    F: FnMut(A, &T, &C) -> (A, P),
    P: Pullback<Output = A::Tangent, Args = (A::Tangent, T, C::Tangent)>,
{
    type Output = A;
    type Pullback = FoldPullback<P, D>;
    fn fold(self, mut f: F) -> (A, Self::Pullback) {
        let (x, init, caps) = self.0;
        let mut pullbacks = Vec::with_capacity(x.len());
        let mut acc = init.clone();
        let order = fold_order(x);
        match &order {
            None => {
                for v in x.iter() {
                    let (next, pb) = f(acc, v, caps);
                    pullbacks.push(pb);
                    acc = next;
                }
            }
            Some(order) => {
                let xs: Vec<&T> = x.iter().collect();
                for &k in order {
                    let (next, pb) = f(acc, xs[k], caps);
                    pullbacks.push(pb);
                    acc = next;
                }
            }
        }
        (
            acc,
            FoldPullback {
                dim: x.raw_dim(),
                pullbacks,
                order,
            },
        )
    }
}

/// The order in which `ArrayBase::fold` visits `x`'s elements, as positions in logical
/// order, when it is not the logical order: ndarray folds a contiguous array in memory
/// order (a reversed slice backwards, a transposed view by columns) and any other in
/// the logical order of a view whose smallest stride is moved last. An order-dependent
/// fold (`acc * 0.5 + v`) then gives the plain call's value only if the rule visits the
/// elements as ndarray does. `None`: the logical order (standard layout).
fn fold_order<T, S: Data<Elem = T>, D: Dimension>(x: &ArrayBase<S, D>) -> Option<Vec<usize>> {
    if x.is_standard_layout() || x.ndim() == 0 {
        return None;
    }
    if x.as_slice_memory_order().is_some() {
        return Some(memory_order(x));
    }
    // The logical positions, walked as ndarray walks `x`.
    let positions = positions(x);
    let mut view = positions.view();
    let strides: Vec<isize> = x.strides().to_vec();
    // ndarray's `move_min_stride_axis_to_last`.
    let n = x.ndim();
    let dim = x.shape();
    let last = match n {
        1 => None,
        2 => (dim[1] <= 1 || dim[0] > 1 && strides[0].abs() < strides[1].abs()).then_some(0),
        _ => (0..n)
            .filter(|&ax| dim[ax] > 1)
            .min_by_key(|&ax| strides[ax].abs())
            .filter(|&ax| ax != n - 1),
    };
    if let Some(ax) = last {
        view.swap_axes(ax, n - 1);
    }
    Some(view.iter().copied().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, TestElem};
    use mochi_core::testing::RuleTest;
    use mochi_core::Real as _;
    use mochi_core::{FnPullback, NoTangent};
    use ndarray::Ix2;

    // Derived closures written by hand, as `#[differentiable]` would emit them.

    /// `|v| (v * c).sin()` capturing `c`: returns the value and the element pullback.
    fn sin_scaled<T: Elem>(v: T, caps: &(T,)) -> (T, impl Pullback<Output = T, Args = (T, (T,))>) {
        let c = caps.0;
        let y = (v * c).sin();
        let pb = FnPullback::new(move |dy: T, (dv, dcaps): (&mut T, &mut (T,))| {
            let d = (v * c).cos() * dy; // d sin(vc) = cos(vc)·(c dv + v dc)
            *dv += d * c;
            dcaps.0 += d * v;
        });
        (y, pb)
    }

    fn maps<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 3), Ix2(3, 4)] {
            for (_, x) in layouts::<T, _>(shape, 80) {
                // An array contiguous in memory but not in standard order is mapped in
                // memory order, laid out as `x` (as ndarray does); its pullback gathers
                // the elements in that order, which allocates.
                let ordered = !x.is_standard_layout() && x.as_slice_memory_order().is_some();
                let args = (x, (T::of_f64(0.7),));
                let test = RuleTest::new(
                    args.clone(),
                    |a| a.0.mapv(|v| (v * a.1 .0).sin()),
                    |a| Call((&a.0, &a.1)).mapv(sin_scaled),
                )
                .forward(|a| a.0.mapv(|v| (v * a.1 .0).sin()))
                .tolerance(T::RTOL, T::ATOL);
                if ordered {
                    test.run()
                } else {
                    test.expect_no_alloc().run()
                }
                let test = RuleTest::new(
                    args,
                    |a| a.0.map(|v| (*v * a.1 .0).sin()),
                    |a| Call((&a.0, &a.1)).map(|v: &T, caps: &(T,)| sin_scaled(*v, caps)),
                )
                .forward(|a| a.0.map(|v| (*v * a.1 .0).sin()))
                .tolerance(T::RTOL, T::ATOL);
                if ordered {
                    test.run()
                } else {
                    test.expect_no_alloc().run()
                }
            }
        }
    }

    /// The one-value broadcast form of `ȳ` (what `sum`'s pullback hands back) is read as
    /// that value repeated; a form broadcast along one axis only, through its expansion.
    /// Both give what the dense `ȳ` gives, for `mapv` and `zip_map`.
    #[test]
    fn a_broadcast_cotangent_gives_what_its_expansion_gives() {
        let x = Array::from_shape_fn((3, 4), |(i, j)| 0.1 * i as f64 - 0.2 * j as f64);
        let caps = (0.7,);
        let forms = [
            Array::from_elem((1, 1), 0.3),
            Array::from_shape_fn((1, 4), |(_, j)| 0.3 + 0.1 * j as f64),
        ];
        for form in forms {
            let dense = form.broadcast((3, 4)).unwrap().to_owned();
            let pull = |dy: Array<f64, Ix2>| {
                let (_, pb) = Call((&x, &caps)).mapv(sin_scaled);
                let (mut dx, mut dc) = (Array::zeros((3, 4)), (0.0,));
                pb.pullback(dy, (&mut dx, &mut dc));
                (dx, dc)
            };
            let pull_zip = |dy: Array<f64, Ix2>| {
                let (_, pb) = Call((&x, &x, &())).zip_map(times_exp);
                let (mut da, mut db) = (Array::zeros((3, 4)), Array::zeros((3, 4)));
                pb.pullback(dy, (&mut da, &mut db, &mut NoTangent));
                (da, db)
            };
            let (want, got) = (pull(dense.clone()), pull(form.clone()));
            assert_eq!(got, want, "form {form:?}");
            assert_eq!(
                pull_zip(form.clone()),
                pull_zip(dense),
                "zip_map, form {form:?}"
            );
            // The values themselves: ∂ sin(0.7 v)/∂v = 0.7 cos(0.7 v), times ȳ.
            let (dx, _) = got;
            let d = &form.broadcast((3, 4)).unwrap();
            let closed = Zip::from(&x)
                .and(d)
                .map_collect(|&v, &g| g * 0.7 * (0.7 * v).cos());
            assert!(dx.iter().zip(&closed).all(|(a, b)| (a - b).abs() < 1e-15));
        }
    }

    #[test]
    fn mapv_and_map_with_a_capture() {
        maps::<f64>();
        maps::<f32>();
    }

    /// `|x, y| x * y.exp()`, no captures.
    fn times_exp<T: Elem>(
        x: T,
        y: T,
        _: &(),
    ) -> (T, impl Pullback<Output = T, Args = (T, T, NoTangent)>) {
        let e = y.exp();
        let pb = FnPullback::new(
            move |dz: T, (dx, dy, _): (&mut T, &mut T, &mut NoTangent)| {
                *dx += dz * e; // ∂(x eʸ)/∂x = eʸ
                *dy += dz * x * e; // ∂(x eʸ)/∂y = x eʸ
            },
        );
        (x * e, pb)
    }

    fn zips<T: TestElem>() {
        for ((_, a), (_, b)) in layouts::<T, _>(Ix2(2, 3), 81)
            .into_iter()
            .zip(layouts::<T, _>(Ix2(2, 3), 82))
        {
            RuleTest::new(
                (a, b, ()),
                |a| Zip::from(&a.0).and(&a.1).map_collect(|&x, &y| x * y.exp()),
                |a| Call((&a.0, &a.1, &a.2)).zip_map(times_exp),
            )
            .forward(|a| Zip::from(&a.0).and(&a.1).map_collect(|&x, &y| x * y.exp()))
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
    }

    #[test]
    fn zip_map_of_two_arrays() {
        zips::<f64>();
        zips::<f32>();
    }

    /// `|acc, v| acc * c + v * v` capturing `c`: a fold whose order matters.
    fn horner<T: Elem>(
        acc: T,
        v: &T,
        caps: &(T,),
    ) -> (T, impl Pullback<Output = T, Args = (T, T, (T,))>) {
        let (c, v) = (caps.0, *v);
        let pb = FnPullback::new(
            move |dy: T, (dacc, dv, dcaps): (&mut T, &mut T, &mut (T,))| {
                *dacc += dy * c;
                *dv += dy * (v + v);
                dcaps.0 += dy * acc;
            },
        );
        (acc * c + v * v, pb)
    }

    /// An order-dependent fold (Horner's scheme) against `ArrayBase::fold` itself, in
    /// every layout: ndarray visits a contiguous array in memory order (a transposed
    /// view by columns, a reversed one backwards) and the rule must too, or its value
    /// is not the plain call's.
    fn folds<T: TestElem>() {
        for (_, x) in layouts::<T, _>(Ix2(2, 3), 83) {
            let standard = x.is_standard_layout();
            let test = RuleTest::new(
                (x, T::of_f64(0.3), (T::of_f64(0.9),)),
                |a| a.0.fold(a.1, |acc, v| acc * a.2 .0 + *v * *v),
                |a| Call((&a.0, &a.1, &a.2)).fold(horner),
            )
            .tolerance(T::RTOL, T::ATOL);
            if standard {
                // The forward check runs the fold on arrays of duals, which are laid out
                // in standard order: for the other layouts it would fold in another
                // order than the function (finite differences check those).
                test.forward(|a| a.0.fold(a.1, |acc, v| acc * a.2 .0 + *v * *v))
                    .expect_no_alloc()
                    .run();
            } else {
                test.run();
            }
        }
    }

    #[test]
    fn fold_in_ndarrays_order() {
        folds::<f64>();
        folds::<f32>();
    }

    /// A reversed slice and a transposed view, folded with `acc·½ + v²`: the rule's value
    /// is ndarray's (which the logical order would not give).
    #[test]
    fn fold_of_reversed_and_transposed_views() {
        use ndarray::{array, s};
        let plain = |acc: f64, v: &f64| acc * 0.5 + v * v;
        let x = array![1.0, 2.0, 3.0, 4.0];
        let r = x.slice(s![..;-1]);
        let (y, _) = Call((&r, &0.0, &(0.5,))).fold(horner);
        assert_eq!(y, r.fold(0.0, plain));
        assert_ne!(y, r.iter().fold(0.0, plain));
        let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let t = a.t();
        let (y, _) = Call((&t, &0.0, &(0.5,))).fold(horner);
        assert_eq!(y, t.fold(0.0, plain));
        assert_ne!(y, t.iter().fold(0.0, plain));
    }
}
