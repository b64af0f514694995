//! mochi as a GradBench tool.
//!
//! GradBench (github.com/gradbench/gradbench) drives a tool over a JSON-lines protocol:
//! the eval writes one message per line (`start`, `define`, `evaluate`, `analysis`) and
//! the tool answers each with one response line carrying the same `id`. This crate
//! answers those messages ([`protocol`]), times each function the way the protocol asks
//! ([`runs`]), and implements the evals ([`evals`]) with every derivative taken by
//! mochi: the companions `#[differentiable]` derives (reverse mode, and forward mode and
//! forward over reverse for functions generic over their scalar), and for `ht` mochi's
//! `Dual` numbers seeded directly.

pub mod evals;
pub mod evaluation;
pub mod modules;
pub mod protocol;
pub mod runs;
