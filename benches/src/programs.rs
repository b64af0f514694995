//! The second table of the main job: whole programs written as users write them, with
//! helper functions, beside the same programs with the helpers inlined by hand. GMM and
//! the MLP have two inlined forms: `spliced`, each helper's body pasted in at its call
//! with nothing else changed (the helper form's cost over it is what the calls cost),
//! and `inlined`, reworked by hand (fused loops, buffers reused, constant sizes).
//!
//! - `gmm`: the ADBench/GradBench Gaussian-mixture objective (d = 10, k = 10, n = 1000)
//!   with the helpers `qtimesx`, `sqnorm` and `logsumexp` called inside the loop over
//!   points and components.
//! - `rk4`: a Lotka–Volterra system integrated over 500 RK4 steps, the right-hand side a
//!   helper returning a tuple; loss the squared distance to a target.
//! - `kalman`: the log-likelihood of a 2-state constant-velocity Kalman filter over 200
//!   scalar observations, predict and update as helpers.
//! - `mlp`: a 3-layer `tanh` network's squared loss on 32 samples, a dense layer helper
//!   returning a `Vec`.
//!
//! Each row is timed like the 13 cases: primal and gradient interleaved, medians.

// The programs are written with index loops on purpose: that is the code being measured.
#![allow(clippy::needless_range_loop)]

use crate::cell::{gradient_cell, primal_cell, Cell};
use crate::timing::{self, Budget};
use mochi::prelude::*;

// ------------------------------------------------------------------ gmm

#[differentiable]
fn sqnorm(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * x[i];
    }
    s
}

#[differentiable]
fn logsumexp(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        if x[i] > m {
            m = x[i];
        }
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    s.ln() + m
}

/// `Q·x` for `Q` lower triangular: diagonal `qdiag`, below it `l` column by column.
#[differentiable]
fn qtimesx(qdiag: &[f64], l: &[f64], x: &[f64]) -> Vec<f64> {
    let d = x.len();
    let mut out = vec![0.0; d];
    for i in 0..d {
        out[i] = qdiag[i] * x[i];
    }
    let mut p = 0;
    for i in 0..d {
        for j in i + 1..d {
            out[j] += l[p] * x[i];
            p += 1;
        }
    }
    out
}

/// The GMM objective with helpers (without the constant and the Wishart prior's
/// normaliser, as GradBench's `gmm` reference).
#[differentiable]
fn gmm_helpers(alphas: &[f64], means: &[f64], icf: &[f64], x: &[f64], d: usize) -> f64 {
    let k = alphas.len();
    let n = x.len() / d;
    let icf_sz = d * (d + 1) / 2;
    let mut main_term = vec![0.0; k];
    let mut qdiag = vec![0.0; d];
    let mut centered = vec![0.0; d];
    let mut slse = 0.0;
    for i in 0..n {
        for c in 0..k {
            let mut sum_q = 0.0;
            for j in 0..d {
                qdiag[j] = icf[c * icf_sz + j].exp();
                sum_q += icf[c * icf_sz + j];
                centered[j] = x[i * d + j] - means[c * d + j];
            }
            let qx = qtimesx(&qdiag, &icf[c * icf_sz + d..(c + 1) * icf_sz], &centered);
            main_term[c] = alphas[c] + sum_q - 0.5 * sqnorm(&qx);
        }
        slse += logsumexp(&main_term);
    }
    slse - n as f64 * logsumexp(alphas)
}

