//! `particle`: Pearlmutter and Siskind's charged particle. A particle starting at
//! `(0, 8)` with velocity `(0.75, 0)` moves in the potential
//! `p(x; w) = ‖x − (10, 10 − w)‖⁻¹ + ‖x − (10, 0)‖⁻¹` (acceleration `−∇ₓp`), integrated by
//! Euler steps of `0.1` until it crosses the x-axis; the crossing point `x₀(t_f)` is
//! found by linear interpolation, and gradient descent (GradBench's solver,
//! [`gd`](crate::evals::gd)) finds the `w` minimising `x₀(t_f)²`.
//!
//! Nested AD: the Euler steps take `∇ₓp` (the inner derivative), and the descent takes
//! the derivative in `w` of a function that does (the outer one). `fr` is implemented:
//! the inner gradient is reverse mode, the `gradient` companion of the generic
//! [`potential`], and the outer derivative is forward mode, [`naive_euler`] run on
//! `Dual<1>`, through which the companion runs forward over reverse. The other three
//! modes are declined with the reason in [`DECLINED`].

use crate::evals::gd;
use crate::modules::{parse_input, EvalError, Evaluation};
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

/// Why the modes other than `fr` are not implemented.
pub const DECLINED: &str = "mochi implements fr only (the outer derivative by Dual numbers, \
     the inner by a gradient companion run on them): ff needs dual numbers of dual numbers, \
     which mochi's Dual (partials in f64) is not, and rf and rr need a reverse rule of a \
     body that calls a companion, which #[differentiable] does not derive";

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

/// Answers `fr`; declines `ff`, `rf` and `rr`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    match function {
        "fr" => {
            let (w, timings) = repeat(input.runs, || fr(input.w));
            Evaluation::new(w, timings)
        }
        "ff" | "rf" | "rr" => Err(EvalError::UnsupportedFunction {
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
    }
}
