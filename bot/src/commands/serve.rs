//! `serve`: the daemon that runs the design-doc review on schedule.

use std::path::Path;

use chrono::NaiveDate;

use super::doc_review::{make_plan, run_review};
use super::{author, connect, ConnectError};
use crate::config::Config;
use crate::options::{Env, GitHubArgs, Report};
use crate::serve::daemon::{self, DaemonError};
use crate::serve::schedule::{Schedule, ScheduleError};
use crate::serve::state::StateFile;

/// Why `serve` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The schedule is unusable.
    #[error("serve.schedule: {0}")]
    Schedule(#[from] ScheduleError),
    /// The connection could not be set up.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The daemon stopped.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
}

/// Runs `serve` until SIGTERM or Ctrl-C.
pub async fn run(
    args: GitHubArgs,
    config: &Config,
    root: &Path,
    env: &Env,
) -> Result<Report, ServeError> {
    let schedule = Schedule::new(&config.serve.schedule, &config.serve.time_zone)?;
    let gh = connect(&args, config, env)?;
    let author = author(&args, config);
    let state_path = root.join(&config.serve.state_file);
    let state = StateFile::new(&state_path);
    eprintln!(
        "mochi-bot serve: doc-review for {} on `{}` in {}; state in {}",
        gh.repo(),
        config.serve.schedule,
        config.serve.time_zone,
        state_path.display()
    );
    let job = |date: NaiveDate| {
        let gh = gh.clone();
        let author = author.clone();
        async move {
            let plan = make_plan(config, root, date, config.doc_review.budget_minutes)
                .map_err(|e| e.to_string())?;
            let message = run_review(&gh, &plan, config, &author)
                .await
                .map_err(|e| e.to_string())?;
            eprint!("{message}");
            Ok::<(), String>(())
        }
    };
    daemon::run(&schedule, &state, job, daemon::shutdown_signal()).await?;
    Ok(Report::ok("mochi-bot serve: stopped\n".to_string()))
}
