//! Rules for iterator reductions over sequences of floats (`&[T]`, `Vec<T>`, `[T; N]`):
//! what `#[differentiable]` turns `x.iter().sum()`, `x.iter().product()`,
//! `x.iter().map(f).sum()`, `x.iter().zip(y.iter()).map(f).sum()` and
//! `x.iter().fold(init, f)` into. The closures arrive *derived*: each call returns the
//! value and a pullback, whose argument cotangents are the element's and the captured
//! variables' (`caps`, one tuple).

use mochi_core::kit::tape::{Site, Stack};
use mochi_core::{Call, Pullback, Scalar, Tangent, TangentVector};

/// The scalars that sequences hold: every [`Scalar`] (`f64`, `f32`, duals), so that the
/// sequence rules serve generic code too.
pub trait Elem: Scalar {
    /// `1`.
    fn one() -> Self;
}
impl<S: Scalar> Elem for S {
    #[inline(always)]
    fn one() -> Self {
        S::of_real(<S::Real as mochi_core::Real>::ONE)
    }
}

/// Sequences of floats whose cotangent is indexed like them.
pub trait Sequence {
    /// The element type.
    type Elem: Elem;
    /// The cotangent type (`Vec<T>`, `[T; N]`, `Array<T, D>`, an nalgebra vector).
    type Cot: SeqCot<Elem = Self::Elem>;
    /// The elements, in logical order: borrowed when they lie in that order in memory,
    /// copied otherwise (a column of a matrix, a transposed view).
    fn elems(&self) -> std::borrow::Cow<'_, [Self::Elem]>;
    /// The shape its cotangent is made dense with.
    fn shape(&self) -> <Self::Cot as SeqCot>::Shape;
}

/// The cotangent of a sequence, made dense (in the sequence's shape) before a pullback
/// writes its elements in logical order. Pullbacks are generic over it, not over the
/// sequence, so that a sequence that borrows (an array view) gives a pullback that
/// does not.
pub trait SeqCot: TangentVector {
    /// The element type.
    type Elem: Elem;
    /// What makes a structural zero dense: a length, an array's dimension.
    type Shape: Clone + 'static;
    /// Makes `self` dense with `shape` unless it is already, and gives its elements in
    /// logical order.
    fn dense(&mut self, shape: &Self::Shape) -> &mut [Self::Elem];
}

#[inline(always)]
#[track_caller]
fn densify_vec<T: Elem>(cot: &mut Vec<T>, len: usize) {
    if cot.len() != len {
        assert!(
            cot.is_empty(),
            "mochi: cotangent has {} elements, primal {len}",
            cot.len()
        );
        cot.resize(len, T::zero());
    }
}

impl<T: Elem> SeqCot for Vec<T> {
    type Elem = T;
    type Shape = usize;
    #[inline(always)]
    #[track_caller]
    fn dense(&mut self, len: &usize) -> &mut [T] {
        densify_vec(self, *len);
        self
    }
}
impl<T: Elem, const N: usize> SeqCot for [T; N] {
    type Elem = T;
    type Shape = ();
    #[inline(always)]
    fn dense(&mut self, _: &()) -> &mut [T] {
        self
    }
}
impl<T: Elem> Sequence for [T] {
    type Elem = T;
    type Cot = Vec<T>;
    #[inline(always)]
    fn elems(&self) -> std::borrow::Cow<'_, [T]> {
        std::borrow::Cow::Borrowed(self)
    }
    #[inline(always)]
    fn shape(&self) -> usize {
        self.len()
    }
}
impl<T: Elem> Sequence for Vec<T> {
    type Elem = T;
    type Cot = Vec<T>;
    #[inline(always)]
    fn elems(&self) -> std::borrow::Cow<'_, [T]> {
        std::borrow::Cow::Borrowed(self)
    }
    #[inline(always)]
    fn shape(&self) -> usize {
        self.len()
    }
}
impl<T: Elem, const N: usize> Sequence for [T; N] {
    type Elem = T;
    type Cot = [T; N];
    #[inline(always)]
    fn elems(&self) -> std::borrow::Cow<'_, [T]> {
        std::borrow::Cow::Borrowed(self)
    }
    #[inline(always)]
    fn shape(&self) {}
}

