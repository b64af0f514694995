//! What an evaluation returns ([`Evaluation`]), why it fails ([`EvalError`]), and how an
//! eval reads its input ([`parse_input`]): what every eval imports. The names of the
//! implemented modules ([`IMPLEMENTED`]) are here too, since the error for an unknown
//! module lists them; `modules`, the dispatcher, re-exports that list beside `lookup`.

use crate::runs::Timing;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// What one `evaluate` message produced: the function's output and one timing per run.
#[derive(Debug)]
pub struct Evaluation {
    /// The function's output as the eval expects it.
    pub output: Value,
    /// One `"evaluate"` timing per run.
    pub timings: Vec<Timing>,
}

impl Evaluation {
    /// An evaluation of `output` (serialised to JSON) timed by `timings`.
    pub fn new(output: impl Serialize, timings: Vec<Timing>) -> Result<Self, EvalError> {
        let output = serde_json::to_value(output).map_err(|e| EvalError::Output(e.to_string()))?;
        Ok(Evaluation { output, timings })
    }
}

/// Why an `evaluate` message could not be answered with an output.
#[derive(Debug, Clone, PartialEq)]
pub enum EvalError {
    /// The module is not one this tool knows.
    UnknownModule(String),
    /// The module is known but this tool does not implement it (the reason says why).
    Unsupported {
        /// The module's name.
        module: String,
        /// Why it is not implemented.
        reason: &'static str,
    },
    /// The module has no function of this name.
    UnknownFunction {
        /// The module's name.
        module: &'static str,
        /// The function the message asked for.
        function: String,
    },
    /// The module is implemented but not this function of it (the reason says why).
    UnsupportedFunction {
        /// The module's name.
        module: &'static str,
        /// The function the message asked for.
        function: String,
        /// Why it is not implemented.
        reason: &'static str,
    },
    /// The input did not have the eval's input type, or its sizes disagree.
    BadInput(String),
    /// The output could not be written as JSON.
    Output(String),
    /// The evaluation panicked (the message says where); the tool keeps running.
    Panicked(String),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::UnknownModule(m) => write!(
                f,
                "unknown module {m:?}; mochi-gradbench implements {}",
                IMPLEMENTED.join(", ")
            ),
            EvalError::Unsupported { module, reason } => {
                write!(f, "module {module:?} is not supported by mochi: {reason}")
            }
            EvalError::UnknownFunction { module, function } => {
                write!(f, "module {module:?} has no function {function:?}")
            }
            EvalError::UnsupportedFunction {
                module,
                function,
                reason,
            } => write!(
                f,
                "function {function:?} of module {module:?} is not supported by mochi: {reason}"
            ),
            EvalError::BadInput(e) => write!(f, "bad input: {e}"),
            EvalError::Output(e) => write!(f, "output not representable as JSON: {e}"),
            EvalError::Panicked(e) => write!(f, "the evaluation panicked: {e}"),
        }
    }
}

impl std::error::Error for EvalError {}

/// Parses an `evaluate` message's input as the eval's input type.
pub fn parse_input<T: DeserializeOwned>(input: &Value) -> Result<T, EvalError> {
    T::deserialize(input).map_err(|e| EvalError::BadInput(e.to_string()))
}

/// The modules with an implementation, in GradBench's order.
pub const IMPLEMENTED: [&str; 12] = [
    "hello", "lse", "llsq", "det", "gmm", "ode", "kmeans", "lstm", "ba", "ht", "particle", "saddle",
];
