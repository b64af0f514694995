//! Which GradBench modules (evals) this tool answers, and what an evaluation returns.

use crate::evals;
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

/// An eval's entry point: the function name and the raw input.
pub type Evaluator = fn(&str, &Value) -> Result<Evaluation, EvalError>;

/// The modules with an implementation, in GradBench's order.
pub const IMPLEMENTED: [&str; 12] = [
    "hello", "lse", "llsq", "det", "gmm", "ode", "kmeans", "lstm", "ba", "ht", "particle", "saddle",
];

/// The GradBench modules this tool declines at `define`, and why: none since every
/// eval has an implementation (`particle` and `saddle` decline some of their functions,
/// see [`EvalError::UnsupportedFunction`]).
pub const UNSUPPORTED: [(&str, &str); 0] = [];

/// How this tool answers a module.
#[derive(Debug, Clone, Copy)]
pub enum Module {
    /// The module is implemented by this evaluator.
    Implemented(Evaluator),
    /// The module is known and declined for this reason.
    Unsupported(&'static str),
}

/// How this tool answers the module `name`, or `None` if it does not know it.
pub fn lookup(name: &str) -> Option<Module> {
    let evaluator: Evaluator = match name {
        "hello" => evals::hello::evaluate,
        "lse" => evals::lse::evaluate,
        "llsq" => evals::llsq::evaluate,
        "det" => evals::det::evaluate,
        "gmm" => evals::gmm::evaluate,
        "ode" => evals::ode::evaluate,
        "kmeans" => evals::kmeans::evaluate,
        "lstm" => evals::lstm::evaluate,
        "ba" => evals::ba::evaluate,
        "ht" => evals::ht::evaluate,
        "particle" => evals::particle::evaluate,
        "saddle" => evals::saddle::evaluate,
        _ => {
            return UNSUPPORTED
                .iter()
                .find(|(module, _)| *module == name)
                .map(|(_, reason)| Module::Unsupported(reason))
        }
    };
    Some(Module::Implemented(evaluator))
}
