//! Rotations from Euler angles, as nalgebra builds them: `Rotation3::from_euler_angles(
//! roll, pitch, yaw)` (`R = R_z(yaw) R_y(pitch) R_x(roll)`) and
//! `UnitQuaternion::from_euler_angles(roll, pitch, yaw)`.
//!
//! The pullback adds each angle's `⟨R̄, ∂R/∂angle⟩` (for the quaternion, of its four
//! coordinates), in the ambient coordinates of the other rotation rules (`Matrix3`,
//! `Quaternion`): `∂R/∂roll = R_z R_y R_x′` and alike for the matrix; the quaternion's
//! coordinates have one factor of each half angle's `(sin, cos)` pair in every term, so
//! the partial by one angle is the same formula with that pair replaced by `(cos, −sin)`,
//! times ½.

use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::{Matrix3, Quaternion, Rotation3, UnitQuaternion};

/// A rotation's ambient coordinates, and their partial derivatives by the three Euler
/// angles (roll, pitch, yaw), as nalgebra builds them.
pub trait EulerAmbient<T: Elem>: Sized {
    /// `∂/∂roll`, `∂/∂pitch`, `∂/∂yaw` at the angles.
    fn partials(angles: [T; 3]) -> [Self; 3];
    /// The inner product of two coordinate values.
    fn inner(&self, other: &Self) -> T;
}

impl<T: Elem> EulerAmbient<T> for Matrix3<T> {
    fn partials([r, p, y]: [T; 3]) -> [Self; 3] {
        let (o, l) = (T::ZERO, T::ONE);
        let ((sr, cr), (sp, cp), (sy, cy)) =
            ((r.sin(), r.cos()), (p.sin(), p.cos()), (y.sin(), y.cos()));
        let rx = Matrix3::new(l, o, o, o, cr, -sr, o, sr, cr);
        let ry = Matrix3::new(cp, o, sp, o, l, o, -sp, o, cp);
        let rz = Matrix3::new(cy, -sy, o, sy, cy, o, o, o, l);
        let drx = Matrix3::new(o, o, o, o, -sr, -cr, o, cr, -sr);
        let dry = Matrix3::new(-sp, o, cp, o, o, o, -cp, o, -sp);
        let drz = Matrix3::new(-sy, -cy, o, cy, -sy, o, o, o, o);
        [rz * ry * drx, rz * dry * rx, drz * ry * rx]
    }
    #[inline]
    fn inner(&self, other: &Self) -> T {
        self.dot(other)
    }
}

impl<T: Elem> EulerAmbient<T> for Quaternion<T> {
    fn partials(angles: [T; 3]) -> [Self; 3] {
        let half = T::of_f64(0.5);
        let (mut s, mut c) = ([T::ZERO; 3], [T::ZERO; 3]);
        for k in 0..3 {
            let a = angles[k] * half;
            (s[k], c[k]) = (a.sin(), a.cos());
        }
        let build = |[sr, sp, sy]: [T; 3], [cr, cp, cy]: [T; 3]| {
            Quaternion::new(
                cr * cp * cy + sr * sp * sy,
                sr * cp * cy - cr * sp * sy,
                cr * sp * cy + sr * cp * sy,
                cr * cp * sy - sr * sp * cy,
            ) * half
        };
        std::array::from_fn(|k| {
            let (mut sk, mut ck) = (s, c);
            sk[k] = c[k];
            ck[k] = -s[k];
            build(sk, ck)
        })
    }
    #[inline]
    fn inner(&self, other: &Self) -> T {
        self.coords.dot(&other.coords)
    }
}

/// Pullback of a rotation built from Euler angles, in the ambient coordinates `A`:
/// holds the angles.
pub struct EulerPullback<T: Elem, A> {
    angles: [T; 3],
    _types: std::marker::PhantomData<fn() -> A>,
}

impl<T: Elem, A: EulerAmbient<T>> Pullback for EulerPullback<T, A> {
    type Output = A;
    type Args = (T, T, T);
    #[inline]
    fn pullback(self, dx: A, (droll, dpitch, dyaw): (&mut T, &mut T, &mut T)) {
        let [dr, dp, dy] = A::partials(self.angles);
        *droll += dx.inner(&dr);
        *dpitch += dx.inner(&dp);
        *dyaw += dx.inner(&dy);
    }
}

rule_trait! {
    /// `Rotation3::from_euler_angles(roll, pitch, yaw)`:
    /// `Call((&roll, &pitch, &yaw)).rotation3_from_euler_angles()`.
    NaRotation3FromEulerAngles::rotation3_from_euler_angles
}
rule_trait! {
    /// `UnitQuaternion::from_euler_angles(roll, pitch, yaw)`:
    /// `Call((&roll, &pitch, &yaw)).unit_quaternion_from_euler_angles()`.
    NaUnitQuaternionFromEulerAngles::unit_quaternion_from_euler_angles
}

impl<T: Elem> NaRotation3FromEulerAngles for Call<(&T, &T, &T)> {
    type Output = Rotation3<T>;
    type Pullback = EulerPullback<T, Matrix3<T>>;
    #[inline]
    fn rotation3_from_euler_angles(self) -> (Self::Output, Self::Pullback) {
        let (&r, &p, &y) = self.0;
        (
            Rotation3::from_euler_angles(r, p, y),
            EulerPullback {
                angles: [r, p, y],
                _types: std::marker::PhantomData,
            },
        )
    }
}

impl<T: Elem> NaUnitQuaternionFromEulerAngles for Call<(&T, &T, &T)> {
    type Output = UnitQuaternion<T>;
    type Pullback = EulerPullback<T, Quaternion<T>>;
    #[inline]
    fn unit_quaternion_from_euler_angles(self) -> (Self::Output, Self::Pullback) {
        let (&r, &p, &y) = self.0;
        (
            UnitQuaternion::from_euler_angles(r, p, y),
            EulerPullback {
                angles: [r, p, y],
                _types: std::marker::PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::check_rule;
    use crate::Elem;
    use mochi_core::Call;
    use nalgebra::{Rotation3, UnitQuaternion};

    fn euler<T: Elem>() {
        for (r, p, y) in [
            (0.3, -0.5, 0.8),
            (2.5, 0.1, -1.0),
            (0.0, 0.0, 0.0),
            (-3.0, 1.4, 2.9),
        ] {
            let args = (T::of_f64(r), T::of_f64(p), T::of_f64(y));
            check_rule!(
                T;
                args,
                |a| Rotation3::from_euler_angles(a.0, a.1, a.2),
                Call((&a.0, &a.1, &a.2)).rotation3_from_euler_angles()
            );
            check_rule!(
                T;
                args,
                |a| UnitQuaternion::from_euler_angles(a.0, a.1, a.2),
                Call((&a.0, &a.1, &a.2)).unit_quaternion_from_euler_angles()
            );
        }
    }

    #[test]
    fn rotations_from_euler_angles_f64_and_f32() {
        euler::<f64>();
        euler::<f32>();
    }
}
