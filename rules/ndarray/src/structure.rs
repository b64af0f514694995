//! Structured matrices: `triu`/`tril` (upper and lower triangular parts),
//! `diag`, and [`trace`](fn@trace).
//!
//! Each keeps or reads a fixed set of entries, so its pullback routes the
//! output cotangent to exactly those entries of the input's.

use crate::cotangent::{add_owned, dense, output};
use crate::Elem;
use mochi_core::kit::rule_trait;
use mochi_core::{Call, NoTangent, Pullback};
use ndarray::{Array, Array1, Array2, ArrayBase, ArrayView1, Data, Dimension, Ix2};
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

    #[test]
    fn triangular_parts_diagonal_trace() {
        parts::<f64>();
        parts::<f32>();
    }
}
