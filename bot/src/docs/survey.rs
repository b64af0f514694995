//! What is known about each design doc: its front matter and the signals
//! that it needs review (age, commits to covered paths, vanished paths,
//! broken relative links).

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::NaiveDate;
use globset::{Glob, GlobSetBuilder};

use super::front_matter::{self, FrontMatter, FrontMatterProblem};

/// Evidence that a doc needs review.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signals {
    /// Days since `last-reviewed`.
    pub days_since_review: i64,
    /// Days beyond the review interval (0 when within it).
    pub overdue_days: i64,
    /// Commits touching covered paths after the review day.
    pub commits: usize,
    /// `covers` entries that match nothing in the repository.
    pub vanished: Vec<String>,
    /// Relative links whose target does not exist: (line, target).
    pub broken_links: Vec<(usize, String)>,
}

impl Signals {
    /// Whether any signal asks for a review.
    pub fn needs_review(&self) -> bool {
        self.overdue_days > 0
            || self.commits > 0
            || !self.vanished.is_empty()
            || !self.broken_links.is_empty()
    }

    /// The ranking score: overdue days + 7 per commit + 30 per vanished path or broken link.
    pub fn score(&self) -> i64 {
        self.overdue_days
            + 7 * self.commits as i64
            + 30 * (self.vanished.len() + self.broken_links.len()) as i64
    }
}

/// One surveyed doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocStatus {
    /// Front matter read; signals gathered.
    Reviewable {
        /// Path relative to the repository root, e.g. `design-docs/bot.md`.
        path: String,
        /// The metadata.
        front: FrontMatter,
        /// The evidence.
        signals: Signals,
    },
    /// The front matter is missing or malformed: a finding, not a crash.
    Finding {
        /// Path relative to the repository root.
        path: String,
        /// What is wrong.
        problem: FrontMatterProblem,
    },
}

