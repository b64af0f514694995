//! `rows.iter().map(f).sum()` over a sequence of rows (`&[Vec<T>]`, `Vec<Vec<T>>`), and
//! `rows.iter().zip(y.iter()).map(f).sum()` with a sequence of floats: the closure maps
//! a row to a float. What `#[differentiable]` makes of
//! `a.iter().map(|row| row.iter().zip(x).map(|(r, v)| r * v).sum::<f64>().powi(2)).sum()`;
//! the closure arrives derived, and its pullback adds into that row's cotangent.

use crate::seq::{Elem, Sequence};
use mochi_core::kit::tape::{Site, Stack};
use mochi_core::{Call, Pullback, Tangent};

/// Sequences of rows, each a `Vec` of floats; their cotangent is a `Vec` of rows.
pub trait Rows {
    /// The float type.
    type Elem: Elem;
    /// The rows.
    fn rows(&self) -> &[Vec<Self::Elem>];
}

impl<T: Elem> Rows for [Vec<T>] {
    type Elem = T;
    #[inline(always)]
    fn rows(&self) -> &[Vec<T>] {
        self
    }
}

impl<T: Elem> Rows for Vec<Vec<T>> {
    type Elem = T;
    #[inline(always)]
    fn rows(&self) -> &[Vec<T>] {
        self
    }
}

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
        IterRowsMapSumPullback<P, <Self::Caps as Tangent>::Tangent>,
    )
    where
        F: Fn(&Vec<<Self::Seq as Rows>::Elem>, &Self::Caps) -> (<Self::Seq as Rows>::Elem, P),
        P: Pullback<
                Output = <Self::Seq as Rows>::Elem,
                Args = (
                    Vec<<Self::Seq as Rows>::Elem>,
                    <Self::Caps as Tangent>::Tangent,
                ),
            > + 'static;
}

/// The pullback of `Σ f(rowᵢ)`: each row's derived pullback, in reverse.
pub struct IterRowsMapSumPullback<P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    _c: std::marker::PhantomData<C>,
}

impl<'a, S: Rows + ?Sized, C: Tangent> IterRowsMapSumRule for Call<(&'a S, &'a C)> {
    type Seq = S;
    type Caps = C;
    #[inline(always)]
    fn iter_map_sum<F, P>(self, f: F) -> (S::Elem, IterRowsMapSumPullback<P, C::Tangent>)
    where
        F: Fn(&Vec<S::Elem>, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (Vec<S::Elem>, C::Tangent)> + 'static,
    {
        let (x, caps) = self.0;
        let x = x.rows();
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = <S::Elem as mochi_core::TangentVector>::zero();
        for row in x {
            let (y, pb) = f(row, caps);
            mochi_core::TangentVector::accumulate(&mut acc, y);
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

impl<T, C, P> Pullback for IterRowsMapSumPullback<P, C>
where
    T: Elem,
    C: mochi_core::TangentVector,
    P: Pullback<Output = T, Args = (Vec<T>, C)> + 'static,
{
    type Output = T;
    type Args = (Vec<Vec<T>>, C);
    #[inline(always)]
    #[track_caller]
    fn pullback(mut self, dy: T, (dx, dcaps): (&mut Vec<Vec<T>>, &mut C)) {
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
        IterRowsZipMapSumPullback<Self::Other, P, <Self::Caps as Tangent>::Tangent>,
    )
    where
        F: Fn(
            &Vec<<Self::Seq as Rows>::Elem>,
            &<Self::Seq as Rows>::Elem,
            &Self::Caps,
        ) -> (<Self::Seq as Rows>::Elem, P),
        P: Pullback<
                Output = <Self::Seq as Rows>::Elem,
                Args = (
                    Vec<<Self::Seq as Rows>::Elem>,
                    <Self::Seq as Rows>::Elem,
                    <Self::Caps as Tangent>::Tangent,
                ),
            > + 'static;
}

/// The pullback of `Σ f(rowᵢ, yᵢ)`.
#[allow(clippy::type_complexity)]
pub struct IterRowsZipMapSumPullback<R: ?Sized, P: 'static, C> {
    pbs: Stack<P>,
    len: usize,
    lens: (usize, usize),
    _r: std::marker::PhantomData<(fn(&R), C)>,
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
    fn iter_zip_map_sum<F, P>(self, f: F) -> (S::Elem, IterRowsZipMapSumPullback<R, P, C::Tangent>)
    where
        F: Fn(&Vec<S::Elem>, &S::Elem, &C) -> (S::Elem, P),
        P: Pullback<Output = S::Elem, Args = (Vec<S::Elem>, S::Elem, C::Tangent)> + 'static,
    {
        let (x, y, caps) = self.0;
        let (x, y) = (x.rows(), y.elems());
        static SITE: Site = Site::new();
        let mut pbs = Stack::new(&SITE);
        let mut acc = <S::Elem as mochi_core::TangentVector>::zero();
        for (row, b) in x.iter().zip(y) {
            let (v, pb) = f(row, b, caps);
            mochi_core::TangentVector::accumulate(&mut acc, v);
            pbs.push(pb);
        }
        (
            acc,
            IterRowsZipMapSumPullback {
                pbs,
                len: x.len().min(y.len()),
                lens: (x.len(), y.len()),
                _r: std::marker::PhantomData,
            },
        )
    }
}

impl<T, R, C, P> Pullback for IterRowsZipMapSumPullback<R, P, C>
where
    T: Elem,
    R: Sequence<Elem = T> + ?Sized,
    C: mochi_core::TangentVector,
    P: Pullback<Output = T, Args = (Vec<T>, T, C)> + 'static,
{
    type Output = T;
    type Args = (Vec<Vec<T>>, R::Cot, C);
    #[inline(always)]
    #[track_caller]
    fn pullback(mut self, dy: T, (dx, dy_, dcaps): (&mut Vec<Vec<T>>, &mut R::Cot, &mut C)) {
        densify_rows(dx, self.lens.0);
        R::densify(dy_, self.lens.1);
        for i in (0..self.len).rev() {
            self.pbs
                .pop()
                .pullback(dy, (&mut dx[i], &mut dy_[i], &mut *dcaps));
        }
    }
}

/// Makes a structural-zero cotangent of rows `len` (empty, themselves structural zero)
/// rows long.
#[inline(always)]
#[track_caller]
fn densify_rows<T>(dx: &mut Vec<Vec<T>>, len: usize) {
    if dx.len() != len {
        assert!(
            dx.is_empty(),
            "mochi: cotangent has {} rows, primal {len}",
            dx.len()
        );
        dx.resize_with(len, Vec::new);
    }
}
