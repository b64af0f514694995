//! `perf-check`: the gate over a benchmark report, with reruns of failing cases.

use std::path::{Path, PathBuf};
use std::process::Command;

use mochi_ratio_table::{BenchReport, ReportError};

use crate::config::Config;
use crate::input::{self, InputError, Kind};
use crate::options::{PerfCheckArgs, Report};
use crate::perf::{self, Ranges, Verdict};

/// Why `perf-check` could not give a verdict (a failed gate is not an error: it exits 1).
#[derive(Debug, thiserror::Error)]
pub enum PerfCheckError {
    /// An input file is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The benchmark report is malformed.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The gated column is not in the report.
    #[error("{}: the report has no column `{column}` (columns: {columns}); pass --column or fix `perf_check.column`", bench.display())]
    NoColumn {
        /// The report.
        bench: PathBuf,
        /// The column asked for.
        column: String,
        /// The columns it has.
        columns: String,
    },
    /// Gated cases the report does not measure.
    #[error("{}: {} gated case(s) have no `{column}` ratio: {}; every case in {} must be measured", bench.display(), missing.len(), missing.join(", "), ranges.display())]
    Missing {
        /// The report.
        bench: PathBuf,
        /// The ranges file.
        ranges: PathBuf,
        /// The column.
        column: String,
        /// The unmeasured cases.
        missing: Vec<String>,
    },
    /// The retry command could not be started.
    #[error("cannot run --retry-cmd `{command}`: {source}")]
    RetryStart {
        /// The command.
        command: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The retry command failed.
    #[error("--retry-cmd `{command}` failed ({status}); fix the command or run without it")]
    RetryFailed {
        /// The command.
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
}

/// Runs `perf-check`: exit 0 when every gated case is inside its range, 1 when one is not.
pub fn run(args: PerfCheckArgs, config: &Config, root: &Path) -> Result<Report, PerfCheckError> {
    let ranges_path = args
        .ranges
        .clone()
        .unwrap_or_else(|| root.join(&config.perf_check.ranges));
    let ranges = Ranges::read(&ranges_path)?;
    let column = args
        .column
        .clone()
        .unwrap_or_else(|| config.perf_check.column.clone());
    let retries = args.retries.unwrap_or(config.perf_check.retries);
    let read_report = || -> Result<BenchReport, PerfCheckError> {
        let text = input::read_text(&args.bench, Kind::BenchReport)?;
        Ok(BenchReport::from_json_str(
            &text,
            &args.bench.display().to_string(),
        )?)
    };
    let report = read_report()?;
    if !report.columns.contains(&column) {
        return Err(PerfCheckError::NoColumn {
            bench: args.bench.clone(),
            column,
            columns: report.columns.join(", "),
        });
    }
    let missing_error = |results: &[perf::CaseResult]| {
        let missing: Vec<String> = results
            .iter()
            .filter(|r| r.verdict == Verdict::Missing)
            .map(|r| r.label.clone())
            .collect();
        (!missing.is_empty()).then(|| PerfCheckError::Missing {
            bench: args.bench.clone(),
            ranges: ranges_path.clone(),
            column: column.clone(),
            missing,
        })
    };
    let mut results = perf::check(&report, &ranges, &column);
    if let Some(e) = missing_error(&results) {
        return Err(e);
    }
    let mut out = String::new();
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
            let line = format!(
                "retry {attempt}/{retries}: re-measuring {}",
                failing.join(", ")
            );
            // Also to stderr at once: a retry takes minutes, and a failing one
            // ends the command with an error instead of this report.
            eprintln!("mochi-bot perf-check: {line}");
            out.push_str(&line);
            out.push('\n');
            let status = Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .current_dir(root)
                .env("MOCHI_RETRY_CASES", failing.join(","))
                .status()
                .map_err(|source| PerfCheckError::RetryStart {
                    command: cmd.clone(),
                    source,
                })?;
            if !status.success() {
                return Err(PerfCheckError::RetryFailed {
                    command: cmd.clone(),
                    status,
                });
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
            if let Some(e) = missing_error(&results) {
                return Err(e);
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
        Ok(Report::ok(out))
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
