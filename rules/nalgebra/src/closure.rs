//! Adapters that take a closure: `a.map(|x| …)` and `a.zip_map(&b, |x, y| …)`.
//!
//! `#[differentiable]` turns the user's closure into a *derived closure* returning the
//! element's value and its pullback, and passes the closure's captured variables as one
//! tuple `caps`: `a.map(f)` becomes `Call((&a, &caps)).map(derived)` (the derived
//! closure takes the element by reference) and `a.zip_map(&b, f)` becomes
//! `Call((&a, &b, &caps)).zip_map(derived)` (both elements by value). The forward pass
//! runs the derived closure on every element in nalgebra's column-major order and
//! keeps the element pullbacks; the reverse pass runs them backwards, adding each
//! element's cotangent into the matrix's accumulator and the captures' cotangents into
//! the one captures accumulator.

use crate::dense::{dense, output};
use crate::Elem;
use mochi_core::{Call, Pullback, Tangent, TangentVector};
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Matrix, OMatrix, Storage};
use std::marker::PhantomData;

/// `a.map(f)`: `Call((&a, &caps)).map(derived)`.
pub trait NaMap<F> {
    /// The primal output.
    type Output;
    /// The pullback.
    type Pullback: Pullback;
    /// Maps every element through the derived closure.
    fn map(self, f: F) -> (Self::Output, Self::Pullback);
}

/// `a.zip_map(&b, f)`: `Call((&a, &b, &caps)).zip_map(derived)`.
pub trait NaZipMap<F> {
    /// The primal output.
    type Output;
    /// The pullback.
    type Pullback: Pullback;
    /// Maps every pair of elements through the derived closure.
    fn zip_map(self, f: F) -> (Self::Output, Self::Pullback);
}

/// Pullback of `map`: the element pullbacks in column-major order.
pub struct MapPullback<T: Elem, R, C, P> {
    shape: (usize, usize),
    pullbacks: Vec<P>,
    _types: crate::dense::Marker<T, R, C>,
}

impl<T, R, C, Cp, P> Pullback for MapPullback<T, R, C, P>
where
    T: Elem,
    R: Dim,
    C: Dim,
    Cp: TangentVector,
    P: Pullback<Output = T, Args = (T, Cp)>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, Cp);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da, dcaps): (&mut OMatrix<T, R, C>, &mut Cp)) {
        let Some(dy) = output(&dy, self.shape) else {
            return;
        };
        let mut da = dense(da, self.shape);
        let pairs = self
            .pullbacks
            .into_iter()
            .zip(dy.iter().zip(da.iter_mut()))
            .rev();
        for (pb, (&g, d)) in pairs {
            pb.pullback(g, (d, &mut *dcaps));
        }
    }
}

impl<T, R, C, S, Cp, F, P> NaMap<F> for Call<(&Matrix<T, R, C, S>, &Cp)>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S: Storage<T, R, C>,
    Cp: Tangent,
    F: FnMut(&T, &Cp) -> (T, P),
    P: Pullback<Output = T, Args = (T, Cp::Tangent)>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Pullback = MapPullback<T, R, C, P>;
    fn map(self, mut f: F) -> (Self::Output, Self::Pullback) {
        let (a, caps) = self.0;
        let mut pullbacks = Vec::with_capacity(a.len());
        let (rows, cols) = a.shape_generic();
        // `iter()` is column-major, the order `from_iterator_generic` fills in.
        let values = a.iter().map(|v| {
            let (y, pb) = f(v, caps);
            pullbacks.push(pb);
            y
        });
        let y = OMatrix::from_iterator_generic(rows, cols, values);
        (
            y,
            MapPullback {
                shape: a.shape(),
                pullbacks,
                _types: PhantomData,
            },
        )
    }
}

/// Pullback of `zip_map`: the element pullbacks in column-major order.
pub struct ZipMapPullback<T: Elem, R, C, P> {
    shape: (usize, usize),
    pullbacks: Vec<P>,
    _types: crate::dense::Marker<T, R, C>,
}