/// A sequence held through a reference (`let s = x.as_slice();`, `let s = &x[..];`,
/// then `s.iter().map(f).sum()`).
impl<S: Sequence + ?Sized> Sequence for &S {
    type Elem = S::Elem;
    type Cot = S::Cot;
    #[inline(always)]
    fn elems(&self) -> std::borrow::Cow<'_, [S::Elem]> {
        (**self).elems()
    }
    #[inline(always)]
    fn shape(&self) -> <S::Cot as SeqCot>::Shape {
        (**self).shape()
    }
}

/// `x.iter().sum()` and `x.iter().product()`.
pub trait IterReduceRule {
    /// The element type.
    type Elem;
    /// The pullback of the sum.
    type SumPullback;
    /// The pullback of the product.
    type ProductPullback;
    /// `Σ xᵢ`.
    fn iter_sum(self) -> (Self::Elem, Self::SumPullback);
    /// `Π xᵢ`.
    fn iter_product(self) -> (Self::Elem, Self::ProductPullback);
}

/// The pullback of a sum: every element gets `ȳ`.
pub struct IterSumPullback<D: SeqCot> {
    shape: D::Shape,
}

impl<D: SeqCot> Pullback for IterSumPullback<D> {
    type Output = D::Elem;
    type Args = (D,);
    #[inline(always)]
    fn pullback(self, dy: D::Elem, (dx,): (&mut D,)) {
        for d in dx.dense(&self.shape) {
            *d += dy;
        }
    }
}

/// The pullback of a product: `x̄ᵢ += ȳ · Π_{j≠i} xⱼ` (prefix and suffix products, so
/// zeros are handled exactly).
pub struct IterProductPullback<D: SeqCot> {
    x: Vec<D::Elem>,
    shape: D::Shape,
}

impl<S: Sequence + ?Sized> IterReduceRule for Call<(&S,)> {
    type Elem = S::Elem;
    type SumPullback = IterSumPullback<S::Cot>;
    type ProductPullback = IterProductPullback<S::Cot>;
    #[inline(always)]
    fn iter_sum(self) -> (S::Elem, IterSumPullback<S::Cot>) {
        let x = self.0 .0.elems();
        (
            x.iter().copied().sum(),
            IterSumPullback {
                shape: self.0 .0.shape(),
            },
        )
    }
    fn iter_product(self) -> (S::Elem, IterProductPullback<S::Cot>) {
        let x = self.0 .0.elems();
        (
            x.iter().copied().product(),
            IterProductPullback {
                shape: self.0 .0.shape(),
                x: x.into_owned(),
            },
        )
    }
}

impl<D: SeqCot> Pullback for IterProductPullback<D> {
    type Output = D::Elem;
    type Args = (D,);
    fn pullback(self, dy: D::Elem, (dx,): (&mut D,)) {
        let n = self.x.len();
        let dx = dx.dense(&self.shape);
        let mut suffix = vec![<D::Elem as Elem>::one(); n + 1];
        for i in (0..n).rev() {
            suffix[i] = suffix[i + 1] * self.x[i];
        }
        let mut prefix = <D::Elem as Elem>::one();
        for i in 0..n {
            dx[i] += dy * prefix * suffix[i + 1];
            prefix *= self.x[i];
        }
    }
}

/// `x.iter().map(f).sum()` with a derived closure `f(&v, caps)`.
///
/// The closure is a parameter of the method (not of the trait), so that its argument
/// types are known where the closure is written.
pub trait IterMapSumRule {
    /// The sequence type.
    type Seq: Sequence + ?Sized;
    /// The captured variables (a tuple of references).
    type Caps: Tangent;
    /// `Σ f(xᵢ)`.
    #[allow(clippy::type_complexity)]
    fn iter_map_sum<F, P>(
        self,
        f: F,
    ) -> (
        <Self::Seq as Sequence>::Elem,
        IterMapSumPullback<<Self::Seq as Sequence>::Cot, P, <Self::Caps as Tangent>::Tangent>,
    )
    where
        F: Fn(&<Self::Seq as Sequence>::Elem, &Self::Caps) -> (<Self::Seq as Sequence>::Elem, P),
        P: Pullback<
                Output = <Self::Seq as Sequence>::Elem,
                Args = (
                    <Self::Seq as Sequence>::Elem,
                    <Self::Caps as Tangent>::Tangent,
                ),
            > + 'static;
}

