//! One place where every GitHub call is sent, retried and turned into an error a person can act on.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use octocrab::Octocrab;
use serde_json::Value;

/// `OWNER/NAME` of a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The user or organisation.
    pub owner: String,
    /// The repository name.
    pub name: String,
}

/// A text that is not `OWNER/NAME`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a repository; expected OWNER/NAME, e.g. mochi-ad/mochi")]
pub struct RepoError(pub String);

impl FromStr for Repo {
    type Err = RepoError;
    fn from_str(s: &str) -> Result<Self, RepoError> {
        let valid = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        match s.split_once('/') {
            Some((owner, name)) if valid(owner) && valid(name) => Ok(Repo {
                owner: owner.to_string(),
                name: name.to_string(),
            }),
            _ => Err(RepoError(crate::input::one_line(s, 100))),
        }
    }
}

impl fmt::Display for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// How hard to try, and how long to wait, before giving up.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Tries per call, counting the first (reads on 5xx and transport errors; any call on rate limits).
    pub attempts: u32,
    /// Wait before the second try; doubled for each further try.
    pub initial_backoff: Duration,
    /// The longest rate-limit wait accepted; a longer one fails the call instead.
    pub max_wait: Duration,
    /// The most one call may take, every try, backoff and rate-limit wait
    /// included; a server that accepts and never answers, or answers a byte at
    /// a time, is given up on after this.
    pub deadline: Duration,
    /// The most pages (of 100) read from one list; a longer list is an error,
    /// never silently cut (a cut list could hide the comment to update).
    pub max_pages: usize,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(90),
            deadline: Duration::from_secs(150),
            max_pages: MAX_PAGES,
        }
    }
}

/// The largest answer body accepted from GitHub, in bytes (the biggest real
/// answers, 100 comments of 65 536 characters, are about 26 MB).
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// The longest server message quoted in an error, in characters.
const MESSAGE_CHARS: usize = 300;

/// A failed GitHub call, said in one line: what, where, and what to check.
#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    /// 401: the token was refused.
    #[error("GitHub refused the token (401) for `{call}` on {repo}: check that GITHUB_TOKEN is set and has not expired")]
    Unauthorized {
        /// The repository.
        repo: String,
        /// The call, e.g. `GET /repos/o/n/issues/1/comments`.
        call: String,
    },
    /// 403 that is not a rate limit: the token may not do this.
    #[error("GitHub forbade `{call}` on {repo} (403: {message}): check the token's permissions (a pull request from a fork gets a read-only token)")]
    Forbidden {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// GitHub's explanation.
        message: String,
    },
    /// 404: the repository, pull request or issue does not exist or is hidden from the token.
    #[error("GitHub found nothing at `{call}` (404) for {repo}: check the repository name, the pull request or issue number, and that the token can read the repository")]
    NotFound {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
    },
    /// 422: GitHub understood the request but refused its content.
    #[error("GitHub rejected `{call}` on {repo} as invalid (422: {message}): check the label name and the size and content of the body sent")]
    Unprocessable {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// GitHub's explanation.
        message: String,
    },
    /// A rate limit asked for a longer wait than allowed.
    #[error("GitHub rate-limited `{call}` on {repo} and asks to wait {wait_secs} s, longer than the {max_secs} s allowed: run again later")]
    RateLimited {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// The wait GitHub asked for.
        wait_secs: u64,
        /// The longest wait accepted.
        max_secs: u64,
    },
    /// A write whose outcome is unknown (5xx or a dropped connection after sending).
    #[error("`{call}` on {repo} may or may not have been applied ({detail}); the caller re-reads before trying again")]
    Unconfirmed {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// What happened.
        detail: String,
    },
    /// Reads kept failing on 5xx or transport errors.
    #[error("`{call}` on {repo} failed after {attempts} tries ({detail}): GitHub or the network is having trouble; run again later")]
    Unavailable {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// Tries made.
        attempts: u32,
        /// The last failure.
        detail: String,
    },
    /// The call, with its retries and waits, took longer than its deadline.
    #[error("`{call}` on {repo} timed out after {secs:.1} s (GitHub or the network did not answer in time): run again later")]
    TimedOut {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// The deadline, in seconds.
        secs: f64,
    },
    /// A list has more pages than the bot reads.
    #[error("`{call}` on {repo} has more than {pages} pages of 100 items; refusing to act on a partial list (clean up old comments or issues)")]
    TooManyPages {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// Pages read.
        pages: usize,
    },
    /// Any other unexpected status or an answer that is not the expected JSON.
    #[error("`{call}` on {repo} got an unexpected answer: {detail}")]
    Unexpected {
        /// The repository.
        repo: String,
        /// The call.
        call: String,
        /// What was received.
        detail: String,
    },
}

