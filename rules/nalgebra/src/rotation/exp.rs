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
//! `ω`, `ω = 0` included: there it is `∂R/∂ωᵢ = Eᵢ` and `∂q/∂ω = (0, ½ I)`.

use crate::rotation::apply::Ambient;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::{Matrix, Matrix3, Quaternion, Rotation3, Storage, UnitQuaternion, Vector3, U1, U3};

/// `Rotation3::from_scaled_axis(ω)` as a matrix: the rotation by the angle `‖ω‖` about
/// the axis `ω/‖ω‖` (the identity for `ω = 0`).
#[inline]
pub fn rotation_matrix<T: Elem>(omega: &Vector3<T>) -> Matrix3<T> {
    Rotation3::from_scaled_axis(*omega).into_inner()
}

/// Below this `θ²` the coefficients are summed from their series.
const SERIES_BELOW: f64 = 1.0 / 16.0;

// The series in t = θ²: a = Σ (−1)ᵏ θ²ᵏ/(2k+1)!, b = Σ (−1)ᵏ θ²ᵏ/(2k+2)!,
// s = Σ (−1)ᵏ θ²ᵏ/(2²ᵏ⁺¹ (2k+1)!), and their θ-derivatives over θ term by term.
const A_SERIES: [f64; 6] = [
    1.0,
    -1.0 / 6.0,
    1.0 / 120.0,
    -1.0 / 5040.0,
    1.0 / 362880.0,
    -1.0 / 39916800.0,
];
const B_SERIES: [f64; 6] = [
    0.5,
    -1.0 / 24.0,
    1.0 / 720.0,
    -1.0 / 40320.0,
    1.0 / 3628800.0,
    -1.0 / 479001600.0,
];
const DA_SERIES: [f64; 5] = [
    -1.0 / 3.0,
    1.0 / 30.0,
    -1.0 / 840.0,
    1.0 / 45360.0,
    -1.0 / 3991680.0,
];
const DB_SERIES: [f64; 5] = [
    -1.0 / 12.0,
    1.0 / 180.0,
    -1.0 / 6720.0,
    1.0 / 453600.0,
    -1.0 / 47900160.0,
];
const S_SERIES: [f64; 6] = [
    0.5,
    -1.0 / 48.0,
    1.0 / 3840.0,
    -1.0 / 645120.0,
    1.0 / 185794560.0,
    -1.0 / 81749606400.0,
];
const DS_SERIES: [f64; 5] = [
    -1.0 / 24.0,
    1.0 / 960.0,
    -1.0 / 107520.0,
    1.0 / 23224320.0,
    -1.0 / 8174960640.0,
];

/// `Σₖ cₖ tᵏ` by Horner's rule.
#[inline]
fn series<T: Elem>(t: T, coefficients: &[f64]) -> T {
    coefficients
        .iter()
        .rev()
        .fold(T::ZERO, |acc, &c| acc * t + T::of_f64(c))
}

/// The coefficients of `R = I + a W + b W²` and of its derivative, at `θ² = t`.
#[derive(Clone, Copy)]
struct Rodrigues<T> {
    /// `sin θ / θ`.
    a: T,
    /// `(1 − cos θ)/θ²`.
    b: T,
    /// `a′(θ)/θ = (θ cos θ − sin θ)/θ³`.
    da: T,
    /// `b′(θ)/θ = (θ sin θ − 2(1 − cos θ))/θ⁴`.
    db: T,
}

impl<T: Elem> Rodrigues<T> {
    fn at(t: T) -> Self {
        if t < T::of_f64(SERIES_BELOW) {
            Self::series(t)
        } else {
            Self::closed(t)
        }
    }

    fn series(t: T) -> Self {
        Rodrigues {
            a: series(t, &A_SERIES),
            b: series(t, &B_SERIES),
            da: series(t, &DA_SERIES),
            db: series(t, &DB_SERIES),
        }
    }

    fn closed(t: T) -> Self {
        let theta = t.sqrt();
        let two = T::of_f64(2.0);
        // From the half angle: sin θ = 2 sin(θ/2) cos(θ/2), and 1 − cos θ = 2 sin²(θ/2)
        // without the cancellation.
        let (half_sin, half_cos) = (theta / two).sin_cos();
        let sin = two * half_sin * half_cos;
        let one_minus_cos = two * half_sin * half_sin;
        let cos = T::ONE - one_minus_cos;
        Rodrigues {
            a: sin / theta,
            b: one_minus_cos / t,
            da: (theta * cos - sin) / (theta * t),
            db: (theta * sin - two * one_minus_cos) / (t * t),
        }
    }
}

