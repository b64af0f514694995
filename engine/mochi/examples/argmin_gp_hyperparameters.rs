//! A Gaussian process's hyperparameters (length scale, signal and noise scales) fitted
//! by argmin's L-BFGS on the negative log marginal likelihood, whose gradient mochi
//! derives through the kernel matrix, its Cholesky factorisation and the solve.
//!
//! ```sh
//! cargo run --release -p mochi-ad --features argmin --example argmin_gp_hyperparameters
//! ```

use argmin::core::{Executor, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use mochi::prelude::*;
use nalgebra::{DMatrix, DVector};

/// `−log p(y | x, θ)` of a zero-mean GP with the squared-exponential kernel, `θ = (log ℓ,
/// log σ_f, log σ_n)`: `½ yᵀK⁻¹y + ½ log det K + (n/2) log 2π`.
#[differentiable]
pub fn gp_negative_lml(theta: &DVector<f64>, x: &DVector<f64>, y: &DVector<f64>) -> f64 {
    let ell = theta[0].exp();
    let sf2 = (2.0 * theta[1]).exp();
    let sn2 = (2.0 * theta[2]).exp() + 1e-8;
    let n = x.len();
    let mut k = DMatrix::<f64>::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let d = (x[i] - x[j]) / ell;
            k[(i, j)] = sf2 * (-0.5 * d * d).exp();
        }
        k[(i, i)] += sn2;
    }
    let chol = k.cholesky().expect("K + σ_n² I is positive definite");
    let alpha = chol.solve(y);
    let log_two_pi = (2.0 * std::f64::consts::PI).ln();
    0.5 * y.dot(&alpha) + 0.5 * chol.ln_determinant() + 0.5 * (n as f64) * log_two_pi
}

/// `n` points of `sin(x)` on `[0, 6]` with Gaussian-like noise of scale `noise` (a sum
/// of uniforms from a fixed linear congruential generator).
pub fn data(n: usize, noise: f64) -> (DVector<f64>, DVector<f64>) {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut uniform = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x = DVector::from_fn(n, |i, _| 6.0 * i as f64 / (n - 1) as f64);
    let y = x.map(|v| {
        let e: f64 = (0..12).map(|_| uniform()).sum::<f64>() - 6.0; // ≈ N(0, 1)
        v.sin() + noise * e
    });
    (x, y)
}

/// L-BFGS from `θ = 0` (ℓ = σ_f = σ_n = 1): the hyperparameters, the negative log
/// marginal likelihood and the gradient's norm there.
pub fn fit(x: &DVector<f64>, y: &DVector<f64>) -> (DVector<f64>, f64, f64) {
    let problem = mochi::argmin::Problem::new(
        |t: &DVector<f64>| gp_negative_lml(t, x, y),
        |t: &DVector<f64>| gp_negative_lml::gradient(t, x, y).0,
    );
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-9)
        .expect("a valid tolerance");
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(DVector::zeros(3)).max_iters(200))
        .run()
        .expect("L-BFGS runs");
    let theta = result
        .state()
        .get_best_param()
        .expect("a best point")
        .clone();
    let (value, (gradient, _, _)) = gp_negative_lml::value_and_gradient(&theta, x, y);
    (theta, value, gradient.norm())
}

#[allow(dead_code)]
fn main() {
    let (x, y) = data(30, 0.1);
    let start = gp_negative_lml(&DVector::zeros(3), &x, &y);
    let (theta, value, gradient_norm) = fit(&x, &y);
    let scales = theta.map(f64::exp);
    println!("−log p(y) from {start:.4} to {value:.4}, |gradient| {gradient_norm:.2e}");
    println!(
        "length scale {:.3}, signal scale {:.3}, noise scale {:.3} (data made with noise 0.1)",
        scales[0], scales[1], scales[2]
    );
}
