//! The day's plan: the most-needed docs that fit the budget, and the
//! tracking issue's body that lists them.

use chrono::NaiveDate;

use super::front_matter::FrontMatterProblem;
use super::survey::{DocStatus, Signals};
use crate::markdown;

/// Hidden marker that identifies the tracking issue.
pub const MARKER: &str = "<!-- mochi-bot:doc-review -->";

const LIST_PREFIX: &str = "<!-- mochi-bot:doc-list=";

/// A doc chosen or waiting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the repository root.
    pub path: String,
    /// Minutes its review takes.
    pub minutes: u32,
    /// Its owners.
    pub owners: Vec<String>,
    /// Why it needs review.
    pub signals: Signals,
}

/// The day's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The day planned for.
    pub today: NaiveDate,
    /// The budget in minutes.
    pub budget: u32,
    /// Docs to review today, most needed first.
    pub today_list: Vec<Entry>,
    /// Docs that need review but did not fit today.
    pub waiting: Vec<Entry>,
    /// Docs whose front matter is missing or malformed: (path, problem).
    pub findings: Vec<(String, FrontMatterProblem)>,
}

impl Plan {
    /// Ranks the docs that need review by score (then by days since review,
    /// then by path) and fills the budget greedily: a doc that does not fit
    /// is skipped for a smaller one further down. If even the most-needed doc
    /// is longer than the whole budget, it is planned alone.
    pub fn make(statuses: &[DocStatus], today: NaiveDate, budget: u32) -> Self {
        let mut needing: Vec<Entry> = Vec::new();
        let mut findings = Vec::new();
        for status in statuses {
            match status {
                DocStatus::Reviewable {
                    path,
                    front,
                    signals,
                } if signals.needs_review() => needing.push(Entry {
                    path: path.clone(),
                    minutes: front.review_minutes,
                    owners: front.owners.clone(),
                    signals: signals.clone(),
                }),
                DocStatus::Reviewable { .. } => {}
                DocStatus::Finding { path, problem } => {
                    findings.push((path.clone(), problem.clone()))
                }
            }
        }
        needing.sort_by(|a, b| {
            b.signals
                .score()
                .cmp(&a.signals.score())
                .then(
                    b.signals
                        .days_since_review
                        .cmp(&a.signals.days_since_review),
                )
                .then(a.path.cmp(&b.path))
        });
        let mut today_list = Vec::new();
        let mut waiting = Vec::new();
        // Sums in u64: minutes near u32::MAX add up without overflow.
        let mut used: u64 = 0;
        for entry in needing {
            let fits = used + u64::from(entry.minutes) <= u64::from(budget);
            if fits || today_list.is_empty() && waiting.is_empty() {
                used += u64::from(entry.minutes);
                today_list.push(entry);
            } else {
                waiting.push(entry);
            }
        }
        Plan {
            today,
            budget,
            today_list,
            waiting,
            findings,
        }
    }

    /// Whether there is anything to ask of the maintainers.
    pub fn is_empty(&self) -> bool {
        self.today_list.is_empty() && self.waiting.is_empty() && self.findings.is_empty()
    }

    /// Minutes planned today.
    pub fn planned_minutes(&self) -> u64 {
        self.today_list.iter().map(|e| u64::from(e.minutes)).sum()
    }

    /// The identity of today's list, used to notice when it changes.
    /// It is kept in an HTML comment, so `>` is written `%3E` (a path cannot close the comment).
    pub fn list_key(&self) -> String {
        let mut parts: Vec<&str> = self.today_list.iter().map(|e| e.path.as_str()).collect();
        parts.extend(self.findings.iter().map(|(p, _)| p.as_str()));
        parts.join(",").replace('>', "%3E").replace('\n', "%0A")
    }

