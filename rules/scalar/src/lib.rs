//! mochi's reverse rules for every differentiable `f64` and `f32` operation: the
//! arithmetic operators, casts, and the float methods of `std` (`sin`, `powf`,
//! `atan2`, `clamp`, …), plus inactive rules for integer operands.
//!
//! Differentiable code calls a rule as `Call((&a, &b)).method()` with the traits of
//! [`rules`] in scope; each returns `(value, pullback)` and the pullback adds into the
//! arguments' cotangents (see `mochi_core::Pullback`). Each rule module holds its
//! traits, its pullback structs and its tests. Subgradients at kinks are documented on
//! each rule and tabled in the crate's README. The rules are written with the rule kit,
//! `mochi_core::kit` (`unary_rules!`, `binary_rules!`, `rule_trait!`).

pub mod cast;
pub mod exp_log;
pub mod hyperbolic;
pub mod integer;
pub mod operators;
pub mod piecewise;
pub mod power;
pub mod rows;
pub mod rules;
pub mod seq;
pub mod trig;

#[cfg(test)]
mod test_support;
