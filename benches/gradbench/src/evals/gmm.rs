//! `gmm`: the log posterior of a Gaussian mixture model with a Wishart prior on the
//! precision matrices, and its gradient with respect to `alpha`, `mu`, `q` and `l`.
//!
//! Written the way the eval's README simplifies the densities (and ADBench's helpers
//! `logsumexp`, `sqnorm`, `Qtimesx` and `log_wishart_prior`):
//!
//! `βᵢₖ = αₖ − ½‖Qₖ(xᵢ − μₖ)‖² + Σⱼ qₖⱼ`, with `Qₖ` lower triangular, diagonal `exp(qₖ)`
//! and `lₖ` below the diagonal column by column;
//! `log p(X | θ, φ) = −N(D/2 · log 2π + logsumexp(α)) + Σᵢ logsumexp(βᵢ)`;
//! `log p(θ) = K(nD log(γ/√2) − log Γ_D(n/2)) − γ²/2 · Σₖ‖Qₖ‖²_F + m Σₖ Σⱼ qₖⱼ`,
//! `n = D + m + 1`.

use crate::evals::lse::logsumexp;
use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::f64::consts::PI;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The dimension `D`.
    pub d: usize,
    /// The number of components `K`.
    pub k: usize,
    /// The number of observations `N`.
    pub n: usize,
    /// The weight parameters `α` (`K`).
    pub alpha: Vec<f64>,
    /// The means `μₖ` (`K × D`).
    pub mu: Vec<Vec<f64>>,
    /// The logarithms of the diagonals of `Qₖ` (`K × D`).
    pub q: Vec<Vec<f64>>,
    /// The strictly lower triangular parts of `Qₖ`, column by column (`K × D(D−1)/2`).
    pub l: Vec<Vec<f64>>,
    /// The observations `xᵢ` (`N × D`).
    pub x: Vec<Vec<f64>>,
    /// The additional degrees of freedom `m` of the Wishart prior.
    pub m: usize,
    /// The precision `γ` of the Wishart prior.
    pub gamma: f64,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// The output of `jacobian`: the gradient, shaped like the independent variables.
#[derive(Debug, Serialize, PartialEq)]
pub struct Gradient {
    /// `∂F/∂α`.
    pub alpha: Vec<f64>,
    /// `∂F/∂μ`.
    pub mu: Vec<Vec<f64>>,
    /// `∂F/∂q`.
    pub q: Vec<Vec<f64>>,
    /// `∂F/∂l`.
    pub l: Vec<Vec<f64>>,
}

/// `‖v‖²`.
#[differentiable]
pub fn sqnorm(v: &[f64]) -> f64 {
    let mut s = 0.0;
    for vi in v.iter() {
        s += vi * vi;
    }
    s
}

/// `out = a − b`.
#[differentiable]
pub fn subtract(a: &[f64], b: &[f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = a[i] - b[i];
    }
}

/// `out = Q v` for the lower triangular `Q` with diagonal `q_diag` and strictly lower
/// part `l`, filled column by column.
// The packed index of `l` follows the column loop, so the loops index.
#[allow(clippy::needless_range_loop)]
#[differentiable]
pub fn qtimesx(q_diag: &[f64], l: &[f64], v: &[f64], out: &mut [f64]) {
    let d = v.len();
    for i in 0..d {
        out[i] = q_diag[i] * v[i];
    }
    let mut li = 0;
    for j in 0..d {
        for i in j + 1..d {
            out[i] += l[li] * v[j];
            li += 1;
        }
    }
}

/// `exp` of every element.
#[differentiable]
pub fn exp_each(v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for i in 0..v.len() {
        out[i] = v[i].exp();
    }
    out
}

/// `Σᵢ vᵢ`.
#[differentiable]
pub fn sum(v: &[f64]) -> f64 {
    let mut s = 0.0;
    for vi in v.iter() {
        s += vi;
    }
    s
}

/// The Wishart log-prior without its constant: `Σₖ (−γ²/2 ‖Qₖ‖²_F + m Σⱼ qₖⱼ)`.
#[differentiable]
pub fn log_wishart_prior(
    q_diags: &[Vec<f64>],
    sum_qs: &[f64],
    l: &[Vec<f64>],
    gamma: f64,
    m: usize,
) -> f64 {
    let mut out = 0.0;
    for k in 0..q_diags.len() {
        let frobenius = sqnorm(&q_diags[k]) + sqnorm(&l[k]);
        out += 0.5 * gamma * gamma * frobenius - m as f64 * sum_qs[k];
    }
    -out
}

