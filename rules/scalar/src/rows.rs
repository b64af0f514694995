//! `rows.iter().map(f).sum()` over a sequence of rows (`&[Vec<T>]`, `Vec<Vec<T>>`,
//! `&[[T; N]]`, `Vec<[T; N]>`), and `rows.iter().zip(y.iter()).map(f).sum()` with a
//! sequence of floats: the closure maps a row to a float. What `#[differentiable]`
//! makes of `a.iter().map(|row| row.iter().zip(x).map(|(r, v)| r * v).sum::<f64>()).sum()`;
//! the closure arrives derived, and its pullback adds into that row's cotangent.

use crate::seq::{Elem, SeqCot, Sequence};
use mochi_core::kit::tape::{Site, Stack};
use mochi_core::{Call, Pullback, Tangent, TangentVector};

/// Sequences of rows of floats (`Vec<T>` or `[T; N]` rows); their cotangent is a `Vec`
/// of the rows' cotangents.
pub trait Rows {
    /// The float type.
    type Elem: Elem;
    /// One row.
    type Row: Tangent;
    /// The rows.
    fn rows(&self) -> &[Self::Row];
}

impl<T: Elem> Rows for [Vec<T>] {
    type Elem = T;
    type Row = Vec<T>;
    #[inline(always)]
    fn rows(&self) -> &[Vec<T>] {
        self
    }
}

impl<T: Elem, const N: usize> Rows for [[T; N]] {
    type Elem = T;
    type Row = [T; N];
    #[inline(always)]
    fn rows(&self) -> &[[T; N]] {
        self
    }
}

/// A `Vec` of rows, as the slice of them.
impl<R: Tangent> Rows for Vec<R>
where
    [R]: Rows<Row = R>,
{
    type Elem = <[R] as Rows>::Elem;
    type Row = R;
    #[inline(always)]
    fn rows(&self) -> &[R] {
        self
    }
}

/// An array of rows (a constant data set, `const DATA: [[f64; 2]; 4]`), as the slice of
/// them.
impl<R: Tangent, const M: usize> Rows for [R; M]
where
    [R]: Rows<Row = R>,
{
    type Elem = <[R] as Rows>::Elem;
    type Row = R;
    #[inline(always)]
    fn rows(&self) -> &[R] {
        self
    }
}

/// Sequences of nalgebra vectors or matrices (`&[Vector3<f64>]`, `Vec<DVector<f64>>`):
/// `points.iter().map(|p| p.dot(w)).sum()`.
#[cfg(feature = "nalgebra")]
impl<T, R, C> Rows for [nalgebra::OMatrix<T, R, C>]
where
    T: Elem + nalgebra::Scalar,
    R: nalgebra::Dim,
    C: nalgebra::Dim,
    nalgebra::DefaultAllocator: nalgebra::allocator::Allocator<R, C>,
    nalgebra::OMatrix<T, R, C>: Tangent,
{
    type Elem = T;
    type Row = nalgebra::OMatrix<T, R, C>;
    #[inline(always)]
    fn rows(&self) -> &[Self::Row] {
        self
    }
}

/// The cotangent of one row of `S`.
pub type RowCot<S> = <<S as Rows>::Row as Tangent>::Tangent;

/// `rows.iter().map(f).sum()` with a derived closure `f(&row, caps)`.
pub trait IterRowsMapSumRule {
    /// The sequence of rows.
    type Seq: Rows + ?Sized;
    /// The captured variables (a tuple of references).
    type Caps: Tangent;
    /// `Σ f(rowᵢ)`.
    #[allow(clippy::type_complexity)]
    fn iter_map_sum<F, P>(
        self,
        f: F,
    ) -> (
        <Self::Seq as Rows>::Elem,
        IterRowsMapSumPullback<P, RowCot<Self::Seq>, <Self::Caps as Tangent>::Tangent>,
    )
    where
        F: Fn(&<Self::Seq as Rows>::Row, &Self::Caps) -> (<Self::Seq as Rows>::Elem, P),
        P: Pullback<
                Output = <Self::Seq as Rows>::Elem,
                Args = (RowCot<Self::Seq>, <Self::Caps as Tangent>::Tangent),
            > + 'static;
}

/// The pullback of `Σ f(rowᵢ)`: each row's derived pullback, in reverse.
pub struct IterRowsMapSumPullback<P: 'static, W, C> {
    pbs: Stack<P>,
    len: usize,
    _c: std::marker::PhantomData<(W, C)>,
}