/// The helper form with each helper's body pasted in at its call, nothing else changed
/// (the same arrays, loops and sub-slice): what the helper calls themselves cost is the
/// difference between this form and `gmm_helpers`.
#[differentiable]
fn gmm_spliced(alphas: &[f64], means: &[f64], icf: &[f64], x: &[f64], d: usize) -> f64 {
    let k = alphas.len();
    let n = x.len() / d;
    let icf_sz = d * (d + 1) / 2;
    let mut main_term = vec![0.0; k];
    let mut qdiag = vec![0.0; d];
    let mut centered = vec![0.0; d];
    let mut slse = 0.0;
    for i in 0..n {
        for c in 0..k {
            let mut sum_q = 0.0;
            for j in 0..d {
                qdiag[j] = icf[c * icf_sz + j].exp();
                sum_q += icf[c * icf_sz + j];
                centered[j] = x[i * d + j] - means[c * d + j];
            }
            // qtimesx(&qdiag, &icf[..], &centered)
            let l = &icf[c * icf_sz + d..(c + 1) * icf_sz];
            let mut qx = vec![0.0; d];
            for a in 0..d {
                qx[a] = qdiag[a] * centered[a];
            }
            let mut p = 0;
            for a in 0..d {
                for b in a + 1..d {
                    qx[b] += l[p] * centered[a];
                    p += 1;
                }
            }
            // sqnorm(&qx)
            let mut sq = 0.0;
            for j in 0..d {
                sq += qx[j] * qx[j];
            }
            main_term[c] = alphas[c] + sum_q - 0.5 * sq;
        }
        // logsumexp(&main_term)
        let mut m = main_term[0];
        for c in 1..k {
            if main_term[c] > m {
                m = main_term[c];
            }
        }
        let mut s = 0.0;
        for c in 0..k {
            s += (main_term[c] - m).exp();
        }
        slse += s.ln() + m;
    }
    // logsumexp(alphas)
    let mut m = alphas[0];
    for c in 1..k {
        if alphas[c] > m {
            m = alphas[c];
        }
    }
    let mut s = 0.0;
    for c in 0..k {
        s += (alphas[c] - m).exp();
    }
    slse - n as f64 * (s.ln() + m)
}

/// The same objective fused by hand: no `qdiag` and `centered` arrays, one buffer `qx`
/// for every component, the triangular product reading `x - mean` in place.
#[differentiable]
fn gmm_inlined(alphas: &[f64], means: &[f64], icf: &[f64], x: &[f64], d: usize) -> f64 {
    let k = alphas.len();
    let n = x.len() / d;
    let icf_sz = d * (d + 1) / 2;
    let mut main_term = vec![0.0; k];
    let mut qx = vec![0.0; d];
    let mut slse = 0.0;
    for i in 0..n {
        for c in 0..k {
            let mut sum_q = 0.0;
            for j in 0..d {
                sum_q += icf[c * icf_sz + j];
                qx[j] = icf[c * icf_sz + j].exp() * (x[i * d + j] - means[c * d + j]);
            }
            let mut p = c * icf_sz + d;
            for a in 0..d {
                for b in a + 1..d {
                    qx[b] += icf[p] * (x[i * d + a] - means[c * d + a]);
                    p += 1;
                }
            }
            let mut sq = 0.0;
            for j in 0..d {
                sq += qx[j] * qx[j];
            }
            main_term[c] = alphas[c] + sum_q - 0.5 * sq;
        }
        let mut m = main_term[0];
        for c in 1..k {
            if main_term[c] > m {
                m = main_term[c];
            }
        }
        let mut s = 0.0;
        for c in 0..k {
            s += (main_term[c] - m).exp();
        }
        slse += s.ln() + m;
    }
    let mut m = alphas[0];
    for c in 1..k {
        if alphas[c] > m {
            m = alphas[c];
        }
    }
    let mut s = 0.0;
    for c in 0..k {
        s += (alphas[c] - m).exp();
    }
    slse - n as f64 * (s.ln() + m)
}

// ------------------------------------------------------------------ rk4

/// The Lotka–Volterra right-hand side.
#[differentiable]
fn lotka_volterra(u: f64, v: f64, p: &[f64]) -> (f64, f64) {
    (p[0] * u - p[1] * u * v, p[3] * u * v - p[2] * v)
}

