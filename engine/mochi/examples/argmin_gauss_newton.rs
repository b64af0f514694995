//! Least squares by argmin's Gauss–Newton method, with the Jacobian mochi derives by
//! forward mode (the generic residual function's `jacobian` companion): fitting an
//! exponential decay `y = a e^{−k t} + c` to thirty samples, and Rosenbrock's function
//! written as residuals.
//!
//! ```sh
//! cargo run --release -p mochi-ad --features argmin --example argmin_gauss_newton
//! ```

#![allow(clippy::needless_range_loop)]

use argmin::core::{Executor, State};
use argmin::solver::gaussnewton::GaussNewton;
use mochi::num_traits::Float;
use mochi::prelude::*;
use nalgebra::DVector;

/// The number of samples.
pub const SAMPLES: usize = 30;

/// The decay the samples come from: `(a, k, c)`.
pub const TRUE_PARAMS: [f64; 3] = [2.5, 1.3, 0.4];

/// The time of sample `i`: `0, 0.2, …, 5.8`.
pub fn time(i: usize) -> f64 {
    0.2 * i as f64
}

/// Sample `i`: `a e^{−k t} + c` at the true parameters, with a measurement error of at
/// most 0.01 (deterministic, so the fit is reproducible).
pub fn observation(i: usize) -> f64 {
    let [a, k, c] = TRUE_PARAMS;
    a * (-k * time(i)).exp() + c + 0.01 * (7.3 * i as f64).sin()
}

/// `rᵢ = a e^{−k tᵢ} + c − yᵢ` for `θ = (a, k, c)`.
#[differentiable]
pub fn decay_residuals<T: Float>(theta: &[T]) -> Vec<T> {
    let mut r = vec![T::zero(); SAMPLES];
    for i in 0..SAMPLES {
        let t = T::from(time(i)).unwrap();
        let y = T::from(observation(i)).unwrap();
        r[i] = theta[0] * (-(theta[1] * t)).exp() + theta[2] - y;
    }
    r
}

/// Rosenbrock's function as residuals, `rᵢ = (10 (xᵢ₊₁ − xᵢ²), 1 − xᵢ)`: zero at
/// `(1, …, 1)`.
#[differentiable]
pub fn rosenbrock_residuals<T: Float>(x: &[T]) -> Vec<T> {
    let mut r = vec![T::zero(); 2 * (x.len() - 1)];
    for i in 0..x.len() - 1 {
        r[2 * i] = T::from(10.0).unwrap() * (x[i + 1] - x[i] * x[i]);
        r[2 * i + 1] = T::one() - x[i];
    }
    r
}

/// A residual function's derived Jacobian: `f::jacobian`.
pub type JacobianFn = fn(&[f64]) -> (Vec<f64>, ndarray::Array2<f64>);

/// Gauss–Newton from `start` on the residuals `f` (with their derived Jacobian
/// `jacobian`): the last point and the number of iterations.
pub fn gauss_newton(
    f: fn(&[f64]) -> Vec<f64>,
    jacobian: JacobianFn,
    start: &[f64],
) -> (DVector<f64>, u64) {
    let problem = mochi::argmin::ResidualProblem::new(f, jacobian);
    let result = Executor::new(problem, GaussNewton::<f64>::new())
        .configure(|state| state.param(DVector::from_column_slice(start)).max_iters(50))
        .run()
        .expect("Gauss-Newton runs");
    let state = result.state();
    let x = state.get_param().expect("a point").clone();
    (x, state.get_iter())
}

/// The decay fitted from `(1, 1, 0)`.
pub fn fit_decay() -> (DVector<f64>, u64) {
    gauss_newton(decay_residuals, decay_residuals::jacobian, &[1.0, 1.0, 0.0])
}

#[allow(dead_code)]
fn main() {
    let (theta, iterations) = fit_decay();
    let r = decay_residuals(theta.as_slice());
    let rms = (r.iter().map(|v| v * v).sum::<f64>() / SAMPLES as f64).sqrt();
    println!(
        "exponential decay y = a e^(-k t) + c, {SAMPLES} samples, true (a, k, c) = {TRUE_PARAMS:?}"
    );
    println!(
        "  fitted (a, k, c) = ({:.4}, {:.4}, {:.4}) after {iterations} Gauss-Newton steps, rms residual {rms:.2e}",
        theta[0], theta[1], theta[2]
    );
    let start = [-1.2, 1.0];
    let (x, iterations) =
        gauss_newton(rosenbrock_residuals, rosenbrock_residuals::jacobian, &start);
    println!("Rosenbrock residuals from {start:?}");
    println!(
        "  minimiser {:?} after {iterations} Gauss-Newton steps",
        x.as_slice()
    );
}
