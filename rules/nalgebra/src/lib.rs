//! Reverse rules for [nalgebra]: elementwise arithmetic, matrix products, norms and
//! sums, closures in `map`/`zip_map`, cross products, Cholesky and LU factorisations
//! with their solves, determinants and inverses, points, and rotations (`Rotation3`,
//! `UnitQuaternion`) from a rotation vector — for `f64` and `f32`, dynamic (`DVector`,
//! `DMatrix`) and static (`SVector`, `SMatrix`, `Vector3`, …) sizes, and any storage
//! (owned, views).
//!
//! Every rule is a method on [`mochi_core::Call`] from one of the traits re-exported by
//! [`rules`], which `#[differentiable]` glob-imports into generated code through the
//! `mochi` facade: `a * b` becomes `Call((&a, &b)).op_mul()`, `v.norm()` becomes
//! `Call((&v,)).norm()`. The cotangent of a `Matrix<T, R, C, S>` is an
//! `OMatrix<T, R, C>` (for a dynamic dimension possibly the empty structural zero);
//! the cotangent of a `Cholesky` or `LU` factorisation is the cotangent of the matrix
//! it factors; a `Rotation3`'s is a `Matrix3`, a `UnitQuaternion`'s a `Quaternion`, a
//! `Point3`'s a `Point3`. Those tangent impls, and the indexing support for `v[i]` and
//! `m[(i, j)]`, live in `mochi-core` behind its `nalgebra` feature, because both the
//! traits and nalgebra's types are foreign to this crate.
//!
//! An associated function of differentiable arguments is the rule method named after
//! the type (`Vector3::new(x, y, z)` → `Call((&x, &y, &z)).vector3_new()`,
//! `Rotation3::new(ω)` → `Call((&ω,)).rotation3_new()`); the free functions of
//! [`build`] (`vector3(x, y, z)`, `dvector(&xs)`, …) and [`rotation`]
//! (`rotation_matrix(&ω)`) build the same values, each with its rule module. See
//! `design-docs/rules-nalgebra.md`.

mod coords;
mod dense;
mod elem;
mod impls;

pub mod arith;
pub mod build;
pub mod closure;
pub mod cross;
pub mod diagonal;
pub mod factor;
pub mod inverse;
pub mod point;
pub mod product;
pub mod reduce;
pub mod rotation;
pub mod rules;
pub mod shape;

pub use build::{dmatrix, dvector, matrix2, matrix3, vector2, vector3, vector4};
pub use elem::Elem;
pub use rotation::rotation_matrix;

#[cfg(test)]
mod test_support;
