//! lcov tracefiles, as `cargo llvm-cov --lcov` writes them.
//!
//! Records read: `SF` (source file), `DA` (line hits), `LF`/`LH` (line
//! totals, checked to be numbers), `BRDA` (branch hits) and `end_of_record`.
//! Every other record (`TN`, `FN`, `FNDA`, `FNF`, `FNH`, `BRF`, `BRH`, `VER`, …)
//! is ignored. Paths are made relative to the repository root.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::input::InputError;

/// Hits per line and branch totals of one source file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCoverage {
    /// Execution count per 1-based line; a line absent here is not coverable.
    pub lines: BTreeMap<u32, u64>,
    /// Branches seen (`BRDA` records).
    pub branches: u64,
    /// Branches taken at least once.
    pub branches_hit: u64,
}

impl FileCoverage {
    /// Number of coverable lines.
    pub fn coverable(&self) -> usize {
        self.lines.len()
    }

    /// Number of lines executed at least once.
    pub fn covered(&self) -> usize {
        self.lines.values().filter(|hits| **hits > 0).count()
    }
}

/// A whole report: coverage per file, keyed by path relative to the repository root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Files by normalised path (forward slashes, relative to the root when inside it).
    pub files: BTreeMap<String, FileCoverage>,
}

/// Covered and coverable counts with the percentage they make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// Lines executed at least once.
    pub covered: usize,
    /// Lines that could be executed.
    pub coverable: usize,
}

impl Totals {
    /// covered ÷ coverable × 100, or `None` when nothing is coverable.
    pub fn percent(&self) -> Option<f64> {
        (self.coverable > 0).then(|| self.covered as f64 * 100.0 / self.coverable as f64)
    }
}

impl Coverage {
    /// Line totals over every file.
    pub fn totals(&self) -> Totals {
        Totals {
            covered: self.files.values().map(FileCoverage::covered).sum(),
            coverable: self.files.values().map(FileCoverage::coverable).sum(),
        }
    }

    /// Branch totals over every file: (taken, seen).
    pub fn branch_totals(&self) -> (u64, u64) {
        self.files.values().fold((0, 0), |(hit, all), f| {
            (hit + f.branches_hit, all + f.branches)
        })
    }

    /// Reads and parses the tracefile at `path`.
    pub fn read(path: &Path, repo_root: &Path) -> Result<Self, InputError> {
        let text = crate::input::read_text(path, crate::input::Kind::Lcov)?;
        Self::parse(&text, path, repo_root)
    }

    /// Parses tracefile text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path, repo_root: &Path) -> Result<Self, InputError> {
        let mut coverage = Coverage::default();
        let mut current: Option<(String, FileCoverage)> = None;
        let mut saw_record = false;
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let err = |message: String| InputError::new(path, line_no, message);
            if line == "end_of_record" {
                let (name, file) = current.take().ok_or_else(|| {
                    err("`end_of_record` without an open `SF:` record".to_string())
                })?;
                merge(coverage.files.entry(name).or_default(), file);
                continue;
            }
            let Some((tag, value)) = line.split_once(':') else {
                // A line with no `TAG:` shape is not lcov at all.
                return Err(err(format!(
                    "expected an lcov record `TAG:value` or `end_of_record`, found `{}`",
                    shorten(line)
                )));
            };
            match tag {
                "SF" => {
                    if let Some((open, _)) = &current {
                        return Err(err(format!(
                            "`SF:` starts a new file while the record for `{open}` is still open; expected `end_of_record` first"
                        )));
                    }
                    if value.is_empty() {
                        return Err(err("`SF:` has an empty path".to_string()));
                    }
                    saw_record = true;
                    current = Some((normalise(value, repo_root), FileCoverage::default()));
                }
                "DA" => {
                    let file = open_file(&mut current, tag, &err)?;
                    let mut parts = value.split(',');
                    let line_number = parse_num::<u32>(parts.next(), "line number", value, &err)?;
                    let hits = parse_hits(parts.next(), value, &err)?;
                    if line_number == 0 {
                        return Err(err(format!("`DA:{value}`: line numbers start at 1")));
                    }
                    let entry = file.lines.entry(line_number).or_insert(0);
                    *entry = entry.saturating_add(hits);
                }
                "BRDA" => {
                    let file = open_file(&mut current, tag, &err)?;
                    let parts: Vec<&str> = value.split(',').collect();
                    if parts.len() != 4 {
                        return Err(err(format!(
                            "`BRDA:{value}`: expected `line,block,branch,taken`"
                        )));
                    }
                    parse_num::<u32>(Some(parts[0]), "line number", value, &err)?;
                    file.branches += 1;
                    if parts[3] != "-" {
                        let taken = parse_num::<u64>(Some(parts[3]), "taken count", value, &err)?;
                        if taken > 0 {
                            file.branches_hit += 1;
                        }
                    }
                }
                "LF" | "LH" => {
                    open_file(&mut current, tag, &err)?;
                    parse_num::<u64>(Some(value), "count", value, &err)?;
                }
                _ => {
                    // Unknown or unused records (TN, FN, FNDA, BRF, …) are ignored.
                }
            }
        }
        if let Some((open, _)) = current {
            return Err(InputError::new(
                path,
                text.lines().count(),
                format!("the file ends inside the record for `{open}`; expected `end_of_record` (is the report truncated?)"),
            ));
        }
        if !saw_record {
            return Err(InputError::new(
                path,
                0,
                "no `SF:` record found; is this an lcov tracefile (`cargo llvm-cov --lcov --output-path FILE`)?",
            ));
        }
        Ok(coverage)
    }
}

