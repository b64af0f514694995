//! The rule-testing harness: checks a rule against its primal with finite differences,
//! the adjoint identity, and the contract of [`Pullback`](crate::Pullback).

mod alloc;
mod arguments;
mod builder;
mod checks;
mod finite_differences;
mod report;

pub use alloc::{allocations_during, counting_allocator_installed, CountingAllocator};
pub use arguments::Arguments;
pub use builder::{test_rule, MaybeJvp, NoJvp, RuleTest, WithJvp};
pub use report::{Check, CheckFailure, RuleTestFailure, RuleTestReport};

#[cfg(test)]
mod wrong_rules;