/// The client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The base URL is not a URI.
    #[error(
        "the API URL `{url}` is not a valid URI ({reason}); expected e.g. https://api.github.com"
    )]
    ApiUrl {
        /// The URL given.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// octocrab refused its settings.
    #[error("cannot set up the GitHub client: {0}")]
    Client(String),
}

/// A successful answer.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status (2xx).
    pub status: StatusCode,
    /// Response headers (paging links, rate-limit state).
    pub headers: HeaderMap,
    /// The body as text.
    pub body: String,
}

/// A GitHub API client bound to one repository.
#[derive(Debug, Clone)]
pub struct GitHub {
    octo: Octocrab,
    repo: Repo,
    retry: RetryPolicy,
}

/// The most pages read from one list (100 items each): a bound, not an expectation.
pub const MAX_PAGES: usize = 200;

impl GitHub {
    /// A client for `repo` talking to `api_url` (e.g. `https://api.github.com`) with `token`.
    pub fn new(api_url: &str, token: Option<String>, repo: Repo) -> Result<Self, SetupError> {
        let mut builder = Octocrab::builder()
            .base_uri(api_url)
            .map_err(|e| SetupError::ApiUrl {
                url: api_url.to_string(),
                reason: e.to_string(),
            })?
            .set_connect_timeout(Some(Duration::from_secs(10)))
            .set_read_timeout(Some(Duration::from_secs(60)));
        if let Some(token) = token {
            builder = builder.personal_token(token);
        }
        let octo = builder
            .build()
            .map_err(|e| SetupError::Client(e.to_string()))?;
        Ok(Self {
            octo,
            repo,
            retry: RetryPolicy::default(),
        })
    }

    /// Replaces the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The repository this client works on.
    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// `/repos/OWNER/NAME` followed by `rest`.
    pub fn repo_path(&self, rest: &str) -> String {
        format!("/repos/{}/{}{rest}", self.repo.owner, self.repo.name)
    }

