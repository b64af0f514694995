//! The benchmark ratio report shared by mochi's benchmark suite and `mochi-bot`.
//!
//! A report (schema version 1) lists, for each benchmark case, the primal
//! time in nanoseconds and the ratio *gradient time ÷ primal time* for each
//! AD column (mochi first, then the peers). A ratio of `null` means the column
//! could not run that case and is shown as `missing`.
//!
//! ```json
//! { "schema_version": 1,
//!   "columns": ["mochi", "peer"],
//!   "cases": [ { "label": "sum_1000", "primal_ns": 85.0,
//!                "ratios": { "mochi": 1.7, "peer": null } } ] }
//! ```
//!
//! The API is small: [`BenchReport::from_json_str`] parses and validates
//! (errors name the file, line and column), [`BenchReport::to_json_string`]
//! writes a report, [`render_table`] draws the table, and
//! [`format_duration_ns`] / [`format_ratio`] format single cells the same way
//! the table does.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The only schema version this crate reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole benchmark report: the AD columns and one entry per case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Always [`SCHEMA_VERSION`]; any other value is rejected when parsing.
    pub schema_version: u32,
    /// The AD columns in display order, e.g. `["mochi", "peer"]`.
    pub columns: Vec<String>,
    /// The benchmark cases in display order.
    pub cases: Vec<BenchCase>,
    /// Free-form information about the run (machine, commit, date…); not shown in the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
}

/// One benchmark case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchCase {
    /// The case's name, unique within a report, e.g. `sum_1000`.
    pub label: String,
    /// Time of one primal (function) evaluation in nanoseconds; finite and positive.
    pub primal_ns: f64,
    /// Gradient time ÷ primal time per column; `None` (JSON `null`) when the
    /// column could not run the case. A column absent from the map is also missing.
    pub ratios: BTreeMap<String, Option<f64>>,
    /// Optional absolute gradient times in nanoseconds per column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times_ns: Option<BTreeMap<String, Option<f64>>>,
    /// Optional heap bytes allocated per gradient evaluation per column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_gradient: Option<BTreeMap<String, Option<f64>>>,
    /// Any further per-case fields, kept so that a report survives a round trip.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl BenchCase {
    /// The ratio of `column` for this case, `None` when it is missing or `null`.
    pub fn ratio(&self, column: &str) -> Option<f64> {
        self.ratios.get(column).copied().flatten()
    }
}

/// Why a report could not be read: the file, the position and what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportError {
    /// The path given to [`BenchReport::from_json_str`], as written by the caller.
    pub path: String,
    /// 1-based line of the offending value (0 when the input is empty).
    pub line: usize,
    /// 1-based column of the offending value (0 when unknown).
    pub column: usize,
    /// What is wrong and what is expected.
    pub message: String,
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ReportError {}

impl BenchReport {
    /// Parses and validates a report. `path_for_errors` only names the input in
    /// error messages (`file:line:column: message`).
    ///
    /// Rejected: JSON syntax errors, a `schema_version` other than 1, no or
    /// duplicate columns, duplicate or empty labels, a `primal_ns` that is not
    /// finite and positive, a ratio that is negative or not finite, and a
    /// ratio for a column not listed in `columns`.
    pub fn from_json_str(text: &str, path_for_errors: &str) -> Result<Self, ReportError> {
        let syntax = |e: serde_json::Error| ReportError {
            path: path_for_errors.to_string(),
            line: e.line(),
            column: e.column(),
            message: format!("not a valid benchmark report: {e}"),
        };
        // serde keeps the last of two equal keys in a map; a report that says
        // two things about one ratio is refused instead.
        serde_json::from_str::<NoDuplicateKeys>(text).map_err(syntax)?;
        let report: BenchReport = serde_json::from_str(text).map_err(syntax)?;
        report.validate(text, path_for_errors)?;
        Ok(report)
    }

