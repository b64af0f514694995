//! Functions from other AD projects' test suites (JAX, autograd, Enzyme, Zygote,
//! JAX MD), written the way Rust users write them — iterators, slices, early returns —
//! each checked by `test_rule`.

#![allow(clippy::needless_range_loop, clippy::ptr_arg)]

mod common;
use mochi::prelude::*;

/// autograd's `softplus`, the numerically stable form, summed.
#[differentiable]
fn softplus_sum(x: &[f64]) -> f64 {
    x.iter()
        .map(|&v| v.max(0.0) + (-v.abs()).exp().ln_1p())
        .sum()
}

/// JAX's `logsumexp` with the max shift.
#[differentiable]
fn logsumexp_shifted(x: &[f64]) -> f64 {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
    m + s.ln()
}

/// Cumulative sums (JAX's `cumsum` tests), then a weighted sum of them.
#[differentiable]
fn cumsum_weighted(x: &[f64]) -> f64 {
    let mut cs = vec![0.0; x.len()];
    let mut acc = 0.0;
    for (i, v) in x.iter().enumerate() {
        acc += v;
        cs[i] = acc;
    }
    cs.iter()
        .enumerate()
        .map(|(i, c)| c * c * (i as f64 + 1.0))
        .sum()
}

/// Polynomial evaluation by Horner's rule; both the point and the coefficients carry
/// derivatives.
#[differentiable]
fn horner(coeffs: &[f64], x: f64) -> f64 {
    coeffs.iter().rev().fold(0.0, |acc, c| acc * x + c)
}

/// A matrix-free Gram form ‖A x‖², A given as rows (autograd's `test_matrix_free`).
#[differentiable]
fn gram_quadratic(a: &[Vec<f64>], x: &[f64]) -> f64 {
    a.iter()
        .map(|row| row.iter().zip(x).map(|(r, v)| r * v).sum::<f64>().powi(2))
        .sum()
}

/// Bilinear interpolation on a grid (JAX's `map_coordinates`, order 1): derivatives
/// with respect to the grid values and to the point.
#[differentiable]
fn bilinear(grid: &[Vec<f64>], u: f64, v: f64) -> f64 {
    let i = (u.floor() as usize).min(grid.len() - 2);
    let j = (v.floor() as usize).min(grid[0].len() - 2);
    let (fu, fv) = (u - i as f64, v - j as f64);
    let top = grid[i][j] * (1.0 - fv) + grid[i][j + 1] * fv;
    let bottom = grid[i + 1][j] * (1.0 - fv) + grid[i + 1][j + 1] * fv;
    top * (1.0 - fu) + bottom * fu
}

/// A piecewise function (Zygote's `if`/`else` tests), applied elementwise.
#[differentiable]
fn piecewise(x: &[f64]) -> f64 {
    x.iter()
        .map(|&t| {
            if t < -1.0 {
                -t - 0.5
            } else if t < 1.0 {
                0.5 * t * t
            } else {
                t - 0.5
            }
        })
        .sum()
}

/// The stable logistic sigmoid, one branch per sign.
#[differentiable]
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// Binary cross-entropy of logits through the stable sigmoid.
#[differentiable]
fn binary_cross_entropy(logits: &[f64], labels: &[f64]) -> f64 {
    let mut loss = 0.0;
    for (z, y) in logits.iter().zip(labels) {
        let p = sigmoid(*z);
        loss -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
    }
    loss / logits.len() as f64
}

/// Softmax cross-entropy with an integer label (JAX's `optax` tests).
#[differentiable]
fn softmax_cross_entropy(logits: &[f64], label: usize) -> f64 {
    logsumexp_shifted(logits) - logits[label]
}

/// The Huber loss, `match` on the size of the residual.
#[differentiable]
fn huber(pred: &[f64], target: &[f64], delta: f64) -> f64 {
    pred.iter()
        .zip(target.iter())
        .map(|(p, t)| {
            let r = (p - t).abs();
            if r <= delta {
                0.5 * r * r
            } else {
                delta * (r - 0.5 * delta)
            }
        })
        .sum()
}