/// The constant part of the log posterior: `−N·D/2 · log 2π` from the likelihood and
/// `K(nD log(γ/√2) − log Γ_D(n/2))` from the prior, `n = D + m + 1`.
pub fn constant(d: usize, k: usize, n: usize, m: usize, gamma: f64) -> f64 {
    let (d, k, n) = (d as f64, k as f64, n as f64);
    let dof = d + m as f64 + 1.0;
    let likelihood = -n * d * 0.5 * (2.0 * PI).ln();
    let prior = k * (dof * d * (gamma.ln() - 0.5 * 2f64.ln()) - log_multigamma(0.5 * dof, d));
    likelihood + prior
}

/// `log Γ_p(a) = p(p−1)/4 · log π + Σⱼ₌₁ᵖ log Γ(a + (1 − j)/2)`.
pub fn log_multigamma(a: f64, p: f64) -> f64 {
    let mut out = 0.25 * p * (p - 1.0) * PI.ln();
    let mut j = 1.0;
    while j <= p {
        out += libm::lgamma(a + 0.5 * (1.0 - j));
        j += 1.0;
    }
    out
}

/// The log posterior `F` without its constant (see [`constant`]).
// A row of `x` bound by `for x_i in x.iter()` is an owned copy in the derived rule, so
// the observations are indexed.
#[allow(clippy::needless_range_loop)]
#[differentiable]
pub fn log_posterior(
    alpha: &[f64],
    mu: &[Vec<f64>],
    q: &[Vec<f64>],
    l: &[Vec<f64>],
    x: &[Vec<f64>],
    gamma: f64,
    m: usize,
) -> f64 {
    let k = alpha.len();
    let d = q[0].len();
    let n = x.len();
    let mut q_diags = vec![vec![0.0; d]; k];
    let mut sum_qs = vec![0.0; k];
    for c in 0..k {
        q_diags[c] = exp_each(&q[c]);
        sum_qs[c] = sum(&q[c]);
    }
    let mut x_centered = vec![0.0; d];
    let mut q_x_centered = vec![0.0; d];
    let mut beta = vec![0.0; k];
    let mut slse = 0.0;
    for i in 0..n {
        for c in 0..k {
            subtract(&x[i], &mu[c], &mut x_centered);
            qtimesx(&q_diags[c], &l[c], &x_centered, &mut q_x_centered);
            beta[c] = alpha[c] + sum_qs[c] - 0.5 * sqnorm(&q_x_centered);
        }
        slse += logsumexp(&beta);
    }
    slse - n as f64 * logsumexp(alpha) + log_wishart_prior(&q_diags, &sum_qs, l, gamma, m)
}

fn check(input: &Input) -> Result<(), EvalError> {
    let (d, k, n) = (input.d, input.k, input.n);
    let rows = |name: &str, v: &[Vec<f64>], len: usize, width: usize| {
        if v.len() != len || v.iter().any(|r| r.len() != width) {
            Err(EvalError::BadInput(format!(
                "{name} must be {len} rows of {width} (d = {d}, k = {k}, n = {n})"
            )))
        } else {
            Ok(())
        }
    };
    if d == 0 || k == 0 || input.alpha.len() != k {
        return Err(EvalError::BadInput(format!(
            "needs d, k ≥ 1 and k weights (d = {d}, k = {k}, alpha has {})",
            input.alpha.len()
        )));
    }
    rows("mu", &input.mu, k, d)?;
    rows("q", &input.q, k, d)?;
    rows("l", &input.l, k, d * (d - 1) / 2)?;
    rows("x", &input.x, n, d)
}

