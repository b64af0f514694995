//! Central finite differences along a direction, with the step size chosen by a
//! Richardson-style error estimate.
//!
//! For a direction ẋ and a step h the estimate is `⟨ȳ, f(x+hẋ) − f(x−hẋ)⟩ / 2h`. Its
//! error has two parts: truncation (∝ h², large for big steps near curvature) and
//! rounding (∝ ε/h, large for small steps). The harness evaluates a ladder of steps,
//! each ten times smaller than the last, estimates the error of each by how much it
//! moves from its neighbour, and compares at the step with the smallest estimated
//! error. That choice never looks at the rule, so a wrong rule cannot shop for a step
//! that flatters it.

use crate::testing::arguments::flatten;
use crate::testing::perturb::{Flatten, Perturb};
use crate::testing::report::panic_message;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The steps, relative to the argument's scale.
const RELATIVE_STEPS: [f64; 8] = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8];

/// The inputs of one finite-difference comparison.
pub(crate) struct Probe<'a, A: Perturb, Y: Perturb> {
    /// The point `x`.
    pub(crate) args: &'a A,
    /// The direction `ẋ` (nonzero in one argument only).
    pub(crate) direction: &'a A::Tangent,
    /// The output `y = f(x)`.
    pub(crate) output: &'a Y,
    /// The output cotangent `ȳ`.
    pub(crate) output_cotangent: &'a Y::Tangent,
    /// The accumulator seeds `s`, if the pullback ran on seeded accumulators: then the
    /// arguments' final state is an output too, with cotangent `s`.
    pub(crate) seed: Option<&'a A::Tangent>,
    /// What the pullback produced, `x̄`.
    pub(crate) cotangent: &'a A::Tangent,
    /// The argument's magnitude; steps are relative to it.
    pub(crate) scale: f64,
    /// Relative and absolute tolerance.
    pub(crate) rtol: f64,
    pub(crate) atol: f64,
}

/// A finite-difference estimate against the pullback's inner product.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Comparison {
    /// `⟨ȳ, Δy⟩/2h` (plus `⟨s, Δx⁺⟩/2h` with seeds).
    pub(crate) finite_difference: f64,
    /// `⟨x̄, Δx⟩/2h`.
    pub(crate) pullback: f64,
    /// The step `h` compared at.
    pub(crate) step: f64,
    /// The tolerance at that step.
    pub(crate) tolerance: f64,
    /// `|finite_difference − pullback| / tolerance`.
    pub(crate) ratio: f64,
}

/// One step of the ladder.
#[derive(Clone, Copy, Debug)]
struct Estimate {
    step: f64,
    finite_difference: f64,
    pullback: f64,
    /// The sum of the magnitudes of the terms of both inner products: the scale that
    /// rounding errors are relative to.
    terms: f64,
    /// Whether the output moved at all: a step below the output's resolution gives an
    /// estimate of exactly 0 that says nothing about the derivative.
    resolved: bool,
}

/// `(Σ aᵢbᵢ, Σ |aᵢbᵢ|)` over the common length (a structural zero is empty: all zeros).
fn dot(a: &[f64], b: &[f64]) -> (f64, f64) {
    a.iter()
        .zip(b)
        .fold((0.0, 0.0), |(s, m), (x, y)| (s + x * y, m + (x * y).abs()))
}

fn ratio(error: f64, tolerance: f64) -> f64 {
    if error == 0.0 {
        0.0
    } else {
        error / tolerance
    }
}

/// Runs the primal at `x + step·ẋ`; `None` when it panics.
fn run_at<A: Perturb + Clone, Y>(
    args: &A,
    direction: &A::Tangent,
    step: f64,
    primal: &impl Fn(&mut A) -> Y,
) -> Option<(A, A, Y)> {
    let mut moved = args.clone();
    moved.perturb(direction, step);
    let before = moved.clone();
    let y = catch_unwind(AssertUnwindSafe(|| primal(&mut moved))).ok()?;
    Some((before, moved, y))
}

