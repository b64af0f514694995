//! What `Rotation3` and `UnitQuaternion` share: rotating a vector or a point (and by the
//! inverse), composing two rotations and inverting one, as rules written once over
//! [`RotationValue`] and implemented for both types by `apply_rules!`.
//!
//! A rotation's cotangent is its ambient coordinates ([`Ambient`]: the `Matrix3` of a
//! `Rotation3`, the `Quaternion` of a `UnitQuaternion`), and each pullback is the
//! derivative of the formula nalgebra evaluates, on the whole ambient space (every
//! matrix, every quaternion):
//! - `y = M v` gives `M̄ += ȳ vᵀ`, `v̄ += Mᵀ ȳ`; `y = Mᵀ v` the transposes;
//! - `y = q v`, computed as `t = 2 u × v`, `y = v + w t + u × t` (`q = (w, u)`), gives
//!   `t̄ = w ȳ + ȳ × u`, `w̄ = ȳ · t`, `ū = t × ȳ + 2 v × t̄`, `v̄ = ȳ + 2 t̄ × u`;
//!   `y = q* v` the same at `q*`, conjugated;
//! - `C = A B` gives `Ā += C̄ Bᵀ`, `B̄ += Aᵀ C̄`; `p = a b` (Hamilton product) gives
//!   `ā += p̄ b*`, `b̄ += a* p̄` (right and left multiplication by `b` have as adjoints
//!   multiplication by `b*`);
//! - the inverse is the transpose or the conjugate, linear: `X̄ += (Ȳ)ᵀ` or `(Ȳ)*`.

use crate::coords::Coords3;
use crate::Elem;
use mochi_core::kit::{rule_trait, Pullback};
use mochi_core::TangentVector;
use nalgebra::{Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

rule_trait! {
    /// `r.transform_vector(&v)`: `Call((&r, &v)).transform_vector()`.
    NaTransformVector::transform_vector
}
rule_trait! {
    /// `r.transform_point(&p)`: `Call((&r, &p)).transform_point()`.
    NaTransformPoint::transform_point
}
rule_trait! {
    /// `r.inverse_transform_vector(&v)`: `Call((&r, &v)).inverse_transform_vector()`.
    NaInverseTransformVector::inverse_transform_vector
}
rule_trait! {
    /// `r.inverse_transform_point(&p)`: `Call((&r, &p)).inverse_transform_point()`.
    NaInverseTransformPoint::inverse_transform_point
}

/// Which way a rotation acts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    /// `R v`, `q v`.
    Forward,
    /// `Rᵀ v`, `q* v`: the inverse of a rotation.
    Inverse,
}

/// The ambient coordinates of a rotation (`Matrix3`, `Quaternion`), which are also its
/// cotangent, and the pullbacks that depend on them.
pub trait Ambient<T: Elem>: TangentVector + Copy {
    /// `(X̄, v̄)` of `y = X v` (or `X⁻¹ v`) at `X = self`, given `ȳ`.
    fn pull_rotate(
        &self,
        v: &Vector3<T>,
        dy: &Vector3<T>,
        direction: Direction,
    ) -> (Self, Vector3<T>);
    /// `(Ā, B̄)` of `C = A B` at `A = self`, given `C̄`.
    fn pull_compose(&self, b: &Self, dc: &Self) -> (Self, Self);
    /// `X̄` of `Y = X⁻¹` (the transpose or the conjugate, linear), given `Ȳ`.
    fn pull_inverse(dy: &Self) -> Self;
    /// `ω̄ += ∂X/∂ωᵀ X̄` for `X` the rotation of the rotation vector `ω` (see
    /// [`exp`](super::exp)).
    fn pull_exp(omega: &Vector3<T>, dx: &Self, domega: &mut Vector3<T>);
}

