//! Central finite differences with an error bound, to check forward-mode derivatives.
//!
//! The step is `h = ∛ε · L`, a power of two (so `x ± h`, `x ± 2h` are exact), where `L`
//! is the local length scale: `max(1, |x|)`, shrunk to the distance to the nearest
//! singularity or domain edge when the caller gives one. The bound on the error of the
//! central difference `D(h)` is the sum of
//! - truncation, estimated by Richardson: `D(2h) − D(h) ≈ 3·(D(h) − f′)`;
//! - rounding: each primal evaluation is good to [`PRIMAL_ULPS`] ulps of the largest
//!   `|f|` seen (at least 1), divided by the step.
//!
//! The claimed derivative may itself be off by [`PRIMAL_ULPS`] ulps. A check whose bound
//! is too loose to say anything (worse than `√ε` of the derivative's natural size) fails
//! rather than passes, so no check can pass vacuously.

use std::cmp::Ordering;

use crate::Dual;

const EPS: f64 = f64::EPSILON;

/// How many ulps a primal evaluation (a libm function, a short composition) may be off.
pub(crate) const PRIMAL_ULPS: f64 = 4.0;

/// A central-difference estimate of `f′(x)` and a bound on its error.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Central {
    pub derivative: f64,
    pub tolerance: f64,
    /// The scale below which a tolerance says nothing: `√ε · (|f′| + max(1, |f|) / L)`.
    pub resolution: f64,
}

/// The largest power of two not above `x` (for `x > 0`).
fn power_of_two_below(x: f64) -> f64 {
    2f64.powi(x.log2().floor() as i32)
}

/// Central difference of `f` at `x`, with `room` the distance to the nearest point where
/// `f` is not smooth (`f64::INFINITY` if none).
pub(crate) fn central(f: impl Fn(f64) -> f64, x: f64, room: f64) -> Central {
    let length = x.abs().max(1.0).min(room);
    let h = power_of_two_below(EPS.cbrt() * length);
    let [m2, m1, p1, p2] = [x - 2.0 * h, x - h, x + h, x + 2.0 * h].map(&f);
    let d1 = (p1 - m1) / (2.0 * h);
    let d2 = (p2 - m2) / (4.0 * h);
    // Not below 1: functions computed as the logarithm of a number near 1 (acosh, ln_1p
    // composites) are good to an ulp of 1, not of their small value.
    let largest = [m2, m1, f(x), p1, p2]
        .iter()
        .fold(1.0_f64, |m, v| m.max(v.abs()));
    let truncation = (d2 - d1).abs() / 3.0;
    let rounding = PRIMAL_ULPS * EPS * largest / h;
    Central {
        derivative: d1,
        tolerance: 2.0 * (truncation + rounding),
        resolution: EPS.sqrt() * (d1.abs() + largest / length),
    }
}

/// Whether `claimed` is `f′(x)` within the finite-difference bound; `Err` says why not.
pub(crate) fn compare(claimed: f64, estimate: Central) -> Result<(), String> {
    let allowed = estimate.tolerance + PRIMAL_ULPS * EPS * claimed.abs();
    // Also refuses a NaN bound.
    if !matches!(
        estimate.tolerance.partial_cmp(&estimate.resolution),
        Some(Ordering::Less | Ordering::Equal)
    ) {
        return Err(format!(
            "finite differences cannot resolve this derivative: bound {:e} above resolution {:e}",
            estimate.tolerance, estimate.resolution
        ));
    }
    let error = (claimed - estimate.derivative).abs();
    if error <= allowed {
        Ok(())
    } else {
        Err(format!(
            "derivative {claimed:e} but finite differences give {:e} (error {error:e} > allowed {allowed:e})",
            estimate.derivative
        ))
    }
}

/// Checks every partial of `f` at `x` against central differences, with `room` the
/// distance from `x` (in every coordinate) to the nearest point where `f` is not smooth.
#[track_caller]
pub(crate) fn check_partials_near<const M: usize>(
    name: &str,
    f: impl Fn([Dual<M>; M]) -> Dual<M>,
    x: [f64; M],
    room: f64,
) {
    let seeded = f(std::array::from_fn(|i| Dual::variable(x[i], i)));
    let primal = f(x.map(Dual::constant)).value;
    assert!(
        seeded.value.to_bits() == primal.to_bits(),
        "{name} at {x:?}: seeding changed the value ({} vs {primal})",
        seeded.value
    );
    for i in 0..M {
        let along = |t: f64| {
            let mut moved = x;
            moved[i] = t;
            f(moved.map(Dual::constant)).value
        };
        if let Err(why) = compare(seeded.partials[i], central(along, x[i], room)) {
            panic!("{name} at {x:?}, ∂/∂x{i}: {why}");
        }
    }
}

/// [`check_partials_near`] for a point where `f` is smooth on the scale of `max(1, |x|)`.
#[track_caller]
pub(crate) fn check_partials<const M: usize>(
    name: &str,
    f: impl Fn([Dual<M>; M]) -> Dual<M>,
    x: [f64; M],
) {
    check_partials_near(name, f, x, f64::INFINITY);
}

/// `|got − expected| ≤ tolerance`, with a message.
#[track_caller]
pub(crate) fn assert_close(got: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (got - expected).abs() <= tolerance,
        "{what}: got {got:e}, expected {expected:e} (tolerance {tolerance:e})"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_exact_derivatives_and_rejects_slightly_wrong_ones() {
        // d/dx sin x = cos x; 1 + 1e-7 relative is far outside the bound.
        for x in [-3.0, -0.5, 0.0, 0.25, 2.0, 40.0] {
            let estimate = central(f64::sin, x, f64::INFINITY);
            compare(x.cos(), estimate).unwrap();
            let wrong = x.cos() * (1.0 + 1e-7) + 1e-9;
            assert!(
                compare(wrong, estimate).is_err(),
                "accepted a wrong derivative at {x}"
            );
        }
    }

    #[test]
    fn steps_are_exact_and_shrink_near_an_edge() {
        // d/dx √x = 1/(2√x) at 1e-6 from the singularity at 0.
        let x = 1e-6;
        let estimate = central(f64::sqrt, x, x);
        compare(0.5 / x.sqrt(), estimate).unwrap();
        assert!(compare(0.5 / x.sqrt() * (1.0 + 1e-6), estimate).is_err());
    }

    #[test]
    fn refuses_to_judge_when_the_bound_is_too_loose() {
        // Claimed room is far larger than the true one: the step straddles the kink of
        // |x| at 0, the Richardson estimate blows up and the check must fail, not pass.
        let estimate = central(f64::abs, 1e-7, f64::INFINITY);
        assert!(compare(1.0, estimate).is_err());
    }
}
