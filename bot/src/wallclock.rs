//! Wall-clock ratios, head against base, as information: a distribution-free
//! interval for the shift of the log-ratio, and a slowdown reported only when
//! a rerun confirms it.
//!
//! Each run of the benchmark suite gives one gradient/primal ratio per case.
//! With head runs *x₁…x_m* and base runs *y₁…y_n* (interleaved, so that a
//! drift of the machine hits both), the shift of log *r* from base to head is
//! estimated by Hodges–Lehmann (the median of the *mn* differences
//! log *xᵢ* − log *yⱼ*) with the matching Mann–Whitney confidence interval
//! (order statistics of those differences, from the exact null distribution of
//! *U*). A case is *slower* when the whole interval lies above zero, *faster*
//! when below; otherwise nothing is claimed. A slower case is measured again
//! (a second, fresh set of runs, `rerun-head-*.json`/`rerun-base-*.json`), and
//! only a case slower in both is reported as a slowdown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mochi_ratio_table::BenchReport;

use crate::input::{self, InputError, Kind};

/// The confidence of the interval.
pub const CONFIDENCE: f64 = 0.95;

/// The most report files read from one directory.
const MAX_FILES: usize = 64;

/// A shift of the log-ratio and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Hodges–Lehmann estimate.
    pub estimate: f64,
    /// Lower end of the interval.
    pub lower: f64,
    /// Upper end of the interval.
    pub upper: f64,
}

/// Number of ways each value of the Mann–Whitney *U* (0..=mn) arises, for sample sizes m and n.
fn mann_whitney_counts(m: usize, n: usize) -> Vec<f64> {
    // counts[j][u] for the current m and j = 0..=n, built up one x at a time.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]); // j = 0: U = 0 only
        for j in 1..=n {
            // c(i, j, u) = c(i − 1, j, u − j) + c(i, j − 1, u)
            let mut row = vec![0.0; i * j + 1];
            for (u, c) in prev[j].iter().enumerate() {
                row[u + j] += c;
            }
            for (u, c) in cur[j - 1].iter().enumerate() {
                row[u] += c;
            }
            cur.push(row);
        }
        prev = cur;
    }
    prev.pop().unwrap_or_else(|| vec![1.0])
}

/// The Hodges–Lehmann shift of `x` over `y` with its two-sided Mann–Whitney
/// interval at `confidence`; `None` when there are too few values for one.
pub fn shift(x: &[f64], y: &[f64], confidence: f64) -> Option<Shift> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 {
        return None;
    }
    let mut d: Vec<f64> = x
        .iter()
        .flat_map(|a| y.iter().map(move |b| a - b))
        .collect();
    d.sort_by(f64::total_cmp);
    let mn = d.len();
    let estimate = if mn % 2 == 1 {
        d[mn / 2]
    } else {
        (d[mn / 2 - 1] + d[mn / 2]) / 2.0
    };
    let counts = mann_whitney_counts(m, n);
    let total: f64 = counts.iter().sum();
    let alpha_half = (1.0 - confidence) / 2.0;
    // The largest k with P(U ≤ k − 1) ≤ α/2; the interval is [d_(k), d_(mn+1−k)] (1-based).
    let mut cumulative = 0.0;
    let mut k = 0;
    for (u, c) in counts.iter().enumerate() {
        cumulative += c / total;
        if cumulative <= alpha_half {
            k = u + 1;
        } else {
            break;
        }
    }
    if k == 0 || k > mn / 2 {
        return None;
    }
    // d is 0-based: d_(k) (1-based) is d[k − 1], d_(mn+1−k) is d[mn − k].
    Some(Shift {
        estimate,
        lower: d[k - 1],
        upper: d[mn - k],
    })
}

/// What the runs say about one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// The interval lies above zero in the first runs and in the reruns.
    Slower,
    /// The interval lay above zero in the first runs only (or there was no rerun).
    SlowerOnce,
    /// The interval lies below zero.
    Faster,
    /// The interval contains zero.
    NoChange,
    /// Too few runs for an interval.
    TooFewRuns,
}