/// The coefficients of `q = (cos(θ/2), s ω)` at `θ² = t`: `s = sin(θ/2)/θ` and
/// `s′(θ)/θ`.
fn half_angle<T: Elem>(t: T) -> (T, T) {
    if t < T::of_f64(SERIES_BELOW) {
        half_angle_series(t)
    } else {
        half_angle_closed(t)
    }
}

/// [`half_angle`] by its series.
fn half_angle_series<T: Elem>(t: T) -> (T, T) {
    (series(t, &S_SERIES), series(t, &DS_SERIES))
}

/// [`half_angle`] by its closed form.
fn half_angle_closed<T: Elem>(t: T) -> (T, T) {
    let theta = t.sqrt();
    let half = theta * T::of_f64(0.5);
    let (sin, cos) = half.sin_cos();
    (sin / theta, (half * cos - sin) / (theta * t))
}

/// `axial(M)`, the vector with `⟨M, [x]×⟩ = x · axial(M)` for every `x`:
/// `(M₂₁ − M₁₂, M₀₂ − M₂₀, M₁₀ − M₀₁)`.
#[inline]
pub(crate) fn axial<T: Elem>(m: &Matrix3<T>) -> Vector3<T> {
    Vector3::new(
        m[(2, 1)] - m[(1, 2)],
        m[(0, 2)] - m[(2, 0)],
        m[(1, 0)] - m[(0, 1)],
    )
}

/// `ω̄ᵢ += ⟨R̄, ∂R/∂ωᵢ⟩` for `R = exp([ω]×)`.
///
/// With `[x]×[y]× = y xᵀ − (x · y) I`: `⟨R̄, Eᵢ⟩ = axial(R̄)ᵢ`,
/// `⟨R̄, Eᵢ W + W Eᵢ⟩ = ((R̄ + R̄ᵀ) ω − 2 tr(R̄) ω)ᵢ`, `⟨R̄, W⟩ = ω · axial(R̄)` and
/// `⟨R̄, W²⟩ = ωᵀ R̄ ω − θ² tr R̄`, so no `3 × 3` product is formed.
pub(crate) fn pull_rotation_matrix<T: Elem>(
    omega: &Vector3<T>,
    dr: &Matrix3<T>,
    domega: &mut Vector3<T>,
) {
    let theta2 = omega.norm_squared();
    let k = Rodrigues::at(theta2);
    let axial = axial(dr);
    let trace = dr.trace();
    let r_omega = dr * omega;
    let rt_omega = dr.tr_mul(omega);
    let two = T::of_f64(2.0);
    let along = k.da * omega.dot(&axial) + k.db * (omega.dot(&r_omega) - theta2 * trace);
    *domega += axial * k.a + (r_omega + rt_omega - omega * (two * trace)) * k.b + omega * along;
}

/// `ω̄ += ∂q/∂ωᵀ q̄` for `q = exp(ω/2)`, the unit quaternion of the rotation vector `ω`.
pub(crate) fn pull_unit_quaternion<T: Elem>(
    omega: &Vector3<T>,
    dq: &Quaternion<T>,
    domega: &mut Vector3<T>,
) {
    let (s, ds) = half_angle(omega.norm_squared());
    let dv = dq.imag();
    let half = T::of_f64(0.5);
    *domega += dv * s + omega * (ds * omega.dot(&dv) - half * s * dq.w);
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

#[cfg(test)]
mod tests {
    use super::{half_angle, half_angle_closed, half_angle_series, Rodrigues, SERIES_BELOW};
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

    #[test]
    fn series_and_closed_forms_agree_at_the_switch() {
        // At θ² = 1/16 the series and the closed forms agree to rounding, so the
        // coefficients have no jump where one takes over from the other.
        let t = SERIES_BELOW;
        let (k0, k1) = (Rodrigues::series(t), Rodrigues::closed(t));
        for (x, y) in [(k0.a, k1.a), (k0.b, k1.b), (k0.da, k1.da), (k0.db, k1.db)] {
            assert!((x - y).abs() < 4e-15, "{x} vs {y}");
        }
        let ((s0, d0), (s1, d1)) = (half_angle_series(t), half_angle_closed(t));
        assert!((s0 - s1).abs() < 4e-15 && (d0 - d1).abs() < 4e-15);
        // And at θ = 10⁻³ the series holds where the closed forms lose digits.
        let (small, big) = (
            Rodrigues::<f64>::series(1e-6),
            Rodrigues::<f64>::closed(1e-6),
        );
        assert!((small.da - big.da).abs() < 1e-8 && (small.da + 1.0 / 3.0).abs() < 1e-7);
    }
}
