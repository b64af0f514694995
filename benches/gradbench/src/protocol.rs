//! GradBench's protocol: one JSON message in, one JSON response out.
//!
//! Every message gets exactly one response carrying its `id`, except `end`, after
//! which the eval reads nothing. A message this tool cannot use (malformed JSON, a
//! missing field, an unknown module or function, a bad input) is answered with
//! `"success": false` and an `"error"` that says what was wrong; the tool keeps
//! reading.

use crate::evaluation::{EvalError, Evaluation};
use crate::modules::{self, Module};
use serde_json::{json, Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The tool's name in the `start` response.
pub const TOOL: &str = "mochi";

/// What the tool does with one line of input.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Write this response line.
    Line(String),
    /// The eval has ended the session: write nothing and stop reading.
    End,
}

/// Answers one protocol message (one line of the eval's output).
pub fn respond(line: &str) -> Reply {
    let message: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Reply::Line(failure(Value::Null, format!("malformed JSON message: {e}"))),
    };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let kind = message.get("kind").and_then(Value::as_str);
    let response = match kind {
        Some("end") => return Reply::End,
        Some("start") => json!({
            "id": id,
            "tool": TOOL,
            "config": { "version": env!("CARGO_PKG_VERSION") },
        }),
        Some("define") => match message.get("module").and_then(Value::as_str) {
            None => return Reply::Line(failure(id, "define message without a \"module\" string")),
            Some(module) => define(id, module),
        },
        Some("evaluate") => evaluate(id, &message),
        Some(_) => json!({ "id": id }),
        None => return Reply::Line(failure(id, "message without a \"kind\" string")),
    };
    Reply::Line(response.to_string())
}

fn define(id: Value, module: &str) -> Value {
    match modules::lookup(module) {
        Some(Module::Implemented(_)) => json!({ "id": id, "success": true }),
        Some(Module::Unsupported(reason)) => json!({
            "id": id,
            "success": false,
            "error": EvalError::Unsupported { module: module.to_owned(), reason }.to_string(),
        }),
        None => json!({
            "id": id,
            "success": false,
            "error": EvalError::UnknownModule(module.to_owned()).to_string(),
        }),
    }
}

fn evaluate(id: Value, message: &Value) -> Value {
    let field = |name: &str| message.get(name).and_then(Value::as_str);
    let (Some(module), Some(function)) = (field("module"), field("function")) else {
        return failure_value(
            id,
            "evaluate message without \"module\" and \"function\" strings",
        );
    };
    let Some(input) = message.get("input") else {
        return failure_value(id, "evaluate message without an \"input\"");
    };
    let result = match modules::lookup(module) {
        Some(Module::Implemented(evaluator)) => guarded(|| evaluator(function, input)),
        Some(Module::Unsupported(reason)) => Err(EvalError::Unsupported {
            module: module.to_owned(),
            reason,
        }),
        None => Err(EvalError::UnknownModule(module.to_owned())),
    };
    match result {
        Ok(evaluation) => {
            let mut response = Map::new();
            response.insert("id".into(), id);
            response.insert("success".into(), Value::Bool(true));
            response.insert("output".into(), evaluation.output);
            response.insert(
                "timings".into(),
                serde_json::to_value(evaluation.timings).expect("timings are plain data"),
            );
            Value::Object(response)
        }
        Err(e) => failure_value(id, e.to_string()),
    }
}

/// Runs one evaluation, turning a panic (a bug, or an input no check foresaw) into an
/// error response, so one bad message never ends the session.
pub fn guarded(f: impl FnOnce() -> Result<Evaluation, EvalError>) -> Result<Evaluation, EvalError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        Err(EvalError::Panicked(what))
    })
}

fn failure_value(id: Value, error: impl Into<String>) -> Value {
    json!({ "id": id, "success": false, "error": error.into() })
}

fn failure(id: Value, error: impl Into<String>) -> String {
    failure_value(id, error).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_evaluation_becomes_an_error() {
        let r = guarded(|| panic!("index out of bounds"));
        assert_eq!(
            r.unwrap_err(),
            EvalError::Panicked("index out of bounds".into())
        );
        let r = guarded(|| panic!("{} of {}", 3, 2));
        assert_eq!(r.unwrap_err(), EvalError::Panicked("3 of 2".into()));
    }
}
