//! The daemon's memory across restarts: the local date of the last run.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::input::InputError;

/// What is kept between runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The local date (in the schedule's zone) the review last started.
    pub last_run_date: Option<NaiveDate>,
}

/// A state file on disk.
#[derive(Debug, Clone)]
pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    /// The state file at `path` (created on first save).
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
        }
    }

    /// Reads the state; a missing file is the empty state, a damaged one an error.
    pub fn load(&self) -> Result<State, InputError> {
        if !self.path.exists() {
            return Ok(State::default());
        }
        let text = crate::input::read_text(&self.path, crate::input::Kind::State)?;
        serde_json::from_str(&text).map_err(|e| {
            InputError::new(
                &self.path,
                e.line(),
                format!("the state file is damaged ({e}); fix it or delete it (the review may then run again today)"),
            )
        })
    }

    /// Writes the state atomically (a temporary file renamed over the old one).
    pub fn save(&self, state: &State) -> Result<(), InputError> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                InputError::new(
                    &self.path,
                    0,
                    format!("cannot create the folder for the state file: {e}"),
                )
            })?;
        }
        let tmp = self.path.with_extension("tmp");
        let text = serde_json::to_string_pretty(state).unwrap_or_default();
        std::fs::write(&tmp, text + "\n")
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| {
                InputError::new(&self.path, 0, format!("cannot write the state file: {e}"))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let file = StateFile::new(&dir.path().join("sub/state.json"));
        assert_eq!(file.load().unwrap(), State::default());
        let state = State {
            last_run_date: Some("2026-11-29".parse().unwrap()),
        };
        file.save(&state).unwrap();
        assert_eq!(file.load().unwrap(), state);
        std::fs::write(
            dir.path().join("sub/state.json"),
            "{\n\"last_run_date\": 5\n}",
        )
        .unwrap();
        let e = file.load().unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }
}
