//! Unified diffs as `git diff base...head` writes them: which lines of which
//! files a pull request adds or changes.
//!
//! Only the new side matters: a renamed file is known by its new path, a
//! deleted file contributes nothing, and binary files are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::input::InputError;

/// Lines added or changed per file (new path → 1-based line numbers in the new file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedLines {
    /// New-side line numbers per file, for every text file that still exists.
    pub files: BTreeMap<String, BTreeSet<u32>>,
}

impl ChangedLines {
    /// Reads and parses the diff at `path`.
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let text = crate::input::read_text(path, crate::input::Kind::Diff)?;
        Self::parse(&text, path)
    }

    /// Parses a whole unified diff; `path` only names the file in errors.
    ///
    /// A text with no file header at all (empty, or not a diff) is an error:
    /// read as "no changed lines" it would give a reassuring, wrong summary.
    pub fn parse(text: &str, path: &Path) -> Result<Self, InputError> {
        let mut changed = ChangedLines::default();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        // The file the hunks being read belong to; `None` for deleted or binary files.
        let mut target: Option<String> = None;
        let mut in_file = false;
        while i < lines.len() {
            let line = lines[i];
            let line_no = i + 1;
            if let Some(rest) = line.strip_prefix("diff --git ") {
                in_file = true;
                // Until `+++` says otherwise, the file is the `b/` side of the header.
                target = header_new_path(rest);
                i += 1;
                continue;
            }
            if line.starts_with("Binary files ") || line == "GIT binary patch" {
                target = None;
                i += 1;
                continue;
            }
            if line.starts_with("deleted file mode") {
                target = None;
                i += 1;
                continue;
            }
            if let Some(to) = line.strip_prefix("rename to ") {
                target = Some(unquote(to));
                i += 1;
                continue;
            }
            if line.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
                in_file = true;
                let new = lines[i + 1][4..].trim_end();
                target = if new == "/dev/null" {
                    None
                } else {
                    Some(strip_side(&unquote(strip_timestamp(new)), "b/"))
                };
                i += 2;
                continue;
            }
            if line.starts_with("@@") {
                if !in_file {
                    return Err(InputError::new(
                        path,
                        line_no,
                        "hunk header before any file header (`diff --git` or `---`/`+++`)",
                    ));
                }
                i = read_hunk(&lines, i, target.as_deref(), &mut changed, path)?;
                continue;
            }
            // Any other header line (index, mode, similarity, copy, …) is skipped.
            i += 1;
        }
        if !in_file {
            let what = if text.trim().is_empty() {
                "the diff is empty"
            } else {
                "no file header (`diff --git` or `---`/`+++`) found: this is not a unified diff"
            };
            return Err(InputError::new(
                path,
                0,
                format!("{what}; pass the output of `git diff BASE...HEAD`"),
            ));
        }
        Ok(changed)
    }
}

/// Reads the hunk whose header is `lines[start]`, recording its added lines
/// under `target` (nothing when `None`); returns the index after the hunk.
fn read_hunk(
    lines: &[&str],
    start: usize,
    target: Option<&str>,
    changed: &mut ChangedLines,
    path: &Path,
) -> Result<usize, InputError> {
    let line = lines[start];
    let header_error = || {
        InputError::new(
            path,
            start + 1,
            format!("malformed hunk header `{line}`; expected `@@ -a,b +c,d @@` with line numbers below 2^32"),
        )
    };
    let (new_start, old_count, new_count) = parse_hunk_header(line).ok_or_else(header_error)?;
    // The last new line must be a line number too.
    if new_start.checked_add(new_count).is_none() {
        return Err(header_error());
    }
    let mut i = start + 1;
    let (mut old_left, mut new_left) = (old_count, new_count);
    let mut new_line = new_start;
    while old_left > 0 || new_left > 0 {
        let Some(body) = lines.get(i) else {
            return Err(InputError::new(
                path,
                lines.len(),
                format!("the diff ends inside the hunk `{line}`: {old_left} old and {new_left} new lines are missing (is it truncated?)"),
            ));
        };
        let here = i + 1;
        let short = |what: &str| {
            InputError::new(
                path,
                here,
                format!("the hunk `{line}` has more {what} lines than its header says"),
            )
        };
        match body.chars().next() {
            Some('+') => {
                if new_left == 0 {
                    return Err(short("added"));
                }
                if let Some(file) = target {
                    changed
                        .files
                        .entry(file.to_string())
                        .or_default()
                        .insert(new_line);
                }
                new_line += 1;
                new_left -= 1;
            }
            Some('-') => {
                if old_left == 0 {
                    return Err(short("removed"));
                }
                old_left -= 1;
            }
            // git writes an empty context line as a lone space, but some tools strip it.
            Some(' ') | None => {
                if old_left == 0 || new_left == 0 {
                    return Err(short("context"));
                }
                new_line += 1;
                old_left -= 1;
                new_left -= 1;
            }
            Some('\\') => {}
            Some(_) => {
                return Err(InputError::new(
                    path,
                    here,
                    format!("unexpected line `{body}` inside the hunk `{line}`: every line must start with ' ', '+', '-' or '\\'"),
                ))
            }
        }
        i += 1;
    }
    // A "\ No newline at end of file" may follow the last line.
    if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        i += 1;
    }
    Ok(i)
}

