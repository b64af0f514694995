//! `wallclock-check`: head and base benchmark runs, interleaved, compared as
//! information (it never fails on a slowdown; the instruction gate does).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::Config;
use crate::input::InputError;
use crate::options::{Report, WallclockCheckArgs};
use crate::wallclock::{self, Runs};

/// Why `wallclock-check` could not compare.
#[derive(Debug, thiserror::Error)]
pub enum WallclockCheckError {
    /// A report is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The output folder cannot be made.
    #[error("cannot create {}: {source}", dir.display())]
    OutDir {
        /// The folder.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A measuring command could not be started.
    #[error("cannot run `{command}`: {source}")]
    Start {
        /// The command.
        command: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A measuring command failed.
    #[error("`{command}` failed ({status}) writing {}", out.display())]
    Failed {
        /// The command.
        command: String,
        /// Its status.
        status: std::process::ExitStatus,
        /// The report it was to write.
        out: PathBuf,
    },
    /// Too few runs for any interval.
    #[error("--runs {0}: at least 4 runs of each side are needed for a 95% interval")]
    TooFewRuns(u32),
}

fn measure(
    command: &str,
    out: &Path,
    root: &Path,
    cases: Option<&str>,
) -> Result<(), WallclockCheckError> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(root)
        .env("MOCHI_BENCH_OUT", out)
        // The suite's own table goes to the log, not into this command's report.
        .stdout(std::process::Stdio::from(std::io::stderr()));
    if let Some(cases) = cases {
        cmd.env("MOCHI_RETRY_CASES", cases);
    }
    let status = cmd.status().map_err(|source| WallclockCheckError::Start {
        command: command.to_string(),
        source,
    })?;
    if !status.success() {
        return Err(WallclockCheckError::Failed {
            command: command.to_string(),
            status,
            out: out.to_path_buf(),
        });
    }
    Ok(())
}

/// Runs `wallclock-check`.
pub fn run(
    args: WallclockCheckArgs,
    config: &Config,
    root: &Path,
) -> Result<Report, WallclockCheckError> {
    if args.runs < 4 {
        return Err(WallclockCheckError::TooFewRuns(args.runs));
    }
    let column = args
        .column
        .clone()
        .unwrap_or_else(|| config.perf_check.column.clone());
    std::fs::create_dir_all(&args.out).map_err(|source| WallclockCheckError::OutDir {
        dir: args.out.clone(),
        source,
    })?;
    // Interleaved, so that a change of the machine's load hits both sides alike.
    for i in 1..=args.runs {
        measure(
            &args.head_cmd,
            &args.out.join(format!("head-{i:02}.json")),
            root,
            None,
        )?;
        measure(
            &args.base_cmd,
            &args.out.join(format!("base-{i:02}.json")),
            root,
            None,
        )?;
    }
    let first = Runs::read_dir(&args.out)?;
    let again = first.to_rerun(&column);
    let mut out = String::new();
    if !again.is_empty() {
        let cases = again.join(",");
        out.push_str(&format!("rerunning the cases found slower: {cases}\n"));
        for i in 1..=args.runs {
            let head = args.out.join(format!("rerun-head-{i:02}.json"));
            measure(&args.head_cmd, &head, root, Some(&cases))?;
            let base = args.out.join(format!("rerun-base-{i:02}.json"));
            measure(&args.base_cmd, &base, root, Some(&cases))?;
        }
    }
    let runs = Runs::read_dir(&args.out)?;
    for c in runs.compare(&column) {
        out.push_str(&wallclock::describe(&c));
        out.push('\n');
    }
    out.push_str("wallclock-check: informational; the instruction gate decides\n");
    Ok(Report::ok(out))
}
