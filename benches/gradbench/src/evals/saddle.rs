//! `saddle`: Pearlmutter and Siskind's saddle point of
//! `f(x, y) = (x₁² + y₁²) − (x₂² + y₂²)` (GradBench's naming: `x = (x₁, y₁)`,
//! `y = (x₂, y₂)`), `min_x max_y f(x, y)` by gradient descent (GradBench's solver,
//! [`gd`](crate::evals::gd)) from a start `s` used for every descent: first
//! `r₁ = argmin_x max_y f(x, y)`, whose cost runs an inner `argmax_y`, then
//! `r₂ = argmax_y f(r₁, y)`.
//!
//! Nested AD: the inner ascent takes `∇_y f` and the outer descent the gradient in `x`
//! of a cost that runs the inner ascent. The inner gradient is reverse mode, the
//! `gradient` companion of the generic [`objective`]. `fr`: the outer gradient is
//! forward mode, the cost [`max_f`] run on `Dual<2>` (both directions in one run),
//! through which the companion and the inner ascent run forward over reverse. `rr`: the
//! outer gradient is reverse mode, the `gradient` of the differentiable [`max_f_rr`],
//! whose body runs the ascent and calls the companion. Step 2 uses the inner mode,
//! reverse, as GradBench's C++ tools do. `rf`: the outer gradient is reverse mode, the
//! inner gradient forward mode (one `jvp` per coordinate, [`gradient_in_p2_forward`],
//! whose derived rule pulls back through `jvp`'s). `ff` is declined with the reason in
//! [`DECLINED`].

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
    /// The starting point of every descent.
    pub start: [f64; 2],
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// Why `ff` is not implemented.
pub const DECLINED: &str = "mochi implements fr, rr and rf (the outer gradient by Dual \
     numbers or by reverse mode through the inner companion's derived rule, the inner \
     gradient by reverse mode or by jvp): ff needs dual numbers of dual numbers, which \
     mochi's Dual (partials in f64) is not";

/// `f(p₁, p₂) = (p₁₀² + p₁₁²) − (p₂₀² + p₂₁²)`.
#[differentiable]
pub fn objective<T: Float>(p1: &[T], p2: &[T]) -> T {
    (p1[0] * p1[0] + p1[1] * p1[1]) - (p2[0] * p2[0] + p2[1] * p2[1])
}

/// `∇_{p₂} f(p₁, p₂)` by reverse mode.
fn gradient_in_p2<T: Float + Scalar>(p1: &[T], p2: &[T]) -> Vec<T> {
    objective::gradient(p1, p2).1
}

/// `max_{p₂} f(p₁, p₂)` by gradient ascent from `start`.
pub fn max_f<T: Float + Scalar>(p1: &[T], start: &[f64]) -> T {
    let start: Vec<T> = start.iter().map(|&s| T::from(s).unwrap()).collect();
    let p2 = gd::argmax(
        |p2: &[T]| objective(p1, p2),
        |p2: &[T]| gradient_in_p2(p1, p2),
        &start,
    );
    objective(p1, &p2)
}

/// [`max_f`] over `f64` as a differentiable function: GradBench's ascent ([`gd::argmax`],
/// the same steps) written out in the body, the inner `∇_{p₂} f` by
/// [`inner_gradient`] (reverse or forward mode) called in it, so that the gradient in
/// `p₁` can be reverse mode too (its rule for each inner call pulls back through
/// `objective`'s Hessian).
#[differentiable]
pub fn max_f_nested(p1: &[f64], start: &[f64], inner_forward: bool) -> f64 {
    let tolerance = 1e-5;
    let mut p2 = vec![start[0], start[1]];
    // Ascent on f is descent on −f, with the gradient negated.
    let mut fx = -objective(p1, &p2);
    let g = inner_gradient(p1, &p2, inner_forward);
    let mut gx = vec![-g[0], -g[1]];
    let mut i = 0;
    let mut eta = 1e-5;
    let mut done = false;
    while !done {
        let magnitude = (gx[0] * gx[0] + gx[1] * gx[1]).sqrt();
        if magnitude <= tolerance {
            done = true;
        } else if i == 10 {
            eta *= 2.0;
            i = 0;
        } else {
            let q0 = p2[0] - eta * gx[0];
            let q1 = p2[1] - eta * gx[1];
            let distance = ((p2[0] - q0) * (p2[0] - q0) + (p2[1] - q1) * (p2[1] - q1)).sqrt();
            if distance <= tolerance {
                done = true;
            } else {
                let q = vec![q0, q1];
                let fq = -objective(p1, &q);
                if fq < fx {
                    p2 = q;
                    fx = fq;
                    let g = inner_gradient(p1, &p2, inner_forward);
                    gx = vec![-g[0], -g[1]];
                    i += 1;
                } else {
                    eta /= 2.0;
                    i = 0;
                }
            }
        }
    }
    objective(p1, &p2)
}

