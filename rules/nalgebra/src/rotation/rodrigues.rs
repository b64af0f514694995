//! The derivative of a rotation built from a rotation vector `ω`, in the rotation's
//! ambient coordinates: the coefficients of Rodrigues' formula and of the half-angle
//! quaternion (by their series below `θ = 1/4`, by their closed forms above), and the
//! pullbacks `ω̄ += ∂X/∂ωᵀ X̄` for `X` a rotation matrix or a unit quaternion, which
//! `Ambient::pull_exp` (in `apply`) calls. The formulas are derived in `exp`.

use crate::Elem;
use nalgebra::{Matrix3, Quaternion, Vector3};

/// Below this `θ²` the coefficients are summed from their series.
pub(super) const SERIES_BELOW: f64 = 1.0 / 16.0;

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
pub(super) struct Rodrigues<T> {
    /// `sin θ / θ`.
    pub(super) a: T,
    /// `(1 − cos θ)/θ²`.
    pub(super) b: T,
    /// `a′(θ)/θ = (θ cos θ − sin θ)/θ³`.
    pub(super) da: T,
    /// `b′(θ)/θ = (θ sin θ − 2(1 − cos θ))/θ⁴`.
    pub(super) db: T,
}

impl<T: Elem> Rodrigues<T> {
    pub(super) fn at(t: T) -> Self {
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
pub(super) fn half_angle<T: Elem>(t: T) -> (T, T) {
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

#[cfg(test)]
mod tests {
    use super::{half_angle_closed, half_angle_series, Rodrigues, SERIES_BELOW};

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
