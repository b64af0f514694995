//! Where the gradient time of two evals goes: each eval as `mochi-gradbench` writes it
//! (helpers as the spec names them, rows of nested `Vec`s) against one body with flat
//! row-major arrays and every helper inlined. Prints the gradient/primal ratio of both.
//!
//! `cargo run --release -p mochi-gradbench --example variants` (about 15 seconds).

// The variants index on purpose: they are the "everything inlined" form.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

use mochi::prelude::*;
use mochi_gradbench::evals::{gmm, ode};
use std::time::Instant;

/// gmm with flat row-major arrays and every helper inlined.
#[differentiable]
fn gmm_flat(
    alpha: &[f64],
    mu: &[f64],
    q: &[f64],
    l: &[f64],
    x: &[f64],
    d: usize,
    gamma: f64,
    m: usize,
) -> f64 {
    let k = alpha.len();
    let n = x.len() / d;
    let lsz = d * (d - 1) / 2;
    let mut qd = vec![0.0; k * d];
    let mut sum_qs = vec![0.0; k];
    for c in 0..k {
        for j in 0..d {
            qd[c * d + j] = q[c * d + j].exp();
            sum_qs[c] += q[c * d + j];
        }
    }
    let mut xc = vec![0.0; d];
    let mut qx = vec![0.0; d];
    let mut beta = vec![0.0; k];
    let mut slse = 0.0;
    for i in 0..n {
        for c in 0..k {
            for j in 0..d {
                xc[j] = x[i * d + j] - mu[c * d + j];
            }
            for j in 0..d {
                qx[j] = qd[c * d + j] * xc[j];
            }
            let mut li = 0;
            for j in 0..d {
                for r in j + 1..d {
                    qx[r] += l[c * lsz + li] * xc[j];
                    li += 1;
                }
            }
            let mut sq = 0.0;
            for j in 0..d {
                sq += qx[j] * qx[j];
            }
            beta[c] = alpha[c] + sum_qs[c] - 0.5 * sq;
        }
        let mut mx = beta[0];
        for c in 0..k {
            mx = mx.max(beta[c]);
        }
        let mut se = 0.0;
        for c in 0..k {
            se += (beta[c] - mx).exp();
        }
        slse += mx + se.ln();
    }
    let mut amx = alpha[0];
    for c in 0..k {
        amx = amx.max(alpha[c]);
    }
    let mut ase = 0.0;
    for c in 0..k {
        ase += (alpha[c] - amx).exp();
    }
    let mut prior = 0.0;
    for c in 0..k {
        let mut fro = 0.0;
        for j in 0..d {
            fro += qd[c * d + j] * qd[c * d + j];
        }
        for j in 0..lsz {
            fro += l[c * lsz + j] * l[c * lsz + j];
        }
        prior += 0.5 * gamma * gamma * fro - m as f64 * sum_qs[c];
    }
    slse - n as f64 * (amx + ase.ln()) - prior
}

/// ode with the right-hand side inlined.
#[differentiable]
fn ode_inline(x: &[f64], s: usize) -> f64 {
    let n = x.len();
    let h = 2.0 / s as f64;
    let mut k1 = vec![0.0; n];
    let mut k2 = vec![0.0; n];
    let mut k3 = vec![0.0; n];
    let mut k4 = vec![0.0; n];
    let mut yt = vec![0.0; n];
    let mut y = vec![0.0; n];
    for _ in 0..s {
        k1[0] = x[0];
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
        }
        for i in 0..n {
            yt[i] = y[i] + h * k1[i] / 2.0;
        }
        k2[0] = x[0];
        for i in 1..n {
            k2[i] = x[i] * yt[i - 1];
        }
        for i in 0..n {
            yt[i] = y[i] + h * k2[i] / 2.0;
        }
        k3[0] = x[0];
        for i in 1..n {
            k3[i] = x[i] * yt[i - 1];
        }
        for i in 0..n {
            yt[i] = y[i] + h * k3[i];
        }
        k4[0] = x[0];
        for i in 1..n {
            k4[i] = x[i] * yt[i - 1];
        }
        for i in 0..n {
            y[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
        }
    }
    y[n - 1]
}

fn median_ns(mut f: impl FnMut()) -> f64 {
    let mut t = vec![];
    let start = Instant::now();
    while t.len() < 5 || start.elapsed().as_secs_f64() < 1.0 {
        let s = Instant::now();
        f();
        t.push(s.elapsed().as_nanos() as f64);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2]
}

fn lcg(n: usize, seed: &mut u64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

fn main() {
    let mut seed = 7;
    for (d, k) in [(2, 5), (10, 10), (64, 5)] {
        let n = 1000;
        let lsz = d * (d - 1) / 2;
        let alpha = lcg(k, &mut seed);
        let mu = lcg(k * d, &mut seed);
        let q = lcg(k * d, &mut seed);
        let l = lcg(k * lsz, &mut seed);
        let x = lcg(n * d, &mut seed);
        let rows = |v: &[f64], w: usize| -> Vec<Vec<f64>> {
            if w == 0 {
                vec![vec![]; k]
            } else {
                v.chunks(w).map(|r| r.to_vec()).collect()
            }
        };
        let (mur, qr, lr, xr) = (rows(&mu, d), rows(&q, d), rows(&l, lsz), rows(&x, d));
        let p_spec = median_ns(|| {
            std::hint::black_box(gmm::log_posterior(&alpha, &mur, &qr, &lr, &xr, 1.0, 0));
        });
        let g_spec = median_ns(|| {
            std::hint::black_box(gmm::log_posterior::gradient(
                &alpha, &mur, &qr, &lr, &xr, 1.0, 0,
            ));
        });
        let p_flat = median_ns(|| {
            std::hint::black_box(gmm_flat(&alpha, &mu, &q, &l, &x, d, 1.0, 0));
        });
        let g_flat = median_ns(|| {
            std::hint::black_box(gmm_flat::gradient(&alpha, &mu, &q, &l, &x, d, 1.0, 0));
        });
        let a = gmm::log_posterior(&alpha, &mur, &qr, &lr, &xr, 1.0, 0);
        let b = gmm_flat(&alpha, &mu, &q, &l, &x, d, 1.0, 0);
        println!("gmm d={d} k={k} n={n}: spec primal {:.0} µs ratio {:.1} | flat-inlined primal {:.0} µs ratio {:.1} (values {a:.6} {b:.6})",
            p_spec / 1e3, g_spec / p_spec, p_flat / 1e3, g_flat / p_flat);
    }
    for (n, s) in [(1000, 10), (10000, 10)] {
        let x = lcg(n, &mut seed)
            .iter()
            .map(|v| v + 0.5)
            .collect::<Vec<_>>();
        let p_spec = median_ns(|| {
            std::hint::black_box(ode::primal(&x, s));
        });
        let g_spec = median_ns(|| {
            std::hint::black_box(ode::gradient(&x, s));
        });
        let p_in = median_ns(|| {
            std::hint::black_box(ode_inline(&x, s));
        });
        let g_in = median_ns(|| {
            std::hint::black_box(ode_inline::gradient(&x, s));
        });
        println!("ode n={n} s={s}: spec primal {:.0} µs ratio {:.1} | inlined primal {:.0} µs ratio {:.1}",
            p_spec / 1e3, g_spec / p_spec, p_in / 1e3, g_in / p_in);
    }
}
