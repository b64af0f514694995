//! The `_into` companions accumulate into caller-owned buffers; in steady state a
//! gradient call allocates nothing (counted by the harness's counting allocator).

// The corpus writes every form on purpose (`y = y * a`, index loops), so clippy's
// style suggestions for the user's code are off here; the generated code itself is
// checked by clippy like any other code.
#![allow(
    clippy::assign_op_pattern,
    clippy::needless_range_loop,
    clippy::neg_multiply,
    clippy::approx_constant,
    clippy::excessive_precision,
    clippy::explicit_counter_loop,
    clippy::manual_memcpy,
    clippy::ptr_arg,
    clippy::let_and_return,
    clippy::just_underscores_and_digits
)]

use mochi::prelude::*;
use mochi::testing::{allocations_during, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[differentiable]
fn sum_sin(x: &[f64]) -> f64 {
    let mut y = 0.0;
    for i in 0..x.len() {
        y += x[i].sin();
    }
    y
}

#[differentiable]
fn weighted(x: &[f64], w: &[f64], a: f64) -> f64 {
    let mut y = 0.0;
    for i in 0..x.len() {
        if x[i] > 0.0 {
            y += w[i] * x[i] * a;
        } else {
            y = y * 0.5 + x[i].exp();
        }
    }
    y
}

#[test]
fn steady_state_gradient_calls_allocate_nothing() {
    let x: Vec<f64> = (0..257).map(|i| ((i as f64) * 0.37).sin()).collect();
    let w: Vec<f64> = (0..257).map(|i| ((i as f64) * 0.11).cos()).collect();
    let mut dx = vec![0.0; x.len()];
    let mut dw = vec![0.0; w.len()];
    let mut da = 0.0;
    // Warm-up: the first calls learn how much room each save site needs and make the
    // per-thread chunk the tape is carved from (kit::tape); later calls reuse it.
    for _ in 0..2 {
        sum_sin::gradient_into(&x, &mut dx);
        weighted::gradient_into(&x, &w, 1.5, (&mut dx, &mut dw, &mut da));
    }
    let (_, n) = allocations_during(|| {
        for _ in 0..10 {
            dx.fill(0.0);
            sum_sin::gradient_into(&x, &mut dx);
            weighted::gradient_into(&x, &w, 1.5, (&mut dx, &mut dw, &mut da));
        }
    });
    assert_eq!(n, 0, "steady-state gradient calls allocated {n} times");
    // and the buffers hold the gradient: ∂/∂xᵢ Σ sin xⱼ = cos xᵢ (plus the second call's)
    let fresh = sum_sin::gradient(&x);
    assert!((fresh[3] - x[3].cos()).abs() < 1e-15);
}

#[differentiable]
fn loop_over_constant_data(theta: &[f64], data: &[f64]) -> f64 {
    let data = no_grad(data);
    let mu = theta[0];
    let mut s = 0.0;
    for i in 0..data.len() {
        let z = data[i] - mu;
        s += z * z;
    }
    s
}

#[test]
fn constant_data_behind_no_grad_allocates_nothing_and_gets_no_cotangent() {
    let theta = [0.4, 0.0];
    let data: Vec<f64> = (0..100).map(|i| i as f64 * 0.01).collect();
    let mut dtheta = vec![0.0; 2];
    let mut ddata = vec![0.0; data.len()];
    for _ in 0..3 {
        loop_over_constant_data::gradient_into(&theta, &data, (&mut dtheta, &mut ddata));
    }
    let (_, n) = allocations_during(|| {
        dtheta.fill(0.0);
        loop_over_constant_data::gradient_into(&theta, &data, (&mut dtheta, &mut ddata));
    });
    assert_eq!(n, 0, "allocated {n} times");
    assert!(ddata.iter().all(|d| *d == 0.0));
    // ∂/∂μ Σ (dᵢ − μ)² = −2 Σ (dᵢ − μ)
    let expected: f64 = data.iter().map(|d| -2.0 * (d - 0.4)).sum();
    assert!((dtheta[0] - expected).abs() < 1e-12);
}

#[differentiable]
fn log_likelihood_over_shadowed_data(theta: &[f64], data: &[f64]) -> f64 {
    let data: &[f64] = no_grad(data);
    let (mu, sigma) = (theta[0], theta[1]);
    let mut s = 0.0;
    for i in 0..data.len() {
        let lx = data[i].ln();
        let z = (lx - mu) / sigma;
        s += -0.5 * z * z - sigma.ln() - lx;
    }
    s
}

#[differentiable]
fn used_before_its_shadow(x: &[f64]) -> f64 {
    let s = x[0] * x[1];
    let x = no_grad(x);
    s + x[0].ln()
}

#[test]
fn a_parameter_shadowed_by_no_grad_before_any_use_is_constant_data() {
    let theta = [0.3, 1.7];
    let data: Vec<f64> = (1..50).map(|i| 0.5 + i as f64 * 0.1).collect();
    let (dtheta, ddata) = log_likelihood_over_shadowed_data::gradient(&theta, &data);
    assert!(ddata.iter().all(|d| *d == 0.0), "{ddata:?}");
    // ∂/∂μ = Σ z/σ, ∂/∂σ = Σ (z² − 1)/σ
    let z: Vec<f64> = data.iter().map(|d| (d.ln() - 0.3) / 1.7).collect();
    let mu_bar: f64 = z.iter().map(|z| z / 1.7).sum();
    let sigma_bar: f64 = z.iter().map(|z| (z * z - 1.0) / 1.7).sum();
    assert!(
        (dtheta[0] - mu_bar).abs() < 1e-12 * mu_bar.abs().max(1.0),
        "{dtheta:?}"
    );
    assert!(
        (dtheta[1] - sigma_bar).abs() < 1e-12 * sigma_bar.abs().max(1.0),
        "{dtheta:?}"
    );
    // A parameter read before its shadow keeps the derivative of that read.
    let g = used_before_its_shadow::gradient(&[2.0, 3.0]);
    assert_eq!(g, vec![3.0, 2.0]);
}
