//! The bot's configuration file (`.github/mochi-bot.toml`); every key is optional.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::github::Repo;
use crate::input::{line_of_offset, InputError};
use crate::serve::schedule::ScheduleError;

/// The default location, relative to the repository root.
pub const DEFAULT_PATH: &str = ".github/mochi-bot.toml";

/// The whole configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `OWNER/NAME`; empty means "give `--repo`" (or `GITHUB_REPOSITORY` in Actions).
    pub repository: String,
    /// Base URL of the GitHub REST API.
    pub api_url: String,
    /// Login of the account the token acts as; only its comments and issues are touched.
    pub bot_login: String,
    /// Settings of `perf-check`.
    pub perf_check: PerfCheckConfig,
    /// Settings of `doc-review`.
    pub doc_review: DocReviewConfig,
    /// Settings of `serve`.
    pub serve: ServeConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            repository: String::new(),
            api_url: "https://api.github.com".to_string(),
            bot_login: "github-actions[bot]".to_string(),
            perf_check: PerfCheckConfig::default(),
            doc_review: DocReviewConfig::default(),
            serve: ServeConfig::default(),
        }
    }
}

/// `[perf_check]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PerfCheckConfig {
    /// The ranges file, relative to the repository root.
    pub ranges: PathBuf,
    /// The report column that is gated.
    pub column: String,
    /// Reruns of failing cases (with `--retry-cmd`) before a regression is declared.
    pub retries: u32,
}

impl Default for PerfCheckConfig {
    fn default() -> Self {
        Self {
            ranges: PathBuf::from("benches/ranges.toml"),
            column: "mochi".to_string(),
            retries: 2,
        }
    }
}

/// `[doc_review]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DocReviewConfig {
    /// Folder of the design docs, relative to the repository root.
    pub docs_dir: PathBuf,
    /// Minutes of review per day.
    pub budget_minutes: u32,
    /// Days a review stays fresh.
    pub review_interval_days: u32,
    /// Label of the tracking issue.
    pub label: String,
    /// Title of the tracking issue.
    pub issue_title: String,
    /// People or teams mentioned, besides each doc's own owners, when the list changes.
    pub owners: Vec<String>,
}

impl Default for DocReviewConfig {
    fn default() -> Self {
        Self {
            docs_dir: PathBuf::from("design-docs"),
            budget_minutes: 60,
            review_interval_days: 90,
            label: "design-doc-review".to_string(),
            issue_title: "Design docs to review".to_string(),
            owners: Vec::new(),
        }
    }
}

/// `[serve]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Cron expression (minute hour day-of-month month day-of-week), in `time_zone`.
    pub schedule: String,
    /// IANA time zone of the schedule.
    pub time_zone: String,
    /// File remembering the last local date the review ran, relative to the repository root.
    pub state_file: PathBuf,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            schedule: "0 7 * * 1-5".to_string(),
            time_zone: "UTC".to_string(),
            state_file: PathBuf::from(".mochi-bot/state.json"),
        }
    }
}

impl Config {
    /// Loads `path`. When `required` is false and the file does not exist, the defaults are used.
    pub fn load(path: &Path, required: bool) -> Result<Self, InputError> {
        if !required && !path.exists() {
            return Ok(Self::default());
        }
        let text = crate::input::read_text(path, crate::input::Kind::Toml)?;
        Self::parse(&text, path)
    }

