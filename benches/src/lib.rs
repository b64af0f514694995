//! mochi's inter-framework benchmark suite: the 13 cases of `shared/bench-cases.md`,
//! each timed as a primal call and as one full gradient in mochi and in peer AD
//! crates, reported as gradient/primal ratios (see `design-docs/benchmarking.md`).
//!
//! `cargo run --release -p mochi-benches` is the main job; `src/main.rs` wires
//! [`args`], [`run`], [`report`], [`plot`] and [`jax`] together.

pub mod alloc;
pub mod args;
pub mod cases;
pub mod cell;
pub mod columns;
pub mod higher;
pub mod jax;
pub mod plot;
pub mod programs;
pub mod progress;
pub mod report;
pub mod run;
pub mod timing;
