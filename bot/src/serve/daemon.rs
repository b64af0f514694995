//! The loop: plan, sleep (waking early on a signal), run, remember.

use std::future::Future;
use std::time::Duration;

use chrono::Utc;

use super::schedule::{Schedule, Step};
use super::state::{State, StateFile};
use crate::input::InputError;

/// The longest single sleep; waking up this often notices clock jumps and suspends.
const MAX_SLEEP: Duration = Duration::from_secs(15 * 60);

/// Why the daemon stopped other than by a shutdown request.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The state file cannot be read or written.
    #[error(transparent)]
    State(#[from] InputError),
    /// The schedule has run out of occurrences (it is checked to have one when parsed).
    #[error("the schedule has no occurrence after {0}; check `serve.schedule`")]
    NoOccurrence(chrono::DateTime<Utc>),
}

/// Runs `job` on `schedule` until `shutdown` completes. The state file is
/// written *before* each run, so a crash or restart during a run never leads
/// to a second run on the same local date. A failing job is reported and the
/// daemon goes on.
pub async fn run<J, F, E, S>(
    schedule: &Schedule,
    state_file: &StateFile,
    mut job: J,
    shutdown: S,
) -> Result<(), DaemonError>
where
    J: FnMut(chrono::NaiveDate) -> F,
    F: Future<Output = Result<(), E>>,
    E: std::fmt::Display,
    S: Future<Output = ()>,
{
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let state = state_file.load()?;
        let now = Utc::now();
        let Some(step) = schedule.plan(now, state.last_run_date) else {
            return Err(DaemonError::NoOccurrence(now));
        };
        match step {
            Step::RunNow { date } => {
                state_file.save(&State {
                    last_run_date: Some(date),
                })?;
                eprintln!("mochi-bot serve: running the design-doc review for {date}");
                tokio::select! {
                    result = job(date) => {
                        if let Err(e) = result {
                            eprintln!("mochi-bot serve: the review for {date} failed: {e}");
                        }
                    }
                    () = &mut shutdown => {
                        eprintln!("mochi-bot serve: shutting down during the review for {date}; it will not be repeated today");
                        return Ok(());
                    }
                }
            }
            Step::SleepUntil(when) => {
                let wait = (when - Utc::now()).to_std().unwrap_or(Duration::ZERO);
                let nap = wait.min(MAX_SLEEP);
                if nap == wait {
                    eprintln!(
                        "mochi-bot serve: next review at {} ({})",
                        when.with_timezone(&schedule.time_zone()),
                        when
                    );
                }
                tokio::select! {
                    () = tokio::time::sleep(nap) => {}
                    () = &mut shutdown => {
                        eprintln!("mochi-bot serve: shutting down");
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Completes on SIGTERM or Ctrl-C (SIGINT).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn runs_a_due_job_once_then_stops_on_shutdown() {
        let dir = tempfile::tempdir().unwrap();
        let state_file = StateFile::new(&dir.path().join("state.json"));
        // Every minute of every day: today's occurrence has always passed.
        let schedule = Schedule::new("* * * * *", "UTC").unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let dates = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let tx = std::sync::Mutex::new(Some(tx));
        let counter = runs.clone();
        let seen = dates.clone();
        let job = move |date| {
            counter.fetch_add(1, Ordering::SeqCst);
            seen.lock().unwrap().push(date);
            // Ask for shutdown once the first run is done; the loop then sleeps until tomorrow.
            if let Some(tx) = tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
            async { Ok::<(), String>(()) }
        };
        let shutdown = async {
            let _ = rx.await;
        };
        tokio::time::timeout(
            Duration::from_secs(10),
            run(&schedule, &state_file, job, shutdown),
        )
        .await
        .expect("the daemon did not stop on shutdown")
        .unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        // The state records the date of the run before it started.
        let ran_for = dates.lock().unwrap()[0];
        assert_eq!(state_file.load().unwrap().last_run_date, Some(ran_for));
    }

    #[tokio::test]
    async fn a_restart_on_a_day_that_already_ran_does_not_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let state_file = StateFile::new(&dir.path().join("state.json"));
        let schedule = Schedule::new("* * * * *", "UTC").unwrap();
        let today = schedule.local_date(Utc::now());
        state_file
            .save(&State {
                last_run_date: Some(today),
            })
            .unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let job = move |_date| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok::<(), String>(()) }
        };
        // Shut down as soon as the daemon goes to sleep.
        let shutdown = tokio::time::sleep(Duration::from_millis(200));
        tokio::time::timeout(
            Duration::from_secs(10),
            run(&schedule, &state_file, job, shutdown),
        )
        .await
        .expect("the daemon did not stop on shutdown")
        .unwrap();
        // Only a run across midnight (UTC) could have happened in between.
        let ran = runs.load(Ordering::SeqCst);
        assert!(
            ran == 0 || schedule.local_date(Utc::now()) != today,
            "ran {ran} times"
        );
    }
}