    /// Parses and validates configuration text; `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, InputError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| line_of_offset(text, s.start));
            let message = e.message().trim();
            let message = match key_at_line(text, line) {
                Some(key) if !message.starts_with("unknown field") => {
                    format!("key `{key}`: {message}; see the comments in {DEFAULT_PATH} for the expected form")
                }
                _ => message.to_string(),
            };
            InputError::new(path, line, message)
        })?;
        config.validate(text, path)?;
        Ok(config)
    }

    fn validate(&self, text: &str, path: &Path) -> Result<(), InputError> {
        let fail = |key: &str, message: String| {
            let leaf = key.rsplit('.').next().unwrap_or(key);
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with(leaf))
                .map_or(0, |i| i + 1);
            Err(InputError::new(
                path,
                line,
                format!("key `{key}`: {message}"),
            ))
        };
        if !self.repository.is_empty() {
            if let Err(e) = self.repository.parse::<Repo>() {
                return fail("repository", e.to_string());
            }
        }
        if !(self.api_url.starts_with("https://") || self.api_url.starts_with("http://"))
            || self.api_url.parse::<http::Uri>().is_err()
        {
            return fail(
                "api_url",
                format!(
                    "`{}` is not a URL; expected e.g. \"https://api.github.com\"",
                    self.api_url
                ),
            );
        }
        if self.bot_login.trim().is_empty() {
            return fail(
                "bot_login",
                "is empty; expected a login such as \"github-actions[bot]\"".into(),
            );
        }
        if self.perf_check.column.is_empty() {
            return fail(
                "perf_check.column",
                "is empty; expected a column of the benchmark report, e.g. \"mochi\"".into(),
            );
        }
        if self.perf_check.retries > 10 {
            return fail(
                "perf_check.retries",
                format!(
                    "{} is too many; expected a whole number from 0 to 10",
                    self.perf_check.retries
                ),
            );
        }
        let d = &self.doc_review;
        if d.budget_minutes == 0 {
            return fail(
                "doc_review.budget_minutes",
                "is 0; expected a positive number of minutes, e.g. 60".into(),
            );
        }
        if d.review_interval_days == 0 {
            return fail(
                "doc_review.review_interval_days",
                "is 0; expected a positive number of days, e.g. 90".into(),
            );
        }
        if d.label.trim().is_empty() {
            return fail(
                "doc_review.label",
                "is empty; expected a label name such as \"design-doc-review\"".into(),
            );
        }
        if d.issue_title.trim().is_empty() {
            return fail(
                "doc_review.issue_title",
                "is empty; expected a title for the tracking issue".into(),
            );
        }
        if let Some(bad) = d
            .owners
            .iter()
            .find(|o| o.trim().is_empty() || o.contains(char::is_whitespace))
        {
            return fail("doc_review.owners", format!("`{bad}` is not a GitHub login or team; expected e.g. \"alice\" or \"org/team\""));
        }
        if let Err(e) =
            crate::serve::schedule::Schedule::new(&self.serve.schedule, &self.serve.time_zone)
        {
            let key = match e {
                ScheduleError::TimeZone(_) => "serve.time_zone",
                _ => "serve.schedule",
            };
            return fail(key, e.to_string());
        }
        Ok(())
    }
}

/// The dotted key assigned on 1-based `line` (`table.key`), if that line assigns one.
fn key_at_line(text: &str, line: usize) -> Option<String> {
    let mut table = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if let Some(header) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            table = header.trim().to_string();
        }
        if i + 1 == line {
            let (key, _) = l.split_once('=')?;
            let key = key.trim();
            return Some(if table.is_empty() {
                key.to_string()
            } else {
                format!("{table}.{key}")
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, InputError> {
        Config::parse(text, Path::new("mochi-bot.toml"))
    }

    #[test]
    fn empty_file_gives_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c.doc_review.budget_minutes, 60);
        assert_eq!(c.perf_check.retries, 2);
    }

    #[test]
    fn the_committed_file_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.github/mochi-bot.toml");
        Config::load(&path, true).unwrap();
    }

    #[test]
    fn errors_name_the_key_and_the_expected_form() {
        let e = parse("[serve]\ntime_zone = \"Europe/Berln\"\n").unwrap_err();
        assert!(e.message.contains("`serve.time_zone`"), "{e}");
        assert_eq!(e.line, 2);
        let e = parse("[serve]\nschedule = \"every day\"\n").unwrap_err();
        assert!(e.message.contains("`serve.schedule`"), "{e}");
        let e = parse("repository = \"nope\"\n").unwrap_err();
        assert!(e.message.contains("OWNER/NAME"), "{e}");
        let e = parse("\n[doc_review]\nbudget_minutes = \"an hour\"\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(
            e.message
                .starts_with("key `doc_review.budget_minutes`: invalid type"),
            "{e}"
        );
        let e = parse("[doc_review]\nbudget = 5\n").unwrap_err();
        assert!(e.message.contains("budget"), "{e}");
        assert_eq!(e.line, 2, "{e}");
    }
}
