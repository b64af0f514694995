//! The command line: argument parsing and the four commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::NaiveDate;
use clap::{Args, Parser, Subcommand};
use mochi_ratio_table::BenchReport;

use crate::config::{Config, DEFAULT_PATH};
use crate::coverage::diff::{self, ChangedLines};
use crate::coverage::lcov::Coverage;
use crate::coverage::patch::PatchCoverage;
use crate::docs::plan::Plan;
use crate::docs::review::{self, IssueSettings};
use crate::docs::survey;
use crate::github::comments::{self, Outcome, Placement};
use crate::github::{GitHub, GitHubError, PullFile, PullRequest, Repo, RetryPolicy};
use crate::perf::{self, Ranges, Verdict};
use crate::serve::daemon;
use crate::serve::schedule::Schedule;
use crate::serve::state::StateFile;
use crate::summary::{self, SummaryInput, GITHUB_COMMENT_LIMIT};

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
    PrSummary(PrSummaryArgs),
    /// Fail (exit 1) when a mochi ratio leaves its allowed range.
    PerfCheck(PerfCheckArgs),
    /// Pick the design docs most in need of review and keep one tracking issue.
    DocReview(DocReviewArgs),
    /// Run doc-review every day on the configured schedule until SIGTERM or Ctrl-C.
    Serve(GitHubArgs),
}

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
    /// Head commit [default: the PR's head when posting, `git rev-parse HEAD` with --dry-run].
    #[arg(long, value_name = "SHA")]
    pub head_sha: Option<String>,
    /// Base commit, shown in the summary.
    #[arg(long, value_name = "SHA")]
    pub base_sha: Option<String>,
    /// Print the body to stdout and touch nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Pull request number (required unless --dry-run).
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
    /// Reruns with --retry-cmd before a regression is declared [default: `perf_check.retries`, 2].
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
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

fn ok(stdout: String) -> Result<Report, String> {
    Ok(Report { code: 0, stdout })
}

/// Runs a parsed command line. Errors are complete sentences for people; the caller prints them and exits with 2.
pub async fn execute(cli: Cli, env: &Env) -> Result<Report, String> {
    let repo_root = match &cli.repo_root {
        Some(root) => root.clone(),
        None => git_toplevel().unwrap_or_else(|| PathBuf::from(".")),
    };
    let config = match &cli.config {
        Some(path) => Config::load(path, true),
        None => Config::load(&repo_root.join(DEFAULT_PATH), false),
    }
    .map_err(|e| e.to_string())?;
    match cli.command {
        Command_::PrSummary(args) => pr_summary(args, &config, &repo_root, env).await,
        Command_::PerfCheck(args) => perf_check(args, &config, &repo_root),
        Command_::DocReview(args) => doc_review(args, &config, &repo_root, env).await,
        Command_::Serve(args) => serve(args, &config, &repo_root, env).await,
    }
}

