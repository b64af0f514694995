//! Repeated, timed evaluation: the protocol's `min_runs` and `min_seconds`.

use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::time::Instant;

/// One entry of a response's `timings`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// What was timed; `"evaluate"` is one call of the function itself.
    pub name: String,
    /// How long it took.
    pub nanoseconds: u128,
}

/// How often to run a function: at least `min_runs` times, and until the runs add up
/// to at least `min_seconds`, whichever takes longer.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct Runs {
    /// The least number of runs.
    #[serde(default = "one")]
    pub min_runs: usize,
    /// The least total time of the runs, in seconds.
    #[serde(default)]
    pub min_seconds: f64,
}

fn one() -> usize {
    1
}

impl Default for Runs {
    fn default() -> Self {
        Runs {
            min_runs: 1,
            min_seconds: 0.0,
        }
    }
}

/// Runs `f` as often as `runs` asks, timing each call, and returns the last result with
/// one `"evaluate"` timing per call.
///
/// JSON decoding and encoding stay outside: `f` sees parsed inputs and returns the
/// value the response will carry. The result of each call goes through `black_box`, so
/// the compiler cannot drop a call whose result is overwritten by the next one.
pub fn repeat<T>(runs: Runs, mut f: impl FnMut() -> T) -> (T, Vec<Timing>) {
    let mut timings = Vec::new();
    let mut elapsed = 0.0;
    loop {
        let start = Instant::now();
        let out = black_box(f());
        let took = start.elapsed();
        timings.push(Timing {
            name: "evaluate".to_owned(),
            nanoseconds: took.as_nanos(),
        });
        elapsed += took.as_secs_f64();
        if timings.len() >= runs.min_runs.max(1) && elapsed >= runs.min_seconds {
            return (out, timings);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_at_least_min_runs_times() {
        let mut calls = 0;
        let (last, timings) = repeat(
            Runs {
                min_runs: 5,
                min_seconds: 0.0,
            },
            || {
                calls += 1;
                calls
            },
        );
        assert_eq!(calls, 5);
        assert_eq!(last, 5);
        assert_eq!(timings.len(), 5);
        assert!(timings.iter().all(|t| t.name == "evaluate"));
    }

    #[test]
    fn zero_min_runs_still_runs_once() {
        let (_, timings) = repeat(
            Runs {
                min_runs: 0,
                min_seconds: 0.0,
            },
            || 1,
        );
        assert_eq!(timings.len(), 1);
    }

    #[test]
    fn runs_default_when_the_input_has_no_runs_fields() {
        let runs: Runs = serde_json::from_str("{}").unwrap();
        assert_eq!(runs, Runs::default());
    }
}