impl<'a, S: Rows + ?Sized, C: Tangent> IterRowsMapSumRule for Call<(&'a S, &'a C)> {
    type Seq = S;
    type Caps = C;
    #[inline(always)]
    fn iter_map_sum<F, P>(self, f: F) -> (S::Elem, IterRowsMapSumPullback<P, RowCot<S>, C::Tangent>)
    where
        F: Fn(&S::Row, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (RowCot<S>, C::Tangent)> + 'static,
    {
        let (x, caps) = self.0;
        let x = x.rows();
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = S::Elem::zero();
        for row in x {
            let (y, pb) = f(row, caps);
            acc.accumulate(y);
            pbs.push(pb);
        }
        (
            acc,
            IterRowsMapSumPullback {
                pbs,
                len: x.len(),
                _c: std::marker::PhantomData,
            },
        )
    }
}

impl<T, W, C, P> Pullback for IterRowsMapSumPullback<P, W, C>
where
    T: Elem,
    W: TangentVector,
    C: TangentVector,
    P: Pullback<Output = T, Args = (W, C)> + 'static,
{
    type Output = T;
    type Args = (Vec<W>, C);
    #[inline(always)]
    #[track_caller]
    fn pullback(mut self, dy: T, (dx, dcaps): (&mut Vec<W>, &mut C)) {
        densify_rows(dx, self.len);
        for i in (0..self.len).rev() {
            self.pbs.pop().pullback(dy, (&mut dx[i], &mut *dcaps));
        }
    }
}

/// `rows.iter().zip(y.iter()).map(f).sum()`: rows zipped with a sequence of floats (a
/// data set and its targets), with a derived closure `f(&row, &y, caps)`.
pub trait IterRowsZipMapSumRule {
    /// The sequence of rows.
    type Seq: Rows + ?Sized;
    /// The sequence of floats.
    type Other: Sequence<Elem = <Self::Seq as Rows>::Elem> + ?Sized;
    /// The captured variables.
    type Caps: Tangent;
    /// `Σ f(rowᵢ, yᵢ)` over the shorter length.
    #[allow(clippy::type_complexity)]
    fn iter_zip_map_sum<F, P>(
        self,
        f: F,
    ) -> (
        <Self::Seq as Rows>::Elem,
        IterRowsZipMapSumPullback<
            <Self::Other as Sequence>::Cot,
            P,
            RowCot<Self::Seq>,
            <Self::Caps as Tangent>::Tangent,
        >,
    )
    where
        F: Fn(
            &<Self::Seq as Rows>::Row,
            &<Self::Seq as Rows>::Elem,
            &Self::Caps,
        ) -> (<Self::Seq as Rows>::Elem, P),
        P: Pullback<
                Output = <Self::Seq as Rows>::Elem,
                Args = (
                    RowCot<Self::Seq>,
                    <Self::Seq as Rows>::Elem,
                    <Self::Caps as Tangent>::Tangent,
                ),
            > + 'static;
}

/// The pullback of `Σ f(rowᵢ, yᵢ)`.
#[allow(clippy::type_complexity)]
pub struct IterRowsZipMapSumPullback<E: SeqCot, P: 'static, W, C> {
    pbs: Stack<P>,
    len: usize,
    rows: usize,
    shape: E::Shape,
    _e: std::marker::PhantomData<(fn(&E), W, C)>,
}

impl<'a, S, R, C> IterRowsZipMapSumRule for Call<(&'a S, &'a R, &'a C)>
where
    S: Rows + ?Sized,
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
        IterRowsZipMapSumPullback<R::Cot, P, RowCot<S>, C::Tangent>,
    )
    where
        F: Fn(&S::Row, &S::Elem, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (RowCot<S>, S::Elem, C::Tangent)> + 'static,
    {
        let (x, y, caps) = self.0;
        let (x, y) = (x.rows(), y.elems());
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = S::Elem::zero();
        for (row, b) in x.iter().zip(y.iter()) {
            let (v, pb) = f(row, b, caps);
            acc.accumulate(v);
            pbs.push(pb);
        }
        (
            acc,
            IterRowsZipMapSumPullback {
                pbs,
                len: x.len().min(y.len()),
                rows: x.len(),
                shape: self.0 .1.shape(),
                _e: std::marker::PhantomData,
            },
        )
    }
}