    /// Sends one call. Reads (GET), edits (PATCH) and deletions are retried on
    /// 5xx and transport errors; a POST never is (it may have been applied):
    /// it fails with [`GitHubError::Unconfirmed`] so the caller can re-read.
    /// Every call waits out a rate limit (403/429 with `retry-after` or an
    /// exhausted `x-ratelimit-remaining`) within [`RetryPolicy::max_wait`].
    ///
    /// The whole call is bounded by [`RetryPolicy::deadline`]; past it the call
    /// fails with [`GitHubError::TimedOut`] (a POST with
    /// [`GitHubError::Unconfirmed`], since it may have been applied).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, GitHubError> {
        let call = format!("{method} {}", path.split('?').next().unwrap_or(path));
        let deadline = tokio::time::Instant::now() + self.retry.deadline;
        let tries = self.send_with_retries(&method, path, body, &call, deadline);
        match tokio::time::timeout_at(deadline, tries).await {
            Ok(result) => result,
            Err(_) if method == Method::POST => Err(GitHubError::Unconfirmed {
                repo: self.repo.to_string(),
                call,
                detail: format!("timed out after {:.1} s", self.retry.deadline.as_secs_f64()),
            }),
            Err(_) => Err(GitHubError::TimedOut {
                repo: self.repo.to_string(),
                call,
                secs: self.retry.deadline.as_secs_f64(),
            }),
        }
    }

    async fn send_with_retries(
        &self,
        method: &Method,
        path: &str,
        body: Option<&Value>,
        call: &str,
        deadline: tokio::time::Instant,
    ) -> Result<Answer, GitHubError> {
        let call = call.to_string();
        let repo = self.repo.to_string();
        let idempotent = *method != Method::POST;
        let mut backoff = self.retry.initial_backoff;
        let attempts = self.retry.attempts.max(1);
        let mut last_detail = String::new();
        for attempt in 1..=attempts {
            let sent = match method.clone() {
                Method::GET => self.octo._get(path).await,
                Method::POST => self.octo._post(path, body).await,
                Method::PATCH => self.octo._patch(path, body).await,
                Method::DELETE => self.octo._delete(path, None::<&()>).await,
                other => {
                    return Err(GitHubError::Unexpected {
                        repo,
                        call,
                        detail: format!("method {other} is not used by mochi-bot"),
                    })
                }
            };
            // A transport error and an unreadable answer are handled alike: the call
            // may have been applied, so only idempotent calls are retried.
            let received = match sent {
                Ok(response) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    // The body is read under a size cap, never whole.
                    use http_body_util::BodyExt;
                    let limited =
                        http_body_util::Limited::new(response.into_body(), MAX_ANSWER_BYTES);
                    match limited.collect().await {
                        Ok(collected) => String::from_utf8(collected.to_bytes().to_vec())
                            .map(|text| (status, headers, text))
                            .map_err(|_| "the answer is not UTF-8 text".to_string()),
                        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(format!(
                            "the answer is larger than {MAX_ANSWER_BYTES} bytes"
                        )),
                        Err(e) => Err(format!(
                            "the answer could not be read: {}",
                            crate::input::one_line(&e.to_string(), MESSAGE_CHARS)
                        )),
                    }
                }
                Err(e) => Err(format!(
                    "transport error: {}",
                    crate::input::one_line(&e.to_string(), MESSAGE_CHARS)
                )),
            };
            let (status, headers, text) = match received {
                Ok(r) => r,
                Err(detail) => {
                    last_detail = detail;
                    if !idempotent {
                        return Err(GitHubError::Unconfirmed {
                            repo,
                            call,
                            detail: last_detail,
                        });
                    }
                    if attempt < attempts {
                        tokio::time::sleep(backoff).await;
                        backoff *= 2;
                    }
                    continue;
                }
            };
            if status.is_success() {
                return Ok(Answer {
                    status,
                    headers,
                    body: text,
                });
            }
            let message = github_message(&text);
            if let Some(wait) = rate_limit_wait(status, &headers, &message) {
                // A wait that would end past the deadline is refused now rather than slept through.
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let allowed = self.retry.max_wait.min(left);
                if wait > allowed {
                    return Err(GitHubError::RateLimited {
                        repo,
                        call,
                        wait_secs: wait.as_secs(),
                        max_secs: allowed.as_secs(),
                    });
                }
                last_detail = format!("rate limited ({status}), waited {} s", wait.as_secs());
                if attempt < attempts {
                    eprintln!(
                        "mochi-bot: `{call}` was rate-limited ({status}); waiting {} s as GitHub asks",
                        wait.as_secs()
                    );
                    tokio::time::sleep(wait).await;
                }
                continue;
            }
            match status.as_u16() {
                401 => return Err(GitHubError::Unauthorized { repo, call }),
                403 => {
                    return Err(GitHubError::Forbidden {
                        repo,
                        call,
                        message,
                    })
                }
                404 => return Err(GitHubError::NotFound { repo, call }),
                422 => {
                    return Err(GitHubError::Unprocessable {
                        repo,
                        call,
                        message,
                    })
                }
                s if s >= 500 => {
                    last_detail = format!("{status}: {message}");
                    if !idempotent {
                        return Err(GitHubError::Unconfirmed {
                            repo,
                            call,
                            detail: last_detail,
                        });
                    }
                    if attempt < attempts {
                        tokio::time::sleep(backoff).await;
                        backoff *= 2;
                    }
                }
                _ => {
                    return Err(GitHubError::Unexpected {
                        repo,
                        call,
                        detail: format!("{status}: {message}"),
                    })
                }
            }
        }
        Err(GitHubError::Unavailable {
            repo,
            call,
            attempts,
            detail: last_detail,
        })
    }

    /// GETs `path` and decodes the JSON answer.
    pub async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<T, GitHubError> {
        let answer = self.send(Method::GET, path, None).await?;
        self.decode(&answer.body, path)
    }

    /// Decodes a JSON answer, naming the call when it does not fit.
    pub fn decode<T: serde::de::DeserializeOwned>(
        &self,
        body: &str,
        path: &str,
    ) -> Result<T, GitHubError> {
        serde_json::from_str(body).map_err(|e| GitHubError::Unexpected {
            repo: self.repo.to_string(),
            call: path.split('?').next().unwrap_or(path).to_string(),
            detail: format!(
                "the JSON does not have the expected shape ({})",
                crate::input::one_line(&e.to_string(), MESSAGE_CHARS)
            ),
        })
    }

    /// GETs every page of a list (`per_page=100`), following `Link: rel="next"`
    /// when present and otherwise stopping at the first short page. A list
    /// longer than [`RetryPolicy::max_pages`] is [`GitHubError::TooManyPages`].
    pub async fn get_all<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<Vec<T>, GitHubError> {
        let separator = if path.contains('?') { '&' } else { '?' };
        let mut items = Vec::new();
        let max_pages = self.retry.max_pages.max(1);
        for page in 1.. {
            if page > max_pages {
                return Err(GitHubError::TooManyPages {
                    repo: self.repo.to_string(),
                    call: format!("GET {}", path.split('?').next().unwrap_or(path)),
                    pages: max_pages,
                });
            }
            let url = format!("{path}{separator}per_page=100&page={page}");
            let answer = self.send(Method::GET, &url, None).await?;
            let batch: Vec<T> = self.decode(&answer.body, &url)?;
            let count = batch.len();
            items.extend(batch);
            let link = answer
                .headers
                .get(http::header::LINK)
                .and_then(|v| v.to_str().ok());
            let more = match link {
                Some(link) => link.contains("rel=\"next\""),
                None => count == 100,
            };
            if !more {
                break;
            }
        }
        Ok(items)
    }
}