/// Surveys every `*.md` directly in `docs_dir` (relative to `root`), sorted by
/// name. An index `README.md` without front matter is skipped; any other doc
/// without it is a finding.
pub fn survey(
    root: &Path,
    docs_dir: &Path,
    today: NaiveDate,
    interval_days: u32,
) -> Result<Vec<DocStatus>, SurveyError> {
    let dir = root.join(docs_dir);
    let entries = std::fs::read_dir(&dir).map_err(|source| SurveyError::DocsDir {
        dir: dir.clone(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    let tracked = tracked_files(root)?;
    let mut out = Vec::new();
    for file in files {
        let rel = relative(root, &file);
        let text = match crate::input::read_text(&file, crate::input::Kind::Doc) {
            Ok(t) => t,
            Err(e) => {
                out.push(DocStatus::Finding {
                    path: rel,
                    problem: FrontMatterProblem {
                        line: 1,
                        message: e.message,
                    },
                });
                continue;
            }
        };
        let is_index = file.file_name().is_some_and(|n| n == "README.md");
        match front_matter::parse(&text) {
            Ok(Some((front, _))) => {
                let days_since_review = (today - front.last_reviewed).num_days();
                let signals = Signals {
                    days_since_review,
                    overdue_days: (days_since_review - i64::from(interval_days)).max(0),
                    commits: commits_since(root, &front.covers, front.last_reviewed, today)?,
                    vanished: vanished(root, &front.covers, &tracked),
                    broken_links: broken_links(root, &file, &text),
                };
                out.push(DocStatus::Reviewable { path: rel, front, signals });
            }
            Ok(None) if is_index => {}
            Ok(None) => out.push(DocStatus::Finding {
                path: rel,
                problem: FrontMatterProblem {
                    line: 1,
                    message: "has no front matter; start the doc with a `---` block giving last-reviewed, covers and review-minutes".to_string(),
                },
            }),
            Err(problem) => out.push(DocStatus::Finding { path: rel, problem }),
        }
    }
    Ok(out)
}

fn relative(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Why the docs could not be surveyed.
#[derive(Debug, thiserror::Error)]
pub enum SurveyError {
    /// The docs folder cannot be listed.
    #[error("cannot read the design-docs folder {}: {source}; check `doc_review.docs_dir` and `--repo-root`", dir.display())]
    DocsDir {
        /// The folder.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// git could not be started.
    #[error("cannot run git ({0}); doc-review needs git on PATH")]
    GitMissing(std::io::Error),
    /// git ran and failed.
    #[error("`git {args}` failed in {}: {}; check that `--repo-root` is a git checkout with its history (fetch-depth: 0 in Actions)", root.display(), crate::input::one_line(stderr.trim(), 300))]
    GitFailed {
        /// The git arguments.
        args: String,
        /// Where git ran.
        root: PathBuf,
        /// What git said.
        stderr: String,
    },
}

fn git(root: &Path, args: &[&str]) -> Result<String, SurveyError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(SurveyError::GitMissing)?;
    if !output.status.success() {
        return Err(SurveyError::GitFailed {
            args: args.join(" "),
            root: root.to_path_buf(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn tracked_files(root: &Path) -> Result<Vec<String>, SurveyError> {
    Ok(git(root, &["ls-files"])?
        .lines()
        .map(str::to_string)
        .collect())
}

/// Commits after the review day, up to the end of `today`, touching any covered path.
fn commits_since(
    root: &Path,
    covers: &[String],
    reviewed: NaiveDate,
    today: NaiveDate,
) -> Result<usize, SurveyError> {
    if covers.is_empty() {
        return Ok(0);
    }
    let after = format!("--after={reviewed}T23:59:59");
    let before = format!("--before={today}T23:59:59");
    let mut args = vec!["log", "--format=%H", after.as_str(), before.as_str(), "--"];
    let specs: Vec<String> = covers.iter().map(|c| format!(":(glob){c}")).collect();
    args.extend(specs.iter().map(String::as_str));
    // A repository without commits has no history to count.
    match git(root, &args) {
        Ok(out) => Ok(out.lines().filter(|l| !l.trim().is_empty()).count()),
        Err(SurveyError::GitFailed { stderr, .. })
            if stderr.contains("does not have any commits") =>
        {
            Ok(0)
        }
        Err(e) => Err(e),
    }
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// Covered entries that name nothing: a plain path that does not exist, or a
/// glob that matches no tracked file.
fn vanished(root: &Path, covers: &[String], tracked: &[String]) -> Vec<String> {
    covers
        .iter()
        .filter(|c| {
            if is_glob(c) {
                let Ok(glob) = Glob::new(c) else { return true };
                let Ok(set) = GlobSetBuilder::new().add(glob).build() else {
                    return true;
                };
                !tracked.iter().any(|t| set.is_match(t))
            } else {
                !root.join(c.trim_end_matches('/')).exists()
            }
        })
        .cloned()
        .collect()
}

/// Relative Markdown links (`[text](target)`) outside code whose target does not exist.
pub fn broken_links(root: &Path, doc: &Path, text: &str) -> Vec<(usize, String)> {
    let base = doc.parent().unwrap_or(root);
    let mut broken = Vec::new();
    let mut in_fence = false;
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let prose = strip_inline_code(line);
        let mut rest = prose.as_str();
        while let Some(start) = rest.find("](") {
            rest = &rest[start + 2..];
            let Some(end) = rest.find(')') else { break };
            let raw = rest[..end].trim();
            rest = &rest[end + 1..];
            let target = raw
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_start_matches('<')
                .trim_end_matches('>');
            if target.is_empty()
                || target.starts_with('#')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let path_part = target.split(['#', '?']).next().unwrap_or(target);
            if path_part.is_empty() {
                continue;
            }
            let resolved = match path_part.strip_prefix('/') {
                Some(from_root) => root.join(from_root),
                None => base.join(path_part),
            };
            if !resolved.exists() {
                broken.push((index + 1, target.to_string()));
            }
        }
    }
    broken
}

fn strip_inline_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_outside_code_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/there.md"), "x").unwrap();
        std::fs::write(dir.path().join("top.rs"), "x").unwrap();
        let doc = dir.path().join("docs/d.md");
        let text = "[ok](there.md#part) [gone](missing.md) [web](https://x.org/a) [anchor](#a)\n`[not](code.md)`\n```\n[fenced](fence.md)\n```\n[root](/top.rs) [up](../top.rs) [bad](../nope/x.rs \"title\")\n";
        assert_eq!(
            broken_links(dir.path(), &doc, text),
            vec![
                (1, "missing.md".to_string()),
                (6, "../nope/x.rs".to_string())
            ]
        );
    }

    #[test]
    fn vanished_paths_and_globs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bot/src")).unwrap();
        let tracked = vec!["bot/src/lib.rs".to_string()];
        let covers = vec![
            "bot/src/".to_string(),
            "bot/src/**".to_string(),
            "engine/**".to_string(),
            "old.rs".to_string(),
        ];
        assert_eq!(
            vanished(dir.path(), &covers, &tracked),
            vec!["engine/**", "old.rs"]
        );
    }

    #[test]
    fn signals_score() {
        let s = Signals {
            days_since_review: 100,
            overdue_days: 10,
            commits: 2,
            vanished: vec!["x".into()],
            broken_links: vec![],
        };
        assert!(s.needs_review());
        assert_eq!(s.score(), 10 + 14 + 30);
        assert!(!Signals::default().needs_review());
    }
}