/// The pullback of `Σ f(xᵢ)`: each element's derived pullback, in reverse.
#[allow(clippy::type_complexity)]
pub struct IterMapSumPullback<D: SeqCot, P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    shape: D::Shape,
    _d: std::marker::PhantomData<(fn(&D), C)>,
}

impl<'a, S: Sequence + ?Sized, C: Tangent> IterMapSumRule for Call<(&'a S, &'a C)> {
    type Seq = S;
    type Caps = C;
    #[inline(always)]
    fn iter_map_sum<F, P>(self, f: F) -> (S::Elem, IterMapSumPullback<S::Cot, P, C::Tangent>)
    where
        F: Fn(&S::Elem, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (S::Elem, C::Tangent)> + 'static,
    {
        let (x, caps) = self.0;
        let x = x.elems();
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = S::Elem::zero();
        for v in x.iter() {
            let (y, pb) = f(v, caps);
            acc.accumulate(y);
            pbs.push(pb);
        }
        let len = x.len();
        (
            acc,
            IterMapSumPullback {
                pbs,
                len,
                shape: self.0 .0.shape(),
                _d: std::marker::PhantomData,
            },
        )
    }
}

impl<D, C, P> Pullback for IterMapSumPullback<D, P, C>
where
    D: SeqCot,
    C: TangentVector,
    P: Pullback<Output = D::Elem, Args = (D::Elem, C)> + 'static,
{
    type Output = D::Elem;
    type Args = (D, C);
    #[inline(always)]
    fn pullback(mut self, dy: D::Elem, (dx, dcaps): (&mut D, &mut C)) {
        let dx = dx.dense(&self.shape);
        for i in (0..self.len).rev() {
            self.pbs.pop().pullback(dy, (&mut dx[i], &mut *dcaps));
        }
    }
}

/// `x.iter().zip(y.iter()).map(f).sum()` with a derived closure `f(&a, &b, caps)`.
pub trait IterZipMapSumRule {
    /// The first sequence.
    type Seq: Sequence + ?Sized;
    /// The second sequence.
    type Other: Sequence<Elem = <Self::Seq as Sequence>::Elem> + ?Sized;
    /// The captured variables.
    type Caps: Tangent;
    /// `Σ f(xᵢ, yᵢ)` over the shorter length.
    #[allow(clippy::type_complexity)]
    fn iter_zip_map_sum<F, P>(
        self,
        f: F,
    ) -> (
        <Self::Seq as Sequence>::Elem,
        IterZipMapSumPullback<
            <Self::Seq as Sequence>::Cot,
            <Self::Other as Sequence>::Cot,
            P,
            <Self::Caps as Tangent>::Tangent,
        >,
    )
    where
        F: Fn(
            &<Self::Seq as Sequence>::Elem,
            &<Self::Seq as Sequence>::Elem,
            &Self::Caps,
        ) -> (<Self::Seq as Sequence>::Elem, P),
        P: Pullback<
                Output = <Self::Seq as Sequence>::Elem,
                Args = (
                    <Self::Seq as Sequence>::Elem,
                    <Self::Seq as Sequence>::Elem,
                    <Self::Caps as Tangent>::Tangent,
                ),
            > + 'static;
}

/// The pullback of `Σ f(xᵢ, yᵢ)`.
#[allow(clippy::type_complexity)]
pub struct IterZipMapSumPullback<D: SeqCot, E: SeqCot, P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    shapes: (D::Shape, E::Shape),
    _d: std::marker::PhantomData<(fn(&D, &E), C)>,
}

