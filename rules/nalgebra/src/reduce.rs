//! Reductions to a scalar: `a.sum()`, `a.norm()` (Euclidean, Frobenius for matrices)
//! and `a.norm_squared()`.
//!
//! `y = Σ aᵢ`: `ā += ȳ`; `y = ‖a‖`: `ā += ȳ a / ‖a‖` (at `a = 0`, where the norm has a
//! kink, the subgradient `0`); `y = ‖a‖²`: `ā += 2 ȳ a`.

use crate::dense::{add_scaled, dense, view};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Matrix, OMatrix, Storage};
use std::marker::PhantomData;

rule_trait! {
    /// `a.sum()`: `Call((&a,)).sum()`.
    NaSum::sum
}
rule_trait! {
    /// `a.norm()`: `Call((&a,)).norm()`.
    NaNorm::norm
}
rule_trait! {
    /// `a.norm_squared()`: `Call((&a,)).norm_squared()`.
    NaNormSquared::norm_squared
}

/// Pullback of `a.sum()`: the shape of `a`.
pub struct SumPullback<T: Elem, R, C> {
    shape: (usize, usize),
    _types: crate::dense::Marker<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for SumPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: T, (da,): (&mut OMatrix<T, R, C>,)) {
        dense(da, self.shape).add_scalar_mut(dy);
    }
}

impl<T, R, C, S> NaSum for Call<(&Matrix<T, R, C, S>,)>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S: Storage<T, R, C>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Pullback = SumPullback<T, R, C>;
    #[inline]
    fn sum(self) -> (T, Self::Pullback) {
        let a = self.0 .0;
        (
            a.sum(),
            SumPullback {
                shape: a.shape(),
                _types: PhantomData,
            },
        )
    }
}

/// Pullback of `a.norm()` and `a.norm_squared()`: a copy of `a` and the factor of `ȳ a`
/// in `ā` (`1/‖a‖`, or `2`).
pub struct NormPullback<T: Elem, R: Dim, C: Dim>
where
    DefaultAllocator: Allocator<R, C>,
{
    a: OMatrix<T, R, C>,
    factor: T,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for NormPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: T, (da,): (&mut OMatrix<T, R, C>,)) {
        add_scaled(da, dy * self.factor, view(&self.a));
    }
}

impl<T, R, C, S> NaNorm for Call<(&Matrix<T, R, C, S>,)>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S: Storage<T, R, C>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Pullback = NormPullback<T, R, C>;
    #[inline]
    fn norm(self) -> (T, Self::Pullback) {
        let a = self.0 .0;
        let y = a.norm();
        // The kink at 0: subgradient 0.
        let factor = if y > T::ZERO { T::ONE / y } else { T::ZERO };
        (
            y,
            NormPullback {
                a: a.clone_owned(),
                factor,
            },
        )
    }
}

impl<T, R, C, S> NaNormSquared for Call<(&Matrix<T, R, C, S>,)>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S: Storage<T, R, C>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Pullback = NormPullback<T, R, C>;
    #[inline]
    fn norm_squared(self) -> (T, Self::Pullback) {
        let a = self.0 .0;
        (
            a.norm_squared(),
            NormPullback {
                a: a.clone_owned(),
                factor: T::ONE + T::ONE,
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
    use mochi_core::{Call, Pullback};
    use nalgebra::{DVector, U1, U3};

    fn reductions<T: Elem>() {
        let a = dmatrix::<T>(3, 2, 0.4);
        RuleTest::new((a.clone(),), |x| x.0.sum(), |x| Call((&x.0,)).sum())
            .jvp(|_, t| t.0.sum())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        RuleTest::new((a.clone(),), |x| x.0.norm(), |x| Call((&x.0,)).norm())
            // d‖a‖ = ⟨a, ȧ⟩ / ‖a‖
            .jvp(|x, t| x.0.dot(&t.0) / x.0.norm())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        RuleTest::new(
            (a,),
            |x| x.0.norm_squared(),
            |x| Call((&x.0,)).norm_squared(),
        )
        .jvp(|x, t| x.0.dot(&t.0) * T::of_f64(2.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn reductions_f64_and_f32() {
        reductions::<f64>();
        reductions::<f32>();
    }

    #[test]
    fn static_reductions_allocate_nothing_in_the_pullback() {
        let v = matrix::<f64, _, _>(U3, U1, 0.2);
        RuleTest::new((v,), |x| x.0.norm(), |x| Call((&x.0,)).norm())
            .expect_no_alloc()
            .run();
        RuleTest::new((v,), |x| x.0.sum(), |x| Call((&x.0,)).sum())
            .expect_no_alloc()
            .run();
    }

    #[test]
    fn the_norm_at_zero_has_the_subgradient_zero() {
        let z = DVector::<f64>::zeros(3);
        let (y, pb) = Call((&z,)).norm();
        let mut dz = DVector::zeros(3);
        pb.pullback(1.0, (&mut dz,));
        assert_eq!((y, dz), (0.0, DVector::zeros(3)));
    }
}
