//! The kernels of [`LinalgElem`](crate::LinalgElem): by faer for `f64` and `f32`, by
//! plain loops for dual numbers.

mod dual;
mod float;