impl<'a, S, R, C> IterZipMapSumRule for Call<(&'a S, &'a R, &'a C)>
where
    S: Sequence + ?Sized,
    R: Sequence<Elem = S::Elem> + ?Sized,
    C: Tangent,
{
    type Seq = S;
    type Other = R;
    type Caps = C;
    #[inline(always)]
    fn iter_zip_map_sum<F, P>(
        self,
        f: F,
    ) -> (
        S::Elem,
        IterZipMapSumPullback<S::Cot, R::Cot, P, C::Tangent>,
    )
    where
        F: Fn(&S::Elem, &S::Elem, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (S::Elem, S::Elem, C::Tangent)> + 'static,
    {
        let (x, y, caps) = self.0;
        let (x, y) = (x.elems(), y.elems());
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = S::Elem::zero();
        for (a, b) in x.iter().zip(y.iter()) {
            let (v, pb) = f(a, b, caps);
            acc.accumulate(v);
            pbs.push(pb);
        }
        let len = x.len().min(y.len());
        (
            acc,
            IterZipMapSumPullback {
                pbs,
                len,
                shapes: (self.0 .0.shape(), self.0 .1.shape()),
                _d: std::marker::PhantomData,
            },
        )
    }
}

impl<D, E, C, P> Pullback for IterZipMapSumPullback<D, E, P, C>
where
    D: SeqCot,
    E: SeqCot<Elem = D::Elem>,
    C: TangentVector,
    P: Pullback<Output = D::Elem, Args = (D::Elem, D::Elem, C)> + 'static,
{
    type Output = D::Elem;
    type Args = (D, E, C);
    fn pullback(mut self, dy: D::Elem, (dx, dy_, dcaps): (&mut D, &mut E, &mut C)) {
        let (dx, dy_) = (dx.dense(&self.shapes.0), dy_.dense(&self.shapes.1));
        for i in (0..self.len).rev() {
            self.pbs
                .pop()
                .pullback(dy, (&mut dx[i], &mut dy_[i], &mut *dcaps));
        }
    }
}

/// `x.iter().fold(init, f)` with a derived closure `f(acc, &v, caps)`.
pub trait IterFoldRule {
    /// The sequence.
    type Seq: Sequence + ?Sized;
    /// The accumulator.
    type Acc: Tangent + Clone;
    /// The captured variables.
    type Caps: Tangent;
    /// `f(…f(f(init, x₀), x₁)…)`.
    #[allow(clippy::type_complexity)]
    fn iter_fold<F, P>(
        self,
        f: F,
    ) -> (
        Self::Acc,
        IterFoldPullback<<Self::Seq as Sequence>::Cot, P, <Self::Caps as Tangent>::Tangent>,
    )
    where
        F: Fn(Self::Acc, &<Self::Seq as Sequence>::Elem, &Self::Caps) -> (Self::Acc, P),
        P: Pullback<
                Output = <Self::Acc as Tangent>::Tangent,
                Args = (
                    <Self::Acc as Tangent>::Tangent,
                    <Self::Seq as Sequence>::Elem,
                    <Self::Caps as Tangent>::Tangent,
                ),
            > + 'static;
}

/// The pullback of a fold: the accumulator's cotangent threads backwards.
#[allow(clippy::type_complexity)]
pub struct IterFoldPullback<D: SeqCot, P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    shape: D::Shape,
    _d: std::marker::PhantomData<(fn(&D), C)>,
}

impl<'a, S, B, C> IterFoldRule for Call<(&'a S, &'a B, &'a C)>
where
    S: Sequence + ?Sized,
    B: Tangent + Clone,
    C: Tangent,
{
    type Seq = S;
    type Acc = B;
    type Caps = C;
    fn iter_fold<F, P>(self, f: F) -> (B, IterFoldPullback<S::Cot, P, C::Tangent>)
    where
        F: Fn(B, &S::Elem, &C) -> (B, P),
        P: Pullback<Output = B::Tangent, Args = (B::Tangent, S::Elem, C::Tangent)> + 'static,
    {
        let (x, init, caps) = self.0;
        let x = x.elems();
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = init.clone();
        for v in x.iter() {
            let (next, pb) = f(acc, v, caps);
            acc = next;
            pbs.push(pb);
        }
        let len = x.len();
        (
            acc,
            IterFoldPullback {
                pbs,
                len,
                shape: self.0 .0.shape(),
                _d: std::marker::PhantomData,
            },
        )
    }
}

impl<D, B, C, P> Pullback for IterFoldPullback<D, P, C>
where
    D: SeqCot,
    B: TangentVector,
    C: TangentVector,
    P: Pullback<Output = B, Args = (B, D::Elem, C)> + 'static,
{
    type Output = B;
    type Args = (D, B, C);
    fn pullback(mut self, dy: B, (dx, dinit, dcaps): (&mut D, &mut B, &mut C)) {
        let dx = dx.dense(&self.shape);
        let mut d = dy;
        for i in (0..self.len).rev() {
            let mut prev = B::zero();
            self.pbs
                .pop()
                .pullback(d, (&mut prev, &mut dx[i], &mut *dcaps));
            d = prev;
        }
        dinit.accumulate(d);
    }
}