fn estimate<A, Y>(
    probe: &Probe<'_, A, Y>,
    primal: &impl Fn(&mut A) -> Y,
    step: f64,
) -> Option<Estimate>
where
    A: Perturb + Clone,
    Y: Perturb,
{
    let (plus_in, plus_out, y_plus) = run_at(probe.args, probe.direction, step, primal)?;
    let (minus_in, minus_out, y_minus) = run_at(probe.args, probe.direction, -step, primal)?;
    // The step the inputs really took (f32 inputs round it).
    let dx = flatten(&plus_in.difference(&minus_in));
    let intended: Vec<f64> = flatten(probe.direction)
        .iter()
        .map(|d| 2.0 * step * d)
        .collect();
    let size = intended.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let off = dx
        .iter()
        .zip(&intended)
        .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
    if size == 0.0 || dx.len() != intended.len() || off.is_nan() || off > 0.5 * size {
        return None;
    }
    let outputs = catch_unwind(AssertUnwindSafe(|| {
        let dy = flatten(&y_plus.difference(&y_minus));
        let dstate = probe
            .seed
            .map(|_| flatten(&plus_out.difference(&minus_out)));
        (dy, dstate)
    }));
    let (dy, dstate) = match outputs {
        Ok(d) => d,
        Err(payload) => {
            // Outputs of different shapes on the two sides: no derivative along this step.
            let _ = panic_message(&*payload);
            return None;
        }
    };
    let resolved = dy.iter().any(|d| *d != 0.0)
        || dstate.as_ref().is_some_and(|d| d.iter().any(|v| *v != 0.0));
    let (mut fd, mut fd_terms) = dot(&flatten(probe.output_cotangent), &dy);
    if let (Some(seed), Some(dstate)) = (probe.seed, dstate) {
        let (s, m) = dot(&flatten(seed), &dstate);
        fd += s;
        fd_terms += m;
    }
    let (ad, ad_terms) = dot(&flatten(probe.cotangent), &dx);
    let two_h = 2.0 * step;
    let e = Estimate {
        resolved,
        step,
        finite_difference: fd / two_h,
        pullback: ad / two_h,
        terms: fd_terms.max(ad_terms) / two_h,
    };
    e.finite_difference.is_finite().then_some(e)
}

/// The relative resolution of the output along `ȳ`: the smallest relative move
/// (a power of ten) that changes every component `ȳ` weighs substantially. About the
/// machine epsilon of the output's float type (`1e-15` for `f64`, `1e-7` for `f32`).
fn output_resolution<Y: Perturb + Clone>(y: &Y, output_cotangent: &Y::Tangent) -> f64 {
    let mut direction = output_cotangent.clone();
    if !normalise(&mut direction) {
        return 0.0;
    }
    let weights = flatten(&direction);
    let scale = step_scale(y.primal_scale());
    (0..14)
        .map(|k| 10f64.powi(k - 17))
        .find(|relative| {
            let mut moved = y.clone();
            moved.perturb(&direction, relative * scale);
            let d = flatten(&moved.difference(y));
            d.iter()
                .zip(&weights)
                .all(|(d, w)| *d != 0.0 || w.abs() < 0.1)
        })
        .unwrap_or(1e-3)
}

/// Compares the pullback with finite differences along `probe.direction`; `None` when
/// no step gave a finite estimate (the function is not finite around `x`).
pub(crate) fn compare<A, Y>(
    probe: &Probe<'_, A, Y>,
    primal: &impl Fn(&mut A) -> Y,
) -> Option<Comparison>
where
    A: Perturb + Clone,
    Y: Perturb + Clone,
{
    let estimates: Vec<Option<Estimate>> = RELATIVE_STEPS
        .iter()
        .map(|r| estimate(probe, primal, r * probe.scale))
        .collect();
    // Rounding the output to its precision moves `⟨ȳ, Δy⟩` by up to about
    // `ε·|y|·Σ|ȳₖ|`: the estimate at step h cannot be trusted closer than that over 2h.
    let cotangent_l1: f64 = flatten(probe.output_cotangent)
        .iter()
        .map(|v| v.abs())
        .sum();
    let quantum = output_resolution(probe.output, probe.output_cotangent)
        * step_scale(probe.output.primal_scale())
        * cotangent_l1;
    let quantisation = |e: &Estimate| quantum / (2.0 * e.step);
    let plain = |e: &Estimate, noise: f64| {
        let tolerance = probe.atol + probe.rtol * e.terms + 2.0 * (noise + quantisation(e));
        let error = (e.finite_difference - e.pullback).abs();
        Comparison {
            finite_difference: e.finite_difference,
            pullback: e.pullback,
            step: e.step,
            tolerance,
            ratio: if e.pullback.is_nan() {
                f64::NAN
            } else {
                ratio(error, tolerance)
            },
        }
    };
    // The step whose estimate moved least from its larger neighbour, counting the
    // output's rounding (among steps the output resolved: two unresolved steps agree on
    // 0 whatever the derivative).
    let richardson = estimates
        .windows(2)
        .filter_map(|w| match (w[0], w[1]) {
            (Some(big), Some(small)) if big.resolved && small.resolved => Some((
                small,
                (big.finite_difference - small.finite_difference).abs(),
            )),
            _ => None,
        })
        .min_by(|a, b| (a.1 + quantisation(&a.0)).total_cmp(&(b.1 + quantisation(&b.0))))
        .map(|(e, noise)| plain(&e, noise));
    // Any step that passes without the error estimate is accepted too.
    let best_plain = estimates
        .iter()
        .flatten()
        .map(|e| plain(e, 0.0))
        .min_by(|a, b| a.ratio.total_cmp(&b.ratio));
    match (richardson, best_plain) {
        (Some(r), Some(p)) if p.ratio <= 1.0 && (r.ratio.is_nan() || r.ratio > 1.0) => Some(p),
        (Some(r), _) => Some(r),
        (None, p) => p,
    }
}

