//! The pullbacks the rotation rules share: rotating a vector or a point by a matrix or
//! by a quaternion (or by their inverses), composing two rotations, and the linear maps
//! (identity, transpose, conjugate) between a rotation's cotangent and another's.
//!
//! Each is the derivative of the formula nalgebra evaluates, on the whole ambient space
//! (every matrix, every quaternion): `y = M v` gives `M̄ += ȳ vᵀ`, `v̄ += Mᵀ ȳ`;
//! `p = a b` (Hamilton product) gives `ā += p̄ b*`, `b̄ += a* p̄` (right and left
//! multiplication by `b` have as adjoints multiplication by `b*`); `y = q v` computed as
//! `t = 2 u × v`, `y = v + w t + u × t` (`q = (w, u)`) gives `t̄ = w ȳ + ȳ × u`,
//! `w̄ = ȳ · t`, `ū = t × ȳ + 2 v × t̄`, `v̄ = ȳ + 2 t̄ × u`.

use crate::point::Coords3;
use crate::Elem;
use mochi_core::kit::{rule_trait, Pullback};
use nalgebra::{Matrix3, Quaternion, Vector3};

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

/// Implements, for the rotation type `$Rot` and its `rotate` function
/// (`fn(&$Rot<T>, Vector3<T>, Direction) -> (V, $Pb<T, V>)` for `V` a `Vector3` or a
/// `Point3`): `r * v`, `r * p`, `r.transform_vector(&v)`, `r.transform_point(&p)`,
/// `r.inverse_transform_vector(&v)` and `r.inverse_transform_point(&p)`, the vector of
/// any storage.
macro_rules! apply_rules {
    ($Rot:ident, $rotate:path, $Pb:ident) => {
        $crate::rotation::apply::apply_rules!(@vector $Rot, $rotate, $Pb, $crate::arith::NaMul => op_mul, Forward);
        $crate::rotation::apply::apply_rules!(@point $Rot, $rotate, $Pb, $crate::arith::NaMul => op_mul, Forward);
        $crate::rotation::apply::apply_rules!(@vector $Rot, $rotate, $Pb, $crate::rotation::apply::NaTransformVector => transform_vector, Forward);
        $crate::rotation::apply::apply_rules!(@point $Rot, $rotate, $Pb, $crate::rotation::apply::NaTransformPoint => transform_point, Forward);
        $crate::rotation::apply::apply_rules!(@vector $Rot, $rotate, $Pb, $crate::rotation::apply::NaInverseTransformVector => inverse_transform_vector, Inverse);
        $crate::rotation::apply::apply_rules!(@point $Rot, $rotate, $Pb, $crate::rotation::apply::NaInverseTransformPoint => inverse_transform_point, Inverse);
    };
    (@vector $Rot:ident, $rotate:path, $Pb:ident, $Trait:path => $method:ident, $direction:ident) => {
        impl<T, S> $Trait for ::mochi_core::Call<(&$Rot<T>, &::nalgebra::Matrix<T, ::nalgebra::U3, ::nalgebra::U1, S>)>
        where
            T: $crate::Elem,
            S: ::nalgebra::Storage<T, ::nalgebra::U3, ::nalgebra::U1>,
        {
            type Output = ::nalgebra::Vector3<T>;
            type Pullback = $Pb<T, ::nalgebra::Vector3<T>>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (r, v) = self.0;
                $rotate(r, v.clone_owned(), $crate::rotation::apply::Direction::$direction)
            }
        }
    };
    (@point $Rot:ident, $rotate:path, $Pb:ident, $Trait:path => $method:ident, $direction:ident) => {
        impl<T: $crate::Elem> $Trait for ::mochi_core::Call<(&$Rot<T>, &::nalgebra::Point3<T>)> {
            type Output = ::nalgebra::Point3<T>;
            type Pullback = $Pb<T, ::nalgebra::Point3<T>>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (r, p) = self.0;
                $rotate(r, p.coords, $crate::rotation::apply::Direction::$direction)
            }
        }
    };
}
pub(crate) use apply_rules;

/// Which way a rotation acts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    /// `R v`, `q v`.
    Forward,
    /// `Rᵀ v`, `q* v`: the inverse of a rotation.
    Inverse,
}

/// `y = M v` (or `Mᵀ v`): holds `M` and `v`; the output and `v` are `V`.
pub struct MatrixRotatePullback<T: Elem, V> {
    pub(crate) m: Matrix3<T>,
    pub(crate) v: Vector3<T>,
    pub(crate) direction: Direction,
    pub(crate) _types: std::marker::PhantomData<fn() -> V>,
}

impl<T: Elem, V: Coords3<T>> Pullback for MatrixRotatePullback<T, V> {
    type Output = V;
    type Args = (Matrix3<T>, V);
    #[inline]
    fn pullback(self, dy: V, (dm, dv): (&mut Matrix3<T>, &mut V)) {
        let dy = dy.coords3();
        match self.direction {
            Direction::Forward => {
                *dm += dy * self.v.transpose();
                *dv.coords3_mut() += self.m.tr_mul(&dy);
            }
            Direction::Inverse => {
                *dm += self.v * dy.transpose();
                *dv.coords3_mut() += self.m * dy;
            }
        }
    }
}

