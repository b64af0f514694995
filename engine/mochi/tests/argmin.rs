//! The argmin adapter: the examples' problems converge to their known optima.

#![allow(clippy::needless_range_loop)]

#[allow(dead_code)]
#[path = "../examples/argmin_gauss_newton.rs"]
mod gauss_newton;
#[allow(dead_code)]
#[path = "../examples/argmin_gp_hyperparameters.rs"]
mod gp;
#[allow(dead_code)]
#[path = "../examples/argmin_logistic_regression.rs"]
mod logistic;
#[allow(dead_code)]
#[path = "../examples/argmin_rosenbrock_newton.rs"]
mod rosenbrock;

use argmin::core::{Executor, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use mochi::prelude::*;
use nalgebra::DVector;
use ndarray::Array1;

#[test]
fn logistic_regression_by_lbfgs_reaches_a_stationary_point_near_the_true_weights() {
    let w_true = DVector::from_vec(vec![1.5, -2.0, 0.5]);
    let (x, y) = logistic::data(4000, &w_true);
    let (w, _, gradient_norm, _) = logistic::fit(&x, &y);
    // The loss is strictly convex: a zero gradient is its minimum.
    assert!(gradient_norm < 1e-6, "|∇| = {gradient_norm:e}");
    // 4000 samples recover the weights to within a few standard errors.
    assert!((&w - &w_true).norm() < 0.3, "{w} vs {w_true}");
}

#[test]
fn gp_hyperparameters_by_lbfgs_reach_a_stationary_point_of_the_marginal_likelihood() {
    let (x, y) = gp::data(30, 0.1);
    let start = gp::gp_negative_lml(&DVector::zeros(3), &x, &y);
    let (theta, value, gradient_norm) = gp::fit(&x, &y);
    assert!(gradient_norm < 1e-5, "|∇| = {gradient_norm:e}");
    assert!(value < start);
    // A local optimum: no small step in any hyperparameter improves it.
    for k in 0..3 {
        for h in [-1e-3, 1e-3] {
            let mut t = theta.clone();
            t[k] += h;
            assert!(gp::gp_negative_lml(&t, &x, &y) >= value - 1e-12);
        }
    }
    // The noise scale is recovered to within a factor of two.
    let noise = theta[2].exp();
    assert!((0.05..0.2).contains(&noise), "σ_n = {noise}");
}

#[test]
fn rosenbrock_by_newton_with_the_derived_hessian_reaches_one() {
    // The classic start; pure Newton steps reach (1, 1). (From some starts in four
    // dimensions they would stop at the other local minimum, near (−0.78, 0.61, 0.38,
    // 0.15).)
    let (x, _) = rosenbrock::minimise(&[-1.2, 1.0]);
    let ones = DVector::from_element(2, 1.0);
    assert!((&x - &ones).norm() < 1e-8, "{x}");
}

#[differentiable]
fn shifted_bowl(x: &Array1<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let d = x[i] - i as f64;
        s += d * d * (1.0 + i as f64);
    }
    s
}

#[test]
fn the_problem_macro_makes_a_problem_of_an_array_function() {
    let problem = mochi::argmin::problem!(shifted_bowl);
    let result = Executor::new(problem, LBFGS::new(MoreThuenteLineSearch::new(), 5))
        .configure(|state| state.param(Array1::from_elem(4, 5.0)).max_iters(100))
        .run()
        .expect("L-BFGS runs");
    let best = result.state().get_best_param().expect("a best point");
    for (i, v) in best.iter().enumerate() {
        assert!((v - i as f64).abs() < 1e-6, "{best:?}");
    }
}

#[allow(clippy::ptr_arg)] // argmin's parameter type is the Vec itself
#[differentiable]
fn quartic(x: &Vec<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let d = x[i] + 1.0;
        s += d * d * d * d + d * d;
    }
    s
}

#[test]
fn vec_parameters_work_too() {
    let problem = mochi::argmin::problem!(quartic);
    let result = Executor::new(problem, LBFGS::new(MoreThuenteLineSearch::new(), 5))
        .configure(|state| state.param(vec![2.0, -3.0, 0.5]).max_iters(100))
        .run()
        .expect("L-BFGS runs");
    let best = result.state().get_best_param().expect("a best point");
    assert!(best.iter().all(|v| (v + 1.0).abs() < 1e-5), "{best:?}");
}

