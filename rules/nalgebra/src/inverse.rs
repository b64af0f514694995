//! `m.determinant()` and `m.try_inverse()` of a square matrix (and, in
//! [`factor`](crate::factor), of its factorisations).
//!
//! `y = det A`: `Ā += ȳ · det A · A⁻ᵀ`; `Y = A⁻¹`: `Ā −= Yᵀ Ȳ Yᵀ`. At a singular `A`
//! the determinant's gradient is the cofactor matrix, which these rules do not form:
//! they add nothing there (`try_inverse` returns `None` and has no cotangent anyway).

use crate::dense::{dense, output, view};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::{
    DMatrix, DMatrixView, DMatrixViewMut, DefaultAllocator, Dim, DimMin, Matrix, OMatrix, Storage,
};

rule_trait! {
    /// `m.determinant()` (also of a `Cholesky` or `LU`): `Call((&m,)).determinant()`.
    NaDeterminant::determinant
}
rule_trait! {
    /// `m.try_inverse()` (also of an `LU`): `Call((&m,)).try_inverse()`.
    NaTryInverse::try_inverse
}

/// `acc += α · Yᵀ`.
pub(crate) fn add_transposed<T: Elem>(
    mut acc: DMatrixViewMut<'_, T>,
    alpha: T,
    y: DMatrixView<'_, T>,
) {
    let n = y.nrows();
    for j in 0..n {
        for i in 0..n {
            acc[(i, j)] += alpha * y[(j, i)];
        }
    }
}

/// `acc −= Yᵀ Ȳ Yᵀ`, the pullback of `Y = A⁻¹` into `Ā`.
pub(crate) fn add_inverse_pullback<T: Elem>(
    mut acc: DMatrixViewMut<'_, T>,
    y: DMatrixView<'_, T>,
    dy: DMatrixView<'_, T>,
) {
    let yt = y.transpose();
    let g: DMatrix<T> = &yt * dy * &yt;
    acc.iter_mut().zip(g.iter()).for_each(|(a, &v)| *a -= v);
}

/// Pullback of a determinant or a log-determinant (of a matrix, an LU or a Cholesky
/// factorisation): `A⁻¹` (`None` when `A` is singular) and the factor of `ȳ A⁻ᵀ` in `Ā`
/// (`det A`, or `1` for the log-determinant).
pub struct DeterminantPullback<T: Elem, D: Dim>
where
    DefaultAllocator: Allocator<D, D>,
{
    factor: T,
    inverse: Option<OMatrix<T, D, D>>,
}

impl<T: Elem, D: Dim> DeterminantPullback<T, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    /// `Ā += ȳ · factor · A⁻ᵀ`.
    #[inline]
    pub(crate) fn new(factor: T, inverse: Option<OMatrix<T, D, D>>) -> Self {
        DeterminantPullback { factor, inverse }
    }
}

impl<T: Elem, D: Dim> Pullback for DeterminantPullback<T, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = T;
    type Args = (OMatrix<T, D, D>,);
    #[track_caller]
    fn pullback(self, dy: T, (da,): (&mut OMatrix<T, D, D>,)) {
        let Some(inverse) = &self.inverse else {
            return;
        };
        // ∂ det A / ∂A = det A · A⁻ᵀ, ∂ ln det A / ∂A = A⁻ᵀ
        let n = inverse.nrows();
        add_transposed(dense(da, (n, n)), dy * self.factor, view(inverse));
    }
}

impl<T, D, S> NaDeterminant for Call<(&Matrix<T, D, D, S>,)>
where
    T: Elem,
    D: DimMin<D, Output = D>,
    S: Storage<T, D, D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    type Output = T;
    type Pullback = DeterminantPullback<T, D>;
    #[inline]
    #[track_caller]
    fn determinant(self) -> (T, Self::Pullback) {
        let a = self.0 .0;
        let det = a.determinant();
        (
            det,
            DeterminantPullback::new(det, a.clone_owned().try_inverse()),
        )
    }
}

