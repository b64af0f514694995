//! `kmeans`: the k-means cost `f(C) = Σᵢ minⱼ ‖Cⱼ − Pᵢ‖²` and the Newton direction
//! `J ⊘ diag(H)`, with `J` the gradient of the cost in the centroids and `diag(H)` its
//! Hessian's diagonal (the Hessian is diagonal: `∂²f/∂C²ⱼₗ = 2 · #points nearest to Cⱼ`).
//!
//! Both come from one forward-over-reverse sweep: the cost is generic over its scalar,
//! and its `gradient` companion runs on `Dual<1>` with every centroid coordinate seeded
//! with tangent 1, giving `J` in the values and `H · 1 = diag(H)` in the partials.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::{prelude::*, Real};
use serde::Deserialize;
use serde_json::Value;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The points `Pᵢ` (`n × d`).
    pub points: Vec<Vec<f64>>,
    /// The centroids `Cⱼ` (`k × d`); each is nearest to at least one point.
    pub centroids: Vec<Vec<f64>>,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// `‖c − p‖²`.
#[differentiable]
pub fn squared_distance<T: Real>(point: &[f64], centroid: &[T]) -> T {
    let mut dist = T::ZERO;
    for l in 0..centroid.len() {
        // The points are data: no cotangent flows to them.
        let diff = centroid[l] - no_grad(T::from_f64(point[l]));
        dist += diff * diff;
    }
    dist
}

/// `Σᵢ minⱼ ‖Cⱼ − Pᵢ‖²` with `C` the `k × d` centroids and `P` the `n × d` points, both
/// row-major.
#[differentiable]
pub fn cost<T: Real>(centroids: &[T], points: &[f64], d: usize) -> T {
    let k = centroids.len() / d;
    let n = points.len() / d;
    let mut total = T::ZERO;
    for i in 0..n {
        let mut closest = T::INFINITY;
        for j in 0..k {
            let dist =
                squared_distance(&points[i * d..(i + 1) * d], &centroids[j * d..(j + 1) * d]);
            closest = closest.min(dist);
        }
        total += closest;
    }
    total
}

/// The Newton direction `J ⊘ diag(H)`, row-major like the centroids.
pub fn direction(centroids: &[f64], points: &[f64], d: usize) -> Vec<f64> {
    let seeded: Vec<Dual<1>> = centroids.iter().map(|&c| Dual::new(c, [1.0])).collect();
    let (g, _points, _d) = cost::gradient(&seeded, points, d);
    g.iter().map(|gi| gi.value / gi.partials[0]).collect()
}

fn flatten(rows: &[Vec<f64>], d: usize, name: &str) -> Result<Vec<f64>, EvalError> {
    if rows.iter().any(|r| r.len() != d) {
        return Err(EvalError::BadInput(format!(
            "every row of {name} must have d = {d} coordinates"
        )));
    }
    Ok(rows.concat())
}

/// Answers `cost` and `dir` (the Newton direction, `k × d`).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    let d = input.points.first().map_or(0, Vec::len);
    if d == 0 || input.centroids.is_empty() {
        return Err(EvalError::BadInput(
            "needs points of d ≥ 1 coordinates and at least one centroid".into(),
        ));
    }
    let points = flatten(&input.points, d, "points")?;
    let centroids = flatten(&input.centroids, d, "centroids")?;
    match function {
        "cost" => {
            let (y, timings) = repeat(input.runs, || cost(&centroids, &points, d));
            Evaluation::new(y, timings)
        }
        "dir" => {
            let (dir, timings) = repeat(input.runs, || direction(&centroids, &points, d));
            let rows: Vec<&[f64]> = dir.chunks(d).collect();
            Evaluation::new(rows, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "kmeans",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::test_support::{assert_gradient_matches, seeded};

    #[test]
    fn gradient_matches_central_differences() {
        for (n, k, d) in [(5, 2, 1), (12, 3, 2), (20, 4, 3)] {
            let points = seeded(n * d, 31 + n as u64, 0.0, 1.0);
            let centroids = seeded(k * d, 41 + k as u64, 0.0, 1.0);
            let (g, _, _) = cost::gradient(&centroids, &points, d);
            assert_gradient_matches(&centroids, |c| cost(c, &points, d), g);
        }
    }

    #[test]
    fn the_direction_is_the_gradient_over_twice_the_cluster_sizes() {
        // d = 1, centroids 0 and 10, points 1, 2 (nearest 0) and 9 (nearest 10):
        // ∂f/∂C₀ = 2(C₀ − 1) + 2(C₀ − 2) = −6, ∂²f/∂C₀² = 4; ∂f/∂C₁ = 2, ∂²f/∂C₁² = 2.
        let dir = direction(&[0.0, 10.0], &[1.0, 2.0, 9.0], 1);
        assert_eq!(dir, vec![-1.5, 1.0]);
        assert_eq!(cost(&[0.0, 10.0], &[1.0, 2.0, 9.0], 1), 1.0 + 4.0 + 1.0);
    }
}