impl<T: Elem> Ambient<T> for Matrix3<T> {
    #[inline]
    fn pull_rotate(
        &self,
        v: &Vector3<T>,
        dy: &Vector3<T>,
        direction: Direction,
    ) -> (Self, Vector3<T>) {
        match direction {
            Direction::Forward => (dy * v.transpose(), self.tr_mul(dy)),
            Direction::Inverse => (v * dy.transpose(), self * dy),
        }
    }
    #[inline]
    fn pull_compose(&self, b: &Self, dc: &Self) -> (Self, Self) {
        (dc * b.transpose(), self.tr_mul(dc))
    }
    #[inline]
    fn pull_inverse(dy: &Self) -> Self {
        dy.transpose()
    }
    #[inline]
    fn pull_exp(omega: &Vector3<T>, dx: &Self, domega: &mut Vector3<T>) {
        super::rodrigues::pull_rotation_matrix(omega, dx, domega);
    }
}

impl<T: Elem> Ambient<T> for Quaternion<T> {
    #[inline]
    fn pull_rotate(
        &self,
        v: &Vector3<T>,
        dy: &Vector3<T>,
        direction: Direction,
    ) -> (Self, Vector3<T>) {
        let q = match direction {
            Direction::Forward => *self,
            Direction::Inverse => self.conjugate(),
        };
        let two = T::of_f64(2.0);
        let (w, u) = (q.w, q.imag());
        let t = u.cross(v) * two;
        let dt = dy * w + dy.cross(&u);
        let du = t.cross(dy) + v.cross(&dt) * two;
        let dq = Quaternion::from_parts(dy.dot(&t), du);
        let dv = dy + dt.cross(&u) * two;
        match direction {
            Direction::Forward => (dq, dv),
            Direction::Inverse => (dq.conjugate(), dv),
        }
    }
    #[inline]
    fn pull_compose(&self, b: &Self, dc: &Self) -> (Self, Self) {
        (dc * b.conjugate(), self.conjugate() * dc)
    }
    #[inline]
    fn pull_inverse(dy: &Self) -> Self {
        dy.conjugate()
    }
    #[inline]
    fn pull_exp(omega: &Vector3<T>, dx: &Self, domega: &mut Vector3<T>) {
        super::rodrigues::pull_unit_quaternion(omega, dx, domega);
    }
}

/// A rotation value: `Rotation3` or `UnitQuaternion`, with its ambient coordinates and
/// nalgebra's primal operations.
pub trait RotationValue<T: Elem>: Sized {
    /// The ambient coordinates and cotangent.
    type Ambient: Ambient<T>;
    /// The ambient coordinates of `self`.
    fn ambient(&self) -> Self::Ambient;
    /// `R v` or `R⁻¹ v`, as nalgebra computes it.
    fn act(&self, v: &Vector3<T>, direction: Direction) -> Vector3<T>;
    /// `self · other`, as nalgebra computes it.
    fn compose(&self, other: &Self) -> Self;
    /// `self⁻¹`, as nalgebra computes it.
    fn invert(&self) -> Self;
}

/// Implements [`RotationValue`] for `$Rot` with ambient coordinates `$Ambient`, read by
/// `$coordinates`: nalgebra writes the operations of both types alike.
macro_rules! rotation_value {
    ($($Rot:ident => $Ambient:ident, $coordinates:ident;)*) => {$(
        impl<T: Elem> RotationValue<T> for $Rot<T> {
            type Ambient = $Ambient<T>;
            #[inline]
            fn ambient(&self) -> $Ambient<T> {
                *self.$coordinates()
            }
            #[inline]
            fn act(&self, v: &Vector3<T>, direction: Direction) -> Vector3<T> {
                match direction {
                    Direction::Forward => self * v,
                    Direction::Inverse => self.inverse_transform_vector(v),
                }
            }
            #[inline]
            fn compose(&self, other: &Self) -> Self {
                self * other
            }
            #[inline]
            fn invert(&self) -> Self {
                self.inverse()
            }
        }
    )*};
}
rotation_value! {
    Rotation3 => Matrix3, matrix;
    UnitQuaternion => Quaternion, quaternion;
}