fn merge(into: &mut FileCoverage, from: FileCoverage) {
    for (line, hits) in from.lines {
        let entry = into.lines.entry(line).or_insert(0);
        *entry = entry.saturating_add(hits);
    }
    into.branches += from.branches;
    into.branches_hit += from.branches_hit;
}

fn open_file<'a>(
    current: &'a mut Option<(String, FileCoverage)>,
    tag: &str,
    err: &dyn Fn(String) -> InputError,
) -> Result<&'a mut FileCoverage, InputError> {
    match current {
        Some((_, file)) => Ok(file),
        None => Err(err(format!(
            "`{tag}:` record outside a file; expected `SF:<path>` before it"
        ))),
    }
}

fn parse_num<T>(
    field: Option<&str>,
    what: &str,
    record: &str,
    err: &dyn Fn(String) -> InputError,
) -> Result<T, InputError>
where
    T: std::str::FromStr<Err = std::num::ParseIntError> + Bounded,
{
    let field = field.unwrap_or("").trim();
    field.parse::<T>().map_err(|e| {
        let problem = match e.kind() {
            std::num::IntErrorKind::PosOverflow => {
                format!("is larger than {}, the largest supported", T::MAX_TEXT)
            }
            _ => "is not a non-negative whole number".to_string(),
        };
        err(format!(
            "`{}`: the {what} `{}` {problem}",
            shorten(record),
            shorten(field)
        ))
    })
}

/// The largest value of an integer type, as text for error messages.
trait Bounded {
    const MAX_TEXT: &'static str;
}

impl Bounded for u32 {
    const MAX_TEXT: &'static str = "4294967295";
}

impl Bounded for u64 {
    const MAX_TEXT: &'static str = "18446744073709551615";
}

/// Hit counts are whole numbers, but some tools write large counts as floats (`1.2e3`).
fn parse_hits(
    field: Option<&str>,
    record: &str,
    err: &dyn Fn(String) -> InputError,
) -> Result<u64, InputError> {
    let field = field.unwrap_or("").trim();
    if let Ok(n) = field.parse::<u64>() {
        return Ok(n);
    }
    match field.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x.round() as u64),
        _ => Err(err(format!(
            "`DA:{}`: the hit count `{field}` is not a non-negative number",
            shorten(record)
        ))),
    }
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Makes `path` relative to `repo_root` when it lies inside it, with forward slashes.
pub fn normalise(path: &str, repo_root: &Path) -> String {
    let p = PathBuf::from(path);
    let relative = if p.is_absolute() {
        p.strip_prefix(repo_root)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| {
                // The root may be given through a symlink; compare canonical forms too.
                match (repo_root.canonicalize(), p.canonicalize()) {
                    (Ok(root), Ok(file)) => file
                        .strip_prefix(&root)
                        .map(Path::to_path_buf)
                        .unwrap_or(p.clone()),
                    _ => p.clone(),
                }
            })
    } else {
        p
    };
    let text = relative.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").unwrap_or(&text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Coverage, InputError> {
        Coverage::parse(text, Path::new("t.lcov"), Path::new("/repo"))
    }

    #[test]
    fn reads_lines_branches_and_ignores_unknown_records() {
        let c = parse(
            "TN:\nSF:/repo/src/a.rs\nFN:1,f\nFNDA:2,f\nDA:1,2\nDA:2,0\nDA:3,5\nBRDA:1,0,0,1\nBRDA:1,0,1,-\nXYZ:whatever\nLF:3\nLH:2\nend_of_record\n",
        )
        .unwrap();
        let file = &c.files["src/a.rs"];
        assert_eq!((file.covered(), file.coverable()), (2, 3));
        assert_eq!((file.branches_hit, file.branches), (1, 2));
    }

    #[test]
    fn duplicate_records_of_one_file_are_merged() {
        let c = parse(
            "SF:src/a.rs\nDA:1,0\nend_of_record\nSF:./src/a.rs\nDA:1,3\nDA:2,0\nend_of_record\n",
        )
        .unwrap();
        assert_eq!(c.files["src/a.rs"].lines[&1], 3);
        assert_eq!(
            c.totals(),
            Totals {
                covered: 1,
                coverable: 2
            }
        );
    }

    #[test]
    fn paths_outside_the_root_stay_absolute() {
        assert_eq!(
            normalise("/elsewhere/x.rs", Path::new("/repo")),
            "/elsewhere/x.rs"
        );
        assert_eq!(
            normalise("/repo/bot/src/lib.rs", Path::new("/repo")),
            "bot/src/lib.rs"
        );
        assert_eq!(
            normalise("bot/src/lib.rs", Path::new("/repo")),
            "bot/src/lib.rs"
        );
    }

    #[test]
    fn malformed_input_names_the_line() {
        let e = parse("SF:a.rs\nDA:x,1\nend_of_record\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("t.lcov:2: `x,1`"), "{e}");
        let e = parse("SF:a.rs\nDA:1,1\n").unwrap_err();
        assert!(e.message.contains("ends inside"), "{e}");
        let e = parse("DA:1,1\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("SF:a.rs\nSF:b.rs\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("hello world\n").unwrap_err();
        assert!(e.message.contains("TAG:value"), "{e}");
        let e = parse("").unwrap_err();
        assert!(e.message.contains("no `SF:`"), "{e}");
        let e = parse("SF:a.rs\nDA:4294967296,1\nend_of_record\n").unwrap_err();
        assert!(
            e.message
                .contains("larger than 4294967295, the largest supported"),
            "{e}"
        );
    }
}