/// `a/x b/y` → `y`; quoted forms are unquoted.
fn header_new_path(rest: &str) -> Option<String> {
    if let Some(stripped) = rest.strip_suffix('"') {
        let start = stripped.rfind(" \"")?;
        return Some(strip_side(&unquote(&rest[start + 1..]), "b/"));
    }
    // Paths without spaces: the last word is the new side.
    let idx = rest.rfind(" b/")?;
    Some(rest[idx + 3..].to_string())
}

fn strip_timestamp(path: &str) -> &str {
    // `diff -u` writes `+++ b/file\t2026-01-01 ...`.
    path.split('\t').next().unwrap_or(path)
}

fn strip_side(path: &str, side: &str) -> String {
    path.strip_prefix(side).unwrap_or(path).to_string()
}

/// Undoes git's C-style quoting of unusual paths (`"a\tb"`); plain paths are returned as they are.
fn unquote(path: &str) -> String {
    let Some(inner) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return path.to_string();
    };
    let mut out = Vec::new();
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            let c = bytes[i + 1];
            match c {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'"' | b'\\' => out.push(c),
                b'0'..=b'7' => {
                    let end = (i + 4).min(bytes.len());
                    let octal = std::str::from_utf8(&bytes[i + 1..end])
                        .ok()
                        .and_then(|o| u8::from_str_radix(o, 8).ok());
                    if let Some(v) = octal {
                        out.push(v);
                        i = end;
                        continue;
                    }
                    out.push(c);
                }
                _ => out.push(c),
            }
            i += 2;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `@@ -a[,b] +c[,d] @@ ...` → (c, b, d); a missing count means 1.
fn parse_hunk_header(line: &str) -> Option<(u32, u32, u32)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (_, old_count) = range(old)?;
    let (new_start, new_count) = range(new)?;
    Some((new_start, old_count, new_count))
}

