//! `a.transpose()`: `ā += ȳᵀ`.

use crate::dense::{dense, output};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Matrix, OMatrix, Storage};
use std::marker::PhantomData;

rule_trait! {
    /// `a.transpose()`: `Call((&a,)).transpose()`.
    NaTranspose::transpose
}

/// Pullback of `a.transpose()`: the shape of `a`.
pub struct TransposePullback<T: Elem, R, C> {
    shape: (usize, usize),
    _types: crate::dense::Marker<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for TransposePullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C> + Allocator<C, R>,
{
    type Output = OMatrix<T, C, R>;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, C, R>, (da,): (&mut OMatrix<T, R, C>,)) {
        let (rows, cols) = self.shape;
        let Some(dy) = output(&dy, (cols, rows)) else {
            return;
        };
        let mut da = dense(da, self.shape);
        for j in 0..cols {
            for i in 0..rows {
                da[(i, j)] += dy[(j, i)];
            }
        }
    }
}

impl<T, R, C, S> NaTranspose for Call<(&Matrix<T, R, C, S>,)>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S: Storage<T, R, C>,
    DefaultAllocator: Allocator<R, C> + Allocator<C, R>,
{
    type Output = OMatrix<T, C, R>;
    type Pullback = TransposePullback<T, R, C>;
    #[inline]
    fn transpose(self) -> (Self::Output, Self::Pullback) {
        let a = self.0 .0;
        (
            a.transpose(),
            TransposePullback {
                shape: a.shape(),
                _types: PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{dmatrix, matrix};
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use nalgebra::{U2, U3};

    fn transposes<T: Elem>() {
        RuleTest::new(
            (dmatrix::<T>(2, 3, 0.3),),
            |x| x.0.transpose(),
            |x| Call((&x.0,)).transpose(),
        )
        .jvp(|_, t| t.0.transpose())
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn transpose_f64_and_f32() {
        transposes::<f64>();
        transposes::<f32>();
    }

    #[test]
    fn static_transpose_allocates_nothing_in_the_pullback() {
        RuleTest::new(
            (matrix::<f64, _, _>(U2, U3, 0.3),),
            |x| x.0.transpose(),
            |x| Call((&x.0,)).transpose(),
        )
        .expect_no_alloc()
        .run();
    }
}
