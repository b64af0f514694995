//! Patch coverage: among the lines a pull request adds or changes, how many
//! can be executed (appear in the lcov report) and how many were.

use super::diff::ChangedLines;
use super::lcov::{Coverage, Totals};

/// Patch coverage of one file that has changed coverable lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// Path relative to the repository root.
    pub path: String,
    /// Changed coverable lines, and how many of them ran.
    pub totals: Totals,
    /// Changed coverable lines that never ran, ascending.
    pub missing: Vec<u32>,
}

/// Patch coverage of a whole pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchCoverage {
    /// Totals over every changed coverable line.
    pub totals: Totals,
    /// Files with at least one changed coverable line, by path.
    pub files: Vec<FilePatch>,
}

impl PatchCoverage {
    /// Intersects the changed lines with the head coverage report. Changed
    /// lines absent from the report (comments, blank lines, files not
    /// compiled into the tests) are not coverable and do not count.
    pub fn compute(changed: &ChangedLines, head: &Coverage) -> Self {
        let mut files = Vec::new();
        for (path, lines) in &changed.files {
            let Some(file) = head.files.get(path) else {
                continue;
            };
            let mut covered = 0;
            let mut missing = Vec::new();
            for line in lines {
                match file.lines.get(line) {
                    Some(0) => missing.push(*line),
                    Some(_) => covered += 1,
                    None => {}
                }
            }
            let coverable = covered + missing.len();
            if coverable > 0 {
                files.push(FilePatch {
                    path: path.clone(),
                    totals: Totals { covered, coverable },
                    missing,
                });
            }
        }
        let totals = Totals {
            covered: files.iter().map(|f| f.totals.covered).sum(),
            coverable: files.iter().map(|f| f.totals.coverable).sum(),
        };
        PatchCoverage { totals, files }
    }

    /// Files that have at least one missing line.
    pub fn files_with_missing_lines(&self) -> impl Iterator<Item = &FilePatch> {
        self.files.iter().filter(|f| !f.missing.is_empty())
    }
}

/// Formats ascending line numbers as ranges of consecutive numbers: `12-15, 20`.
pub fn line_ranges(lines: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut iter = lines.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while end
            .checked_add(1)
            .is_some_and(|next| iter.peek() == Some(&next))
        {
            end += 1;
            iter.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn only_changed_coverable_lines_count() {
        let head = Coverage::parse(
            "SF:src/a.rs\nDA:1,1\nDA:2,0\nDA:3,0\nDA:4,0\nDA:5,0\nDA:7,0\nend_of_record\nSF:src/b.rs\nDA:1,4\nend_of_record\n",
            Path::new("h.lcov"),
            Path::new("/"),
        )
        .unwrap();
        let diff = ChangedLines::parse(
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -0,0 +1,7 @@\n+1\n+2\n+3\n+4\n+5\n+6\n+7\n--- a/README.md\n+++ b/README.md\n@@ -0,0 +1 @@\n+doc\n--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1 +1 @@\n-x\n+y\n",
            Path::new("d.diff"),
        )
        .unwrap();
        let patch = PatchCoverage::compute(&diff, &head);
        assert_eq!(
            patch.totals,
            Totals {
                covered: 2,
                coverable: 7
            }
        );
        let a = &patch.files[0];
        assert_eq!(a.missing, vec![2, 3, 4, 5, 7]);
        assert_eq!(line_ranges(&a.missing), "2-5, 7");
        assert_eq!(patch.files_with_missing_lines().count(), 1);
    }

    #[test]
    fn ranges() {
        assert_eq!(line_ranges(&[]), "");
        assert_eq!(line_ranges(&[20]), "20");
        assert_eq!(
            line_ranges(&[u32::MAX - 1, u32::MAX]),
            "4294967294-4294967295"
        );
        assert_eq!(
            line_ranges(&[12, 13, 14, 15, 20, 22, 23]),
            "12-15, 20, 22-23"
        );
    }
}
