//! Which GradBench modules (evals) this tool answers, and the evaluator of each.

use crate::evals;
use crate::evaluation::{EvalError, Evaluation};
use serde_json::Value;

pub use crate::evaluation::IMPLEMENTED;

/// An eval's entry point: the function name and the raw input.
pub type Evaluator = fn(&str, &Value) -> Result<Evaluation, EvalError>;

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
