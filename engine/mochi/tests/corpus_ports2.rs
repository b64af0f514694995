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
    check!(
        stacked_cells,
        (
            vec![0.3_f64, -0.2, 0.5, 0.1, 0.7, 0.9, -0.4, 0.2],
            vec![0.1_f64, 0.2, -0.3, 0.4, 0.5, -0.6, 0.2, 0.1],
            vec![0.6_f64, -0.8]
        ),
        |a| (&a.0, &a.1, &a.2)
    );
}

/// One cell written in place through a `&mut` slice of the state.
#[differentiable]
fn state_cell(p: &[f64], h: &[f64], s: &mut [f64]) {
    for i in 0..s.len() {
        s[i] = (p[i] * h[i % h.len()] + s[i]).tanh();
    }
}

/// Layers of cells, each writing its own part of the state, held as `let s = &mut
/// state[a..b];` (GradBench's `lstm` layout), and a call given `&mut st[a..b]` in place.
#[differentiable]
fn stacked_cells(p: &[f64], state: &[f64], x: &[f64]) -> f64 {
    let mut st = state.to_vec();
    let mut out = x.to_vec();
    for (k, params) in p.chunks(4).enumerate() {
        let s = &mut st[4 * k..4 * (k + 1)];
        state_cell(params, &out, s);
        out = s[..2].to_vec();
    }
    state_cell(&p[..2], &x[1..], &mut st[1..3]);
    st.iter().map(|v| v * v).sum::<f64>() + out[0] * out[1]
}

// Bundle adjustment and an LSTM written with helpers, as a user ports GradBench's `ba`
// and `lstm`: helpers returning fixed-size arrays (`cross`, `rodrigues`, `project`),
// a helper returning a tuple of `Vec`s (`lstm_step`), and a local closure building
// the weight matrices as rows.

#[differentiable]
fn cross3(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[differentiable]
fn dot3(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[differentiable]
fn rodrigues(r: &[f64; 3], x: &[f64; 3]) -> [f64; 3] {
    let theta = dot3(r, r).sqrt();
    let (s, c) = theta.sin_cos();
    let w = [r[0] / theta, r[1] / theta, r[2] / theta];
    let wx = cross3(&w, x);
    let wdx = dot3(&w, x) * (1.0 - c);
    [
        x[0] * c + wx[0] * s + w[0] * wdx,
        x[1] * c + wx[1] * s + w[1] * wdx,
        x[2] * c + wx[2] * s + w[2] * wdx,
    ]
}

#[differentiable]
fn project(cam: &[f64], x: &[f64; 3]) -> [f64; 2] {
    let r = [cam[0], cam[1], cam[2]];
    let d = [x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]];
    let p = rodrigues(&r, &d);
    let (u, v) = (p[0] / p[2], p[1] / p[2]);
    let r2 = u * u + v * v;
    let distort = 1.0 + cam[7] * r2 + cam[8] * r2 * r2;
    [
        cam[6] * distort * u + cam[9],
        cam[6] * distort * v + cam[10],
    ]
}

#[differentiable]
fn ba_objective(cam: &[f64], pts: &[[f64; 3]], obs: &[[f64; 2]]) -> f64 {
    let mut s = 0.0;
    for (x, o) in pts.iter().zip(obs) {
        let p = project(cam, x);
        s += (p[0] - o[0]).powi(2) + (p[1] - o[1]).powi(2);
    }
    s
}

#[differentiable]
fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[differentiable]
fn matvec(w: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
    w.iter()
        .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
        .collect()
}

#[differentiable]
#[allow(clippy::too_many_arguments)]
fn lstm_step(
    wi: &[Vec<f64>],
    wf: &[Vec<f64>],
    wo: &[Vec<f64>],
    wc: &[Vec<f64>],
    x: &[f64],
    h: &[f64],
    c: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let xh: Vec<f64> = x.iter().chain(h.iter()).copied().collect();
    let i = matvec(wi, &xh);
    let f = matvec(wf, &xh);
    let o = matvec(wo, &xh);
    let g = matvec(wc, &xh);
    let mut c2 = vec![0.0; c.len()];
    let mut h2 = vec![0.0; c.len()];
    for k in 0..c.len() {
        c2[k] = logistic(f[k]) * c[k] + logistic(i[k]) * g[k].tanh();
        h2[k] = logistic(o[k]) * c2[k].tanh();
    }
    (h2, c2)
}

#[differentiable]
fn lstm_loss(flat: &[f64], xs: &[Vec<f64>], n: usize) -> f64 {
    let m = xs[0].len() + n;
    let mat = |k: usize| -> Vec<Vec<f64>> {
        (0..n)
            .map(|r| flat[(k * n + r) * m..(k * n + r + 1) * m].to_vec())
            .collect()
    };
    let (wi, wf, wo, wc) = (mat(0), mat(1), mat(2), mat(3));
    let mut h = vec![0.0; n];
    let mut c = vec![0.0; n];
    let mut loss = 0.0;
    for x in xs {
        let (h2, c2) = lstm_step(&wi, &wf, &wo, &wc, x, &h, &c);
        h = h2;
        c = c2;
        loss += h.iter().map(|v| v * v).sum::<f64>();
    }
    loss
}

#[test]
fn bundle_adjustment_through_array_helpers() {
    let cam = [0.1, -0.2, 0.3, 0.5, -0.4, -3.0, 1.2, 0.01, 0.001, 0.2, -0.1];
    let pts = [[0.3, 0.5, 2.0], [-0.4, 0.1, 1.5], [0.2, -0.6, 2.5]];
    let obs = [[0.1, 0.2], [-0.1, 0.05], [0.05, -0.2]];
    let g = ba_objective::gradient(&cam, &pts, &obs).0;
    let fd = common::fd(&|c| ba_objective(c, &pts, &obs), &cam);
    common::close("ba_objective", &g, &fd);
}

#[test]
fn lstm_through_tuple_helpers() {
    let n = 2;
    let xs = vec![vec![0.3, -0.2], vec![0.5, 0.1], vec![-0.4, 0.7]];
    let m = 2 + n;
    let flat: Vec<f64> = (0..4 * n * m)
        .map(|k| 0.3 * ((k as f64) * 0.7).sin())
        .collect();
    let g = lstm_loss::gradient(&flat, &xs, n).0;
    let fd = common::fd(&|f| lstm_loss(f, &xs, n), &flat);
    common::close("lstm_loss", &g, &fd);
}
