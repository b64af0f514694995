//! Rules of `UnitQuaternion` values: those every rotation has (`q * v`, `q * p`,
//! `q.transform_vector(&v)`, `q.transform_point(&p)`, their inverses, `q1 * q2`,
//! `q.inverse()`, from [`apply`](super::apply)), and `q.conjugate()`,
//! `q.to_rotation_matrix()` (and `Rotation3::from(q)`), `q.imag()` and `q.scalar()`. A
//! unit quaternion's cotangent is a `Quaternion`.
//!
//! `q.to_rotation_matrix()` evaluates the quadratic form
//! `R = (w² − ‖u‖²) I + 2 u uᵀ + 2 w [u]×` (`q = (w, u)`), whose derivative
//! `∂R/∂w = 2 (w I + [u]×)`, `∂R/∂uₖ = 2 (−uₖ I + eₖ uᵀ + u eₖᵀ + w [eₖ]×)` gives the
//! pullback by inner products with `R̄`.

use super::apply::{apply_rules, invert, same_rule, LinearPullback};
use crate::Elem;
use mochi_core::kit::{rule_trait, Pullback};
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

apply_rules!(UnitQuaternion);

same_rule!(UnitQuaternion => invert, UnitQuaternion<T>, LinearPullback<T, Quaternion<T>>:
    NaConjugate => conjugate,
);

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
        // ⟨R̄, [x]×⟩ = x · axial(R̄).
        let axial = super::rodrigues::axial(&dr);
        let trace = dr.trace();
        // ⟨R̄, ∂R/∂w⟩ = 2 (w tr R̄ + u · axial);
        // ⟨R̄, ∂R/∂u⟩ = 2 (−u tr R̄ + (R̄ + R̄ᵀ) u + w axial).
        let dw = two * (w * trace + u.dot(&axial));
        let du = ((dr + dr.transpose()) * u - u * trace + axial * w) * two;
        dq.coords += Quaternion::from_parts(dw, du).coords;
    }
}

/// `q.to_rotation_matrix()` with its pullback.
#[inline]
fn to_rotation_matrix<T: Elem>(
    q: &UnitQuaternion<T>,
) -> (Rotation3<T>, ToRotationMatrixPullback<T>) {
    let pullback = ToRotationMatrixPullback { q: *q.quaternion() };
    (q.to_rotation_matrix(), pullback)
}

same_rule!(UnitQuaternion => to_rotation_matrix, Rotation3<T>, ToRotationMatrixPullback<T>:
    NaToRotationMatrix => to_rotation_matrix,
    NaRotation3From => rotation3_from,
);

/// Pullback of a part of a quaternion: `q.imag()` (`Vector3` cotangent) or
/// `q.scalar()` (`T` cotangent) adds into the same part of `q̄`.
pub struct PartPullback<T: Elem, Y>(std::marker::PhantomData<fn() -> (T, Y)>);

impl<T: Elem> Pullback for PartPullback<T, Vector3<T>> {
    type Output = Vector3<T>;
    type Args = (Quaternion<T>,);
    #[inline]
    fn pullback(self, dy: Vector3<T>, (dq,): (&mut Quaternion<T>,)) {
        dq.coords += Quaternion::from_imag(dy).coords;
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

/// `q.imag()` with its pullback.
#[inline]
fn imag<T: Elem>(q: &UnitQuaternion<T>) -> (Vector3<T>, PartPullback<T, Vector3<T>>) {
    (q.imag(), PartPullback(std::marker::PhantomData))
}

/// `q.scalar()` with its pullback.
#[inline]
fn scalar<T: Elem>(q: &UnitQuaternion<T>) -> (T, PartPullback<T, T>) {
    (q.scalar(), PartPullback(std::marker::PhantomData))
}

same_rule!(UnitQuaternion => imag, Vector3<T>, PartPullback<T, Vector3<T>>: NaImag => imag);
same_rule!(UnitQuaternion => scalar, T, PartPullback<T, T>: NaQuaternionScalar => scalar);

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::check_rule;
    use crate::Elem;
    use mochi_core::Call;
    use nalgebra::{Matrix3, Rotation3, UnitQuaternion, Vector3};

    fn rules<T: Elem>() {
        // The rules every rotation has are checked in `apply`.
        let q = UnitQuaternion::from_scaled_axis(Vector3::new(0.5, -0.5, 0.16).map(T::of_f64));
        check_rule!(T; (q,), |a| a.0.conjugate(), Call((&a.0,)).conjugate());
        // Ṙ = 2(w ẇ − u · u̇) I + 2(u̇ uᵀ + u u̇ᵀ) + 2 ẇ [u]× + 2 w [u̇]×
        check_rule!(
            T;
            (q,),
            |a| a.0.to_rotation_matrix(),
            Call((&a.0,)).to_rotation_matrix(),
            jvp = |x, t| {
                let two = T::of_f64(2.0);
                let (w, u, dw, du) = (x.0.w, x.0.imag(), t.0.w, t.0.imag());
                (Matrix3::identity() * (w * dw - u.dot(&du))
                    + du * u.transpose()
                    + u * du.transpose()
                    + u.cross_matrix() * dw
                    + du.cross_matrix() * w)
                    * two
            }
        );
        check_rule!(T; (q,), |a| Rotation3::from(a.0), Call((&a.0,)).rotation3_from());
        check_rule!(T; (q,), |a| a.0.imag(), Call((&a.0,)).imag());
        check_rule!(T; (q,), |a| a.0.scalar(), Call((&a.0,)).scalar());
    }

    #[test]
    fn unit_quaternion_rules_f64_and_f32() {
        rules::<f64>();
        rules::<f32>();
    }
}