#[differentiable]
fn rk4_helpers(p: &[f64], steps: usize) -> f64 {
    let h = 0.01;
    let mut u = 1.0;
    let mut v = 1.0;
    for _ in 0..steps {
        let (k1u, k1v) = lotka_volterra(u, v, p);
        let (k2u, k2v) = lotka_volterra(u + 0.5 * h * k1u, v + 0.5 * h * k1v, p);
        let (k3u, k3v) = lotka_volterra(u + 0.5 * h * k2u, v + 0.5 * h * k2v, p);
        let (k4u, k4v) = lotka_volterra(u + h * k3u, v + h * k3v, p);
        u += h / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u);
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    (u - 1.5).powi(2) + (v - 0.5).powi(2)
}

#[differentiable]
fn rk4_inlined(p: &[f64], steps: usize) -> f64 {
    let h = 0.01;
    let mut u = 1.0;
    let mut v = 1.0;
    for _ in 0..steps {
        let k1u = p[0] * u - p[1] * u * v;
        let k1v = p[3] * u * v - p[2] * v;
        let (u2, v2) = (u + 0.5 * h * k1u, v + 0.5 * h * k1v);
        let k2u = p[0] * u2 - p[1] * u2 * v2;
        let k2v = p[3] * u2 * v2 - p[2] * v2;
        let (u3, v3) = (u + 0.5 * h * k2u, v + 0.5 * h * k2v);
        let k3u = p[0] * u3 - p[1] * u3 * v3;
        let k3v = p[3] * u3 * v3 - p[2] * v3;
        let (u4, v4) = (u + h * k3u, v + h * k3v);
        let k4u = p[0] * u4 - p[1] * u4 * v4;
        let k4v = p[3] * u4 * v4 - p[2] * v4;
        u += h / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u);
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    (u - 1.5).powi(2) + (v - 0.5).powi(2)
}

// ------------------------------------------------------------------ kalman

/// A 2-state (position, velocity) Gaussian belief: mean and the covariance's entries.
#[derive(Clone, Debug, PartialEq, Tangent)]
struct Belief {
    x: f64,
    v: f64,
    pxx: f64,
    pxv: f64,
    pvv: f64,
}

/// Predict over `dt` with process noise `q` (constant velocity).
#[differentiable]
fn predict(b: &mut Belief, dt: f64, q: f64) {
    b.x += dt * b.v;
    let pxx = b.pxx + dt * (2.0 * b.pxv + dt * b.pvv) + q * dt * dt * dt / 3.0;
    let pxv = b.pxv + dt * b.pvv + q * dt * dt / 2.0;
    b.pvv += q * dt;
    b.pxx = pxx;
    b.pxv = pxv;
}

/// Update with a position observation `z` of noise `r`; the observation's log-density.
#[differentiable]
fn update(b: &mut Belief, z: f64, r: f64) -> f64 {
    let s = b.pxx + r;
    let kx = b.pxx / s;
    let kv = b.pxv / s;
    let innov = z - b.x;
    b.x += kx * innov;
    b.v += kv * innov;
    let pxx = (1.0 - kx) * b.pxx;
    let pxv = (1.0 - kx) * b.pxv;
    b.pvv -= kv * b.pxv;
    b.pxx = pxx;
    b.pxv = pxv;
    -0.5 * (innov * innov / s + s.ln() + 1.837_877_066_409_345_5)
}

#[differentiable]
fn kalman_helpers(noise: &[f64], z: &[f64]) -> f64 {
    let (q, r) = (noise[0].exp(), noise[1].exp());
    let mut b = Belief {
        x: 0.0,
        v: 0.0,
        pxx: 1.0,
        pxv: 0.0,
        pvv: 1.0,
    };
    let mut ll = 0.0;
    for t in 0..z.len() {
        predict(&mut b, 0.1, q);
        ll += update(&mut b, z[t], r);
    }
    ll
}

