//! Rotations from a rotation vector `ω` (the bundle-adjustment parametrisation), as a
//! matrix ([`rotation_matrix`](fn@rotation_matrix)`(&ω)`), a `Rotation3`
//! (`Rotation3::new(ω)`, `Rotation3::from_scaled_axis(ω)`) or a `UnitQuaternion`
//! (`UnitQuaternion::new(ω)`, `UnitQuaternion::from_scaled_axis(ω)`).
//!
//! With `θ = ‖ω‖` and `W = [ω]×`, Rodrigues' formula is `R = I + a W + b W²` with
//! `a = sin θ / θ` and `b = (1 − cos θ)/θ²`, so
//! `∂R/∂ωᵢ = a Eᵢ + b (Eᵢ W + W Eᵢ) + ωᵢ (a′/θ · W + b′/θ · W²)` (`Eᵢ = [eᵢ]×`), and the
//! pullback adds `ω̄ᵢ += ⟨R̄, ∂R/∂ωᵢ⟩`. The unit quaternion is
//! `q = (cos(θ/2), s ω)` with `s = sin(θ/2)/θ`:
//! `ω̄ += −½ s w̄ ω + s v̄ + (s′/θ) (ω · v̄) ω` for `q̄ = (w̄, v̄)`.
//!
//! The four coefficients `a, b, a′/θ, b′/θ` (and `s, s′/θ`) are even functions of `θ`:
//! below `θ = 1/4` they are evaluated by their Taylor series in `θ²` (truncation error
//! under `10⁻¹⁵`), above it by their closed forms (whose cancellation error,
//! `ε/θ²`, is below `4·10⁻¹⁵` there). So the derivative is exact to rounding at every
//! `ω`, `ω = 0` included: there it is `∂R/∂ωᵢ = Eᵢ` and `∂q/∂ω = (0, ½ I)`. The
//! coefficients and the pullbacks are computed in the sibling module `rodrigues`, which
//! `Ambient::pull_exp` calls.

use crate::rotation::apply::Ambient;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::{
    Matrix, Matrix3, Quaternion, Rotation3, Storage, Unit, UnitQuaternion, Vector3, U1, U3,
};

/// `Rotation3::from_scaled_axis(ω)` as a matrix: the rotation by the angle `‖ω‖` about
/// the axis `ω/‖ω‖` (the identity for `ω = 0`).
#[inline]
pub fn rotation_matrix<T: Elem>(omega: &Vector3<T>) -> Matrix3<T> {
    Rotation3::from_scaled_axis(*omega).into_inner()
}

/// Pullback of a rotation built from a rotation vector, in the ambient coordinates `A`
/// (`Matrix3` for a rotation matrix, `Quaternion` for a unit quaternion): holds `ω`.
pub struct RotationVectorPullback<T: Elem, A = Matrix3<T>> {
    omega: Vector3<T>,
    _types: std::marker::PhantomData<fn() -> A>,
}

impl<T: Elem, A> RotationVectorPullback<T, A> {
    #[inline]
    fn new(omega: Vector3<T>) -> Self {
        RotationVectorPullback {
            omega,
            _types: std::marker::PhantomData,
        }
    }
}

impl<T: Elem, A: Ambient<T>> Pullback for RotationVectorPullback<T, A> {
    type Output = A;
    type Args = (Vector3<T>,);
    #[inline]
    fn pullback(self, dx: A, (domega,): (&mut Vector3<T>,)) {
        A::pull_exp(&self.omega, &dx, domega);
    }
}

/// The rule of [`rotation_matrix`](fn@rotation_matrix): `ω̄ᵢ += ⟨R̄, ∂R/∂ωᵢ⟩`.
pub mod rotation_matrix {
    use super::*;

    /// `rotation_matrix(ω)` with its pullback.
    #[inline]
    pub fn rrule<T: Elem>(omega: &Vector3<T>) -> (Matrix3<T>, RotationVectorPullback<T>) {
        (
            super::rotation_matrix(omega),
            RotationVectorPullback::new(*omega),
        )
    }
}

