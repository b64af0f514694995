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
    // Warm-up fills the stack pool.
    sum_sin::gradient_into(&x, &mut dx);
    weighted::gradient_into(&x, &w, 1.5, (&mut dx, &mut dw, &mut da));
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
