//! Finite differences, the witness every derivative in mochi is checked against:
//! [`directional`] along a random direction for `test_rule` (any argument and output
//! types), [`scalar`] for the forward-mode tests of `f64` functions, each with the step
//! choice and error estimate its checks need.

pub(crate) mod directional;
#[cfg(test)]
pub(crate) mod scalar;
