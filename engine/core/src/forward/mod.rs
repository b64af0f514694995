//! Forward mode: dual numbers ([`Dual`]), the [`Real`] trait that lets one generic
//! function run on `f64`, `f32` or duals, and the entry points ([`derivative`], [`jvp`],
//! [`jvp_scalar`], [`gradient_forward`]). See `design-docs/forward-mode.md`.

mod api;
mod dual;
mod elementary;
mod num_float;
pub(crate) mod over_reverse;
mod real;

pub use api::{derivative, gradient_forward, jvp, jvp_scalar};
pub use dual::Dual;
pub use real::Real;