/// Pullback of `m.try_inverse()` (of a matrix or an LU factorisation): the inverse
/// (`None` when there is none).
pub struct TryInversePullback<T: Elem, D: Dim>
where
    DefaultAllocator: Allocator<D, D>,
{
    pub(crate) inverse: Option<OMatrix<T, D, D>>,
}

impl<T: Elem, D: Dim> Pullback for TryInversePullback<T, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = Option<OMatrix<T, D, D>>;
    type Args = (OMatrix<T, D, D>,);
    #[track_caller]
    fn pullback(self, dy: Option<OMatrix<T, D, D>>, (da,): (&mut OMatrix<T, D, D>,)) {
        let (Some(y), Some(dy)) = (&self.inverse, &dy) else {
            return;
        };
        let n = y.nrows();
        let Some(dy) = output(dy, (n, n)) else {
            return;
        };
        add_inverse_pullback(dense(da, (n, n)), view(y), dy);
    }
}

impl<T, D, S> NaTryInverse for Call<(&Matrix<T, D, D, S>,)>
where
    T: Elem,
    D: Dim,
    S: Storage<T, D, D>,
    DefaultAllocator: Allocator<D, D>,
{
    type Output = Option<OMatrix<T, D, D>>;
    type Pullback = TryInversePullback<T, D>;
    #[inline]
    #[track_caller]
    fn try_inverse(self) -> (Self::Output, Self::Pullback) {
        let a = self.0 .0;
        let inverse = a.clone_owned().try_inverse();
        (inverse.clone(), TryInversePullback { inverse })
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{dmatrix, spd};
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::{Call, Pullback};
    use nalgebra::{DMatrix, Matrix3};

    fn inverses<T: Elem>() {
        // n ≤ 3 takes nalgebra's closed forms, n = 4 its LU.
        for n in [1, 2, 3, 4] {
            let a = dmatrix::<T>(n, n, 0.3) + DMatrix::identity(n, n) * T::of_f64(2.0);
            RuleTest::new(
                (a.clone(),),
                |x| x.0.determinant(),
                |x| Call((&x.0,)).determinant(),
            )
            // d det A = det A · tr(A⁻¹ Ȧ)
            .jvp(|x, t| {
                let inv = x.0.clone().try_inverse().expect("invertible");
                x.0.determinant() * (inv * &t.0).trace()
            })
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new(
                (spd::<T>(n, 0.1),),
                |x| x.0.clone().try_inverse(),
                |x| Call((&x.0,)).try_inverse(),
            )
            // dY = −Y Ȧ Y
            .jvp(|x, t| {
                let y = x.0.clone().try_inverse().expect("invertible");
                Some(-(&y * &t.0 * &y))
            })
            .tolerance(T::RTOL, T::ATOL)
            .run();
        }
    }

    #[test]
    fn determinant_and_inverse_f64_and_f32() {
        inverses::<f64>();
        inverses::<f32>();
    }

    #[test]
    fn static_sizes() {
        let a = Matrix3::new(2.0, 0.3, -0.1, 0.2, 1.5, 0.4, -0.3, 0.1, 1.0_f64);
        RuleTest::new((a,), |x| x.0.determinant(), |x| Call((&x.0,)).determinant()).run();
        RuleTest::new((a,), |x| x.0.try_inverse(), |x| Call((&x.0,)).try_inverse()).run();
    }

    #[test]
    fn a_singular_matrix_has_no_inverse_and_adds_nothing() {
        let a = DMatrix::from_row_slice(2, 2, &[1.0_f64, 2.0, 2.0, 4.0]);
        let (y, pb) = Call((&a,)).try_inverse();
        assert!(y.is_none());
        let mut da = DMatrix::zeros(0, 0);
        pb.pullback(None, (&mut da,));
        assert!(da.is_empty());
    }
}
