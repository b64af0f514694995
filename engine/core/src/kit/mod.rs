//! The rule-writing kit: what a rule crate uses to write its rules and test them.
//!
//! A rule is a method on [`Call<(&A, &B, …)>`](Call) from a trait the rule crate
//! declares, returning `(value, pullback)`; the pullback is a named type implementing
//! [`Pullback`] that **adds** into the arguments' cotangents. The kit has:
//!
//! - [`rule_trait!`]: declares a rule trait, `rule_trait!(/// doc  SinRule::sin);`
//!   (an associated `Output`, a named associated `Pullback`, one method);
//! - [`unary_rules!`] / [`binary_rules!`]: a whole float rule of one or two arguments
//!   in one line — trait, pullback struct, impls for `f64` and `f32` — from its forward
//!   expression and its partial derivatives;
//! - [`inactive_rules!`] and [`InactivePullback`]: rules of arguments without a tangent
//!   (integers), whose pullback does nothing;
//! - [`inactive_methods!`]: methods whose result carries no derivative (a shape query
//!   such as `x.nrows()`), one line each for the receiver types a crate declares;
//! - [`IdentityPullback`]: the pullback of a method that returns its receiver's values
//!   under another type (`x.view()`);
//! - the pullback types: [`Pullback`], [`FnPullback`] (and the `pullbackN`
//!   constructors such as [`pullback1`]), [`BoxedPullback`];
//! - [`tape`]: the pooled stack a rule uses to keep per-element pullbacks of a loop
//!   (closure adapters such as `iter().map(f).sum()`) without allocating in steady state;
//! - for tests, [`check_unary!`] / [`check_binary!`]: a rule against its primal with
//!   `test_rule` at several points, in `f64` against a forward-mode JVP and in `f32`
//!   with [`F32_RTOL`]; array rules' tests take their tolerances from
//!   [`ArrayTolerance`].
//!
//! ```
//! use mochi_core::kit::unary_rules;
//!
//! unary_rules! {
//!     /// `x.cube()`: d/dx = 3x².
//!     CubeRule::cube, CubePullback: |x| x * x * x, |x, _y| T::from_f64(3.0) * x * x;
//! }
//!
//! use mochi_core::{Call, Pullback};
//! let (y, pb) = Call((&2.0_f64,)).cube();
//! let mut dx = 0.0;
//! pb.pullback(1.0, (&mut dx,));
//! assert_eq!((y, dx), (8.0, 12.0));
//! ```
//!
//! See `design-docs/rule-system.md` and `CONTRIBUTING.md`.

mod checks;
pub mod hoist;
mod inactive;
pub mod keep;
mod macros;
pub mod recycle;
pub mod tape;

pub use crate::rule::{
    pullback1, pullback10, pullback11, pullback12, pullback2, pullback3, pullback4, pullback5,
    pullback6, pullback7, pullback8, pullback9,
};
pub use crate::{Accumulators, BoxedPullback, Call, FnPullback, NoTangent, Pullback};
pub use inactive::{IdentityPullback, InactivePullback};
pub use keep::{Keep, KeepCall, KeepCallWhole, KeepWhole, Kept};

/// The contract of types whose elements differentiable code reads or writes by index
/// (`a[(i, j)]`): the primal's shape kept for the reverse sweep, and the cotangent's
/// per-element accumulation. Implemented by the core for slices, `Vec`, arrays and the
/// array crates' types; a crate implements them for a type of its own.
pub use crate::private::{IndexShape, IndexTangent};

#[doc(inline)]
pub use crate::{
    __kit_binary_rules as binary_rules, __kit_check_binary as check_binary,
    __kit_check_unary as check_unary, __kit_inactive_methods as inactive_methods,
    __kit_inactive_rules as inactive_rules, __kit_rule_trait as rule_trait,
    __kit_unary_rules as unary_rules,
};

/// The tolerances array-rule tests give [`RuleTest::tolerance`](crate::testing::RuleTest::tolerance),
/// per element type: a reduction over many `f32` elements loses more than one scalar
/// operation, so these are looser than [`F32_RTOL`]. One table for every array rule
/// crate's tests (`T::RTOL`, `T::ATOL`).
pub trait ArrayTolerance {
    /// Relative tolerance.
    const RTOL: f64;
    /// Absolute tolerance.
    const ATOL: f64;
}
impl ArrayTolerance for f64 {
    const RTOL: f64 = 1e-6;
    const ATOL: f64 = 1e-9;
}
impl ArrayTolerance for f32 {
    const RTOL: f64 = 2e-2;
    const ATOL: f64 = 2e-3;
}

/// The relative tolerance of `f32` rules in [`check_unary!`] and [`check_binary!`]:
/// finite differences and rounding in `f32` are about `ε₃₂^{2/3} ≈ 2.4e-5` accurate at
/// best.
pub const F32_RTOL: f64 = 1e-4;