#[differentiable]
fn kalman_inlined(noise: &[f64], z: &[f64]) -> f64 {
    let (q, r) = (noise[0].exp(), noise[1].exp());
    let dt = 0.1;
    let (mut x, mut v, mut pxx, mut pxv, mut pvv) = (0.0, 0.0, 1.0, 0.0, 1.0);
    let mut ll = 0.0;
    for t in 0..z.len() {
        x += dt * v;
        let pxx_p = pxx + dt * (2.0 * pxv + dt * pvv) + q * dt * dt * dt / 3.0;
        let pxv_p = pxv + dt * pvv + q * dt * dt / 2.0;
        pvv += q * dt;
        pxx = pxx_p;
        pxv = pxv_p;
        let s = pxx + r;
        let kx = pxx / s;
        let kv = pxv / s;
        let innov = z[t] - x;
        x += kx * innov;
        v += kv * innov;
        let pxx_u = (1.0 - kx) * pxx;
        let pxv_u = (1.0 - kx) * pxv;
        pvv -= kv * pxv;
        pxx = pxx_u;
        pxv = pxv_u;
        ll += -0.5 * (innov * innov / s + s.ln() + 1.837_877_066_409_345_5);
    }
    ll
}

// ------------------------------------------------------------------ mlp

/// `tanh(W·x + b)` for `W` of `n_out × n_in` in row-major order.
#[differentiable]
fn dense(w: &[f64], b: &[f64], x: &[f64]) -> Vec<f64> {
    let n_in = x.len();
    let mut out = vec![0.0; b.len()];
    for o in 0..b.len() {
        let mut s = b[o];
        for i in 0..n_in {
            s += w[o * n_in + i] * x[i];
        }
        out[o] = s.tanh();
    }
    out
}

/// Sizes of the MLP: 8 → 16 → 16 → 1 (weights then biases of each layer, flat).
const MLP: [usize; 4] = [8, 16, 16, 1];

fn mlp_parameters() -> usize {
    (0..3).map(|l| MLP[l] * MLP[l + 1] + MLP[l + 1]).sum()
}

#[differentiable]
fn mlp_helpers(theta: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    let (a, b, c) = (8 * 16, 16 * 16, 16);
    let mut loss = 0.0;
    for s in 0..ys.len() {
        let h1 = dense(&theta[0..a], &theta[a..a + 16], &xs[s * 8..s * 8 + 8]);
        let h2 = dense(
            &theta[a + 16..a + 16 + b],
            &theta[a + 16 + b..a + 32 + b],
            &h1,
        );
        let out = dense(
            &theta[a + 32 + b..a + 32 + b + c],
            &theta[a + 32 + b + c..],
            &h2,
        );
        let e = out[0] - ys[s];
        loss += e * e;
    }
    loss / ys.len() as f64
}

/// The helper form with `dense`'s body pasted in at each call, nothing else changed
/// (the sub-slices, the lengths read at run time, a new `Vec` per layer).
#[differentiable]
fn mlp_spliced(theta: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    let (a, b, c) = (8 * 16, 16 * 16, 16);
    let mut loss = 0.0;
    for s in 0..ys.len() {
        // dense(&theta[0..a], &theta[a..a + 16], &xs[s * 8..s * 8 + 8])
        let (w, bias, x) = (&theta[0..a], &theta[a..a + 16], &xs[s * 8..s * 8 + 8]);
        let mut h1 = vec![0.0; bias.len()];
        for o in 0..bias.len() {
            let mut z = bias[o];
            for i in 0..x.len() {
                z += w[o * x.len() + i] * x[i];
            }
            h1[o] = z.tanh();
        }
        let (w, bias) = (&theta[a + 16..a + 16 + b], &theta[a + 16 + b..a + 32 + b]);
        let mut h2 = vec![0.0; bias.len()];
        for o in 0..bias.len() {
            let mut z = bias[o];
            for i in 0..h1.len() {
                z += w[o * h1.len() + i] * h1[i];
            }
            h2[o] = z.tanh();
        }
        let (w, bias) = (&theta[a + 32 + b..a + 32 + b + c], &theta[a + 32 + b + c..]);
        let mut out = vec![0.0; bias.len()];
        for o in 0..bias.len() {
            let mut z = bias[o];
            for i in 0..h2.len() {
                z += w[o * h2.len() + i] * h2[i];
            }
            out[o] = z.tanh();
        }
        let e = out[0] - ys[s];
        loss += e * e;
    }
    loss / ys.len() as f64
}