/// Rosenbrock's function over consecutive pairs (Enzyme's and JAX's favourite).
#[differentiable]
fn rosenbrock(x: &[f64]) -> f64 {
    x.windows(2)
        .map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (1.0 - w[0]).powi(2))
        .sum()
}

/// L2-regularised logistic regression over rows.
#[differentiable]
fn logistic_regression(w: &[f64], xs: &[Vec<f64>], ys: &[f64], lambda: f64) -> f64 {
    let mut nll = 0.0;
    for (row, y) in xs.iter().zip(ys) {
        let z: f64 = row.iter().zip(w).map(|(a, b)| a * b).sum();
        nll += (1.0 + (-y * z).exp()).ln();
    }
    nll + lambda * w.iter().map(|v| v * v).sum::<f64>()
}

/// The Gaussian log-likelihood of data under a mean and a log standard deviation.
#[differentiable]
fn gaussian_log_likelihood(data: &[f64], mu: f64, log_sigma: f64) -> f64 {
    let sigma = log_sigma.exp();
    let n = data.len() as f64;
    let sq: f64 = data.iter().map(|d| ((d - mu) / sigma).powi(2)).sum();
    -0.5 * sq - n * log_sigma - 0.5 * n * (2.0 * std::f64::consts::PI).ln()
}

/// The sample variance, mean first.
#[differentiable]
fn variance(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
}

/// Cosine similarity.
#[differentiable]
fn cosine_similarity(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// A soft minimum with a temperature (JAX's `softmin` tests).
#[differentiable]
fn soft_min(x: &[f64], temperature: f64) -> f64 {
    let scaled: Vec<f64> = x.iter().map(|v| -v / temperature).collect();
    -temperature * logsumexp_shifted(&scaled)
}

/// A tridiagonal matrix-vector product and its squared norm (Enzyme's stencil tests).
#[differentiable]
fn tridiagonal_energy(x: &[f64], d: f64, e: f64) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = d * x[i];
        if i > 0 {
            y[i] += e * x[i - 1];
        }
        if i + 1 < n {
            y[i] += e * x[i + 1];
        }
    }
    y.iter().map(|v| v * v).sum()
}

/// Logistic growth integrated by explicit Euler steps (autograd's ODE example).
#[differentiable]
fn logistic_growth(y0: f64, rate: f64, capacity: f64, steps: usize) -> f64 {
    let dt = 0.1;
    let mut y = y0;
    for _ in 0..steps {
        y += dt * rate * y * (1.0 - y / capacity);
    }
    y
}

/// The Lennard-Jones energy of a cluster (JAX MD), points as `[f64; 3]` rows.
#[differentiable]
fn lennard_jones(points: &[[f64; 3]]) -> f64 {
    let mut energy = 0.0;
    for i in 0..points.len() {
        for j in (i + 1)..points.len() {
            let r2: f64 = (0..3).map(|k| (points[i][k] - points[j][k]).powi(2)).sum();
            let inv6 = 1.0 / (r2 * r2 * r2);
            energy += 4.0 * (inv6 * inv6 - inv6);
        }
    }
    energy
}

/// Layer normalisation then a weighted sum (Flax's `LayerNorm` tests).
#[differentiable]
fn layer_norm(x: &[f64], gain: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let inv = 1.0 / (var + 1e-5).sqrt();
    x.iter()
        .zip(gain.iter())
        .enumerate()
        .map(|(i, (v, g))| g * (v - mean) * inv * (i as f64 + 1.0))
        .sum()
}

/// Max pooling over chunks of two, then a sum of squares.
#[differentiable]
fn max_pool(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x.chunks(2) {
        let m = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        s += m * m;
    }
    s
}

/// Softmax attention of one query over keys and values given as rows.
#[differentiable]
fn attention(q: &[f64], keys: &[Vec<f64>], values: &[Vec<f64>]) -> f64 {
    let scores: Vec<f64> = keys
        .iter()
        .map(|k| k.iter().zip(q).map(|(a, b)| a * b).sum::<f64>())
        .collect();
    let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
    let z: f64 = weights.iter().sum();
    let mut out = 0.0;
    for (w, v) in weights.iter().zip(values) {
        out += w / z * v.iter().sum::<f64>();
    }
    out
}

