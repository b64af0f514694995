//! The command line: the parser and the dispatch to the commands' modules in
//! [`crate::commands`]. The flags of each command are in [`crate::options`], below
//! both, and re-exported here.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands::{
    self, doc_review, icount_check, perf_check, pr_summary, serve, wallclock_check,
};
use crate::config::{Config, DEFAULT_PATH};
use crate::input::InputError;

pub use crate::options::{
    DocReviewArgs, Env, GitHubArgs, IcountCheckArgs, PerfCheckArgs, PrSummaryArgs, Report,
    WallclockCheckArgs,
};

/// mochi's reviewer bot: pull-request summary, performance gate, design-doc review.
#[derive(Debug, Parser)]
#[command(name = "mochi-bot", version, about, long_about = None)]
pub struct Cli {
    /// Configuration file [default: REPO_ROOT/.github/mochi-bot.toml; defaults apply when absent].
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Repository root: lcov paths are made relative to it, docs and git history are read from it [default: the current git top level].
    #[arg(long, global = true, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command_,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command_ {
    /// Build the pull-request summary (coverage and ratio table) and post it as one sticky comment.
    PrSummary(Box<PrSummaryArgs>),
    /// Fail (exit 1) when a mochi ratio leaves its allowed range.
    PerfCheck(PerfCheckArgs),
    /// Fail (exit 1) when a case's gradient/primal instruction ratio grew past its threshold from base to head.
    IcountCheck(IcountCheckArgs),
    /// Run head and base benchmarks interleaved and compare their wall-clock ratios (informational; exit 0).
    WallclockCheck(WallclockCheckArgs),
    /// Pick the design docs most in need of review and keep one tracking issue.
    DocReview(DocReviewArgs),
    /// Run doc-review every day on the configured schedule until SIGTERM or Ctrl-C.
    Serve(GitHubArgs),
}

/// Why a command failed; the binary prints it as one line and exits with 2.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration file is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] InputError),
    /// `pr-summary` failed.
    #[error(transparent)]
    PrSummary(#[from] pr_summary::PrSummaryError),
    /// `perf-check` could not give a verdict.
    #[error(transparent)]
    PerfCheck(#[from] perf_check::PerfCheckError),
    /// `icount-check` could not give a verdict.
    #[error(transparent)]
    IcountCheck(#[from] icount_check::IcountCheckError),
    /// `wallclock-check` could not compare.
    #[error(transparent)]
    WallclockCheck(#[from] wallclock_check::WallclockCheckError),
    /// `doc-review` failed.
    #[error(transparent)]
    DocReview(#[from] doc_review::DocReviewError),
    /// `serve` stopped with an error.
    #[error(transparent)]
    Serve(#[from] serve::ServeError),
}

/// Runs a parsed command line.
pub async fn execute(cli: Cli, env: &Env) -> Result<Report, Error> {
    let repo_root = match &cli.repo_root {
        Some(root) => root.clone(),
        None => commands::git_toplevel().unwrap_or_else(|| PathBuf::from(".")),
    };
    let config = match &cli.config {
        Some(path) => Config::load(path, true),
        None => Config::load(&repo_root.join(DEFAULT_PATH), false),
    }?;
    Ok(match cli.command {
        Command_::PrSummary(args) => pr_summary::run(*args, &config, &repo_root, env).await?,
        Command_::PerfCheck(args) => perf_check::run(args, &config, &repo_root)?,
        Command_::IcountCheck(args) => icount_check::run(args, &config, &repo_root)?,
        Command_::WallclockCheck(args) => wallclock_check::run(args, &config, &repo_root)?,
        Command_::DocReview(args) => doc_review::run(args, &config, &repo_root, env).await?,
        Command_::Serve(args) => serve::run(args, &config, &repo_root, env).await?,
    })
}