/// Pullback of `y = X v` (or `X⁻¹ v`) for `X` of ambient coordinates `A` and `v`, `y`
/// of type `V` (a vector or a point): holds `X` and `v`.
pub struct RotatePullback<T: Elem, A, V> {
    rotation: A,
    v: Vector3<T>,
    direction: Direction,
    _types: std::marker::PhantomData<fn() -> V>,
}

impl<T: Elem, A: Ambient<T>, V: Coords3<T>> Pullback for RotatePullback<T, A, V> {
    type Output = V;
    type Args = (A, V);
    #[inline]
    fn pullback(self, dy: V, (dx, dv): (&mut A, &mut V)) {
        let (gx, gv) = self
            .rotation
            .pull_rotate(&self.v, &dy.coords3(), self.direction);
        dx.accumulate(gx);
        *dv.coords3_mut() += gv;
    }
}

/// `R v` or `R⁻¹ v` with its pullback.
#[inline]
pub(crate) fn rotate<T: Elem, R: RotationValue<T>, V: Coords3<T>>(
    r: &R,
    v: Vector3<T>,
    direction: Direction,
) -> (V, RotatePullback<T, R::Ambient, V>) {
    let y = r.act(&v, direction);
    let pullback = RotatePullback {
        rotation: r.ambient(),
        v,
        direction,
        _types: std::marker::PhantomData,
    };
    (V::from_coords(y), pullback)
}

/// Pullback of `C = A B`: holds both ambient coordinates.
pub struct ComposePullback<T, A> {
    a: A,
    b: A,
    _types: std::marker::PhantomData<fn() -> T>,
}

impl<T: Elem, A: Ambient<T>> Pullback for ComposePullback<T, A> {
    type Output = A;
    type Args = (A, A);
    #[inline]
    fn pullback(self, dc: A, (da, db): (&mut A, &mut A)) {
        let (ga, gb) = self.a.pull_compose(&self.b, &dc);
        da.accumulate(ga);
        db.accumulate(gb);
    }
}

/// A linear map of a rotation's ambient coordinates, whose pullback needs no primal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Linear {
    /// `Y = X` (`r.matrix()`, `r.into_inner()`).
    Identity,
    /// `Y = X⁻¹`, the transpose or the conjugate.
    Inverse,
}

/// Pullback of a [`Linear`] map of ambient coordinates `A`.
pub struct LinearPullback<T, A> {
    map: Linear,
    _types: std::marker::PhantomData<fn() -> (T, A)>,
}

impl<T, A> LinearPullback<T, A> {
    /// The pullback of `map`.
    #[inline]
    pub(crate) fn new(map: Linear) -> Self {
        LinearPullback {
            map,
            _types: std::marker::PhantomData,
        }
    }
}

impl<T: Elem, A: Ambient<T>> Pullback for LinearPullback<T, A> {
    type Output = A;
    type Args = (A,);
    #[inline]
    fn pullback(self, dy: A, (dx,): (&mut A,)) {
        match self.map {
            Linear::Identity => dx.accumulate(dy),
            Linear::Inverse => dx.accumulate(A::pull_inverse(&dy)),
        }
    }
}

/// `A B` with its pullback.
#[inline]
pub(crate) fn compose<T: Elem, R: RotationValue<T>>(
    a: &R,
    b: &R,
) -> (R, ComposePullback<T, R::Ambient>) {
    let pullback = ComposePullback {
        a: a.ambient(),
        b: b.ambient(),
        _types: std::marker::PhantomData,
    };
    (a.compose(b), pullback)
}

/// `R⁻¹` with its pullback.
#[inline]
pub(crate) fn invert<T: Elem, R: RotationValue<T>>(r: &R) -> (R, LinearPullback<T, R::Ambient>) {
    (r.invert(), LinearPullback::new(Linear::Inverse))
}

/// Implements `Trait::method` for `Call((&x,))` of `x: $Ty<T>` for each listed trait,
/// every method running `$f(x)`.
macro_rules! same_rule {
    ($Ty:ident => $f:path, $Out:ty, $Pb:ty: $($Trait:path => $method:ident),+ $(,)?) => {$(
        impl<T: $crate::Elem> $Trait for ::mochi_core::Call<(&$Ty<T>,)> {
            type Output = $Out;
            type Pullback = $Pb;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                $f(self.0 .0)
            }
        }
    )+};
}
pub(crate) use same_rule;

