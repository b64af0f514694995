//! `ode`: cmpad's `an_ode`, solved by `s` steps of the classical Runge–Kutta method on
//! `[0, 2]` from `y(0) = 0`:
//!
//! `y₀′ = x₀`, `yᵢ′ = xᵢ yᵢ₋₁` for `i > 0` (the right-hand side of GradBench's reference
//! implementation), and the derivative is the gradient of the last component of
//! `y(2)` with respect to `x`.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::prelude::*;
use serde::Deserialize;
use serde_json::Value;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The parameters `x` (length `n`, not empty).
    pub x: Vec<f64>,
    /// The number of Runge–Kutta steps.
    pub s: usize,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// The right-hand side `f(y) = (x₀, x₁y₀, x₂y₁, …)`, written into `z`.
#[differentiable]
pub fn ode_fun(x: &[f64], y: &[f64], z: &mut [f64]) {
    z[0] = x[0];
    for i in 1..x.len() {
        z[i] = x[i] * y[i - 1];
    }
}

/// `y(2)` by `s` classical Runge–Kutta steps of size `h = 2/s` from `y(0) = 0`.
#[differentiable]
pub fn primal(x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let tf = 2.0;
    let h = tf / s as f64;
    let mut k1 = vec![0.0; n];
    let mut k2 = vec![0.0; n];
    let mut k3 = vec![0.0; n];
    let mut k4 = vec![0.0; n];
    let mut y_tmp = vec![0.0; n];
    let mut yf = vec![0.0; n];
    for _step in 0..s {
        ode_fun(x, &yf, &mut k1);
        for i in 0..n {
            y_tmp[i] = yf[i] + h * k1[i] / 2.0;
        }
        ode_fun(x, &y_tmp, &mut k2);
        for i in 0..n {
            y_tmp[i] = yf[i] + h * k2[i] / 2.0;
        }
        ode_fun(x, &y_tmp, &mut k3);
        for i in 0..n {
            y_tmp[i] = yf[i] + h * k3[i];
        }
        ode_fun(x, &y_tmp, &mut k4);
        for i in 0..n {
            yf[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
        }
    }
    yf
}

/// The gradient of the last component of `y(2)` with respect to `x`: the pullback of
/// [`primal`] seeded with the last unit vector.
pub fn gradient(x: &[f64], s: usize) -> Vec<f64> {
    let (y, pb) = primal::pullback(x, s);
    let mut seed = vec![0.0; y.len()];
    seed[y.len() - 1] = 1.0;
    let (dx, _ds) = pb(seed);
    dx
}

/// Answers `primal` (y(2)) and `gradient` (∇ₓ yₙ₋₁(2)).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    if input.x.is_empty() || input.s == 0 {
        return Err(EvalError::BadInput(format!(
            "needs a non-empty x and s ≥ 1 (x has {} elements, s = {})",
            input.x.len(),
            input.s
        )));
    }
    let (x, s) = (input.x.as_slice(), input.s);
    match function {
        "primal" => {
            let (y, timings) = repeat(input.runs, || primal(x, s));
            Evaluation::new(y, timings)
        }
        "gradient" => {
            let (dx, timings) = repeat(input.runs, || gradient(x, s));
            Evaluation::new(dx, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "ode",
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
        for (n, s) in [(1, 1), (3, 2), (6, 5)] {
            let x = seeded(n, 7 + n as u64, 0.0, 1.0);
            assert_gradient_matches(&x, |x| primal(x, s)[n - 1], gradient(&x, s));
        }
    }

    #[test]
    fn runge_kutta_is_exact_for_a_quartic() {
        // n = 4: y₃(t) = x₀x₁x₂x₃ t⁴/24, a quartic RK4 integrates exactly; at t = 2 that
        // is (2/3)·x₀x₁x₂x₃ and ∂y₃/∂xᵢ = y₃/xᵢ.
        let x = [0.5, 0.7, 1.1, 1.3];
        let y3 = 16.0 / 24.0 * x.iter().product::<f64>();
        assert!((primal(&x, 1)[3] - y3).abs() < 1e-15);
        let g = gradient(&x, 3);
        for i in 0..4 {
            assert!((g[i] - y3 / x[i]).abs() < 1e-14);
        }
    }
}
