//! Reverse rules for statistics: log-densities (Normal, LogNormal, truncated
//! Normal, multivariate Normal), bijections from the real line to constrained
//! parameters with their log-Jacobians, and the squared-exponential kernel matrix.
//!
//! Each function is a primal free function with a rule module of the same name
//! beside it (`normal_logpdf::rrule(x, mu, sigma)`), which `#[differentiable]`
//! calls for the free function. The scalar functions are generic over `f64` and
//! `f32`; the normal distribution function comes from `libm`'s `erfc` (see [`cdf`]).

pub mod cdf;

mod bijection;
mod kernel;
mod mvnormal;
mod normal;
mod truncated;

// Each function comes with its rule module of the same name (`to_interval::rrule`).
pub use bijection::{to_interval, to_positive};
pub use kernel::se_kernel;
pub use mvnormal::mvnormal_logpdf;
pub use normal::{lognormal_logpdf, lognormal_logpdf_sum, normal_logpdf, normal_logpdf_sum};
pub use truncated::truncated_normal_logpdf;

#[cfg(test)]
mod test_support;
