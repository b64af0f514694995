//! The argmin adapter: the examples' problems converge to their known optima.

#![allow(clippy::needless_range_loop)]

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
