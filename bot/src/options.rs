//! What the commands take and give, shared by the command line (`cli`) and the
//! commands (`commands`): the flags of each command and of the GitHub connection
//! ([`GitHubArgs`]), the process environment ([`Env`]) and a command's [`Report`]. It
//! depends on neither, so the commands need nothing from the command line that
//! dispatches to them.

use std::path::PathBuf;

use chrono::NaiveDate;
use clap::Args;

use crate::github::RetryPolicy;

/// Where and as whom to talk to GitHub.
#[derive(Debug, Clone, Args)]
pub struct GitHubArgs {
    /// Repository OWNER/NAME [default: `repository` in the config, then GITHUB_REPOSITORY].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// GitHub REST API base URL [default: `api_url` in the config, `https://api.github.com`].
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// Login the token acts as; only its comments and issues are touched [default: `bot_login` in the config].
    #[arg(long, value_name = "LOGIN")]
    pub author: Option<String>,
}

/// `pr-summary` arguments.
#[derive(Debug, Args)]
pub struct PrSummaryArgs {
    /// Head coverage, as `cargo llvm-cov --lcov` writes it.
    #[arg(long, value_name = "FILE")]
    pub lcov: PathBuf,
    /// Base coverage, for the project-coverage delta.
    #[arg(long, value_name = "FILE")]
    pub base_lcov: Option<PathBuf>,
    /// Unified diff of the pull request (`git diff base...head`) [default when posting: the PR's files from the API].
    #[arg(long, value_name = "FILE")]
    pub diff: Option<PathBuf>,
    /// Benchmark ratio report (schema version 1 JSON).
    #[arg(long, value_name = "FILE")]
    pub bench: Option<PathBuf>,
    /// Instruction report of the head build (`mochi-icount --json`); shown against --icount-base.
    #[arg(long, value_name = "FILE", requires = "icount_base")]
    pub icount: Option<PathBuf>,
    /// Instruction report of the base build.
    #[arg(long, value_name = "FILE", requires = "icount")]
    pub icount_base: Option<PathBuf>,
    /// Folder of `wallclock-check` reports: head against base, shown as information.
    #[arg(long, value_name = "DIR")]
    pub wallclock: Option<PathBuf>,
    /// Ranges file for the instruction thresholds (`max_instruction_growth`) [default: 5% for every case].
    #[arg(long, value_name = "FILE")]
    pub ranges: Option<PathBuf>,
    /// Head commit [default: the PR's head when posting, `git rev-parse HEAD` with --dry-run].
    #[arg(long, value_name = "SHA", value_parser = crate::summary::parse_commit_sha)]
    pub head_sha: Option<String>,
    /// Base commit, shown in the summary.
    #[arg(long, value_name = "SHA", value_parser = crate::summary::parse_commit_sha)]
    pub base_sha: Option<String>,
    /// Print the body to stdout and touch nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Pull request number [default when posting: the open pull request whose head is --head-sha].
    ///
    /// Finding it by head suits a `workflow_run` job: for a fork's pull
    /// request GitHub gives that job no number, and a number passed along in
    /// an artifact could be forged; the head SHA comes from the event itself.
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// GitHub connection.
    #[command(flatten)]
    pub github: GitHubArgs,
}

/// `perf-check` arguments.
#[derive(Debug, Args)]
pub struct PerfCheckArgs {
    /// Benchmark ratio report (schema version 1 JSON).
    #[arg(long, value_name = "FILE")]
    pub bench: PathBuf,
    /// Allowed ranges, `[cases.<label>] lower = x upper = y` [default: `perf_check.ranges` in the config].
    #[arg(long, value_name = "FILE")]
    pub ranges: Option<PathBuf>,
    /// Report column that is gated [default: `perf_check.column`, "mochi"].
    #[arg(long, value_name = "NAME")]
    pub column: Option<String>,
    /// Shell command that re-measures the failing cases (named in MOCHI_RETRY_CASES=a,b) and rewrites --bench.
    #[arg(long, value_name = "COMMAND")]
    pub retry_cmd: Option<String>,
    /// Reruns with --retry-cmd before a regression is declared, 0 to 10 [default: `perf_check.retries`, 2].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=10))]
    pub retries: Option<u32>,
}

/// `icount-check` arguments.
#[derive(Debug, Args)]
pub struct IcountCheckArgs {
    /// Instruction report of the head build (`mochi-icount --json`).
    #[arg(long, value_name = "FILE")]
    pub head: PathBuf,
    /// Instruction report of the base build, measured in the same job.
    #[arg(long, value_name = "FILE")]
    pub base: PathBuf,
    /// Ranges file whose cases must be measured and may set `max_instruction_growth` [default: `perf_check.ranges`].
    #[arg(long, value_name = "FILE")]
    pub ranges: Option<PathBuf>,
    /// Growth of a case's ratio allowed when the ranges file sets none (0.05 = 5%) [default: 0.05].
    #[arg(long, value_name = "FRACTION")]
    pub threshold: Option<f64>,
}

/// `wallclock-check` arguments.
#[derive(Debug, Args)]
pub struct WallclockCheckArgs {
    /// Shell command that measures the head and writes a benchmark report to $MOCHI_BENCH_OUT (honouring MOCHI_RETRY_CASES).
    #[arg(long, value_name = "COMMAND")]
    pub head_cmd: String,
    /// The same for the base.
    #[arg(long, value_name = "COMMAND")]
    pub base_cmd: String,
    /// Runs of each side, and again for a rerun of the cases found slower [default: 5].
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub runs: u32,
    /// Report column compared [default: `perf_check.column`, "mochi"].
    #[arg(long, value_name = "NAME")]
    pub column: Option<String>,
    /// Folder for the reports (head-NN.json, base-NN.json, rerun-…), read by `pr-summary --wallclock`.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `doc-review` arguments.
#[derive(Debug, Args)]
pub struct DocReviewArgs {
    /// Print the plan and touch nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The day to plan for [default: today in `serve.time_zone`].
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub today: Option<NaiveDate>,
    /// Minutes of review today [default: `doc_review.budget_minutes`, 60].
    #[arg(long, value_name = "MINUTES")]
    pub budget: Option<u32>,
    /// Do nothing unless `serve.schedule` has an occurrence earlier today in
    /// `serve.time_zone`; for schedulers whose cron is in UTC (GitHub Actions),
    /// which then trigger once per UTC offset the zone can have.
    #[arg(long)]
    pub if_due: bool,
    /// GitHub connection.
    #[command(flatten)]
    pub github: GitHubArgs,
}

/// What the process environment provides.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `GITHUB_TOKEN`.
    pub token: Option<String>,
    /// `GITHUB_STEP_SUMMARY`: the job summary file in GitHub Actions.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_REPOSITORY`.
    pub github_repository: Option<String>,
    /// Retry behaviour of GitHub calls.
    pub retry: RetryPolicy,
}

impl Env {
    /// Reads the environment of this process.
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self {
            token: var("GITHUB_TOKEN"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            github_repository: var("GITHUB_REPOSITORY"),
            retry: RetryPolicy::default(),
        }
    }
}

/// The result of a command: its exit code and what it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// 0 success, 1 a failed gate (perf-check).
    pub code: i32,
    /// Text for stdout.
    pub stdout: String,
}

impl Report {
    /// Success with `stdout`.
    pub fn ok(stdout: String) -> Self {
        Self { code: 0, stdout }
    }
}