/// `∇_{p₂} f(p₁, p₂)` by forward mode: one `jvp` of [`objective`] per coordinate of
/// `p₂`, as a differentiable function (its rule pulls back through `jvp`'s).
#[differentiable]
pub fn gradient_in_p2_forward(p1: &[f64], p2: &[f64]) -> Vec<f64> {
    let (_, g0) = objective::jvp(p1, p2, (&[0.0, 0.0], &[1.0, 0.0]));
    let (_, g1) = objective::jvp(p1, p2, (&[0.0, 0.0], &[0.0, 1.0]));
    vec![g0, g1]
}

/// `∇_{p₂} f(p₁, p₂)` in a differentiable body: by the `gradient` companion of
/// [`objective`] (reverse mode), or by [`gradient_in_p2_forward`] (forward mode).
#[differentiable]
pub fn inner_gradient(p1: &[f64], p2: &[f64], forward: bool) -> Vec<f64> {
    if forward {
        gradient_in_p2_forward(p1, p2)
    } else {
        let (_, g) = objective::gradient(p1, p2);
        g
    }
}

/// The cost whose reverse-mode gradient mode `rr` takes: [`max_f_nested`] with the inner
/// gradient by reverse mode.
#[differentiable]
pub fn max_f_rr(p1: &[f64], start: &[f64]) -> f64 {
    max_f_nested(p1, start, false)
}

/// The cost whose reverse-mode gradient mode `rf` takes: [`max_f_nested`] with the inner
/// gradient by forward mode.
#[differentiable]
pub fn max_f_rf(p1: &[f64], start: &[f64]) -> f64 {
    max_f_nested(p1, start, true)
}

/// GradBench's two steps from `start`: `r₁ = argmin` of `cost` (with its gradient
/// `gradient`), then `r₂ = argmax_{p₂} f(r₁, p₂)` with the inner gradient `inner`.
fn solve(
    start: &[f64; 2],
    cost: impl Fn(&[f64]) -> f64,
    gradient: impl Fn(&[f64]) -> Vec<f64>,
    inner: impl Fn(&[f64], &[f64]) -> Vec<f64>,
) -> [f64; 4] {
    let r1 = gd::argmin(cost, gradient, start);
    let r2 = gd::argmax(
        |p2: &[f64]| objective(&r1, p2),
        |p2: &[f64]| inner(&r1, p2),
        start,
    );
    [r1[0], r1[1], r2[0], r2[1]]
}

/// `(r₁, r₂)` by mode `rf`: the outer gradient is the reverse-mode `gradient` of
/// [`max_f_rf`], whose inner gradients are forward mode; step 2 by forward mode too.
pub fn rf(start: &[f64; 2]) -> [f64; 4] {
    solve(
        start,
        |p1: &[f64]| max_f_rf(p1, start),
        |p1: &[f64]| max_f_rf::gradient(p1, start).0,
        |p1: &[f64], p2: &[f64]| gradient_in_p2_forward(p1, p2),
    )
}

/// `(r₁, r₂)` by mode `rr`: the outer gradient is the reverse-mode `gradient` of
/// [`max_f_rr`]; step 2 as in [`fr`].
pub fn rr(start: &[f64; 2]) -> [f64; 4] {
    solve(
        start,
        |p1: &[f64]| max_f_rr(p1, start),
        |p1: &[f64]| max_f_rr::gradient(p1, start).0,
        |p1: &[f64], p2: &[f64]| gradient_in_p2(p1, p2),
    )
}

