//! [`Coords3`]: what the rules that act on vectors and points alike (the builders'
//! `Vector3Pullback`, points, rotations) read and write. Re-exported from `point`.

use crate::Elem;
use mochi_core::TangentVector;
use nalgebra::{Point3, Vector3};

/// A value with three coordinates, `Vector3` or `Point3`; it is its own cotangent type.
pub trait Coords3<T: Elem>: TangentVector {
    /// The value with coordinates `v`.
    fn from_coords(v: Vector3<T>) -> Self;
    /// The coordinates.
    fn coords3(&self) -> Vector3<T>;
    /// The coordinates, to add into.
    fn coords3_mut(&mut self) -> &mut Vector3<T>;
}

impl<T: Elem> Coords3<T> for Vector3<T> {
    #[inline(always)]
    fn from_coords(v: Vector3<T>) -> Self {
        v
    }
    #[inline(always)]
    fn coords3(&self) -> Vector3<T> {
        *self
    }
    #[inline(always)]
    fn coords3_mut(&mut self) -> &mut Vector3<T> {
        self
    }
}

impl<T: Elem> Coords3<T> for Point3<T> {
    #[inline(always)]
    fn from_coords(v: Vector3<T>) -> Self {
        Point3::from(v)
    }
    #[inline(always)]
    fn coords3(&self) -> Vector3<T> {
        self.coords
    }
    #[inline(always)]
    fn coords3_mut(&mut self) -> &mut Vector3<T> {
        &mut self.coords
    }
}
