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
    /// The cotangent type (`Vec<T>` or `[T; N]`).
    type Cot: TangentVector + std::ops::IndexMut<usize, Output = Self::Elem>;
    /// The elements.
    fn elems(&self) -> &[Self::Elem];
    /// Makes `cot` a dense zero of length `len` unless it is already dense.
    fn densify(cot: &mut Self::Cot, len: usize);
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

impl<T: Elem> Sequence for [T] {
    type Elem = T;
    type Cot = Vec<T>;
    #[inline(always)]
    fn elems(&self) -> &[T] {
        self
    }
    #[inline(always)]
    fn densify(cot: &mut Vec<T>, len: usize) {
        densify_vec(cot, len)
    }
}
impl<T: Elem> Sequence for Vec<T> {
    type Elem = T;
    type Cot = Vec<T>;
    #[inline(always)]
    fn elems(&self) -> &[T] {
        self
    }
    #[inline(always)]
    fn densify(cot: &mut Vec<T>, len: usize) {
        densify_vec(cot, len)
    }
}
impl<T: Elem, const N: usize> Sequence for [T; N] {
    type Elem = T;
    type Cot = [T; N];
    #[inline(always)]
    fn elems(&self) -> &[T] {
        self
    }
    #[inline(always)]
    fn densify(_cot: &mut [T; N], _len: usize) {}
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
pub struct IterSumPullback<S: ?Sized> {
    len: usize,
    _s: std::marker::PhantomData<fn(&S)>,
}

impl<S: Sequence + ?Sized> Pullback for IterSumPullback<S> {
    type Output = S::Elem;
    type Args = (S::Cot,);
    #[inline(always)]
    fn pullback(self, dy: S::Elem, (dx,): (&mut S::Cot,)) {
        S::densify(dx, self.len);
        for i in 0..self.len {
            dx[i] += dy;
        }
    }
}

/// The pullback of a product: `x̄ᵢ += ȳ · Π_{j≠i} xⱼ` (prefix and suffix products, so
/// zeros are handled exactly).
pub struct IterProductPullback<S: Sequence + ?Sized> {
    x: Vec<S::Elem>,
}

impl<S: Sequence + ?Sized> IterReduceRule for Call<(&S,)> {
    type Elem = S::Elem;
    type SumPullback = IterSumPullback<S>;
    type ProductPullback = IterProductPullback<S>;
    #[inline(always)]
    fn iter_sum(self) -> (S::Elem, IterSumPullback<S>) {
        let x = self.0 .0.elems();
        (
            x.iter().copied().sum(),
            IterSumPullback::<S> {
                len: x.len(),
                _s: std::marker::PhantomData,
            },
        )
    }
    fn iter_product(self) -> (S::Elem, IterProductPullback<S>) {
        let x = self.0 .0.elems();
        (
            x.iter().copied().product(),
            IterProductPullback::<S> { x: x.to_vec() },
        )
    }
}

impl<S: Sequence + ?Sized> Pullback for IterProductPullback<S> {
    type Output = S::Elem;
    type Args = (S::Cot,);
    fn pullback(self, dy: S::Elem, (dx,): (&mut S::Cot,)) {
        let n = self.x.len();
        S::densify(dx, n);
        let mut suffix = vec![<S::Elem as Elem>::one(); n + 1];
        for i in (0..n).rev() {
            suffix[i] = suffix[i + 1] * self.x[i];
        }
        let mut prefix = <S::Elem as Elem>::one();
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
        IterMapSumPullback<Self::Seq, P, <Self::Caps as Tangent>::Tangent>,
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
pub struct IterMapSumPullback<S: ?Sized, P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    _s: std::marker::PhantomData<(fn(&S), C)>,
}

impl<'a, S: Sequence + ?Sized, C: Tangent> IterMapSumRule for Call<(&'a S, &'a C)> {
    type Seq = S;
    type Caps = C;
    #[inline(always)]
    fn iter_map_sum<F, P>(self, f: F) -> (S::Elem, IterMapSumPullback<S, P, C::Tangent>)
    where
        F: Fn(&S::Elem, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (S::Elem, C::Tangent)> + 'static,
    {
        let (x, caps) = self.0;
        let x = x.elems();
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = S::Elem::zero();
        for v in x {
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
                _s: std::marker::PhantomData,
            },
        )
    }
}

impl<S, C, P> Pullback for IterMapSumPullback<S, P, C>
where
    S: Sequence + ?Sized,
    C: TangentVector,
    P: Pullback<Output = S::Elem, Args = (S::Elem, C)> + 'static,
{
    type Output = S::Elem;
    type Args = (S::Cot, C);
    #[inline(always)]
    fn pullback(mut self, dy: S::Elem, (dx, dcaps): (&mut S::Cot, &mut C)) {
        S::densify(dx, self.len);
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
        IterZipMapSumPullback<Self::Seq, Self::Other, P, <Self::Caps as Tangent>::Tangent>,
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
pub struct IterZipMapSumPullback<S: ?Sized, R: ?Sized, P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    lens: (usize, usize),
    _s: std::marker::PhantomData<(fn(&S, &R), C)>,
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
    fn iter_zip_map_sum<F, P>(self, f: F) -> (S::Elem, IterZipMapSumPullback<S, R, P, C::Tangent>)
    where
        F: Fn(&S::Elem, &S::Elem, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (S::Elem, S::Elem, C::Tangent)> + 'static,
    {
        let (x, y, caps) = self.0;
        let (x, y) = (x.elems(), y.elems());
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = S::Elem::zero();
        for (a, b) in x.iter().zip(y) {
            let (v, pb) = f(a, b, caps);
            acc.accumulate(v);
            pbs.push(pb);
        }
        let len = x.len().min(y.len());
        let lens = (x.len(), y.len());
        (
            acc,
            IterZipMapSumPullback {
                pbs,
                len,
                lens,
                _s: std::marker::PhantomData,
            },
        )
    }
}

impl<S, R, C, P> Pullback for IterZipMapSumPullback<S, R, P, C>
where
    S: Sequence + ?Sized,
    R: Sequence<Elem = S::Elem> + ?Sized,
    C: TangentVector,
    P: Pullback<Output = S::Elem, Args = (S::Elem, S::Elem, C)> + 'static,
{
    type Output = S::Elem;
    type Args = (S::Cot, R::Cot, C);
    fn pullback(mut self, dy: S::Elem, (dx, dy_, dcaps): (&mut S::Cot, &mut R::Cot, &mut C)) {
        S::densify(dx, self.lens.0);
        R::densify(dy_, self.lens.1);
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
        IterFoldPullback<Self::Seq, P, <Self::Caps as Tangent>::Tangent>,
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
pub struct IterFoldPullback<S: ?Sized, P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    _s: std::marker::PhantomData<(fn(&S), C)>,
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
    fn iter_fold<F, P>(self, f: F) -> (B, IterFoldPullback<S, P, C::Tangent>)
    where
        F: Fn(B, &S::Elem, &C) -> (B, P),
        P: Pullback<Output = B::Tangent, Args = (B::Tangent, S::Elem, C::Tangent)> + 'static,
    {
        let (x, init, caps) = self.0;
        let x = x.elems();
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = init.clone();
        for v in x {
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
                _s: std::marker::PhantomData,
            },
        )
    }
}

impl<S, B, C, P> Pullback for IterFoldPullback<S, P, C>
where
    S: Sequence + ?Sized,
    B: TangentVector,
    C: TangentVector,
    P: Pullback<Output = B, Args = (B, S::Elem, C)> + 'static,
{
    type Output = B;
    type Args = (S::Cot, B, C);
    fn pullback(mut self, dy: B, (dx, dinit, dcaps): (&mut S::Cot, &mut B, &mut C)) {
        S::densify(dx, self.len);
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

/// One-dimensional arrays as sequences: `a.iter().sum()`, `a.iter().map(f).sum()`,
/// `a.iter().zip(b.iter()).map(f).sum()`, `a.iter().fold(init, f)` on an `Array1` or an
/// `ArrayView1` reverse like on a slice; the cotangent is an `Array1`.
#[cfg(feature = "ndarray")]
impl<T: Elem, S: ndarray::Data<Elem = T>> Sequence for ndarray::ArrayBase<S, ndarray::Ix1> {
    type Elem = T;
    type Cot = ndarray::Array1<T>;
    #[inline(always)]
    #[track_caller]
    fn elems(&self) -> &[T] {
        match self.as_slice() {
            Some(s) => s,
            None => panic!(
                "mochi: an iterator adapter over an array needs its elements in order in memory; \
                 iterate `a.to_owned()`, or index `a[i]`"
            ),
        }
    }
    #[inline(always)]
    #[track_caller]
    fn densify(cot: &mut ndarray::Array1<T>, len: usize) {
        let dim = ndarray::Ix1(len);
        match mochi_core::broadcast::form(cot, &dim) {
            mochi_core::broadcast::Form::Dense => {}
            mochi_core::broadcast::Form::Zero => *cot = ndarray::Array1::from_elem(len, T::zero()),
            mochi_core::broadcast::Form::Broadcast => {
                let t = std::mem::replace(cot, ndarray::Array1::from_vec(Vec::new()));
                *cot = mochi_core::broadcast::expand(t, &dim);
            }
        }
    }
}