/// Fused by hand: the layer sizes as constants, two buffers reused for every sample.
#[differentiable]
fn mlp_inlined(theta: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    let (a, b, c) = (8 * 16, 16 * 16, 16);
    let mut h1 = vec![0.0; 16];
    let mut h2 = vec![0.0; 16];
    let mut loss = 0.0;
    for s in 0..ys.len() {
        for o in 0..16 {
            let mut z = theta[a + o];
            for i in 0..8 {
                z += theta[o * 8 + i] * xs[s * 8 + i];
            }
            h1[o] = z.tanh();
        }
        for o in 0..16 {
            let mut z = theta[a + 16 + b + o];
            for i in 0..16 {
                z += theta[a + 16 + o * 16 + i] * h1[i];
            }
            h2[o] = z.tanh();
        }
        let mut z = theta[a + 32 + b + c];
        for i in 0..16 {
            z += theta[a + 32 + b + i] * h2[i];
        }
        let e = z.tanh() - ys[s];
        loss += e * e;
    }
    loss / ys.len() as f64
}

// ------------------------------------------------------------------ the table

/// Deterministic inputs in `[-scale, scale)`.
pub fn values(n: usize, seed: u64, scale: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// One program row: primal and gradient cells, and the gradient for the agreement check.
pub struct Program {
    /// `name/form`.
    pub label: &'static str,
    /// What it is, for the footnote.
    pub what: &'static str,
    primal: Box<dyn Cell>,
    gradient: Box<dyn Cell>,
}

/// How a program is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// With helper functions, as users write it.
    Helpers,
    /// Each helper's body pasted in at its call, nothing else changed.
    Spliced,
    /// Inlined and reworked by hand (for rk4 and kalman, the splice itself).
    Inlined,
}

