//! `a.cross(&b)` for 3-vectors, static (`Vector3`) or dynamic (`DVector` of length 3),
//! and `a.cross_matrix()` of a `Vector3`.
//!
//! `c = a × b`: `ā += b × c̄`, `b̄ += c̄ × a` (the cross product is bilinear and
//! `⟨c̄, ȧ × b⟩ = ⟨b × c̄, ȧ⟩`).

use crate::dense::{dense, output};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Dyn, Matrix, OMatrix, Storage, U1, U3};

rule_trait! {
    /// `a.cross(&b)`: `Call((&a, &b)).cross()`.
    NaCross::cross
}

/// `u × v` of three-element slices.
#[inline(always)]
fn cross3<T: Elem>(u: &[T], v: &[T]) -> [T; 3] {
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

/// Pullback of `a.cross(&b)`: copies of both.
pub struct CrossPullback<T: Elem, R: Dim>
where
    DefaultAllocator: Allocator<R, U1>,
{
    a: OMatrix<T, R, U1>,
    b: OMatrix<T, R, U1>,
}

impl<T: Elem, R: Dim> Pullback for CrossPullback<T, R>
where
    DefaultAllocator: Allocator<R, U1>,
{
    type Output = OMatrix<T, R, U1>;
    type Args = (OMatrix<T, R, U1>, OMatrix<T, R, U1>);
    #[track_caller]
    fn pullback(
        self,
        dc: OMatrix<T, R, U1>,
        (da, db): (&mut OMatrix<T, R, U1>, &mut OMatrix<T, R, U1>),
    ) {
        let Some(dc) = output(&dc, (3, 1)) else {
            return;
        };
        let dc = [dc[0], dc[1], dc[2]];
        let (a, b) = (self.a.as_slice(), self.b.as_slice());
        let ga = cross3(b, &dc);
        let gb = cross3(&dc, a);
        let mut da = dense(da, (3, 1));
        da.iter_mut().zip(ga).for_each(|(d, g)| *d += g);
        let mut db = dense(db, (3, 1));
        db.iter_mut().zip(gb).for_each(|(d, g)| *d += g);
    }
}

macro_rules! cross_rule {
    ($($R:ty),*) => {$(
        impl<T, S1, S2> NaCross for Call<(&Matrix<T, $R, U1, S1>, &Matrix<T, $R, U1, S2>)>
        where
            T: Elem,
            S1: Storage<T, $R, U1>,
            S2: Storage<T, $R, U1>,
        {
            type Output = OMatrix<T, $R, U1>;
            type Pullback = CrossPullback<T, $R>;
            #[inline]
            #[track_caller]
            fn cross(self) -> (Self::Output, Self::Pullback) {
                let (a, b) = self.0;
                (
                    a.cross(b),
                    CrossPullback {
                        a: a.clone_owned(),
                        b: b.clone_owned(),
                    },
                )
            }
        }
    )*};
}
cross_rule!(U3, Dyn);

rule_trait! {
    /// `a.cross_matrix()` of a 3-vector, the skew-symmetric `[a]×` with `[a]× v = a × v`:
    /// `Call((&a,)).cross_matrix()`.
    NaCrossMatrix::cross_matrix
}

/// Pullback of `a.cross_matrix()`: needs nothing (`ā` gathers the differences of the
/// mirrored off-diagonal entries of `M̄`).
pub struct CrossMatrixPullback<T>(std::marker::PhantomData<fn() -> T>);

impl<T: Elem> Pullback for CrossMatrixPullback<T> {
    type Output = OMatrix<T, U3, U3>;
    type Args = (OMatrix<T, U3, U1>,);
    #[track_caller]
    fn pullback(self, dm: OMatrix<T, U3, U3>, (da,): (&mut OMatrix<T, U3, U1>,)) {
        // [a]× = [[0, −a₂, a₁], [a₂, 0, −a₀], [−a₁, a₀, 0]].
        let g = [
            dm[(2, 1)] - dm[(1, 2)],
            dm[(0, 2)] - dm[(2, 0)],
            dm[(1, 0)] - dm[(0, 1)],
        ];
        let mut da = dense(da, (3, 1));
        da.iter_mut().zip(g).for_each(|(d, g)| *d += g);
    }
}

impl<T, S> NaCrossMatrix for Call<(&Matrix<T, U3, U1, S>,)>
where
    T: Elem,
    S: Storage<T, U3, U1>,
{
    type Output = OMatrix<T, U3, U3>;
    type Pullback = CrossMatrixPullback<T>;
    #[inline]
    fn cross_matrix(self) -> (Self::Output, Self::Pullback) {
        (
            self.0 .0.cross_matrix(),
            CrossMatrixPullback(std::marker::PhantomData),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::matrix;
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use nalgebra::{Dyn, U1, U3};

    fn crosses<T: Elem>() {
        let (a, b) = (
            matrix::<T, _, _>(U3, U1, 0.2),
            matrix::<T, _, _>(U3, U1, 1.1),
        );
        RuleTest::new((a, b), |x| x.0.cross(&x.1), |x| Call((&x.0, &x.1)).cross())
            // d(a × b) = ȧ × b + a × ḃ
            .jvp(|x, t| t.0.cross(&x.1) + x.0.cross(&t.1))
            .tolerance(T::RTOL, T::ATOL)
            .run();
        let (a, b) = (
            matrix::<T, _, _>(Dyn(3), U1, 0.2),
            matrix::<T, _, _>(Dyn(3), U1, 1.1),
        );
        RuleTest::new((a, b), |x| x.0.cross(&x.1), |x| Call((&x.0, &x.1)).cross())
            .jvp(|x, t| t.0.cross(&x.1) + x.0.cross(&t.1))
            .tolerance(T::RTOL, T::ATOL)
            .run();
        let a = matrix::<T, _, _>(U3, U1, 0.2);
        RuleTest::new(
            (a,),
            |x| x.0.cross_matrix(),
            |x| Call((&x.0,)).cross_matrix(),
        )
        // linear: d[a]× = [ȧ]×
        .jvp(|_, t| t.0.cross_matrix())
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn cross_f64_and_f32() {
        crosses::<f64>();
        crosses::<f32>();
    }

    #[test]
    fn static_cross_allocates_nothing_in_the_pullback() {
        let (a, b) = (
            matrix::<f64, _, _>(U3, U1, 0.2),
            matrix::<f64, _, _>(U3, U1, 1.1),
        );
        RuleTest::new((a, b), |x| x.0.cross(&x.1), |x| Call((&x.0, &x.1)).cross())
            .expect_no_alloc()
            .run();
    }
}
