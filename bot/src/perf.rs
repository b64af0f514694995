//! The performance gate: every gated case's ratio must lie in its allowed range.
//!
//! The ranges file (`benches/ranges.toml`) has one table per case:
//!
//! ```toml
//! [cases.sum_1000]
//! lower = 1.0   # smallest acceptable gradient/primal ratio
//! upper = 3.0   # largest acceptable ratio
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use mochi_ratio_table::BenchReport;
use serde::Deserialize;

use crate::input::{line_of_offset, InputError};

/// The allowed interval of one case.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// Smallest acceptable ratio (inclusive).
    pub lower: f64,
    /// Largest acceptable ratio (inclusive).
    pub upper: f64,
    /// Largest growth of the instruction ratio from base to head (0.05 = 5%)
    /// before `icount-check` fails the case [default: `--threshold`, 5%].
    #[serde(default)]
    pub max_instruction_growth: Option<f64>,
}

/// The whole ranges file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ranges {
    /// Ranges by case label.
    pub cases: BTreeMap<String, Range>,
}

impl Ranges {
    /// Reads and validates a ranges file.
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let text = crate::input::read_text(path, crate::input::Kind::Toml)?;
        Self::parse(&text, path)
    }

    /// Parses and validates ranges text; `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, InputError> {
        let ranges: Ranges = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| line_of_offset(text, s.start));
            InputError::new(
                path,
                line,
                format!("{}; expected tables like `[cases.sum_1000]` with `lower = 1.0` and `upper = 3.0`", e.message().trim()),
            )
        })?;
        if ranges.cases.is_empty() {
            return Err(InputError::new(
                path,
                0,
                "no case is gated: an empty ranges file would pass every report; add tables like `[cases.sum_1000]` with `lower` and `upper`",
            ));
        }
        for (label, range) in &ranges.cases {
            let line = text
                .lines()
                .position(|l| l.contains(&format!("cases.{label}")))
                .map_or(0, |i| i + 1);
            if label.chars().any(char::is_control) || label.chars().count() > 100 {
                return Err(InputError::new(
                    path,
                    line,
                    format!("case `{label}`: a label is one line of at most 100 characters"),
                ));
            }
            if !(range.lower.is_finite() && range.upper.is_finite() && range.lower >= 0.0) {
                return Err(InputError::new(
                    path,
                    line,
                    format!("case `{label}`: lower and upper must be finite, non-negative numbers"),
                ));
            }
            if range
                .max_instruction_growth
                .is_some_and(|g| !(g.is_finite() && g >= 0.0))
            {
                return Err(InputError::new(
                    path,
                    line,
                    format!("case `{label}`: max_instruction_growth must be a non-negative number, e.g. 0.05 for 5%"),
                ));
            }
            if range.lower > range.upper {
                return Err(InputError::new(
                    path,
                    line,
                    format!(
                        "case `{label}`: lower ({}) is above upper ({}); swap them",
                        range.lower, range.upper
                    ),
                ));
            }
        }
        Ok(ranges)
    }
}

/// The verdict on one gated case.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The ratio lies in the range.
    Inside(f64),
    /// The ratio lies outside the range.
    Outside(f64),
    /// The report has no such case, or its ratio is `null`.
    Missing,
}

/// One row of the gate's report.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case label.
    pub label: String,
    /// Its allowed range.
    pub range: Range,
    /// What the report says.
    pub verdict: Verdict,
}

/// Checks every case of `ranges` against `column` of `report`.
pub fn check(report: &BenchReport, ranges: &Ranges, column: &str) -> Vec<CaseResult> {
    ranges
        .cases
        .iter()
        .map(|(label, range)| {
            let ratio = report
                .cases
                .iter()
                .find(|c| &c.label == label)
                .and_then(|c| c.ratio(column));
            let verdict = match ratio {
                None => Verdict::Missing,
                Some(r) if r >= range.lower && r <= range.upper => Verdict::Inside(r),
                Some(r) => Verdict::Outside(r),
            };
            CaseResult {
                label: label.clone(),
                range: *range,
                verdict,
            }
        })
        .collect()
}

/// One line per case, for the log.
pub fn describe(result: &CaseResult, column: &str) -> String {
    let range = format!("[{}, {}]", result.range.lower, result.range.upper);
    match result.verdict {
        Verdict::Inside(r) => format!("ok       {}: {column} ratio {r} inside {range}", result.label),
        Verdict::Outside(r) => format!(
            "OUTSIDE  {}: {column} ratio {r} outside {range}",
            result.label
        ),
        Verdict::Missing => format!(
            "MISSING  {}: the report has no {column} ratio for this case (allowed {range}); a missing case is an error, not a pass",
            result.label
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> BenchReport {
        BenchReport::from_json_str(
            r#"{"schema_version":1,"columns":["mochi","peer"],"cases":[
                {"label":"a","primal_ns":1.0,"ratios":{"mochi":1.5,"peer":9.0}},
                {"label":"b","primal_ns":1.0,"ratios":{"mochi":4.0,"peer":null}},
                {"label":"c","primal_ns":1.0,"ratios":{"mochi":null}}]}"#,
            "r.json",
        )
        .unwrap()
    }

    #[test]
    fn inside_outside_missing() {
        let ranges = Ranges::parse(
            "[cases.a]\nlower = 1.0\nupper = 2.0\n[cases.b]\nlower = 1.0\nupper = 3.0\n[cases.c]\nlower = 0\nupper = 9\n[cases.d]\nlower = 0\nupper = 9\n",
            Path::new("ranges.toml"),
        )
        .unwrap();
        let results = check(&report(), &ranges, "mochi");
        let verdicts: Vec<_> = results.iter().map(|r| r.verdict.clone()).collect();
        assert_eq!(
            verdicts,
            vec![
                Verdict::Inside(1.5),
                Verdict::Outside(4.0),
                Verdict::Missing,
                Verdict::Missing
            ]
        );
        assert!(describe(&results[1], "mochi").contains("ratio 4 outside [1, 3]"));
    }

    #[test]
    fn bounds_are_inclusive() {
        let ranges =
            Ranges::parse("[cases.a]\nlower = 1.5\nupper = 1.5\n", Path::new("r.toml")).unwrap();
        assert_eq!(
            check(&report(), &ranges, "mochi")[0].verdict,
            Verdict::Inside(1.5)
        );
    }

    #[test]
    fn bad_ranges_name_file_and_line() {
        let e = Ranges::parse("[cases.a]\nlower = 3.0\nupper = 1.0\n", Path::new("r.toml"))
            .unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("swap"), "{e}");
        let e = Ranges::parse(
            "[cases.a]\nlower = 1.0\nupper = \"x\"\n",
            Path::new("r.toml"),
        )
        .unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = Ranges::parse(
            "[cases.a]\nlower = 1.0\nupper = 2.0\nmiddle = 1\n",
            Path::new("r.toml"),
        )
        .unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        let e = Ranges::parse(
            "[cases.\"a\\n::error::x\"]\nlower = 1.0\nupper = 2.0\n",
            Path::new("r.toml"),
        )
        .unwrap_err();
        assert!(e.message.contains("one line"), "{e}");
        let e = Ranges::parse("[cases]\n", Path::new("r.toml")).unwrap_err();
        assert!(e.message.contains("no case is gated"), "{e}");
    }
}
