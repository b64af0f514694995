//! Adapters that take a closure: `mapv`, `map`, `fold`, and `zip_map` (what
//! `Zip::from(&a).and(&b).map_collect(|&x, &y| …)` is lowered to).
//!
//! `#[differentiable]` turns the user's closure into a *derived closure* that
//! returns the element's value and its pullback, and passes the closure's captured
//! variables as one tuple `caps` (`()` when it captures nothing). The forward pass
//! runs the derived closure on every element in logical (row-major) order and keeps
//! the element pullbacks; the reverse pass runs them backwards, adding each
//! element's cotangent into the array's accumulator and the captures' cotangents into
//! the one captures accumulator.

use crate::cotangent::{dense, is_structural_zero};
use crate::Elem;
use mochi_core::{Call, Pullback, Tangent, TangentVector};
use ndarray::{Array, ArrayBase, Data, Dimension, Zip};

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

/// `Zip::from(&a).and(&b).map_collect(f)`: `Call((&a, &b, &caps)).zip_map(derived)`,
/// the derived closure taking both elements by value.
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

/// The accumulator of `dim`'s shape as a row-major slice (materialised, and made
/// standard-layout if it was adopted with another layout).
#[track_caller]
fn row_major<'c, T: Elem, D: Dimension>(acc: &'c mut Array<T, D>, dim: &D) -> &'c mut [T] {
    let acc = dense(acc, dim);
    if !acc.is_standard_layout() {
        *acc = acc.as_standard_layout().into_owned();
    }
    acc.as_slice_mut().expect("standard layout is contiguous")
}

/// Pullback of `mapv`/`map`: the element pullbacks in logical order.
pub struct MapPullback<P, D> {
    dim: D,
    pullbacks: Vec<P>,
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
        if is_structural_zero(&dy, &self.dim) {
            return;
        }
        let dy = dy.as_standard_layout();
        let dys = dy.as_slice().expect("standard layout is contiguous");
        let dxs = row_major(dx, &self.dim);
        for ((pb, dyi), dxi) in self.pullbacks.into_iter().zip(dys).zip(dxs).rev() {
            pb.pullback(dyi.clone(), (dxi, &mut *dcaps));
        }
    }
}

impl<'a, 'c, T, S, D, C, F, O, P> NdMapv<F> for Call<(&'a ArrayBase<S, D>, &'c C)>
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
        let mut pullbacks = Vec::with_capacity(x.len());
        let values: Vec<O> = x
            .iter()
            .map(|&v| {
                let (y, pb) = f(v, caps);
                pullbacks.push(pb);
                y
            })
            .collect();
        let y = Array::from_shape_vec(x.raw_dim(), values).expect("one value per element");
        (y, MapPullback { dim: x.raw_dim(), pullbacks })
    }
}

impl<'a, 'c, T, S, D, C, F, O, P> NdMap<F> for Call<(&'a ArrayBase<S, D>, &'c C)>
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
        let mut pullbacks = Vec::with_capacity(x.len());
        let values: Vec<O> = x
            .iter()
            .map(|v| {
                let (y, pb) = f(v, caps);
                pullbacks.push(pb);
                y
            })
            .collect();
        let y = Array::from_shape_vec(x.raw_dim(), values).expect("one value per element");
        (y, MapPullback { dim: x.raw_dim(), pullbacks })
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
        if is_structural_zero(&dy, &self.dim) {
            return;
        }
        let dy = dy.as_standard_layout();
        let dys = dy.as_slice().expect("standard layout is contiguous");
        let das = row_major(da, &self.dim);
        let dbs = row_major(db, &self.dim);
        for (((pb, dyi), dai), dbi) in self.pullbacks.into_iter().zip(dys).zip(das).zip(dbs).rev() {
            pb.pullback(dyi.clone(), (dai, dbi, &mut *dcaps));
        }
    }
}

impl<'a, 'b, 'c, T, S1, S2, D, C, F, O, P> NdZipMap<F>
    for Call<(&'a ArrayBase<S1, D>, &'b ArrayBase<S2, D>, &'c C)>
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
        let values: Vec<O> = a
            .iter()
            .zip(b.iter())
            .map(|(&u, &v)| {
                let (y, pb) = f(u, v, caps);
                pullbacks.push(pb);
                y
            })
            .collect();
        let y = Array::from_shape_vec(a.raw_dim(), values).expect("one value per element");
        (y, ZipMapPullback { dim: a.raw_dim(), pullbacks })
    }
}

/// Pullback of `fold`: the element pullbacks in logical order.
pub struct FoldPullback<P, D> {
    dim: D,
    pullbacks: Vec<P>,
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
    type Args = (A, Array<T, D>, C);
    #[track_caller]
    fn pullback(self, dy: A, (dinit, dx, dcaps): (&mut A, &mut Array<T, D>, &mut C)) {
        let dxs = row_major(dx, &self.dim);
        let mut dacc = dy;
        for (pb, dxi) in self.pullbacks.into_iter().zip(dxs).rev() {
            let mut dprev = A::zero();
            pb.pullback(dacc, (&mut dprev, dxi, &mut *dcaps));
            dacc = dprev;
        }
        dinit.accumulate(dacc);
    }
}

impl<'a, 'i, 'c, T, S, D, A, C, F, P> NdFold<F> for Call<(&'a ArrayBase<S, D>, &'i A, &'c C)>
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
        for v in x.iter() {
            let (next, pb) = f(acc, v, caps);
            pullbacks.push(pb);
            acc = next;
        }
        (acc, FoldPullback { dim: x.raw_dim(), pullbacks })
    }
}
