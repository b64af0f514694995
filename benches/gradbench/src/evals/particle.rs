//! `particle`: Pearlmutter and Siskind's charged particle. A particle starting at
//! `(0, 8)` with velocity `(0.75, 0)` moves in the potential
//! `p(x; w) = ‖x − (10, 10 − w)‖⁻¹ + ‖x − (10, 0)‖⁻¹` (acceleration `−∇ₓp`), integrated by
//! Euler steps of `0.1` until it crosses the x-axis; the crossing point `x₀(t_f)` is
//! found by linear interpolation, and gradient descent (GradBench's solver,
//! [`gd`](crate::evals::gd)) finds the `w` minimising `x₀(t_f)²`.
//!
//! Nested AD: the Euler steps take `∇ₓp` (the inner derivative), and the descent takes
//! the derivative in `w` of a function that does (the outer one). The inner gradient is
//! reverse mode, the `gradient` companion of the generic [`potential`]. `fr`: the outer
//! derivative is forward mode, [`naive_euler`] run on `Dual<1>`, through which the
//! companion runs forward over reverse. `rr`: the outer derivative is reverse mode,
//! the `gradient` of the differentiable [`naive_euler_rr`], whose body calls the
//! companion (its rule's pullback is a Hessian-vector product of `potential`). `rf`: the
//! outer derivative is reverse mode, the inner `∇ₓp` forward mode (one `jvp` per
//! coordinate, [`force_forward`]). `ff` is declined with the reason in [`DECLINED`].

use crate::evals::gd;
use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::num_traits::Float;
use mochi::prelude::*;
use mochi::Scalar;
use serde::Deserialize;
use serde_json::Value;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The starting control parameter.
    pub w: f64,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// Why `ff` is not implemented.
pub const DECLINED: &str = "mochi implements fr, rr and rf (the outer derivative by Dual \
     numbers or by reverse mode through the inner companion's derived rule, the inner \
     gradient by reverse mode or by jvp): ff needs dual numbers of dual numbers, which \
     mochi's Dual (partials in f64) is not";

/// `p(x) = Σⱼ 1 / ‖x − cⱼ‖` for the charges `c = [c₀ₓ, c₀ᵧ, c₁ₓ, c₁ᵧ, …]`.
#[differentiable]
pub fn potential<T: Float>(charges: &[T], x: &[T]) -> T {
    let mut p = T::zero();
    for j in 0..charges.len() / 2 {
        let dx = x[0] - charges[2 * j];
        let dy = x[1] - charges[2 * j + 1];
        p = p + T::one() / (dx * dx + dy * dy).sqrt();
    }
    p
}

/// `x₀(t_f)²` for the control `w`: Euler steps with the acceleration `−∇ₓp` from the
/// reverse-mode `gradient` of [`potential`], until the particle would cross the x-axis.
pub fn naive_euler<T: Float + Scalar>(w: T) -> T {
    let ten = T::from(10.0).unwrap();
    let charges = [ten, ten - w, ten, T::zero()];
    let delta_t = T::from(1e-1).unwrap();
    let mut x = [T::zero(), T::from(8.0).unwrap()];
    let mut xdot = [T::from(0.75).unwrap(), T::zero()];
    loop {
        let (_, grad) = potential::gradient(&charges[..], &x[..]);
        let xddot = [-grad[0], -grad[1]];
        let x_new = [x[0] + delta_t * xdot[0], x[1] + delta_t * xdot[1]];
        if x_new[1] <= T::zero() {
            x = x_new;
            let delta_t_f = -x[1] / xdot[1];
            let x_t_f = x[0] + delta_t_f * xdot[0];
            return x_t_f * x_t_f;
        }
        x = x_new;
        xdot = [xdot[0] + delta_t * xddot[0], xdot[1] + delta_t * xddot[1]];
    }
}

