//! Structured matrices: `triu`/`tril` (upper and lower triangular parts),
//! `diag`, `Array2::from_diag`, and [`trace`](fn@trace).
//!
//! Each keeps or reads a fixed set of entries, so its pullback routes the
//! output cotangent to exactly those entries of the input's.

use crate::cotangent::{add_owned, add_view, dense, output, view};
use crate::Elem;
use mochi_core::kit::rule_trait;
use mochi_core::{Call, NoTangent, Pullback};
use ndarray::{Array, Array1, Array2, ArrayBase, ArrayView1, Data, Dimension, Ix1, Ix2};
use std::marker::PhantomData;

rule_trait! {
    /// `x.triu(k)`: `Call((&x, &k)).triu()`.
    NdTriu::triu
}
rule_trait! {
    /// `x.tril(k)`: `Call((&x, &k)).tril()`.
    NdTril::tril
}
rule_trait! {
    /// `x.diag()`: `Call((&x,)).diag()`.
    NdDiag::diag
}
rule_trait! {
    /// `trace(&x)` as a method: `Call((&x,)).trace()`.
    NdTrace::trace
}

/// Pullback of `triu(k)` / `tril(k)`: keeps the same part of the output cotangent.
pub struct TriangularPullback<T, D> {
    dim: D,
    k: isize,
    upper: bool,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for TriangularPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        let Some(dy) = output(dy, &self.dim) else {
            return;
        };
        let part = if self.upper {
            dy.triu(self.k)
        } else {
            dy.tril(self.k)
        };
        add_owned(dx, &self.dim, part);
    }
}

macro_rules! triangular {
    ($Trait:ident, $method:ident, $upper:expr) => {
        impl<'a, 'b, T: Elem, S: Data<Elem = T>, D: Dimension> $Trait
            for Call<(&'a ArrayBase<S, D>, &'b isize)>
        {
            type Output = Array<T, D>;
            type Pullback = TriangularPullback<T, D>;
            #[track_caller]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (x, &k) = self.0;
                let y = x.$method(k);
                (
                    y,
                    TriangularPullback {
                        dim: x.raw_dim(),
                        k,
                        upper: $upper,
                        _t: PhantomData,
                    },
                )
            }
        }
    };
}
triangular!(NdTriu, triu, true);
triangular!(NdTril, tril, false);

/// Pullback of `diag()`: adds the output cotangent onto the diagonal.
pub struct DiagPullback<T, D> {
    dim: D,
    _t: PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for DiagPullback<T, D> {
    type Output = Array1<T>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: Array1<T>, (dx,): (&mut Array<T, D>,)) {
        let n = self.dim.slice().iter().copied().min().unwrap_or(0);
        let Some(dy) = output(dy, &ndarray::Ix1(n)) else {
            return;
        };
        dense(dx, &self.dim)
            .diag_mut()
            .zip_mut_with(&dy, |d, &y| *d += y);
    }
}

impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension> NdDiag for Call<(&'a ArrayBase<S, D>,)> {
    type Output = ArrayView1<'a, T>;
    type Pullback = DiagPullback<T, D>;
    #[inline]
    fn diag(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (
            x.diag(),
            DiagPullback {
                dim: x.raw_dim(),
                _t: PhantomData,
            },
        )
    }
}

/// Pullback of `from_diag`: the diagonal of the output cotangent, added into `v̄`.
pub struct FromDiagPullback<T> {
    n: usize,
    _t: PhantomData<T>,
}

impl<T: Elem> Pullback for FromDiagPullback<T> {
    type Output = Array2<T>;
    type Args = (Array1<T>,);
    #[track_caller]
    fn pullback(self, dy: Array2<T>, (dv,): (&mut Array1<T>,)) {
        let n = self.n;
        // A broadcast-form `ȳ` is read through a view (no expansion).
        let Some(dy) = view(&dy, &Ix2(n, n)) else {
            return;
        };
        add_view(dv, &Ix1(n), dy.diag());
    }
}

