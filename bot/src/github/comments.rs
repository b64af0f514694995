//! The sticky summary comment: exactly one per pull request, found by marker and author.

use http::Method;
use serde_json::json;

use super::{is_by, Comment, GitHub, GitHubError};
use crate::summary::{head_sha_of, MARKER};

/// What a run did to the pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A new comment was created.
    Created {
        /// Its id.
        id: u64,
    },
    /// The existing comment was changed.
    Updated {
        /// Its id.
        id: u64,
    },
    /// The existing comment already said the same; nothing was written.
    Unchanged {
        /// Its id.
        id: u64,
    },
    /// The existing comment describes the pull request's current head and
    /// this run does not, so it was left alone.
    KeptNewer {
        /// Its id.
        id: u64,
        /// The head it describes.
        existing_sha: String,
    },
}

/// The facts needed to place one summary.
#[derive(Debug, Clone)]
pub struct Placement<'a> {
    /// Pull request number.
    pub pr: u64,
    /// Login of the account the token acts as (only its comments are touched).
    pub author: &'a str,
    /// The full body to show.
    pub body: &'a str,
    /// The head SHA this body describes.
    pub head_sha: &'a str,
    /// The pull request's current head, when known.
    pub current_head: Option<&'a str>,
}

/// How many times a create is attempted when GitHub's answer leaves it unknown.
const CREATE_ATTEMPTS: usize = 3;

/// The bot's summary comments on the pull request, oldest first.
pub async fn list_ours(gh: &GitHub, pr: u64, author: &str) -> Result<Vec<Comment>, GitHubError> {
    let mut comments: Vec<Comment> = gh
        .get_all(&gh.repo_path(&format!("/issues/{pr}/comments")))
        .await?;
    comments.retain(|c| {
        is_by(&c.user, author) && c.body.as_deref().is_some_and(|b| b.starts_with(MARKER))
    });
    comments.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    Ok(comments)
}

/// Creates, updates or leaves the summary comment so that exactly one exists
/// and it shows the newest head's summary.
pub async fn place_summary(gh: &GitHub, place: &Placement<'_>) -> Result<Outcome, GitHubError> {
    let ours = list_ours(gh, place.pr, place.author).await?;
    if ours.is_empty() {
        let id = create(gh, place).await?;
        // Another run may have created one at the same time: keep the oldest.
        let ours = list_ours(gh, place.pr, place.author).await?;
        return match ours.first() {
            Some(oldest) if oldest.id != id => {
                delete_duplicates(gh, &ours).await?;
                update_if_needed(gh, place, oldest).await
            }
            _ => {
                delete_duplicates(gh, &ours).await?;
                Ok(Outcome::Created { id })
            }
        };
    }
    delete_duplicates(gh, &ours).await?;
    update_if_needed(gh, place, &ours[0]).await
}

async fn update_if_needed(
    gh: &GitHub,
    place: &Placement<'_>,
    existing: &Comment,
) -> Result<Outcome, GitHubError> {
    let old_body = existing.body.as_deref().unwrap_or("");
    if old_body == place.body {
        return Ok(Outcome::Unchanged { id: existing.id });
    }
    let existing_sha = head_sha_of(old_body).unwrap_or("").to_string();
    if let Some(current) = place.current_head {
        // This run describes an older head than the pull request has now; the
        // run for the current head writes (or has written) the summary.
        if place.head_sha != current && existing_sha != place.head_sha {
            return Ok(Outcome::KeptNewer {
                id: existing.id,
                existing_sha,
            });
        }
    }
    gh.send(
        Method::PATCH,
        &gh.repo_path(&format!("/issues/comments/{}", existing.id)),
        Some(&json!({ "body": place.body })),
    )
    .await?;
    Ok(Outcome::Updated { id: existing.id })
}

/// POSTs the comment; when the answer is lost, re-lists and only posts again
/// if the comment really is not there.
async fn create(gh: &GitHub, place: &Placement<'_>) -> Result<u64, GitHubError> {
    let path = gh.repo_path(&format!("/issues/{}/comments", place.pr));
    let mut last = None;
    for _ in 0..CREATE_ATTEMPTS {
        match gh
            .send(Method::POST, &path, Some(&json!({ "body": place.body })))
            .await
        {
            Ok(answer) => {
                let created: Comment = gh.decode(&answer.body, &path)?;
                return Ok(created.id);
            }
            Err(e @ GitHubError::Unconfirmed { .. }) => {
                eprintln!("mochi-bot: {e}");
                let ours = list_ours(gh, place.pr, place.author).await?;
                if let Some(found) = ours.iter().find(|c| c.body.as_deref() == Some(place.body)) {
                    return Ok(found.id);
                }
                last = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| GitHubError::Unexpected {
        repo: gh.repo().to_string(),
        call: format!("POST {path}"),
        detail: "no attempt was made".to_string(),
    }))
}

/// Deletes every comment but the first (the oldest). A comment already gone
/// (deleted by a concurrent run) is fine.
async fn delete_duplicates(gh: &GitHub, ours: &[Comment]) -> Result<(), GitHubError> {
    for dup in ours.iter().skip(1) {
        let path = gh.repo_path(&format!("/issues/comments/{}", dup.id));
        match gh.send(Method::DELETE, &path, None).await {
            Ok(_) | Err(GitHubError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