/// [`naive_euler`] over `f64` as a differentiable function: the same Euler steps, the
/// inner `∇ₓp` by [`field`] (reverse or forward mode) called in the body, so that the
/// derivative in `w` can be reverse mode too (the rule of each inner call pulls back
/// through `potential`'s Hessian).
#[differentiable]
pub fn naive_euler_nested(w: f64, inner_forward: bool) -> f64 {
    let charges = vec![10.0, 10.0 - w, 10.0, 0.0];
    let delta_t = 0.1;
    let mut x = vec![0.0, 8.0];
    let mut xdot = vec![0.75, 0.0];
    let mut crossed = false;
    let mut result = 0.0;
    while !crossed {
        let grad = field(&charges, &x, inner_forward);
        let x0 = x[0] + delta_t * xdot[0];
        let x1 = x[1] + delta_t * xdot[1];
        if x1 <= 0.0 {
            let delta_t_f = -x1 / xdot[1];
            let x_t_f = x0 + delta_t_f * xdot[0];
            result = x_t_f * x_t_f;
            crossed = true;
        } else {
            x[0] = x0;
            x[1] = x1;
            xdot[0] -= delta_t * grad[0];
            xdot[1] -= delta_t * grad[1];
        }
    }
    result
}

/// `∇ₓp` by forward mode: one `jvp` of [`potential`] per coordinate of `x`, as a
/// differentiable function (its rule pulls back through `jvp`'s).
#[differentiable]
pub fn force_forward(charges: &[f64], x: &[f64]) -> Vec<f64> {
    let (_, g0) = potential::jvp(charges, x, (&[0.0, 0.0, 0.0, 0.0], &[1.0, 0.0]));
    let (_, g1) = potential::jvp(charges, x, (&[0.0, 0.0, 0.0, 0.0], &[0.0, 1.0]));
    vec![g0, g1]
}

/// `∇ₓp` in a differentiable body: by the `gradient` companion of [`potential`]
/// (reverse mode), or by [`force_forward`] (forward mode).
#[differentiable]
pub fn field(charges: &[f64], x: &[f64], forward: bool) -> Vec<f64> {
    if forward {
        force_forward(charges, x)
    } else {
        let (_, g) = potential::gradient(charges, x);
        g
    }
}

/// The function whose reverse-mode derivative mode `rr` takes: [`naive_euler_nested`]
/// with the inner gradient by reverse mode.
#[differentiable]
pub fn naive_euler_rr(w: f64) -> f64 {
    naive_euler_nested(w, false)
}

/// The function whose reverse-mode derivative mode `rf` takes: [`naive_euler_nested`]
/// with the inner gradient by forward mode.
#[differentiable]
pub fn naive_euler_rf(w: f64) -> f64 {
    naive_euler_nested(w, true)
}

/// The `w` gradient descent reaches from `w0` on `cost` with its derivative `slope`.
fn descend(w0: f64, cost: fn(f64) -> f64, slope: fn(f64) -> f64) -> f64 {
    gd::argmin(|w: &[f64]| cost(w[0]), |w: &[f64]| vec![slope(w[0])], &[w0])[0]
}

/// The `w` gradient descent reaches from `w0` (mode `rf`): the outer derivative is
/// the reverse-mode `gradient` of [`naive_euler_rf`].
pub fn rf(w0: f64) -> f64 {
    descend(w0, naive_euler_rf, naive_euler_rf::gradient)
}

/// The `w` gradient descent reaches from `w0` (mode `rr`): the outer derivative is
/// the reverse-mode `gradient` of [`naive_euler_rr`].
pub fn rr(w0: f64) -> f64 {
    descend(w0, naive_euler_rr, naive_euler_rr::gradient)
}

/// The derivative of [`naive_euler`] in `w`: forward mode over the inner reverse mode.
pub fn naive_euler_derivative(w: f64) -> f64 {
    naive_euler(Dual::new(w, [1.0])).partials[0]
}

/// The `w` gradient descent reaches from `w0` (mode `fr`).
pub fn fr(w0: f64) -> f64 {
    gd::argmin(
        |w: &[f64]| naive_euler(w[0]),
        |w: &[f64]| vec![naive_euler_derivative(w[0])],
        &[w0],
    )[0]
}

