//! The instruction-count gate: a case fails when its gradient/primal
//! instruction ratio grew, from base to head, by more than a threshold.
//!
//! Both reports come from `mochi-icount` (the benchmark crate's Valgrind
//! driver) run on the base and the head build in the same job. Instruction
//! counts do not depend on the runner's load, so a small threshold (5% by
//! default, per case `max_instruction_growth` in the ranges file) can be used
//! without false alarms.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use crate::input::{self, InputError, Kind};
use crate::perf::Ranges;

/// The growth allowed when neither the ranges file nor `--threshold` says otherwise.
pub const DEFAULT_THRESHOLD: f64 = 0.05;

/// One case of an instruction report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct IcountCase {
    /// The case label, as in the benchmark report.
    pub label: String,
    /// Instructions of one primal call.
    pub primal_instructions: f64,
    /// Instructions of one mochi gradient call.
    pub gradient_instructions: f64,
}

impl IcountCase {
    /// Gradient instructions ÷ primal instructions.
    pub fn ratio(&self) -> f64 {
        self.gradient_instructions / self.primal_instructions
    }
}

/// A whole instruction report (`schema_version` 1).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct IcountReport {
    /// Always 1.
    pub schema_version: u32,
    /// The counting tool, e.g. `valgrind-3.19.0 callgrind`.
    #[serde(default)]
    pub tool: String,
    /// The measured cases.
    pub cases: Vec<IcountCase>,
}

impl IcountReport {
    /// Reads and validates a report.
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let text = input::read_text(path, Kind::BenchReport)?;
        Self::parse(&text, path)
    }

    /// Parses and validates report text; `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, InputError> {
        let report: IcountReport = serde_json::from_str(text).map_err(|e| {
            InputError::new(
                path,
                e.line(),
                format!("not an instruction report of mochi-icount: {e}"),
            )
        })?;
        if report.schema_version != 1 {
            return Err(InputError::new(
                path,
                0,
                format!(
                    "schema_version is {}; only 1 is understood",
                    report.schema_version
                ),
            ));
        }
        let mut seen = BTreeSet::new();
        for case in &report.cases {
            if case.label.is_empty()
                || case.label.chars().count() > 100
                || case.label.chars().any(char::is_control)
            {
                return Err(InputError::new(
                    path,
                    0,
                    format!(
                        "label `{}` is not one line of 1 to 100 characters",
                        case.label
                    ),
                ));
            }
            if !seen.insert(case.label.as_str()) {
                return Err(InputError::new(
                    path,
                    0,
                    format!("case `{}` appears twice", case.label),
                ));
            }
            let positive = |x: f64| x.is_finite() && x > 0.0;
            if !(positive(case.primal_instructions) && positive(case.gradient_instructions)) {
                return Err(InputError::new(
                    path,
                    0,
                    format!(
                        "case `{}`: instruction counts must be positive numbers",
                        case.label
                    ),
                ));
            }
        }
        if report.cases.is_empty() {
            return Err(InputError::new(path, 0, "the report has no case"));
        }
        Ok(report)
    }

    fn case(&self, label: &str) -> Option<&IcountCase> {
        self.cases.iter().find(|c| c.label == label)
    }
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq)]
pub enum IcountVerdict {
    /// The ratio grew by at most the threshold (or shrank).
    Within,
    /// The ratio grew by more than the threshold.
    Regressed,
    /// The base has no such case: nothing to compare.
    New,
}

/// One row of the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct IcountResult {
    /// The case.
    pub label: String,
    /// The base ratio, when the base has the case.
    pub base_ratio: Option<f64>,
    /// The head ratio.
    pub head_ratio: f64,
    /// head ÷ base − 1.
    pub growth: Option<f64>,
    /// The allowed growth.
    pub threshold: f64,
    /// The verdict.
    pub verdict: IcountVerdict,
}

/// Gated cases of `ranges` (when given) that `head` does not measure.
pub fn unmeasured<'a>(head: &IcountReport, ranges: Option<&'a Ranges>) -> Vec<&'a str> {
    ranges.map_or_else(Vec::new, |r| {
        r.cases
            .keys()
            .filter(|label| head.case(label).is_none())
            .map(String::as_str)
            .collect()
    })
}

