//! The review metadata at the top of a design doc:
//!
//! ```text
//! ---
//! last-reviewed: 2026-11-29
//! covers: [bot/src/**, bot/ratio-table/src/**]
//! review-minutes: 20
//! owners: [mochi-maintainers]
//! ---
//! ```
//!
//! Lists may also be written one `- item` per line. Other keys are ignored.

use chrono::NaiveDate;

use crate::markdown::code_span;

/// A doc's parsed review metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter {
    /// The day of the last review.
    pub last_reviewed: NaiveDate,
    /// Paths or globs (relative to the repository root) the doc describes.
    pub covers: Vec<String>,
    /// How long a review takes.
    pub review_minutes: u32,
    /// Who to mention; may be empty.
    pub owners: Vec<String>,
}

/// Why a doc's front matter could not be used; `line` is 1-based within the doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatterProblem {
    /// Line of the problem (1 when the block is missing).
    pub line: usize,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// Parses the front matter, returning it with the 1-based line where the body
/// starts; `Ok(None)` when the doc has none at all.
pub fn parse(text: &str) -> Result<Option<(FrontMatter, usize)>, FrontMatterProblem> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return Ok(None);
    }
    let Some(end) = lines
        .iter()
        .skip(1)
        .position(|l| l.trim_end() == "---")
        .map(|i| i + 1)
    else {
        return Err(problem(
            1,
            "the front matter opened with `---` is never closed; add a `---` line after it",
        ));
    };
    let mut last_reviewed = None;
    let mut covers: Option<Vec<String>> = None;
    let mut review_minutes = None;
    let mut owners = Vec::new();
    let mut i = 1;
    while i < end {
        let line_no = i + 1;
        let line = lines[i];
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            return Err(problem(
                line_no,
                &format!("{} is not `key: value`", code_span(trimmed)),
            ));
        };
        let key = key.trim();
        let value = value.trim();
        // A block list: the value is empty and `- item` lines follow.
        let mut list_items = |value: &str| -> Result<Vec<String>, FrontMatterProblem> {
            if value.is_empty() {
                let mut items = Vec::new();
                while i < end {
                    let item = lines[i].trim();
                    if let Some(rest) = item.strip_prefix("- ") {
                        items.push(unquote(rest.trim()).to_string());
                        i += 1;
                    } else if item.is_empty() {
                        i += 1;
                    } else {
                        break;
                    }
                }
                Ok(items)
            } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                Ok(inner
                    .split(',')
                    .map(|s| unquote(s.trim()).to_string())
                    .filter(|s| !s.is_empty())
                    .collect())
            } else {
                Err(problem(
                    line_no,
                    &format!(
                        "{} must be a list, `[a, b]` or `- item` lines; found {}",
                        code_span(key),
                        code_span(value)
                    ),
                ))
            }
        };
        match key {
            "last-reviewed" => {
                let date = unquote(value).parse::<NaiveDate>().map_err(|_| {
                    problem(
                        line_no,
                        &format!(
                            "{} is not a date; expected YYYY-MM-DD, e.g. 2026-11-29",
                            code_span(&format!("last-reviewed: {value}"))
                        ),
                    )
                })?;
                last_reviewed = Some(date);
            }
            "covers" => covers = Some(list_items(value)?),
            "review-minutes" => {
                let minutes = unquote(value)
                    .parse::<u32>()
                    .ok()
                    .filter(|m| *m > 0)
                    .ok_or_else(|| {
                        problem(
                            line_no,
                            &format!(
                                "{} is not a positive whole number of minutes, e.g. 20",
                                code_span(&format!("review-minutes: {value}"))
                            ),
                        )
                    })?;
                review_minutes = Some(minutes);
            }
            "owners" => {
                owners = list_items(value)?;
                // Owners are mentioned in the tracking issue: only logins and teams.
                if let Some(bad) = owners.iter().find(|o| !is_login_or_team(o)) {
                    return Err(problem(
                        line_no,
                        &format!(
                            "owner {} is not a GitHub login or team; expected e.g. `alice` or `org/team`",
                            code_span(bad)
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    let missing = |key: &str, example: &str| {
        problem(
            1,
            &format!("the front matter has no `{key}`; add e.g. `{key}: {example}`"),
        )
    };
    let front = FrontMatter {
        last_reviewed: last_reviewed.ok_or_else(|| missing("last-reviewed", "2026-11-29"))?,
        covers: covers.ok_or_else(|| missing("covers", "[engine/mochi/src/**]"))?,
        review_minutes: review_minutes.ok_or_else(|| missing("review-minutes", "20"))?,
        owners,
    };
    Ok(Some((front, end + 2)))
}

/// `alice`, `org/team`: letters, digits, `-`, `_` and `.`, with at most one `/`.
fn is_login_or_team(owner: &str) -> bool {
    let owner = owner.strip_prefix('@').unwrap_or(owner);
    let part = |p: &str| {
        !p.is_empty()
            && p.len() <= 100
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match owner.split_once('/') {
        Some((org, team)) => part(org) && part(team),
        None => part(owner),
    }
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .unwrap_or(s)
}

fn problem(line: usize, message: &str) -> FrontMatterProblem {
    FrontMatterProblem {
        line,
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_block_lists() {
        let (fm, body_line) = parse("---\nlast-reviewed: 2026-11-29\ncovers: [bot/src/**, \"bot/ratio-table/src/**\"]\nreview-minutes: 20\nowners:\n  - alice\n  - org/team\ntitle: ignored\n---\n# Bot\n")
            .unwrap()
            .unwrap();
        assert_eq!(fm.last_reviewed, "2026-11-29".parse().unwrap());
        assert_eq!(fm.covers, vec!["bot/src/**", "bot/ratio-table/src/**"]);
        assert_eq!(fm.review_minutes, 20);
        assert_eq!(fm.owners, vec!["alice", "org/team"]);
        assert_eq!(body_line, 10);
    }

    #[test]
    fn absent_and_malformed() {
        assert_eq!(parse("# No front matter\n").unwrap(), None);
        assert_eq!(
            parse("---\nlast-reviewed: 2026-11-29\n").unwrap_err().line,
            1
        );
        let e = parse("---\nlast-reviewed: yesterday\ncovers: []\nreview-minutes: 5\n---\n")
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("YYYY-MM-DD"));
        let e = parse("---\nlast-reviewed: 2026-01-01\ncovers: []\nreview-minutes: 0\n---\n")
            .unwrap_err();
        assert_eq!(e.line, 4);
        let e = parse("---\nlast-reviewed: 2026-01-01\ncovers: x\nreview-minutes: 3\n---\n")
            .unwrap_err();
        assert!(e.message.contains("must be a list"), "{e:?}");
        let e = parse("---\nlast-reviewed: 2026-01-01\ncovers: []\nreview-minutes: 3\nowners: [\"x <img src=y>\"]\n---\n")
            .unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("not a GitHub login"), "{e:?}");
        let e = parse("---\nlast-reviewed: `x\ncovers: []\nreview-minutes: 3\n---\n").unwrap_err();
        assert!(
            e.message.starts_with("``last-reviewed: `x`` is not a date"),
            "{e:?}"
        );
        let e = parse("---\nlast-reviewed: 2026-01-01\nreview-minutes: 3\n---\n").unwrap_err();
        assert!(e.message.contains("`covers`"), "{e:?}");
    }
}