/// Files and added lines from the GitHub "list pull request files" answer,
/// whose `patch` fields hold the hunks without file headers. Each file's
/// hunks are read under its name as GitHub gives it, so a name holding a
/// newline or a space stays one name.
pub fn from_api_files(files: &[crate::github::PullFile]) -> Result<ChangedLines, InputError> {
    let mut changed = ChangedLines::default();
    for file in files {
        if file.status == "removed" {
            continue;
        }
        let Some(patch) = &file.patch else {
            // Binary files and very large diffs come without a patch.
            continue;
        };
        let source = format!(
            "<patch of `{}` from the API>",
            crate::input::one_line(&file.filename, 200)
        );
        let source = Path::new(&source);
        let lines: Vec<&str> = patch.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if lines[i].starts_with("@@") {
                i = read_hunk(&lines, i, Some(&file.filename), &mut changed, source)?;
            } else {
                return Err(InputError::new(
                    source,
                    i + 1,
                    format!(
                        "expected a hunk header `@@ -a,b +c,d @@`, found `{}`",
                        lines[i]
                    ),
                ));
            }
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ChangedLines, InputError> {
        ChangedLines::parse(text, Path::new("pr.diff"))
    }

    #[test]
    fn added_lines_are_numbered_in_the_new_file() {
        let d = parse(
            "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,4 +1,5 @@ fn f()\n ctx\n-old\n+new\n+more\n ctx\n\n@@ -20 +21,2 @@\n-x\n+y\n+z\n\\ No newline at end of file\n",
        )
        .unwrap();
        assert_eq!(
            d.files["src/a.rs"].iter().copied().collect::<Vec<_>>(),
            vec![2, 3, 21, 22]
        );
    }

    #[test]
    fn renames_use_the_new_path_and_deleted_or_binary_files_are_skipped() {
        let d = parse(concat!(
            "diff --git a/old.rs b/new.rs\nsimilarity index 90%\nrename from old.rs\nrename to new.rs\n",
            "--- a/old.rs\n+++ b/new.rs\n@@ -1,1 +1,1 @@\n-a\n+b\n",
            "diff --git a/gone.rs b/gone.rs\ndeleted file mode 100644\n--- a/gone.rs\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-a\n",
            "diff --git a/img.png b/img.png\nnew file mode 100644\nBinary files /dev/null and b/img.png differ\n",
            "diff --git a/moved.rs b/moved2.rs\nsimilarity index 100%\nrename from moved.rs\nrename to moved2.rs\n",
            "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+++ looks like a header\n+b\n",
        ))
        .unwrap();
        assert_eq!(
            d.files.keys().collect::<Vec<_>>(),
            vec!["new.rs", "new.txt"]
        );
        assert_eq!(d.files["new.txt"].len(), 2);
    }

    #[test]
    fn malformed_hunks_name_the_line() {
        let e = parse("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n").unwrap_err();
        assert!(e.message.contains("ends inside"), "{e}");
        let e = parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n*a\n").unwrap_err();
        assert_eq!(e.line, 4);
        let e = parse("--- a/x\n+++ b/x\n@@ -x +1 @@\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("@@ -1 +1 @@\n+a\n").unwrap_err();
        assert_eq!(e.line, 1);
    }

    #[test]
    fn huge_line_numbers_are_an_error_not_a_panic() {
        let e = parse("--- a/x\n+++ b/x\n@@ -0,0 +4294967295,2 @@\n+a\n+b\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("malformed hunk header"), "{e}");
        let e = parse("--- a/x\n+++ b/x\n@@ -0,0 +99999999999,1 @@\n+a\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        // The last representable line is still fine.
        let d = parse("--- a/x\n+++ b/x\n@@ -0,0 +4294967294,1 @@\n+a\n").unwrap();
        assert!(d.files["x"].contains(&4294967294));
    }

    #[test]
    fn empty_and_non_diff_inputs_are_refused() {
        let e = parse("").unwrap_err();
        assert!(e.message.contains("the diff is empty"), "{e}");
        let e = parse("SF:src/a.rs\nDA:1,1\nend_of_record\n").unwrap_err();
        assert!(e.message.contains("not a unified diff"), "{e}");
        // A diff that only deletes a file is a diff, with nothing changed.
        let d = parse("diff --git a/x b/x\ndeleted file mode 100644\n").unwrap();
        assert!(d.files.is_empty());
    }

    #[test]
    fn api_file_names_with_newlines_stay_one_name() {
        let files = vec![crate::github::PullFile {
            filename: "we\nird +++ b/x.rs".into(),
            status: "added".into(),
            patch: Some("@@ -0,0 +1,2 @@\n+a\n+b".into()),
        }];
        let d = from_api_files(&files).unwrap();
        assert_eq!(d.files.len(), 1);
        assert_eq!(d.files["we\nird +++ b/x.rs"].len(), 2);
    }

    #[test]
    fn quoted_paths_are_unquoted() {
        let d = parse("diff --git \"a/sp ace.rs\" \"b/sp ace.rs\"\n--- \"a/sp ace.rs\"\n+++ \"b/sp ace.rs\"\n@@ -0,0 +1 @@\n+x\n").unwrap();
        assert!(d.files.contains_key("sp ace.rs"), "{d:?}");
    }
}
