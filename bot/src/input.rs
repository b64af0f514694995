//! Errors about the files the bot reads: which file, which line, what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem in an input file (lcov, diff, JSON, TOML, front matter).
///
/// Displayed as `path:line: message`, the form editors and CI logs link to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file as the user named it.
    pub path: PathBuf,
    /// 1-based line of the problem; 0 when it concerns the whole file.
    pub line: usize,
    /// What is wrong, with the offending value, and what is expected.
    pub message: String,
}

impl InputError {
    /// An error at `line` of `path`.
    pub fn new(path: &Path, line: usize, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for InputError {}

/// Reads a whole text file, turning an I/O failure into an [`InputError`] that names the file.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, 0, format!("cannot read the file: {e}")))
}

/// 1-based line number of byte `offset` in `text`.
pub fn line_of_offset(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}