/// Answers `fr`, `rr` and `rf`; declines `ff`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    match function {
        "fr" => {
            let (w, timings) = repeat(input.runs, || fr(input.w));
            Evaluation::new(w, timings)
        }
        "rr" => {
            let (out, timings) = repeat(input.runs, || rr(input.w));
            Evaluation::new(out, timings)
        }
        "rf" => {
            let (out, timings) = repeat(input.runs, || rf(input.w));
            Evaluation::new(out, timings)
        }
        "ff" => Err(EvalError::UnsupportedFunction {
            module: "particle",
            function: function.to_owned(),
            reason: DECLINED,
        }),
        _ => Err(EvalError::UnknownFunction {
            module: "particle",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_acceleration_is_minus_the_field() {
        // One charge at the origin, x = (3, 4): ∇ₓ 1/‖x‖ = −x/‖x‖³.
        let (_, g) = potential::gradient::<f64>(&[0.0, 0.0][..], &[3.0, 4.0][..]);
        assert!((g[0] + 3.0 / 125.0).abs() < 1e-15 && (g[1] + 4.0 / 125.0).abs() < 1e-15);
    }

    #[test]
    fn the_outer_derivative_matches_central_differences() {
        for w in [0.0, 0.1, 0.2] {
            let h = 1e-6;
            let fd = (naive_euler(w + h) - naive_euler(w - h)) / (2.0 * h);
            let d = naive_euler_derivative(w);
            assert!(
                (d - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                "w = {w}: {d} against {fd}"
            );
        }
    }

    #[test]
    fn descends_to_gradbench_s_answer() {
        // The particle eval's expected output.
        let w = fr(0.0);
        assert!((w - 0.2071918746486116).abs() < 1e-6, "{w}");
        let w = rr(0.0);
        assert!((w - 0.2071918746486116).abs() < 1e-6, "{w}");
        let w = rf(0.0);
        assert!((w - 0.2071918746486116).abs() < 1e-6, "{w}");
    }

    #[test]
    fn the_reverse_over_forward_derivative_matches_reverse_over_reverse() {
        let charges = [10.0, 9.7, 10.0, 0.0];
        for x in [[0.0, 8.0], [3.5, 4.2]] {
            let (_, reverse) = potential::gradient(&charges[..], &x[..]);
            let forward = force_forward(&charges, &x);
            for k in 0..2 {
                assert!((forward[k] - reverse[k]).abs() <= 1e-14 * (1.0 + reverse[k].abs()));
            }
        }
        for w in [0.0, 0.1, 0.2, 0.5] {
            // The two inner gradients agree to the last bit or two, so do the paths.
            let (a, b) = (naive_euler_rf(w), naive_euler_rr(w));
            assert!((a - b).abs() <= 1e-12 * b.abs(), "w = {w}: {a} against {b}");
            let (d, want) = (naive_euler_rf::gradient(w), naive_euler_rr::gradient(w));
            assert!(
                (d - want).abs() <= 1e-9 * (1.0 + want.abs()),
                "w = {w}: rf {d} against rr {want}"
            );
        }
    }

    #[test]
    fn the_reverse_outer_derivative_matches_forward_and_central_differences() {
        for w in [0.0, 0.1, 0.2, 0.5] {
            assert_eq!(naive_euler_rr(w), naive_euler(w));
            let h = 1e-6;
            let fd = (naive_euler_rr(w + h) - naive_euler_rr(w - h)) / (2.0 * h);
            let d = naive_euler_rr::gradient(w);
            assert!(
                (d - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                "w = {w}: {d} against {fd}"
            );
            let forward = naive_euler_derivative(w);
            assert!(
                (d - forward).abs() <= 1e-10 * (1.0 + forward.abs()),
                "w = {w}: reverse {d} against forward {forward}"
            );
        }
    }
}