/// GitHub's `message` field, or the raw text when the body is not JSON; one
/// line of at most [`MESSAGE_CHARS`] characters either way, since it is
/// quoted in errors.
fn github_message(body: &str) -> String {
    let head: String = body.chars().take(MESSAGE_CHARS + 1).collect();
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string));
    crate::input::one_line(message.as_deref().unwrap_or(&head), MESSAGE_CHARS)
}

/// How long a rate-limited answer asks to wait, or `None` when it is not a rate limit.
pub fn rate_limit_wait(status: StatusCode, headers: &HeaderMap, message: &str) -> Option<Duration> {
    if status != StatusCode::FORBIDDEN && status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(secs) = header("retry-after").and_then(|v| v.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if header("x-ratelimit-remaining") == Some("0") {
        if let Some(reset) = header("x-ratelimit-reset").and_then(|v| v.trim().parse::<i64>().ok())
        {
            let now = chrono::Utc::now().timestamp();
            return Some(Duration::from_secs((reset - now).max(0) as u64 + 1));
        }
    }
    // A secondary rate limit without headers: GitHub asks for at least a minute.
    if status == StatusCode::TOO_MANY_REQUESTS || message.to_lowercase().contains("rate limit") {
        return Some(Duration::from_secs(60));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_names() {
        assert_eq!("a/b".parse::<Repo>().unwrap().to_string(), "a/b");
        assert!("a".parse::<Repo>().is_err());
        assert!("a/b/c".parse::<Repo>().is_err());
        assert!("/b".parse::<Repo>().is_err());
    }

    #[test]
    fn rate_limit_signals() {
        let mut h = HeaderMap::new();
        assert_eq!(
            rate_limit_wait(
                StatusCode::FORBIDDEN,
                &h,
                "Resource not accessible by integration"
            ),
            None
        );
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(
            rate_limit_wait(StatusCode::FORBIDDEN, &h, ""),
            Some(Duration::from_secs(7))
        );
        assert_eq!(rate_limit_wait(StatusCode::NOT_FOUND, &h, ""), None);
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-remaining", "0".parse().unwrap());
        h.insert("x-ratelimit-reset", "0".parse().unwrap());
        assert_eq!(
            rate_limit_wait(StatusCode::FORBIDDEN, &h, ""),
            Some(Duration::from_secs(1))
        );
        let h = HeaderMap::new();
        assert_eq!(
            rate_limit_wait(
                StatusCode::FORBIDDEN,
                &h,
                "You have exceeded a secondary rate limit"
            ),
            Some(Duration::from_secs(60))
        );
    }
}