/// The rows: each program with helpers first, then its other forms (`name/form`).
pub fn programs() -> Vec<Program> {
    let (d, k, n) = (10, 10, 1000);
    let alphas = values(k, 1, 1.0);
    let means = values(k * d, 2, 1.0);
    let icf = values(k * d * (d + 1) / 2, 3, 0.3);
    let x = values(n * d, 4, 1.0);
    let gmm = move |form: Form| {
        let (a, m, q, xx) = (alphas.clone(), means.clone(), icf.clone(), x.clone());
        let primal = primal_cell(
            (a.clone(), m.clone(), q.clone(), xx.clone()),
            move |s| match form {
                Form::Helpers => gmm_helpers(&s.0, &s.1, &s.2, &s.3, d),
                Form::Spliced => gmm_spliced(&s.0, &s.1, &s.2, &s.3, d),
                Form::Inlined => gmm_inlined(&s.0, &s.1, &s.2, &s.3, d),
            },
        );
        let gradient = gradient_cell(
            ((a, m, q, xx), Vec::new()),
            move |s| {
                let ((a, m, q, xx), g) = s;
                let (y, (da, dm, dq, _, _)) = match form {
                    Form::Helpers => gmm_helpers::value_and_gradient(a, m, q, xx, d),
                    Form::Spliced => gmm_spliced::value_and_gradient(a, m, q, xx, d),
                    Form::Inlined => gmm_inlined::value_and_gradient(a, m, q, xx, d),
                };
                *g = [da, dm, dq].concat();
                y
            },
            |s| s.1.clone(),
        );
        (primal, gradient)
    };
    let p = vec![1.1, 0.4, 0.4, 0.1];
    let rk4 = move |form: Form| {
        let helpers = form == Form::Helpers;
        let primal = primal_cell(p.clone(), move |p| {
            if helpers {
                rk4_helpers(p, 500)
            } else {
                rk4_inlined(p, 500)
            }
        });
        let gradient = gradient_cell(
            (p.clone(), Vec::new()),
            move |s| {
                let (y, (dp, _)) = if helpers {
                    rk4_helpers::value_and_gradient(&s.0, 500)
                } else {
                    rk4_inlined::value_and_gradient(&s.0, 500)
                };
                s.1 = dp;
                y
            },
            |s| s.1.clone(),
        );
        (primal, gradient)
    };
    let z: Vec<f64> = values(200, 5, 1.0)
        .iter()
        .enumerate()
        .map(|(t, e)| 0.05 * t as f64 + 0.3 * e)
        .collect();
    let noise = vec![-1.0, -0.5];
    let kalman = move |form: Form| {
        let helpers = form == Form::Helpers;
        let primal = primal_cell((noise.clone(), z.clone()), move |s| {
            if helpers {
                kalman_helpers(&s.0, &s.1)
            } else {
                kalman_inlined(&s.0, &s.1)
            }
        });
        let gradient = gradient_cell(
            ((noise.clone(), z.clone()), Vec::new()),
            move |s| {
                let (y, (dn, _)) = if helpers {
                    kalman_helpers::value_and_gradient(&s.0 .0, &s.0 .1)
                } else {
                    kalman_inlined::value_and_gradient(&s.0 .0, &s.0 .1)
                };
                s.1 = dn;
                y
            },
            |s| s.1.clone(),
        );
        (primal, gradient)
    };
    let theta = values(mlp_parameters(), 6, 0.4);
    let xs = values(32 * 8, 7, 1.0);
    let ys = values(32, 8, 0.8);
    let mlp = move |form: Form| {
        let primal = primal_cell(
            (theta.clone(), xs.clone(), ys.clone()),
            move |s| match form {
                Form::Helpers => mlp_helpers(&s.0, &s.1, &s.2),
                Form::Spliced => mlp_spliced(&s.0, &s.1, &s.2),
                Form::Inlined => mlp_inlined(&s.0, &s.1, &s.2),
            },
        );
        let gradient = gradient_cell(
            ((theta.clone(), xs.clone(), ys.clone()), Vec::new()),
            move |s| {
                let (t, x, y) = &s.0;
                let (v, (dt, _, _)) = match form {
                    Form::Helpers => mlp_helpers::value_and_gradient(t, x, y),
                    Form::Spliced => mlp_spliced::value_and_gradient(t, x, y),
                    Form::Inlined => mlp_inlined::value_and_gradient(t, x, y),
                };
                s.1 = dt;
                v
            },
            |s| s.1.clone(),
        );
        (primal, gradient)
    };
    let mut rows = Vec::new();
    let mut add = |label, what, (primal, gradient)| {
        rows.push(Program {
            label,
            what,
            primal,
            gradient,
        })
    };
    add(
        "gmm/helpers",
        "GMM d=10 k=10 n=1000, helpers",
        gmm(Form::Helpers),
    );
    add(
        "gmm/spliced",
        "GMM, the helpers' bodies pasted in",
        gmm(Form::Spliced),
    );
    add("gmm/inlined", "GMM, fused by hand", gmm(Form::Inlined));
    add(
        "rk4/helpers",
        "Lotka-Volterra RK4, 500 steps, helper",
        rk4(Form::Helpers),
    );
    add(
        "rk4/inlined",
        "Lotka-Volterra RK4, 500 steps, inlined",
        rk4(Form::Inlined),
    );
    add(
        "kalman/helpers",
        "Kalman log-likelihood, 200 obs, helpers",
        kalman(Form::Helpers),
    );
    add(
        "kalman/inlined",
        "Kalman log-likelihood, 200 obs, inlined",
        kalman(Form::Inlined),
    );
    add(
        "mlp/helpers",
        "3-layer tanh MLP, 32 samples, helper",
        mlp(Form::Helpers),
    );
    add(
        "mlp/spliced",
        "MLP, the helper's body pasted in",
        mlp(Form::Spliced),
    );
    add("mlp/inlined", "MLP, fused by hand", mlp(Form::Inlined));
    rows
}

