//! Test helpers: seeded inputs and a central finite-difference check.

/// `n` numbers in `[lo, hi)` from a SplitMix64 stream seeded by `seed`.
pub fn seeded(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
            lo + (hi - lo) * unit
        })
        .collect()
}

/// Checks `gradient` against central differences of `f` at `x`, component by component.
///
/// The step is `∛ε · max(1, |xᵢ|)` rounded to a power of two (so `xᵢ ± h` is exact);
/// the tolerance is the truncation error of the central difference (`h²` relative to
/// the derivative, taking the third derivative to be of the first's size on the scale
/// of `xᵢ`) plus the rounding of the evaluations divided by the step.
#[track_caller]
pub fn assert_gradient_matches(x: &[f64], f: impl Fn(&[f64]) -> f64, gradient: Vec<f64>) {
    assert_eq!(gradient.len(), x.len(), "gradient length");
    let fx = f(x);
    let mut probe = x.to_vec();
    for i in 0..x.len() {
        let scale = x[i].abs().max(1.0);
        let h = (f64::EPSILON.cbrt() * scale).log2().floor().exp2();
        probe[i] = x[i] + h;
        let up = f(&probe);
        probe[i] = x[i] - h;
        let down = f(&probe);
        probe[i] = x[i];
        let fd = (up - down) / (2.0 * h);
        let rounding = 64.0 * f64::EPSILON * (fx.abs() + up.abs() + down.abs()) / h;
        let truncation = h * h / (scale * scale) * (1.0 + fd.abs());
        let tolerance = rounding + truncation + 1e-9 * (1.0 + fd.abs());
        assert!(
            (gradient[i] - fd).abs() <= tolerance,
            "component {i}: gradient {} against central difference {fd} (tolerance {tolerance:e})",
            gradient[i]
        );
    }
}
