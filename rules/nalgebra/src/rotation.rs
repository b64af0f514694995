//! Rotations from a rotation vector (the bundle-adjustment parametrisation):
//! [`rotation_matrix`](fn@rotation_matrix)`(&ω)`, the `Matrix3` of
//! `Rotation3::from_scaled_axis(ω)`, with its rule module.
//!
//! With `θ = ‖ω‖` and `R = exp([ω]×)` (Rodrigues), the derivative along `ωᵢ` is
//! (Gallego and Yezzi, "A compact formula for the derivative of a 3-D rotation in
//! exponential coordinates", 2015)
//! `∂R/∂ωᵢ = (ωᵢ [ω]× + [ω × ((I − R) eᵢ)]×) R / θ²`,
//! and the pullback adds `ω̄ᵢ += ⟨R̄, ∂R/∂ωᵢ⟩`. Where `θ²` is below `√ε` the formula
//! cancels badly and the second-order expansion
//! `∂R/∂ωᵢ ≈ [eᵢ]× + ½([eᵢ]× [ω]× + [ω]× [eᵢ]×)` is used instead (error `O(θ²)`).

use crate::dense::output;
use crate::Elem;
use mochi_core::kit::Pullback;
use nalgebra::{Matrix3, Rotation3, Vector3};

/// `Rotation3::from_scaled_axis(ω)` as a matrix: the rotation by the angle `‖ω‖` about
/// the axis `ω/‖ω‖` (the identity for `ω = 0`).
#[inline]
pub fn rotation_matrix<T: Elem>(omega: &Vector3<T>) -> Matrix3<T> {
    Rotation3::from_scaled_axis(*omega).into_inner()
}

/// `[v]×`, the matrix of `x ↦ v × x`.
#[inline]
fn hat<T: Elem>(v: &Vector3<T>) -> Matrix3<T> {
    v.cross_matrix()
}

/// `∂R/∂ωᵢ` for `i = 0, 1, 2`.
fn derivatives<T: Elem>(omega: &Vector3<T>, r: &Matrix3<T>) -> [Matrix3<T>; 3] {
    let theta2 = omega.norm_squared();
    let w = hat(omega);
    let e = |i: usize| Vector3::ith(i, T::ONE);
    if theta2 < T::default_epsilon().sqrt() {
        let half = T::of_f64(0.5);
        return [0, 1, 2].map(|i| {
            let ei = hat(&e(i));
            ei + (ei * w + w * ei) * half
        });
    }
    let i_minus_r = Matrix3::identity() - r;
    [0, 1, 2].map(|i| {
        let v = omega.cross(&(i_minus_r * e(i)));
        (w * omega[i] + hat(&v)) * r / theta2
    })
}

/// The rule of [`rotation_matrix`](fn@rotation_matrix): `ω̄ᵢ += ⟨R̄, ∂R/∂ωᵢ⟩`.
pub mod rotation_matrix {
    use super::*;

    /// Pullback of `rotation_matrix`: `ω` and `R`.
    pub struct RotationMatrixPullback<T: Elem> {
        omega: Vector3<T>,
        r: Matrix3<T>,
    }

    impl<T: Elem> Pullback for RotationMatrixPullback<T> {
        type Output = Matrix3<T>;
        type Args = (Vector3<T>,);
        #[track_caller]
        fn pullback(self, dr: Matrix3<T>, (domega,): (&mut Vector3<T>,)) {
            if output(&dr, (3, 3)).is_none() {
                return;
            }
            let d = derivatives(&self.omega, &self.r);
            for (i, di) in d.iter().enumerate() {
                domega[i] += dr.dot(di);
            }
        }
    }

    /// `rotation_matrix(ω)` with its pullback.
    #[inline]
    pub fn rrule<T: Elem>(omega: &Vector3<T>) -> (Matrix3<T>, RotationMatrixPullback<T>) {
        let r = super::rotation_matrix(omega);
        (r, RotationMatrixPullback { omega: *omega, r })
    }
}

#[cfg(test)]
mod tests {
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use nalgebra::Vector3;

    fn rotations<T: Elem>() {
        let omegas = [
            Vector3::new(0.3, -0.5, 0.8),
            Vector3::new(2.5, 0.1, -1.0),    // past π/2
            Vector3::new(1e-5, -2e-5, 1e-5), // the expansion near 0
            Vector3::new(0.0, 0.0, 0.0),
        ];
        for omega in omegas {
            let omega: Vector3<T> = omega.map(T::of_f64);
            RuleTest::new(
                (omega,),
                |a| super::rotation_matrix(&a.0),
                |a| super::rotation_matrix::rrule(&a.0),
            )
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
    }

    #[test]
    fn rotation_matrix_f64_and_f32() {
        rotations::<f64>();
        rotations::<f32>();
    }
}
