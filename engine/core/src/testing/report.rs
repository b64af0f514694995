//! What a rule test found: the checks, their failures, and the readable report.

use std::fmt;

/// One of the properties the harness checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    /// The rule's value equals the plain function's, exactly (`NaN` equals `NaN`).
    Primal,
    /// The arguments after forward and pullback equal what the plain function leaves.
    Inputs,
    /// Every argument cotangent has its primal's shape.
    Shapes,
    /// `⟨ȳ, (f(x+hẋ) − f(x−hẋ))/2h⟩ ≈ ⟨x̄, ẋ⟩`.
    FiniteDifferences,
    /// The pullback adds into seeded accumulators instead of overwriting them.
    Accumulation,
    /// `⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩` against a forward-mode JVP.
    Jvp,
    /// The pullback allocates nothing.
    NoAllocation,
    /// A structured output cotangent or accumulator (an array in broadcast form) gives
    /// what its dense expansion gives.
    Structured,
}

impl Check {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Check::Primal => "primal value",
            Check::Inputs => "inputs after the rule",
            Check::Shapes => "cotangent shapes",
            Check::FiniteDifferences => "finite differences",
            Check::Accumulation => "accumulation",
            Check::Jvp => "adjoint identity with the JVP",
            Check::NoAllocation => "no allocation in the pullback",
            Check::Structured => "structured cotangents",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One failed comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckFailure {
    /// The check that failed.
    pub check: Check,
    /// The argument (index into the argument tuple) the comparison was about, if one.
    pub argument: Option<usize>,
    /// The random draw (0-based) the comparison used, if any.
    pub sample: Option<usize>,
    /// What was compared, with the numbers.
    pub message: String,
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.check)?;
        if let Some(i) = self.argument {
            write!(f, " argument {i}")?;
        }
        if let Some(s) = self.sample {
            write!(f, ", sample {s}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// How one check went: how many comparisons it made and the worst of them.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSummary {
    /// The check.
    pub check: Check,
    /// How many comparisons it made.
    pub comparisons: usize,
    /// The largest `error / tolerance` among them (`0` when all were exact; above `1` is
    /// a failure).
    pub worst: f64,
}

/// What a rule test checked, returned by [`RuleTest::check`](super::RuleTest::check)
/// when everything passed.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleTestReport {
    /// The seed of the random draws.
    pub seed: u64,
    /// How many random draws (of ẋ, ȳ and accumulator seeds) were made.
    pub samples: usize,
    /// The `Debug` text of the arguments (shortened when long).
    pub arguments: String,
    /// Every check that ran, in the order they ran.
    pub checks: Vec<CheckSummary>,
    /// Things the harness chose not to compare, and why.
    pub notes: Vec<String>,
}

impl RuleTestReport {
    /// How many comparisons `check` made (0 when it did not run).
    pub fn comparisons(&self, check: Check) -> usize {
        self.checks
            .iter()
            .filter(|s| s.check == check)
            .map(|s| s.comparisons)
            .sum()
    }
}

impl fmt::Display for RuleTestReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "arguments: {}", self.arguments)?;
        writeln!(f, "seed {}, {} samples", self.seed, self.samples)?;
        for s in &self.checks {
            writeln!(
                f,
                "  {:<32} {:>4} comparisons, worst error/tolerance {:.3e}",
                s.check.name(),
                s.comparisons,
                s.worst
            )?;
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}

/// A failed rule test: every failed comparison, and the report of what ran.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleTestFailure {
    /// The failed comparisons, in the order they were made.
    pub failures: Vec<CheckFailure>,
    /// What ran.
    pub report: RuleTestReport,
}

impl RuleTestFailure {
    /// The distinct checks that failed, in [`Check`] order.
    pub fn checks(&self) -> Vec<Check> {
        let mut checks: Vec<Check> = self.failures.iter().map(|f| f.check).collect();
        checks.sort();
        checks.dedup();
        checks
    }

    /// Whether `check` failed.
    pub fn failed(&self, check: Check) -> bool {
        self.failures.iter().any(|f| f.check == check)
    }
}

/// At most this many failures are printed; the rest are counted.
const PRINTED_FAILURES: usize = 12;