rule_trait! {
    /// `Rotation3::new(ω)`: `Call((&ω,)).rotation3_new()`.
    NaRotation3New::rotation3_new
}
rule_trait! {
    /// `Rotation3::from_scaled_axis(ω)`: `Call((&ω,)).rotation3_from_scaled_axis()`.
    NaRotation3FromScaledAxis::rotation3_from_scaled_axis
}
rule_trait! {
    /// `UnitQuaternion::new(ω)`: `Call((&ω,)).unit_quaternion_new()`.
    NaUnitQuaternionNew::unit_quaternion_new
}
rule_trait! {
    /// `UnitQuaternion::from_scaled_axis(ω)`:
    /// `Call((&ω,)).unit_quaternion_from_scaled_axis()`.
    NaUnitQuaternionFromScaledAxis::unit_quaternion_from_scaled_axis
}

/// `Rotation3::from_scaled_axis(ω)` with its pullback.
#[inline]
fn rotation3<T: Elem, S: Storage<T, U3, U1>>(
    omega: &Matrix<T, U3, U1, S>,
) -> (Rotation3<T>, RotationVectorPullback<T>) {
    let omega = omega.clone_owned();
    (
        Rotation3::from_scaled_axis(omega),
        RotationVectorPullback::new(omega),
    )
}

/// `UnitQuaternion::from_scaled_axis(ω)` with its pullback.
#[inline]
fn quaternion<T: Elem, S: Storage<T, U3, U1>>(
    omega: &Matrix<T, U3, U1, S>,
) -> (UnitQuaternion<T>, RotationVectorPullback<T, Quaternion<T>>) {
    let omega = omega.clone_owned();
    (
        UnitQuaternion::from_scaled_axis(omega),
        RotationVectorPullback::new(omega),
    )
}

/// Implements constructor rule traits from a rotation vector with one of the builders
/// above.
macro_rules! from_rotation_vector {
    ($($Trait:ident::$method:ident => $build:ident: $Out:ident, $Pb:ty;)*) => {$(
        impl<T: Elem, S: Storage<T, U3, U1>> $Trait for Call<(&Matrix<T, U3, U1, S>,)> {
            type Output = $Out<T>;
            type Pullback = $Pb;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                $build(self.0 .0)
            }
        }
    )*};
}
from_rotation_vector! {
    NaRotation3New::rotation3_new => rotation3: Rotation3, RotationVectorPullback<T>;
    NaRotation3FromScaledAxis::rotation3_from_scaled_axis => rotation3: Rotation3, RotationVectorPullback<T>;
    NaUnitQuaternionNew::unit_quaternion_new => quaternion: UnitQuaternion, RotationVectorPullback<T, Quaternion<T>>;
    NaUnitQuaternionFromScaledAxis::unit_quaternion_from_scaled_axis => quaternion: UnitQuaternion, RotationVectorPullback<T, Quaternion<T>>;
}

rule_trait! {
    /// `Rotation3::from_axis_angle(&axis, θ)`: `Call((&axis, &θ)).rotation3_from_axis_angle()`.
    NaRotation3FromAxisAngle::rotation3_from_axis_angle
}
rule_trait! {
    /// `UnitQuaternion::from_axis_angle(&axis, θ)`:
    /// `Call((&axis, &θ)).unit_quaternion_from_axis_angle()`.
    NaUnitQuaternionFromAxisAngle::unit_quaternion_from_axis_angle
}

/// Pullback of a rotation by the angle `θ` about the unit `axis`: the rotation of the
/// vector `ω = θ·axis`, so `ω̄` as [`RotationVectorPullback`] has it, then `θ̄ += ω̄ ·
/// axis` and `āxis += θ ω̄` (in the ambient space of the axis).
pub struct AxisAnglePullback<T: Elem, A = Matrix3<T>> {
    axis: Vector3<T>,
    angle: T,
    _types: std::marker::PhantomData<fn() -> A>,
}

impl<T: Elem, A: Ambient<T>> Pullback for AxisAnglePullback<T, A> {
    type Output = A;
    type Args = (Vector3<T>, T);
    #[inline]
    fn pullback(self, dx: A, (daxis, dangle): (&mut Vector3<T>, &mut T)) {
        let mut domega = Vector3::zeros();
        A::pull_exp(&(self.axis * self.angle), &dx, &mut domega);
        *dangle += domega.dot(&self.axis);
        *daxis += domega * self.angle;
    }
}