    /// Everyone to mention: the owners of today's docs plus `extra`, as `@login`, sorted and unique.
    pub fn mentions(&self, extra: &[String]) -> Vec<String> {
        let mut all: Vec<String> = self
            .today_list
            .iter()
            .flat_map(|e| e.owners.iter())
            .chain(extra.iter())
            .map(|o| format!("@{}", o.trim_start_matches('@')))
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// The tracking issue's body.
    pub fn render(&self, extra_owners: &[String]) -> String {
        let mut out = format!("{MARKER}\n{LIST_PREFIX}{} -->\n", self.list_key());
        out.push_str(&format!("## Design docs to review on {}\n\n", self.today));
        if !self.today_list.is_empty() {
            out.push_str(&format!(
                "Today's budget is {} minutes; this list takes {}.\n\n",
                self.budget,
                self.planned_minutes()
            ));
            for e in &self.today_list {
                out.push_str(&format!("- [ ] {}\n", describe(e)));
            }
            out.push('\n');
        }
        if !self.waiting.is_empty() {
            out.push_str("### Waiting for a later day\n\n");
            for e in &self.waiting {
                out.push_str(&format!("- {}\n", describe(e)));
            }
            out.push('\n');
        }
        if !self.findings.is_empty() {
            out.push_str("### Front matter to fix\n\n");
            for (path, problem) in &self.findings {
                out.push_str(&format!(
                    "- [ ] {}: {}\n",
                    markdown::code_span(&format!("{path}:{}", problem.line)),
                    problem.message
                ));
            }
            out.push('\n');
        }
        out.push_str(
            "After reviewing a doc, set `last-reviewed:` in its front matter to the day of the review; \
             it then leaves this list. This issue is edited every day and closed when nothing needs review.\n",
        );
        let mentions = self.mentions(extra_owners);
        if !mentions.is_empty() {
            out.push_str(&format!("\nOwners: {}\n", mentions.join(" ")));
        }
        out
    }
}

/// The list key recorded in an issue body, if any.
pub fn list_key_of(body: &str) -> Option<&str> {
    let start = body.find(LIST_PREFIX)? + LIST_PREFIX.len();
    let rest = &body[start..];
    Some(&rest[..rest.find(" -->")?])
}

fn describe(e: &Entry) -> String {
    let s = &e.signals;
    let mut reasons = Vec::new();
    if s.overdue_days > 0 {
        reasons.push(format!(
            "reviewed {} days ago, {} past the interval",
            s.days_since_review, s.overdue_days
        ));
    }
    if s.commits > 0 {
        reasons.push(format!(
            "{} commit{} to covered paths since the review",
            s.commits,
            if s.commits == 1 { "" } else { "s" }
        ));
    }
    if !s.vanished.is_empty() {
        reasons.push(format!(
            "covered paths no longer exist: {}",
            s.vanished
                .iter()
                .map(|v| markdown::code_span(v))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !s.broken_links.is_empty() {
        reasons.push(format!(
            "broken links: {}",
            s.broken_links
                .iter()
                .map(|(line, target)| format!("{} (line {line})", markdown::code_span(target)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    format!(
        "{} ({} min): {}",
        markdown::code_span(&e.path),
        e.minutes,
        reasons.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::front_matter::FrontMatter;

    fn doc(path: &str, minutes: u32, overdue: i64, commits: usize) -> DocStatus {
        DocStatus::Reviewable {
            path: path.to_string(),
            front: FrontMatter {
                last_reviewed: "2026-01-01".parse().unwrap(),
                covers: vec![],
                review_minutes: minutes,
                owners: vec![format!("{path}-owner")],
            },
            signals: Signals {
                days_since_review: 90 + overdue,
                overdue_days: overdue,
                commits,
                vanished: vec![],
                broken_links: vec![],
            },
        }
    }

    #[test]
    fn ranking_and_budget() {
        let statuses = vec![
            doc("a.md", 30, 5, 0),  // score 5
            doc("b.md", 20, 0, 3),  // score 21
            doc("c.md", 40, 10, 1), // score 17
            doc("d.md", 10, 0, 0),  // fresh: not listed
            doc("e.md", 10, 1, 0),  // score 1
            DocStatus::Finding {
                path: "f.md".into(),
                problem: FrontMatterProblem {
                    line: 2,
                    message: "bad".into(),
                },
            },
        ];
        let plan = Plan::make(&statuses, "2026-11-29".parse().unwrap(), 60);
        let today: Vec<&str> = plan.today_list.iter().map(|e| e.path.as_str()).collect();
        let waiting: Vec<&str> = plan.waiting.iter().map(|e| e.path.as_str()).collect();
        // b (20) + c (40) fill 60; a (30) and e (10) wait.
        assert_eq!(today, vec!["b.md", "c.md"]);
        assert_eq!(waiting, vec!["a.md", "e.md"]);
        assert_eq!(plan.planned_minutes(), 60);
        assert_eq!(plan.list_key(), "b.md,c.md,f.md");
        let body = plan.render(&["lead".to_string()]);
        assert_eq!(list_key_of(&body), Some("b.md,c.md,f.md"));
        assert!(body.contains("- [ ] `c.md` (40 min): reviewed 100 days ago, 10 past the interval; 1 commit to covered paths"), "{body}");
        assert!(body.contains("- [ ] `f.md:2`: bad"), "{body}");
        assert!(
            body.contains("Owners: @b.md-owner @c.md-owner @lead"),
            "{body}"
        );
    }

    #[test]
    fn an_oversized_top_doc_is_planned_alone() {
        let plan = Plan::make(
            &[doc("big.md", 90, 50, 0), doc("small.md", 10, 1, 0)],
            "2026-11-29".parse().unwrap(),
            60,
        );
        assert_eq!(plan.today_list.len(), 1);
        assert_eq!(plan.today_list[0].path, "big.md");
        assert_eq!(plan.waiting[0].path, "small.md");
    }

    #[test]
    fn huge_review_times_do_not_overflow() {
        let plan = Plan::make(
            &[
                doc("a.md", 4_000_000_000, 5, 0),
                doc("b.md", 4_000_000_000, 1, 0),
            ],
            "2026-11-29".parse().unwrap(),
            60,
        );
        assert_eq!(plan.today_list.len(), 1);
        assert_eq!(plan.waiting.len(), 1);
        assert_eq!(plan.planned_minutes(), 4_000_000_000);
    }

    #[test]
    fn nothing_to_review() {
        let plan = Plan::make(&[doc("d.md", 10, 0, 0)], "2026-11-29".parse().unwrap(), 60);
        assert!(plan.is_empty());
    }
}
