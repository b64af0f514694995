//! Products: the matrix product `a * b` (matrix·matrix, matrix·vector, `vᵀ·w`, …: one
//! rule, since a vector is a matrix of one column), `a.tr_mul(&b)` (`aᵀ b`) and
//! `a.dot(&b)`.
//!
//! For `C = A·B`: `Ā += C̄ Bᵀ` (as a sum of rank-one updates `C̄[:, k] B[:, k]ᵀ`) and
//! `B̄ += Aᵀ C̄`; for `y = a·b`: `ā += ȳ b`, `b̄ += ȳ a`. The pullbacks write into the
//! accumulators in place and allocate nothing once they are dense.

use crate::arith::NaMul;
use crate::dense::{add_scaled, dense, output, view};
use crate::impls::matrix_rule;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::constraint::{AreMultipliable, SameNumberOfRows, ShapeConstraint};
use nalgebra::{DefaultAllocator, Dim, Matrix, OMatrix, Storage};

rule_trait! {
    /// `a.dot(&b)`: `Call((&a, &b)).dot()`.
    NaDot::dot
}

rule_trait! {
    /// `a.tr_mul(&b)` (`aᵀ b`): `Call((&a, &b)).tr_mul()`.
    NaTrMul::tr_mul
}

/// Pullback of `A * B` (`O = R1`) and `Aᵀ B` (`O = C1`, `transposed`): copies of both
/// factors.
pub struct ProductPullback<T: Elem, R1: Dim, C1: Dim, R2: Dim, C2: Dim, O>
where
    DefaultAllocator: Allocator<R1, C1> + Allocator<R2, C2>,
{
    a: OMatrix<T, R1, C1>,
    b: OMatrix<T, R2, C2>,
    transposed: bool,
    _output: std::marker::PhantomData<fn() -> O>,
}

impl<T: Elem, R1: Dim, C1: Dim, R2: Dim, C2: Dim, O: Dim> Pullback
    for ProductPullback<T, R1, C1, R2, C2, O>
where
    DefaultAllocator: Allocator<R1, C1> + Allocator<R2, C2> + Allocator<O, C2>,
{
    type Output = OMatrix<T, O, C2>;
    type Args = (OMatrix<T, R1, C1>, OMatrix<T, R2, C2>);
    #[track_caller]
    fn pullback(
        self,
        dc: OMatrix<T, O, C2>,
        (da, db): (&mut OMatrix<T, R1, C1>, &mut OMatrix<T, R2, C2>),
    ) {
        let (a, b) = (view(&self.a), view(&self.b));
        let rows = if self.transposed {
            a.ncols()
        } else {
            a.nrows()
        };
        let Some(dc) = output(&dc, (rows, b.ncols())) else {
            return;
        };
        let mut da = dense(da, a.shape());
        let mut db = dense(db, b.shape());
        if self.transposed {
            // C = Aᵀ B: Ā += B C̄ᵀ = Σₖ B[:, k] C̄[:, k]ᵀ, B̄ += A C̄
            for k in 0..b.ncols() {
                da.ger(T::ONE, &b.column(k), &dc.column(k), T::ONE);
            }
            db.gemm(T::ONE, &a, &dc, T::ONE);
        } else {
            // C = A B: Ā += C̄ Bᵀ = Σₖ C̄[:, k] B[:, k]ᵀ, B̄ += Aᵀ C̄
            for k in 0..b.ncols() {
                da.ger(T::ONE, &dc.column(k), &b.column(k), T::ONE);
            }
            db.gemm_tr(T::ONE, &a, &dc, T::ONE);
        }
    }
}

