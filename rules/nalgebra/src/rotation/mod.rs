//! Rotations: built from a rotation vector ([`exp`]), `Rotation3` values
//! ([`rotation3`]) and `UnitQuaternion` values ([`quaternion`]), with the pullbacks of
//! rotating and composing they share ([`apply`]). The derivative of the exponential
//! map, in ambient coordinates, is in `rodrigues`, below both `apply` and `exp`.

pub mod apply;
pub mod euler;
pub mod exp;
pub mod quaternion;
mod rodrigues;
pub mod rotation3;

pub use exp::rotation_matrix;
