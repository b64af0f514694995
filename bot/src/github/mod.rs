//! Talking to GitHub: the retrying client, the sticky summary comment and the tracking issue.

pub mod client;
pub mod comments;
pub mod issues;

pub use client::{GitHub, GitHubError, Repo, RepoError, RetryPolicy, SetupError};

use serde::Deserialize;

/// The author of a comment or issue.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct User {
    /// The login, e.g. `github-actions[bot]`.
    pub login: String,
}

/// An issue or pull-request comment.
#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    /// The comment id.
    pub id: u64,
    /// The Markdown body.
    #[serde(default)]
    pub body: Option<String>,
    /// Who wrote it.
    pub user: Option<User>,
    /// Creation time (RFC 3339), used to find the oldest.
    #[serde(default)]
    pub created_at: String,
}

/// An issue (the issues list also returns pull requests; those carry `pull_request`).
#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    /// The issue number.
    pub number: u64,
    /// The Markdown body.
    #[serde(default)]
    pub body: Option<String>,
    /// Who opened it.
    pub user: Option<User>,
    /// `open` or `closed`.
    pub state: String,
    /// Creation time (RFC 3339).
    #[serde(default)]
    pub created_at: String,
    /// Present when the "issue" is a pull request.
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
}

/// The commit and repository at one end of a pull request.
#[derive(Debug, Clone, Deserialize)]
pub struct PullEnd {
    /// The commit SHA.
    pub sha: String,
    /// The repository (absent when a fork was deleted).
    pub repo: Option<RepoRef>,
}

/// A repository reference inside a pull request.
#[derive(Debug, Clone, Deserialize)]
pub struct RepoRef {
    /// `OWNER/NAME`.
    pub full_name: String,
}

/// The parts of a pull request the bot reads.
#[derive(Debug, Clone, Deserialize)]
pub struct PullRequest {
    /// The pull request number (absent in some answers; 0 then).
    #[serde(default)]
    pub number: u64,
    /// The head (the contributor's branch).
    pub head: PullEnd,
    /// The base (the branch merged into).
    pub base: PullEnd,
}

impl PullRequest {
    /// Whether the head lives in another repository (a fork).
    pub fn is_from_fork(&self) -> bool {
        match (&self.head.repo, &self.base.repo) {
            (Some(h), Some(b)) => h.full_name != b.full_name,
            (None, _) => true,
            _ => false,
        }
    }
}

/// One entry of "list pull request files".
#[derive(Debug, Clone, Deserialize)]
pub struct PullFile {
    /// The file's (new) path.
    pub filename: String,
    /// `added`, `modified`, `removed`, `renamed`, …
    pub status: String,
    /// The hunks, absent for binary or very large files.
    #[serde(default)]
    pub patch: Option<String>,
}

fn is_by(user: &Option<User>, login: &str) -> bool {
    user.as_ref().is_some_and(|u| u.login == login)
}