/// The scale steps are relative to: the argument's magnitude, or 1 when it is zero or
/// unknown.
pub(crate) fn step_scale(scale: Option<f64>) -> f64 {
    match scale {
        Some(s) if s.is_finite() && s > 0.0 => s,
        _ => 1.0,
    }
}

/// Scales a tangent so that its largest component is ±1 (returns `false` for a zero one).
pub(crate) fn normalise<T: Flatten>(t: &mut T) -> bool {
    let largest = flatten(t).iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if largest > 0.0 && largest.is_finite() {
        t.scale(1.0 / largest);
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe_sin(x: f64, claimed: f64, rtol: f64) -> Option<Comparison> {
        let args = (x,);
        let y = x.sin();
        let probe = Probe::<(f64,), f64> {
            args: &args,
            direction: &(1.0,),
            output: &y,
            output_cotangent: &1.0,
            seed: None,
            cotangent: &(claimed,),
            scale: step_scale(Some(x.abs())),
            rtol,
            atol: 0.0,
        };
        compare(&probe, &|a: &mut (f64,)| a.0.sin())
    }

    #[test]
    fn right_derivatives_pass_tightly_and_wrong_ones_fail() {
        for x in [0.0, 0.3, -2.0, 40.0, 1e-9] {
            let good = probe_sin(x, x.cos(), 1e-8).expect("sin is finite everywhere");
            assert!(good.ratio <= 1.0, "x = {x}: {good:?}");
            // d/dx sin = cos; a 1e-4 relative error is far outside the tolerance.
            let bad = probe_sin(x, x.cos() * (1.0 + 1e-4) + 1e-6, 1e-8).expect("finite");
            assert!(bad.ratio > 1.0, "x = {x}: {bad:?}");
        }
    }

    #[test]
    fn steps_follow_the_scale_of_the_argument() {
        // ln near 0: steps relative to x stay inside the domain.
        let args = (1e-6_f64,);
        let y = args.0.ln();
        let probe = Probe::<(f64,), f64> {
            args: &args,
            direction: &(1.0,),
            output: &y,
            output_cotangent: &1.0,
            seed: None,
            cotangent: &(1e6,), // d/dx ln x = 1/x
            scale: step_scale(Some(1e-6)),
            rtol: 1e-8,
            atol: 0.0,
        };
        let c = compare(&probe, &|a: &mut (f64,)| a.0.ln()).expect("ln is finite near 1e-6");
        assert!(c.ratio <= 1.0, "{c:?}");
        assert!(c.step < 1e-6);
    }

    #[test]
    fn no_finite_neighbourhood_gives_no_comparison() {
        assert!(probe_sin(f64::NAN, 0.0, 1e-8).is_none());
    }

    #[test]
    fn the_output_resolution_is_its_precision() {
        assert_eq!(output_resolution(&1.0_f64, &0.5), 1e-15);
        assert_eq!(output_resolution(&1.0_f32, &0.5), 1e-7);
        assert_eq!(output_resolution(&(1e10_f32, 1.0_f64), &(1.0, 1.0)), 1e-7);
        assert_eq!(output_resolution(&1.0_f64, &0.0), 0.0);
    }

    #[test]
    fn outputs_too_coarse_to_move_do_not_fail_a_right_rule_but_fail_a_wrong_one() {
        // In f32, exp_m1(−30) = −1 exactly: its derivative e⁻³⁰ ≈ 9e-14 is invisible.
        let args = (-30.0_f32,);
        let y = args.0.exp_m1();
        let mut probe = Probe::<(f32,), f32> {
            args: &args,
            direction: &(1.0,),
            output: &y,
            output_cotangent: &1.0,
            seed: None,
            cotangent: &((-30.0_f32).exp(),),
            scale: 30.0,
            rtol: 1e-4,
            atol: 0.0,
        };
        let primal = |a: &mut (f32,)| a.0.exp_m1();
        assert!(compare(&probe, &primal).expect("finite").ratio <= 1.0);
        probe.cotangent = &(1.0,); // a derivative of 1 would show
        assert!(compare(&probe, &primal).expect("finite").ratio > 1.0);
    }

    #[test]
    fn normalise_scales_to_unit_largest_component() {
        let mut t = vec![2.0, -4.0];
        assert!(normalise(&mut t));
        assert_eq!(t, vec![0.5, -1.0]);
        assert!(!normalise(&mut vec![0.0_f64]));
    }
}
