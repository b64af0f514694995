//! Rules of `Rotation3` values: `r * v` and `r.transform_vector(&v)` for a `Vector3`
//! (any storage), `r * p` and `r.transform_point(&p)` for a `Point3`, their inverses
//! (`r.inverse_transform_vector(&v)`, `r.inverse_transform_point(&p)`), `r1 * r2`,
//! `r.transpose()`, `r.inverse()`, `r.matrix()` and `r.into_inner()`. A rotation's
//! cotangent is the `Matrix3` of its entries; the pullbacks are in
//! [`apply`](super::apply).

use super::apply::{
    apply_rules, Direction, Linear, MatrixComposePullback, MatrixLinearPullback,
    MatrixRotatePullback,
};
use crate::arith::NaMul;
use crate::factor::NaInverse;
use crate::point::Coords3;
use crate::shape::NaTranspose;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call};
use nalgebra::{Matrix3, Rotation3, Vector3};

rule_trait! {
    /// `r.matrix()`: `Call((&r,)).matrix()`, the rotation's matrix (owned).
    NaMatrix::matrix
}
rule_trait! {
    /// `r.into_inner()`: `Call((&r,)).into_inner()`, the rotation's matrix.
    NaIntoInner::into_inner
}

/// `R v` or `Rᵀ v` with its pullback.
#[inline]
fn rotate<T: Elem, V: Coords3<T>>(
    r: &Rotation3<T>,
    v: Vector3<T>,
    direction: Direction,
) -> (V, MatrixRotatePullback<T, V>) {
    let m = *r.matrix();
    let y = match direction {
        Direction::Forward => m * v,
        Direction::Inverse => m.tr_mul(&v),
    };
    let pullback = MatrixRotatePullback {
        m,
        v,
        direction,
        _types: std::marker::PhantomData,
    };
    (V::from_coords(y), pullback)
}

apply_rules!(Rotation3, rotate, MatrixRotatePullback);

impl<T: Elem> NaMul for Call<(&Rotation3<T>, &Rotation3<T>)> {
    type Output = Rotation3<T>;
    type Pullback = MatrixComposePullback<T>;
    #[inline]
    fn op_mul(self) -> (Self::Output, Self::Pullback) {
        let (a, b) = self.0;
        let pullback = MatrixComposePullback {
            a: *a.matrix(),
            b: *b.matrix(),
        };
        (a * b, pullback)
    }
}

/// `Y = L(R)` for a linear `L` with its pullback.
#[inline]
fn linear<T: Elem>(y: Matrix3<T>, map: Linear) -> (Matrix3<T>, MatrixLinearPullback<T>) {
    let pullback = MatrixLinearPullback {
        map,
        _types: std::marker::PhantomData,
    };
    (y, pullback)
}

impl<T: Elem> NaMatrix for Call<(&Rotation3<T>,)> {
    type Output = Matrix3<T>;
    type Pullback = MatrixLinearPullback<T>;
    #[inline]
    fn matrix(self) -> (Self::Output, Self::Pullback) {
        linear(*self.0 .0.matrix(), Linear::Identity)
    }
}

impl<T: Elem> NaIntoInner for Call<(&Rotation3<T>,)> {
    type Output = Matrix3<T>;
    type Pullback = MatrixLinearPullback<T>;
    #[inline]
    fn into_inner(self) -> (Self::Output, Self::Pullback) {
        linear(*self.0 .0.matrix(), Linear::Identity)
    }
}

impl<T: Elem> NaTranspose for Call<(&Rotation3<T>,)> {
    type Output = Rotation3<T>;
    type Pullback = MatrixLinearPullback<T>;
    #[inline]
    fn transpose(self) -> (Self::Output, Self::Pullback) {
        let (y, pullback) = linear(self.0 .0.matrix().transpose(), Linear::Transpose);
        (Rotation3::from_matrix_unchecked(y), pullback)
    }
}

impl<T: Elem> NaInverse for Call<(&Rotation3<T>,)> {
    type Output = Rotation3<T>;
    type Pullback = MatrixLinearPullback<T>;
    #[inline]
    fn inverse(self) -> (Self::Output, Self::Pullback) {
        Call(self.0).transpose()
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use nalgebra::{Point3, Rotation3, Vector3};

    fn rotation<T: Elem>(seed: f64) -> Rotation3<T> {
        Rotation3::from_scaled_axis(Vector3::new(0.3 + seed, -0.5, 0.8 * seed).map(T::of_f64))
    }

    fn rules<T: Elem>() {
        let (r, r2) = (rotation::<T>(0.2), rotation::<T>(1.1));
        let v = Vector3::new(0.5, -1.5, 2.0).map(T::of_f64);
        let p = Point3::from(v);
        macro_rules! check {
            ($args:expr, |$a:ident| $primal:expr, $rule:expr) => {
                RuleTest::new($args, |$a| $primal, |$a| $rule)
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
            };
        }
        check!((r, v), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
        check!((r, p), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
        check!((r, r2), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
        check!(
            (r, v),
            |a| a.0.transform_vector(&a.1),
            Call((&a.0, &a.1)).transform_vector()
        );
        check!(
            (r, p),
            |a| a.0.transform_point(&a.1),
            Call((&a.0, &a.1)).transform_point()
        );
        check!(
            (r, v),
            |a| a.0.inverse_transform_vector(&a.1),
            Call((&a.0, &a.1)).inverse_transform_vector()
        );
        check!(
            (r, p),
            |a| a.0.inverse_transform_point(&a.1),
            Call((&a.0, &a.1)).inverse_transform_point()
        );
        check!((r,), |a| a.0.transpose(), Call((&a.0,)).transpose());
        check!((r,), |a| a.0.inverse(), Call((&a.0,)).inverse());
        check!((r,), |a| *a.0.matrix(), Call((&a.0,)).matrix());
        check!((r,), |a| a.0.into_inner(), Call((&a.0,)).into_inner());
    }

    #[test]
    fn rotation3_rules_f64_and_f32() {
        rules::<f64>();
        rules::<f32>();
    }
}
