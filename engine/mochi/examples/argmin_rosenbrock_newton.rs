//! The Rosenbrock function minimised by argmin's Newton method, with the gradient and
//! the Hessian mochi derives (the Hessian by forward over reverse, from the generic
//! function's `hessian` companion).
//!
//! ```sh
//! cargo run --release -p mochi-ad --features argmin --example argmin_rosenbrock_newton
//! ```

use argmin::core::{Executor, State};
use argmin::solver::newton::Newton;
use mochi::num_traits::Float;
use mochi::prelude::*;
use nalgebra::DVector;

/// `Σ 100 (xᵢ₊₁ − xᵢ²)² + (1 − xᵢ)²`, minimal (0) at `(1, …, 1)`.
#[differentiable]
pub fn rosenbrock<T: Float>(x: &[T]) -> T {
    let mut s = T::zero();
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = T::one() - x[i];
        s = s + T::from(100.0).unwrap() * a * a + b * b;
    }
    s
}

/// Newton's method from `start`: the minimiser and the number of iterations.
pub fn minimise(start: &[f64]) -> (DVector<f64>, u64) {
    let problem = mochi::argmin::Problem::new(
        |x: &DVector<f64>| rosenbrock(x.as_slice()),
        |x: &DVector<f64>| DVector::from_vec(rosenbrock::gradient(x.as_slice())),
    )
    .with_hessian(|x: &DVector<f64>| mochi::argmin::to_dmatrix(rosenbrock::hessian(x.as_slice())));
    let result = Executor::new(problem, Newton::<f64>::new())
        .configure(|state| state.param(DVector::from_column_slice(start)).max_iters(20))
        .run()
        .expect("Newton's method runs");
    let state = result.state();
    let x = state.get_param().expect("a point").clone();
    (x, state.get_iter())
}

#[allow(dead_code)]
fn main() {
    let start = [-1.2, 1.0];
    let (x, iterations) = minimise(&start);
    println!("start {start:?}");
    println!(
        "minimiser {:?} after {iterations} Newton steps",
        x.as_slice()
    );
    println!("f = {:.3e}", rosenbrock(x.as_slice()));
}