/// Implements, for the rotation type `$Rot` ([`RotationValue`]): `r * v`, `r * p`,
/// `r.transform_vector(&v)`, `r.transform_point(&p)`,
/// `r.inverse_transform_vector(&v)`, `r.inverse_transform_point(&p)` (the vector of
/// any storage), `r1 * r2` and `r.inverse()`.
macro_rules! apply_rules {
    ($Rot:ident) => {
        $crate::rotation::apply::apply_rules!(@act $Rot, $crate::arith::NaMul => op_mul, Forward);
        $crate::rotation::apply::apply_rules!(@act $Rot, $crate::rotation::apply::NaTransformVector => transform_vector, Forward);
        $crate::rotation::apply::apply_rules!(@act $Rot, $crate::rotation::apply::NaInverseTransformVector => inverse_transform_vector, Inverse);
        $crate::rotation::apply::apply_rules!(@point $Rot, $crate::arith::NaMul => op_mul, Forward);
        $crate::rotation::apply::apply_rules!(@point $Rot, $crate::rotation::apply::NaTransformPoint => transform_point, Forward);
        $crate::rotation::apply::apply_rules!(@point $Rot, $crate::rotation::apply::NaInverseTransformPoint => inverse_transform_point, Inverse);

        impl<T: $crate::Elem> $crate::arith::NaMul for ::mochi_core::Call<(&$Rot<T>, &$Rot<T>)> {
            type Output = $Rot<T>;
            type Pullback = $crate::rotation::apply::ComposePullback<T, <$Rot<T> as $crate::rotation::apply::RotationValue<T>>::Ambient>;
            #[inline]
            fn op_mul(self) -> (Self::Output, Self::Pullback) {
                let (a, b) = self.0;
                $crate::rotation::apply::compose(a, b)
            }
        }

        $crate::rotation::apply::same_rule!($Rot => $crate::rotation::apply::invert, $Rot<T>,
            $crate::rotation::apply::LinearPullback<T, <$Rot<T> as $crate::rotation::apply::RotationValue<T>>::Ambient>:
            $crate::factor::NaInverse => inverse);
    };
    (@act $Rot:ident, $Trait:path => $method:ident, $direction:ident) => {
        impl<T, S> $Trait for ::mochi_core::Call<(&$Rot<T>, &::nalgebra::Matrix<T, ::nalgebra::U3, ::nalgebra::U1, S>)>
        where
            T: $crate::Elem,
            S: ::nalgebra::Storage<T, ::nalgebra::U3, ::nalgebra::U1>,
        {
            type Output = ::nalgebra::Vector3<T>;
            type Pullback = $crate::rotation::apply::RotatePullback<T, <$Rot<T> as $crate::rotation::apply::RotationValue<T>>::Ambient, ::nalgebra::Vector3<T>>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (r, v) = self.0;
                $crate::rotation::apply::rotate(r, v.clone_owned(), $crate::rotation::apply::Direction::$direction)
            }
        }
    };
    (@point $Rot:ident, $Trait:path => $method:ident, $direction:ident) => {
        impl<T: $crate::Elem> $Trait for ::mochi_core::Call<(&$Rot<T>, &::nalgebra::Point3<T>)> {
            type Output = ::nalgebra::Point3<T>;
            type Pullback = $crate::rotation::apply::RotatePullback<T, <$Rot<T> as $crate::rotation::apply::RotationValue<T>>::Ambient, ::nalgebra::Point3<T>>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (r, p) = self.0;
                $crate::rotation::apply::rotate(r, p.coords, $crate::rotation::apply::Direction::$direction)
            }
        }
    };
}
pub(crate) use apply_rules;

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::check_rule;
    use crate::Elem;
    use mochi_core::Call;
    use nalgebra::{Point3, Quaternion, Rotation3, UnitQuaternion, Vector3};

    /// Checks the rules of [`apply_rules!`](super::apply_rules) on two rotations of one
    /// type (moved off the manifold by the harness: the pullbacks hold on the whole
    /// ambient space).
    macro_rules! check_rotation_rules {
        ($T:ty; $r:expr, $r2:expr) => {{
            let (r, r2) = ($r, $r2);
            let v = Vector3::new(0.5, -1.5, 2.0).map(<$T>::of_f64);
            let p = Point3::from(v);
            check_rule!($T; (r, v), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
            check_rule!($T; (r, p), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
            check_rule!($T; (r, r2), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul());
            check_rule!($T; (r,), |a| a.0.inverse(), Call((&a.0,)).inverse());
            check_rule!($T; (r, v), |a| a.0.transform_vector(&a.1), Call((&a.0, &a.1)).transform_vector());
            check_rule!($T; (r, p), |a| a.0.transform_point(&a.1), Call((&a.0, &a.1)).transform_point());
            check_rule!(
                $T;
                (r, v),
                |a| a.0.inverse_transform_vector(&a.1),
                Call((&a.0, &a.1)).inverse_transform_vector()
            );
            check_rule!(
                $T;
                (r, p),
                |a| a.0.inverse_transform_point(&a.1),
                Call((&a.0, &a.1)).inverse_transform_point()
            );
        }};
    }

    fn rules<T: Elem>() {
        let omega = |seed: f64| Vector3::new(0.3 + seed, -0.5, 0.8 * seed).map(T::of_f64);
        let v = Vector3::new(0.5, -1.5, 2.0).map(T::of_f64);
        // The adjoint identity against forward derivatives of nalgebra's formulas.
        let (r, r2) = (
            Rotation3::from_scaled_axis(omega(0.2)),
            Rotation3::from_scaled_axis(omega(1.1)),
        );
        // d(R v) = Ṙ v + R v̇; d(A B) = Ȧ B + A Ḃ
        check_rule!(T; (r, v), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul(), jvp = |x, t| t.0 * x.1 + x.0.matrix() * t.1);
        check_rule!(T; (r, r2), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul(), jvp = |x, t| t.0 * x.1.matrix() + x.0.matrix() * t.1);
        let (q, q2) = (
            UnitQuaternion::from_scaled_axis(omega(0.2)),
            UnitQuaternion::from_scaled_axis(omega(1.1)),
        );
        // y = v + w t + u × t, t = 2 u × v: ẏ = v̇ + ẇ t + w ṫ + u̇ × t + u × ṫ,
        // ṫ = 2 (u̇ × v + u × v̇)
        let rotate_jvp =
            |q: &UnitQuaternion<T>, v: &Vector3<T>, dq: &Quaternion<T>, dv: &Vector3<T>| {
                let two = T::of_f64(2.0);
                let (w, u, dw, du) = (q.w, q.imag(), dq.w, dq.imag());
                let t = u.cross(v) * two;
                let dt = (du.cross(v) + u.cross(dv)) * two;
                dv + t * dw + dt * w + du.cross(&t) + u.cross(&dt)
            };
        check_rule!(T; (q, v), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul(), jvp = |x, t| rotate_jvp(&x.0, &x.1, &t.0, &t.1));
        check_rule!(T; (q, q2), |a| a.0 * a.1, Call((&a.0, &a.1)).op_mul(), jvp = |x, t| t.0 * x.1.quaternion() + x.0.quaternion() * t.1);
        check_rotation_rules!(T; Rotation3::from_scaled_axis(omega(0.2)), Rotation3::from_scaled_axis(omega(1.1)));
        check_rotation_rules!(
            T;
            UnitQuaternion::from_scaled_axis(omega(0.2)),
            UnitQuaternion::from_scaled_axis(omega(1.1))
        );
    }

    #[test]
    fn rotation_rules_of_rotation3_and_unit_quaternion_f64_and_f32() {
        rules::<f64>();
        rules::<f32>();
    }
}
