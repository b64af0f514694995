//! `hello`: `square(x) = x²` and `double`, its derivative `2x`. The input is a bare
//! number and there are no `min_runs`/`min_seconds` fields: each function runs once.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::prelude::*;
use serde_json::Value;

/// `f(x) = x²`.
#[differentiable]
pub fn square(x: f64) -> f64 {
    x * x
}

/// Answers `square` and `double` (the gradient of `square`).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let x: f64 = parse_input(input)?;
    match function {
        "square" => {
            let (y, timings) = repeat(Runs::default(), || square(x));
            Evaluation::new(y, timings)
        }
        "double" => {
            let (dx, timings) = repeat(Runs::default(), || square::gradient(x));
            Evaluation::new(dx, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "hello",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_is_twice_the_input() {
        // d/dx x² = 2x
        assert_eq!(square::gradient(1.5), 3.0);
        assert_eq!(square(1.5), 2.25);
    }
}