/// One case of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseComparison {
    /// The case.
    pub label: String,
    /// The shift of log-ratio in the first runs, when computable.
    pub shift: Option<Shift>,
    /// The finding.
    pub finding: Finding,
}

/// Runs of head and base, and the reruns of the cases found slower.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// Head runs.
    pub head: Vec<BenchReport>,
    /// Base runs.
    pub base: Vec<BenchReport>,
    /// Head reruns.
    pub rerun_head: Vec<BenchReport>,
    /// Base reruns.
    pub rerun_base: Vec<BenchReport>,
}

fn log_ratios(reports: &[BenchReport], label: &str, column: &str) -> Vec<f64> {
    reports
        .iter()
        .filter_map(|r| r.cases.iter().find(|c| c.label == label))
        .filter_map(|c| c.ratio(column))
        .filter(|r| *r > 0.0)
        .map(f64::ln)
        .collect()
}

impl Runs {
    /// Reads `head-*.json`, `base-*.json`, `rerun-head-*.json` and `rerun-base-*.json` from `dir`.
    pub fn read_dir(dir: &Path) -> Result<Self, InputError> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| InputError::new(dir, 0, format!("cannot list the folder: {e}")))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        if files.len() > MAX_FILES {
            return Err(InputError::new(
                dir,
                0,
                format!("{} reports, more than the {MAX_FILES} read", files.len()),
            ));
        }
        files.sort();
        let mut runs = Runs::default();
        for file in files {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let slot = if name.starts_with("rerun-head-") {
                &mut runs.rerun_head
            } else if name.starts_with("rerun-base-") {
                &mut runs.rerun_base
            } else if name.starts_with("head-") {
                &mut runs.head
            } else if name.starts_with("base-") {
                &mut runs.base
            } else {
                continue;
            };
            let text = input::read_text(&file, Kind::BenchReport)?;
            let report = BenchReport::from_json_str(&text, &file.display().to_string())
                .map_err(|e| InputError::new(&file, e.line, e.message))?;
            slot.push(report);
        }
        Ok(runs)
    }

    /// Cases found slower in the first runs: the ones to measure again.
    pub fn to_rerun(&self, column: &str) -> Vec<String> {
        self.compare(column)
            .into_iter()
            .filter(|c| matches!(c.finding, Finding::Slower | Finding::SlowerOnce))
            .map(|c| c.label)
            .collect()
    }

    /// Every case of the head runs, compared with base.
    pub fn compare(&self, column: &str) -> Vec<CaseComparison> {
        let mut labels: BTreeMap<usize, String> = BTreeMap::new();
        if let Some(first) = self.head.first() {
            for (i, c) in first.cases.iter().enumerate() {
                labels.insert(i, c.label.clone());
            }
        }
        labels
            .into_values()
            .map(|label| {
                let first = shift(
                    &log_ratios(&self.head, &label, column),
                    &log_ratios(&self.base, &label, column),
                    CONFIDENCE,
                );
                let finding = match first {
                    None => Finding::TooFewRuns,
                    Some(s) if s.upper < 0.0 => Finding::Faster,
                    Some(s) if s.lower > 0.0 => {
                        let again = shift(
                            &log_ratios(&self.rerun_head, &label, column),
                            &log_ratios(&self.rerun_base, &label, column),
                            CONFIDENCE,
                        );
                        if again.is_some_and(|s| s.lower > 0.0) {
                            Finding::Slower
                        } else {
                            Finding::SlowerOnce
                        }
                    }
                    Some(_) => Finding::NoChange,
                };
                CaseComparison {
                    label,
                    shift: first,
                    finding,
                }
            })
            .collect()
    }
}

/// A shift of log-ratio as a percentage change of the ratio.
pub fn percent(log_shift: f64) -> f64 {
    (log_shift.exp() - 1.0) * 100.0
}

