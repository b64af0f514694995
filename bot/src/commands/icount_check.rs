//! `icount-check`: the instruction-count gate, head against base.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::icount::{self, IcountReport, IcountVerdict};
use crate::input::InputError;
use crate::options::{IcountCheckArgs, Report};
use crate::perf::Ranges;

/// Why `icount-check` could not give a verdict (a regression is not an error: it exits 1).
#[derive(Debug, thiserror::Error)]
pub enum IcountCheckError {
    /// An input file is unreadable or malformed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Gated cases the head report does not measure.
    #[error("{}: {} gated case(s) have no instruction count: {}; every case in {} must be measured", head.display(), missing.len(), missing.join(", "), ranges.display())]
    Missing {
        /// The head report.
        head: PathBuf,
        /// The ranges file.
        ranges: PathBuf,
        /// The unmeasured cases.
        missing: Vec<String>,
    },
    /// A threshold that is not a growth.
    #[error("--threshold {0}: expected a non-negative fraction, e.g. 0.05 for 5%")]
    BadThreshold(f64),
}

/// Runs `icount-check`: exit 0 when no case's instruction ratio grew past its threshold, 1 otherwise.
pub fn run(
    args: IcountCheckArgs,
    config: &Config,
    root: &Path,
) -> Result<Report, IcountCheckError> {
    let threshold = args.threshold.unwrap_or(icount::DEFAULT_THRESHOLD);
    if !(threshold.is_finite() && threshold >= 0.0) {
        return Err(IcountCheckError::BadThreshold(threshold));
    }
    let ranges_path = args
        .ranges
        .clone()
        .unwrap_or_else(|| root.join(&config.perf_check.ranges));
    let ranges = Ranges::read(&ranges_path)?;
    let head = IcountReport::read(&args.head)?;
    let base = IcountReport::read(&args.base)?;
    let missing = icount::unmeasured(&head, Some(&ranges));
    if !missing.is_empty() {
        return Err(IcountCheckError::Missing {
            head: args.head.clone(),
            ranges: ranges_path,
            missing: missing.into_iter().map(str::to_string).collect(),
        });
    }
    let results = icount::compare(&head, &base, Some(&ranges), threshold);
    let mut out = String::new();
    for r in &results {
        out.push_str(&icount::describe(r));
        out.push('\n');
    }
    let grew: Vec<&str> = results
        .iter()
        .filter(|r| r.verdict == IcountVerdict::Regressed)
        .map(|r| r.label.as_str())
        .collect();
    if grew.is_empty() {
        out.push_str(&format!(
            "icount-check: no instruction ratio of {} cases grew past its threshold\n",
            results.len()
        ));
        Ok(Report::ok(out))
    } else {
        out.push_str(&format!(
            "icount-check: {} of {} cases grew past their threshold: {}\n",
            grew.len(),
            results.len(),
            grew.join(", ")
        ));
        Ok(Report {
            code: 1,
            stdout: out,
        })
    }
}
