//! The one tracking issue of the design-doc review, found by marker, label and author.

use http::Method;
use serde_json::json;

use super::{is_by, Comment, GitHub, GitHubError, Issue};

/// Open issues carrying `marker` in their body, with `label`, opened by `author`; oldest first.
pub async fn list_open(
    gh: &GitHub,
    marker: &str,
    label: &str,
    author: &str,
) -> Result<Vec<Issue>, GitHubError> {
    let path = gh.repo_path(&format!("/issues?state=open&labels={}", encode(label)));
    let mut issues: Vec<Issue> = gh.get_all(&path).await?;
    issues.retain(|i| {
        i.pull_request.is_none()
            && i.state == "open"
            && is_by(&i.user, author)
            && i.body.as_deref().is_some_and(|b| b.contains(marker))
    });
    issues.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then(a.number.cmp(&b.number))
    });
    Ok(issues)
}

/// Opens the issue; when the answer is lost, re-lists and posts again only if it is not there.
pub async fn create(
    gh: &GitHub,
    title: &str,
    body: &str,
    label: &str,
    marker: &str,
    author: &str,
) -> Result<u64, GitHubError> {
    let path = gh.repo_path("/issues");
    let payload = json!({ "title": title, "body": body, "labels": [label] });
    let mut last = None;
    for _ in 0..3 {
        match gh.send(Method::POST, &path, Some(&payload)).await {
            Ok(answer) => {
                let issue: Issue = gh.decode(&answer.body, &path)?;
                return Ok(issue.number);
            }
            Err(e @ GitHubError::Unconfirmed { .. }) => {
                eprintln!("mochi-bot: {e}");
                if let Some(found) = list_open(gh, marker, label, author).await?.first() {
                    return Ok(found.number);
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

/// Replaces the issue's body.
pub async fn edit_body(gh: &GitHub, number: u64, body: &str) -> Result<(), GitHubError> {
    gh.send(
        Method::PATCH,
        &gh.repo_path(&format!("/issues/{number}")),
        Some(&json!({ "body": body })),
    )
    .await
    .map(drop)
}

/// Closes the issue as completed, with a final body.
pub async fn close(gh: &GitHub, number: u64, body: &str) -> Result<(), GitHubError> {
    gh.send(
        Method::PATCH,
        &gh.repo_path(&format!("/issues/{number}")),
        Some(&json!({ "body": body, "state": "closed", "state_reason": "completed" })),
    )
    .await
    .map(drop)
}

/// Adds a comment unless an identical one by `author` is already there (a
/// lost answer to an earlier try).
pub async fn comment_once(
    gh: &GitHub,
    number: u64,
    body: &str,
    author: &str,
) -> Result<(), GitHubError> {
    let path = gh.repo_path(&format!("/issues/{number}/comments"));
    for _ in 0..3 {
        match gh
            .send(Method::POST, &path, Some(&json!({ "body": body })))
            .await
        {
            Ok(_) => return Ok(()),
            Err(e @ GitHubError::Unconfirmed { .. }) => {
                eprintln!("mochi-bot: {e}");
                let existing: Vec<Comment> = gh.get_all(&path).await?;
                if existing
                    .iter()
                    .any(|c| is_by(&c.user, author) && c.body.as_deref() == Some(body))
                {
                    return Ok(());
                }
            }
            Err(e) => return Err(e),
        }
    }
    Err(GitHubError::Unavailable {
        repo: gh.repo().to_string(),
        call: format!("POST {path}"),
        attempts: 3,
        detail: "the comment could not be confirmed".to_string(),
    })
}

/// Percent-encodes a label for a query string.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
