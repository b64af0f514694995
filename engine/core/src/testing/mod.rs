//! The rule-testing harness: checks a rule against its primal with finite differences,
//! the adjoint identity, and the contract of [`Pullback`](crate::Pullback).

mod alloc;
mod arguments;
mod builder;
mod checks;
mod dualize;
pub(crate) mod finite_difference;
mod jvp;
mod perturb;
mod report;

pub use alloc::{allocations_during, counting_allocator_installed, CountingAllocator};
pub use arguments::Arguments;
pub use builder::{test_rule, RuleTest};
pub use dualize::Dualize;
pub use jvp::{MaybeJvp, NoJvp, WithJvp};
pub use perturb::{Flatten, Perturb};
pub use report::{Check, CheckFailure, RuleTestFailure, RuleTestReport};

// Some of the wrong rules are array rules.
#[cfg(all(test, feature = "ndarray"))]
mod wrong_rules;