/// Answers `objective` (the log posterior) and `jacobian` (its gradient).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    check(&input)?;
    let i = &input;
    match function {
        "objective" => {
            let (y, timings) = repeat(i.runs, || {
                constant(i.d, i.k, i.n, i.m, i.gamma)
                    + log_posterior(&i.alpha, &i.mu, &i.q, &i.l, &i.x, i.gamma, i.m)
            });
            Evaluation::new(y, timings)
        }
        "jacobian" => {
            let (g, timings) = repeat(i.runs, || {
                let (alpha, mu, q, l, _x, _gamma, _m) =
                    log_posterior::gradient(&i.alpha, &i.mu, &i.q, &i.l, &i.x, i.gamma, i.m);
                Gradient { alpha, mu, q, l }
            });
            Evaluation::new(g, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "gmm",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::test_support::{assert_gradient_matches, seeded};

    fn rows(v: &[f64], width: usize) -> Vec<Vec<f64>> {
        v.chunks(width).map(<[f64]>::to_vec).collect()
    }

    #[test]
    fn gradient_matches_central_differences() {
        for (d, k, n) in [(1, 1, 1), (2, 3, 4), (3, 2, 5)] {
            let lsz = d * (d - 1) / 2;
            let x = rows(&seeded(n * d, 1 + n as u64, -1.0, 1.0), d);
            // the independent variables, flattened: α, μ, q, l
            let theta = seeded(k + 2 * k * d + k * lsz, 50 + d as u64, -0.8, 0.8);
            let split = |t: &[f64]| {
                let (alpha, rest) = t.split_at(k);
                let (mu, rest) = rest.split_at(k * d);
                let (q, l) = rest.split_at(k * d);
                let l = if lsz == 0 {
                    vec![vec![]; k]
                } else {
                    rows(l, lsz)
                };
                (alpha.to_vec(), rows(mu, d), rows(q, d), l)
            };
            let (alpha, mu, q, l) = split(&theta);
            let (ga, gmu, gq, gl, _, _, _) =
                log_posterior::gradient(&alpha, &mu, &q, &l, &x, 1.3, 2);
            let flat: Vec<f64> = ga
                .into_iter()
                .chain(gmu.into_iter().flatten())
                .chain(gq.into_iter().flatten())
                .chain(gl.into_iter().flatten())
                .collect();
            assert_gradient_matches(
                &theta,
                |t| {
                    let (alpha, mu, q, l) = split(t);
                    log_posterior(&alpha, &mu, &q, &l, &x, 1.3, 2)
                },
                flat,
            );
        }
    }

    #[test]
    fn one_component_one_dimension_is_a_normal_log_density_plus_prior() {
        // K = D = 1: F = log N(x; μ, e^{−2q}) + log W₁(e^{2q}; γ⁻², 1 + m + 1)
        let (x, mu, q, gamma, m) = (0.3_f64, -0.2_f64, 0.4_f64, 1.5_f64, 1_usize);
        let f = constant(1, 1, 1, m, gamma)
            + log_posterior(
                &[0.7],
                &[vec![mu]],
                &[vec![q]],
                &[vec![]],
                &[vec![x]],
                gamma,
                m,
            );
        let precision = (2.0 * q).exp();
        let likelihood = 0.5 * (precision / (2.0 * PI)).ln() - 0.5 * precision * (x - mu).powi(2);
        // Wishart with p = 1, n = 3, V = 1/γ²: X^{(n−2)/2} e^{−γ²X/2} / (2^{n/2} γ^{−n} Γ(n/2))
        let n = 3.0;
        let prior = 0.5 * (n - 2.0) * precision.ln()
            - 0.5 * gamma * gamma * precision
            - (0.5 * n * 2f64.ln() - n * gamma.ln() + libm::lgamma(0.5 * n));
        assert!(
            (f - (likelihood + prior)).abs() < 1e-12,
            "{f} against {}",
            likelihood + prior
        );
    }

    #[test]
    fn jacobian_output_is_shaped_like_the_independent_variables() {
        let input = serde_json::json!({
            "d": 3, "k": 2, "n": 2, "m": 0, "gamma": 1.0,
            "alpha": [0.1, -0.2],
            "mu": [[0.1, 0.2, 0.3], [0.0, -0.1, 0.2]],
            "q": [[0.1, 0.0, -0.1], [0.2, 0.1, 0.0]],
            "l": [[0.5, -0.5, 0.25], [0.1, 0.2, 0.3]],
            "x": [[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]],
            "min_runs": 2, "min_seconds": 0.0
        });
        let e = evaluate("jacobian", &input).unwrap();
        assert_eq!(e.timings.len(), 2);
        for (key, rows, width) in [("mu", 2, 3), ("q", 2, 3), ("l", 2, 3)] {
            let v = e.output[key].as_array().unwrap();
            assert_eq!(v.len(), rows, "{key}");
            assert!(
                v.iter().all(|r| r.as_array().unwrap().len() == width),
                "{key}"
            );
        }
        assert_eq!(e.output["alpha"].as_array().unwrap().len(), 2);
        let mut bad = input.clone();
        bad["l"] = serde_json::json!([[0.5], [0.1]]);
        assert!(matches!(
            evaluate("jacobian", &bad),
            Err(EvalError::BadInput(_))
        ));
    }
}
