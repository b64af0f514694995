//! The 13 cases, each written once as idiomatic Rust under `#[differentiable]`.
//!
//! The plain call of each function is the primal column; its `value_and_gradient_into`
//! companion is the mochi column.

// The hand-written loops index on purpose: they are the cases `_sum_1000` and
// `_sum_sin_1000` ("no array rule"), not style slips.
#![allow(clippy::needless_range_loop)]

use mochi::prelude::*;
#[allow(unused_imports)]
use mochi_rules_linalg::rules::*;
#[allow(unused_imports)]
use mochi_rules_ndarray::rules::*;
use ndarray::linalg::kron;
use ndarray::{s, Array1, Array2, ArrayView2};

/// `sum_1000`: the sum of all elements, by ndarray's `sum`.
#[differentiable]
pub fn sum_all(x: &Array1<f64>) -> f64 {
    x.sum()
}

/// `_sum_1000`: the same sum as a hand-written loop.
#[differentiable]
pub fn sum_loop(x: &[f64]) -> f64 {
    let mut y = 0.0;
    for n in 0..x.len() {
        y += x[n];
    }
    y
}

/// `sum_sin_1000`: the sum of `sin` over the elements, by an array adapter.
#[differentiable]
pub fn sum_sin(x: &Array1<f64>) -> f64 {
    x.mapv(|v| v.sin()).sum()
}

/// `_sum_sin_1000`: the same as a hand-written loop.
#[differentiable]
pub fn sum_sin_loop(x: &[f64]) -> f64 {
    let mut y = 0.0;
    for n in 0..x.len() {
        y += x[n].sin();
    }
    y
}

/// `kron_sum`: the sum of the Kronecker product `kron(A, B)`.
#[differentiable]
pub fn kron_sum(a: ArrayView2<f64>, b: ArrayView2<f64>) -> f64 {
    kron(&a, &b).sum()
}

/// `kron_view_sum`: `kron_sum` of the leading `B.nrows()/2 × B.ncols()/2` block of `A`
/// and the upper triangle of `B`.
#[differentiable]
pub fn kron_view_sum(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let (m, n) = (b.nrows() / 2, b.ncols() / 2);
    let a_block = a.slice(s![0..m, 0..n]);
    let b_upper = b.triu(0);
    kron_sum(a_block, b_upper.view())
}

/// `naive_map_sin_cos_exp`: a loop writing `sin(cos(exp(x)))` into a fresh array, then its sum.
#[differentiable]
pub fn naive_map_sin_cos_exp(x: &Array2<f64>) -> f64 {
    let mut y = Array2::zeros(x.dim());
    for i in 0..x.nrows() {
        for j in 0..x.ncols() {
            y[[i, j]] = x[[i, j]].exp().cos().sin();
        }
    }
    y.sum()
}

/// `map_sin_cos_exp`: the sum of a map with the closure `v.exp().cos().sin()`.
#[differentiable]
pub fn map_sin_cos_exp(x: &Array2<f64>) -> f64 {
    x.mapv(|v| v.exp().cos().sin()).sum()
}

/// `broadcast_sin_cos_exp`: the sum of elementwise `sin(cos(exp(x)))` as array operations.
#[differentiable]
pub fn broadcast_sin_cos_exp(x: &Array2<f64>) -> f64 {
    x.exp().cos().sin().sum()
}

/// `simple_mlp`: the sum of squares of `Y − W2 · relu(W1 · X)`.
#[differentiable]
pub fn simple_mlp(w2: &Array2<f64>, w1: &Array2<f64>, y: &Array2<f64>, x: &Array2<f64>) -> f64 {
    let h = w1.dot(x);
    let r = h.mapv(|v| if v >= 0.0 { v } else { 0.0 });
    let e = y - &w2.dot(&r);
    (&e * &e).sum()
}

/// `gp_lml`: the log marginal likelihood of a Gaussian process with kernel
/// `exp(−½(xᵢ−xⱼ)²) + s·I`, by Cholesky.
#[differentiable]
pub fn gp_lml(x: &Array1<f64>, y: &Array1<f64>, s: f64) -> f64 {
    use mochi_rules_linalg::{cholesky, logdet_cholesky, solve_lower_triangular};
    let n = x.len();
    let xc = x.view().insert_axis(ndarray::Axis(1));
    let xr = x.view().insert_axis(ndarray::Axis(0));
    let d = &xc - &xr;
    let k = (&d * &d * -0.5).exp() + &(Array2::<f64>::eye(n) * s);
    let l = cholesky(&k).expect("the kernel matrix is positive definite");
    let alpha = solve_lower_triangular(&l, y);
    -0.5 * (alpha.dot(&alpha) + logdet_cholesky(&l) + n as f64 * (2.0 * std::f64::consts::PI).ln())
}

/// `turing_broadcast_benchmark`: the log joint of `μ, σ ~ Normal(1, 2)` truncated to
/// `[0.1, 10]` and `xᵢ ~ LogNormal(μ, σ)`, in unconstrained space `θ ∈ ℝ²`.
#[differentiable]
pub fn turing_log_joint(theta: &[f64], data: &[f64]) -> f64 {
    // The observations are data, not parameters.
    let data = no_grad(data);
    let (lo, hi) = (0.1, 10.0);
    // scaled logistic map ℝ → (lo, hi) and the log of its Jacobian
    let p_mu = 1.0 / (1.0 + (-theta[0]).exp());
    let p_sigma = 1.0 / (1.0 + (-theta[1]).exp());
    let mu = lo + (hi - lo) * p_mu;
    let sigma = lo + (hi - lo) * p_sigma;
    let log_jacobian =
        2.0 * (hi - lo).ln() + p_mu.ln() + (1.0 - p_mu).ln() + p_sigma.ln() + (1.0 - p_sigma).ln();
    let log_prior = truncated_normal_logpdf(mu) + truncated_normal_logpdf(sigma);
    // xᵢ ~ LogNormal(μ, σ)
    let mut log_likelihood = 0.0;
    for i in 0..data.len() {
        let lx = data[i].ln();
        let z = (lx - mu) / sigma;
        log_likelihood += -0.5 * z * z - sigma.ln() - lx - HALF_LN_2PI;
    }
    log_prior + log_jacobian + log_likelihood
}

/// `½ ln 2π`.
pub const HALF_LN_2PI: f64 = 0.918_938_533_204_672_7;

/// The log-density of `Normal(1, 2)` truncated to `[0.1, 10]`.
#[differentiable]
pub fn truncated_normal_logpdf(v: f64) -> f64 {
    let z = (v - 1.0) / 2.0;
    -0.5 * z * z - 2.0_f64.ln() - HALF_LN_2PI - truncation_log_mass()
}

/// `ln(Φ((10 − 1)/2) − Φ((0.1 − 1)/2))`, the log of the mass that the truncation keeps.
pub fn truncation_log_mass() -> f64 {
    let phi = |z: f64| 0.5 * (1.0 + libm::erf(z / std::f64::consts::SQRT_2));
    (phi((10.0 - 1.0) / 2.0) - phi((0.1 - 1.0) / 2.0)).ln()
}

include!(concat!(env!("OUT_DIR"), "/large_single_block.rs"));
