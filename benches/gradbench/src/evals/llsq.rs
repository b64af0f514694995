//! `llsq`: the linear least-squares objective of cmpad's `llsq_obj`,
//! `y(x) = ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²` with `tᵢ = −1 + 2i/(n − 1)` and `sᵢ = sign(tᵢ)`.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::prelude::*;
use serde::Deserialize;
use serde_json::Value;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The coefficients `x` (length `m`).
    pub x: Vec<f64>,
    /// The number of sample points `n` (at least 2).
    pub n: usize,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// The sample point `tᵢ = −1 + 2i/(n − 1)`, evenly spaced on `[−1, 1]`.
#[differentiable]
pub fn t(i: usize, n: usize) -> f64 {
    -1.0 + i as f64 * 2.0 / (n as f64 - 1.0)
}

/// The target `sᵢ = sign(tᵢ)`, with `sign(0) = 0`.
#[differentiable]
pub fn s(ti: f64) -> f64 {
    let mut sign = 0.0;
    if ti > 0.0 {
        sign = 1.0;
    }
    if ti < 0.0 {
        sign = -1.0;
    }
    sign
}

/// `y(x) = ½ Σᵢ (sᵢ − x₀ − x₁tᵢ − x₂tᵢ² − ⋯)²` over `n` sample points.
#[differentiable]
pub fn objective(x: &[f64], n: usize) -> f64 {
    let mut sum = 0.0;
    for i in 0..n {
        let ti = t(i, n);
        let mut residual = s(ti);
        let mut power = 1.0;
        for xj in x.iter() {
            residual -= xj * power;
            power *= ti;
        }
        sum += residual * residual;
    }
    sum / 2.0
}

/// Answers `primal` (y(x)) and `gradient` (∇y(x)).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    if input.n < 2 {
        return Err(EvalError::BadInput(format!(
            "n = {} but needs n ≥ 2",
            input.n
        )));
    }
    let (x, n) = (input.x.as_slice(), input.n);
    match function {
        "primal" => {
            let (y, timings) = repeat(input.runs, || objective(x, n));
            Evaluation::new(y, timings)
        }
        "gradient" => {
            let ((dx, _dn), timings) = repeat(input.runs, || objective::gradient(x, n));
            Evaluation::new(dx, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "llsq",
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
        for (n, m) in [(2, 1), (5, 3), (16, 8)] {
            let x = seeded(m, 3 + n as u64, 0.0, 1.0);
            let (dx, _) = objective::gradient(&x, n);
            assert_gradient_matches(&x, |x| objective(x, n), dx);
        }
    }

    #[test]
    fn sign_of_the_middle_sample_is_zero() {
        // n = 3: t = −1, 0, 1
        assert_eq!(t(1, 3), 0.0);
        assert_eq!(s(t(1, 3)), 0.0);
    }
}