macro_rules! from_diag_rules {
    ($($(#[$doc:meta])* $Trait:ident :: $method:ident;)*) => {$(
        rule_trait!($(#[$doc])* $Trait::$method);

        impl<T: Elem, S: Data<Elem = T>> $Trait for Call<(&ArrayBase<S, Ix1>,)> {
            type Output = Array2<T>;
            type Pullback = FromDiagPullback<T>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (v,) = self.0;
                (Array2::from_diag(v), FromDiagPullback { n: v.len(), _t: PhantomData })
            }
        }
    )*};
}

from_diag_rules! {
    /// `Array2::from_diag(&v)`, the square matrix with `v` on its diagonal:
    /// `Call((&v,)).array2_from_diag()`.
    NdArray2FromDiag::array2_from_diag;
    /// `Array::from_diag(&v)` (a matrix): `Call((&v,)).array_from_diag()`.
    NdArrayFromDiag::array_from_diag;
}

/// The trace of a matrix: the sum of its diagonal `x[[i, i]]`, `i < min(rows, cols)`.
///
/// ```
/// let x = ndarray::array![[1.0, 2.0], [3.0, 4.0]];
/// assert_eq!(mochi_rules_ndarray::trace(&x), 5.0);
/// ```
pub fn trace<T: Elem, S: Data<Elem = T>>(x: &ArrayBase<S, Ix2>) -> T {
    x.diag().fold(T::ZERO, |acc, &v| acc + v)
}

/// The rule of [`trace`](fn@trace): `x̄ᵢᵢ += ȳ`.
pub mod trace {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::trace as __twin;
    use super::*;

    /// Pullback of `trace`: the matrix's shape.
    pub struct TracePullback<T> {
        dim: Ix2,
        _t: PhantomData<T>,
    }

    impl<T: Elem> Pullback for TracePullback<T> {
        type Output = T;
        type Args = (Array2<T>,);
        #[track_caller]
        fn pullback(self, dy: T, (dx,): (&mut Array2<T>,)) {
            dense(dx, &self.dim).diag_mut().map_inplace(|d| *d += dy);
        }
    }

    /// `trace(x)` with its pullback.
    pub fn rrule<T: Elem, S: Data<Elem = T>>(x: &ArrayBase<S, Ix2>) -> (T, TracePullback<T>) {
        (
            super::trace(x),
            TracePullback {
                dim: x.raw_dim(),
                _t: PhantomData,
            },
        )
    }
}

impl<T: Elem, S: Data<Elem = T>> NdTrace for Call<(&ArrayBase<S, Ix2>,)> {
    type Output = T;
    type Pullback = trace::TracePullback<T>;
    fn trace(self) -> (T, Self::Pullback) {
        trace::rrule(self.0 .0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, TestElem};
    use mochi_core::testing::RuleTest;

    fn parts<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(3, 3), Ix2(3, 5), Ix2(0, 2)] {
            for (_, x) in layouts::<T, _>(shape, 50) {
                for k in [-1isize, 0, 2] {
                    RuleTest::new(
                        (x.clone(), k),
                        |a| a.0.triu(a.1),
                        |a| Call((&a.0, &a.1)).triu(),
                    )
                    .forward(|a| a.0.triu(a.1))
                    .tolerance(T::RTOL, T::ATOL)
                    .run();
                    RuleTest::new(
                        (x.clone(), k),
                        |a| a.0.tril(a.1),
                        |a| Call((&a.0, &a.1)).tril(),
                    )
                    .forward(|a| a.0.tril(a.1))
                    .tolerance(T::RTOL, T::ATOL)
                    .run();
                }
                RuleTest::new(
                    (x.clone(),),
                    |a| a.0.diag().to_owned(),
                    |a| {
                        let (y, pb) = Call((&a.0,)).diag();
                        (y.to_owned(), pb)
                    },
                )
                .forward(|a| a.0.diag().to_owned())
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                // d tr(X)/dX = I
                RuleTest::new((x.clone(),), |a| trace(&a.0), |a| trace::rrule(&a.0))
                    .forward(|a| trace(&a.0))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                RuleTest::new((x,), |a| trace(&a.0), |a| Call((&a.0,)).trace())
                    .forward(|a| trace(&a.0))
                    .tolerance(T::RTOL, T::ATOL)
                    .run();
            }
        }
    }

    fn diagonal_matrices<T: TestElem>() {
        for n in [0, 1, 4] {
            for (_, v) in layouts::<T, _>(Ix1(n), 51) {
                // the cotangent of `v` is the diagonal of the output cotangent
                RuleTest::new(
                    (v.clone(),),
                    |a| Array2::from_diag(&a.0),
                    |a| Call((&a.0,)).array2_from_diag(),
                )
                .forward(|a| Array2::from_diag(&a.0))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    (v,),
                    |a| Array::from_diag(&a.0),
                    |a| {
                        let x = a.0.view();
                        Call((&x,)).array_from_diag()
                    },
                )
                .forward(|a| Array::from_diag(&a.0))
                .tolerance(T::RTOL, T::ATOL)
                .run();
            }
        }
    }

    #[test]
    fn matrix_from_a_diagonal() {
        diagonal_matrices::<f64>();
        diagonal_matrices::<f32>();
    }

    #[test]
    fn from_diag_reads_the_diagonal_of_a_broadcast_cotangent() {
        let v = ndarray::array![1.0, 2.0, 3.0];
        let (y, pb) = Call((&v,)).array2_from_diag();
        assert_eq!(y, Array2::from_diag(&v));
        let mut dv = Array1::zeros(0);
        // a row broadcast down the rows: the diagonal is the row itself
        pb.pullback(ndarray::array![[4.0, 5.0, 6.0]], (&mut dv,));
        assert_eq!(dv, ndarray::array![4.0, 5.0, 6.0]);
    }

    #[test]
    fn triangular_parts_diagonal_trace() {
        parts::<f64>();
        parts::<f32>();
    }
}