impl<T: Elem> NaRotation3FromAxisAngle for Call<(&Unit<Vector3<T>>, &T)> {
    type Output = Rotation3<T>;
    type Pullback = AxisAnglePullback<T>;
    #[inline]
    fn rotation3_from_axis_angle(self) -> (Self::Output, Self::Pullback) {
        let (axis, angle) = (self.0 .0, *self.0 .1);
        (
            Rotation3::from_axis_angle(axis, angle),
            AxisAnglePullback {
                axis: axis.into_inner(),
                angle,
                _types: std::marker::PhantomData,
            },
        )
    }
}

impl<T: Elem> NaUnitQuaternionFromAxisAngle for Call<(&Unit<Vector3<T>>, &T)> {
    type Output = UnitQuaternion<T>;
    type Pullback = AxisAnglePullback<T, Quaternion<T>>;
    #[inline]
    fn unit_quaternion_from_axis_angle(self) -> (Self::Output, Self::Pullback) {
        let (axis, angle) = (self.0 .0, *self.0 .1);
        (
            UnitQuaternion::from_axis_angle(axis, angle),
            AxisAnglePullback {
                axis: axis.into_inner(),
                angle,
                _types: std::marker::PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::rotation::rodrigues::{half_angle, Rodrigues, SERIES_BELOW};
    use crate::rules::*;
    use crate::test_support::check_rule;
    use crate::Elem;
    use mochi_core::Call;
    use mochi_core::Pullback;
    use nalgebra::{Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

    /// Rotation vectors: generic, past π/2, past π, near the series' edge on both sides,
    /// small, tiny and zero.
    fn omegas<T: Elem>() -> Vec<Vector3<T>> {
        let edge = SERIES_BELOW.sqrt() / 3.0_f64.sqrt();
        [
            Vector3::new(0.3, -0.5, 0.8),
            Vector3::new(2.5, 0.1, -1.0),
            Vector3::new(3.5, 0.5, -1.0),
            Vector3::new(edge, edge, edge) * 0.999,
            Vector3::new(edge, edge, edge) * 1.001,
            Vector3::new(1e-3, -2e-3, 1e-3),
            Vector3::new(1e-9, 0.0, -1e-9),
            Vector3::new(0.0, 0.0, 0.0),
        ]
        .iter()
        .map(|w| w.map(T::of_f64))
        .collect()
    }

    /// `Ṙ = a [ω̇]× + b ([ω̇]× W + W [ω̇]×) + (ω · ω̇)(a′/θ · W + b′/θ · W²)`.
    fn rotation_jvp<T: Elem>(omega: &Vector3<T>, dw: &Vector3<T>) -> Matrix3<T> {
        let k = Rodrigues::at(omega.norm_squared());
        let (w, e) = (omega.cross_matrix(), dw.cross_matrix());
        e * k.a + (e * w + w * e) * k.b + (w * k.da + w * w * k.db) * omega.dot(dw)
    }

    /// `q̇ = (−½ s (ω · ω̇), s ω̇ + (s′/θ)(ω · ω̇) ω)`.
    fn quaternion_jvp<T: Elem>(omega: &Vector3<T>, dw: &Vector3<T>) -> Quaternion<T> {
        let (s, ds) = half_angle(omega.norm_squared());
        let along = omega.dot(dw);
        Quaternion::from_parts(-T::of_f64(0.5) * s * along, dw * s + omega * (ds * along))
    }

    fn rotations<T: Elem>() {
        for omega in omegas::<T>() {
            let args = (omega,);
            check_rule!(
                T;
                args,
                |a| Rotation3::new(a.0),
                Call((&a.0,)).rotation3_new(),
                jvp = |x, t| rotation_jvp(&x.0, &t.0)
            );
            check_rule!(
                T;
                args,
                |a| UnitQuaternion::from_scaled_axis(a.0),
                Call((&a.0,)).unit_quaternion_from_scaled_axis(),
                jvp = |x, t| quaternion_jvp(&x.0, &t.0)
            );
            check_rule!(T; args, |a| super::rotation_matrix(&a.0), super::rotation_matrix::rrule(&a.0));
            check_rule!(T; args, |a| Rotation3::new(a.0), Call((&a.0,)).rotation3_new());
            check_rule!(T; args, |a| Rotation3::from_scaled_axis(a.0), Call((&a.0,)).rotation3_from_scaled_axis());
            check_rule!(T; args, |a| UnitQuaternion::new(a.0), Call((&a.0,)).unit_quaternion_new());
            check_rule!(
                T;
                args,
                |a| UnitQuaternion::from_scaled_axis(a.0),
                Call((&a.0,)).unit_quaternion_from_scaled_axis()
            );
        }
    }

    #[test]
    fn rotations_from_a_rotation_vector_f64_and_f32() {
        rotations::<f64>();
        rotations::<f32>();
    }

    #[test]
    fn axis_angle_against_differences_and_the_rotation_vector() {
        use nalgebra::Unit;
        let axes = [
            Vector3::z_axis(),
            Unit::new_normalize(Vector3::new(1.0_f64, 2.0, -1.0)),
        ];
        let dr = Matrix3::new(0.3, -1.2, 0.5, 0.8, 0.1, -0.7, 1.1, 0.4, -0.2);
        let dq = Quaternion::new(0.6, -0.3, 1.2, 0.9);
        for axis in &axes {
            for angle in [0.7_f64, -2.1, 1e-9, 0.0] {
                let (r, pb) = Call((axis, &angle)).rotation3_from_axis_angle();
                assert_eq!(r, Rotation3::from_axis_angle(axis, angle));
                let (mut da, mut dt) = (Vector3::zeros(), 0.0);
                pb.pullback(dr, (&mut da, &mut dt));
                let f = |t: f64| Rotation3::from_axis_angle(axis, t).matrix().dot(&dr);
                let h = 1e-6;
                let fd = (f(angle + h) - f(angle - h)) / (2.0 * h);
                assert!((dt - fd).abs() < 1e-8, "θ̄ {dt} against {fd}");
                // The axis's cotangent is θ ω̄ of the rotation vector ω = θ·axis.
                let (_, pw) = Call((&(axis.into_inner() * angle),)).rotation3_new();
                let mut dw = Vector3::zeros();
                pw.pullback(dr, (&mut dw,));
                assert!((da - dw * angle).norm() < 1e-12);

                let (q, pb) = Call((axis, &angle)).unit_quaternion_from_axis_angle();
                assert_eq!(q, UnitQuaternion::from_axis_angle(axis, angle));
                let (mut da, mut dt) = (Vector3::zeros(), 0.0);
                pb.pullback(dq, (&mut da, &mut dt));
                let g = |t: f64| {
                    UnitQuaternion::from_axis_angle(axis, t)
                        .coords
                        .dot(&dq.coords)
                };
                let fd = (g(angle + h) - g(angle - h)) / (2.0 * h);
                assert!((dt - fd).abs() < 1e-8, "θ̄ {dt} against {fd}");
                assert!(da.iter().all(|v| v.is_finite()));
            }
        }
    }

    #[test]
    fn at_zero_the_derivative_is_the_generator() {
        let zero = Vector3::<f64>::zeros();
        // ∂R/∂ωᵢ = [eᵢ]× at ω = 0: the cotangent Eⱼ gives ω̄ = 2 eⱼ (⟨Eⱼ, Eᵢ⟩ = 2δᵢⱼ).
        for j in 0..3 {
            let (r, pb) = Call((&zero,)).rotation3_new();
            assert_eq!(r, Rotation3::identity());
            let mut g = Vector3::zeros();
            pb.pullback(Vector3::ith(j, 1.0).cross_matrix(), (&mut g,));
            assert_eq!(g, Vector3::ith(j, 2.0));
        }
        // ∂q/∂ω = (0, ½ I) at ω = 0.
        let (q, pb) = Call((&zero,)).unit_quaternion_from_scaled_axis();
        assert_eq!(q, UnitQuaternion::identity());
        let mut g = Vector3::zeros();
        pb.pullback(Quaternion::new(5.0, 1.0, -2.0, 4.0), (&mut g,));
        assert_eq!(g, Vector3::new(0.5, -1.0, 2.0));
        let mut g = Vector3::zeros();
        let (_, pb) = Call((&zero,)).rotation3_new();
        pb.pullback(Matrix3::from_element(1.0), (&mut g,));
        assert!(g.iter().all(|v| v.is_finite()));
    }
}
