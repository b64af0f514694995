//! `lse`: LogSumExp and its gradient, with the maximum subtracted first
//! (`LSE(x) = a + log Σᵢ exp(xᵢ − a)`, `a = max x`) as the eval's README specifies.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::prelude::*;
use serde::Deserialize;
use serde_json::Value;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The vector `x` (not empty).
    pub x: Vec<f64>,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// `log Σᵢ exp(xᵢ)`, computed stably as `a + log Σᵢ exp(xᵢ − a)` with `a = max x`.
///
/// The derivative goes through the maximum too; its contribution is
/// `1 − Σᵢ softmax(x)ᵢ`, zero up to rounding.
#[differentiable]
pub fn logsumexp(x: &[f64]) -> f64 {
    let mut a = x[0];
    for &xi in x.iter() {
        a = a.max(xi);
    }
    let mut s = 0.0;
    for xi in x.iter() {
        s += (xi - a).exp();
    }
    a + s.ln()
}

/// Answers `primal` (LSE(x)) and `gradient` (∇LSE(x), the softmax of `x`).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    if input.x.is_empty() {
        return Err(EvalError::BadInput("x is empty".into()));
    }
    let x = input.x.as_slice();
    match function {
        "primal" => {
            let (y, timings) = repeat(input.runs, || logsumexp(x));
            Evaluation::new(y, timings)
        }
        "gradient" => {
            let (dx, timings) = repeat(input.runs, || logsumexp::gradient(x));
            Evaluation::new(dx, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "lse",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::test_support::{assert_gradient_matches, seeded};

    #[test]
    fn gradient_matches_central_differences() {
        for n in [1, 2, 7, 40] {
            let x = seeded(n, 11 + n as u64, -3.0, 3.0);
            assert_gradient_matches(&x, logsumexp, logsumexp::gradient(&x));
        }
    }

    #[test]
    fn gradient_is_the_softmax() {
        let x = [0.5, -1.0, 2.0];
        let g = logsumexp::gradient(&x);
        let z: f64 = x.iter().map(|v| v.exp()).sum();
        for i in 0..3 {
            // ∂LSE/∂xᵢ = exp(xᵢ) / Σⱼ exp(xⱼ)
            assert!((g[i] - x[i].exp() / z).abs() < 1e-15);
        }
    }
}