impl<T, E, W, C, P> Pullback for IterRowsZipMapSumPullback<E, P, W, C>
where
    T: Elem,
    E: SeqCot<Elem = T>,
    W: TangentVector,
    C: TangentVector,
    P: Pullback<Output = T, Args = (W, T, C)> + 'static,
{
    type Output = T;
    type Args = (Vec<W>, E, C);
    #[inline(always)]
    #[track_caller]
    fn pullback(mut self, dy: T, (dx, dy_, dcaps): (&mut Vec<W>, &mut E, &mut C)) {
        densify_rows(dx, self.rows);
        let dy_ = dy_.dense(&self.shape);
        for i in (0..self.len).rev() {
            self.pbs
                .pop()
                .pullback(dy, (&mut dx[i], &mut dy_[i], &mut *dcaps));
        }
    }
}

/// Makes a structural-zero cotangent of rows `len` rows long (each row a structural
/// zero itself).
#[inline(always)]
#[track_caller]
fn densify_rows<W: TangentVector>(dx: &mut Vec<W>, len: usize) {
    if dx.len() != len {
        assert!(
            dx.is_empty(),
            "mochi: cotangent has {} rows, primal {len}",
            dx.len()
        );
        dx.resize_with(len, W::zero);
    }
}

/// `a.iter().zip(b.iter()).map(f).sum()` of two sequences of rows (pairs of points),
/// with a derived closure `f(&a_row, &b_row, caps)`.
pub trait IterRowPairsMapSumRule {
    /// The first sequence of rows.
    type Seq: Rows + ?Sized;
    /// The second sequence of rows.
    type Other: Rows<Elem = <Self::Seq as Rows>::Elem> + ?Sized;
    /// The captured variables.
    type Caps: Tangent;
    /// `Σ f(aᵢ, bᵢ)` over the shorter length.
    #[allow(clippy::type_complexity)]
    fn iter_zip_map_sum<F, P>(
        self,
        f: F,
    ) -> (
        <Self::Seq as Rows>::Elem,
        IterRowPairsMapSumPullback<
            P,
            RowCot<Self::Seq>,
            RowCot<Self::Other>,
            <Self::Caps as Tangent>::Tangent,
        >,
    )
    where
        F: Fn(
            &<Self::Seq as Rows>::Row,
            &<Self::Other as Rows>::Row,
            &Self::Caps,
        ) -> (<Self::Seq as Rows>::Elem, P),
        P: Pullback<
                Output = <Self::Seq as Rows>::Elem,
                Args = (
                    RowCot<Self::Seq>,
                    RowCot<Self::Other>,
                    <Self::Caps as Tangent>::Tangent,
                ),
            > + 'static;
}

/// The pullback of `Σ f(aᵢ, bᵢ)` over pairs of rows.
pub struct IterRowPairsMapSumPullback<P: 'static, W, V, C> {
    pbs: Stack<P>,
    len: usize,
    lens: (usize, usize),
    _r: std::marker::PhantomData<(W, V, C)>,
}

impl<'a, S, R, C> IterRowPairsMapSumRule for Call<(&'a S, &'a R, &'a C)>
where
    S: Rows + ?Sized,
    R: Rows<Elem = S::Elem> + ?Sized,
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
        IterRowPairsMapSumPullback<P, RowCot<S>, RowCot<R>, C::Tangent>,
    )
    where
        F: Fn(&S::Row, &R::Row, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (RowCot<S>, RowCot<R>, C::Tangent)> + 'static,
    {
        let (x, y, caps) = self.0;
        let (x, y) = (x.rows(), y.rows());
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = S::Elem::zero();
        for (a, b) in x.iter().zip(y) {
            let (v, pb) = f(a, b, caps);
            acc.accumulate(v);
            pbs.push(pb);
        }
        (
            acc,
            IterRowPairsMapSumPullback {
                pbs,
                len: x.len().min(y.len()),
                lens: (x.len(), y.len()),
                _r: std::marker::PhantomData,
            },
        )
    }
}

impl<T, W, V, C, P> Pullback for IterRowPairsMapSumPullback<P, W, V, C>
where
    T: Elem,
    W: TangentVector,
    V: TangentVector,
    C: TangentVector,
    P: Pullback<Output = T, Args = (W, V, C)> + 'static,
{
    type Output = T;
    type Args = (Vec<W>, Vec<V>, C);
    #[inline(always)]
    #[track_caller]
    fn pullback(mut self, dy: T, (dx, dz, dcaps): (&mut Vec<W>, &mut Vec<V>, &mut C)) {
        densify_rows(dx, self.lens.0);
        densify_rows(dz, self.lens.1);
        for i in (0..self.len).rev() {
            self.pbs
                .pop()
                .pullback(dy, (&mut dx[i], &mut dz[i], &mut *dcaps));
        }
    }
}