/// `(ū, w̄, v̄)` of `y = q v` at `q = (w, u)`, given `ȳ`.
#[inline]
fn pull_quaternion_rotate<T: Elem>(
    q: &Quaternion<T>,
    v: &Vector3<T>,
    dy: &Vector3<T>,
) -> (Quaternion<T>, Vector3<T>) {
    let two = T::of_f64(2.0);
    let (w, u) = (q.w, q.imag());
    let t = u.cross(v) * two;
    let dt = dy * w + dy.cross(&u);
    let du = t.cross(dy) + v.cross(&dt) * two;
    let dw = dy.dot(&t);
    (Quaternion::from_parts(dw, du), dy + dt.cross(&u) * two)
}

/// `y = q v` (or `q* v`): holds `q` and `v`.
pub struct QuaternionRotatePullback<T: Elem, V> {
    pub(crate) q: Quaternion<T>,
    pub(crate) v: Vector3<T>,
    pub(crate) direction: Direction,
    pub(crate) _types: std::marker::PhantomData<fn() -> V>,
}

impl<T: Elem, V: Coords3<T>> Pullback for QuaternionRotatePullback<T, V> {
    type Output = V;
    type Args = (Quaternion<T>, V);
    #[inline]
    fn pullback(self, dy: V, (dq, dv): (&mut Quaternion<T>, &mut V)) {
        let dy = dy.coords3();
        match self.direction {
            Direction::Forward => {
                let (gq, gv) = pull_quaternion_rotate(&self.q, &self.v, &dy);
                dq.coords += gq.coords;
                *dv.coords3_mut() += gv;
            }
            Direction::Inverse => {
                let (gq, gv) = pull_quaternion_rotate(&self.q.conjugate(), &self.v, &dy);
                dq.coords += gq.conjugate().coords;
                *dv.coords3_mut() += gv;
            }
        }
    }
}

/// `C = A B` of two rotation matrices: holds both.
pub struct MatrixComposePullback<T: Elem> {
    pub(crate) a: Matrix3<T>,
    pub(crate) b: Matrix3<T>,
}

impl<T: Elem> Pullback for MatrixComposePullback<T> {
    type Output = Matrix3<T>;
    type Args = (Matrix3<T>, Matrix3<T>);
    #[inline]
    fn pullback(self, dc: Matrix3<T>, (da, db): (&mut Matrix3<T>, &mut Matrix3<T>)) {
        *da += dc * self.b.transpose();
        *db += self.a.tr_mul(&dc);
    }
}

/// `p = a b` of two quaternions (the Hamilton product): holds both.
pub struct QuaternionComposePullback<T: Elem> {
    pub(crate) a: Quaternion<T>,
    pub(crate) b: Quaternion<T>,
}

impl<T: Elem> Pullback for QuaternionComposePullback<T> {
    type Output = Quaternion<T>;
    type Args = (Quaternion<T>, Quaternion<T>);
    #[inline]
    fn pullback(self, dp: Quaternion<T>, (da, db): (&mut Quaternion<T>, &mut Quaternion<T>)) {
        da.coords += (dp * self.b.conjugate()).coords;
        db.coords += (self.a.conjugate() * dp).coords;
    }
}

/// A linear map between cotangents that needs no primal: `x̄ += L*(ȳ)`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Linear {
    /// `Y = X` (`r.matrix()`, `r.into_inner()`).
    Identity,
    /// `Y = Xᵀ` (`r.transpose()`, `r.inverse()`).
    Transpose,
}

/// Pullback of a linear map of a rotation matrix.
pub struct MatrixLinearPullback<T: Elem> {
    pub(crate) map: Linear,
    pub(crate) _types: std::marker::PhantomData<fn() -> T>,
}

impl<T: Elem> Pullback for MatrixLinearPullback<T> {
    type Output = Matrix3<T>;
    type Args = (Matrix3<T>,);
    #[inline]
    fn pullback(self, dy: Matrix3<T>, (dx,): (&mut Matrix3<T>,)) {
        match self.map {
            Linear::Identity => *dx += dy,
            Linear::Transpose => *dx += dy.transpose(),
        }
    }
}

/// Pullback of `q.inverse()` (`q.conjugate()`) of a unit quaternion: `q̄ += ȳ*`.
pub struct ConjugatePullback<T: Elem>(pub(crate) std::marker::PhantomData<fn() -> T>);

impl<T: Elem> Pullback for ConjugatePullback<T> {
    type Output = Quaternion<T>;
    type Args = (Quaternion<T>,);
    #[inline]
    fn pullback(self, dy: Quaternion<T>, (dq,): (&mut Quaternion<T>,)) {
        dq.coords += dy.conjugate().coords;
    }
}
