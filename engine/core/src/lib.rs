//! The contracts of mochi: what a tangent is ([`Tangent`], [`TangentVector`]), what a
//! rule is ([`Pullback`], [`Call`]), forward-mode dual numbers ([`Dual`], [`Real`]) and
//! the rule-testing harness ([`testing`]), and the kit rule crates write their rules
//! with ([`kit`]).
//!
//! Rule crates depend on this crate only. Users depend on the `mochi` facade.

mod rule;
mod scalar;
mod tangent;
mod twin_struct;

#[doc(hidden)]
pub mod private;

pub use rule::{Accumulators, BoxedPullback, Call, FnPullback, Pullback, SliceToArrayPullback};
pub use scalar::Scalar;
#[cfg(feature = "ndarray")]
pub use tangent::broadcast;
pub use tangent::{NoTangent, Tangent, TangentVector};

pub mod forward;
pub mod kit;
pub mod testing;

pub use forward::{derivative, gradient_forward, jvp, jvp_scalar, Dual, Real};
