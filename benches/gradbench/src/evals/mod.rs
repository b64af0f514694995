//! The GradBench evals mochi implements, one module each.

pub mod ba;
pub mod det;
pub mod gd;
pub mod gmm;
pub mod hello;
pub mod ht;
pub mod kmeans;
pub mod llsq;
pub mod lse;
pub mod lstm;
pub mod ode;
pub mod particle;
pub mod saddle;

#[cfg(test)]
mod test_support;