/// Compares every case of `head` with `base`; the threshold of a case is its
/// `max_instruction_growth` in `ranges`, else `default_threshold`.
pub fn compare(
    head: &IcountReport,
    base: &IcountReport,
    ranges: Option<&Ranges>,
    default_threshold: f64,
) -> Vec<IcountResult> {
    head.cases
        .iter()
        .map(|case| {
            let threshold = ranges
                .and_then(|r| r.cases.get(&case.label))
                .and_then(|r| r.max_instruction_growth)
                .unwrap_or(default_threshold);
            let head_ratio = case.ratio();
            let base_ratio = base.case(&case.label).map(IcountCase::ratio);
            let growth = base_ratio.map(|b| head_ratio / b - 1.0);
            let verdict = match growth {
                None => IcountVerdict::New,
                Some(g) if g > threshold => IcountVerdict::Regressed,
                Some(_) => IcountVerdict::Within,
            };
            IcountResult {
                label: case.label.clone(),
                base_ratio,
                head_ratio,
                growth,
                threshold,
                verdict,
            }
        })
        .collect()
}

/// One line per case, for the log.
pub fn describe(r: &IcountResult) -> String {
    let allowed = format!("+{:.1}%", r.threshold * 100.0);
    match (&r.verdict, r.base_ratio, r.growth) {
        (IcountVerdict::New, _, _) => format!(
            "new      {}: instruction ratio {:.4} (not in base)",
            r.label, r.head_ratio
        ),
        (verdict, Some(base), Some(growth)) => format!(
            "{} {}: instruction ratio {base:.4} -> {:.4} ({:+.2}%, allowed {allowed})",
            if *verdict == IcountVerdict::Regressed {
                "GREW    "
            } else {
                "ok      "
            },
            r.label,
            r.head_ratio,
            growth * 100.0
        ),
        _ => format!("?        {}", r.label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(cases: &[(&str, f64, f64)]) -> IcountReport {
        let cases: Vec<String> = cases
            .iter()
            .map(|(l, p, g)| {
                format!(
                    r#"{{"label":"{l}","primal_instructions":{p},"gradient_instructions":{g}}}"#
                )
            })
            .collect();
        IcountReport::parse(
            &format!(r#"{{"schema_version":1,"cases":[{}]}}"#, cases.join(",")),
            Path::new("i.json"),
        )
        .unwrap()
    }

    #[test]
    fn growth_over_the_threshold_fails_only_that_case() {
        let base = report(&[("a", 100.0, 300.0), ("b", 1000.0, 2000.0)]);
        // a: 3.0 -> 3.3 (+10%); b: 2.0 -> 2.08 (+4%); c is new.
        let head = report(&[("a", 100.0, 330.0), ("b", 1000.0, 2080.0), ("c", 1.0, 2.0)]);
        let results = compare(&head, &base, None, DEFAULT_THRESHOLD);
        let verdicts: Vec<_> = results.iter().map(|r| r.verdict.clone()).collect();
        assert_eq!(
            verdicts,
            vec![
                IcountVerdict::Regressed,
                IcountVerdict::Within,
                IcountVerdict::New
            ]
        );
        assert!(describe(&results[0]).contains("3.0000 -> 3.3000 (+10.00%, allowed +5.0%)"));
    }

    #[test]
    fn the_ranges_file_overrides_the_threshold_per_case() {
        let ranges = Ranges::parse(
            "[cases.a]\nlower = 0\nupper = 9\nmax_instruction_growth = 0.12\n",
            Path::new("r.toml"),
        )
        .unwrap();
        let base = report(&[("a", 100.0, 300.0)]);
        let head = report(&[("a", 100.0, 330.0)]);
        let results = compare(&head, &base, Some(&ranges), DEFAULT_THRESHOLD);
        assert_eq!(results[0].verdict, IcountVerdict::Within);
    }

    #[test]
    fn malformed_reports_are_refused() {
        let parse = |t: &str| IcountReport::parse(t, Path::new("i.json"));
        assert!(parse(r#"{"schema_version":2,"cases":[]}"#).is_err());
        assert!(parse(r#"{"schema_version":1,"cases":[]}"#).is_err());
        let zero = r#"{"schema_version":1,"cases":[{"label":"a","primal_instructions":0,"gradient_instructions":1}]}"#;
        assert!(parse(zero).unwrap_err().message.contains("positive"));
        let twice = r#"{"schema_version":1,"cases":[{"label":"a","primal_instructions":1,"gradient_instructions":1},{"label":"a","primal_instructions":1,"gradient_instructions":1}]}"#;
        assert!(parse(twice).unwrap_err().message.contains("twice"));
    }
}