/// Implements `a * b` and `a.tr_mul(&b)` for matrices of any shapes and storages.
macro_rules! product_rules {
    ($($Trait:ident::$method:ident => $O:ident, $transposed:literal, $Constraint:path, |$a:ident, $b:ident| $primal:expr;)*) => {$(
        impl<T, R1, C1, R2, C2, S1, S2> $Trait
            for Call<(&Matrix<T, R1, C1, S1>, &Matrix<T, R2, C2, S2>)>
        where
            T: Elem,
            R1: Dim,
            C1: Dim,
            R2: Dim,
            C2: Dim,
            S1: Storage<T, R1, C1>,
            S2: Storage<T, R2, C2>,
            DefaultAllocator: Allocator<R1, C1> + Allocator<R2, C2> + Allocator<$O, C2>,
            ShapeConstraint: $Constraint,
        {
            type Output = OMatrix<T, $O, C2>;
            type Pullback = ProductPullback<T, R1, C1, R2, C2, $O>;
            #[inline]
            #[track_caller]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let ($a, $b) = self.0;
                let pullback = ProductPullback {
                    a: $a.clone_owned(),
                    b: $b.clone_owned(),
                    transposed: $transposed,
                    _output: std::marker::PhantomData,
                };
                ($primal, pullback)
            }
        }
    )*};
}
product_rules! {
    NaMul::op_mul => R1, false, AreMultipliable<R1, C1, R2, C2>, |a, b| a * b;
    NaTrMul::tr_mul => C1, true, SameNumberOfRows<R1, R2>, |a, b| a.tr_mul(b);
}

/// Pullback of `a.dot(&b)`: copies of both.
pub struct DotPullback<T: Elem, R: Dim, C: Dim>
where
    DefaultAllocator: Allocator<R, C>,
{
    a: OMatrix<T, R, C>,
    b: OMatrix<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for DotPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Args = (OMatrix<T, R, C>, OMatrix<T, R, C>);
    #[track_caller]
    fn pullback(self, dy: T, (da, db): (&mut OMatrix<T, R, C>, &mut OMatrix<T, R, C>)) {
        // y = a·b: ā += ȳ b, b̄ += ȳ a
        add_scaled(da, dy, view(&self.b));
        add_scaled(db, dy, view(&self.a));
    }
}

matrix_rule! {
    NaDot for (&Matrix, &Matrix) {
        type Output = T;
        type Pullback = DotPullback<T, R, C>;
        #[inline]
        #[track_caller]
        fn dot(self) -> (T, Self::Pullback) {
            let (a, b) = self.0;
            (
                a.dot(b),
                DotPullback {
                    a: a.clone_owned(),
                    b: b.clone_owned(),
                },
            )
        }
    }
}

rule_trait! {
    /// `a.angle(&b)`: `Call((&a, &b)).angle()`.
    NaAngle::angle
}

/// Pullback of `a.angle(&b)`, `θ = acos(c)` with `c = a·b / (‖a‖ ‖b‖)` clamped to
/// `[−1, 1]` as nalgebra does: copies of both. `ā += ȳ θ'(c) (b / (‖a‖ ‖b‖) − c a /
/// ‖a‖²)` and `b̄` alike, with `θ'(c) = −1/√(1 − c²)`; nothing where nalgebra's angle is
/// constant (a zero vector) or has no derivative (parallel vectors, `c = ±1`).
pub struct AnglePullback<T: Elem, R: Dim, C: Dim>
where
    DefaultAllocator: Allocator<R, C>,
{
    a: OMatrix<T, R, C>,
    b: OMatrix<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for AnglePullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Args = (OMatrix<T, R, C>, OMatrix<T, R, C>);
    #[track_caller]
    fn pullback(self, dy: T, (da, db): (&mut OMatrix<T, R, C>, &mut OMatrix<T, R, C>)) {
        let (na, nb) = (self.a.norm(), self.b.norm());
        let prod = na * nb;
        if prod == T::ZERO {
            return;
        }
        let c = self.a.dot(&self.b) / prod;
        let s = T::ONE - c * c;
        if s <= T::ZERO {
            return;
        }
        let g = -dy / s.sqrt();
        add_scaled(da, g / prod, view(&self.b));
        add_scaled(da, -g * c / (na * na), view(&self.a));
        add_scaled(db, g / prod, view(&self.a));
        add_scaled(db, -g * c / (nb * nb), view(&self.b));
    }
}