/// A product of terms with an early return on a guard (Zygote's control-flow tests).
#[differentiable]
fn guarded_product(x: &[f64]) -> f64 {
    let mut p = 1.0;
    for v in x {
        if v.abs() > 10.0 {
            return 0.0;
        }
        p *= 1.0 + v * v;
    }
    p.ln()
}

mod checked_ports2 {
    use crate::check;

    fn x5() -> Vec<f64> {
        vec![0.5, -1.2, 0.3, 1.7, -0.4]
    }
    fn rows() -> Vec<Vec<f64>> {
        vec![
            vec![0.5, -0.3, 0.2],
            vec![1.1, 0.4, -0.7],
            vec![-0.2, 0.8, 0.6],
        ]
    }

    check!(softplus_sum, (x5(),), |a| (&a.0));
    check!(logsumexp_shifted, (x5(),), |a| (&a.0));
    check!(cumsum_weighted, (x5(),), |a| (&a.0));
    check!(horner, (vec![1.0_f64, -2.0, 0.5, 0.25], 0.7_f64), |a| (
        &a.0, a.1
    ));
    check!(gram_quadratic, (rows(), vec![0.3_f64, -0.2, 0.5]), |a| (
        &a.0, &a.1
    ));
    check!(bilinear, (rows(), 0.4_f64, 1.3_f64), |a| (&a.0, a.1, a.2));
    check!(piecewise, (vec![-2.0_f64, -0.3, 0.8, 1.9],), |a| (&a.0));
    check!(sigmoid, (-0.7_f64,), |a| (a.0));
    check!(
        binary_cross_entropy,
        (x5(), vec![1.0_f64, 0.0, 1.0, 1.0, 0.0]),
        |a| (&a.0, &a.1)
    );
    check!(softmax_cross_entropy, (x5(), 3_usize), |a| (&a.0, a.1));
    check!(
        huber,
        (x5(), vec![0.1_f64, 0.2, 0.3, -0.4, 0.5], 0.8_f64),
        |a| (&a.0, &a.1, a.2)
    );
    check!(rosenbrock, (x5(),), |a| (&a.0));
    check!(
        logistic_regression,
        (
            vec![0.3_f64, -0.2, 0.5],
            rows(),
            vec![1.0_f64, -1.0, 1.0],
            0.1_f64
        ),
        |a| (&a.0, &a.1, &a.2, a.3)
    );
    check!(gaussian_log_likelihood, (x5(), 0.2_f64, -0.3_f64), |a| (
        &a.0, a.1, a.2
    ));
    check!(variance, (x5(),), |a| (&a.0));
    check!(
        cosine_similarity,
        (x5(), vec![0.1_f64, 0.7, -0.4, 1.1, 0.2]),
        |a| (&a.0, &a.1)
    );
    check!(soft_min, (x5(), 0.5_f64), |a| (&a.0, a.1));
    check!(tridiagonal_energy, (x5(), 2.0_f64, -0.5_f64), |a| (
        &a.0, a.1, a.2
    ));
    check!(
        logistic_growth,
        (0.1_f64, 1.5_f64, 2.0_f64, 20_usize),
        |a| (a.0, a.1, a.2, a.3)
    );
    check!(
        lennard_jones,
        (vec![[0.0_f64, 0.0, 0.0], [1.1, 0.1, 0.0], [0.2, 1.2, 0.3]],),
        |a| (&a.0)
    );
    check!(
        layer_norm,
        (x5(), vec![1.0_f64, 0.5, -0.3, 0.8, 1.2]),
        |a| (&a.0, &a.1)
    );
    check!(max_pool, (x5(),), |a| (&a.0));
    check!(attention, (vec![0.3_f64, -0.2, 0.5], rows(), rows()), |a| (
        &a.0, &a.1, &a.2
    ));
    check!(guarded_product, (x5(),), |a| (&a.0));
}
