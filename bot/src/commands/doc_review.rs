//! `doc-review`: plan the day's reviews and keep the tracking issue.

use std::path::Path;

use chrono::NaiveDate;

use super::{author, connect, ConnectError};
use crate::config::Config;
use crate::docs::plan::Plan;
use crate::docs::review::{self, IssueSettings};
use crate::docs::survey::{self, SurveyError};
use crate::github::{GitHub, GitHubError};
use crate::options::{DocReviewArgs, Env, Report};
use crate::serve::schedule::{Schedule, ScheduleError};

/// Why `doc-review` failed.
#[derive(Debug, thiserror::Error)]
pub enum DocReviewError {
    /// A zero budget.
    #[error("--budget 0: expected a positive number of minutes")]
    ZeroBudget,
    /// The schedule of `--if-due` is unusable.
    #[error("serve.schedule: {0}")]
    Schedule(#[from] ScheduleError),
    /// The docs could not be surveyed.
    #[error(transparent)]
    Survey(#[from] SurveyError),
    /// The connection could not be set up.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A GitHub call failed.
    #[error(transparent)]
    GitHub(#[from] GitHubError),
}

/// Today in the schedule's zone.
pub fn today_in(config: &Config) -> NaiveDate {
    let tz: chrono_tz::Tz = config.serve.time_zone.parse().unwrap_or(chrono_tz::UTC);
    chrono::Utc::now().with_timezone(&tz).date_naive()
}

/// Runs `doc-review`.
pub async fn run(
    args: DocReviewArgs,
    config: &Config,
    root: &Path,
    env: &Env,
) -> Result<Report, DocReviewError> {
    if args.if_due {
        let schedule = Schedule::new(&config.serve.schedule, &config.serve.time_zone)?;
        if !schedule.due_today(chrono::Utc::now()) {
            return Ok(Report::ok(format!(
                "doc-review: `{}` in {} has no occurrence yet today; nothing done\n",
                config.serve.schedule, config.serve.time_zone
            )));
        }
    }
    let today = args.today.unwrap_or_else(|| today_in(config));
    let budget = args.budget.unwrap_or(config.doc_review.budget_minutes);
    if budget == 0 {
        return Err(DocReviewError::ZeroBudget);
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
        return Ok(Report::ok(out));
    }
    let gh = connect(&args.github, config, env)?;
    let outcome = run_review(&gh, &plan, config, &author(&args.github, config)).await?;
    Ok(Report::ok(outcome))
}

/// The plan for `today` within `budget` minutes.
pub fn make_plan(
    config: &Config,
    root: &Path,
    today: NaiveDate,
    budget: u32,
) -> Result<Plan, SurveyError> {
    let statuses = survey::survey(
        root,
        &config.doc_review.docs_dir,
        today,
        config.doc_review.review_interval_days,
    )?;
    Ok(Plan::make(&statuses, today, budget))
}

/// Applies `plan` to the tracking issue; returns the line to print.
pub async fn run_review(
    gh: &GitHub,
    plan: &Plan,
    config: &Config,
    author: &str,
) -> Result<String, GitHubError> {
    let settings = IssueSettings {
        title: &config.doc_review.issue_title,
        label: &config.doc_review.label,
        author,
        owners: &config.doc_review.owners,
    };
    let outcome = review::apply(gh, plan, &settings).await?;
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
