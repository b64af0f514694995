//! Points: `Point3::new(x, y, z)`, `Point3::from(v)`, `p + v`, `p - v` and `p - q`, and
//! [`Coords3`], what the rules that act on vectors and points alike read and write.
//!
//! A point's cotangent is a point of the same type (its coordinates' cotangent, see
//! `mochi_core`'s nalgebra tangents), so `p.x` and `p.coords` read the same field of
//! both, and every rule here passes coordinates' cotangents through unchanged (or
//! negated, for what is subtracted).

use crate::arith::{NaAdd, NaSub};
use crate::build::vector3::Vector3Pullback;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::{Matrix, Point3, Storage, Vector3, U1, U3};

pub use crate::coords::Coords3;

rule_trait! {
    /// `Point3::new(x, y, z)`: `Call((&x, &y, &z)).point3_new()`.
    NaPoint3New::point3_new
}
rule_trait! {
    /// `Point3::from(v)`: `Call((&v,)).point3_from()`.
    NaPoint3From::point3_from
}

impl<T: Elem> NaPoint3New for Call<(&T, &T, &T)> {
    type Output = Point3<T>;
    type Pullback = Vector3Pullback<T, Point3<T>>;
    #[inline]
    fn point3_new(self) -> (Self::Output, Self::Pullback) {
        let (x, y, z) = self.0;
        (
            Point3::new(*x, *y, *z),
            Vector3Pullback(std::marker::PhantomData),
        )
    }
}

/// Pullback of an affine combination `y = a + σ b` of coordinates (`σ = ±1`; `b` absent
/// for `Point3::from(v)`): `ā += ȳ`, `b̄ += σ ȳ`, coordinate by coordinate.
pub struct AffinePullback<T, Y, A, B> {
    sign: T,
    _types: crate::dense::Marker<Y, A, B>,
}

impl<T: Elem, Y, A, B> AffinePullback<T, Y, A, B> {
    fn new(sign: T) -> Self {
        AffinePullback {
            sign,
            _types: std::marker::PhantomData,
        }
    }
}

impl<T: Elem, Y: Coords3<T>, A: Coords3<T>, B: Coords3<T>> Pullback for AffinePullback<T, Y, A, B> {
    type Output = Y;
    type Args = (A, B);
    #[inline]
    fn pullback(self, dy: Y, (da, db): (&mut A, &mut B)) {
        let dy = dy.coords3();
        *da.coords3_mut() += dy;
        *db.coords3_mut() += dy * self.sign;
    }
}

/// Pullback of `Point3::from(v)`: `v̄ += p̄`.
pub struct FromCoordsPullback<T>(std::marker::PhantomData<fn() -> T>);

impl<T: Elem> Pullback for FromCoordsPullback<T> {
    type Output = Point3<T>;
    type Args = (Vector3<T>,);
    #[inline]
    fn pullback(self, dp: Point3<T>, (dv,): (&mut Vector3<T>,)) {
        *dv += dp.coords;
    }
}

impl<T: Elem, S: Storage<T, U3, U1>> NaPoint3From for Call<(&Matrix<T, U3, U1, S>,)> {
    type Output = Point3<T>;
    type Pullback = FromCoordsPullback<T>;
    #[inline]
    fn point3_from(self) -> (Self::Output, Self::Pullback) {
        (
            Point3::from(self.0 .0.clone_owned()),
            FromCoordsPullback(std::marker::PhantomData),
        )
    }
}

impl<T: Elem, S: Storage<T, U3, U1>> NaAdd for Call<(&Point3<T>, &Matrix<T, U3, U1, S>)> {
    type Output = Point3<T>;
    type Pullback = AffinePullback<T, Point3<T>, Point3<T>, Vector3<T>>;
    #[inline]
    fn op_add(self) -> (Self::Output, Self::Pullback) {
        let (p, v) = self.0;
        (p + v, AffinePullback::new(T::ONE))
    }
}

impl<T: Elem, S: Storage<T, U3, U1>> NaSub for Call<(&Point3<T>, &Matrix<T, U3, U1, S>)> {
    type Output = Point3<T>;
    type Pullback = AffinePullback<T, Point3<T>, Point3<T>, Vector3<T>>;
    #[inline]
    fn op_sub(self) -> (Self::Output, Self::Pullback) {
        let (p, v) = self.0;
        (p - v, AffinePullback::new(-T::ONE))
    }
}

impl<T: Elem> NaSub for Call<(&Point3<T>, &Point3<T>)> {
    type Output = Vector3<T>;
    type Pullback = AffinePullback<T, Vector3<T>, Point3<T>, Point3<T>>;
    #[inline]
    fn op_sub(self) -> (Self::Output, Self::Pullback) {
        let (p, q) = self.0;
        (p - q, AffinePullback::new(-T::ONE))
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::check_rule;
    use crate::Elem;
    use mochi_core::Call;
    use nalgebra::{Point3, Vector3};

    fn points<T: Elem>() {
        let v = Vector3::new(0.5, -1.5, 2.0).map(T::of_f64);
        let (p, q) = (Point3::new(0.3, 0.1, -0.7).map(T::of_f64), Point3::from(v));
        let (x, y, z) = (T::of_f64(0.2), T::of_f64(-0.4), T::of_f64(1.3));
        check_rule!(T;
            (x, y, z),
            |a| Point3::new(a.0, a.1, a.2),
            Call((&a.0, &a.1, &a.2)).point3_new()
        );
        check_rule!(T; (v,), |a| Point3::from(a.0), Call((&a.0,)).point3_from());
        check_rule!(T; (p, v), |a| a.0 + a.1, Call((&a.0, &a.1)).op_add());
        check_rule!(T; (p, v), |a| a.0 - a.1, Call((&a.0, &a.1)).op_sub());
        check_rule!(T; (p, q), |a| a.0 - a.1, Call((&a.0, &a.1)).op_sub());
    }

    #[test]
    fn point_rules_f64_and_f32() {
        points::<f64>();
        points::<f32>();
    }
}
