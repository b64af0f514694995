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

// ------------------------------------------------------------ outputs written through `&mut`
//
// Functions written the way Enzyme's and `std::autodiff`'s examples are: the result goes
// out through a `&mut` parameter. `pullback_into` takes the seed of such an output in the
// parameter's shadow and leaves there the cotangent of the value the parameter held before
// the call.

#[differentiable]
fn written_out(x: &[f64; 2], y: &mut f64) {
    *y = x[0] * x[0] + x[1] * x[0];
}

#[differentiable]
fn sines_out(x: &[f64], y: &mut [f64]) {
    for i in 0..x.len() {
        y[i] = x[i].sin() * x[0];
    }
}

#[differentiable]
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for i in 0..x.len() {
        y[i] += a * x[i];
    }
}

/// The variance as the value, the mean written out.
#[differentiable]
fn variance_and_mean(x: &[f64], mean: &mut f64) -> f64 {
    let n = x.len() as f64;
    *mean = x.iter().sum::<f64>() / n;
    let m = *mean;
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n
}

#[derive(Clone, Tangent)]
struct Gains {
    w: Vec<f64>,
}

impl Gains {
    #[differentiable]
    fn apply(&self, x: &[f64], out: &mut Vec<f64>) {
        for i in 0..x.len() {
            out[i] = self.w[i] * x[i] * x[i];
        }
    }
}

#[test]
fn a_scalar_written_through_mut_gets_its_seed() {
    let x = [2.0, 3.0];
    let mut y = 0.0;
    let (mut dx, mut dy) = ([0.0; 2], 1.0);
    written_out::pullback_into(&x, &mut y, NoTangent, (&mut dx, &mut dy));
    assert_eq!(y, 10.0);
    // ∂y/∂x₀ = 2x₀ + x₁, ∂y/∂x₁ = x₀; the value `y` held before the call is overwritten.
    assert_eq!(dx, [7.0, 2.0]);
    assert_eq!(dy, 0.0);
    // The shadows are added into, as `value_and_gradient_into`'s.
    let mut dy = 0.5;
    written_out::pullback_into(&x, &mut y, NoTangent, (&mut dx, &mut dy));
    assert_eq!(dx, [10.5, 3.0]);
}

#[test]
fn a_sequence_written_through_mut_meets_the_adjoint_identity() {
    let x = [0.5, 1.0, 1.5];
    let ybar = [1.0, -0.5, 2.0];
    let v = [0.3, -0.2, 0.7];
    let mut y = vec![0.0; 3];
    let (mut dx, mut dy) = (Vec::new(), ybar.to_vec());
    sines_out::pullback_into(&x, &mut y, NoTangent, (&mut dx, &mut dy));
    assert!(dy.iter().all(|d| *d == 0.0), "{dy:?}");
    // ⟨x̄, v⟩ = ⟨ȳ, J v⟩, J v by central differences.
    let out = |x: &[f64]| {
        let mut y = vec![0.0; 3];
        sines_out(x, &mut y);
        y
    };
    let h = 1e-6;
    let up: Vec<f64> = x.iter().zip(&v).map(|(a, b)| a + h * b).collect();
    let down: Vec<f64> = x.iter().zip(&v).map(|(a, b)| a - h * b).collect();
    let jv: Vec<f64> = out(&up)
        .iter()
        .zip(out(&down))
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect();
    let lhs: f64 = dx.iter().zip(&v).map(|(a, b)| a * b).sum();
    let rhs: f64 = ybar.iter().zip(&jv).map(|(a, b)| a * b).sum();
    assert!((lhs - rhs).abs() < 1e-8, "{lhs} against {rhs}");
}

#[test]
fn an_updated_buffer_passes_its_seed_through() {
    // y ← y + a·x: ȳ before the call is ȳ after it, ā = ⟨ȳ, x⟩, x̄ = a·ȳ.
    let x = [1.0, -2.0, 0.5];
    let mut y = [4.0, 5.0, 6.0];
    let ybar = [0.5, 1.5, -1.0];
    let (mut da, mut dx, mut dy) = (0.0, Vec::new(), ybar.to_vec());
    axpy::pullback_into(3.0, &x, &mut y, NoTangent, (&mut da, &mut dx, &mut dy));
    assert_eq!(y, [7.0, -1.0, 7.5]);
    assert_eq!(da, 0.5 - 3.0 - 0.5);
    assert_eq!(dx, vec![1.5, 4.5, -3.0]);
    assert_eq!(dy, ybar.to_vec());
}

#[test]
fn a_value_and_an_output_written_through_mut_have_one_pullback() {
    let x = [0.4, 1.1, 2.3, -0.7];
    let mut mean = 0.0;
    let (mut dx, mut dmean) = (Vec::new(), 0.5);
    let var = variance_and_mean::pullback_into(&x, &mut mean, 1.0, (&mut dx, &mut dmean));
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    assert!((mean - m).abs() < 1e-15);
    assert!((var - x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n).abs() < 1e-15);
    // d(var + ½·mean)/dxᵢ = 2(xᵢ − m)/n + ½/n
    for (i, d) in dx.iter().enumerate() {
        let want = 2.0 * (x[i] - m) / n + 0.5 / n;
        assert!((d - want).abs() < 1e-14, "{i}: {d} against {want}");
    }
}

#[test]
fn a_method_writing_through_mut_has_pullback_into() {
    let g = Gains { w: vec![1.0, 2.0] };
    let mut out = vec![0.0; 2];
    let mut dg = GainsTangent { w: Vec::new() };
    let (mut dx, mut dout) = (Vec::new(), vec![1.0, -1.0]);
    g.apply_pullback_into(
        &[3.0, 4.0],
        &mut out,
        NoTangent,
        (&mut dg, &mut dx, &mut dout),
    );
    assert_eq!(out, vec![9.0, 32.0]);
    assert_eq!(dg.w, vec![9.0, -16.0]);
    assert_eq!(dx, vec![6.0, -16.0]);
}

#[test]
#[should_panic(expected = "a cotangent of 2 elements for a sequence of 3")]
fn a_seed_of_the_wrong_length_is_refused() {
    let mut y = vec![0.0; 3];
    let (mut dx, mut dy) = (Vec::new(), vec![1.0, 0.0]);
    sines_out::pullback_into(&[0.5, 1.0, 1.5], &mut y, NoTangent, (&mut dx, &mut dy));
}
