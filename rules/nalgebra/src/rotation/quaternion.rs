//! Rules of `UnitQuaternion` values: `q * v`, `q * p`, `q.transform_vector(&v)`,
//! `q.transform_point(&p)` and their inverses, `q1 * q2`, `q.inverse()`,
//! `q.conjugate()`, `q.to_rotation_matrix()` (and `Rotation3::from(q)`), `q.imag()` and
//! `q.scalar()`. A unit quaternion's cotangent is a `Quaternion`; the pullbacks of
//! rotating and composing are in [`apply`](super::apply).
//!
//! `q.to_rotation_matrix()` evaluates the quadratic form
//! `R = (w² − ‖u‖²) I + 2 u uᵀ + 2 w [u]×` (`q = (w, u)`), whose derivative
//! `∂R/∂w = 2 (w I + [u]×)`, `∂R/∂uₖ = 2 (−uₖ I + eₖ uᵀ + u eₖᵀ + w [eₖ]×)` gives the
//! pullback by inner products with `R̄`.

use super::apply::{
    apply_rules, ConjugatePullback, Direction, QuaternionComposePullback, QuaternionRotatePullback,
};
use crate::arith::NaMul;
use crate::factor::NaInverse;
use crate::point::Coords3;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::{Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

rule_trait! {
    /// `q.conjugate()`: `Call((&q,)).conjugate()`.
    NaConjugate::conjugate
}
rule_trait! {
    /// `q.to_rotation_matrix()`: `Call((&q,)).to_rotation_matrix()`.
    NaToRotationMatrix::to_rotation_matrix
}
rule_trait! {
    /// `Rotation3::from(q)`: `Call((&q,)).rotation3_from()`.
    NaRotation3From::rotation3_from
}
rule_trait! {
    /// `q.imag()`: `Call((&q,)).imag()`, the vector part `(i, j, k)`.
    NaImag::imag
}
rule_trait! {
    /// `q.scalar()`: `Call((&q,)).scalar()`, the real part `w`.
    NaQuaternionScalar::scalar
}

/// `q v` or `q* v` with its pullback.
#[inline]
fn rotate<T: Elem, V: Coords3<T>>(
    q: &UnitQuaternion<T>,
    v: Vector3<T>,
    direction: Direction,
) -> (V, QuaternionRotatePullback<T, V>) {
    let y = match direction {
        Direction::Forward => q * v,
        Direction::Inverse => q.inverse_transform_vector(&v),
    };
    let pullback = QuaternionRotatePullback {
        q: *q.quaternion(),
        v,
        direction,
        _types: std::marker::PhantomData,
    };
    (V::from_coords(y), pullback)
}

apply_rules!(UnitQuaternion, rotate, QuaternionRotatePullback);

impl<T: Elem> NaMul for Call<(&UnitQuaternion<T>, &UnitQuaternion<T>)> {
    type Output = UnitQuaternion<T>;
    type Pullback = QuaternionComposePullback<T>;
    #[inline]
    fn op_mul(self) -> (Self::Output, Self::Pullback) {
        let (a, b) = self.0;
        let pullback = QuaternionComposePullback {
            a: *a.quaternion(),
            b: *b.quaternion(),
        };
        (a * b, pullback)
    }
}

/// `q*` with its pullback.
#[inline]
fn conjugate<T: Elem>(q: &UnitQuaternion<T>) -> (UnitQuaternion<T>, ConjugatePullback<T>) {
    (q.conjugate(), ConjugatePullback(std::marker::PhantomData))
}

impl<T: Elem> NaInverse for Call<(&UnitQuaternion<T>,)> {
    type Output = UnitQuaternion<T>;
    type Pullback = ConjugatePullback<T>;
    #[inline]
    fn inverse(self) -> (Self::Output, Self::Pullback) {
        conjugate(self.0 .0)
    }
}

impl<T: Elem> NaConjugate for Call<(&UnitQuaternion<T>,)> {
    type Output = UnitQuaternion<T>;
    type Pullback = ConjugatePullback<T>;
    #[inline]
    fn conjugate(self) -> (Self::Output, Self::Pullback) {
        conjugate(self.0 .0)
    }
}

/// Pullback of `q.to_rotation_matrix()`: holds `q`.
pub struct ToRotationMatrixPullback<T: Elem> {
    q: Quaternion<T>,
}

impl<T: Elem> Pullback for ToRotationMatrixPullback<T> {
    type Output = Matrix3<T>;
    type Args = (Quaternion<T>,);
    #[inline]
    fn pullback(self, dr: Matrix3<T>, (dq,): (&mut Quaternion<T>,)) {
        let two = T::of_f64(2.0);
        let (w, u) = (self.q.w, self.q.imag());
        // ⟨R̄, [x]×⟩ = x · axial(R̄), with axial(R̄) = (R̄₂₁ − R̄₁₂, R̄₀₂ − R̄₂₀, R̄₁₀ − R̄₀₁).
        let axial = Vector3::new(
            dr[(2, 1)] - dr[(1, 2)],
            dr[(0, 2)] - dr[(2, 0)],
            dr[(1, 0)] - dr[(0, 1)],
        );
        let trace = dr.trace();
        let sym = dr + dr.transpose();
        // ⟨R̄, ∂R/∂w⟩ = 2 (w tr R̄ + u · axial); ⟨R̄, ∂R/∂u⟩ = 2 (−u tr R̄ + (R̄ + R̄ᵀ) u + w axial).
        dq.w += two * (w * trace + u.dot(&axial));
        let du = (sym * u - u * trace + axial * w) * two;
        dq.i += du.x;
        dq.j += du.y;
        dq.k += du.z;
    }
}

/// `q.to_rotation_matrix()` with its pullback.
#[inline]
fn to_rotation_matrix<T: Elem>(
    q: &UnitQuaternion<T>,
) -> (Rotation3<T>, ToRotationMatrixPullback<T>) {
    (
        q.to_rotation_matrix(),
        ToRotationMatrixPullback { q: *q.quaternion() },
    )
}

impl<T: Elem> NaToRotationMatrix for Call<(&UnitQuaternion<T>,)> {
    type Output = Rotation3<T>;
    type Pullback = ToRotationMatrixPullback<T>;
    #[inline]
    fn to_rotation_matrix(self) -> (Self::Output, Self::Pullback) {
        to_rotation_matrix(self.0 .0)
    }
}

impl<T: Elem> NaRotation3From for Call<(&UnitQuaternion<T>,)> {
    type Output = Rotation3<T>;
    type Pullback = ToRotationMatrixPullback<T>;
    #[inline]
    fn rotation3_from(self) -> (Self::Output, Self::Pullback) {
        to_rotation_matrix(self.0 .0)
    }
}

/// Pullback of a part of a quaternion: `q.imag()` (`Vector3` cotangent) or
/// `q.scalar()` (`T` cotangent) adds into the same part of `q̄`.
pub struct PartPullback<T: Elem, Y>(std::marker::PhantomData<fn() -> (T, Y)>);

impl<T: Elem> Pullback for PartPullback<T, Vector3<T>> {
    type Output = Vector3<T>;
    type Args = (Quaternion<T>,);
    #[inline]
    fn pullback(self, dy: Vector3<T>, (dq,): (&mut Quaternion<T>,)) {
        dq.i += dy.x;
        dq.j += dy.y;
        dq.k += dy.z;
    }
}

impl<T: Elem> Pullback for PartPullback<T, T> {
    type Output = T;
    type Args = (Quaternion<T>,);
    #[inline]
    fn pullback(self, dy: T, (dq,): (&mut Quaternion<T>,)) {
        dq.w += dy;
    }
}

impl<T: Elem> NaImag for Call<(&UnitQuaternion<T>,)> {
    type Output = Vector3<T>;
    type Pullback = PartPullback<T, Vector3<T>>;
    #[inline]
    fn imag(self) -> (Self::Output, Self::Pullback) {
        (self.0 .0.imag(), PartPullback(std::marker::PhantomData))
    }
}

impl<T: Elem> NaQuaternionScalar for Call<(&UnitQuaternion<T>,)> {
    type Output = T;
    type Pullback = PartPullback<T, T>;
    #[inline]
    fn scalar(self) -> (Self::Output, Self::Pullback) {
        (self.0 .0.scalar(), PartPullback(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use nalgebra::{Point3, Rotation3, UnitQuaternion, Vector3};

    fn quaternion<T: Elem>(seed: f64) -> UnitQuaternion<T> {
        UnitQuaternion::from_scaled_axis(Vector3::new(0.3 + seed, -0.5, 0.8 * seed).map(T::of_f64))
    }

    fn rules<T: Elem>() {
        let (q, q2) = (quaternion::<T>(0.2), quaternion::<T>(1.1));
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
        check!((q, v), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
        check!((q, p), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
        check!((q, q2), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
        check!(
            (q, v),
            |a| a.0.transform_vector(&a.1),
            Call((&a.0, &a.1)).transform_vector()
        );
        check!(
            (q, p),
            |a| a.0.transform_point(&a.1),
            Call((&a.0, &a.1)).transform_point()
        );
        check!(
            (q, v),
            |a| a.0.inverse_transform_vector(&a.1),
            Call((&a.0, &a.1)).inverse_transform_vector()
        );
        check!(
            (q, p),
            |a| a.0.inverse_transform_point(&a.1),
            Call((&a.0, &a.1)).inverse_transform_point()
        );
        check!((q,), |a| a.0.inverse(), Call((&a.0,)).inverse());
        check!((q,), |a| a.0.conjugate(), Call((&a.0,)).conjugate());
        check!(
            (q,),
            |a| a.0.to_rotation_matrix(),
            Call((&a.0,)).to_rotation_matrix()
        );
        check!(
            (q,),
            |a| Rotation3::from(a.0),
            Call((&a.0,)).rotation3_from()
        );
        check!((q,), |a| a.0.imag(), Call((&a.0,)).imag());
        check!((q,), |a| a.0.scalar(), Call((&a.0,)).scalar());
    }

    #[test]
    fn unit_quaternion_rules_f64_and_f32() {
        rules::<f64>();
        rules::<f32>();
    }
}
