//! `det`: the determinant by expansion by minors (cmpad's `det_by_minor`).
//!
//! A minor of `A` is named, not copied: `r[i]` is the row after row `i` in the minor
//! and `r[ℓ]` its first row (`c` likewise for columns), so removing a row or a column
//! for the next sub-minor is one index write, undone after the recursive call.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::prelude::*;
use serde::Deserialize;
use serde_json::Value;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The matrix, row-major, `ell × ell`.
    #[serde(rename = "A")]
    pub a: Vec<f64>,
    /// The edge length `ℓ`.
    pub ell: usize,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// The determinant of the `m × m` minor of the `n × n` matrix `a` whose rows and
/// columns are listed by the successor arrays `r` and `c` (starting at `r[n]`, `c[n]`).
/// `r` and `c` are changed during the call and restored before it returns.
#[differentiable]
pub fn det_of_minor(a: &[f64], n: usize, m: usize, r: &mut [usize], c: &mut [usize]) -> f64 {
    let r0 = r[n];
    let mut cj = c[n];
    if m == 1 {
        return a[r0 * n + cj];
    }
    let mut det_m = 0.0;
    let mut sign = 1;
    // Remove the minor's first row from every sub-minor.
    r[n] = r[r0];
    // The index in `c` that points at column j.
    let mut cj1 = n;
    for _j in 0..m {
        let m0j = a[r0 * n + cj];
        // Remove column j for the sub-minor, take its determinant, put column j back.
        c[cj1] = c[cj];
        let det_s = det_of_minor(a, n, m - 1, r, c);
        c[cj1] = cj;
        if sign > 0 {
            det_m += m0j * det_s;
        } else {
            det_m -= m0j * det_s;
        }
        cj1 = cj;
        cj = c[cj];
        sign = -sign;
    }
    r[n] = r0;
    det_m
}

/// `det A` for the `ell × ell` row-major matrix `a`, by expansion by minors.
#[differentiable]
pub fn det(a: &[f64], ell: usize) -> f64 {
    let mut r = vec![0; ell + 1];
    let mut c = vec![0; ell + 1];
    for i in 0..ell {
        r[i] = i + 1;
        c[i] = i + 1;
    }
    det_of_minor(a, ell, ell, &mut r, &mut c)
}

/// Answers `primal` (det A) and `gradient` (∂ det A / ∂A, row-major).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    let ell = input.ell;
    if ell == 0 || ell.checked_mul(ell) != Some(input.a.len()) {
        return Err(EvalError::BadInput(format!(
            "A has {} elements but ell = {ell} needs ell² of them",
            input.a.len()
        )));
    }
    let a = input.a.as_slice();
    match function {
        "primal" => {
            let (y, timings) = repeat(input.runs, || det(a, ell));
            Evaluation::new(y, timings)
        }
        "gradient" => {
            let ((da, _dell), timings) = repeat(input.runs, || det::gradient(a, ell));
            Evaluation::new(da, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "det",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::test_support::{assert_gradient_matches, seeded};

    #[test]
    fn determinant_of_small_matrices() {
        assert_eq!(det(&[3.0], 1), 3.0);
        assert_eq!(det(&[1.0, 2.0, 3.0, 4.0], 2), -2.0);
        // a permutation of the identity with one swap
        assert_eq!(det(&[0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0], 3), -1.0);
    }

    #[test]
    fn gradient_matches_central_differences() {
        for ell in 1..=5 {
            let a = seeded(ell * ell, 100 + ell as u64, 0.0, 1.0);
            let (da, _) = det::gradient(&a, ell);
            assert_gradient_matches(&a, |a| det(a, ell), da);
        }
    }

    #[test]
    fn gradient_is_the_cofactor_matrix() {
        // ∂ det A / ∂A = det(A) A⁻ᵀ; for [[a, b], [c, d]] it is [[d, −c], [−b, a]]
        let (da, _) = det::gradient(&[1.0, 2.0, 3.0, 4.0], 2);
        assert_eq!(da, vec![4.0, -3.0, -2.0, 1.0]);
    }
}
