//! Errors about the files the bot reads: which file, which line, what is wrong;
//! and the size caps every input file is read under.

use std::fmt;
use std::io::Read;
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
    /// An error at `line` of `path`. The message is made one line of bounded
    /// length, since it may quote the (untrusted) file.
    pub fn new(path: &Path, line: usize, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line,
            message: one_line(&message.into(), MESSAGE_CHARS),
        }
    }
}

/// The longest message an [`InputError`] keeps, in characters.
const MESSAGE_CHARS: usize = 400;

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = one_line(&self.path.display().to_string(), MESSAGE_CHARS);
        if self.line == 0 {
            write!(f, "{path}: {}", self.message)
        } else {
            write!(f, "{path}:{}: {}", self.line, self.message)
        }
    }
}

/// `text` as one line of at most `max_chars` characters: control characters
/// (newlines, escapes, tabs) are shown escaped (`\n`, `\u{1b}`) so that
/// nothing read from a file or a server can forge log lines or drive a
/// terminal; a longer text is cut and ends with `…`.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in text.chars() {
        let piece: String = if c.is_control() {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if count + n > max_chars {
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        count += n;
    }
    out
}

/// What kind of file is read, which fixes its size cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An lcov tracefile.
    Lcov,
    /// A unified diff.
    Diff,
    /// A benchmark ratio report.
    BenchReport,
    /// A TOML file (configuration, ranges).
    Toml,
    /// A design doc (Markdown).
    Doc,
    /// The daemon's state file.
    State,
}

impl Kind {
    /// The largest accepted file, in bytes: far above any real file of the
    /// kind, far below what would strain the machine.
    pub const fn max_bytes(self) -> u64 {
        match self {
            Kind::Lcov => 256 << 20,
            Kind::Diff => 64 << 20,
            Kind::BenchReport => 8 << 20,
            Kind::Toml => 1 << 20,
            Kind::Doc => 4 << 20,
            Kind::State => 64 << 10,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Lcov => "lcov report",
            Kind::Diff => "diff",
            Kind::BenchReport => "benchmark report",
            Kind::Toml => "TOML file",
            Kind::Doc => "design doc",
            Kind::State => "state file",
        }
    }
}

impl std::error::Error for InputError {}

/// Reads a whole text file of `kind`, refusing one over the kind's size cap;
/// an I/O failure becomes an [`InputError`] that names the file.
pub fn read_text(path: &Path, kind: Kind) -> Result<String, InputError> {
    let limit = kind.max_bytes();
    let file = std::fs::File::open(path)
        .map_err(|e| InputError::new(path, 0, format!("cannot read the file: {e}")))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::new(path, 0, format!("cannot read the file: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::new(
            path,
            0,
            format!(
                "the file is larger than {} bytes, the limit for a {}; is it the right file?",
                limit,
                kind.name()
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        InputError::new(
            path,
            0,
            format!(
                "the file is not UTF-8 text (invalid byte at offset {}); is it the right file?",
                e.utf8_error().valid_up_to()
            ),
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_files_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, vec![b' '; (Kind::State.max_bytes() + 1) as usize]).unwrap();
        let e = read_text(&path, Kind::State).unwrap_err();
        assert!(e.message.contains("larger than 65536 bytes"), "{e}");
        std::fs::write(&path, b"{}").unwrap();
        assert_eq!(read_text(&path, Kind::State).unwrap(), "{}");
    }

    #[test]
    fn messages_are_one_bounded_line() {
        let e = InputError::new(
            Path::new("a\nb"),
            3,
            format!("x\ny\u{1b}[31m{}", "z".repeat(10_000)),
        );
        let shown = e.to_string();
        assert!(
            !shown.contains('\n') && !shown.contains('\u{1b}'),
            "{shown:?}"
        );
        assert!(shown.chars().count() < 1_000, "{}", shown.len());
        assert!(shown.starts_with("a\\nb:3: x\\ny\\u{1b}[31mzzz"), "{shown}");
    }
}