/// Arrays of any dimension as sequences of their elements in logical order:
/// `a.iter().sum()`, `a.iter().map(f).sum()`, `a.iter().zip(b.iter()).map(f).sum()`,
/// `a.iter().fold(init, f)` on an `Array1`, an `Array2`, a view reverse like on a
/// slice; the cotangent is an owned array of the same shape.
#[cfg(feature = "ndarray")]
impl<T: Elem, S: ndarray::Data<Elem = T>, D: ndarray::Dimension + 'static> Sequence
    for ndarray::ArrayBase<S, D>
{
    type Elem = T;
    type Cot = ndarray::Array<T, D>;
    #[inline(always)]
    fn elems(&self) -> std::borrow::Cow<'_, [T]> {
        match self.as_slice() {
            Some(s) => std::borrow::Cow::Borrowed(s),
            None => std::borrow::Cow::Owned(self.iter().copied().collect()),
        }
    }
    #[inline(always)]
    fn shape(&self) -> D {
        self.raw_dim()
    }
}

#[cfg(feature = "ndarray")]
impl<T: Elem, D: ndarray::Dimension + 'static> SeqCot for ndarray::Array<T, D> {
    type Elem = T;
    type Shape = D;
    #[inline(always)]
    #[track_caller]
    fn dense(&mut self, dim: &D) -> &mut [T] {
        match mochi_core::broadcast::form(self, dim) {
            mochi_core::broadcast::Form::Dense => {}
            mochi_core::broadcast::Form::Zero => {
                *self = ndarray::Array::from_elem(dim.clone(), T::zero());
            }
            mochi_core::broadcast::Form::Broadcast => {
                let t = std::mem::replace(self, ndarray::Array::from_elem(dim.clone(), T::zero()));
                *self = mochi_core::broadcast::expand(t, dim);
            }
        }
        if !self.is_standard_layout() {
            *self = self.as_standard_layout().into_owned();
        }
        self.as_slice_mut().expect("a standard-layout array")
    }
}

/// nalgebra's vectors and matrices (`DVector`, `SVector`, `DMatrix`, `Matrix3`, their
/// views) as sequences of their elements in nalgebra's order, column by column (as
/// `m.iter()` walks them): `v.iter().map(f).sum()` and the other adapters reverse like
/// on a slice; the cotangent is the owned matrix.
#[cfg(feature = "nalgebra")]
impl<T, R, C, S> Sequence for nalgebra::Matrix<T, R, C, S>
where
    T: Elem + nalgebra::Scalar,
    R: nalgebra::Dim,
    C: nalgebra::Dim,
    S: nalgebra::RawStorage<T, R, C>,
    nalgebra::DefaultAllocator: nalgebra::allocator::Allocator<R, C>,
    nalgebra::OMatrix<T, R, C>: TangentVector,
{
    type Elem = T;
    type Cot = nalgebra::OMatrix<T, R, C>;
    #[inline(always)]
    fn elems(&self) -> std::borrow::Cow<'_, [T]> {
        std::borrow::Cow::Owned(self.iter().cloned().collect())
    }
    #[inline(always)]
    fn shape(&self) -> (R, C) {
        self.shape_generic()
    }
}

#[cfg(feature = "nalgebra")]
impl<T, R, C> SeqCot for nalgebra::OMatrix<T, R, C>
where
    T: Elem + nalgebra::Scalar,
    R: nalgebra::Dim,
    C: nalgebra::Dim,
    nalgebra::DefaultAllocator: nalgebra::allocator::Allocator<R, C>,
    nalgebra::OMatrix<T, R, C>: TangentVector,
{
    type Elem = T;
    type Shape = (R, C);
    #[inline(always)]
    #[track_caller]
    fn dense(&mut self, shape: &(R, C)) -> &mut [T] {
        let (rows, cols) = *shape;
        if self.nrows() != rows.value() || self.ncols() != cols.value() {
            assert!(
                self.is_empty(),
                "mochi: cotangent has shape {:?}, primal {:?}",
                self.shape(),
                (rows.value(), cols.value())
            );
            *self = nalgebra::OMatrix::from_element_generic(rows, cols, T::zero());
        }
        self.as_mut_slice()
    }
}
