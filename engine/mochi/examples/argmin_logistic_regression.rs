//! Logistic regression on a generated data set, fitted by argmin's L-BFGS with the
//! gradient mochi derives.
//!
//! ```sh
//! cargo run --release -p mochi-ad --features argmin --example argmin_logistic_regression
//! ```

use argmin::core::{Executor, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use mochi::prelude::*;
use nalgebra::{DMatrix, DVector};

/// The mean negative log-likelihood of labels `y ∈ {0, 1}` under `P(y = 1) = σ(x·w)`,
/// with a small ridge penalty.
#[differentiable]
pub fn logistic_loss(w: &DVector<f64>, x: &DMatrix<f64>, y: &DVector<f64>) -> f64 {
    let z = x * w;
    let mut nll = 0.0;
    for i in 0..y.len() {
        // −log σ(z)ʸ (1 − σ(z))¹⁻ʸ = log(1 + eᶻ) − y z
        nll += z[i].exp().ln_1p() - y[i] * z[i];
    }
    nll / (y.len() as f64) + 1e-3 * w.norm_squared()
}

/// `n` samples of three features (the last a constant 1, the intercept) and labels drawn
/// from the model with weights `w_true`, by a fixed linear congruential generator.
pub fn data(n: usize, w_true: &DVector<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut uniform = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x = DMatrix::from_fn(
        n,
        3,
        |_, j| if j == 2 { 1.0 } else { 4.0 * uniform() - 2.0 },
    );
    let y = DVector::from_fn(n, |i, _| {
        let p = 1.0 / (1.0 + (-x.row(i).dot(&w_true.transpose())).exp());
        if uniform() < p {
            1.0
        } else {
            0.0
        }
    });
    (x, y)
}

/// Fits the weights by L-BFGS from zero: the weights, the loss, the gradient's norm
/// there and the number of iterations.
pub fn fit(x: &DMatrix<f64>, y: &DVector<f64>) -> (DVector<f64>, f64, f64, u64) {
    let problem = mochi::argmin::Problem::new(
        |w: &DVector<f64>| logistic_loss(w, x, y),
        |w: &DVector<f64>| logistic_loss::gradient(w, x, y).0,
    );
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-10)
        .expect("a valid tolerance");
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(DVector::zeros(x.ncols())).max_iters(200))
        .run()
        .expect("L-BFGS runs");
    let state = result.state();
    let w = state.get_best_param().expect("a best point").clone();
    let gradient = logistic_loss::gradient(&w, x, y).0;
    (w, state.get_best_cost(), gradient.norm(), state.get_iter())
}

#[allow(dead_code)]
fn main() {
    let w_true = DVector::from_vec(vec![1.5, -2.0, 0.5]);
    let (x, y) = data(2000, &w_true);
    let (w, loss, gradient_norm, iterations) = fit(&x, &y);
    println!("true weights:   {:?}", w_true.as_slice());
    println!("fitted weights: {:?}", w.as_slice());
    println!("loss {loss:.6}, |gradient| {gradient_norm:.2e}, {iterations} iterations");
}
