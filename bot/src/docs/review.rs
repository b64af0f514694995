//! Keeping the one tracking issue in step with the day's plan.

use super::plan::{list_key_of, Plan, MARKER};
use crate::github::{issues, GitHub, GitHubError};

/// What the run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing needs review and no issue is open: nothing was posted.
    NothingToDo,
    /// A tracking issue was opened (its body mentions the owners).
    Created {
        /// Issue number.
        number: u64,
    },
    /// The issue's body was replaced; `list_changed` says whether the owners were told in a comment.
    Edited {
        /// Issue number.
        number: u64,
        /// Whether the list of docs changed (and a comment mentioned the owners).
        list_changed: bool,
    },
    /// The issue already had today's body.
    Unchanged {
        /// Issue number.
        number: u64,
    },
    /// Nothing needs review any more; the issue was closed.
    Closed {
        /// Issue number.
        number: u64,
    },
}

/// Settings of the tracking issue.
#[derive(Debug, Clone)]
pub struct IssueSettings<'a> {
    /// Title of a new issue.
    pub title: &'a str,
    /// Label that marks it.
    pub label: &'a str,
    /// Login the token acts as.
    pub author: &'a str,
    /// Owners mentioned besides each doc's own.
    pub owners: &'a [String],
}

/// Creates, edits or closes the tracking issue to match `plan`. Duplicated
/// open issues (from concurrent runs) are closed, keeping the oldest.
pub async fn apply(
    gh: &GitHub,
    plan: &Plan,
    settings: &IssueSettings<'_>,
) -> Result<Outcome, GitHubError> {
    let open = issues::list_open(gh, MARKER, settings.label, settings.author).await?;
    for duplicate in open.iter().skip(1) {
        let body = format!("{MARKER}\nClosed as a duplicate of #{}.\n", open[0].number);
        issues::close(gh, duplicate.number, &body).await?;
    }
    let existing = open.first();
    if plan.is_empty() {
        return match existing {
            None => Ok(Outcome::NothingToDo),
            Some(issue) => {
                let body = format!(
                    "{MARKER}\n## Design docs to review\n\nNothing needs review as of {}: every doc is within its review interval, with no new commits to its covered paths, no vanished paths and no broken links.\n",
                    plan.today
                );
                issues::close(gh, issue.number, &body).await?;
                Ok(Outcome::Closed {
                    number: issue.number,
                })
            }
        };
    }
    let body = plan.render(settings.owners);
    match existing {
        None => {
            let number = issues::create(
                gh,
                settings.title,
                &body,
                settings.label,
                MARKER,
                settings.author,
            )
            .await?;
            // A run at the same time may have opened one too: keep the oldest.
            let open = issues::list_open(gh, MARKER, settings.label, settings.author).await?;
            for duplicate in open.iter().skip(1) {
                let note = format!("{MARKER}\nClosed as a duplicate of #{}.\n", open[0].number);
                issues::close(gh, duplicate.number, &note).await?;
            }
            match open.first() {
                Some(oldest) if oldest.number != number => {
                    if oldest.body.as_deref() != Some(body.as_str()) {
                        issues::edit_body(gh, oldest.number, &body).await?;
                    }
                    Ok(Outcome::Edited {
                        number: oldest.number,
                        list_changed: false,
                    })
                }
                _ => Ok(Outcome::Created { number }),
            }
        }
        Some(issue) => {
            let old = issue.body.as_deref().unwrap_or("");
            if old == body {
                return Ok(Outcome::Unchanged {
                    number: issue.number,
                });
            }
            let list_changed = list_key_of(old) != Some(plan.list_key().as_str());
            issues::edit_body(gh, issue.number, &body).await?;
            if list_changed {
                let mentions = plan.mentions(settings.owners);
                let comment = format!(
                    "The list of docs to review changed on {} (see the description). {}",
                    plan.today,
                    mentions.join(" ")
                );
                issues::comment_once(gh, issue.number, comment.trim_end(), settings.author).await?;
            }
            Ok(Outcome::Edited {
                number: issue.number,
                list_changed,
            })
        }
    }
}