/// One line per case, for the log.
pub fn describe(c: &CaseComparison) -> String {
    let what = match c.finding {
        Finding::Slower => "slower (confirmed by a rerun)",
        Finding::SlowerOnce => "slower in one set of runs, not confirmed",
        Finding::Faster => "faster",
        Finding::NoChange => "no change detected",
        Finding::TooFewRuns => "too few runs for an interval",
    };
    match c.shift {
        Some(s) => format!(
            "{}: {:+.1}% [{:+.1}%, {:+.1}%] {what}",
            c.label,
            percent(s.estimate),
            percent(s.lower),
            percent(s.upper)
        ),
        None => format!("{}: {what}", c.label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reports(ratios: &[f64]) -> Vec<BenchReport> {
        ratios
            .iter()
            .map(|r| {
                BenchReport::from_json_str(
                    &format!(
                        r#"{{"schema_version":1,"columns":["mochi"],"cases":[{{"label":"a","primal_ns":1,"ratios":{{"mochi":{r}}}}}]}}"#
                    ),
                    "r.json",
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn a_slowdown_the_rerun_does_not_confirm_is_not_claimed() {
        let base = [2.0, 2.02, 1.98, 2.01, 1.99];
        let slow = [2.2, 2.22, 2.18, 2.21, 2.19];
        let mut runs = Runs {
            head: reports(&slow),
            base: reports(&base),
            rerun_head: reports(&base),
            rerun_base: reports(&base),
        };
        assert_eq!(runs.compare("mochi")[0].finding, Finding::SlowerOnce);
        assert_eq!(runs.to_rerun("mochi"), vec!["a"]);
        runs.rerun_head = reports(&slow);
        assert_eq!(runs.compare("mochi")[0].finding, Finding::Slower);
        runs.head = reports(&[1.8, 1.82, 1.78, 1.81, 1.79]);
        assert_eq!(runs.compare("mochi")[0].finding, Finding::Faster);
        runs.head = reports(&base[..3]);
        runs.base = reports(&base[..3]);
        assert_eq!(runs.compare("mochi")[0].finding, Finding::TooFewRuns);
    }

    #[test]
    fn mann_whitney_null_distribution() {
        // m = n = 2: U takes 0..=4 with counts 1, 1, 2, 1, 1 (C(4, 2) = 6 orderings).
        assert_eq!(mann_whitney_counts(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
        let c = mann_whitney_counts(5, 5);
        assert_eq!(c.iter().sum::<f64>(), 252.0); // C(10, 5)
        assert_eq!(c.len(), 26);
    }

    #[test]
    fn the_interval_needs_enough_runs_and_finds_a_clear_shift() {
        // 3 against 3 cannot reach 95% two-sided: the smallest tail is 1/20 per side.
        assert_eq!(shift(&[1.0, 2.0, 3.0], &[0.0, 0.5, 0.7], 0.95), None);
        let base = [0.00, 0.01, -0.01, 0.02, -0.02];
        let head: Vec<f64> = base.iter().map(|b| b + 0.10).collect();
        let s = shift(&head, &base, 0.95).unwrap();
        assert!((s.estimate - 0.10).abs() < 1e-12, "{s:?}");
        assert!(s.lower > 0.0 && s.upper > s.lower, "{s:?}");
        // For m = n = 5 at 95%, k = 3: the interval is [d_(3), d_(23)] of the 25 differences.
        let mut d: Vec<f64> = head
            .iter()
            .flat_map(|a| base.iter().map(move |b| a - b))
            .collect();
        d.sort_by(f64::total_cmp);
        assert_eq!((s.lower, s.upper), (d[2], d[22]));
        // Overlapping samples: no claim.
        let s = shift(&base, &base, 0.95).unwrap();
        assert!(s.lower < 0.0 && s.upper > 0.0, "{s:?}");
    }
}