fn git_toplevel() -> Option<PathBuf> {
    let out = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn connect(args: &GitHubArgs, config: &Config, env: &Env) -> Result<GitHub, String> {
    let repo_text = args
        .repo
        .clone()
        .or_else(|| (!config.repository.is_empty()).then(|| config.repository.clone()))
        .or_else(|| env.github_repository.clone())
        .ok_or("no repository given: pass --repo OWNER/NAME, set `repository` in the config, or set GITHUB_REPOSITORY")?;
    let repo: Repo = repo_text
        .parse()
        .map_err(|e: String| format!("--repo: {e}"))?;
    let api_url = args
        .api_url
        .clone()
        .unwrap_or_else(|| config.api_url.clone());
    if env.token.is_none() {
        return Err(format!("GITHUB_TOKEN is not set; it is needed to write to {repo} (use --dry-run to only print)"));
    }
    Ok(GitHub::new(&api_url, env.token.clone(), repo)?.with_retry(env.retry))
}

async fn pr_summary(
    args: PrSummaryArgs,
    config: &Config,
    root: &Path,
    env: &Env,
) -> Result<Report, String> {
    // Every input is read before anything is posted: a malformed file posts nothing.
    let head = Coverage::read(&args.lcov, root).map_err(|e| e.to_string())?;
    let base = match &args.base_lcov {
        Some(p) => Some(Coverage::read(p, root).map_err(|e| e.to_string())?),
        None => None,
    };
    let mut changed = match &args.diff {
        Some(p) => Some(ChangedLines::read(p).map_err(|e| e.to_string())?),
        None => None,
    };
    let bench = match &args.bench {
        Some(p) => {
            let text = crate::input::read_text(p, crate::input::Kind::BenchReport)
                .map_err(|e| e.to_string())?;
            Some(
                BenchReport::from_json_str(&text, &p.display().to_string())
                    .map_err(|e| e.to_string())?,
            )
        }
        None => None,
    };

    if args.dry_run {
        let head_sha = match &args.head_sha {
            Some(s) => s.clone(),
            None => git_head(root)
                .ok_or("no --head-sha given and `git rev-parse HEAD` failed; pass --head-sha")?,
        };
        let patch = changed.as_ref().map(|c| PatchCoverage::compute(c, &head));
        let body = summary::render(&SummaryInput {
            head_sha: &head_sha,
            base_sha: args.base_sha.as_deref(),
            head: Some(&head),
            base: base.as_ref(),
            patch: patch.as_ref(),
            bench: bench.as_ref(),
        });
        return ok(summary::fit_to_limit(&body, GITHUB_COMMENT_LIMIT));
    }

    let pr = args
        .pr
        .ok_or("--pr N is required unless --dry-run is given")?;
    let gh = connect(&args.github, config, env)?;
    let author = args
        .github
        .author
        .clone()
        .unwrap_or_else(|| config.bot_login.clone());
    let pull: PullRequest = gh
        .get_json(&gh.repo_path(&format!("/pulls/{pr}")))
        .await
        .map_err(|e| e.to_string())?;
    let head_sha = args
        .head_sha
        .clone()
        .unwrap_or_else(|| pull.head.sha.clone());
    if changed.is_none() {
        let files: Vec<PullFile> = gh
            .get_all(&gh.repo_path(&format!("/pulls/{pr}/files")))
            .await
            .map_err(|e| e.to_string())?;
        changed = Some(diff::from_api_files(&files).map_err(|e| e.to_string())?);
    }
    let patch = changed.as_ref().map(|c| PatchCoverage::compute(c, &head));
    let base_sha = args
        .base_sha
        .clone()
        .or_else(|| Some(pull.base.sha.clone()));
    let body = summary::render(&SummaryInput {
        head_sha: &head_sha,
        base_sha: base_sha.as_deref(),
        head: Some(&head),
        base: base.as_ref(),
        patch: patch.as_ref(),
        bench: bench.as_ref(),
    });
    let body = summary::fit_to_limit(&body, GITHUB_COMMENT_LIMIT);
    let placement = Placement {
        pr,
        author: &author,
        body: &body,
        head_sha: &head_sha,
        current_head: Some(&pull.head.sha),
    };
    match comments::place_summary(&gh, &placement).await {
        Ok(outcome) => ok(match outcome {
            Outcome::Created { id } => format!("created summary comment {id} on {}#{pr}\n", gh.repo()),
            Outcome::Updated { id } => format!("updated summary comment {id} on {}#{pr}\n", gh.repo()),
            Outcome::Unchanged { id } => format!("summary comment {id} on {}#{pr} is up to date; nothing written\n", gh.repo()),
            Outcome::KeptNewer { id, existing_sha } => format!(
                "summary comment {id} on {}#{pr} describes head {existing_sha}, newer than {head_sha}; left as it is\n",
                gh.repo()
            ),
        }),
        Err(e @ GitHubError::Forbidden { .. }) => {
            let fork = if pull.is_from_fork() { " (the pull request comes from a fork)" } else { "" };
            match &env.step_summary {
                Some(path) => {
                    append_step_summary(path, &body)?;
                    ok(format!(
                        "cannot comment on {}#{pr}{fork}: {e}\nwrote the summary to the job summary ({}) instead\n",
                        gh.repo(),
                        path.display()
                    ))
                }
                None => Err(format!("{e}{fork}; GITHUB_STEP_SUMMARY is not set either, so the summary could not be written anywhere")),
            }
        }
        Err(e) => Err(e.to_string()),
    }
}

fn git_head(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn append_step_summary(path: &Path, body: &str) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{body}\n").as_bytes()))
        .map_err(|e| format!("cannot write the job summary {}: {e}", path.display()))
}

fn perf_check(args: PerfCheckArgs, config: &Config, root: &Path) -> Result<Report, String> {
    let ranges_path = args
        .ranges
        .clone()
        .unwrap_or_else(|| root.join(&config.perf_check.ranges));
    let ranges = Ranges::read(&ranges_path).map_err(|e| e.to_string())?;
    let column = args
        .column
        .clone()
        .unwrap_or_else(|| config.perf_check.column.clone());
    let retries = args.retries.unwrap_or(config.perf_check.retries);
    let read_report = || -> Result<BenchReport, String> {
        let text = crate::input::read_text(&args.bench, crate::input::Kind::BenchReport)
            .map_err(|e| e.to_string())?;
        BenchReport::from_json_str(&text, &args.bench.display().to_string())
            .map_err(|e| e.to_string())
    };
    let report = read_report()?;
    if !report.columns.contains(&column) {
        return Err(format!(
            "{}: the report has no column `{column}` (columns: {}); pass --column or fix `perf_check.column`",
            args.bench.display(),
            report.columns.join(", ")
        ));
    }
    let mut results = perf::check(&report, &ranges, &column);
    let mut out = String::new();
    let missing: Vec<&str> = results
        .iter()
        .filter(|r| r.verdict == Verdict::Missing)
        .map(|r| r.label.as_str())
        .collect();
    if !missing.is_empty() {
        for r in &results {
            out.push_str(&perf::describe(r, &column));
            out.push('\n');
        }
        return Err(format!(
            "{out}{}: {} gated case(s) have no `{column}` ratio: {}; every case in {} must be measured",
            args.bench.display(),
            missing.len(),
            missing.join(", "),
            ranges_path.display()
        ));
    }
    if let Some(cmd) = &args.retry_cmd {
        for attempt in 1..=retries {
            let failing: Vec<String> = results
                .iter()
                .filter(|r| matches!(r.verdict, Verdict::Outside(_)))
                .map(|r| r.label.clone())
                .collect();
            if failing.is_empty() {
                break;
            }
            out.push_str(&format!(
                "retry {attempt}/{retries}: re-measuring {}\n",
                failing.join(", ")
            ));
            let status = Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .current_dir(root)
                .env("MOCHI_RETRY_CASES", failing.join(","))
                .status()
                .map_err(|e| format!("cannot run --retry-cmd `{cmd}`: {e}"))?;
            if !status.success() {
                return Err(format!(
                    "{out}--retry-cmd `{cmd}` failed ({status}); fix the command or run without it"
                ));
            }
            let report = read_report()?;
            let fresh = perf::check(&report, &ranges, &column);
            for result in results.iter_mut() {
                if failing.contains(&result.label) {
                    if let Some(new) = fresh.iter().find(|f| f.label == result.label) {
                        *result = new.clone();
                    }
                }
            }
            if let Some(m) = results.iter().find(|r| r.verdict == Verdict::Missing) {
                return Err(format!(
                    "{out}after --retry-cmd, the report has no `{column}` ratio for `{}`",
                    m.label
                ));
            }
        }
    }
    for r in &results {
        out.push_str(&perf::describe(r, &column));
        out.push('\n');
    }
    let outside: Vec<String> = results
        .iter()
        .filter_map(|r| match r.verdict {
            Verdict::Outside(ratio) => Some(format!(
                "{} (ratio {ratio}, range [{}, {}])",
                r.label, r.range.lower, r.range.upper
            )),
            _ => None,
        })
        .collect();
    if outside.is_empty() {
        out.push_str(&format!(
            "perf-check: all {} gated cases inside their ranges\n",
            results.len()
        ));
        ok(out)
    } else {
        out.push_str(&format!(
            "perf-check: {} of {} cases outside their ranges: {}\n",
            outside.len(),
            results.len(),
            outside.join("; ")
        ));
        Ok(Report {
            code: 1,
            stdout: out,
        })
    }
}

fn today_in(config: &Config) -> NaiveDate {
    let tz: chrono_tz::Tz = config.serve.time_zone.parse().unwrap_or(chrono_tz::UTC);
    chrono::Utc::now().with_timezone(&tz).date_naive()
}

async fn doc_review(
    args: DocReviewArgs,
    config: &Config,
    root: &Path,
    env: &Env,
) -> Result<Report, String> {
    let today = args.today.unwrap_or_else(|| today_in(config));
    let budget = args.budget.unwrap_or(config.doc_review.budget_minutes);
    if budget == 0 {
        return Err("--budget 0: expected a positive number of minutes".to_string());
    }
    let plan = make_plan(config, root, today, budget)?;
    if args.dry_run {
        let mut out = format!(
            "doc-review plan for {today} (budget {budget} min): {} to review today ({} min), {} waiting, {} front-matter finding(s)\n\n",
            plan.today_list.len(),
            plan.planned_minutes(),
            plan.waiting.len(),
            plan.findings.len()
        );
        if plan.is_empty() {
            out.push_str(
                "Nothing needs review: no issue would be opened, an open one would be closed.\n",
            );
        } else {
            out.push_str(&plan.render(&config.doc_review.owners));
        }
        return ok(out);
    }
    let gh = connect(&args.github, config, env)?;
    let author = args
        .github
        .author
        .clone()
        .unwrap_or_else(|| config.bot_login.clone());
    let outcome = run_review(&gh, &plan, config, &author).await?;
    ok(outcome)
}

fn make_plan(config: &Config, root: &Path, today: NaiveDate, budget: u32) -> Result<Plan, String> {
    let statuses = survey::survey(
        root,
        &config.doc_review.docs_dir,
        today,
        config.doc_review.review_interval_days,
    )?;
    Ok(Plan::make(&statuses, today, budget))
}

async fn run_review(
    gh: &GitHub,
    plan: &Plan,
    config: &Config,
    author: &str,
) -> Result<String, String> {
    let settings = IssueSettings {
        title: &config.doc_review.issue_title,
        label: &config.doc_review.label,
        author,
        owners: &config.doc_review.owners,
    };
    let outcome = review::apply(gh, plan, &settings)
        .await
        .map_err(|e| e.to_string())?;
    let repo = gh.repo();
    Ok(match outcome {
        review::Outcome::NothingToDo => {
            "doc-review: nothing needs review; nothing posted\n".to_string()
        }
        review::Outcome::Created { number } => format!("doc-review: opened {repo}#{number}\n"),
        review::Outcome::Edited {
            number,
            list_changed: true,
        } => {
            format!("doc-review: updated {repo}#{number}; the list changed, owners mentioned\n")
        }
        review::Outcome::Edited {
            number,
            list_changed: false,
        } => format!("doc-review: updated {repo}#{number}\n"),
        review::Outcome::Unchanged { number } => {
            format!("doc-review: {repo}#{number} is up to date\n")
        }
        review::Outcome::Closed { number } => {
            format!("doc-review: nothing needs review; closed {repo}#{number}\n")
        }
    })
}

async fn serve(
    args: GitHubArgs,
    config: &Config,
    root: &Path,
    env: &Env,
) -> Result<Report, String> {
    let schedule = Schedule::new(&config.serve.schedule, &config.serve.time_zone)?;
    let gh = connect(&args, config, env)?;
    let author = args
        .author
        .clone()
        .unwrap_or_else(|| config.bot_login.clone());
    let state = StateFile::new(&root.join(&config.serve.state_file));
    eprintln!(
        "mochi-bot serve: doc-review for {} on `{}` in {}; state in {}",
        gh.repo(),
        config.serve.schedule,
        config.serve.time_zone,
        root.join(&config.serve.state_file).display()
    );
    let job = |date: NaiveDate| {
        let gh = gh.clone();
        let author = author.clone();
        async move {
            let plan = make_plan(config, root, date, config.doc_review.budget_minutes)?;
            let message = run_review(&gh, &plan, config, &author).await?;
            eprint!("{message}");
            Ok(())
        }
    };
    daemon::run(&schedule, &state, job, daemon::shutdown_signal())
        .await
        .map_err(|e| e.to_string())?;
    ok("mochi-bot serve: stopped\n".to_string())
}
