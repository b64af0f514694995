//! `pr-summary`: read every input, build the comment, place it.

use std::path::{Path, PathBuf};

use mochi_ratio_table::{BenchReport, ReportError};

use super::{author, connect, git_head, ConnectError};
use crate::config::Config;
use crate::coverage::diff::{self, ChangedLines};
use crate::coverage::lcov::Coverage;
use crate::coverage::patch::PatchCoverage;
use crate::github::comments::{self, Outcome, Placement};
use crate::github::{GitHub, GitHubError, PullFile, PullRequest};
use crate::icount::{self, IcountReport, IcountResult};
use crate::input::{self, InputError, Kind};
use crate::options::{Env, PrSummaryArgs, Report};
use crate::perf::Ranges;
use crate::summary::{self, SummaryInput, GITHUB_COMMENT_LIMIT};
use crate::wallclock::{CaseComparison, Runs};

/// Why `pr-summary` failed.
#[derive(Debug, thiserror::Error)]
pub enum PrSummaryError {
    /// An input file is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The benchmark report is malformed.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A coverage report whose paths all lie outside the repository root.
    #[error("{}: none of its {files} files lies under the repository root {} (first: `{first}`); the report was made in another checkout: pass that checkout as --repo-root or regenerate the report here", path.display(), root.display())]
    LcovOutsideRoot {
        /// The report.
        path: PathBuf,
        /// The root it was compared with.
        root: PathBuf,
        /// How many files it names.
        files: usize,
        /// The first of them.
        first: String,
    },
    /// No head SHA in dry-run mode and git could not tell.
    #[error("no --head-sha given and `git rev-parse HEAD` failed; pass --head-sha")]
    NoHeadSha,
    /// No pull request number and no head to find it by.
    #[error("--pr N (or --head-sha, to find the pull request by its head) is required unless --dry-run is given")]
    NoPr,
    /// GitHub's answer names a head that is not a commit SHA.
    #[error("GitHub gave `{}` as the head of #{pr}, which is not a commit SHA; refusing to write it into a comment", input::one_line(.sha, 80))]
    BadApiSha {
        /// The pull request.
        pr: u64,
        /// What GitHub said.
        sha: String,
    },
    /// The connection could not be set up.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A GitHub call failed.
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    /// Commenting was forbidden and there is no job summary to write instead.
    #[error("{source}{fork}; GITHUB_STEP_SUMMARY is not set either, so the summary could not be written anywhere")]
    Nowhere {
        /// The refusal.
        source: GitHubError,
        /// " (the pull request comes from a fork)" or "".
        fork: &'static str,
    },
    /// The job summary could not be written.
    #[error("cannot write the job summary {}: {source}", path.display())]
    StepSummary {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The inputs read from files, before anything is posted.
struct Inputs {
    head: Coverage,
    base: Option<Coverage>,
    changed: Option<ChangedLines>,
    bench: Option<BenchReport>,
    icount: Option<Vec<IcountResult>>,
    wallclock: Option<Vec<CaseComparison>>,
}

/// Reads a coverage report and checks that it belongs to this checkout.
fn read_coverage(path: &Path, root: &Path) -> Result<Coverage, PrSummaryError> {
    let coverage = Coverage::read(path, root)?;
    // Paths inside the root are made relative; when none is, the report comes
    // from another checkout and no changed line could ever match it.
    if coverage.files.keys().all(|f| Path::new(f).is_absolute()) {
        return Err(PrSummaryError::LcovOutsideRoot {
            path: path.to_path_buf(),
            root: root.to_path_buf(),
            files: coverage.files.len(),
            first: coverage.files.keys().next().cloned().unwrap_or_default(),
        });
    }
    Ok(coverage)
}

fn read_inputs(
    args: &PrSummaryArgs,
    config: &Config,
    root: &Path,
) -> Result<Inputs, PrSummaryError> {
    let head = read_coverage(&args.lcov, root)?;
    let base = args
        .base_lcov
        .as_deref()
        .map(|p| read_coverage(p, root))
        .transpose()?;
    let changed = args.diff.as_deref().map(ChangedLines::read).transpose()?;
    let bench = match &args.bench {
        Some(p) => {
            let text = input::read_text(p, Kind::BenchReport)?;
            Some(BenchReport::from_json_str(&text, &p.display().to_string())?)
        }
        None => None,
    };
    let icount = match (&args.icount, &args.icount_base) {
        (Some(head), Some(base)) => {
            let ranges = args.ranges.as_deref().map(Ranges::read).transpose()?;
            Some(icount::compare(
                &IcountReport::read(head)?,
                &IcountReport::read(base)?,
                ranges.as_ref(),
                icount::DEFAULT_THRESHOLD,
            ))
        }
        _ => None,
    };
    let column = &config.perf_check.column;
    let wallclock = args
        .wallclock
        .as_deref()
        .map(Runs::read_dir)
        .transpose()?
        .map(|runs| runs.compare(column));
    Ok(Inputs {
        head,
        base,
        changed,
        bench,
        icount,
        wallclock,
    })
}

fn body(inputs: &Inputs, head_sha: &str, base_sha: Option<&str>) -> String {
    let patch = inputs
        .changed
        .as_ref()
        .map(|c| PatchCoverage::compute(c, &inputs.head));
    let body = summary::render(&SummaryInput {
        head_sha,
        base_sha,
        head: Some(&inputs.head),
        base: inputs.base.as_ref(),
        patch: patch.as_ref(),
        bench: inputs.bench.as_ref(),
        icount: inputs.icount.as_deref(),
        wallclock: inputs.wallclock.as_deref(),
    });
    summary::fit_to_limit(&body, GITHUB_COMMENT_LIMIT)
}

/// Runs `pr-summary`. Every input is read before anything is posted: a
/// malformed file posts nothing.
pub async fn run(
    args: PrSummaryArgs,
    config: &Config,
    root: &Path,
    env: &Env,
) -> Result<Report, PrSummaryError> {
    let mut inputs = read_inputs(&args, config, root)?;

    if args.dry_run {
        let head_sha = match &args.head_sha {
            Some(s) => s.clone(),
            None => git_head(root)
                .filter(|s| summary::is_commit_sha(s))
                .ok_or(PrSummaryError::NoHeadSha)?,
        };
        return Ok(Report::ok(body(
            &inputs,
            &head_sha,
            args.base_sha.as_deref(),
        )));
    }

    if args.pr.is_none() && args.head_sha.is_none() {
        return Err(PrSummaryError::NoPr);
    }
    let gh = connect(&args.github, config, env)?;
    let author = author(&args.github, config);
    let pr = match (args.pr, &args.head_sha) {
        (Some(pr), _) => pr,
        (None, Some(head)) => match find_pull_by_head(&gh, head).await? {
            Some(pr) => pr,
            None => {
                return Ok(Report::ok(format!(
                    "no open pull request of {} has head {head} (it moved on or was closed); nothing posted\n",
                    gh.repo()
                )))
            }
        },
        (None, None) => return Err(PrSummaryError::NoPr),
    };
    let pull: PullRequest = gh.get_json(&gh.repo_path(&format!("/pulls/{pr}"))).await?;
    for sha in [&pull.head.sha, &pull.base.sha] {
        if !summary::is_commit_sha(sha) {
            return Err(PrSummaryError::BadApiSha {
                pr,
                sha: sha.clone(),
            });
        }
    }
    let head_sha = args
        .head_sha
        .clone()
        .unwrap_or_else(|| pull.head.sha.clone());
    if inputs.changed.is_none() {
        let files: Vec<PullFile> = gh
            .get_all(&gh.repo_path(&format!("/pulls/{pr}/files")))
            .await?;
        inputs.changed = Some(diff::from_api_files(&files)?);
    }
    let base_sha = args
        .base_sha
        .clone()
        .or_else(|| Some(pull.base.sha.clone()));
    let body = body(&inputs, &head_sha, base_sha.as_deref());
    let placement = Placement {
        pr,
        author: &author,
        body: &body,
        head_sha: &head_sha,
        current_head: Some(&pull.head.sha),
    };
    let repo = gh.repo();
    match comments::place_summary(&gh, &placement).await {
        Ok(outcome) => Ok(Report::ok(match outcome {
            Outcome::Created { id } => format!("created summary comment {id} on {repo}#{pr}\n"),
            Outcome::Updated { id } => format!("updated summary comment {id} on {repo}#{pr}\n"),
            Outcome::Unchanged { id } => {
                format!("summary comment {id} on {repo}#{pr} is up to date; nothing written\n")
            }
            Outcome::KeptNewer { id, existing_sha } => format!(
                "summary comment {id} on {repo}#{pr} describes head {existing_sha}, newer than {head_sha}; left as it is\n"
            ),
        })),
        Err(e @ GitHubError::Forbidden { .. }) => {
            let fork = if pull.is_from_fork() {
                " (the pull request comes from a fork)"
            } else {
                ""
            };
            match &env.step_summary {
                Some(path) => {
                    append_step_summary(path, &body)?;
                    Ok(Report::ok(format!(
                        "cannot comment on {repo}#{pr}{fork}: {e}\nwrote the summary to the job summary ({}) instead\n",
                        path.display()
                    )))
                }
                None => Err(PrSummaryError::Nowhere { source: e, fork }),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// The open pull request whose head commit is `head`, if any.
async fn find_pull_by_head(gh: &GitHub, head: &str) -> Result<Option<u64>, GitHubError> {
    let pulls: Vec<PullRequest> = gh.get_all(&gh.repo_path("/pulls?state=open")).await?;
    Ok(pulls
        .iter()
        .find(|p| p.head.sha.eq_ignore_ascii_case(head))
        .map(|p| p.number))
}

fn append_step_summary(path: &Path, body: &str) -> Result<(), PrSummaryError> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{body}\n").as_bytes()))
        .map_err(|source| PrSummaryError::StepSummary {
            path: path.to_path_buf(),
            source,
        })
}