/// The gradient of [`max_f`] in `p₁`: forward mode, both directions in one run.
pub fn max_f_gradient(p1: &[f64], start: &[f64]) -> Vec<f64> {
    let seeded = [Dual::new(p1[0], [1.0, 0.0]), Dual::new(p1[1], [0.0, 1.0])];
    max_f(&seeded, start).partials.to_vec()
}

/// `(r₁, r₂)` by mode `fr`.
pub fn fr(start: &[f64; 2]) -> [f64; 4] {
    solve(
        start,
        |p1: &[f64]| max_f(p1, start),
        |p1: &[f64]| max_f_gradient(p1, start),
        |p1: &[f64], p2: &[f64]| gradient_in_p2(p1, p2),
    )
}

/// Answers `fr`, `rr` and `rf`; declines `ff`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    match function {
        "fr" => {
            let (out, timings) = repeat(input.runs, || fr(&input.start));
            Evaluation::new(out, timings)
        }
        "rr" => {
            let (out, timings) = repeat(input.runs, || rr(&input.start));
            Evaluation::new(out, timings)
        }
        "rf" => {
            let (out, timings) = repeat(input.runs, || rf(&input.start));
            Evaluation::new(out, timings)
        }
        "ff" => Err(EvalError::UnsupportedFunction {
            module: "saddle",
            function: function.to_owned(),
            reason: DECLINED,
        }),
        _ => Err(EvalError::UnknownFunction {
            module: "saddle",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outer_gradient_matches_central_differences() {
        let start = [1.0, 1.0];
        for p1 in [[0.5, -0.25], [1.0, 1.0], [0.1, 0.3]] {
            let g = max_f_gradient(&p1, &start);
            for k in 0..2 {
                let h = 1e-6;
                let (mut up, mut down) = (p1, p1);
                up[k] += h;
                down[k] -= h;
                let fd = (max_f(&up, &start) - max_f(&down, &start)) / (2.0 * h);
                assert!(
                    (g[k] - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                    "{p1:?}, {k}: {} against {fd}",
                    g[k]
                );
            }
        }
    }

    #[test]
    fn the_reverse_outer_gradient_matches_forward_and_central_differences() {
        let start = [1.0, 1.0];
        for p1 in [[0.5, -0.25], [1.0, 1.0], [0.1, 0.3]] {
            assert_eq!(max_f_rr(&p1, &start), max_f(&p1, &start));
            let g = max_f_rr::gradient(&p1, &start).0;
            let forward = max_f_gradient(&p1, &start);
            for k in 0..2 {
                let h = 1e-6;
                let (mut up, mut down) = (p1, p1);
                up[k] += h;
                down[k] -= h;
                let fd = (max_f_rr(&up, &start) - max_f_rr(&down, &start)) / (2.0 * h);
                assert!(
                    (g[k] - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                    "{p1:?}, {k}: {} against {fd}",
                    g[k]
                );
                assert!(
                    (g[k] - forward[k]).abs() <= 1e-10 * (1.0 + forward[k].abs()),
                    "{p1:?}, {k}: reverse {} against forward {}",
                    g[k],
                    forward[k]
                );
            }
        }
    }

    #[test]
    fn the_reverse_over_forward_gradient_matches_reverse_over_reverse() {
        let start = [1.0, 1.0];
        for p1 in [[0.5, -0.25], [1.0, 1.0], [0.1, 0.3]] {
            let forward_inner = gradient_in_p2_forward(&p1, &start);
            let reverse_inner = gradient_in_p2(&p1, &start);
            assert_eq!(forward_inner, reverse_inner);
            assert_eq!(max_f_rf(&p1, &start), max_f_rr(&p1, &start));
            let g = max_f_rf::gradient(&p1, &start).0;
            let want = max_f_rr::gradient(&p1, &start).0;
            for k in 0..2 {
                assert!(
                    (g[k] - want[k]).abs() <= 1e-10 * (1.0 + want[k].abs()),
                    "{p1:?}, {k}: rf {} against rr {}",
                    g[k],
                    want[k]
                );
            }
        }
    }

    #[test]
    fn finds_gradbench_s_saddle_point() {
        // The saddle eval's expected output from (1, 1).
        for out in [fr(&[1.0, 1.0]), rr(&[1.0, 1.0]), rf(&[1.0, 1.0])] {
            for v in out {
                assert!((v - 8.246324826140356e-06).abs() < 1e-9, "{out:?}");
            }
        }
    }
}