matrix_rule! {
    NaAngle for (&Matrix, &Matrix) {
        type Output = T;
        type Pullback = AnglePullback<T, R, C>;
        #[inline]
        #[track_caller]
        fn angle(self) -> (T, Self::Pullback) {
            let (a, b) = self.0;
            (
                a.angle(b),
                AnglePullback {
                    a: a.clone_owned(),
                    b: b.clone_owned(),
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{dmatrix, matrix};
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use nalgebra::{Dyn, U1, U2, U3};

    fn products<T: Elem>() {
        // matrix · matrix, matrix · vector, vᵀ · w (a 1 × 1 matrix)
        let (a, b) = (dmatrix::<T>(2, 3, 0.1), dmatrix::<T>(3, 4, 0.6));
        RuleTest::new(
            (a.clone(), b),
            |x| &x.0 * &x.1,
            |x| Call((&x.0, &x.1)).op_mul(),
        )
        // d(AB) = ȦB + AḂ
        .jvp(|x, t| &t.0 * &x.1 + &x.0 * &t.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let v = matrix::<T, _, _>(Dyn(3), U1, 0.3);
        RuleTest::new(
            (a, v.clone()),
            |x| &x.0 * &x.1,
            |x| Call((&x.0, &x.1)).op_mul(),
        )
        .jvp(|x, t| &t.0 * &x.1 + &x.0 * &t.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let w = matrix::<T, _, _>(Dyn(3), U1, 1.3);
        RuleTest::new(
            (v.clone(), w.clone()),
            |x| x.0.dot(&x.1),
            |x| Call((&x.0, &x.1)).dot(),
        )
        .jvp(|x, t| t.0.dot(&x.1) + x.0.dot(&t.1))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let u = w.map(|e| e * e - T::of_f64(0.5));
        RuleTest::new(
            (v.clone(), u),
            |x| x.0.angle(&x.1),
            |x| Call((&x.0, &x.1)).angle(),
        )
        // θ = acos(c), c = a·b/(‖a‖‖b‖): θ̇ = −ċ/√(1 − c²),
        // ċ = (ȧ·b + a·ḃ)/(‖a‖‖b‖) − c (a·ȧ/‖a‖² + b·ḃ/‖b‖²)
        .jvp(|x, t| {
            let (na, nb) = (x.0.norm(), x.1.norm());
            let c = x.0.dot(&x.1) / (na * nb);
            let dc = (t.0.dot(&x.1) + x.0.dot(&t.1)) / (na * nb)
                - c * (x.0.dot(&t.0) / (na * na) + x.1.dot(&t.1) / (nb * nb));
            -dc / (T::ONE - c * c).sqrt()
        })
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let (p, q) = (dmatrix::<T>(3, 2, 0.4), dmatrix::<T>(3, 4, 1.4));
        RuleTest::new(
            (p, q),
            |x| x.0.tr_mul(&x.1),
            |x| Call((&x.0, &x.1)).tr_mul(),
        )
        .jvp(|x, t| t.0.tr_mul(&x.1) + x.0.tr_mul(&t.1))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let vt = v.transpose();
        RuleTest::new((vt, w), |x| &x.0 * &x.1, |x| Call((&x.0, &x.1)).op_mul())
            .jvp(|x, t| &t.0 * &x.1 + &x.0 * &t.1)
            .tolerance(T::RTOL, T::ATOL)
            .run();
    }

    #[test]
    fn dynamic_products_f64_and_f32() {
        products::<f64>();
        products::<f32>();
    }

    #[test]
    fn static_products_allocate_nothing_in_the_pullback() {
        let a = matrix::<f64, _, _>(U2, U3, 0.1);
        let x = matrix::<f64, _, _>(U3, U1, 0.5);
        RuleTest::new((a, x), |x| x.0 * x.1, |x| Call((&x.0, &x.1)).op_mul())
            .jvp(|x, t| t.0 * x.1 + x.0 * t.1)
            .expect_no_alloc()
            .run();
        RuleTest::new(
            (x, x * 2.0),
            |x| x.0.dot(&x.1),
            |x| Call((&x.0, &x.1)).dot(),
        )
        .expect_no_alloc()
        .run();
    }
}