/// One measured row.
pub struct Measured {
    /// The program's label.
    pub label: &'static str,
    /// Median primal time, ns.
    pub primal_ns: f64,
    /// Median gradient time, ns.
    pub gradient_ns: f64,
}

/// Times every program and checks that the two forms of each agree on the gradient.
pub fn measure(budget: Budget) -> Result<Vec<Measured>, String> {
    let rows = programs();
    let mut out = Vec::new();
    for mut group in groups(rows) {
        let mut grads = Vec::new();
        for p in group.iter_mut() {
            p.gradient.run(1);
            grads.push(p.gradient.gradient());
        }
        for (k, h) in grads.iter().enumerate().skip(1) {
            let g = &grads[0];
            let worst = g
                .iter()
                .zip(h)
                .map(|(a, b)| (a - b).abs() / (1.0 + a.abs().max(b.abs())))
                .fold(0.0, f64::max);
            if g.len() != h.len() || worst > 1e-9 {
                return Err(format!(
                    "programs: {} and {} disagree on the gradient (relative {worst:e})",
                    group[0].label, group[k].label
                ));
            }
        }
        for p in group.iter_mut() {
            let mut cells: Vec<Box<dyn Cell>> = Vec::new();
            // Move the cells into the sampler and back.
            cells.push(std::mem::replace(&mut p.primal, primal_cell((), |_| 0.0)));
            cells.push(std::mem::replace(&mut p.gradient, primal_cell((), |_| 0.0)));
            let samples = timing::sample(&mut cells, budget, |_| {});
            out.push(Measured {
                label: p.label,
                primal_ns: samples[0].median(),
                gradient_ns: samples[1].median(),
            });
        }
    }
    Ok(out)
}

/// The rows grouped by program (the label before `/`), in order.
fn groups(rows: Vec<Program>) -> Vec<Vec<Program>> {
    let mut out: Vec<Vec<Program>> = Vec::new();
    for p in rows {
        match out.last_mut() {
            Some(g) if name(g[0].label) == name(p.label) => g.push(p),
            _ => out.push(vec![p]),
        }
    }
    out
}

/// The program of a label (`gmm` of `gmm/helpers`).
fn name(label: &str) -> &str {
    label.split('/').next().unwrap_or(label)
}

/// The programs table: primal time, gradient time, their ratio, and on each program's
/// helper row its gradient time over the other forms' (`spliced`: the helpers' bodies
/// pasted in, so the cost of the calls themselves; `inlined`: reworked by hand).
pub fn table(rows: &[Measured]) -> String {
    let mut s = String::from(
        "programs (gradient ÷ primal; helpers ÷ spliced and helpers ÷ inlined compare the gradients)\n",
    );
    s.push_str(&format!(
        "{:<16} {:>12} {:>12} {:>8} {:>16} {:>16}\n",
        "program", "primal", "gradient", "ratio", "helpers/spliced", "helpers/inlined"
    ));
    for r in rows {
        let over = |form: &str| {
            let other = format!("{}/{form}", name(r.label));
            match rows.iter().find(|o| o.label == other) {
                Some(o) if r.label.ends_with("/helpers") => {
                    format!("{:.2}", r.gradient_ns / o.gradient_ns)
                }
                _ => String::new(),
            }
        };
        s.push_str(&format!(
            "{:<16} {:>12} {:>12} {:>8.2} {:>16} {:>16}\n",
            r.label,
            human(r.primal_ns),
            human(r.gradient_ns),
            r.gradient_ns / r.primal_ns,
            over("spliced"),
            over("inlined")
        ));
    }
    s
}