impl fmt::Display for RuleTestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.checks().into_iter().map(Check::name).collect();
        writeln!(f, "rule test failed: {}", names.join(", "))?;
        for failure in self.failures.iter().take(PRINTED_FAILURES) {
            writeln!(f, "  {failure}")?;
        }
        if self.failures.len() > PRINTED_FAILURES {
            writeln!(f, "  … and {} more", self.failures.len() - PRINTED_FAILURES)?;
        }
        write!(f, "{}", self.report)
    }
}

impl std::error::Error for RuleTestFailure {}

/// Collects the comparisons of one rule test.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) checks: Vec<CheckSummary>,
    pub(crate) failures: Vec<CheckFailure>,
    pub(crate) notes: Vec<String>,
}

/// Where a comparison was made: the argument and the sample, if any.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct At {
    pub(crate) argument: Option<usize>,
    pub(crate) sample: Option<usize>,
}

impl At {
    /// Sample `s`, no particular argument.
    pub(crate) fn sample(s: usize) -> At {
        At {
            argument: None,
            sample: Some(s),
        }
    }
}

impl Recorder {
    /// Records a comparison whose `error / tolerance` is `ratio` (a failure above 1 or
    /// when `NaN`); `message` is only built for failures.
    pub(crate) fn compare(
        &mut self,
        check: Check,
        at: At,
        ratio: f64,
        message: impl FnOnce() -> String,
    ) {
        let summary = match self.checks.iter_mut().find(|s| s.check == check) {
            Some(s) => s,
            None => {
                self.checks.push(CheckSummary {
                    check,
                    comparisons: 0,
                    worst: 0.0,
                });
                self.checks.last_mut().expect("just pushed")
            }
        };
        summary.comparisons += 1;
        if ratio.is_nan() || ratio > summary.worst {
            summary.worst = ratio;
        }
        if ratio.is_nan() || ratio > 1.0 {
            self.failures.push(CheckFailure {
                check,
                argument: at.argument,
                sample: at.sample,
                message: message(),
            });
        }
    }

    /// Records a yes/no comparison.
    pub(crate) fn expect(
        &mut self,
        check: Check,
        at: At,
        ok: bool,
        message: impl FnOnce() -> String,
    ) {
        self.compare(check, at, if ok { 0.0 } else { f64::INFINITY }, message)
    }

    pub(crate) fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}

/// Shortens long `Debug` texts for reports.
pub(crate) fn clip(text: String) -> String {
    const MAX: usize = 400;
    if text.chars().count() <= MAX {
        return text;
    }
    let head: String = text.chars().take(MAX).collect();
    format!("{head}… ({} characters)", text.chars().count())
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted_and_named() {
        let mut r = Recorder::default();
        let at = At {
            argument: Some(1),
            sample: Some(0),
        };
        r.compare(Check::FiniteDifferences, at, 0.5, || {
            unreachable!("passing comparisons build no message")
        });
        r.compare(Check::FiniteDifferences, at, 3.0, || {
            "off by 3 tolerances".into()
        });
        r.expect(Check::Primal, At::default(), false, || "1 vs 2".into());
        let failure = RuleTestFailure {
            failures: r.failures,
            report: RuleTestReport {
                seed: 7,
                samples: 1,
                arguments: "(1.0, 2.0)".into(),
                checks: r.checks,
                notes: r.notes,
            },
        };
        assert_eq!(
            failure.checks(),
            vec![Check::Primal, Check::FiniteDifferences]
        );
        assert_eq!(failure.report.comparisons(Check::FiniteDifferences), 2);
        assert_eq!(failure.report.checks[0].worst, 3.0);
        let text = failure.to_string();
        assert!(
            text.contains("[finite differences] argument 1, sample 0: off by 3 tolerances"),
            "{text}"
        );
        assert!(text.contains("[primal value]: 1 vs 2"), "{text}");
    }

    #[test]
    fn long_texts_are_clipped() {
        let long = "x".repeat(1000);
        let clipped = clip(long);
        assert!(clipped.ends_with("(1000 characters)"));
        assert!(clipped.len() < 500);
    }
}
