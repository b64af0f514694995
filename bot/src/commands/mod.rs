//! The four commands, one module each, and what they share: finding the
//! repository and connecting to GitHub.

pub mod doc_review;
pub mod icount_check;
pub mod perf_check;
pub mod pr_summary;
pub mod serve;
pub mod wallclock_check;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::Config;
use crate::github::{GitHub, Repo, RepoError, SetupError};
use crate::options::{Env, GitHubArgs};

/// Why no GitHub client could be made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No repository was named anywhere.
    #[error("no repository given: pass --repo OWNER/NAME, set `repository` in the config, or set GITHUB_REPOSITORY")]
    NoRepository,
    /// The repository is not `OWNER/NAME`.
    #[error("--repo: {0}")]
    BadRepository(#[from] RepoError),
    /// No token in the environment.
    #[error("GITHUB_TOKEN is not set; it is needed to write to {0} (use --dry-run to only print)")]
    NoToken(Repo),
    /// The client could not be built.
    #[error(transparent)]
    Setup(#[from] SetupError),
}

/// The GitHub client for `args`, the config and the environment, in that order of precedence.
pub fn connect(args: &GitHubArgs, config: &Config, env: &Env) -> Result<GitHub, ConnectError> {
    let repo_text = args
        .repo
        .clone()
        .or_else(|| (!config.repository.is_empty()).then(|| config.repository.clone()))
        .or_else(|| env.github_repository.clone())
        .ok_or(ConnectError::NoRepository)?;
    let repo: Repo = repo_text.parse()?;
    let api_url = args
        .api_url
        .clone()
        .unwrap_or_else(|| config.api_url.clone());
    if env.token.is_none() {
        return Err(ConnectError::NoToken(repo));
    }
    Ok(GitHub::new(&api_url, env.token.clone(), repo)?.with_retry(env.retry))
}

/// The login whose comments and issues the bot may touch.
pub fn author(args: &GitHubArgs, config: &Config) -> String {
    args.author
        .clone()
        .unwrap_or_else(|| config.bot_login.clone())
}

/// `git rev-parse --show-toplevel` in the current directory.
pub fn git_toplevel() -> Option<PathBuf> {
    let out = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// `git rev-parse HEAD` in `root`.
pub fn git_head(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