/// A duration in ns, in the unit that reads best.
pub fn human(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each program's gradient against central finite differences in a few directions.
    #[test]
    fn program_gradients_match_finite_differences() {
        let x = values(8, 11, 1.0);
        let p = vec![1.1, 0.4, 0.4, 0.1];
        let (_, (dp, _)) = rk4_helpers::value_and_gradient(&p, 50);
        for i in 0..4 {
            let h = 1e-6;
            let mut a = p.clone();
            let mut b = p.clone();
            a[i] += h;
            b[i] -= h;
            let fd = (rk4_helpers(&a, 50) - rk4_helpers(&b, 50)) / (2.0 * h);
            assert!(
                (fd - dp[i]).abs() < 1e-6 * (1.0 + fd.abs()),
                "rk4 {i}: {fd} vs {}",
                dp[i]
            );
        }
        let z: Vec<f64> = x.iter().map(|v| v * 0.5).collect();
        let noise = vec![-1.0, -0.5];
        let (_, (dn, _)) = kalman_helpers::value_and_gradient(&noise, &z);
        let (_, (dn2, _)) = kalman_inlined::value_and_gradient(&noise, &z);
        for i in 0..2 {
            let h = 1e-6;
            let mut a = noise.clone();
            let mut b = noise.clone();
            a[i] += h;
            b[i] -= h;
            let fd = (kalman_helpers(&a, &z) - kalman_helpers(&b, &z)) / (2.0 * h);
            assert!((fd - dn[i]).abs() < 1e-6 * (1.0 + fd.abs()), "kalman {i}");
            assert!((dn[i] - dn2[i]).abs() < 1e-10 * (1.0 + fd.abs()));
        }
        let (d, k) = (3, 2);
        let alphas = values(k, 1, 1.0);
        let means = values(k * d, 2, 1.0);
        let icf = values(k * d * (d + 1) / 2, 3, 0.3);
        let xs = values(4 * d, 4, 1.0);
        let (_, (_, _, dq, _, _)) = gmm_helpers::value_and_gradient(&alphas, &means, &icf, &xs, d);
        let (_, (_, _, dq2, _, _)) = gmm_inlined::value_and_gradient(&alphas, &means, &icf, &xs, d);
        let (_, (_, _, dq3, _, _)) = gmm_spliced::value_and_gradient(&alphas, &means, &icf, &xs, d);
        for i in 0..icf.len() {
            let h = 1e-6;
            let mut a = icf.clone();
            let mut b = icf.clone();
            a[i] += h;
            b[i] -= h;
            let fd = (gmm_helpers(&alphas, &means, &a, &xs, d)
                - gmm_helpers(&alphas, &means, &b, &xs, d))
                / (2.0 * h);
            assert!(
                (fd - dq[i]).abs() < 1e-5 * (1.0 + fd.abs()),
                "gmm icf {i}: {fd} vs {}",
                dq[i]
            );
            assert!((dq[i] - dq2[i]).abs() < 1e-9 * (1.0 + fd.abs()));
            assert!((dq[i] - dq3[i]).abs() < 1e-9 * (1.0 + fd.abs()));
        }
        let theta = values(mlp_parameters(), 6, 0.4);
        let xs = values(4 * 8, 7, 1.0);
        let ys = values(4, 8, 0.8);
        let (_, (dt, _, _)) = mlp_helpers::value_and_gradient(&theta, &xs, &ys);
        let (_, (dt2, _, _)) = mlp_inlined::value_and_gradient(&theta, &xs, &ys);
        let (_, (dt3, _, _)) = mlp_spliced::value_and_gradient(&theta, &xs, &ys);
        for i in (0..theta.len()).step_by(17) {
            let h = 1e-6;
            let mut a = theta.clone();
            let mut b = theta.clone();
            a[i] += h;
            b[i] -= h;
            let fd = (mlp_helpers(&a, &xs, &ys) - mlp_helpers(&b, &xs, &ys)) / (2.0 * h);
            assert!((fd - dt[i]).abs() < 1e-6 * (1.0 + fd.abs()), "mlp {i}");
            assert!((dt[i] - dt2[i]).abs() < 1e-10 * (1.0 + fd.abs()));
            assert!((dt[i] - dt3[i]).abs() < 1e-10 * (1.0 + fd.abs()));
        }
    }
}
