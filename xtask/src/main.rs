//! Repository tasks for mochi contributors, run as `cargo xtask <task>` (an alias of
//! `cargo run -p xtask --`, see `.cargo/config.toml`).
//!
//! - `new-rule-crate <name>`: creates `rules/<name>/` (package `mochi-rules-<name>`)
//!   with a worked example rule and its `test_rule` tests, a README, a design-doc stub
//!   `design-docs/rules-<name>.md`, and adds the crate to the workspace members.
//!
//! - `gradcheck [--seed S] [--count N] [--batch B]`: the deep run of the generated-program
//!   differential test (`engine/gradcheck`), `N` programs (default 5000) from seed `S`.
//!
//! - `compile-time [--count N] [--seed S] [--runs R]`: the release build time of a crate
//!   of `N` generated differentiable functions (default 100) against the same crate
//!   without the attribute.
//!
//! Arguments are parsed by clap. Exit codes: 0 success, 2 any error (nothing is written
//! when the name is refused).

mod compile_time;
mod gradcheck;
mod new_rule_crate;
mod templates;
mod workspace;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Repository tasks for mochi contributors.
#[derive(Debug, Parser)]
#[command(name = "xtask", bin_name = "cargo xtask", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Create rules/<NAME>/ (package mochi-rules-<NAME>): a worked example rule with its
    /// test_rule tests, a README, the design-doc stub design-docs/rules-<NAME>.md, and a
    /// workspace member entry.
    NewRuleCrate {
        /// Lowercase letters, digits, `-` and `_`, starting with a letter, e.g. `special`
        /// or `special-fns`.
        name: String,
        /// The workspace root [default: the nearest ancestor of the current directory
        /// whose Cargo.toml has a [workspace] table].
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Generate random #[differentiable] programs in batches and check each gradient
    /// against forward mode and finite differences.
    Gradcheck {
        /// The first batch's seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// How many programs in all.
        #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
        count: u64,
        /// Programs per build.
        #[arg(long, default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..))]
        batch: u64,
    },
    /// Time the release build of a crate of generated #[differentiable] functions
    /// against the same crate without the attribute.
    CompileTime {
        /// Functions in each crate.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=5000))]
        count: u64,
        /// The generator's seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Timed builds of each crate.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=50))]
        runs: u64,
    },
}

fn main() -> ExitCode {
    // Usage errors exit 2 with clap's message; `--help` exits 0.
    let cli = Cli::parse();
    match run(cli.task) {
        Ok(message) => {
            print!("{message}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Runs the task; the text to print on success.
fn run(task: Task) -> Result<String, String> {
    match task {
        Task::NewRuleCrate { name, workspace } => {
            let root = match workspace {
                Some(dir) => dir,
                None => workspace::find_root()?,
            };
            // Today in UTC as YYYY-MM-DD, for the design-doc stub's `last-reviewed`.
            let today = chrono::Utc::now().date_naive().to_string();
            let created = new_rule_crate::create(&root, &name, today)?;
            Ok(created.summary())
        }
        Task::Gradcheck { seed, count, batch } => gradcheck::run(
            &workspace::find_root()?,
            &gradcheck::Options { seed, count, batch },
        ),
        Task::CompileTime { count, seed, runs } => compile_time::run(
            &workspace::find_root()?,
            &compile_time::Options {
                count: count as usize,
                seed,
                runs: runs as usize,
            },
        ),
    }
}