    /// Serialises the report as pretty-printed JSON (the format the benchmark suite writes).
    pub fn to_json_string(&self) -> String {
        // A report only holds strings, finite numbers and JSON values, which always serialise.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    fn validate(&self, text: &str, path: &str) -> Result<(), ReportError> {
        let fail = |needle: &str, message: String| {
            let (line, column) = locate(text, needle);
            Err(ReportError {
                path: path.to_string(),
                line,
                column,
                message,
            })
        };
        if self.schema_version != SCHEMA_VERSION {
            return fail(
                "\"schema_version\"",
                format!(
                    "schema_version is {}, but only version {SCHEMA_VERSION} is understood; regenerate the report with the current benchmark suite",
                    self.schema_version
                ),
            );
        }
        if self.columns.is_empty() {
            return fail(
                "\"columns\"",
                "`columns` is empty; list the AD columns, e.g. [\"mochi\"]".to_string(),
            );
        }
        if self.columns.len() > MAX_COLUMNS {
            return fail(
                "\"columns\"",
                format!(
                    "`columns` lists {} columns, more than the {MAX_COLUMNS} a table can show",
                    self.columns.len()
                ),
            );
        }
        if self.cases.len() > MAX_CASES {
            return fail(
                "\"cases\"",
                format!(
                    "`cases` lists {} cases, more than the {MAX_CASES} a report may hold",
                    self.cases.len()
                ),
            );
        }
        for (i, column) in self.columns.iter().enumerate() {
            if column.is_empty() {
                return fail("\"columns\"", "a column name is empty".to_string());
            }
            if let Some(problem) = name_problem(column) {
                return fail("\"columns\"", format!("column #{}: {problem}", i + 1));
            }
            if self.columns[..i].contains(column) {
                return fail(
                    "\"columns\"",
                    format!("column `{column}` is listed twice in `columns`"),
                );
            }
        }
        for (i, case) in self.cases.iter().enumerate() {
            let at = format!("\"{}\"", case.label);
            if case.label.is_empty() {
                return fail("\"label\"", format!("case #{} has an empty `label`", i + 1));
            }
            if let Some(problem) = name_problem(&case.label) {
                return fail("\"label\"", format!("case #{}: label {problem}", i + 1));
            }
            if self.cases[..i].iter().any(|c| c.label == case.label) {
                return fail(
                    &at,
                    format!("case `{}` appears twice; labels must be unique", case.label),
                );
            }
            if !(case.primal_ns.is_finite() && case.primal_ns > 0.0) {
                return fail(
                    &at,
                    format!(
                        "case `{}`: primal_ns is {}, expected a positive number of nanoseconds",
                        case.label, case.primal_ns
                    ),
                );
            }
            for (column, ratio) in &case.ratios {
                if !self.columns.contains(column) {
                    return fail(
                        &at,
                        format!(
                            "case `{}` has a ratio for column `{column}`, which is not in `columns` ({})",
                            case.label,
                            self.columns.join(", ")
                        ),
                    );
                }
                if let Some(r) = ratio {
                    if !(r.is_finite() && *r >= 0.0) {
                        return fail(
                            &at,
                            format!(
                                "case `{}`: ratio for `{column}` is {r}, expected a non-negative number or null",
                                case.label
                            ),
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

/// The longest label or column name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// The most columns a report may have.
pub const MAX_COLUMNS: usize = 32;
/// The most cases a report may have.
pub const MAX_CASES: usize = 10_000;

/// Why a label or column name cannot be shown in a table, if it cannot.
fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Some(format!(
            "is {chars} characters long; at most {MAX_NAME_CHARS} are allowed"
        ));
    }
    name.chars().find(|c| c.is_control()).map(|c| {
        format!(
            "`{}` holds the control character {}; labels are one line of text",
            name.escape_default(),
            c.escape_default()
        )
    })
}

/// Any JSON value, refused when an object repeats a key.
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoDuplicateKeysVisitor)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> serde::de::Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicateKeys, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<NoDuplicateKeys, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<NoDuplicateKeys, A::Error> {
        let mut seen = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{}` appears twice in one object",
                    key.escape_default()
                )));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

/// 1-based (line, column) of the first occurrence of `needle`, or (1, 1).
fn locate(text: &str, needle: &str) -> (usize, usize) {
    match text.find(needle) {
        Some(offset) => {
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            (line, column)
        }
        None => (1, 1),
    }
}

/// Formats `x` with three significant figures: `1.70`, `95.0`, `1230`, `0.0123`.
fn three_significant(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0.00".to_string();
    }
    let mut exponent = x.abs().log10().floor() as i32;
    let scale = 10f64.powi(exponent - 2);
    let rounded = (x / scale).round() * scale;
    // Rounding may carry into the next decade (999.7 → 1000).
    if rounded.abs() >= 10f64.powi(exponent + 1) {
        exponent += 1;
    }
    if exponent < 2 {
        let decimals = (2 - exponent) as usize;
        format!("{x:.decimals$}")
    } else {
        let scale = 10f64.powi(exponent - 2);
        format!("{:.0}", (x / scale).round() * scale)
    }
}

/// Rounds to three significant figures, keeping the value a number.
fn round_three_significant(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let exponent = x.abs().log10().floor() as i32;
    let scale = 10f64.powi(exponent - 2);
    (x / scale).round() * scale
}

/// Formats a duration given in nanoseconds with three significant figures and
/// the largest unit that keeps the number at least 1: `85.0 ns`, `1.23 µs`,
/// `45.6 ms`, `2.00 s`. Durations of 1000 s and more stay in seconds.
pub fn format_duration_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return format!("{ns} ns");
    }
    let rounded = round_three_significant(ns).abs();
    let (value, unit) = if rounded < 1e3 {
        (ns, "ns")
    } else if rounded < 1e6 {
        (ns / 1e3, "µs")
    } else if rounded < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", three_significant(value))
}

/// Formats a gradient/primal ratio with three significant figures: `1.70`, `95.0`, `1230`.
pub fn format_ratio(ratio: f64) -> String {
    three_significant(ratio)
}

/// The text shown for a `null` or absent ratio.
pub const MISSING: &str = "missing";

/// The widest cell the table draws, in characters; longer text is cut with `…`.
pub const MAX_CELL_CHARS: usize = MAX_NAME_CHARS;

/// A name as one table cell: control characters shown escaped (a newline
/// would break the table and, in a Markdown comment, could end the code
/// fence around it) and at most [`MAX_CELL_CHARS`] characters.
fn cell(name: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in name.chars() {
        let piece: String = if c.is_control() {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if count + n > MAX_CELL_CHARS - 1 {
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        count += n;
    }
    out
}

/// Draws the report as a table with box-drawing characters: columns `Label`,
/// `Primal`, then one per AD column in the order of `columns`. Labels are
/// left-aligned, numbers right-aligned. The result ends with a newline.
///
/// Every cell is one line of at most [`MAX_CELL_CHARS`] characters, so the
/// table's size is bounded by the number of cases and columns whatever the
/// labels hold (a report built in code skips [`BenchReport::from_json_str`]'s
/// checks).
pub fn render_table(report: &BenchReport) -> String {
    use comfy_table::{Cell, CellAlignment, Table};
    // comfy-table's full UTF-8 style with a single-line header rule and no rules between rows.
    const STYLE: &str = "││──├─┼┤│    ┬┴┌┐└┘";
    let left = |text: String| Cell::new(text).set_alignment(CellAlignment::Left);
    let mut table = Table::new();
    table.load_preset(STYLE);
    let mut header = vec![left("Label".to_string()), left("Primal".to_string())];
    header.extend(report.columns.iter().map(|c| left(cell(c))));
    table.set_header(header);
    for case in &report.cases {
        let mut row = vec![
            left(cell(&case.label)),
            Cell::new(format_duration_ns(case.primal_ns)),
        ];
        row.extend(report.columns.iter().map(|column| {
            Cell::new(
                case.ratio(column)
                    .map_or_else(|| MISSING.to_string(), format_ratio),
            )
        }));
        table.add_row(row);
    }
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    let mut out = table.to_string();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_the_unit_after_rounding() {
        assert_eq!(format_duration_ns(85.0), "85.0 ns");
        assert_eq!(format_duration_ns(1.0), "1.00 ns");
        assert_eq!(format_duration_ns(0.5), "0.500 ns");
        assert_eq!(format_duration_ns(999.4), "999 ns");
        // 999.7 ns rounds to 1000 ns, which is shown as 1.00 µs, never "1000 ns".
        assert_eq!(format_duration_ns(999.7), "1.00 µs");
        assert_eq!(format_duration_ns(1234.0), "1.23 µs");
        assert_eq!(format_duration_ns(45_600_000.0), "45.6 ms");
        assert_eq!(format_duration_ns(2e9), "2.00 s");
        assert_eq!(format_duration_ns(1.234e12), "1230 s");
    }

    #[test]
    fn ratios_have_three_significant_figures() {
        assert_eq!(format_ratio(1.7), "1.70");
        assert_eq!(format_ratio(95.0), "95.0");
        assert_eq!(format_ratio(1234.5), "1230");
        assert_eq!(format_ratio(0.012345), "0.0123");
        assert_eq!(format_ratio(9.996), "10.0");
        assert_eq!(format_ratio(0.0), "0.00");
    }

    #[test]
    fn syntax_errors_name_file_and_line() {
        let err =
            BenchReport::from_json_str("{\n  \"schema_version\": 1,\n  \"columns\": [\n", "b.json")
                .unwrap_err();
        assert_eq!(err.path, "b.json");
        assert!(err.line >= 3, "{err}");
        assert!(err.to_string().starts_with("b.json:"), "{err}");
    }

    #[test]
    fn semantic_errors_point_at_the_case() {
        let text = "{\n\"schema_version\": 1,\n\"columns\": [\"mochi\"],\n\"cases\": [\n{\"label\": \"a\", \"primal_ns\": 1.0, \"ratios\": {\"mochi\": 1.0}},\n{\"label\": \"b\", \"primal_ns\": -3.0, \"ratios\": {\"mochi\": 1.0}}\n]}";
        let err = BenchReport::from_json_str(text, "r.json").unwrap_err();
        assert_eq!(err.line, 6, "{err}");
        assert!(err.message.contains("primal_ns is -3"), "{err}");

        let unknown = text
            .replace("-3.0", "3.0")
            .replace("\"mochi\": 1.0}}\n]", "\"moch\": 2.0}}\n]");
        let err = BenchReport::from_json_str(&unknown, "r.json").unwrap_err();
        assert!(err.message.contains("`moch`"), "{err}");

        let version = text.replace("\"schema_version\": 1", "\"schema_version\": 2");
        let err = BenchReport::from_json_str(&version, "r.json").unwrap_err();
        assert_eq!((err.line, err.column), (2, 1), "{err}");
    }

    fn one_case(label: &str) -> BenchReport {
        BenchReport {
            schema_version: 1,
            columns: vec!["mochi".into()],
            cases: vec![BenchCase {
                label: label.into(),
                primal_ns: 1.0,
                ratios: BTreeMap::from([("mochi".to_string(), Some(1.0))]),
                times_ns: None,
                bytes_per_gradient: None,
                extra: BTreeMap::new(),
            }],
            meta: None,
        }
    }

    #[test]
    fn a_huge_label_does_not_blow_up_the_table() {
        // Each row used to be padded to the longest label: 200 rows × 100 000
        // characters drew 60 MB. Now every cell is at most MAX_CELL_CHARS wide.
        let mut report = one_case(&"x".repeat(100_000));
        for i in 0..200 {
            let mut case = report.cases[0].clone();
            case.label = format!("c{i}");
            report.cases.push(case);
        }
        let table = render_table(&report);
        assert!(table.len() < 200 * 4 * 160, "{} bytes", table.len());
        assert!(table.contains(&format!("{}…", "x".repeat(MAX_CELL_CHARS - 1))));
    }

    #[test]
    fn a_label_cannot_break_the_table_lines() {
        let table = render_table(&one_case("a\n```\n@alice <img src=x>"));
        assert_eq!(table.lines().count(), 5, "{table}");
        assert!(table.contains("a\\n```\\n@alice"), "{table}");
    }

    #[test]
    fn long_or_multi_line_names_and_duplicate_keys_are_refused() {
        let long = format!(
            r#"{{"schema_version":1,"columns":["mochi"],"cases":[{{"label":"{}","primal_ns":1,"ratios":{{}}}}]}}"#,
            "y".repeat(1_000_000)
        );
        let e = BenchReport::from_json_str(&long, "r.json").unwrap_err();
        assert!(e.message.contains("at most 100"), "{e}");
        let newline = r#"{"schema_version":1,"columns":["mochi"],"cases":[{"label":"a\n```","primal_ns":1,"ratios":{}}]}"#;
        let e = BenchReport::from_json_str(newline, "r.json").unwrap_err();
        assert!(e.message.contains("control character"), "{e}");
        let twice = "{\"schema_version\":1,\"columns\":[\"mochi\"],\"cases\":[\n{\"label\":\"a\",\"primal_ns\":1,\"ratios\":{\"mochi\":1.0,\"mochi\":9.0}}]}";
        let e = BenchReport::from_json_str(twice, "r.json").unwrap_err();
        assert!(e.message.contains("`mochi` appears twice"), "{e}");
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn extra_fields_survive_a_round_trip() {
        let text = r#"{"schema_version": 1, "columns": ["mochi"], "meta": {"commit": "abc"},
            "cases": [{"label": "a", "primal_ns": 2.0, "ratios": {"mochi": null},
                       "times_ns": {"mochi": 4.0}, "bytes_per_gradient": {"mochi": 0},
                       "note": "warm"}]}"#;
        let report = BenchReport::from_json_str(text, "r.json").unwrap();
        assert_eq!(report.cases[0].ratio("mochi"), None);
        assert_eq!(report.cases[0].extra["note"], "warm");
        let again = BenchReport::from_json_str(&report.to_json_string(), "again.json").unwrap();
        assert_eq!(again, report);
    }
}