#[test]
fn exponential_decay_by_gauss_newton_reaches_the_least_squares_fit() {
    let (theta, iterations) = gauss_newton::fit_decay();
    assert!(iterations < 50, "{iterations} iterations");
    // A stationary point of ½‖r‖²: Jᵀ r = 0 (the Gauss–Newton step vanishes there),
    // ten orders of magnitude below its value at the start.
    let gradient = |x: &[f64]| {
        let (r, j) = gauss_newton::decay_residuals::jacobian(x);
        j.t().dot(&ndarray::Array1::from(r))
    };
    let (g0, g) = (gradient(&[1.0, 1.0, 0.0]), gradient(theta.as_slice()));
    let norm = |v: &ndarray::Array1<f64>| v.dot(v).sqrt();
    assert!(norm(&g) < 1e-10 * norm(&g0), "Jᵀr = {g} from {g0}");
    let r = gauss_newton::decay_residuals(theta.as_slice());
    // Measurement errors of at most 0.01 leave the parameters near the true ones, and
    // the residuals no larger than the errors.
    for (fitted, truth) in theta.iter().zip(gauss_newton::TRUE_PARAMS) {
        assert!(
            (fitted - truth).abs() < 0.02,
            "{theta} vs {:?}",
            gauss_newton::TRUE_PARAMS
        );
    }
    assert!(r.iter().all(|v| v.abs() < 0.02));
}

#[test]
fn rosenbrock_residuals_by_gauss_newton_reach_one() {
    // The residual problem from the macro; the residuals vanish at the optimum. From the
    // classic start the first step puts x₀ at 1 (its residual is linear), the second
    // x₁ at x₀².
    let problem = mochi::argmin::residual_problem!(gauss_newton::rosenbrock_residuals);
    let result = Executor::new(
        problem,
        argmin::solver::gaussnewton::GaussNewton::<f64>::new(),
    )
    .configure(|state| {
        state
            .param(DVector::from_vec(vec![-1.2, 1.0]))
            .max_iters(50)
    })
    .run()
    .expect("Gauss-Newton runs");
    let x = result.state().get_param().expect("a point");
    assert!((x - DVector::from_element(2, 1.0)).norm() < 1e-12, "{x}");
}

#[test]
fn a_residual_problem_over_vec_has_jacobian_rows_and_a_gradient_for_lbfgs() {
    use argmin::core::{Gradient, Jacobian, Operator};
    let problem = mochi::argmin::residual_problem!(gauss_newton::rosenbrock_residuals);
    let x = vec![-1.2, 1.0];
    let r: Vec<f64> = problem.apply(&x).expect("finite residuals");
    assert_eq!(r, vec![10.0 * (1.0 - 1.44), 2.2]);
    let j: Vec<Vec<f64>> = problem.jacobian(&x).expect("a finite Jacobian");
    // ∂r₀/∂x = (−20 x₀, 10), ∂r₁/∂x = (−1, 0)
    assert_eq!(j, vec![vec![24.0, 10.0], vec![-1.0, 0.0]]);
    // The gradient of ½‖r‖² is Jᵀ r.
    let g: Vec<f64> = problem.gradient(&x).expect("a gradient");
    assert_eq!(g, vec![24.0 * r[0] - r[1], 10.0 * r[0]]);
    // So the same problem runs under L-BFGS, on Vec parameters.
    let result = Executor::new(problem, LBFGS::new(MoreThuenteLineSearch::new(), 5))
        .configure(|state| state.param(x).max_iters(200))
        .run()
        .expect("L-BFGS runs");
    let best = result.state().get_best_param().expect("a best point");
    assert!(best.iter().all(|v| (v - 1.0).abs() < 1e-5), "{best:?}");
}

/// `√x₀ − 1`: not defined for a negative `x₀`.
#[differentiable]
fn square_root_residual<T: mochi::num_traits::Float>(x: &[T]) -> Vec<T> {
    let mut r = vec![T::zero(); 1];
    r[0] = x[0].sqrt() - T::one();
    r
}

#[test]
fn residuals_outside_the_domain_stop_the_solver_with_an_error() {
    let problem = mochi::argmin::residual_problem!(square_root_residual);
    let error = Executor::new(
        problem,
        argmin::solver::gaussnewton::GaussNewton::<f64>::new(),
    )
    .configure(|state| state.param(DVector::from_vec(vec![-4.0])).max_iters(5))
    .run()
    .err()
    .expect("a NaN residual is an error");
    let message = error.to_string();
    assert!(message.contains("residual 0 is NaN"), "{message}");
    assert!(message.contains("[-4.0]"), "{message}");
}