impl<T, R, C, Cp, P> Pullback for ZipMapPullback<T, R, C, P>
where
    T: Elem,
    R: Dim,
    C: Dim,
    Cp: TangentVector,
    P: Pullback<Output = T, Args = (T, T, Cp)>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, OMatrix<T, R, C>, Cp);
    #[track_caller]
    fn pullback(
        self,
        dy: OMatrix<T, R, C>,
        (da, db, dcaps): (&mut OMatrix<T, R, C>, &mut OMatrix<T, R, C>, &mut Cp),
    ) {
        let Some(dy) = output(&dy, self.shape) else {
            return;
        };
        let mut da = dense(da, self.shape);
        let mut db = dense(db, self.shape);
        let pairs = self
            .pullbacks
            .into_iter()
            .zip(dy.iter().zip(da.iter_mut().zip(db.iter_mut())))
            .rev();
        for (pb, (&g, (x, y))) in pairs {
            pb.pullback(g, (x, y, &mut *dcaps));
        }
    }
}

impl<T, R, C, S1, S2, Cp, F, P> NaZipMap<F>
    for Call<(&Matrix<T, R, C, S1>, &Matrix<T, R, C, S2>, &Cp)>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S1: Storage<T, R, C>,
    S2: Storage<T, R, C>,
    Cp: Tangent,
    F: FnMut(T, T, &Cp) -> (T, P),
    P: Pullback<Output = T, Args = (T, T, Cp::Tangent)>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Pullback = ZipMapPullback<T, R, C, P>;
    #[track_caller]
    fn zip_map(self, mut f: F) -> (Self::Output, Self::Pullback) {
        let (a, b, caps) = self.0;
        assert_eq!(
            a.shape(),
            b.shape(),
            "mochi: zip_map of matrices of shapes {:?} and {:?}",
            a.shape(),
            b.shape()
        );
        let mut pullbacks = Vec::with_capacity(a.len());
        let (rows, cols) = a.shape_generic();
        let values = a.iter().zip(b.iter()).map(|(&x, &y)| {
            let (v, pb) = f(x, y, caps);
            pullbacks.push(pb);
            v
        });
        let y = OMatrix::from_iterator_generic(rows, cols, values);
        (
            y,
            ZipMapPullback {
                shape: a.shape(),
                pullbacks,
                _types: PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::dmatrix;
    use mochi_core::kit::pullback2;
    use mochi_core::testing::RuleTest;
    use mochi_core::NoTangent;

    /// The derived closure of `|x| (x * c).sin()` with one capture `c`, as
    /// `#[differentiable]` writes it (element by reference).
    fn derived_sin_scaled<T: Elem>(
        x: &T,
        caps: &(T,),
    ) -> (T, impl Pullback<Output = T, Args = (T, (T,))>) {
        let (x, c) = (*x, caps.0);
        let y = (x * c).sin();
        (
            y,
            pullback2(move |dy: T, (dx, dcaps): (&mut T, &mut (T,))| {
                // d sin(xc) = cos(xc) (c dx + x dc)
                let g = dy * (x * c).cos();
                *dx += g * c;
                dcaps.0 += g * x;
            }),
        )
    }

    /// The derived closure of `|x, y| x * y.exp()` (both by value), no captures.
    fn derived_mul_exp<T: Elem>(
        x: T,
        y: T,
        _caps: &(),
    ) -> (T, impl Pullback<Output = T, Args = (T, T, NoTangent)>) {
        let e = y.exp();
        (
            x * e,
            mochi_core::kit::pullback3(
                move |dv: T, (dx, dy, _): (&mut T, &mut T, &mut NoTangent)| {
                    *dx += dv * e;
                    *dy += dv * x * e;
                },
            ),
        )
    }

    fn closures<T: Elem>() {
        let c = T::of_f64(0.7);
        RuleTest::new(
            (dmatrix::<T>(2, 3, 0.2), (c,)),
            |a| a.0.map(|x| (x * a.1 .0).sin()),
            |a| Call((&a.0, &a.1)).map(derived_sin_scaled),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (dmatrix::<T>(3, 2, 0.2), dmatrix::<T>(3, 2, 0.9), ()),
            |a| a.0.zip_map(&a.1, |x, y| x * y.exp()),
            |a| Call((&a.0, &a.1, &a.2)).zip_map(derived_mul_exp),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn map_and_zip_map_f64_and_f32() {
        closures::<f64>();
        closures::<f32>();
    }
}
