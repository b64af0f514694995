//! Everyday functions (test functions of optimisation, chains with `fold`, `reduce`,
//! `windows`, `chunks`, `scan`, sorting, local helpers, constants and `use`s declared in
//! the body, `println!`, `dbg!` and assertions with messages, nested `split_at`,
//! `split_at_mut`, `chunks_mut`, `concat`, `rchunks`, float functions by path, a stack
//! drained by `while let Some(v) = st.pop()`, `match` by guards and ranges, `retain`,
//! `truncate`, `rotate_left`, recursive functions, a helper returning an `Option`) checked at every order: the gradient against central
//! differences, `jvp` against the gradient, the Hessian against central differences of
//! the gradient, and `hvp` against the Hessian.

// `dbg!` and a parameter bound again by it are among the forms tested.
#![allow(
    clippy::needless_range_loop,
    clippy::dbg_macro,
    clippy::redundant_locals,
    clippy::let_and_return
)]

use mochi::prelude::*;

mod common;

#[differentiable]
fn ackley(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let s1: f64 = x.iter().map(|v| v * v).sum::<f64>() / n;
    let s2: f64 = x
        .iter()
        .map(|v| (2.0 * std::f64::consts::PI * v).cos())
        .sum::<f64>()
        / n;
    -20.0 * (-0.2 * s1.sqrt()).exp() - s2.exp() + 20.0 + std::f64::consts::E
}
#[differentiable]
fn griewank(x: &[f64]) -> f64 {
    let s: f64 = x.iter().map(|v| v * v / 4000.0).sum();
    let p: f64 = x
        .iter()
        .enumerate()
        .map(|(i, v)| (v / ((i + 1) as f64).sqrt()).cos())
        .product();
    s - p + 1.0
}
#[differentiable]
fn styblinski(x: &[f64]) -> f64 {
    0.5 * x
        .iter()
        .map(|&v| v.powi(4) - 16.0 * v.powi(2) + 5.0 * v)
        .sum::<f64>()
}
#[differentiable]
fn horner(x: &[f64]) -> f64 {
    let t = x[0];
    x[1..].iter().rev().fold(0.0, |acc, &c| acc * t + c)
}
#[differentiable]
fn tv(x: &[f64]) -> f64 {
    x.windows(2)
        .map(|w| ((w[1] - w[0]).powi(2) + 1e-3).sqrt())
        .sum()
}
#[differentiable]
fn pairs(x: &[f64]) -> f64 {
    x.chunks(2).map(|c| c[0] * c[1].sin()).sum()
}
#[differentiable]
fn lse_fold(x: &[f64]) -> f64 {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}
#[differentiable]
fn softmax_ce(x: &[f64]) -> f64 {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let z: f64 = e.iter().sum();
    let p: Vec<f64> = e.iter().map(|v| v / z).collect();
    -(p[1].ln())
}
#[differentiable]
fn newton_cbrt(x: &[f64]) -> f64 {
    let a = x[0];
    let mut r = 1.0;
    let mut k = 0;
    while k < 20 {
        r = r - (r * r * r - a) / (3.0 * r * r);
        k += 1;
    }
    r * x[1]
}
#[differentiable]
fn with_push(x: &[f64]) -> f64 {
    let mut v = Vec::new();
    for i in 0..x.len() {
        v.push(x[i] * x[(i + 1) % x.len()]);
    }
    v.iter().sum::<f64>() + v[0] * v[v.len() - 1]
}
#[differentiable]
fn local_closure(x: &[f64]) -> f64 {
    let s = x[0];
    let f = |t: f64| (t * s).tanh();
    x.iter().map(|&t| f(t)).sum()
}
#[differentiable]
fn match_int(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, v) in x.iter().enumerate() {
        s += match i % 3 {
            0 => v.exp(),
            1 => v * v,
            _ => v.sin(),
        };
    }
    s
}
#[differentiable]
fn cholesky_logdet(x: &[f64]) -> f64 {
    // A = B Bᵀ + 3 I, B from x (3x3)
    let n = 3;
    let mut a = vec![0.0; 9];
    for i in 0..n {
        for j in 0..n {
            let mut s = 0.0;
            for k in 0..n {
                s += x[i * n + k] * x[j * n + k];
            }
            a[i * n + j] = s + if i == j { 3.0 } else { 0.0 };
        }
    }
    let mut l = vec![0.0; 9];
    for j in 0..n {
        let mut s = a[j * n + j];
        for k in 0..j {
            s -= l[j * n + k] * l[j * n + k];
        }
        l[j * n + j] = s.sqrt();
        for i in j + 1..n {
            let mut t = a[i * n + j];
            for k in 0..j {
                t -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = t / l[j * n + j];
        }
    }
    (0..n).map(|i| 2.0 * l[i * n + i].ln()).sum()
}
#[differentiable]
fn zip_dist(x: &[f64]) -> f64 {
    let (a, b) = x.split_at(x.len() / 2);
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).powi(2))
        .sum::<f64>()
        .sqrt()
}
#[differentiable]
fn sort_median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2] * v[0]
}
#[differentiable]
fn iter_minmax(x: &[f64]) -> f64 {
    let mx = x.iter().cloned().fold(f64::MIN, f64::max);
    let mn = x.iter().cloned().fold(f64::MAX, f64::min);
    mx - mn + x.iter().map(|v| v.abs()).sum::<f64>()
}
#[differentiable]
fn scan_cum(x: &[f64]) -> f64 {
    let c: Vec<f64> = x
        .iter()
        .scan(0.0, |acc, &v| {
            *acc += v;
            Some(*acc)
        })
        .collect();
    c.iter().map(|v| v * v).sum()
}
#[differentiable]
fn rev_enumerate(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, v) in x.iter().enumerate().rev() {
        s = s * 0.5 + v * (i as f64 + 1.0);
    }
    s * s
}
#[differentiable]
fn step_by(x: &[f64]) -> f64 {
    let mut s = 1.0;
    for i in (0..x.len()).step_by(2) {
        s *= 1.0 + x[i].sin();
    }
    s
}
#[differentiable]
fn last_first(x: &[f64]) -> f64 {
    let a = *x.first().unwrap();
    let b = *x.last().unwrap();
    a * b + x.iter().skip(1).take(2).map(|v| v.exp()).sum::<f64>()
}
#[differentiable]
fn nested_fn(x: &[f64]) -> f64 {
    #[differentiable]
    fn sq(t: f64) -> f64 {
        t * t
    }
    x.iter().map(|&v| sq(v)).sum::<f64>().ln()
}
#[differentiable]
fn sigmoid_bce(x: &[f64]) -> f64 {
    let ys = [1.0, 0.0, 1.0, 0.0];
    let mut l = 0.0;
    for i in 0..x.len() {
        let p = 1.0 / (1.0 + (-x[i]).exp());
        l -= ys[i % 4] * p.ln() + (1.0 - ys[i % 4]) * (1.0 - p).ln();
    }
    l / x.len() as f64
}
#[differentiable]
fn mat_vec(x: &[f64]) -> f64 {
    let n = 2;
    let a = &x[..4];
    let v = &x[4..6];
    let mut y = [0.0; 2];
    for i in 0..n {
        for j in 0..n {
            y[i] += a[i * n + j] * v[j];
        }
    }
    y[0] * y[1] + y.iter().map(|t| t.cosh()).sum::<f64>()
}
#[differentiable]
fn if_let_some(x: &[f64]) -> f64 {
    let mut acc: Option<f64> = None;
    for &e in x.iter() {
        acc = Some(match acc {
            Some(a) => a.max(e),
            None => e,
        });
    }
    if let Some(m) = acc {
        m * x[0]
    } else {
        0.0
    }
}
#[differentiable]
fn local_use(x: &[f64]) -> f64 {
    use std::f64::consts::PI;
    const C: f64 = 0.25;
    x.iter().map(|v| (PI * v).sin() * C).sum()
}
const WM: [f64; 3] = [0.5, -1.0, 2.0];
#[differentiable]
fn const_arrays(x: &[f64]) -> f64 {
    const WL: [f64; 3] = [1.5, 0.25, -0.5];
    fn idx(i: usize) -> usize {
        (i + 1) % 3
    }
    let mut s = 0.0;
    for i in 0..3 {
        s += WM[i] * x[i] * x[idx(i)] + WL[i] * x[i].exp();
    }
    s
}
#[differentiable]
fn reduce_path(x: &[f64]) -> f64 {
    x.iter().cloned().reduce(f64::max).unwrap() * x[1]
}
#[differentiable]
fn reduce_closure(x: &[f64]) -> f64 {
    let m = x.iter().copied().reduce(|a, b| a.min(b)).unwrap();
    let s = x.iter().map(|v| v * v).reduce(|a, b| a + b).unwrap_or(0.0);
    m * s
}
#[differentiable]
fn reduce_opt(x: &[f64]) -> f64 {
    match x.iter().copied().reduce(f64::max) {
        Some(m) => m * x[0],
        None => 0.0,
    }
}
#[differentiable]
fn reduce_let(x: &[f64]) -> f64 {
    let m = x.iter().cloned().reduce(f64::max);
    let b = x.iter().max_by(|a, b| a.total_cmp(b));
    let c = x
        .iter()
        .map(|v| v.sin())
        .min_by(|a, b| a.partial_cmp(b).unwrap())
        .unwrap_or(0.0);
    let d = x.iter().copied().last();
    let r = if let Some(m) = m { m * x[0] } else { 0.0 };
    r + b.unwrap() * 2.0 + c * d.unwrap()
}
#[differentiable]
fn max_by_total(x: &[f64]) -> f64 {
    let m = *x.iter().max_by(|a, b| a.total_cmp(b)).unwrap();
    let n = x
        .iter()
        .copied()
        .min_by(|a, b| a.partial_cmp(b).unwrap())
        .unwrap();
    m * n
}
#[differentiable]
fn hypot_atan(x: &[f64]) -> f64 {
    x[0].hypot(x[1]) * x[1].atan2(x[0]) + x[2].log10() + x[3].log2() + x[2].ln_1p() + x[3].exp_m1()
}

#[differentiable]
fn with_print(x: &[f64]) -> f64 {
    let x = dbg!(x);
    let y0 = dbg!(x[0] * 2.0);
    let s: f64 = x.iter().map(|v| v * v).sum();
    println!("s = {s}, x0 = {}", x[0]);
    debug_assert!(s >= 0.0, "negative {}", s);
    assert!(x.len() > 2);
    s.sqrt() + y0
}
#[differentiable]
fn array_pat(x: &[f64]) -> f64 {
    let [a, b, c] = [x[0], x[1], x[2]];
    a * b + c.exp() * a
}
#[differentiable]
fn variance(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
}
#[differentiable]
fn eps_guard(x: &[f64]) -> f64 {
    x.iter()
        .map(|v| v.abs().max(f64::EPSILON).ln())
        .sum::<f64>()
        + std::f64::consts::PI * x[0]
}
#[differentiable]
fn rev_enum2(x: &[f64]) -> f64 {
    x.iter()
        .rev()
        .enumerate()
        .map(|(i, v)| v * (i as f64 + 1.0))
        .map(|t| t.sin())
        .sum()
}
#[differentiable]
fn triple_zip(x: &[f64]) -> f64 {
    let n = x.len() / 3;
    let (a, rest) = x.split_at(n);
    let (b, c) = rest.split_at(n);
    a.iter()
        .zip(b.iter())
        .zip(c.iter())
        .map(|((p, q), r)| p * q + r * r * p)
        .sum()
}
#[differentiable]
fn early_return(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        if x[i] > 1.0 {
            return s * x[i];
        }
        s += x[i].cos();
    }
    s
}
#[differentiable]
fn loop_break_val(x: &[f64]) -> f64 {
    let mut i = 0;
    let r = loop {
        if i == x.len() - 1 || x[i] > 1.0 {
            break x[i] * 2.0;
        }
        i += 1;
    };
    r * x[0]
}
#[differentiable]
fn while_tol(x: &[f64]) -> f64 {
    // fixed-point iteration r = cos(a r) until converged
    let a = x[0];
    let mut r = 1.0;
    let mut it = 0;
    while it < 100 {
        let next = (a * r).cos() * 0.5;
        if (next - r).abs() < 1e-15 {
            r = next;
            break;
        }
        r = next;
        it += 1;
    }
    r + x[1] * x[2]
}
#[differentiable]
fn tuple_match(x: &[f64]) -> f64 {
    match (x[0] > 0.0, x[1] > 0.0) {
        (true, true) => x[0] * x[1],
        (true, false) => x[0] - x[1],
        (false, _) => x[1].exp(),
    }
}
#[differentiable]
fn nested_vec(x: &[f64]) -> f64 {
    let m: Vec<Vec<f64>> = (0..2)
        .map(|i| (0..3).map(|j| x[i * 3 + j]).collect())
        .collect();
    let mut s = 0.0;
    for row in &m {
        s += row.iter().map(|v| v * v).sum::<f64>().sqrt();
    }
    s * m[1][2]
}
#[differentiable]
fn mat3(x: &[f64]) -> f64 {
    let mut a = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            a[i][j] = if i == j {
                2.0 + x[i]
            } else {
                x[(i + j) % x.len()] * 0.1
            };
        }
    }
    let det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
        - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    det.ln()
}
#[differentiable]
fn sign_and_clamp(x: &[f64]) -> f64 {
    x.iter()
        .map(|v| v.signum() * v.abs().sqrt() + v.clamp(-0.6, 0.6))
        .sum()
}
#[differentiable]
fn iter_sum_of_products(x: &[f64]) -> f64 {
    let s: f64 = x.iter().zip(x.iter().skip(1)).map(|(a, b)| a * b).sum();
    let p: f64 = x.iter().take(3).product();
    s + p
}
#[differentiable]
fn compound_assign(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    for i in 1..v.len() {
        v[i] += v[i - 1] * 0.5;
        v[i] *= 1.0 + v[i - 1].tanh();
        v[i] /= 2.0;
        v[i] -= 0.1;
    }
    v.iter().sum()
}
#[differentiable]
fn swap_and_reverse(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.swap(0, 2);
    v.reverse();
    v[0] * 3.0 + v[1] * v[2] + v[v.len() - 1].exp()
}
#[differentiable]
fn scan_run(x: &[f64]) -> f64 {
    let c: Vec<f64> = x
        .iter()
        .scan(1.0, |acc, &v| {
            *acc *= 1.0 + 0.5 * v.sin();
            Some(*acc)
        })
        .collect();
    c.iter().sum()
}
#[differentiable]
fn halves_mut(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let (a, b) = v.split_at_mut(3);
    for i in 0..3 {
        b[i] += a[i] * a[i];
    }
    for c in v.chunks_mut(2) {
        c[0] *= c[1];
    }
    v.iter().map(|t| t.sin()).sum()
}
#[differentiable]
fn extend_concat(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = x.iter().map(|a| a * 2.0).collect();
    v.extend_from_slice(&x[..2]);
    v.extend(x.iter().map(|a| a.sin()));
    let w = [x, &v[..]].concat();
    w.iter().map(|a| a * a).sum::<f64>()
}

#[differentiable]
fn path_calls(x: &[f64]) -> f64 {
    f64::max(x[0], x[1]) * f64::sqrt(x[2])
        + f64::mul_add(x[0], x[1], x[2])
        + x[3].mul_add(x[4], 1.0)
        + f64::hypot(x[0], x[5])
        + f64::exp(x[1])
        + f64::powi(x[2], 3)
        + f64::powf(x[2], x[5])
}
#[differentiable]
fn map_paths(x: &[f64]) -> f64 {
    let a: f64 = x.iter().map(|v| f64::exp(*v)).sum();
    let b: f64 = x.iter().copied().map(f64::sin).sum();
    let c: Vec<f64> = x.iter().cloned().map(f64::tanh).collect();
    a * b + c.iter().sum::<f64>()
}
#[differentiable]
fn float_consts(x: &[f64]) -> f64 {
    let t = std::f64::consts::TAU * x[0] + core::f64::consts::LN_2 * x[1] + f64::MIN_POSITIVE;
    t.sin() + (x[2] * std::f64::consts::FRAC_1_SQRT_2).cos()
}
#[differentiable]
fn int_pow_mix(x: &[f64]) -> f64 {
    let n = x.len() as i32;
    let mut s = 0.0;
    for (k, v) in x.iter().enumerate() {
        s += v.powi(k as i32 + 1) / (n as f64) + (k as f64).sqrt() * v;
    }
    s
}
#[differentiable]
fn sum_by_fold_tuple(x: &[f64]) -> f64 {
    let (s, q) = x.iter().fold((0.0, 0.0), |(s, q), v| (s + v, q + v * v));
    q / x.len() as f64 - (s / x.len() as f64).powi(2)
}
#[differentiable]
fn nested_closures(x: &[f64]) -> f64 {
    let sq = |t: f64| t * t;
    let comp = |t: f64| sq(t).sin() + sq(t + 1.0);
    x.iter().map(|&v| comp(v)).sum()
}
#[differentiable]
fn match_guards(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x {
        s += match v {
            v if v < 0.0 => v * v,
            v if v < 1.0 => v.sin(),
            _ => v.ln(),
        };
    }
    s
}
#[differentiable]
fn match_ranges(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += match x[i] * 2.0 {
            t if t < -1.0 => t.exp(),
            -1.0..=1.0 => x[i] * x[i],
            t @ 1.0..3.0 => t.sin() * x[0],
            _ => 1.0,
        };
    }
    s
}
#[differentiable]
fn match_open_ranges(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x {
        s += match v {
            ..0.0 => v * 3.0,
            0.0..0.5 => v * v,
            0.5.. => v.sin(),
            _ => 0.0,
        };
    }
    s + x
        .iter()
        .map(|&v| match v {
            v if v < 0.0 => -v * x[0],
            v => v * v,
        })
        .sum::<f64>()
}
#[differentiable]
fn match_index(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += match i % 3 {
            0 => x[i],
            r if r < 2 => x[i] * x[i] * 2.0 * r as f64,
            _ => x[i].sin(),
        };
        s += match i {
            0..=1 => x[i].exp(),
            _ => 0.5 * x[i],
        };
    }
    s
}
#[differentiable]
fn rchunks_all(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x.rchunks_exact(2) {
        s += c[0] * c[1].exp();
    }
    for (k, c) in x.rchunks(2).enumerate() {
        s += (k as f64 + 1.0) * c[c.len() - 1].sin();
    }
    s + x.rchunks(2).map(|c| c[0] * c[c.len() - 1]).sum::<f64>()
        + x.rchunks_exact(2).map(|c| c[1] - c[0]).sum::<f64>()
}
#[differentiable]
fn shortened(x: &[f64]) -> f64 {
    let mut y = x.to_vec();
    y.retain(|&v| v > 0.0);
    let mut z = x.to_vec();
    z.truncate(z.len() - 1);
    z.retain(|v| *v < 1.0);
    z.rotate_left(1);
    y.iter().map(|v| v.ln()).sum::<f64>() + z[0] * z.iter().map(|v| v * v).sum::<f64>()
}
#[differentiable]
fn power(x: f64, n: u32) -> f64 {
    if n == 0 {
        1.0
    } else {
        x * power(x, n - 1)
    }
}
#[differentiable]
fn uses_power(x: &[f64]) -> f64 {
    power(x[0], 3) + power(x[1], 2) * x[2]
}
#[differentiable]
fn det_minors(a: &[f64]) -> f64 {
    let n = (a.len() as f64).sqrt() as usize;
    if n == 1 {
        return a[0];
    }
    let mut s = 0.0;
    let mut sign = 1.0;
    for c in 0..n {
        let mut m = Vec::with_capacity((n - 1) * (n - 1));
        for r in 1..n {
            for k in 0..n {
                if k != c {
                    m.push(a[r * n + k]);
                }
            }
        }
        s += sign * a[c] * det_minors(&m);
        sign = -sign;
    }
    s
}
#[differentiable]
fn sum_rec(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x[0].sin() * x[0] + sum_rec(&x[1..])
    }
}
#[differentiable]
fn two_calls(x: f64, n: usize) -> f64 {
    match n {
        0 => x,
        1 => x * x,
        _ => two_calls(x, n - 1) * 0.5 + two_calls(x, n - 2).sin(),
    }
}
#[differentiable]
fn ping(x: f64, n: u32) -> f64 {
    if n == 0 {
        x.sin()
    } else {
        pong(x * 1.1, n - 1)
    }
}
#[differentiable]
fn pong(x: f64, n: u32) -> f64 {
    if n == 0 {
        x.cos()
    } else {
        ping(x * x * 0.5, n - 1) + x
    }
}
#[differentiable]
fn recursive_calls(x: &[f64]) -> f64 {
    two_calls(x[0], 4) + ping(x[1], 3) * x[0]
}
#[differentiable]
fn safe_log(x: &[f64]) -> Option<f64> {
    if x.iter().all(|&v| v > 0.0) {
        Some(x.iter().map(|v| v.ln()).sum())
    } else {
        None
    }
}
#[differentiable]
fn option_helper(x: &[f64]) -> f64 {
    let flipped = vec![-x[0], x[1]];
    let pos: Vec<f64> = x.iter().map(|v| v * v + 0.1).collect();
    safe_log(&pos).unwrap_or(0.0) + safe_log(&flipped).map_or(x[1] * x[1], |v| v * 2.0)
}
#[differentiable]
fn while_let_pop(x: &[f64]) -> f64 {
    let mut st = x.to_vec();
    let mut acc = 1.0;
    while let Some(v) = st.pop() {
        acc = acc * 0.5 + v * v;
    }
    acc
}
#[differentiable]
fn stack_typed(x: &[f64]) -> f64 {
    let mut st: Vec<(f64, f64)> = Vec::new();
    for c in x.chunks(2) {
        st.push((c[0], c[1] * c[0]));
    }
    let mut acc = 0.0;
    'outer: while let Some((a, b)) = st.pop() {
        if a > 100.0 {
            break 'outer;
        }
        acc += a.sin() * b;
    }
    acc
}
#[differentiable]
fn vec_of_tuples(x: &[f64]) -> f64 {
    let pairs: Vec<(f64, f64)> = x.chunks(2).map(|c| (c[0], c[1])).collect();
    pairs.iter().map(|&(a, b)| a * b.exp()).sum()
}
#[differentiable]
fn iter_max_by_key_idx(x: &[f64]) -> f64 {
    let k = x
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.partial_cmp(b.1).unwrap())
        .map(|(i, _)| i)
        .unwrap();
    x[k] * x[0] + x.iter().position(|&v| v < 0.0).map_or(0.0, |i| x[i])
}

const X: [f64; 6] = [0.7, -0.4, 1.3, 0.2, -0.9, 0.5];

/// A chain over constant data whose closure is a block binding a `let` from a
/// differentiable capture (`DATA.iter().map(|p| { let t = c[0] * p; t }).sum()`): the
/// closure's value was judged constant from outside and the gradient was a silent zero
/// before 2026-12-03.
const DATA: [f64; 4] = [0.1, 0.2, 0.9, 1.1];
#[differentiable]
fn block_closure_over_constants(c: &[f64]) -> f64 {
    let a: f64 = DATA
        .iter()
        .map(|p| {
            let t = c[0] * p;
            t
        })
        .sum();
    let local = vec![0.5, 1.5];
    let b: f64 = local
        .iter()
        .map(|p| {
            let t = c[1] * p;
            let u = t.sin();
            u * u
        })
        .sum();
    a * b + c[2]
}

/// k-means' cost over a constant data set of rows (`[[f64; 2]; 4]`), each row given to
/// a helper taking a slice, the nearest centre by a `fold` of `f64::min` over
/// `chunks(2)` (also a silent zero gradient before 2026-12-03).
const POINTS: [[f64; 2]; 4] = [[0.1, 0.2], [0.9, 1.1], [2.3, -0.4], [-0.5, 0.7]];
#[differentiable]
fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(p, q)| (p - q).powi(2)).sum()
}
#[differentiable]
fn kmeans_over_rows(c: &[f64]) -> f64 {
    let nearest: f64 = POINTS
        .iter()
        .map(|p| {
            c.chunks(2)
                .map(|cj| dist2(p, cj))
                .fold(f64::INFINITY, f64::min)
        })
        .sum();
    let spread: f64 = POINTS.iter().map(|p| dist2(p, &c[..2])).sum();
    nearest + 0.1 * spread
}

/// Helpers returning a matrix as rows — an outer product collected by nested chains,
/// `Vec<[f64; 2]>`, a rotation `[[f64; 2]; 2]` — read by two indices: the helpers have a
/// generic form, so the caller has its Hessian.
#[differentiable]
fn outer_rows(a: &[f64], b: &[f64]) -> Vec<Vec<f64>> {
    a.iter()
        .map(|u| b.iter().map(|v| u * v).collect())
        .collect()
}
#[differentiable]
fn sin_and_square(t: &[f64]) -> Vec<[f64; 2]> {
    t.iter().map(|v| [v.sin(), v * v]).collect()
}
#[differentiable]
fn rotation(t: f64, s: f64) -> [[f64; 2]; 2] {
    let (c, n) = (t.cos(), t.sin());
    [[c * s, -n], [n, c * s]]
}
#[differentiable]
fn matrices_as_rows(x: &[f64]) -> f64 {
    let m = outer_rows(&x[..2], &x[1..]);
    let r = rotation(x[0], x[1]);
    let d: Vec<Vec<f64>> = x
        .iter()
        .map(|u| x.iter().map(|v| (u - v).sin()).collect())
        .collect();
    let q = sin_and_square(x);
    m[0][1] * r[1][0] + m[1][2] + d[0][2] * d[2][1] + q[2][0] * q[1][1] + r[0][0]
}

/// Plain helpers (`factorial`, a weight) called with integers and constants (a marked
/// helper given only constants is `ported.rs`'s `gb_llsq_sgn`): the generic form calls
/// them on plain floats and lifts what they return.
fn factorial(n: u64) -> u64 {
    (1..=n).product()
}
fn weight(t: f64) -> f64 {
    1.0 / (1.0 + t * t)
}
#[differentiable]
fn taylor_with_plain_helpers(x: &[f64]) -> f64 {
    let mut r = 0.0;
    for i in 0..8u64 {
        let t = i as f64 * 0.5;
        r += x[0].powi(i as i32) / factorial(i) as f64 * weight(t);
    }
    r * x[1] + x[2]
}

/// A function named like a rule module the prelude brings in (`outer`, `stack`):
/// the user's own function is the one called.
#[differentiable]
fn outer(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut m = Vec::with_capacity(a.len() * b.len());
    for u in a {
        for v in b {
            m.push(u * v);
        }
    }
    m
}
#[differentiable]
fn stack(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut v = a.to_vec();
    v.extend_from_slice(b);
    v
}
#[differentiable]
fn named_like_prelude(x: &[f64]) -> f64 {
    let m = outer(&x[..2], &x[2..]);
    let s = stack(&m, x);
    s.iter().map(|t| t.sin()).sum()
}

/// A local closure that says what it returns, called in a condition (a backtracking
/// line search): inlined there, its `sum()` keeps the type.
#[differentiable]
fn typed_closure_in_condition(x: &[f64]) -> f64 {
    let f = |p: &[f64]| -> f64 { p.iter().map(|v| (v - 1.0).powi(2) * (1.0 + v * v)).sum() };
    let f0 = f(x);
    let mut alpha = 1.0;
    let mut trial: Vec<f64> = x.iter().map(|a| a - alpha * a).collect();
    while f(&trial) > f0 && alpha > 1e-3 {
        alpha *= 0.5;
        trial = x.iter().map(|a| a - alpha * a).collect();
    }
    f(&trial) + alpha * f0
}

/// `try_into` of a slice or a `Vec` into an array, unwrapped or expected.
#[differentiable]
fn try_into_arrays(x: &[f64]) -> f64 {
    let [a, b, c]: [f64; 3] = x[..3].try_into().unwrap();
    let v: Vec<f64> = x.iter().map(|t| t * t).collect();
    let arr: [f64; 6] = v.try_into().expect("six");
    a * b.sin() + c * c * a + arr[0] * arr[5]
}

/// A constant array zipped with a parameter in a chain (GradBench's `ba` centres the
/// point so): the generic form reads the lifted constant as a variable.
const CENTRE: [f64; 6] = [0.1, -0.2, -3.0, 0.5, 0.25, 1.0];
#[differentiable]
fn zip_with_const(x: &[f64]) -> f64 {
    let d: Vec<f64> = x.iter().zip(CENTRE.iter()).map(|(a, c)| a - c).collect();
    let w: f64 = x.iter().zip(&CENTRE).map(|(a, c)| a * c).sum();
    d.iter().map(|v| v * v.sin()).sum::<f64>() + w * w + CENTRE[2] * x[0]
}

/// A tuple binding a float and an integer at once (`let (gamma, m) = (1.5, 2);`):
/// `m as f64` casts an integer.
#[differentiable]
fn tuple_of_float_and_int(x: &[f64]) -> f64 {
    let (gamma, m) = (1.5, 2);
    let (mut a, mut k) = (x[0], 0);
    while k < m {
        (a, k) = (a * gamma + x[1], k + 1);
    }
    gamma * x[0] * x[1] - m as f64 * x[2] + a * a + k as f64
}

mod all_orders {
    use super::X;
    use crate::all_orders;
    all_orders!(path_calls, X);
    all_orders!(zip_with_const, X);
    all_orders!(matrices_as_rows, X);
    all_orders!(block_closure_over_constants, [0.4, -0.3, 1.2]);
    all_orders!(kmeans_over_rows, [0.0, 0.3, 1.2, 1.0, 2.0, -0.2]);
    all_orders!(taylor_with_plain_helpers, [0.3, 0.5, 0.9]);
    all_orders!(named_like_prelude, X);
    all_orders!(typed_closure_in_condition, X);
    all_orders!(try_into_arrays, X);
    all_orders!(tuple_of_float_and_int, X);
    all_orders!(map_paths, X);
    all_orders!(float_consts, X);
    all_orders!(int_pow_mix, X);
    all_orders!(sum_by_fold_tuple, X);
    all_orders!(nested_closures, X);
    all_orders!(while_let_pop, X);
    all_orders!(match_guards, [-0.4, 0.3, 1.7, 2.0]);
    all_orders!(match_ranges, [-0.7, 0.3, 1.2, 2.0]);
    all_orders!(match_index, X);
    all_orders!(match_open_ranges, [-0.4, 0.3, 0.9, 1.6]);
    all_orders!(shortened, X);
    all_orders!(uses_power, X);
    all_orders!(det_minors, [0.4, 1.3, -0.7, 0.2, 0.9, 1.1, -0.3, 0.5, 2.0]);
    all_orders!(sum_rec, X);
    all_orders!(recursive_calls, X);
    all_orders!(option_helper, X);
    all_orders!(rchunks_all, [0.7, -0.4, 1.3, 0.2, -0.9]);
    all_orders!(vec_of_tuples, X);
    all_orders!(stack_typed, X);
    all_orders!(iter_max_by_key_idx, X);
    all_orders!(with_print, X);
    all_orders!(array_pat, X);
    all_orders!(variance, X);
    all_orders!(eps_guard, X);
    all_orders!(rev_enum2, X);
    all_orders!(triple_zip, X);
    all_orders!(early_return, X);
    all_orders!(loop_break_val, X);
    all_orders!(while_tol, X);
    all_orders!(tuple_match, X);
    all_orders!(nested_vec, X);
    all_orders!(mat3, X);
    all_orders!(sign_and_clamp, X);
    all_orders!(iter_sum_of_products, X);
    all_orders!(compound_assign, X);
    all_orders!(swap_and_reverse, X);
    all_orders!(extend_concat, X);
    all_orders!(scan_run, X);
    all_orders!(halves_mut, X);
    all_orders!(ackley, X);
    all_orders!(griewank, X);
    all_orders!(styblinski, X);
    all_orders!(horner, X);
    all_orders!(tv, X);
    all_orders!(pairs, X);
    all_orders!(lse_fold, X);
    all_orders!(softmax_ce, X);
    all_orders!(newton_cbrt, [2.0, 1.5]);
    all_orders!(with_push, X);
    all_orders!(local_closure, X);
    all_orders!(match_int, X);
    all_orders!(
        cholesky_logdet,
        [1.0, 0.2, -0.3, 0.5, 0.8, 0.1, -0.4, 0.3, 1.1]
    );
    all_orders!(zip_dist, X);
    all_orders!(sort_median, X);
    all_orders!(iter_minmax, X);
    all_orders!(rev_enumerate, X);
    all_orders!(step_by, X);
    all_orders!(last_first, X);
    all_orders!(nested_fn, X);
    all_orders!(sigmoid_bce, X);
    all_orders!(mat_vec, X);
    all_orders!(if_let_some, X);
    all_orders!(max_by_total, X);
    all_orders!(reduce_let, X);
    all_orders!(reduce_path, X);
    all_orders!(reduce_closure, X);
    all_orders!(reduce_opt, X);
    all_orders!(const_arrays, X);
    all_orders!(local_use, X);
    all_orders!(hypot_atan, [0.7, 0.4, 1.3, 0.2]);
}

#[test]
fn a_scan_has_its_gradient() {
    // No generic form (`scan`), so first order only: c_k = Σ_{i≤k} x_i, f = Σ c_k²,
    // ∂f/∂x_i = 2 Σ_{k≥i} c_k.
    let x = X.to_vec();
    let g = scan_cum::gradient(&x);
    let c: Vec<f64> = x
        .iter()
        .scan(0.0, |a, v| {
            *a += v;
            Some(*a)
        })
        .collect();
    for i in 0..x.len() {
        let want: f64 = 2.0 * c[i..].iter().sum::<f64>();
        assert!((g[i] - want).abs() < 1e-12, "{i}: {} against {want}", g[i]);
    }
}

#[test]
fn a_recursive_function_of_a_scalar_has_its_hessian() {
    // d²/dx² x⁴ = 12 x²
    let h = power::hessian(1.3, 4);
    assert!((h[[0, 0]] - 12.0 * 1.3f64.powi(2)).abs() < 1e-9, "{h:?}");
}

/// Searches, patterns and macros: `find` on a differentiable slice (`.copied().find`,
/// `.find(..).copied()`, by reference), a `match` on an `Option` with guards and several
/// arms, `let`-`else` with slice patterns, `matches!`, `std::array::from_fn`, `flatten`
/// of rows, `panic!` and `eprintln!` with float arguments and captured names, and a
/// struct built with a literal and struct update syntax (its Hessian asked for with
/// `higher_order`), `let v: Vec<f64> = x.into()`, `max_by(f64::total_cmp)`, references
/// collected into a `Vec<&f64>` and sorted, and text
/// arguments (`starts_with`, a `match` on a `&str`) beside the floats.
// (The forms clippy would write otherwise are the forms tested.)
#[allow(clippy::or_then_unwrap, clippy::manual_flatten)]
mod searches_and_patterns {
    use mochi::prelude::*;

    #[differentiable]
    pub fn find_copied(v: &[f64]) -> f64 {
        let o = v.iter().copied().find(|t| *t > 0.5);
        match o {
            Some(t) if t > 3.0 => t.ln(),
            Some(t) => t * t * v[0],
            None => 0.0,
        }
    }
    #[differentiable]
    pub fn find_forms(v: &[f64]) -> f64 {
        let a = v.iter().find(|&&t| t > 1.1).copied().unwrap_or(0.0);
        let b = match v.iter().find(|t| **t < 0.0) {
            Some(t) => t * 2.0,
            None => 1.0,
        };
        if let Some(c) = v.iter().cloned().find(|t| t.abs() > 0.8) {
            a * b * c.sin()
        } else {
            a * b
        }
    }
    #[differentiable]
    pub fn rfind_last(v: &[f64]) -> f64 {
        let r = v.iter().rfind(|t| **t > 0.0).copied().unwrap_or(1.0);
        match v.iter().copied().rfind(|t| *t < 0.0) {
            Some(t) => r * t.exp(),
            None => r,
        }
    }
    #[differentiable]
    pub fn find_map_first(v: &[f64]) -> f64 {
        let a = v
            .iter()
            .find_map(|t| if *t > 0.5 { Some(t * t) } else { None })
            .unwrap_or(1.0);
        let b = match v
            .iter()
            .copied()
            .find_map(|t| (t < 0.0).then_some(t.exp() * v[0]))
        {
            Some(e) => e,
            None => v[1],
        };
        a * b
    }
    #[differentiable]
    pub fn option_guards(v: &[f64]) -> f64 {
        let o = if v[0] > 0.5 { Some(v[0] * 1.5) } else { None };
        let w = match o {
            Some(t) if t > 3.0 => t.ln(),
            Some(u) if u > 1.0 => u * u * v[2],
            _ if v[1] > 0.0 => v[1].sin(),
            Some(s) => s * v[1],
            None => v[2].exp(),
        };
        w + match v.get(3) {
            Some(&t) if t < 0.0 => -t * v[0],
            Some(&t) => t * t,
            None => 1.0,
        }
    }
    #[differentiable]
    pub fn let_else_slices(x: &[f64]) -> f64 {
        let &[a, b] = &x[..2] else {
            panic!("need two, got {}", x.len())
        };
        let [c, .., d] = x else { return a };
        let [e, rest @ ..] = &x[1..] else {
            return 0.0;
        };
        let [f, g] = x[2..4] else { return b };
        a / b + c * d + e * rest[0] + f * g
    }
    #[differentiable]
    pub fn matches_and_from_fn(x: &[f64]) -> f64 {
        let y: [f64; 3] = std::array::from_fn(|i| x[i] * (i + 1) as f64);
        let mut s = 0.0;
        for i in 0..x.len() {
            if matches!(i % 3, 0 | 2) {
                s += x[i].sin() * y[i % 3];
            } else if matches!(x.len(), n if n > 4) {
                s += x[i] * x[i];
            }
        }
        s
    }
    #[differentiable]
    pub fn flatten_rows(x: &[f64]) -> f64 {
        let m = x.len();
        let mut a = vec![vec![0.0; m]; m];
        for i in 0..m {
            for j in 0..m {
                a[i][j] = x[i] * x[j].sin();
            }
        }
        a.iter().flatten().map(|v| v * v).sum::<f64>() + a.iter().flatten().sum::<f64>()
    }
    #[differentiable]
    pub fn formats(x: &[f64]) -> f64 {
        let s = x[0] * x[1];
        if s > 1e6 {
            eprintln!("large product {s} at {}", x[0]);
        }
        assert!(x[1] != 0.0, "x[1] = {} must not be zero", x[1]);
        if x.len() < 2 {
            panic!("need two values, got {} (first {})", x.len(), x[0]);
        }
        let label = format!("{s:.3}");
        s / x[1].powi(2) + label.len() as f64
    }

    #[differentiable]
    pub fn into_and_comparator_paths(x: &[f64]) -> f64 {
        let v: Vec<f64> = x.into();
        let w: Vec<f64> = (&x[1..]).into();
        let m = x.iter().map(|&t| t.sin()).max_by(f64::total_cmp).unwrap();
        let n = v.iter().copied().min_by(f64::total_cmp).unwrap();
        v[0] * w[1] + m * n
    }

    /// References collected and sorted: `Vec<&f64>` written out.
    #[differentiable]
    pub fn collected_refs(x: &[f64]) -> f64 {
        let r: Vec<&f64> = x.iter().collect();
        let mut sorted: Vec<&f64> = x.iter().collect();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let rev = x.iter().rev().collect::<Vec<_>>();
        *r[0] * sorted[0] + *sorted[sorted.len() - 1] * rev[0].sin() + r[1] * *rev[1]
    }

    /// `Option` combinators on an element's `Option`: `map`, `map_or`, `filter`,
    /// `unwrap_or_else`, `or`, `and_then`; `Option`s collected and matched; `map(..)
    /// .flatten()` of `Option`s.
    #[differentiable]
    pub fn option_combinators(x: &[f64]) -> f64 {
        let a = x.first().map(|v| v * 2.0).unwrap_or(0.0);
        let b = x.get(1).copied().map_or(1.0, |v| v.sin());
        let c = x
            .last()
            .copied()
            .filter(|v| *v > 0.0)
            .unwrap_or_else(|| x[0] * 3.0);
        let d = x.get(9).copied().or(Some(x[2])).unwrap();
        let r = x
            .first()
            .copied()
            .and_then(|v| if v > 0.0 { Some(v.ln()) } else { None });
        a * b + c * d + r.unwrap_or(0.0)
    }
    #[differentiable]
    pub fn options_collected(x: &[f64]) -> f64 {
        let opts: Vec<Option<f64>> = x
            .iter()
            .map(|v| if *v > 0.0 { Some(v * v) } else { None })
            .collect();
        let mut s = 0.0;
        for o in &opts {
            if let Some(v) = o {
                s += v;
            }
        }
        s + x
            .iter()
            .map(|v| (*v < 0.5).then_some(v.exp()))
            .flatten()
            .sum::<f64>()
    }

    /// Text arguments choosing terms: `starts_with` and a `match` on a `&str`.
    #[differentiable]
    pub fn by_names(x: &[f64], names: &[String], kind: &str) -> f64 {
        let mut s = 0.0;
        for (v, name) in x.iter().zip(names) {
            if name.starts_with('a') || name.as_str().ends_with("_sq") {
                s += v * v * x[0];
            } else {
                s += v.sin();
            }
        }
        match kind {
            "sqrt" => (s * s + 1.0).sqrt(),
            _ => s,
        }
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Pt {
        x: f64,
        y: f64,
        n: usize,
    }
    #[differentiable(higher_order)]
    pub fn struct_built(v: &[f64]) -> f64 {
        let p = Pt {
            x: v[0],
            y: v[1] * v[0],
            n: 2,
        };
        let q = Pt {
            y: 2.0 * p.x * v[2],
            ..p.clone()
        };
        p.x * p.y.sin() + q.y * q.x * p.n as f64
    }

    mod t {
        use crate::all_orders;
        const X: [f64; 5] = [0.7, -0.4, 1.3, 0.2, -0.9];
        all_orders!(find_copied, X);
        all_orders!(find_forms, X);
        all_orders!(rfind_last, X);
        all_orders!(find_map_first, X);
        all_orders!(option_guards, [0.7, -0.4, 1.3, 0.2]);
        all_orders!(let_else_slices, X);
        all_orders!(matches_and_from_fn, X);
        all_orders!(flatten_rows, [0.7, -0.4, 1.3]);
        all_orders!(formats, [0.7, -0.4, 1.3]);
        all_orders!(struct_built, [0.7, -0.4, 1.3]);
        all_orders!(into_and_comparator_paths, X);
        all_orders!(collected_refs, X);
        all_orders!(option_combinators, X);
        all_orders!(options_collected, X);
    }
    // The other branches of the searches and of the guards.
    mod t_found_late {
        use crate::all_orders;
        all_orders!(find_copied, [0.2, 2.0, 5.0]);
        all_orders!(option_guards, [2.4, -0.4, 1.3, -0.2]);
    }
    mod t_none {
        use crate::all_orders;
        all_orders!(find_map_first, [0.2, 0.4, 0.1]);
        all_orders!(option_combinators, [-0.7, 0.4, -1.3]);
        all_orders!(find_copied, [0.2, -2.0, 0.4]);
        all_orders!(option_guards, [0.3, 0.4, 1.3]);
    }
    mod t_positive_guard {
        use crate::all_orders;
        all_orders!(option_guards, [0.8, -0.4, 1.3, 0.6]);
    }

    #[test]
    fn text_arguments_keep_the_hessian() {
        let names: Vec<String> = ["alpha", "b", "c_sq"].map(String::from).to_vec();
        let x = [0.7, -0.4, 1.3];
        let f = |x: &[f64]| by_names(x, &names, "sqrt");
        let g = by_names::gradient(&x, &names, "sqrt").0;
        let fd = crate::common::fd(&f, &x);
        for i in 0..3 {
            assert!(
                (g[i] - fd[i]).abs() < 1e-6,
                "gradient[{i}] {} against {}",
                g[i],
                fd[i]
            );
        }
        let h = by_names::hessian(&x, &names, "sqrt");
        for j in 0..3 {
            let gj = |x: &[f64]| by_names::gradient(x, &names, "sqrt").0[j];
            let col = crate::common::fd(&gj, &x);
            for i in 0..3 {
                assert!(
                    (h[[j, i]] - col[i]).abs() < 1e-5,
                    "H[{j},{i}] {} against {}",
                    h[[j, i]],
                    col[i]
                );
            }
        }
    }

    #[test]
    fn searches_take_the_element_found() {
        // v = [0.2, 2.0, 5.0]: 2.0 is found (> 0.5), not > 3: f = t² v₀.
        let g = find_copied::gradient(&[0.2, 2.0, 5.0]);
        assert_eq!(g, vec![4.0, 0.8, 0.0]);
        // x = [0.5, 1.5, -0.7]: a = x₁, b = 2 x₂, c = x₁ (|1.5| > 0.8 first): f = 2 x₁ x₂ sin x₁.
        let x = [0.5, 1.5, -0.7];
        let g = find_forms::gradient(&x);
        let want = [
            0.0,
            2.0 * x[2] * (x[1].sin() + x[1] * x[1].cos()),
            2.0 * x[1] * x[1].sin(),
        ];
        for i in 0..3 {
            assert!((g[i] - want[i]).abs() < 1e-12, "{g:?} against {want:?}");
        }
    }
}

/// Iterators held in a variable (`let mut it = x.iter(); it.next()`, then the rest
/// consumed), `partition` and `unzip` into two `Vec`s, `map` of a fixed-size array, and
/// `as f64` of a name whose type the syntax does not show (the index of a
/// `min_by`/`max_by` over `enumerate`, a float cast to its own type).
#[allow(clippy::while_let_on_iterator, clippy::or_then_unwrap)]
mod held_and_split {
    use mochi::prelude::*;

    #[differentiable]
    pub fn held_first_then_rest(x: &[f64]) -> f64 {
        let mut it = x.iter();
        let first = *it.next().unwrap();
        let mut s = first;
        for v in it {
            s = s * v + 1.0;
        }
        s
    }
    #[differentiable]
    pub fn held_copied_while_let(x: &[f64]) -> f64 {
        let mut it = x.iter().copied();
        let a = it.next().unwrap_or(0.0);
        let b = it.next().unwrap();
        let mut s = a * b;
        while let Some(v) = it.next() {
            s += v.sin() * a;
        }
        s
    }
    /// After `while let` has drained it, the rest is empty (not a panic).
    #[differentiable]
    pub fn held_drained_then_consumed(x: &[f64]) -> f64 {
        let mut it = x.iter();
        let head = it.next().copied().unwrap_or(1.0);
        let mut s = 0.0;
        while let Some(&v) = it.next() {
            s = s * 0.5 + v;
        }
        for v in it {
            s += v;
        }
        let tail: f64 = x.iter().skip(1).map(|v| v * v).sum();
        head * s + tail
    }
    /// `for v in it.by_ref()` left by a `break`, then the rest.
    #[differentiable]
    pub fn held_by_ref_break(x: &[f64]) -> f64 {
        let mut it = x.iter();
        let mut s = 1.0;
        for &v in it.by_ref() {
            s *= v.exp();
            if v < 0.0 {
                break;
            }
        }
        let rest: f64 = it.map(|v| v * v).sum();
        s + rest
    }
    #[differentiable]
    pub fn held_then_adapted(x: &[f64]) -> f64 {
        let mut rows = x.iter();
        let head = rows.next().copied().unwrap_or(1.0);
        let tail: f64 = rows.map(|v| v * v).sum();
        head * tail
    }
    #[differentiable]
    pub fn partitioned(x: &[f64]) -> f64 {
        let (pos, neg): (Vec<f64>, Vec<f64>) = x.iter().partition(|v| **v > 0.0);
        let (big, small): (Vec<f64>, Vec<f64>) = x.iter().map(|v| v * 2.0).partition(|v| *v > 1.0);
        pos.iter().sum::<f64>() - neg.iter().map(|v| v * v).sum::<f64>()
            + big.iter().sum::<f64>() * 3.0
            + small.iter().map(|v| v.sin()).sum::<f64>()
    }
    #[differentiable]
    pub fn unzipped(x: &[f64]) -> f64 {
        let (a, b): (Vec<f64>, Vec<f64>) = x.iter().map(|v| (v.sin(), v.cos())).unzip();
        a.iter().zip(&b).map(|(p, q)| p * q).sum()
    }
    #[differentiable]
    pub fn array_maps(x: &[f64]) -> f64 {
        let a = [x[0], x[1] * 2.0, x[2].exp()];
        let b: [f64; 3] = a.map(|t| t * t);
        let p: [f64; 3] = [x[0], x[1], x[2]];
        let s = p.map(f64::sin);
        let q = p.map(|t: f64| t * x[3]);
        b.iter().sum::<f64>() + s[0] * q[1] + s[2] + q.iter().sum::<f64>()
    }
    #[differentiable]
    pub fn casts_of_unseen_types(x: &[f64]) -> f64 {
        let (k, m) = x
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        let (i, big) = x
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        #[allow(clippy::unnecessary_cast)]
        let t = x[1] as f64;
        let flag = (x[0] > 0.0) as u8 as f64;
        m * k as f64
            + big * (i as f64 + 1.0)
            + t * t
            + flag * x[2]
            + (x[2] * 3.0).floor() as i64 as f64 * x[3]
    }

    /// `Option` combinators on an `Option` held in a variable.
    #[differentiable]
    pub fn held_options(x: &[f64]) -> f64 {
        let q = x.first().copied();
        let a = q
            .and_then(|v| if v > 0.0 { Some(v.ln()) } else { None })
            .unwrap_or(0.0);
        let b = q.or(Some(x[1])).unwrap();
        let c = q.unwrap_or_else(|| x[2]);
        let d = q.map_or_else(|| 1.0, |v| v.cos());
        let l = x.last().copied();
        let e = l.filter(|v| *v > 0.0).unwrap_or(1.0) * x[0];
        let m = x.iter().copied().reduce(f64::max);
        let s = m.map_or(0.0, |v| v.exp()) + m.unwrap_or_default();
        // (A chain over the sequence between the `let` and the combinator reads it.)
        let w = x.to_vec();
        let r = w.get(1).copied();
        let t: f64 = w.iter().map(|t| t * t).sum();
        let f = x.iter().find(|v| **v < 0.0);
        let g = x.iter().max_by(|a, b| a.total_cmp(b));
        a + b * c
            + d
            + e
            + s
            + r.map(|u| u * t).unwrap_or(0.0)
            + f.map(|v| v * 2.0).unwrap_or(0.0)
            + g.map_or(0.0, |v| v.powi(2))
    }

    /// `Vec::from_iter(chain)`, `v.resize(n, 0.0)` of an empty `Vec`, `std::mem::take`.
    #[differentiable]
    pub fn std_vec_forms(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = Vec::new();
        v.resize(x.len(), 0.0);
        for (i, t) in x.iter().enumerate() {
            v[i] = t.tanh();
        }
        let w = std::mem::take(&mut v);
        let u = Vec::from_iter(x.iter().map(|t| t * t));
        w.iter().sum::<f64>() + v.len() as f64 + u[1] * w[0]
    }

    /// `unsafe { *x.get_unchecked(i) }`, `get_unchecked_mut` and a range: read by index.
    /// (Every index is in bounds: `i - 1` and `i` below `v.len()`, `1..3` of five.)
    #[allow(unsafe_code)]
    #[differentiable]
    pub fn unchecked_reads(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        for i in 1..v.len() {
            unsafe {
                *v.get_unchecked_mut(i) += *v.get_unchecked(i - 1) * 0.5;
            }
        }
        let w = unsafe { x.get_unchecked(1..3) };
        let mut s = 0.0;
        for i in 0..x.len() {
            s += unsafe { *x.get_unchecked(i) } * (i as f64 - 1.5);
        }
        v.iter().sum::<f64>() + w[0] * w[1] + s * s
    }

    /// A const-generic array parameter.
    #[differentiable]
    pub fn const_generic<const N: usize>(x: &[f64; N]) -> f64 {
        x.iter().map(|v| v * v).sum::<f64>() * x[N - 1]
    }

    #[test]
    fn const_generic_array() {
        let x = [1.0, 2.0, 3.0];
        let g = const_generic::gradient(&x);
        let f = |z: &[f64]| const_generic(&[z[0], z[1], z[2]]);
        let fd = crate::common::fd(&f, &x);
        crate::common::close("const_generic", &g, &fd);
    }

    /// Local closures that return early: `return` (inside a chain's `map` and in an
    /// expression) and `?` on an `Option` and a `Result`, in a closure that says what it
    /// returns and in one whose value ends in `Some(..)`.
    #[differentiable]
    pub fn closures_returning_early(x: &[f64]) -> f64 {
        let inv = |v: f64| {
            if v.abs() < 1e-9 {
                return 0.0;
            }
            1.0 / v
        };
        let safe_log = |v: f64| -> Option<f64> {
            if v <= 0.0 {
                return None;
            }
            Some(v.ln())
        };
        let inner = || -> Option<f64> {
            let a = x.first()?;
            let b = x.get(2)?;
            Some(a * b.sin())
        };
        let pair = |i: usize| {
            let p = x.get(i).copied()?;
            let q = x.get(i + 1).copied()?;
            Some(p * q)
        };
        let parse = |v: f64| -> Result<f64, String> {
            if v < -1.0 {
                return Err("below -1".into());
            }
            Ok(v.exp())
        };
        let both = |a: f64, b: f64| -> Result<f64, String> { Ok(parse(a)? + parse(b)?) };
        let mut s = inner().unwrap_or(0.0);
        for i in 0..x.len() {
            s += pair(i).unwrap_or(1.0) + safe_log(x[i]).unwrap_or(0.0);
        }
        s + x.iter().map(|&v| inv(v) * v.sin()).sum::<f64>()
            + inv(x[0]) * 2.0
            + both(x[0], x[1]).unwrap_or(0.0)
            + both(-5.0, x[2]).unwrap_or(x[3])
    }

    /// A fixed-size array parameter: `map` over it, gradient only (a fixed-size array
    /// argument has no higher-order companions).
    #[differentiable]
    pub fn softmax_first(p: [f64; 3]) -> f64 {
        let e = p.map(|v| v.exp());
        let z: f64 = e.iter().sum();
        e[0] / z
    }

    #[test]
    fn array_parameter_map() {
        let p = [0.5, -0.3, 1.2];
        let g = softmax_first::gradient(p);
        let f = |x: &[f64]| softmax_first([x[0], x[1], x[2]]);
        let fd = crate::common::fd(&f, &p);
        crate::common::close("softmax_first", &g, &fd);
    }

    mod t {
        use crate::all_orders;
        const X: [f64; 5] = [0.7, -0.4, 1.3, 0.2, -0.9];
        all_orders!(held_first_then_rest, X);
        all_orders!(held_copied_while_let, X);
        all_orders!(held_drained_then_consumed, X);
        all_orders!(held_then_adapted, X);
        all_orders!(held_by_ref_break, X);
        all_orders!(partitioned, X);
        all_orders!(unzipped, X);
        all_orders!(array_maps, X);
        all_orders!(casts_of_unseen_types, X);
        all_orders!(held_options, X);
        all_orders!(std_vec_forms, X);
        all_orders!(unchecked_reads, X);
        all_orders!(closures_returning_early, X);
    }
    // The other branches: the first element negative, the last positive, none negative.
    mod t_first_negative {
        use crate::all_orders;
        all_orders!(held_options, [-0.7, 0.4, 1.3, 0.2]);
    }
    mod t_none_negative {
        use crate::all_orders;
        all_orders!(held_options, [0.7, 0.4, 1.3, 0.2]);
    }
}

/// Structs and enums of the user's in functions asked for their higher-order companions
/// (`#[differentiable(higher_order)]`): methods called on a struct the function builds
/// or is given (`l.at(t)`, `Line::at(&l, t)`, `m.score(x)`), a helper taking a struct by
/// reference or by value, and an enum argument chosen per element.
mod structs_and_enums {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Line {
        slope: f64,
        icpt: f64,
    }

    #[differentiable]
    impl Line {
        #[differentiable(higher_order)]
        fn at(&self, t: f64) -> f64 {
            self.slope * t + self.icpt
        }
        #[differentiable(higher_order)]
        fn residual(&self, t: f64, y: f64) -> f64 {
            self.at(t) - y
        }
        #[differentiable]
        fn nudge(&mut self, d: f64) {
            self.icpt += d;
        }
    }

    #[differentiable(higher_order)]
    pub fn line_fit(x: &[f64]) -> f64 {
        let l = Line {
            slope: x[0],
            icpt: x[1],
        };
        let ts = [0.0, 1.0, 2.0, 3.0];
        let ys = [0.1, 0.9, 2.2, 2.8];
        let sq: f64 = ts
            .iter()
            .zip(ys.iter())
            .map(|(&t, &y)| l.residual(t, y).powi(2))
            .sum();
        sq + Line::at(&l, 0.5) * x[0]
    }

    /// The `&mut self` method has no generic form: the gradient is there, and using the
    /// Hessian is an error when the crate is built (a constant's evaluation names the
    /// method and the fix), which `cargo check` does not reach.
    #[differentiable(higher_order)]
    pub fn line_fit_nudged(x: &[f64]) -> f64 {
        let mut l = Line {
            slope: x[0],
            icpt: x[1],
        };
        l.nudge(0.25);
        (l.at(2.0) - 1.0).powi(2) + l.at(-1.0).exp()
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Model {
        w: Vec<f64>,
        b: f64,
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Loss {
        Square,
        Abs,
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Act {
        Relu,
        Tanh,
        Sigmoid,
    }

    #[differentiable]
    impl Model {
        #[differentiable(higher_order)]
        fn score(&self, x: &[f64]) -> f64 {
            self.w.iter().zip(x).map(|(a, b)| a * b).sum::<f64>() + self.b
        }
    }

    #[differentiable(higher_order)]
    fn predict(m: &Model, x: &[f64]) -> f64 {
        m.score(x).tanh()
    }

    #[differentiable(higher_order)]
    fn penalty(m: Model, loss: Loss, r: f64) -> f64 {
        let base = match loss {
            Loss::Square => r * r,
            Loss::Abs => r.abs(),
        };
        base + 0.1 * m.b * m.b
    }

    #[differentiable(higher_order)]
    pub fn model_fit(p: &[f64]) -> f64 {
        let m = Model {
            w: p[..2].to_vec(),
            b: p[2],
        };
        let data = [([1.0, 0.5], 0.3), ([-0.4, 0.9], -0.2), ([0.2, 0.1], 0.8)];
        let mut s = 0.0;
        for (x, y) in data.iter() {
            let r = predict(&m, x) - y;
            s += penalty(m.clone(), Loss::Abs, r) + penalty(m.clone(), Loss::Square, 0.5 * r);
        }
        s
    }

    #[differentiable(higher_order)]
    fn activate(a: Act, v: f64) -> f64 {
        match a {
            Act::Relu => v.max(0.0),
            Act::Tanh => v.tanh(),
            Act::Sigmoid => 1.0 / (1.0 + (-v).exp()),
        }
    }

    #[differentiable]
    pub fn layer_of_choices(x: &[f64]) -> f64 {
        let acts = [Act::Relu, Act::Tanh, Act::Sigmoid];
        let mut s = 0.0;
        for (i, &v) in x.iter().enumerate() {
            s += activate(acts[i % 3], 1.5 * v) * x[0];
        }
        s
    }

    /// A particle's position and velocity as fixed-size arrays (lifted field by field).
    #[derive(Clone, Debug, Tangent)]
    pub struct Particle {
        pos: [f64; 2],
        vel: [f64; 2],
    }

    /// `for p in ps.iter_mut()` over a `Vec` of structs, read and written through the
    /// element's fields (`p.vel[0] -= ..`): the element copied in and written back.
    #[differentiable(higher_order)]
    pub fn particles(x: &[f64]) -> f64 {
        let mut ps: Vec<Particle> = (0..2)
            .map(|i| Particle {
                pos: [x[2 * i], x[2 * i + 1]],
                vel: [0.0, 0.0],
            })
            .collect();
        let dt = 0.05;
        for _ in 0..10 {
            for p in ps.iter_mut() {
                let r2 = p.pos[0] * p.pos[0] + p.pos[1] * p.pos[1] + 0.1;
                p.vel[0] -= dt * p.pos[0] / r2;
                p.vel[1] -= dt * p.pos[1] / r2;
                p.pos[0] += dt * p.vel[0];
                p.pos[1] += dt * p.vel[1];
            }
            for (i, p) in ps.iter_mut().enumerate() {
                p.vel[i % 2] *= 0.9;
            }
        }
        ps.iter().map(|p| p.pos[0] + 2.0 * p.pos[1]).sum()
    }

    type Real = f64;

    #[derive(Clone, Debug, Tangent)]
    pub struct Scaled {
        a: f64,
        n: usize,
    }

    /// A float alias in a `let`'s type and a turbofish, beside a struct.
    #[differentiable(higher_order)]
    pub fn alias_and_struct(x: &[f64]) -> f64 {
        let s: Real = x[0] * 2.0;
        let v: Vec<Real> = x.iter().map(|e| e * s).collect();
        let p = Scaled { a: v[1], n: 3 };
        p.a * p.n as f64 + v.iter().sum::<Real>()
    }

    #[test]
    fn nudged_gradient() {
        let x = [0.4, -0.3];
        let g = line_fit_nudged::gradient(&x);
        crate::common::assert_gradient_matches(line_fit_nudged, &g, &x);
    }

    mod t {
        use crate::all_orders;
        all_orders!(line_fit, [0.4, 1.3]);
        all_orders!(model_fit, [0.4, 1.3, -0.2]);
        all_orders!(layer_of_choices, [0.7, -0.4, 1.3, 0.2, -0.9]);
        all_orders!(particles, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(alias_and_struct, [0.4, 1.3, -0.7]);
    }
}

/// ndarray's `Zip` over arrays the function builds: the generic form keeps it (any
/// element type), so the function has its Hessian.
mod zipped_arrays {
    use mochi::prelude::*;
    use ndarray::{Array1, Zip};

    #[differentiable]
    pub fn zip_products(x: &[f64]) -> f64 {
        let a = Array1::from(x.to_vec());
        let b = a.mapv(|v| v.sin());
        let mut c = Array1::zeros(a.len());
        Zip::from(&mut c)
            .and(&a)
            .and(&b)
            .for_each(|c, &a, &b| *c = a * b);
        c.sum() + c.mapv(|v| v * v).sum()
    }

    mod t {
        use crate::all_orders;
        all_orders!(zip_products, [0.4, 1.3, -0.7, 0.2]);
    }
}

/// Helpers taking and returning the user's structs, called from a function asking for
/// `higher_order`: a struct returned by value (`-> V3`, a method's `-> Self`), a
/// `Copy` struct used after it is passed by value, a sequence collected into a field,
/// an `Option<f64>` argument.
mod struct_results {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V3 {
        x: f64,
        y: f64,
        z: f64,
    }

    #[differentiable(higher_order)]
    fn dot(a: V3, b: V3) -> f64 {
        a.x * b.x + a.y * b.y + a.z * b.z
    }

    #[differentiable(higher_order)]
    fn cross(a: V3, b: V3) -> V3 {
        V3 {
            x: a.y * b.z - a.z * b.y,
            y: a.z * b.x - a.x * b.z,
            z: a.x * b.y - a.y * b.x,
        }
    }

    /// `a` and `c` used again after being passed by value; a field of a call's result.
    #[differentiable(higher_order)]
    pub fn triple_product(x: &[f64]) -> f64 {
        let a = V3 {
            x: x[0],
            y: x[1],
            z: x[2],
        };
        let b = V3 {
            x: x[3],
            y: x[4],
            z: x[5],
        };
        let c = cross(a, b);
        dot(c, a) + dot(c, c).sqrt() + cross(a, c).z
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct State {
        pos: Vec<f64>,
        t: f64,
    }

    /// A chain collected straight into a field.
    #[differentiable(higher_order)]
    fn step(s: &State, dt: f64) -> State {
        State {
            pos: s.pos.iter().map(|p| p - dt * p.sin()).collect(),
            t: s.t + dt,
        }
    }

    #[differentiable(higher_order)]
    pub fn simulate(x: &[f64]) -> f64 {
        let mut s = State {
            pos: x.to_vec(),
            t: 0.0,
        };
        for _ in 0..3 {
            s = step(&s, 0.1 * x[0]);
        }
        s.pos.iter().map(|p| p * p).sum::<f64>() + s.t * s.t
    }

    #[differentiable]
    fn scaled(a: f64, scale: Option<f64>) -> f64 {
        a * scale.unwrap_or(1.0)
    }

    #[differentiable]
    pub fn optional_scales(x: &[f64]) -> f64 {
        scaled(x[0], Some(x[1])) + scaled(x[2], None) * x[0]
    }

    /// `-> Self` and `o: &Self` of methods called from a free function.
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct P2 {
        x: f64,
        y: f64,
    }

    #[differentiable]
    impl P2 {
        #[differentiable]
        fn plus(&self, o: &Self) -> Self {
            Self {
                x: self.x + o.x,
                y: self.y + o.y,
            }
        }
        #[differentiable]
        fn dot(&self, o: &Self) -> f64 {
            self.x * o.x + self.y * o.y
        }
    }

    #[differentiable]
    pub fn self_typed_methods(x: &[f64]) -> f64 {
        let p = P2 { x: x[0], y: x[1] };
        let q = P2 { x: x[2], y: x[3] };
        let r = p.plus(&q);
        r.dot(&p) + p.plus(&q).plus(&p).y * r.dot(&r).sqrt()
    }

    /// Methods called on values the function did not bind to a struct literal: a call's
    /// result, a method's result (`p.scaled(2.0).plus(&q)`), with `-> Self`.
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Q2 {
        x: f64,
        y: f64,
    }

    #[differentiable(higher_order)]
    impl Q2 {
        #[differentiable]
        fn scaled(&self, k: f64) -> Q2 {
            Q2 {
                x: self.x * k,
                y: self.y * k,
            }
        }
        #[differentiable]
        fn plus(&self, o: &Self) -> Self {
            Self {
                x: self.x + o.x,
                y: self.y + o.y,
            }
        }
        #[differentiable]
        fn norm2(&self) -> f64 {
            self.x * self.x + self.y * self.y
        }
    }

    #[differentiable(higher_order)]
    fn make(a: f64, b: f64) -> Q2 {
        Q2 {
            x: a.sin(),
            y: b * a,
        }
    }

    #[differentiable(higher_order)]
    pub fn chained_methods(x: &[f64]) -> f64 {
        let p = make(x[0], x[1]);
        let q = Q2 { x: x[2], y: x[3] };
        let r = p.scaled(2.0).plus(&q);
        r.norm2() + p.plus(&q).x * q.y + make(x[3], x[0]).norm2()
    }

    /// The helpers are not asked for `higher_order`: the gradient is there, the Hessian
    /// is a build error naming them.
    #[differentiable]
    fn cross_plain(a: V3, b: V3) -> V3 {
        V3 {
            x: a.y * b.z - a.z * b.y,
            y: a.z * b.x - a.x * b.z,
            z: a.x * b.y - a.y * b.x,
        }
    }

    #[differentiable(higher_order)]
    pub fn through_plain_helper(x: &[f64]) -> f64 {
        let a = V3 {
            x: x[0],
            y: x[1],
            z: x[2],
        };
        let b = V3 {
            x: x[3],
            y: x[4],
            z: x[5],
        };
        let c = cross_plain(a, b);
        c.x * c.y + c.z
    }

    #[test]
    fn gradients_through_plain_helpers() {
        for x in [
            [0.4, 1.3, -0.7, 0.2, 0.9, -0.3],
            [1.1, -0.2, 0.5, 0.3, -1.4, 0.8],
        ] {
            let g = through_plain_helper::gradient(&x);
            crate::common::assert_gradient_matches(through_plain_helper, &g, &x);
            let g = self_typed_methods::gradient(&x[..4]);
            crate::common::assert_gradient_matches(self_typed_methods, &g, &x[..4]);
        }
    }

    mod t {
        use crate::all_orders;
        all_orders!(triple_product, [0.4, 1.3, -0.7, 0.2, 0.9, -0.3]);
        all_orders!(simulate, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(optional_scales, [0.4, 1.3, -0.7]);
        all_orders!(chained_methods, [0.4, 1.3, -0.7, 0.2]);
    }
}

/// `Array2::from_shape_fn` whose closure adds a branch's value (`a + if i == j { 1.0 }
/// else { 0.0 }`): the generic form keeps the operands' order readable.
mod shape_fn_branches {
    use mochi::prelude::*;
    use ndarray::{Array1, Array2, Axis};

    #[differentiable]
    fn gram_terms(v: &Array1<f64>) -> f64 {
        let n = v.len();
        // (A closure whose body is the sum itself, as rustfmt would not leave it.)
        #[rustfmt::skip]
        let m = Array2::from_shape_fn((n, n), |(i, j)| v[i] * v[j] + if i == j { 1.0 } else { 0.0 });
        m.diag().sum() + m.sum_axis(Axis(0))[0] * v[1]
    }

    #[differentiable]
    pub fn shifted_gram(x: &[f64]) -> f64 {
        let v = Array1::from(x.to_vec());
        gram_terms(&v)
    }

    mod t {
        use crate::all_orders;
        all_orders!(shifted_gram, [0.4, 1.3, -0.7, 0.2]);
    }
}

/// ndarray's `array!` with differentiable elements, one and two levels deep, by its
/// name and by its path (before: "a macro cannot be differentiated, and this one is
/// given a value of type `ArrayBase<…>`").
mod array_macro_literals {
    use mochi::prelude::*;
    use ndarray::{array, Array1};

    #[differentiable]
    pub fn rotated_pair(x: &[f64]) -> f64 {
        let (c, s) = (x[0].cos(), x[0].sin());
        let r = array![[c, -s], [s, c]];
        let p = ndarray::array![x[1], x[2] * x[1], 1.0];
        let q = r.dot(&array![x[1], x[2]]);
        q.dot(&q) * p.sum() + r[[1, 0]] * p[2]
    }

    #[differentiable]
    pub fn cross_energy(x: &[f64]) -> f64 {
        let a = Array1::from(x.to_vec());
        let w = array![
            a[1] * a[2] - a[2] * a[0],
            a[2] * a[0] - a[0] * a[1],
            a[0] * a[1] - a[1] * a[2]
        ];
        let m = array![
            [[a[0], 1.0], [a[1], a[2]]],
            [[2.0, a[0] * a[1]], [a[2], a[0]]]
        ];
        w.dot(&a) + w.mapv(|v| v * v).sum() + m.sum() * m[[1, 0, 1]]
    }

    mod t {
        use crate::all_orders;
        all_orders!(rotated_pair, [0.4, 1.3, -0.7]);
        all_orders!(cross_energy, [0.3, -0.9, 1.2]);
    }
}

/// Stacks used as worklists: `while let Some(v) = st.pop()` whose body pushes again,
/// `match st.pop() { Some(b) => .., None => .. }`, and a stack of `(index, weight)` pairs
/// popped by a tuple pattern (before: "`.pop(..)` of a differentiable buffer is
/// supported as a statement … not here", and "a `match` arm or `if let` pattern that
/// binds parts of a differentiable value").
mod worklists {
    use mochi::prelude::*;

    #[differentiable]
    pub fn pairwise_reduce(x: &[f64]) -> f64 {
        let mut stack = x.to_vec();
        while let Some(a) = stack.pop() {
            match stack.pop() {
                Some(b) => stack.push(0.5 * (a + b) + 0.1 * a * b),
                None => return a,
            }
        }
        0.0
    }

    #[differentiable]
    pub fn heap_walk(x: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut stack: Vec<(usize, f64)> = vec![(0, 1.0)];
        'walk: while let Some((i, w)) = stack.pop() {
            if w < 1e-3 {
                continue 'walk;
            }
            s += w * x[i].tanh();
            for c in [2 * i + 1, 2 * i + 2] {
                if c < x.len() {
                    stack.push((c, w * 0.5 * (1.0 + x[i] * x[i])));
                }
            }
        }
        s
    }

    mod t {
        use crate::all_orders;
        all_orders!(pairwise_reduce, [0.4, -1.1, 0.7, 1.3, 0.2]);
        all_orders!(heap_walk, [0.3, -0.6, 0.9, 1.2, -0.4, 0.5]);
    }
}

/// Counts made floats by `f64::from` and handed to a helper (before: no Hessian, "it
/// calls `log_gamma`, whose twin is not known"), and the inverse of a matrix from its
/// Cholesky factor (`mochi::linalg::inverse_from_cholesky`: before, "cannot find
/// `inverse_from_cholesky` in `linalg`").
mod counts_and_inverses {
    use mochi::prelude::*;
    use ndarray::Array2;

    const COUNTS: [u32; 3] = [0, 2, 5];

    /// ln Γ(z) for z > 0: the recurrence up to 7, then Stirling's series.
    #[differentiable]
    pub fn log_gamma(x: f64) -> f64 {
        let mut z = x;
        let mut shift = 0.0;
        while z < 7.0 {
            shift -= z.ln();
            z += 1.0;
        }
        let w = 1.0 / (z * z);
        shift + (z - 0.5) * z.ln() - z + 0.918_938_533_204_672_7 + (1.0 / 12.0 - w / 360.0) / z
    }

    #[differentiable]
    pub fn negative_binomial(x: &[f64]) -> f64 {
        let r = x[0].exp();
        let mut ll = 0.0;
        for i in 0..COUNTS.len() {
            let k = f64::from(COUNTS[i]);
            let mu = x[i + 1].exp();
            ll += log_gamma(k + r) - log_gamma(r)
                + r * (r / (r + mu)).ln()
                + k * (mu / (r + mu)).ln();
        }
        ll
    }

    #[differentiable]
    pub fn leave_one_out(x: &[f64]) -> f64 {
        let n = 3;
        let mut k = Array2::<f64>::zeros((n, n));
        for i in 0..n {
            for j in 0..n {
                k[[i, j]] = (-(x[i] - x[j]).powi(2) * x[3].exp()).exp();
            }
            k[[i, i]] += 0.5;
        }
        let l = mochi::linalg::cholesky(&k).unwrap();
        let inv = mochi::linalg::inverse_from_cholesky(&l);
        let mut s = 0.0;
        for i in 0..n {
            s += (x[i] * inv[[i, i]]).powi(2) + inv[[i, (i + 1) % n]];
        }
        s
    }

    mod t {
        use crate::all_orders;
        all_orders!(negative_binomial, [0.3, -0.4, 0.8, 1.1]);
        all_orders!(leave_one_out, [0.2, -0.7, 1.1, -0.3]);
    }
}

/// Methods of a struct reached on places and values the call site cannot type: a
/// `&mut self` method called as a statement on an element of a `mut` local's field
/// (`m.layers[k].shift(&d, lr);`: before, "the method `shift` of `Layer` is not
/// `#[differentiable]`", the fallback a shared borrow finds first), and a `&self` method
/// given a `&Vec<f64>` for its `&[f64]` on a layer built by builder methods (before, "no
/// rule for `forward` with arguments `(&Layer, &Vec<f64>)`"). Gradients (structs).
mod struct_places {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Default, Tangent)]
    pub struct Layer {
        w: Vec<f64>,
        b: Vec<f64>,
    }

    #[differentiable]
    impl Layer {
        fn with_weights(mut self, w: Vec<f64>) -> Self {
            self.w = w;
            self
        }
        fn with_bias(mut self, b: Vec<f64>) -> Self {
            self.b = b;
            self
        }
        fn forward(&self, x: &[f64]) -> Vec<f64> {
            let n = x.len();
            (0..self.b.len())
                .map(|i| (0..n).map(|j| self.w[i * n + j] * x[j]).sum::<f64>() + self.b[i])
                .map(f64::tanh)
                .collect()
        }
        fn shift(&mut self, d: &[f64], lr: f64) {
            for (b, v) in self.b.iter_mut().zip(d) {
                *b -= lr * v;
            }
        }
    }

    #[derive(Clone, Debug, Default, Tangent)]
    pub struct Net {
        layers: Vec<Layer>,
    }

    #[differentiable]
    pub fn stepped_loss(p: &[f64]) -> f64 {
        let first = Layer {
            w: p[0..4].to_vec(),
            b: p[4..6].to_vec(),
        };
        let second = Layer::default()
            .with_weights(p[6..8].to_vec())
            .with_bias(vec![p[8]]);
        let mut net = Net {
            layers: vec![first, second],
        };
        let h = net.layers[0].forward(&[0.7, -0.4]);
        let d: Vec<f64> = h.iter().map(|v| v * 0.5).collect();
        net.layers[0].shift(&d, 0.1);
        let k = net.layers.len() - 1;
        let h2 = net.layers[0].forward(&[0.7, -0.4]);
        let out = net.layers[k].forward(&h2);
        let built = Layer::default()
            .with_weights(p[6..8].to_vec())
            .with_bias(vec![0.2]);
        let again = built.forward(&h2);
        (out[0] - 0.3).powi(2) + again[0] * p[0]
    }

    #[test]
    fn gradients_through_struct_places() {
        let p = [0.3, -0.5, 0.8, 0.1, 0.2, -0.1, 0.6, -0.9, 0.05];
        let g = stepped_loss::gradient(&p);
        crate::common::assert_gradient_matches(stepped_loss, &g, &p);
    }

    /// Rows a `for` over `xs.iter().zip(ys)` binds, passed bare to an element's method
    /// (`net.layers[0].forward(x)`, `x: &Vec<f64>` for a `&[f64]`; before: "expected
    /// `&[f64]`, found `Vec<f64>`"), and an array literal given for a slice
    /// (`shift(&[r], lr)`; before: "expected `&mut Vec<f64>`, found `&mut [f64; 1]`").
    #[differentiable]
    pub fn batch_after_step(net: &Net, xs: &[Vec<f64>], ys: &[f64]) -> f64 {
        let mut m = net.clone();
        let r = m.layers[1].forward(&xs[0])[0] - ys[0];
        m.layers[1].shift(&[r], 0.5);
        m.layers[0].shift(&[r, -r], 0.25);
        let mut s = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let h = m.layers[0].forward(x);
            let o = m.layers[1].forward(&h);
            s += (o[0] - y).powi(2);
        }
        s
    }

    #[test]
    fn rows_and_array_literals_given_to_methods() {
        let p = [0.3, -0.5, 0.8, 0.1, 0.2, -0.1, 0.6, -0.9, 0.05];
        let net = |p: &[f64]| Net {
            layers: vec![
                Layer {
                    w: p[0..4].to_vec(),
                    b: p[4..6].to_vec(),
                },
                Layer {
                    w: p[6..8].to_vec(),
                    b: vec![p[8]],
                },
            ],
        };
        let xs = vec![vec![0.7, -0.4], vec![0.2, 0.9], vec![-0.5, 0.3]];
        let ys = [0.3, -0.2, 0.6];
        let (dnet, dxs, dys) = batch_after_step::gradient(&net(&p), &xs, &ys);
        let flat: Vec<f64> = dnet
            .layers
            .iter()
            .flat_map(|l| l.w.iter().chain(&l.b).copied().collect::<Vec<_>>())
            .collect();
        crate::common::assert_gradient_matches(|q| batch_after_step(&net(q), &xs, &ys), &flat, &p);
        let rows: Vec<f64> = dxs.concat();
        let flat_xs: Vec<f64> = xs.concat();
        crate::common::assert_gradient_matches(
            |q| {
                let xs: Vec<Vec<f64>> = q.chunks(2).map(|c| c.to_vec()).collect();
                batch_after_step(&net(&p), &xs, &ys)
            },
            &rows,
            &flat_xs,
        );
        crate::common::assert_gradient_matches(|q| batch_after_step(&net(&p), &xs, q), &dys, &ys);
    }
}

/// An element's `Option` through `filter`, `and_then` a helper's `Option` and `map`,
/// then `unwrap_or` (before: "no rule for `map` with arguments `(&Option<f64>, &())`"
/// and the `Option` reaching the arithmetic).
mod option_chains {
    use mochi::prelude::*;

    #[differentiable]
    pub fn checked_root(v: f64) -> Option<f64> {
        if v < 0.0 {
            None
        } else {
            Some(v.sqrt())
        }
    }

    // (`unwrap_or_else(|| d)` is one of the forms tested.)
    #[allow(clippy::unnecessary_lazy_evaluations)]
    #[differentiable]
    pub fn option_terms(x: &[f64]) -> f64 {
        let a = x.first().copied().map(|v| v * v).unwrap_or(0.0);
        let b = x
            .last()
            .copied()
            .filter(|v| *v > 0.0)
            .map(|v| v.ln())
            .unwrap_or(-1.0);
        let c = x.get(2).copied().and_then(checked_root).unwrap_or(0.5);
        let d = x
            .get(1)
            .copied()
            .and_then(|v| checked_root(v * v + 1.0))
            .unwrap_or_else(|| 2.0);
        let e = x.get(9).copied().filter(|v| *v > 0.0).unwrap_or(0.25);
        a + b * c + d * e
    }

    #[differentiable]
    pub fn logs(x: &[f64]) -> Result<Vec<f64>, String> {
        if x.iter().any(|v| *v <= 0.0) {
            return Err("a non-positive entry".to_string());
        }
        Ok(x.iter().map(|v| v.ln()).collect())
    }

    /// The value an arm binds from a helper's `Result` walked by a chain with positions
    /// (before: the arm's `l` carried no derivative, "no rule for `iter` with arguments
    /// `(&Vec<f64>,)`").
    #[differentiable]
    pub fn weighted_logs(x: &[f64]) -> f64 {
        let a = match logs(x) {
            Ok(l) => l
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64 + 1.0) * v)
                .sum::<f64>(),
            Err(_) => 0.0,
        };
        let b = if let Ok(l) = logs(&x[1..]) {
            l.iter()
                .rev()
                .enumerate()
                .map(|(i, v)| v / (i as f64 + 2.0))
                .sum::<f64>()
        } else {
            -1.0
        };
        a * b + a
    }

    #[test]
    fn weighted_logs_where_a_helper_fails() {
        let x = [0.4, -1.3, 0.7];
        assert_eq!(weighted_logs(&x), 0.0);
        let g = weighted_logs::gradient(&x);
        crate::common::assert_gradient_matches(weighted_logs, &g, &x);
    }

    mod t {
        use crate::all_orders;
        all_orders!(option_terms, [0.4, -1.3, 0.7, 1.5]);
        all_orders!(weighted_logs, [0.4, 1.3, 0.7, 1.5]);
    }
}

/// A `match` over a slice whose arm's value is an element read through its reference
/// (`[a] => *a`), beside arms of other values.
mod slice_arm_values {
    use mochi::prelude::*;

    #[differentiable]
    pub fn head_terms(x: &[f64]) -> f64 {
        match x {
            [a, b, rest @ ..] => a * b + rest.iter().sum::<f64>(),
            [a] => *a,
            [] => 0.0,
        }
    }

    #[differentiable]
    pub fn first_or_product(x: &[f64]) -> f64 {
        let v = &x[1..];
        let y = if x[0] > 0.0 { &v[0] } else { &v[1] };
        let picked = if v.len() > 5 { 1.0 } else { *y };
        picked * x[2]
    }

    #[test]
    fn single_element() {
        let g = head_terms::gradient(&[0.7]);
        assert_eq!(g, vec![1.0]);
    }

    mod t {
        use crate::all_orders;
        all_orders!(head_terms, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(first_or_product, [0.4, 1.3, -0.7, 0.2]);
    }
}

/// A local `Vec` edited in place: `insert` and `remove` at an index, `pop()` as a
/// statement and `let last = v.pop().unwrap();`, between `push`es and reads.
mod buffers_edited {
    use mochi::prelude::*;

    #[differentiable]
    pub fn edited(x: &[f64]) -> f64 {
        let mut v = vec![0.0; x.len()];
        v.copy_from_slice(x);
        v.swap(0, 1);
        v.extend_from_slice(&x[..2]);
        v.insert(0, x[2]);
        let r = v.remove(1);
        v.insert(2, r * 0.5);
        v.pop();
        let last = v.pop().unwrap();
        v.remove(0);
        v.push(last.sin());
        v.iter()
            .enumerate()
            .map(|(i, a)| (i as f64 + 1.0) * a * a)
            .sum::<f64>()
            + r
    }

    /// Each element inserted at the front: the buffer reversed.
    #[differentiable]
    pub fn front_inserts(x: &[f64]) -> f64 {
        let mut v = Vec::new();
        for i in 0..x.len() {
            v.insert(0, x[i] * x[0]);
        }
        v[0] * v[1] + v[2]
    }

    #[differentiable]
    pub fn last_popped(x: &[f64]) -> f64 {
        let mut s = x.to_vec();
        let last = s.pop().unwrap();
        last * s[0]
    }

    #[test]
    fn popped_gradient() {
        assert_eq!(
            last_popped::gradient(&[0.3, 1.2, -0.5]),
            vec![-0.5, 0.0, 0.3]
        );
        assert_eq!(empty_pop::gradient(&[0.3, 1.2]), vec![2.0, 0.0]);
    }

    /// `if let Some(l) = v.pop()`, taken and not.
    #[differentiable]
    pub fn popped_if_any(x: &[f64]) -> f64 {
        let mut s = x.to_vec();
        let top = if let Some(l) = s.pop() {
            l * s[0] + s.iter().sum::<f64>()
        } else {
            0.0
        };
        let mut e: Vec<f64> = Vec::new();
        let r = if let Some(l) = e.pop() { l } else { x[1] * 3.0 };
        top * r
    }

    /// `v.pop();` of an empty buffer does nothing, as in Rust.
    #[differentiable]
    pub fn empty_pop(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = Vec::new();
        v.pop();
        v.push(x[0]);
        v[0] * 2.0
    }

    mod t {
        use crate::all_orders;
        all_orders!(edited, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(front_inserts, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(last_popped, [0.4, 1.3, -0.7]);
        all_orders!(popped_if_any, [0.4, 1.3, -0.7, 0.2]);
    }
}

/// Rows of a `Vec<Vec<f64>>` read as sequences in a chain's closure (`a.iter().map(|row|
/// row.iter().zip(x)…)`, `dot(row, x)`), and arrays built by `from_iter`.
mod rows_in_chains {
    use mochi::prelude::*;
    use ndarray::Array1;

    #[differentiable]
    pub fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(p, q)| p * q).sum()
    }

    // (A `Vec` of rows, as the ported code has it.)
    #[allow(clippy::useless_vec)]
    #[differentiable]
    pub fn matvec_norm(x: &[f64]) -> f64 {
        let a = vec![vec![1.0, 2.0, 0.5], vec![0.3, -1.0, 2.0]];
        let y: Vec<f64> = a
            .iter()
            .map(|row| row.iter().zip(x).map(|(r, v)| r * v).sum::<f64>())
            .collect();
        y.iter().map(|v| v * v).sum::<f64>()
    }

    /// Rows built from the input, each read by index, by `len` and through a helper.
    #[differentiable]
    pub fn rows_of_input(x: &[f64]) -> f64 {
        let m: Vec<Vec<f64>> = x.chunks(2).map(|c| c.to_vec()).collect();
        let by_helper: Vec<f64> = m.iter().map(|row| dot(row, &x[..2])).collect();
        let by_index: f64 = m.iter().map(|row| row[0] * row[row.len() - 1].sin()).sum();
        by_helper.iter().map(|v| v.tanh()).sum::<f64>() + by_index
    }

    #[differentiable]
    pub fn from_iter_dot(x: &[f64]) -> f64 {
        let a = Array1::from_vec(x.to_vec());
        let b = Array1::from_iter(x.iter().map(|v| v * v + 1.0));
        a.dot(&b).ln()
    }

    mod t {
        use crate::all_orders;
        all_orders!(matvec_norm, [0.4, 1.3, -0.7]);
        all_orders!(rows_of_input, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(from_iter_dot, [0.4, 1.3, -0.7, 0.2]);
    }
}

/// `#[differentiable]` on an `impl` block that marks no method derives them all (but
/// those returning integers, `bool`s or references); the user's operators (`Add`, `Sub`,
/// `Mul<f64>`, `Neg`) and a method taking the struct by its name (`o: &V2`) have generic
/// forms, so the functions calling them have Hessians.
// (`c = c + q` stays as written beside the `AddAssign` impl: the generic form has the
// struct's `+`, not its `+=`, and the functions that write it keep their Hessians.)
#[allow(clippy::assign_op_pattern)]
mod user_operators {
    use mochi::prelude::*;
    use std::ops::{Add, Mul, Neg, Sub};

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V2 {
        x: f64,
        y: f64,
    }

    #[differentiable(higher_order)]
    impl Add for V2 {
        type Output = V2;
        fn add(self, o: V2) -> V2 {
            V2 {
                x: self.x + o.x,
                y: self.y + o.y,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Sub for V2 {
        type Output = Self;
        fn sub(self, o: Self) -> Self {
            V2 {
                x: self.x - o.x,
                y: self.y - o.y,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Mul<f64> for V2 {
        type Output = V2;
        fn mul(self, k: f64) -> V2 {
            V2 {
                x: self.x * k,
                y: self.y * k,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Neg for V2 {
        type Output = V2;
        fn neg(self) -> V2 {
            V2 {
                x: -self.x,
                y: -self.y,
            }
        }
    }

    #[differentiable(higher_order)]
    impl V2 {
        fn norm(&self) -> f64 {
            (self.x * self.x + self.y * self.y).sqrt()
        }
        fn dot(&self, o: &V2) -> f64 {
            self.x * o.x + self.y * o.y
        }
        /// Left as written: its result carries no derivative.
        fn quadrant(&self) -> usize {
            usize::from(self.x < 0.0) + 2 * usize::from(self.y < 0.0)
        }
        fn new(x: f64, y: f64) -> Self {
            V2 { x, y }
        }
        /// Without arguments: a constant wherever it is called.
        fn zero() -> Self {
            V2 { x: 0.0, y: 0.0 }
        }
        fn plus(&self, o: &V2) -> V2 {
            V2::new(self.x + o.x, self.y + o.y)
        }
        /// A quarter turn: a struct by a name the generic form cannot type.
        fn turned(&self) -> V2 {
            V2::new(-self.y, self.x)
        }
    }

    /// Sequences of structs walked by windows, loops, chains and folds: the elements
    /// are structs in the generic form too.
    #[differentiable(higher_order)]
    pub fn polyline(p: &[f64]) -> f64 {
        let pts: Vec<V2> = p.chunks(2).map(|c| V2::new(c[0], c[1])).collect();
        let mut len = 0.0;
        for w in pts.windows(2) {
            len += (w[1] - w[0]).norm();
        }
        len
    }

    #[differentiable(higher_order)]
    pub fn centroid_spread(p: &[f64]) -> f64 {
        let pts: Vec<V2> = (0..p.len() / 2)
            .map(|i| V2::new(p[2 * i], p[2 * i + 1]))
            .collect();
        let mut c = V2::zero();
        for q in &pts {
            c = c + *q;
        }
        let c = c * (1.0 / pts.len() as f64);
        pts.iter().map(|q| (*q - c).norm()).sum::<f64>() + (-c).x
    }

    #[differentiable(higher_order)]
    pub fn folded(p: &[f64]) -> f64 {
        let pts: Vec<V2> = (0..p.len() / 2)
            .map(|i| V2::new(p[2 * i], p[2 * i + 1]))
            .collect();
        let s = pts.iter().fold(V2::zero(), |acc, q| acc.plus(q));
        s.norm()
    }

    #[differentiable(higher_order)]
    pub fn midpoint_terms(x: &[f64]) -> f64 {
        let a = V2 { x: x[0], y: x[1] };
        let b = V2 { x: x[2], y: x[3] };
        let c = (a + b) * 0.5 - a;
        c.norm() + a.dot(&b) + (-c).dot(&a)
    }

    /// A chain of springs: `Vec<V2>` collected from the input, differences of elements.
    #[differentiable(higher_order)]
    pub fn spring_energy(x: &[f64]) -> f64 {
        let pts: Vec<V2> = x.chunks(2).map(|c| V2 { x: c[0], y: c[1] }).collect();
        let mut e = 0.0;
        for i in 1..pts.len() {
            let d = pts[i] - pts[i - 1];
            e += (d.norm() - 1.0).powi(2);
        }
        e
    }

    /// Without `higher_order`: the gradient alone, through the same operators.
    #[differentiable]
    pub fn plain_caller(x: &[f64]) -> f64 {
        let a = V2 { x: x[0], y: x[1] };
        let b = a * x[2] + a;
        b.norm() * b.dot(&a)
    }

    /// A tuple struct built by its constructor, its fields read by position, a method
    /// called on the constructor's value.
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Pair(f64, f64);

    #[differentiable(higher_order)]
    impl Pair {
        fn area(&self) -> f64 {
            self.0 * self.1
        }
    }

    #[differentiable(higher_order)]
    pub fn pair_terms(x: &[f64]) -> f64 {
        let p = Pair(x[0], x[1].exp());
        p.0 * p.1.sin() + Pair(x[1], x[0] * x[0]).area()
    }

    /// Structs taken from a tuple (`let (a, b, c) = (v[0], v[1], v[2]);`), pushed onto a
    /// `Vec` made empty (`Vec::with_capacity`), and a struct bound again to a struct
    /// (`let c = c * 0.5;`): their methods in the generic form are the struct's (before:
    /// no Hessian, "it calls the method `dot`").
    #[differentiable(higher_order)]
    pub fn triangle_terms(p: &[f64]) -> f64 {
        let v: Vec<V2> = p.chunks(2).map(|c| V2::new(c[0], c[1])).collect();
        let (a, b, c) = (v[0], v[1], v[2]);
        let mut pushed = Vec::with_capacity(v.len());
        for q in &v {
            pushed.push(*q * 2.0 - a);
        }
        let spread: f64 = pushed.iter().map(|q| q.dot(q)).sum();
        let mut m = V2::new(0.0, 0.0);
        for q in &v {
            m = m + *q;
        }
        let m = m * (1.0 / v.len() as f64);
        (b - a).dot(&(c - a)) + spread + m.norm()
    }

    #[differentiable(higher_order)]
    impl std::ops::AddAssign for V2 {
        fn add_assign(&mut self, o: V2) {
            self.x += o.x;
            self.y += o.y;
        }
    }

    /// A compound assignment of the struct in a function asking for `higher_order`:
    /// the generic form reads `s += e` as `s = s + e`, as the derivation does (before
    /// 2026-12-05 its `hessian` said there was no generic form, and before that the
    /// function did not compile: "binary assignment operation `+=` cannot be applied to
    /// type `__MochiTwinV2<__MochiT>`"). So do elements of a typed `Vec` of structs
    /// (`vel[i] += acc * dt`, `-k * pos[i]`), a sequence cut from a sub-slice
    /// (`p[..h].chunks(2)`), and the first of a zipped pair (`|(q, &m)| m * *q`).
    #[differentiable(higher_order)]
    pub fn accumulated(x: &[f64]) -> f64 {
        let mut s = V2::new(0.0, 0.0);
        for c in x.chunks(2) {
            s += V2::new(c[0] * c[1], c[1].sin());
        }
        s.norm() + s.x
    }

    #[differentiable(higher_order)]
    pub fn damped(p: &[f64]) -> f64 {
        let (k, half) = (p[0], (p.len() - 1) / 2);
        let mut pos: Vec<V2> = p[1..1 + half]
            .chunks(2)
            .map(|c| V2::new(c[0], c[1]))
            .collect();
        let mut vel: Vec<V2> = p[1 + half..]
            .chunks(2)
            .map(|c| V2::new(c[0], c[1]))
            .collect();
        let masses = [1.0, 2.0];
        let dt = 0.1;
        for _ in 0..3 {
            for i in 0..pos.len() {
                let acc = -k * pos[i];
                vel[i] += acc * dt;
                pos[i] += vel[i] * dt;
            }
        }
        let m: V2 = pos.iter().zip(masses.iter()).map(|(q, &m)| m * *q).sum();
        m.norm() + vel.iter().map(|v| v.dot(v)).sum::<f64>()
    }

    /// A float on the left of the struct (`s * v`): derived as a hidden method of `V2`
    /// (before: "an `impl` for `f64` cannot be marked").
    #[differentiable(higher_order)]
    impl Mul<V2> for f64 {
        type Output = V2;
        fn mul(self, v: V2) -> V2 {
            V2 {
                x: self * v.x,
                y: self * v.y,
            }
        }
    }

    /// A float on the left in a leapfrog step: a scalar argument (`dt * v`), a literal
    /// on a sum (`0.5 * (a + b)`), a product of floats (`dt * dt * a`), and the
    /// operator called on a local bound to such a product.
    #[differentiable(higher_order)]
    pub fn leapfrog(x: &[f64]) -> f64 {
        let dt = x[4];
        let mut p = V2::new(x[0], x[1]);
        let mut v = V2 { x: x[2], y: x[3] };
        for _ in 0..3 {
            let a = -p * p.norm();
            let half = v + 0.5 * dt * a;
            p = p + dt * half;
            let a2 = -p * p.norm();
            v = half + (0.5 * dt) * a2;
        }
        let mid = 0.5 * (p + v);
        mid.dot(&p) + (2.0 * mid).norm()
    }

    /// `Sum` of the struct: `.sum::<V2>()` and `let c: V2 = ….sum();` are read as the
    /// fold of `+` from the empty sum that the marked `impl` checks its body is (before:
    /// "derives functions generic over a float type, not over the types implementing a
    /// trait (`I: Iterator`)").
    #[differentiable(higher_order)]
    impl std::iter::Sum for V2 {
        fn sum<I: Iterator<Item = V2>>(iter: I) -> V2 {
            iter.fold(V2::zero(), |a, b| a + b)
        }
    }

    /// A centroid by `Sum`, a weighted sum by a typed `let`, the float on the left of
    /// compound operands (`(1.0 / c.norm()) * c`, `(c.dot(&w) * k) * w`); the closure's
    /// `c` is another binding than the centroid's.
    #[differentiable(higher_order)]
    pub fn summed_points(p: &[f64]) -> f64 {
        let pts: Vec<V2> = p.chunks(2).map(|c| V2::new(c[0], c[1])).collect();
        let n = pts.len() as f64;
        let c = pts.iter().copied().sum::<V2>() * (1.0 / n);
        let w: V2 = pts.iter().map(|q| *q * q.x).sum();
        let u = (1.0 / c.norm()) * c;
        let k = 1.0 - c.x;
        let r = (c.dot(&w) * k) * w + u;
        r.dot(&u) + w.y
    }

    /// A helper taking and returning the struct by value, its result scaled by a float
    /// inside a sum with a struct (`v + 0.5 * dt * a`: the sum says `a` is a struct), and
    /// a struct bound in a loop over windows (`let d = w[1] - w[0]; d.norm()`).
    #[differentiable(higher_order)]
    pub fn pull(q: V2, k: f64) -> V2 {
        -(k / (q.dot(&q) + 0.1).sqrt()) * q
    }

    #[differentiable(higher_order)]
    pub fn orbit_path(x: &[f64]) -> f64 {
        let (k, dt) = (x[4], 0.1);
        let mut p = V2::new(x[0], x[1]);
        let mut v = V2::new(x[2], x[3]);
        let mut path = vec![p];
        let mut a = pull(p, k);
        for _ in 0..4 {
            v = v + 0.5 * dt * a;
            p = p + dt * v;
            a = pull(p, k);
            v = v + 0.5 * dt * a;
            path.push(p);
        }
        let mut len = 0.0;
        for w in path.windows(2) {
            let d = w[1] - w[0];
            len += d.norm();
        }
        len + v.dot(&v)
    }

    /// A float times a method's result that the syntax cannot type (`0.5 * a.turned()`):
    /// the generic form's body is its rule's value, whose operator rule for a float and
    /// the mirror runs the hidden method's.
    #[differentiable(higher_order)]
    pub fn turned_terms(x: &[f64]) -> f64 {
        let a = V2::new(x[0], x[1]);
        let b = 0.5 * a.turned() + a;
        let c = x[2] * b.turned();
        c.dot(&a) + b.norm() * x[2]
    }

    /// A float on the left where neither operand carries a derivative (`m * g` of
    /// constants from a tuple `let` and a constructor), which the rule's forward sweep
    /// writes as it is.
    #[differentiable(higher_order)]
    pub fn constant_scaled(x: &[f64]) -> f64 {
        let (m, k) = (0.5, 2.0);
        let g = V2::new(0.0, -9.8);
        let p = V2::new(x[0], x[1]);
        let w = m * g;
        p.dot(&w) + k * (x[0] * p).norm()
    }

    /// Structs built from integers (`V2::new(i as f64, ..)`, constants lifted in the
    /// generic form) and `let`s of structs inside a closure over windows (before: "it
    /// calls `V2::new`, whose twin is not known", "it calls the method `norm`").
    #[differentiable(higher_order)]
    pub fn grid_turns(p: &[f64]) -> f64 {
        let mut pts: Vec<V2> = Vec::new();
        for i in 0..3 {
            pts.push(V2::new(i as f64, -(i as f64) * 0.5));
        }
        for (k, q) in p.chunks(2).enumerate() {
            pts[k] = pts[k] + V2::new(q[0], q[1]);
        }
        pts.windows(3)
            .map(|w| {
                let a = w[1] - w[0];
                let b = w[2] - w[1];
                a.dot(&b) * a.norm()
            })
            .sum::<f64>()
    }

    /// The same operator without `higher_order`, its value checked against its primal.
    #[differentiable]
    pub fn scaled_gap(a: V2, b: V2, s: f64) -> f64 {
        let d = s * (a - b) + b;
        d.dot(&d) * s
    }

    #[test]
    fn float_on_the_left_of_a_struct() {
        let (a, b) = (V2::new(0.4, -1.2), V2::new(0.9, 0.3));
        let s = 0.7;
        let (y, (da, db, ds)) = scaled_gap::value_and_gradient(a, b, s);
        assert!((y - scaled_gap(a, b, s)).abs() < 1e-14);
        let f = |z: &[f64]| scaled_gap(V2::new(z[0], z[1]), V2::new(z[2], z[3]), z[4]);
        let g = [da.x, da.y, db.x, db.y, ds];
        crate::common::assert_gradient_matches(f, &g, &[a.x, a.y, b.x, b.y, s]);
    }

    #[test]
    fn compound_assignment_of_a_struct() {
        let x = [0.4, 1.3, -0.7, 0.2, 1.5, 0.9];
        let g = accumulated::gradient(&x);
        crate::common::assert_gradient_matches(accumulated, &g, &x);
    }

    #[test]
    fn integer_method_kept() {
        assert_eq!(V2 { x: -1.0, y: 2.0 }.quadrant(), 1);
        let x = [0.4, 1.3, -0.7];
        let g = plain_caller::gradient(&x);
        crate::common::assert_gradient_matches(plain_caller, &g, &x);
    }

    mod t {
        use crate::all_orders;
        all_orders!(midpoint_terms, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(spring_energy, [0.4, 1.3, -0.7, 0.2, 1.5, 0.9]);
        all_orders!(pair_terms, [0.4, -0.7]);
        all_orders!(polyline, [0.3, 1.2, -0.5, 0.7, 1.1, -0.4]);
        all_orders!(centroid_spread, [0.3, 1.2, -0.5, 0.7, 1.1, -0.4]);
        all_orders!(folded, [0.3, 1.2, -0.5, 0.7, 1.1, -0.4]);
        all_orders!(triangle_terms, [0.3, 1.2, -0.5, 0.7, 1.1, -0.4]);
        all_orders!(leapfrog, [0.3, 1.2, -0.5, 0.7, 0.1]);
        all_orders!(summed_points, [0.3, 1.2, -0.5, 0.7, 1.1, -0.4]);
        all_orders!(orbit_path, [0.9, 0.2, -0.1, 0.8, 1.3]);
        all_orders!(accumulated, [0.4, 1.3, -0.7, 0.2, 1.5, 0.9]);
        all_orders!(damped, [1.3, 0.4, -0.2, 0.9, 0.6, 0.1, 0.3, -0.5, 0.2]);
        all_orders!(turned_terms, [0.4, -1.3, 0.7]);
        all_orders!(constant_scaled, [0.4, -1.3]);
        all_orders!(grid_turns, [0.4, -1.3, 0.2, 0.9, -0.5, 0.3]);
    }
}

/// A complex type with two products (`Mul` of two values and `Mul<f64>`), a float on
/// the left, a `Sum`, and methods by names `f64` has (`exp`, `conj`): before
/// 2026-12-05 the two `Mul` impls gave "duplicate definitions with name `mul_rrule`".
mod complex_numbers {
    use mochi::prelude::*;
    use std::ops::{Add, Mul, Sub};

    #[derive(Clone, Copy, Debug, Default, Tangent)]
    pub struct Cx {
        re: f64,
        im: f64,
    }

    #[differentiable(higher_order)]
    impl Add for Cx {
        type Output = Cx;
        fn add(self, o: Cx) -> Cx {
            Cx {
                re: self.re + o.re,
                im: self.im + o.im,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Sub for Cx {
        type Output = Cx;
        fn sub(self, o: Cx) -> Cx {
            Cx {
                re: self.re - o.re,
                im: self.im - o.im,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Mul for Cx {
        type Output = Cx;
        fn mul(self, o: Cx) -> Cx {
            Cx {
                re: self.re * o.re - self.im * o.im,
                im: self.re * o.im + self.im * o.re,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Mul<f64> for Cx {
        type Output = Cx;
        fn mul(self, k: f64) -> Cx {
            Cx {
                re: self.re * k,
                im: self.im * k,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Mul<Cx> for f64 {
        type Output = Cx;
        fn mul(self, z: Cx) -> Cx {
            z * self
        }
    }

    #[differentiable(higher_order)]
    impl std::iter::Sum for Cx {
        fn sum<I: Iterator<Item = Cx>>(iter: I) -> Cx {
            let mut s = Cx::default();
            for z in iter {
                s = s + z;
            }
            s
        }
    }

    #[differentiable(higher_order)]
    impl Cx {
        fn new(re: f64, im: f64) -> Self {
            Cx { re, im }
        }
        fn norm2(&self) -> f64 {
            self.re * self.re + self.im * self.im
        }
        fn exp(&self) -> Cx {
            let r = self.re.exp();
            Cx::new(r * self.im.cos(), r * self.im.sin())
        }
        fn conj(&self) -> Cx {
            Cx::new(self.re, -self.im)
        }
    }

    /// Points rotated by `e^{iθ}` (a product of two values), summed, and Horner's rule
    /// over the coefficients with a float on the left.
    #[differentiable(higher_order)]
    pub fn rotated_sum(p: &[f64]) -> f64 {
        let rot = Cx::new(0.0, p[0]).exp();
        let pts: Vec<Cx> = p[1..].chunks(2).map(|c| Cx::new(c[0], c[1])).collect();
        let s: Cx = pts.iter().map(|z| rot * *z).sum();
        let z = Cx::new(p[1], p[2]);
        let mut h = Cx::new(0.0, 0.0);
        for k in 0..3 {
            h = h * z + (0.5 * (k as f64 + 1.0)) * z.conj();
        }
        (s - Cx::new(0.4, 1.1)).norm2() + 0.1 * h.norm2()
    }

    mod t {
        use crate::all_orders;
        all_orders!(rotated_sum, [0.7, 0.3, -0.8, 1.1, 0.4]);
    }
}

/// Structs of the user's named like a library's types (`Complex`, `Vector3`): once their
/// `#[derive(Tangent)]` has been read, `Complex::new(..)` and `Vector3::new(..)` are the
/// user's constructors, with generic forms. Methods taking `self` by value (`fn
/// conj(self)`, as a `Copy` type's are written), one named like a float's (`exp`) in a
/// chain (`z.exp().conj()`, `(a * b).exp().norm_sqr()`).
mod library_named_types {
    use mochi::prelude::*;
    use std::ops::{Add, Mul, Sub};

    #[derive(Clone, Copy, Debug, Default, Tangent)]
    pub struct Complex {
        re: f64,
        im: f64,
    }

    #[derive(Clone, Copy, Debug, Default, Tangent)]
    pub struct Vector3 {
        x: f64,
        y: f64,
        z: f64,
    }

    #[differentiable(higher_order)]
    impl Complex {
        fn new(re: f64, im: f64) -> Complex {
            Complex { re, im }
        }
        fn norm_sqr(self) -> f64 {
            self.re * self.re + self.im * self.im
        }
        fn exp(self) -> Complex {
            let r = self.re.exp();
            Complex::new(r * self.im.cos(), r * self.im.sin())
        }
        fn conj(self) -> Complex {
            Complex::new(self.re, -self.im)
        }
    }

    #[differentiable(higher_order)]
    impl Add for Complex {
        type Output = Complex;
        fn add(self, o: Complex) -> Complex {
            Complex::new(self.re + o.re, self.im + o.im)
        }
    }

    #[differentiable(higher_order)]
    impl Mul for Complex {
        type Output = Complex;
        fn mul(self, o: Complex) -> Complex {
            Complex::new(
                self.re * o.re - self.im * o.im,
                self.re * o.im + self.im * o.re,
            )
        }
    }

    #[differentiable(higher_order)]
    impl Vector3 {
        fn new(x: f64, y: f64, z: f64) -> Vector3 {
            Vector3 { x, y, z }
        }
        fn dot(self, o: Vector3) -> f64 {
            self.x * o.x + self.y * o.y + self.z * o.z
        }
        fn cross(self, o: Vector3) -> Vector3 {
            Vector3::new(
                self.y * o.z - self.z * o.y,
                self.z * o.x - self.x * o.z,
                self.x * o.y - self.y * o.x,
            )
        }
        fn norm(&self) -> f64 {
            (self.x * self.x + self.y * self.y + self.z * self.z).sqrt()
        }
    }

    #[differentiable(higher_order)]
    impl Sub for Vector3 {
        type Output = Vector3;
        fn sub(self, o: Vector3) -> Vector3 {
            Vector3::new(self.x - o.x, self.y - o.y, self.z - o.z)
        }
    }

    /// Three steps of `z ↦ z² + c`.
    #[differentiable(higher_order)]
    pub fn mandelbrot_steps(x: &[f64]) -> f64 {
        let c = Complex::new(x[0], x[1]);
        let mut z = Complex::new(0.0, 0.0);
        for _ in 0..3 {
            z = z * z + c;
        }
        z.norm_sqr()
    }

    /// A float's method name on the user's type, then one a float does not have.
    #[differentiable(higher_order)]
    pub fn exp_conj(x: &[f64]) -> f64 {
        let a = Complex::new(x[0], x[1]);
        let b = Complex::new(x[1], 0.5);
        let w = a.exp().conj();
        let v = (a * b).exp().conj();
        let s = (a + b).exp().norm_sqr();
        (w * v).norm_sqr() + s
    }

    /// A triangle's area and its normal's tilt, by value methods of `Vector3`.
    #[differentiable(higher_order)]
    pub fn triangle(x: &[f64]) -> f64 {
        let a = Vector3::new(x[0], x[1], x[2]);
        let b = Vector3::new(x[3], x[4], x[5]);
        let c = Vector3::new(x[6], x[7], x[8]);
        let n = (b - a).cross(c - a);
        0.5 * n.norm() + n.dot(a) * 0.1
    }

    mod t {
        use crate::all_orders;
        all_orders!(mandelbrot_steps, [0.3, -0.2]);
        all_orders!(exp_conj, [0.3, -0.2]);
        all_orders!(triangle, [0.1, 0.2, 0.3, 1.2, -0.1, 0.4, 0.3, 0.9, -0.5]);
    }
}

/// Programs over a vector type of the user's as they are written: a float times an
/// element of a window or of a sequence of structs (`2.0 * w[1]`, `(1.0 - t) * pts[i]`,
/// `2.0 * prev[i]` of a copy `prev = pts.clone()`), a closure whose parameter is typed
/// as the struct (`|p: V2| ..`), both of a zipped pair of struct sequences, a chain held
/// in a name and walked twice (`edges.clone()`), a builder's chain (`Model::default()
/// .with_bias(b)`), a fold from a struct over a range, and methods of an enum.
mod vector_programs {
    use mochi::prelude::*;
    use std::ops::{Add, Mul, Sub};

    #[derive(Clone, Copy, Debug, Default, Tangent)]
    pub struct P2 {
        x: f64,
        y: f64,
    }

    #[differentiable(higher_order)]
    impl Add for P2 {
        type Output = P2;
        fn add(self, o: P2) -> P2 {
            P2::new(self.x + o.x, self.y + o.y)
        }
    }

    #[differentiable(higher_order)]
    impl Sub for P2 {
        type Output = P2;
        fn sub(self, o: P2) -> P2 {
            P2::new(self.x - o.x, self.y - o.y)
        }
    }

    #[differentiable(higher_order)]
    impl Mul<P2> for f64 {
        type Output = P2;
        fn mul(self, p: P2) -> P2 {
            P2::new(self * p.x, self * p.y)
        }
    }

    #[differentiable(higher_order)]
    impl P2 {
        fn new(x: f64, y: f64) -> P2 {
            P2 { x, y }
        }
        fn norm2(&self) -> f64 {
            self.x * self.x + self.y * self.y
        }
        fn norm(&self) -> f64 {
            self.norm2().sqrt()
        }
        fn cross(&self, o: &P2) -> f64 {
            self.x * o.y - self.y * o.x
        }
    }

    /// Length plus bending, by windows of two and of three.
    #[differentiable(higher_order)]
    pub fn bent_polyline(x: &[f64]) -> f64 {
        let pts: Vec<P2> = x.chunks_exact(2).map(|c| P2::new(c[0], c[1])).collect();
        let length: f64 = pts.windows(2).map(|w| (w[1] - w[0]).norm()).sum();
        let bending: f64 = pts
            .windows(3)
            .map(|w| (w[0] - 2.0 * w[1] + w[2]).norm2())
            .sum();
        length + 0.5 * bending
    }

    /// De Casteljau on a copy of the control points, sampled at five parameters.
    #[differentiable(higher_order)]
    pub fn casteljau(x: &[f64]) -> f64 {
        let ctrl: Vec<P2> = x.chunks(2).map(|c| P2::new(c[0], c[1])).collect();
        let mut samples: Vec<P2> = Vec::new();
        for s in 0..=4 {
            let t = s as f64 / 4.0;
            let mut pts = ctrl.clone();
            while pts.len() > 1 {
                for i in 0..pts.len() - 1 {
                    pts[i] = (1.0 - t) * pts[i] + t * pts[i + 1];
                }
                pts.pop();
            }
            samples.push(pts[0]);
        }
        samples
            .windows(2)
            .map(|w| (w[1] - w[0]).norm())
            .sum::<f64>()
    }

    /// Jacobi relaxation of a chain from a copy of its points each sweep.
    #[differentiable(higher_order)]
    pub fn relaxed(x: &[f64]) -> f64 {
        let mut pts: Vec<P2> = x.chunks(2).map(|c| P2::new(c[0], c[1])).collect();
        let n = pts.len();
        let g = P2::new(0.0, -0.05);
        for _ in 0..4 {
            let prev = pts.clone();
            for i in 1..n - 1 {
                let lap = prev[i - 1] + prev[i + 1] - 2.0 * prev[i];
                pts[i] = prev[i] + 0.3 * lap + g;
            }
        }
        pts[n / 2].y + pts.windows(2).map(|w| (w[1] - w[0]).norm()).sum::<f64>()
    }

    /// A rigid motion applied by a closure with a typed parameter; the misfit.
    #[differentiable(higher_order)]
    pub fn rigid_misfit(x: &[f64]) -> f64 {
        let t = P2::new(x[1], x[2]);
        let src = [P2::new(0.0, 0.0), P2::new(1.0, 0.2), P2::new(0.3, 1.1)];
        let dst = [P2::new(1.0, 0.0), P2::new(0.8, 1.0), P2::new(-0.1, 0.3)];
        let (s, c) = x[0].sin_cos();
        let apply = |p: P2| P2::new(c * p.x - s * p.y, s * p.x + c * p.y) + t;
        src.iter()
            .zip(dst.iter())
            .map(|(&p, &q)| (apply(p) - q).norm2())
            .sum::<f64>()
    }

    /// Positions and velocities zipped, both structs; energy after a few steps.
    #[differentiable(higher_order)]
    pub fn zipped_states(x: &[f64]) -> f64 {
        let k = x[0];
        let mut pos: Vec<P2> = x[1..].chunks(4).map(|c| P2::new(c[0], c[1])).collect();
        let vel: Vec<P2> = x[1..].chunks(4).map(|c| P2::new(c[2], c[3])).collect();
        for i in 0..pos.len() {
            pos[i] = pos[i] + 0.1 * vel[i];
        }
        pos.iter()
            .zip(&vel)
            .map(|(q, v)| 0.5 * v.norm2() + 0.5 * k * q.norm2())
            .sum()
    }

    /// A closed polygon's area over perimeter, its edges a chain held and walked twice.
    #[differentiable(higher_order)]
    pub fn polygon_ratio(x: &[f64]) -> f64 {
        let pts: Vec<P2> = x.chunks(2).map(|c| P2::new(c[0], c[1])).collect();
        let edges = pts.iter().zip(pts.iter().cycle().skip(1));
        let perimeter: f64 = edges.clone().map(|(a, b)| (*b - *a).norm()).sum();
        let area = 0.5 * edges.map(|(a, b)| a.cross(b)).sum::<f64>();
        area / (perimeter * perimeter)
    }

    #[derive(Clone, Debug, Default, Tangent)]
    pub struct Lin {
        w: Vec<f64>,
        b: f64,
    }

    #[differentiable(higher_order)]
    impl Lin {
        fn with_weights(mut self, w: Vec<f64>) -> Self {
            self.w = w;
            self
        }
        fn with_bias(mut self, b: f64) -> Self {
            self.b = b;
            self
        }
        fn predict(&self, x: &[f64]) -> f64 {
            self.w.iter().zip(x).map(|(w, v)| w * v).sum::<f64>() + self.b
        }
        fn nudged(&self, lr: f64) -> Lin {
            Lin {
                w: self.w.iter().map(|w| w - lr * w.sin()).collect(),
                b: self.b - lr * self.b,
            }
        }
    }

    /// A model made by a builder's chain, given an array where it takes a slice.
    #[differentiable(higher_order)]
    pub fn built_model(p: &[f64]) -> f64 {
        let m = Lin::default().with_weights(p[..3].to_vec()).with_bias(p[3]);
        let probe = [0.3, -0.7, 1.2];
        m.predict(&probe).tanh() + m.predict(&[1.0, 0.5, -0.5])
    }

    /// Three steps folded from a model over a range.
    #[differentiable(higher_order)]
    pub fn stepped_model(p: &[f64]) -> f64 {
        let model = Lin {
            w: p[..3].to_vec(),
            b: p[3],
        };
        let trained = (0..3).fold(model, |m, _| m.nudged(0.1));
        trained.predict(&[0.4, -0.2, 0.9]).powi(2)
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Act {
        Tanh,
        Sigmoid,
    }

    #[differentiable(higher_order)]
    impl Act {
        fn apply(&self, v: f64) -> f64 {
            match self {
                Act::Tanh => v.tanh(),
                Act::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            }
        }
    }

    /// An enum's method on a local variant and on a variant written in place.
    #[differentiable(higher_order)]
    pub fn activations(x: &[f64]) -> f64 {
        let a = Act::Tanh;
        a.apply(x[0] * x[1]) + Act::Sigmoid.apply(x[1] - x[0])
    }

    const ACTS: [Act; 3] = [Act::Tanh, Act::Sigmoid, Act::Tanh];

    /// Pairs of points collected as a `Vec<(P2, P2)>`: their moments about a pivot,
    /// and the forces folded from the pairs.
    #[differentiable(higher_order)]
    pub fn lever_moments(x: &[f64]) -> f64 {
        let pivot = P2::new(x[0], x[1]);
        let levers: Vec<(P2, P2)> = x[2..]
            .chunks_exact(4)
            .map(|c| (P2::new(c[0], c[1]), P2::new(c[2], c[3])))
            .collect();
        let moment: f64 = levers.iter().map(|(at, f)| (*at - pivot).cross(f)).sum();
        let pull = levers
            .iter()
            .fold(P2::new(0.0, 0.0), |acc, &(_, f)| acc + f);
        moment * moment + pull.norm2()
    }

    /// A struct with fields of another struct of the crate's.
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Body {
        pos: P2,
        vel: P2,
        mass: f64,
    }

    #[differentiable(higher_order)]
    impl Body {
        fn kinetic(&self) -> f64 {
            0.5 * self.mass * self.vel.norm2()
        }
        fn moved(&self, dt: f64) -> Body {
            Body {
                pos: self.pos + dt * self.vel,
                vel: self.vel,
                mass: self.mass,
            }
        }
    }

    /// Two bodies drifting, their kinetic energy and their distance.
    #[differentiable(higher_order)]
    pub fn two_bodies(x: &[f64]) -> f64 {
        let a = Body {
            pos: P2::new(x[0], x[1]),
            vel: P2::new(x[2], x[3]),
            mass: x[4],
        };
        let b = Body {
            pos: P2::new(x[5], x[6]),
            vel: P2::new(-x[3], x[2]),
            mass: 1.5,
        };
        let a1 = a.moved(0.1);
        let b1 = b.moved(0.1);
        a1.kinetic() + b1.kinetic() + (a1.pos - b1.pos).norm()
    }

    /// Layers `h ← act.apply(w h + b)` of a `const` array of an enum zipped with the
    /// pieces of a sub-slice, folded.
    #[differentiable(higher_order)]
    pub fn activation_layers(p: &[f64]) -> f64 {
        let h = ACTS
            .iter()
            .zip(p[1..].chunks(2))
            .fold(p[0], |h, (act, wb)| act.apply(wb[0] * h + wb[1]));
        h + 0.5 * h * h
    }

    /// Settings with an enum field, passed whole to a marked function.
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Settings {
        lr: f64,
        steps: usize,
        act: Act,
    }

    impl Default for Settings {
        fn default() -> Self {
            Settings {
                lr: 0.3,
                steps: 3,
                act: Act::Tanh,
            }
        }
    }

    const SLOW: Settings = Settings {
        lr: 0.1,
        steps: 4,
        act: Act::Sigmoid,
    };

    /// Steps of `w ← w − lr·(act(w) − 0.2)` from `x`, then the squared misfit.
    #[differentiable(higher_order)]
    pub fn settled(x: &[f64], s: &Settings) -> f64 {
        let mut w = x.to_vec();
        for _ in 0..s.steps {
            for v in w.iter_mut() {
                let a = s.act.apply(*v);
                *v -= s.lr * (a - 0.2);
            }
        }
        w.iter().map(|v| (s.act.apply(*v) - 0.2).powi(2)).sum()
    }

    /// The settings by `Default`, by a `const`, and by struct update from either.
    #[differentiable(higher_order)]
    pub fn settled_variants(x: &[f64]) -> f64 {
        let quick = Settings {
            steps: 2,
            ..Settings::default()
        };
        let tanh_slow = Settings {
            act: Act::Tanh,
            ..SLOW
        };
        settled(x, &quick) + settled(x, &SLOW) + 0.5 * settled(x, &tanh_slow)
    }

    /// An enum whose variants hold a `Vec` (not `Copy`).
    #[derive(Clone, Debug, Tangent)]
    pub enum Stage {
        Dense { w: Vec<f64>, b: f64 },
        Scale(f64),
    }

    #[differentiable]
    impl Stage {
        fn run(&self, h: &[f64]) -> Vec<f64> {
            match self {
                Stage::Dense { w, b } => w
                    .chunks(h.len())
                    .map(|row| (row.iter().zip(h).map(|(a, v)| a * v).sum::<f64>() + b).tanh())
                    .collect(),
                Stage::Scale(s) => h.iter().map(|v| s * v).collect(),
            }
        }
    }

    fn stages() -> Vec<Stage> {
        vec![
            Stage::Dense {
                w: vec![0.5, -0.3, 0.8, 0.1, -0.4, 0.6],
                b: 0.05,
            },
            Stage::Scale(1.5),
            Stage::Dense {
                w: vec![0.9, -0.6],
                b: -0.1,
            },
        ]
    }

    /// The stages a function returns, folded over from `x` in place and from a name.
    #[differentiable]
    pub fn staged(x: &[f64]) -> f64 {
        let out = stages().iter().fold(x.to_vec(), |h, st| st.run(&h));
        let held = stages();
        let again = held.iter().fold(x.to_vec(), |h, st| st.run(&h));
        out[0].powi(2) + again[0] * x[1]
    }

    #[test]
    fn stages_folded() {
        let x = [0.3, -0.2, 0.5];
        let g = staged::gradient(&x);
        crate::common::close("staged", &g, &crate::common::fd(&staged, &x));
    }

    mod t {
        use crate::all_orders;
        all_orders!(activation_layers, [0.3, 0.9, -0.2, 1.4, 0.1, -0.8, 0.5]);
        all_orders!(settled_variants, [0.3, -0.2, 0.5]);
        all_orders!(two_bodies, [0.3, 0.9, -0.2, 1.4, 1.1, -0.8, 0.5]);
        all_orders!(
            lever_moments,
            [0.2, -0.1, 0.9, 0.3, -0.4, 1.2, -0.5, 0.8, 0.6, 0.7]
        );
        all_orders!(bent_polyline, [0.1, 0.2, 1.0, 0.3, 0.5, 1.1, -0.2, 0.7]);
        all_orders!(casteljau, [0.0, 0.0, 0.4, 1.1, 1.2, 0.9, 1.6, -0.1]);
        all_orders!(relaxed, [0.0, 0.0, 0.4, 0.3, 0.9, 0.2, 1.3, 0.4, 1.8, 0.0]);
        all_orders!(rigid_misfit, [0.4, 0.3, -0.2]);
        all_orders!(
            zipped_states,
            [1.3, 0.2, -0.4, 0.5, 0.1, 1.0, 0.3, -0.2, 0.6]
        );
        all_orders!(polygon_ratio, [1.0, 0.1, 0.2, 0.9, -0.8, 0.3, -0.3, -0.7]);
        all_orders!(built_model, [0.5, -0.3, 0.8, 0.1]);
        all_orders!(stepped_model, [0.5, -0.3, 0.8, 0.1]);
        all_orders!(activations, [0.4, -0.7]);
    }
}

/// A function over floats declared in the body (a local helper, called in a chain and
/// in a loop, one calling another declared before it), and positions read from a map.
mod body_helpers_and_maps {
    use mochi::prelude::*;
    use std::collections::HashMap;

    #[differentiable]
    pub fn local_helpers(x: &[f64]) -> f64 {
        fn sq(v: f64) -> f64 {
            v * v
        }
        fn bump(v: f64, k: f64) -> f64 {
            if v < 0.0 {
                return sq(v) * k;
            }
            sq(v) + k * v
        }
        let s = x.iter().map(|&v| sq(v) + 1.0).sum::<f64>().ln();
        let mut t = 0.0;
        for i in 0..x.len() {
            t += bump(x[i], 0.5);
        }
        s * t
    }

    #[differentiable]
    pub fn map_positions(x: &[f64]) -> f64 {
        let mut at: HashMap<&str, usize> = HashMap::new();
        at.insert("a", 0);
        at.insert("b", 2);
        x[at["a"]] * x[*at.get("b").unwrap()] + x.get(1).copied().unwrap_or(0.0)
    }

    mod t {
        use crate::all_orders;
        all_orders!(local_helpers, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(map_positions, [0.4, 1.3, -0.7]);
    }
}

/// Data in shapes the generic form does not differentiate (`xs: &[Vec<f64>]`, `data:
/// &[(f64, f64)]`), beside the parameters: lifted as constants, so the Hessian exists.
mod data_arguments {
    use mochi::prelude::*;

    #[differentiable]
    pub fn logistic_loss(params: &[f64], xs: &[Vec<f64>], ys: &[f64]) -> f64 {
        let (w, b) = params.split_at(params.len() - 1);
        let mut loss = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let z: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum::<f64>() + b[0];
            let p = (1.0 / (1.0 + (-z).exp())).clamp(1e-12, 1.0 - 1e-12);
            loss -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
        }
        loss / ys.len() as f64
    }

    #[differentiable]
    pub fn line_fit(params: &[f64], data: &[(f64, f64)]) -> f64 {
        let mut s = 0.0;
        for &(x, y) in data {
            let pred = params[0] * x.sin() + params[1] * params[1] * x;
            s += (pred - y).powi(2);
        }
        s
    }

    /// Rows that carry derivatives (built from the parameters) through a helper taking
    /// `&[Vec<f64>]`, and rows of data: the helper's generic form takes the caller's.
    #[differentiable]
    pub fn matvec(w: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        w.iter()
            .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
            .collect()
    }

    #[differentiable]
    pub fn layer_loss(flat: &[f64], xs: &[Vec<f64>]) -> f64 {
        let n = xs[0].len();
        let w: Vec<Vec<f64>> = (0..2).map(|r| flat[r * n..(r + 1) * n].to_vec()).collect();
        let mut loss = 0.0;
        for x in xs {
            let h = matvec(&w, x);
            loss += h.iter().map(|v| v.tanh().powi(2)).sum::<f64>();
        }
        loss
    }

    /// The parameters' block of `h` (their rows and columns come first) against central
    /// differences of the parameters' gradient.
    fn check_block(
        name: &str,
        h: &ndarray::Array2<f64>,
        grad: impl Fn(&[f64]) -> Vec<f64>,
        p: &[f64],
    ) {
        crate::common::assert_hessian_matches(name, grad, h, p, 1e-4);
    }

    #[test]
    fn logistic_loss_all_orders() {
        let xs = vec![vec![0.5, 1.0], vec![-0.3, 0.2], vec![1.2, -0.7]];
        let ys = [1.0, 0.0, 1.0];
        let p = [0.3, -0.2, 0.1];
        let g = logistic_loss::gradient(&p, &xs, &ys).0;
        crate::common::assert_gradient_matches(|p| logistic_loss(p, &xs, &ys), &g, &p);
        let h = logistic_loss::hessian(&p, &xs, &ys);
        // The parameters and the labels (a slice of floats) are the Hessian's arguments.
        assert_eq!(h.dim(), (6, 6));
        check_block(
            "logistic_loss",
            &h,
            |p| logistic_loss::gradient(p, &xs, &ys).0,
            &p,
        );
    }

    #[test]
    fn layer_loss_all_orders() {
        let xs = vec![vec![0.5, 1.0, -0.4], vec![-0.3, 0.2, 0.8]];
        let p = [0.3, -0.2, 0.1, 0.7, -0.5, 0.25];
        let g = layer_loss::gradient(&p, &xs).0;
        crate::common::assert_gradient_matches(|p| layer_loss(p, &xs), &g, &p);
        let h = layer_loss::hessian(&p, &xs);
        assert_eq!(h.dim(), (6, 6));
        check_block("layer_loss", &h, |p| layer_loss::gradient(p, &xs).0, &p);
    }

    #[test]
    fn line_fit_all_orders() {
        let data = [(0.5, 1.0), (-0.3, 0.2), (1.2, -0.7)];
        let p = [0.3, -0.2];
        let g = line_fit::gradient(&p, &data).0;
        crate::common::assert_gradient_matches(|p| line_fit(p, &data), &g, &p);
        let h = line_fit::hessian(&p, &data);
        assert_eq!(h.dim(), (2, 2));
        check_block("line_fit", &h, |p| line_fit::gradient(p, &data).0, &p);
    }
}

/// Fixed-size array arguments, `[f64; N]` by value and by reference, have companions
/// (`hessian`, `hvp`, `jvp`, `jacobian`); a function's gradient of such a function is
/// differentiated too.
mod fixed_size_arguments {
    use mochi::prelude::*;

    #[differentiable]
    pub fn rosenbrock2(p: [f64; 2]) -> f64 {
        (1.0 - p[0]).powi(2) + 100.0 * (p[1] - p[0] * p[0]).powi(2)
    }

    #[differentiable]
    pub fn scaled_product(x: &[f64; 3], s: f64) -> f64 {
        x[0] * x[1] * x[2] * s + s.sin()
    }

    #[differentiable]
    pub fn rotate(x: [f64; 2], t: f64) -> [f64; 2] {
        [
            x[0] * t.cos() - x[1] * t.sin(),
            x[0] * t.sin() + x[1] * t.cos(),
        ]
    }

    /// Arrays cut from a slice by `TryFrom`, written as a qualified call.
    #[differentiable]
    pub fn array_from_slice(x: &[f64]) -> f64 {
        let [a, b, c] = <[f64; 3]>::try_from(&x[..3]).unwrap();
        let [d, e] = <[f64; 2] as TryFrom<&[f64]>>::try_from(&x[1..]).expect("two");
        (a + d * e) * b + c.sin()
    }

    mod t {
        use crate::all_orders;
        all_orders!(array_from_slice, [0.3, -1.2, 0.5]);
    }

    /// The squared norm of `rosenbrock2`'s gradient.
    #[differentiable]
    pub fn gradient_norm(p: &[f64]) -> f64 {
        let g = rosenbrock2::gradient([p[0], p[1]]);
        g[0] * g[0] + g[1] * g[1]
    }

    #[test]
    fn by_value() {
        let p = [0.3, 0.7];
        let g = rosenbrock2::gradient(p);
        crate::common::assert_gradient_matches(|x| rosenbrock2([x[0], x[1]]), &g, &p);
        let h = rosenbrock2::hessian(p);
        crate::common::assert_hessian_matches(
            "rosenbrock2",
            |x| rosenbrock2::gradient([x[0], x[1]]).to_vec(),
            &h,
            &p,
            1e-4,
        );
        let v = [1.0, 0.5];
        let hv = rosenbrock2::hvp(p, &v);
        for i in 0..2 {
            let want = h[[i, 0]] * v[0] + h[[i, 1]] * v[1];
            assert!((hv[i] - want).abs() <= 1e-8 * (1.0 + want.abs()));
        }
        let (y, d) = rosenbrock2::jvp(p, &v);
        assert_eq!(y, rosenbrock2(p));
        assert!((d - (g[0] * v[0] + g[1] * v[1])).abs() <= 1e-9 * (1.0 + d.abs()));
    }

    #[test]
    fn by_reference_beside_a_scalar() {
        let x = [0.3, 0.7, -0.4, 1.1];
        let grad = |x: &[f64]| {
            let (a, b) = scaled_product::gradient(&[x[0], x[1], x[2]], x[3]);
            let mut v = a.to_vec();
            v.push(b);
            v
        };
        crate::common::assert_gradient_matches(
            |x| scaled_product(&[x[0], x[1], x[2]], x[3]),
            &grad(&x),
            &x,
        );
        let h = scaled_product::hessian(&[x[0], x[1], x[2]], x[3]);
        crate::common::assert_hessian_matches("scaled_product", grad, &h, &x, 1e-4);
    }

    #[test]
    fn array_result_jacobian() {
        let x = [0.3, 0.7, 0.4];
        let (_, j) = rotate::jacobian([x[0], x[1]], x[2]);
        crate::common::check_jac("rotate", &j, &|x| rotate([x[0], x[1]], x[2]).to_vec(), &x);
    }

    #[test]
    fn gradient_of_a_gradient() {
        let p = [0.3, 0.7];
        let g = gradient_norm::gradient(&p);
        crate::common::assert_gradient_matches(gradient_norm, &g, &p);
    }
}

/// `if v >= 0.0 { v } else { 0.0 }` and its neighbours (a value against a float
/// literal, returning one of the two) are differentiated as `max`/`min`, without a
/// branch per element. The value, the subgradient at a tie and the `NaN` case stay the
/// `if`'s: the arm that runs gets the whole cotangent.
mod piecewise_selects {
    use mochi::prelude::*;
    use ndarray::Array1;

    /// All four comparisons, both ways round, in a loop, an element closure and a chain.
    #[differentiable]
    pub fn four_forms(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            let a = if x[i] >= 0.1 { x[i] } else { 0.1 };
            let b = if x[i] > -0.2 { x[i] } else { -0.2 };
            let c = if 0.3 >= x[i] { x[i] } else { 0.3 };
            let d = if x[i] < 0.4 { x[i] } else { 0.4 };
            s += a * b + c * d.sin();
        }
        s
    }

    #[differentiable]
    pub fn relu_layer(x: &[f64]) -> f64 {
        let h = Array1::from_vec(x.to_vec()) * 1.5 - 0.2;
        let r = h.mapv(|v| if v > 0.0 { v } else { 0.0 });
        let q: f64 = x
            .iter()
            .map(|&v| if 0.0 <= v { v } else { 0.0 })
            .map(|v| v * v)
            .sum();
        (&r * &r).sum() + q
    }

    /// The arms the other way round (`NaN` for `NaN`, which no `max` gives) stay an `if`.
    #[differentiable]
    pub fn swapped_arms(x: &[f64]) -> f64 {
        x.iter().map(|&v| if v < 0.0 { 0.0 } else { v * v }).sum()
    }

    #[differentiable]
    pub fn scalar_select(a: f64, b: f64) -> f64 {
        let t = a * b;
        let u = if t > 1.0 { t } else { 1.0 };
        u * a
    }

    #[differentiable]
    pub fn relu_f32(x: &[f32]) -> f32 {
        x.iter()
            .map(|&v| if v > 0.0 { v } else { 0.0 })
            .map(|v| v * v)
            .sum()
    }

    mod t {
        use crate::all_orders;
        all_orders!(four_forms, [0.7, 0.25, 0.05, -0.5, 0.35, -0.1]);
        all_orders!(relu_layer, [0.7, -0.4, 0.05, 0.35]);
        all_orders!(swapped_arms, [0.7, -0.4, 0.05]);
    }

    /// At a tie the strict comparisons give the literal the cotangent, the others the
    /// value; a `NaN` element takes the literal's arm, as the primal does.
    #[test]
    fn ties_and_nan_follow_the_if() {
        // x = 0.1 ties `>= 0.1` (a = x), 0.3 ties `0.3 >= x` (c = x), 0.4 ties `< 0.4`
        // (d = 0.4, a constant).
        let x = [0.1, 0.3, 0.4];
        let g = four_forms::gradient(&x);
        // a·b + c·sin d at x = 0.1: a = b = c = d = x: 2x + sin x + x cos x.
        let at = |v: f64| 2.0 * v + v.sin() + v * v.cos();
        assert!((g[0] - at(0.1)).abs() < 1e-12, "{g:?}");
        // x = 0.3: a = b = c = d = x.
        assert!((g[1] - at(0.3)).abs() < 1e-12, "{g:?}");
        // x = 0.4: a = b = x, c = 0.3, d = 0.4 (constant): 2x.
        assert!((g[2] - 0.8).abs() < 1e-12, "{g:?}");
        let (a, b) = scalar_select::gradient(1.0, 1.0);
        assert_eq!((a, b), (1.0, 0.0), "t = 1 ties `t > 1`: u is the literal");
        let (a, b) = scalar_select::gradient(2.0, 3.0);
        assert_eq!((a, b), (12.0, 4.0));
        let g = relu_layer::gradient(&[0.2 / 1.5, 0.0]);
        // h₀ = 0 ties `v > 0` (r₀ = 0); x₁ = 0 ties `0 <= v` (its square, 0 cotangent).
        assert_eq!(g, vec![2.0 * 0.2 / 1.5, 0.0]);
        let nan = [f64::NAN, 0.5];
        let (y, g) = four_forms::value_and_gradient(&nan);
        assert_eq!(
            y.to_bits(),
            four_forms(&nan).to_bits(),
            "the primal's value"
        );
        assert_eq!(g[0], 0.0, "a NaN element takes the literals' arms");
        assert_eq!(
            relu_f32::gradient(&[1.0, -1.0, 0.0, 2.0]),
            vec![2.0, 0.0, 0.0, 4.0]
        );
        assert_eq!(relu_f32::gradient(&[f32::NAN]), vec![0.0]);
    }
}

/// Arrays times, and divided by, constants (`&a * 0.5`, `2.0 * &a`, `&a / &k` with `k`
/// built from literals) and an array times itself: the forward copies only what the
/// active operand's partial reads (`kit::keep::KeepCall`), and the derivatives are the
/// whole rule's.
mod constant_operands {
    use mochi::prelude::*;
    use ndarray::{Array1, Array2};

    #[differentiable]
    pub fn scaled(x: &[f64]) -> f64 {
        let a = Array1::from_vec(x.to_vec());
        let b = &a * 0.5;
        let c = 2.0 * &a;
        let d = &a / 4.0;
        let e = &a * &a;
        let k = Array1::from_vec(vec![1.0, 2.0, 3.0]);
        let f = &a * &k;
        let g = &k * &a;
        let h = &a / &k;
        let m = Array2::from_shape_vec((3, 1), x.to_vec()).unwrap();
        let bc = &m * &Array1::from_vec(vec![1.0, -1.0]);
        (&b * &c).sum()
            + d.mapv(|v| v.sin()).sum()
            + e.sum() * f.sum()
            + g.sum() * h.sum()
            + (&bc * &bc).sum() * (1.5 * x[0])
            + (&a * x[1]).sum()
    }

    #[differentiable]
    pub fn kernel_sum(x: &[f64]) -> f64 {
        let v = Array1::from_vec(x[..3].to_vec());
        let n = v.len();
        let xc = v.view().insert_axis(ndarray::Axis(1));
        let xr = v.view().insert_axis(ndarray::Axis(0));
        let d = &xc - &xr;
        let k = (&d * &d * -0.5).exp() + &(Array2::<f64>::eye(n) * x[3]);
        (&k * &k).sum().ln()
    }

    mod t {
        use crate::all_orders;
        all_orders!(scaled, [0.3, -0.8, 1.1]);
        all_orders!(kernel_sum, [0.3, -0.8, 1.1, 0.7]);
    }
}

/// Associated constructors (`V2::new(x, y)`, `Pair::new(a, b)` of a tuple struct, and
/// `Self::new` inside a method) of an `impl` block asking for `higher_order`, and a
/// method taking `self` by value called with method syntax (`q.swapped()`): the
/// generic forms of their callers call the constructors' twins, so the callers have
/// Hessians; a local bound to a constructor's result is a receiver of the struct's
/// methods, in the gradient and in the generic form.
mod associated_constructors {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Default, Tangent)]
    pub struct V2 {
        pub x: f64,
        pub y: f64,
    }

    #[differentiable(higher_order)]
    impl V2 {
        pub fn new(x: f64, y: f64) -> V2 {
            V2 { x, y }
        }
        pub fn norm2(&self) -> f64 {
            self.x * self.x + self.y * self.y
        }
        pub fn scaled(&self, s: f64) -> V2 {
            V2::new(self.x * s, self.y * s)
        }
        /// Without arguments: a constant wherever it is called, left as written.
        pub fn zero() -> Self {
            V2 { x: 0.0, y: 0.0 }
        }
        pub fn add(&self, o: &V2) -> V2 {
            V2::new(self.x + o.x, self.y + o.y)
        }
        /// Constants of the type inside a method, and a chain of methods on `self`.
        pub fn shifted(&self) -> V2 {
            let o = Self::zero();
            let u = Self::new(1.0, -0.5);
            self.add(&o).add(&u).scaled(0.5)
        }
    }

    /// A struct whose `impl` block does not ask for `higher_order`.
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct P3 {
        pub a: f64,
        pub b: f64,
        pub c: f64,
    }

    #[differentiable]
    impl P3 {
        pub fn new(a: f64, b: f64, c: f64) -> Self {
            P3 { a, b, c }
        }
        pub fn dot(&self, o: &P3) -> f64 {
            self.a * o.a + self.b * o.b + self.c * o.c
        }
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Pair(pub f64, pub f64);

    #[differentiable(higher_order)]
    impl Pair {
        pub fn new(a: f64, b: f64) -> Self {
            Pair(a, b)
        }
        pub fn prod(&self) -> f64 {
            self.0 * self.1
        }
        pub fn flipped(&self) -> Pair {
            Self::new(self.1, self.0 * 2.0)
        }
        /// By value: method syntax on a local gives it a clone.
        pub fn swapped(self) -> Pair {
            Pair(self.1, self.0)
        }
    }

    #[differentiable(higher_order)]
    pub fn energy(p: &[f64]) -> f64 {
        let a = V2::new(p[0], p[1]);
        let b = a.scaled(p[2]);
        a.norm2() + b.norm2().sqrt()
    }

    #[differentiable(higher_order)]
    pub fn pairs(p: &[f64]) -> f64 {
        let q = Pair::new(p[0] * 2.0, p[1]);
        let r = q.flipped();
        let t = Pair(p[1], p[0] * p[1]).swapped();
        r.prod() + q.prod().sin() + Pair::new(p[1], p[0]).prod() + t.swapped().prod().tanh()
    }

    /// Sums from `V2::zero()` and a `Default`, constants of the user's types.
    #[differentiable(higher_order)]
    pub fn accumulated(p: &[f64]) -> f64 {
        let mut acc = V2::zero();
        let mut d = V2::default();
        for k in 0..p.len() / 2 {
            let q = V2::new(p[2 * k], p[2 * k + 1]);
            acc = acc.add(&q.scaled(0.5 + k as f64));
            d = d.add(&q.shifted());
        }
        let lift = V2::new(0.25, 2.0);
        acc.add(&lift).shifted().norm2() + d.norm2().sqrt()
    }

    /// Asking for `higher_order` and calling a constructor and a method whose `impl`
    /// block does not: the gradient is there (using the Hessian is an error when the
    /// crate is built, naming `P3::new` and the fix, which `cargo check` does not reach).
    #[differentiable(higher_order)]
    pub fn unasked_block(p: &[f64]) -> f64 {
        let u = P3::new(p[0], p[1] * p[0], 1.5);
        let w = P3::new(p[1], 0.5, p[0].sin());
        u.dot(&w) + u.dot(&u).sqrt()
    }

    /// Not asking for `higher_order`: the gradient, as before.
    #[differentiable]
    pub fn gradient_only(p: &[f64]) -> f64 {
        let a = V2::new(p[0], p[1]);
        a.norm2() * p[0]
    }

    mod t {
        use crate::all_orders;
        all_orders!(energy, [0.3, 1.2, 0.7]);
        all_orders!(pairs, [0.3, 1.2]);
        all_orders!(accumulated, [0.3, 1.2, -0.7, 0.4]);
    }

    #[test]
    fn unasked_block_keeps_its_gradient() {
        let p = [0.3, 1.2];
        let g = unasked_block::gradient(&p);
        crate::common::assert_gradient_matches(unasked_block, &g, &p);
    }

    #[test]
    fn gradient_only_matches_differences() {
        let p = [0.3, 1.2];
        let g = gradient_only::gradient(&p);
        crate::common::assert_gradient_matches(gradient_only, &g, &p);
    }
}

/// Buffers emptied and pieces walked in place, and constants declared in the body.
mod buffers_and_pieces {
    use mochi::prelude::*;

    /// Horner's rule over a constant declared in the body, folded in reverse.
    #[differentiable(higher_order)]
    pub fn horner_body_const(x: &[f64]) -> f64 {
        const B: [f64; 4] = [0.5, -1.0, 2.0, 3.0];
        let t = x[0];
        B.iter().rev().fold(0.0, |acc, &a| acc * t + a) * x[1]
    }

    /// Each piece of `chunks_mut` walked with `iter_mut()` (and `is_empty`).
    #[differentiable(higher_order)]
    pub fn pieces_in_place(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        for (k, c) in v.chunks_mut(2).enumerate() {
            if c.is_empty() {
                continue;
            }
            for e in c.iter_mut() {
                *e *= (k + 1) as f64 + *e;
            }
        }
        v.iter().map(|t| t * t).sum()
    }

    /// `append` moves a buffer's elements to another's end; `clear` empties one that is
    /// then refilled.
    #[differentiable(higher_order)]
    pub fn append_and_clear(x: &[f64]) -> f64 {
        let mut v = vec![0.5];
        let mut w = x.to_vec();
        v.append(&mut w);
        w.push(x[0] * 3.0);
        let mut acc = Vec::new();
        for k in 0..2 {
            acc.clear();
            for t in v.iter() {
                acc.push(t * (k as f64 + 1.0));
            }
        }
        let weighted: f64 = v.iter().enumerate().map(|(i, t)| i as f64 * t * t).sum();
        weighted + w[0].sin() * w.len() as f64 + acc.iter().sum::<f64>()
    }

    /// An array's elements as a slice (`as_slice().unwrap()`, `expect`).
    #[differentiable(higher_order)]
    pub fn array_as_slice(x: &[f64]) -> f64 {
        let a = ndarray::Array1::from(x.to_vec()) * 2.0;
        let s = a.as_slice().unwrap();
        s[0] * s[1] + s.iter().sum::<f64>() + a.as_slice().expect("contiguous")[2].sin()
    }

    /// `Zip` and `azip!` writing arrays in place: `azip!` has its generic form too.
    #[differentiable(higher_order)]
    pub fn zipped_in_place(x: &[f64]) -> f64 {
        let a = ndarray::Array1::from(x[..3].to_vec());
        let b = ndarray::Array1::from(x[3..].to_vec());
        let mut out = ndarray::Array1::<f64>::zeros(3);
        ndarray::Zip::from(&mut out)
            .and(&a)
            .and(&b)
            .for_each(|o, &p, &q| *o = p * q + p.sin());
        let mut c = ndarray::Array1::<f64>::zeros(3);
        ndarray::azip!((c in &mut c, &o in &out, &p in &a) *c = o * p);
        c.sum() + out.sum()
    }

    mod t {
        use crate::all_orders;
        all_orders!(zipped_in_place, [0.3, 1.2, -0.4, 0.5, -0.9, 0.7]);
        all_orders!(array_as_slice, [0.3, 1.2, -0.4]);
        all_orders!(horner_body_const, [0.7, -1.3]);
        all_orders!(pieces_in_place, [0.3, 1.2, 0.8, 0.5, -0.7]);
        all_orders!(append_and_clear, [0.3, -1.2, 0.8]);
    }

    #[test]
    fn append_leaves_the_source_empty() {
        // `w` holds only the pushed element after `append`: its length is 1.
        let x = [0.3, -1.2, 0.8];
        let expected = {
            let v = [0.5, 0.3, -1.2, 0.8];
            let weighted: f64 = v.iter().enumerate().map(|(i, t)| i as f64 * t * t).sum();
            let acc: f64 = v.iter().map(|t| t * 2.0).sum();
            weighted + (0.9f64).sin() + acc
        };
        assert!((append_and_clear(&x) - expected).abs() < 1e-12);
        let g = append_and_clear::gradient(&x);
        crate::common::assert_gradient_matches(append_and_clear, &g, &x);
    }
}

/// Structs taken apart by a pattern and built by struct update syntax.
mod struct_parts {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Default, Tangent)]
    pub struct V2 {
        pub x: f64,
        pub y: f64,
    }

    #[differentiable(higher_order)]
    impl V2 {
        pub fn new(x: f64, y: f64) -> Self {
            V2 { x, y }
        }
        pub fn dot(&self, o: &V2) -> f64 {
            self.x * o.x + self.y * o.y
        }
        /// `let Self { x, y } = self;` of the receiver: references to its fields.
        pub fn spread(&self) -> f64 {
            let Self { x, y } = self;
            x * x - y.sin()
        }
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Pair(pub f64, pub f64);

    #[derive(Clone, Debug, Tangent)]
    pub struct Params {
        pub w: Vec<f64>,
        pub b: f64,
    }

    #[differentiable(higher_order)]
    pub fn destructured(p: &[f64]) -> f64 {
        let a = V2::new(p[0], p[1]);
        let V2 { x, y: h } = a;
        let Pair(u, _) = Pair(h * h, 1.0);
        let Pair(s, mut t) = Pair(x, u);
        t += s;
        x * h + u.sin() + t * a.spread()
    }

    #[differentiable(higher_order)]
    pub fn updated(p: &[f64]) -> f64 {
        let a = V2 {
            x: p[0],
            ..Default::default()
        };
        let b = V2 { y: p[1] * a.x, ..a };
        let c = V2 {
            x: 2.0,
            ..V2::default()
        };
        // (A base of constants, kept as written in the generic form, lifted there.)
        let base = V2 { x: 0.5, y: -1.5 };
        let d = V2 {
            y: p[0] * p[1],
            ..base
        };
        b.dot(&a) + b.y + c.dot(&b) + d.dot(&a) * d.y
    }

    /// A parameter that is a reference, taken apart: its fields by reference (a `Vec`
    /// field cannot be moved out of it).
    #[differentiable]
    pub fn borrowed_parts(p: &Params, x: &[f64]) -> f64 {
        let Params { w, b } = p;
        let s: f64 = w.iter().zip(x).map(|(a, v)| a * v).sum();
        (s + b).tanh()
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Particle {
        pub x: f64,
        pub v: f64,
    }

    /// A slice of structs has no generic form yet: its callers keep their gradients.
    #[differentiable(higher_order)]
    pub fn kinetic(ps: &[Particle]) -> f64 {
        ps.iter().map(|q| 0.5 * q.v * q.v + q.x.sin()).sum()
    }

    /// Asking for `higher_order`, building structs in a `Vec` (annotated, filled by
    /// `push`) and passing them to `kinetic`: the gradient is there (using the Hessian
    /// is an error when the crate is built, naming `kinetic`'s argument).
    #[differentiable(higher_order)]
    pub fn particles(p: &[f64]) -> f64 {
        let mut ps: Vec<Particle> = Vec::new();
        for i in 0..p.len() {
            ps.push(Particle {
                x: p[i],
                v: 0.5 + p[i] * p[i],
            });
        }
        kinetic(&ps) + ps.iter().map(|q| q.x * q.v).sum::<f64>()
    }

    #[test]
    fn particles_keep_their_gradient() {
        let p = [0.3, -1.2, 0.8];
        let g = particles::gradient(&p);
        crate::common::assert_gradient_matches(particles, &g, &p);
    }

    /// Parts of references (a loop's element, a borrowed element): references, as the
    /// pattern's binding mode makes them.
    #[differentiable(higher_order)]
    pub fn parts_of_references(x: &[f64]) -> f64 {
        let pairs = vec![Pair(x[0], x[1]), Pair(x[1], 2.0)];
        let mut s = 0.0;
        for q in &pairs {
            let Pair(a, b) = q;
            s += *a * *b;
        }
        let r = &pairs[0];
        let Pair(c, d) = r;
        s + *c - d.sin()
    }

    mod t {
        use crate::all_orders;
        all_orders!(parts_of_references, [0.3, 1.2]);
        all_orders!(destructured, [0.3, 1.2]);
        all_orders!(updated, [0.3, 1.2]);
    }

    #[test]
    fn borrowed_parts_match_differences() {
        let p = Params {
            w: vec![0.3, -0.2],
            b: 0.1,
        };
        let x = [1.0, 2.0];
        let (gp, gx) = borrowed_parts::gradient(&p, &x);
        let at = |w: &[f64], b: f64, x: &[f64]| borrowed_parts(&Params { w: w.to_vec(), b }, x);
        let h = 1e-6;
        let fd_b = (at(&p.w, p.b + h, &x) - at(&p.w, p.b - h, &x)) / (2.0 * h);
        assert!((gp.b - fd_b).abs() < 1e-6, "{} against {fd_b}", gp.b);
        for i in 0..2 {
            let (mut up, mut down) = (p.w.clone(), p.w.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (at(&up, p.b, &x) - at(&down, p.b, &x)) / (2.0 * h);
            assert!(
                (gp.w[i] - fd).abs() < 1e-6,
                "w[{i}]: {} against {fd}",
                gp.w[i]
            );
            let (mut up, mut down) = (x, x);
            up[i] += h;
            down[i] -= h;
            let fd = (at(&p.w, p.b, &up) - at(&p.w, p.b, &down)) / (2.0 * h);
            assert!((gx[i] - fd).abs() < 1e-6, "x[{i}]: {} against {fd}", gx[i]);
        }
    }
}

/// Closures bound borrowed (`let f = &|t| ..;`, `let f: &dyn Fn(f64) -> f64 = &|t| ..;`),
/// called and passed on.
mod borrowed_closures {
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    pub fn twice(f: &dyn Fn(f64) -> f64, v: f64) -> f64 {
        f(f(v))
    }

    #[differentiable(higher_order)]
    pub fn borrowed(x: &[f64]) -> f64 {
        let a = x[0];
        let f = &|t: f64| a * t * t;
        f(x[1]) + f(x[2]) + twice(f, x[1])
    }

    #[differentiable(higher_order)]
    pub fn dyn_typed(x: &[f64]) -> f64 {
        let a = x[0];
        let g: &dyn Fn(f64) -> f64 = &|t| (a * t).sin();
        g(x[1]) * g(x[2])
    }

    mod t {
        use crate::all_orders;
        all_orders!(borrowed, [0.7, 0.1, -0.3]);
        all_orders!(dyn_typed, [0.7, 0.1, -0.3]);
    }
}

/// Closures with typed parameters in `for_each` and `scan`, a `scan` calling methods on
/// its state, and chains over indices that read a differentiable slice.
mod closure_forms {
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    pub fn for_each_typed(x: &[f64]) -> f64 {
        let mut y = x.to_vec();
        y.iter_mut().for_each(|v: &mut f64| *v = v.sin());
        let mut s = 0.0;
        x.iter().for_each(|v: &f64| s += v * v);
        y.iter().sum::<f64>() + s
    }

    /// The cumulative log-sum-exp, its state typed and read through methods.
    #[differentiable(higher_order)]
    pub fn cumulative_logsumexp(x: &[f64]) -> f64 {
        let c: Vec<f64> = x
            .iter()
            .scan(f64::NEG_INFINITY, |a: &mut f64, &v| {
                let m = a.max(v);
                *a = m + ((*a - m).exp() + (v - m).exp()).ln();
                Some(*a)
            })
            .collect();
        let d: Vec<f64> = x
            .iter()
            .scan(0.0f64, |a, &v| {
                *a = a.sin() + v;
                Some(*a)
            })
            .collect();
        c.iter().sum::<f64>() + d.iter().sum::<f64>()
    }

    /// An embedding lookup: indices, read in a differentiable slice.
    #[differentiable(higher_order)]
    pub fn gathered(x: &[f64]) -> f64 {
        let idx = [2usize, 0, 2, 1];
        let s: f64 = idx.iter().map(|&i| x[i] * x[i]).sum();
        let f = idx.iter().fold(0.0, |acc, &i| acc + x[i].sin());
        s + f
    }

    /// A chain collected as an `if` arm's value: an activation on every layer but the
    /// last, assigned and bound by `let`.
    #[differentiable(higher_order)]
    pub fn layers(x: &[f64]) -> f64 {
        let mut h = x.to_vec();
        for k in 0..3 {
            let z: Vec<f64> = h.iter().map(|v| 0.5 * v + 0.1).collect();
            h = if k < 2 {
                z.iter().map(|&v| v.tanh()).collect()
            } else if k == 5 {
                z.iter().map(|&v| v.sin()).collect()
            } else {
                z
            };
        }
        let g: Vec<f64> = if h[0] > 0.0 {
            h.iter().map(|&v| v * v).collect()
        } else {
            h.to_vec()
        };
        h.iter().sum::<f64>() + g.iter().sum::<f64>()
    }

    mod t {
        use crate::all_orders;
        all_orders!(layers, [0.3, -1.2, 0.8]);
        all_orders!(for_each_typed, [0.3, -1.2, 0.8]);
        all_orders!(cumulative_logsumexp, [0.3, -1.2, 0.8]);
        all_orders!(gathered, [0.3, -1.2, 0.8]);
    }
}

/// ndarray's joins (`concatenate!`, `stack!`), reshapes, `zip_mut_with` and loops over
/// mutable rows, at every order.
mod array_forms {
    use mochi::prelude::*;
    use ndarray::{Array1, Array2, Axis};

    #[differentiable(higher_order)]
    pub fn concat_stack(x: &[f64]) -> f64 {
        let a = Array1::from(x[..3].to_vec());
        let b = Array1::from(x[3..].to_vec());
        let c = ndarray::concatenate![Axis(0), a, b];
        let st = ndarray::stack![Axis(0), a, b];
        let r = c.into_shape_with_order((3, 2)).unwrap();
        r.t().dot(&st.t()).sum() + st.mapv(|v| v * v).sum()
    }

    #[differentiable(higher_order)]
    pub fn zip_mut(x: &[f64]) -> f64 {
        let mut a = Array1::from(x[..3].to_vec());
        let b = Array1::from(x[3..].to_vec());
        a.zip_mut_with(&b, |u, &v| *u = *u * v + v * v);
        a.mapv(|t| t.cos()).sum()
    }

    #[differentiable(higher_order)]
    pub fn nd_rows_loop(x: &[f64]) -> f64 {
        let mut a = Array2::from_shape_vec((2, 3), x.to_vec()).unwrap();
        for mut row in a.rows_mut() {
            let m = row.sum() / 3.0;
            row.mapv_inplace(|v| v - m);
        }
        let mut s = 0.0;
        for row in a.rows() {
            s += row.dot(&row).sqrt();
        }
        s
    }

    mod t {
        use crate::all_orders;
        all_orders!(concat_stack, [0.3, 1.2, -0.4, 0.5, -0.9, 0.7]);
        all_orders!(zip_mut, [0.3, 1.2, -0.4, 0.5, -0.9, 0.7]);
        all_orders!(nd_rows_loop, [0.3, 1.2, -0.4, 0.5, -0.9, 0.7]);
    }
}

/// ndarray's idiom for joining a `Vec` of arrays: their views collected into a `Vec`
/// (`heads.iter().map(|a| a.view()).collect()`, `.map(Array1::view)`), then
/// `concatenate` or `stack`, bound first or written in the call.
mod joined_lists {
    use mochi::prelude::*;
    use ndarray::{Array1, Array2, Axis};

    /// Two "heads", each a product of a slice of the input with a fixed matrix, joined
    /// side by side; the mean square of the joined matrix plus a weighted sum.
    #[differentiable(higher_order)]
    pub fn joined_heads(x: &[f64]) -> f64 {
        let a = Array2::from_shape_vec((2, 2), x[..4].to_vec()).unwrap();
        let mut heads = Vec::new();
        for h in 0..2 {
            let w = Array2::from_shape_fn((2, 2), |(i, j)| (i + 2 * j + h) as f64 * 0.5 - 0.4);
            heads.push(a.dot(&w).mapv(|v| v.tanh()));
        }
        let views: Vec<_> = heads.iter().map(|a| a.view()).collect();
        let cat = ndarray::concatenate(Axis(1), &views).unwrap();
        let weights = Array2::from_shape_fn((2, 4), |(i, j)| 1.0 + (i * 4 + j) as f64 * 0.1);
        cat.mapv(|v| v * v).mean().unwrap() + (&cat * &weights).sum() * x[4]
    }

    /// Rows made by a chain, stacked into a matrix by views written in the call.
    #[differentiable(higher_order)]
    pub fn stacked_rows(x: &[f64]) -> f64 {
        let v = Array1::from(x.to_vec());
        let rows: Vec<Array1<f64>> = (1..4).map(|k| v.mapv(|t| (t * k as f64).sin())).collect();
        let m =
            ndarray::stack(Axis(0), &rows.iter().map(Array1::view).collect::<Vec<_>>()).unwrap();
        m.t().dot(&m).sum() + m.column(1).sum()
    }

    pub fn joined_heads_by_hand(x: &[f64]) -> f64 {
        let mut cat = [[0.0; 4]; 2];
        for h in 0..2 {
            for i in 0..2 {
                for j in 0..2 {
                    let dot: f64 = (0..2)
                        .map(|k| x[i * 2 + k] * ((k + 2 * j + h) as f64 * 0.5 - 0.4))
                        .sum();
                    cat[i][h * 2 + j] = dot.tanh();
                }
            }
        }
        let mut sq = 0.0;
        let mut weighted = 0.0;
        for i in 0..2 {
            for j in 0..4 {
                sq += cat[i][j] * cat[i][j];
                weighted += cat[i][j] * (1.0 + (i * 4 + j) as f64 * 0.1);
            }
        }
        sq / 8.0 + weighted * x[4]
    }

    #[test]
    fn values_by_hand() {
        let x = [0.3, -1.1, 0.8, 0.45, -0.7];
        let by_hand = joined_heads_by_hand(&x);
        assert!(
            (joined_heads(&x) - by_hand).abs() < 1e-13,
            "{} against {by_hand}",
            joined_heads(&x)
        );
        // Rows rₖ = sin(k y): MᵀM summed is Σₖ (Σⱼ rₖⱼ)², plus the second column's sum.
        let y = [0.2, 0.9, -0.5];
        let rows: Vec<Vec<f64>> = (1..4)
            .map(|k| y.iter().map(|t| (t * k as f64).sin()).collect())
            .collect();
        let want = rows
            .iter()
            .map(|r| r.iter().sum::<f64>().powi(2))
            .sum::<f64>()
            + rows.iter().map(|r| r[1]).sum::<f64>();
        assert!((stacked_rows(&y) - want).abs() < 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(joined_heads, [0.3, -1.1, 0.8, 0.45, -0.7]);
        all_orders!(stacked_rows, [0.2, 0.9, -0.5]);
    }
}

/// Structs folded and handed on as users write them: a fold from an associated
/// constant over an array literal of them (`[a, b, c].iter().fold(P2::ZERO, |acc, q| acc
/// + *q)`), an element given to its own method (`v.dot(v)`), a `&self` method calling
/// one that takes `self` (`self.conj()`), and a chain over a slice of enums.
mod structs_folded_and_handed_on {
    use mochi::prelude::*;
    use std::ops::{Add, Mul};

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct P2 {
        pub x: f64,
        pub y: f64,
    }

    #[differentiable(higher_order)]
    impl Add for P2 {
        type Output = P2;
        fn add(self, o: P2) -> P2 {
            P2 {
                x: self.x + o.x,
                y: self.y + o.y,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Mul<f64> for P2 {
        type Output = P2;
        fn mul(self, s: f64) -> P2 {
            P2 {
                x: self.x * s,
                y: self.y * s,
            }
        }
    }

    #[differentiable(higher_order)]
    impl P2 {
        pub const ZERO: P2 = P2 { x: 0.0, y: 0.0 };

        pub fn dot_with(&self, o: &P2) -> f64 {
            self.x * o.x + self.y * o.y
        }

        /// The mirror image in the x axis, taking `self` by value.
        pub fn flipped(self) -> P2 {
            P2 {
                x: self.x,
                y: -self.y,
            }
        }

        /// ⟨p, flip(p)⟩ scaled by k: a `&self` method calling one that takes `self`.
        pub fn flip_dot(&self, k: f64) -> f64 {
            self.dot_with(&self.flipped()) * k
        }
    }

    /// The centroid of three points by a fold over an array literal from `P2::ZERO`, and
    /// the points' distances from it.
    #[allow(clippy::useless_vec)]
    #[differentiable(higher_order)]
    pub fn centred_spread(p: &[f64]) -> f64 {
        let a = P2 { x: p[0], y: p[1] };
        let b = P2 { x: p[2], y: p[3] };
        let c = P2 { x: p[4], y: p[5] };
        let centroid = [a, b, c].iter().fold(P2::ZERO, |acc, q| acc + *q) * (1.0 / 3.0);
        let pts = vec![a, b, c];
        let weighted = pts.iter().copied().fold(P2::ZERO, |acc, q| acc + q * q.x);
        let mut s = 0.0;
        for q in [a, b, c] {
            let d = q + centroid * -1.0;
            s += d.dot_with(&d);
        }
        s + weighted.dot_with(&centroid) + a.flip_dot(p[5])
    }

    /// Σ ⟨vᵢ, vᵢ⟩·k² over a slice of points: each element handed to its own method.
    #[differentiable]
    pub fn self_dots(vs: &[P2], k: f64) -> f64 {
        vs.iter().map(|v| v.dot_with(v) * k.powi(2)).sum()
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Tile {
        Square { side: f64 },
        Strip { w: f64, h: f64 },
    }

    #[differentiable]
    impl Tile {
        pub fn tile_area(&self) -> f64 {
            match self {
                Tile::Square { side } => side * side,
                Tile::Strip { w, h } => w * h,
            }
        }
    }

    /// Σ area·k² + k over a slice of enums given as an argument (an enum is a choice,
    /// without a derivative: the gradient is in `k`).
    #[differentiable]
    pub fn tiles_scaled(tiles: &[Tile], k: f64) -> f64 {
        tiles.iter().map(|t| t.tile_area() * k.powi(2) + k).sum()
    }

    #[test]
    fn values_and_gradients_by_hand() {
        let p = [0.3, 0.5, -0.2, 1.1, 0.7, -0.4];
        let (cx, cy): (f64, f64) = ((p[0] + p[2] + p[4]) / 3.0, (p[1] + p[3] + p[5]) / 3.0);
        let spread: f64 = (0..3)
            .map(|i| (p[2 * i] - cx).powi(2) + (p[2 * i + 1] - cy).powi(2))
            .sum();
        let (wx, wy) = (0..3).fold((0.0, 0.0), |(sx, sy), i| {
            (sx + p[2 * i] * p[2 * i], sy + p[2 * i + 1] * p[2 * i])
        });
        let want = spread + wx * cx + wy * cy + (p[0] * p[0] - p[1] * p[1]) * p[5];
        let got = centred_spread(&p);
        assert!((got - want).abs() < 1e-13, "{got} against {want}");

        let vs = [P2 { x: 0.3, y: 0.4 }, P2 { x: -1.0, y: 2.0 }];
        let (dvs, dk) = self_dots::gradient(&vs, 1.5);
        // ∂/∂vᵢ = 2vᵢk², ∂/∂k = 2k Σ|vᵢ|².
        assert!(
            (dvs[0].x - 2.0 * 0.3 * 2.25).abs() < 1e-13
                && (dvs[1].y - 2.0 * 2.0 * 2.25).abs() < 1e-13
        );
        assert!((dk - 2.0 * 1.5 * (0.25 + 5.0)).abs() < 1e-12, "{dk}");

        let tiles = [Tile::Square { side: 0.5 }, Tile::Strip { w: 1.0, h: 2.0 }];
        let (_, dk) = tiles_scaled::gradient(&tiles, 1.5);
        assert!((dk - (2.0 * 1.5 * 2.25 + 2.0)).abs() < 1e-12, "{dk}");
        assert!((tiles_scaled(&tiles, 1.5) - (2.25 * 2.25 + 3.0)).abs() < 1e-13);

        // The method taking `self` reached from a `&self` method, and its Hessian.
        let q = P2 { x: 0.7, y: -0.3 };
        let (dq, dk) = q.flip_dot_gradient(2.0);
        assert!((dq.x - 2.8).abs() < 1e-13 && (dq.y - 1.2).abs() < 1e-13);
        assert!((dk - (0.49 - 0.09)).abs() < 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(centred_spread, [0.3, 0.5, -0.2, 1.1, 0.7, -0.4]);
    }
}

/// A float alias in signatures and bodies (`type Real = f64;`: `-> Real`, `x: Real`,
/// `let r: Real`, `x as Real`), called from a function whose Hessian goes through them.
mod float_aliases {
    use mochi::prelude::*;

    type Real = f64;
    type Mat2 = [[f64; 2]; 2];

    #[differentiable(higher_order)]
    pub fn det2(m: &Mat2) -> Real {
        m[0][0] * m[1][1] - m[0][1] * m[1][0]
    }

    #[differentiable(higher_order)]
    pub fn polar_mix(x: Real, y: Real) -> Real {
        let r: Real = x.hypot(y);
        let s = x as Real * 0.5;
        r * s.exp() - (y / r).asin()
    }

    #[differentiable(higher_order)]
    pub fn aliased(p: &[f64]) -> f64 {
        let m: Mat2 = [[p[0], p[1]], [p[2], p[3]]];
        p[0] + det2(&m).ln() + polar_mix(p[1], p[2])
    }

    #[test]
    fn value_by_hand() {
        let p = [2.0, 0.5, 0.3, 1.5];
        let r = (0.25f64 + 0.09).sqrt();
        let want = 2.0 + (3.0f64 - 0.15).ln() + r * 0.25f64.exp() - (0.3 / r).asin();
        assert!((aliased(&p) - want).abs() < 1e-13);
        // ∂/∂y of polar_mix at (x, y): (y/r)·e^{x/2} − (1/r − y²/r³)/√(1 − y²/r²).
        let (x, y) = (0.5f64, 0.3f64);
        let g = polar_mix::gradient(x, y);
        let q = y / r;
        let want_y = q * (x * 0.5).exp() - (1.0 / r - y * y / (r * r * r)) / (1.0 - q * q).sqrt();
        assert!((g.1 - want_y).abs() < 1e-12, "{} against {want_y}", g.1);
    }

    mod t {
        use crate::all_orders;
        all_orders!(aliased, [2.0, 0.5, 0.3, 1.5]);
    }
}

/// `let`-`else` taking an option of a pair apart (`let Some((first, rest)) =
/// x.split_first() else { .. };`, `split_last`, a helper's `Option<(f64, f64)>`), and
/// `return *first;` of a binding to an element, and a branch whose value is one
/// (`[a] => *a` matching a chunk).
mod let_else_pairs {
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    pub fn head_times_rest(x: &[f64]) -> f64 {
        let Some((first, rest)) = x.split_first() else {
            return 0.0;
        };
        let Some((second, _)) = rest.split_first() else {
            return *first;
        };
        first * second + first * rest.iter().map(|v| v * v).sum::<f64>()
    }

    #[differentiable(higher_order)]
    pub fn last_times_max(x: &[f64]) -> f64 {
        let Some((&last, init)) = x.split_last() else {
            return 0.0;
        };
        let m = init.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        last * m + last.sin()
    }

    #[differentiable(higher_order)]
    pub fn product_and_sum(x: &[f64]) -> Option<(f64, f64)> {
        if x.len() < 2 {
            return None;
        }
        Some((x[0] * x[1], x[0] + x[1]))
    }

    #[differentiable(higher_order)]
    pub fn pair_from_helper(x: &[f64]) -> f64 {
        let Some((p, s)) = product_and_sum(x) else {
            return x.iter().sum();
        };
        p * s + x[x.len() - 1].exp()
    }

    /// A sub-slice converted to a borrowed array and to one by value.
    #[differentiable(higher_order)]
    pub fn arrays_from_slices(x: &[f64]) -> f64 {
        let a: &[f64; 2] = x[1..3].try_into().unwrap();
        let b: [f64; 2] = x[..2].try_into().expect("two");
        a[0] * a[1] + b[0] * b[0] * a[1]
    }

    #[differentiable(higher_order)]
    pub fn chunk_products(x: &[f64]) -> f64 {
        x.chunks(2)
            .map(|c| match c {
                [a, b] => a * b,
                [a] => *a,
                _ => 0.0,
            })
            .sum()
    }

    /// Both ends by slice patterns: `&[a, b]` of a sub-slice, `&[.., y, z]` of the slice
    /// itself (before 2026-12-05 the second was "a `match` arm or `if let` pattern that
    /// binds parts of a differentiable value … is not supported").
    #[differentiable(higher_order)]
    pub fn slice_ends(x: &[f64]) -> f64 {
        let &[a, b] = &x[..2] else {
            return 0.0;
        };
        let &[.., y, z] = x else {
            return 0.0;
        };
        a * b + (y - z).powi(2) + a.exp() * z
    }

    #[differentiable]
    pub fn first_or_product(x: &[f64]) -> f64 {
        let first = &x[0];
        if x.len() < 2 {
            return *first;
        }
        first * x[1]
    }

    #[test]
    fn values_and_short_inputs() {
        let x = [0.5, 1.5, 2.0];
        assert!((head_times_rest(&x) - (0.75 + 0.5 * 6.25)).abs() < 1e-13);
        assert!((last_times_max(&x) - (3.0 + 2.0f64.sin())).abs() < 1e-13);
        assert!((pair_from_helper(&x) - (0.75 * 2.0 + 2.0f64.exp())).abs() < 1e-13);
        // The short paths, and their gradients.
        assert_eq!(head_times_rest(&[0.7]), 0.7);
        assert_eq!(head_times_rest::gradient(&[0.7]), vec![1.0]);
        assert_eq!(head_times_rest::gradient(&[]), Vec::<f64>::new());
        assert_eq!(pair_from_helper::gradient(&[0.7]), vec![1.0]);
        assert_eq!(first_or_product::gradient(&[0.7]), vec![1.0]);
        assert_eq!(first_or_product::gradient(&[0.5, 1.5]), vec![1.5, 0.5]);
    }

    mod t {
        use crate::all_orders;
        all_orders!(head_times_rest, [0.5, 1.5, 2.0, -0.4]);
        all_orders!(last_times_max, [0.5, 1.5, -0.3, 2.0]);
        all_orders!(pair_from_helper, [0.5, 1.5, 2.0]);
        all_orders!(arrays_from_slices, [0.5, 1.5, 2.0, -0.3]);
        all_orders!(chunk_products, [0.5, 1.5, 2.0, -0.3, 0.7]);
        all_orders!(slice_ends, [0.3, 0.5, 0.7, 1.1]);

        #[test]
        fn slice_ends_by_hand() {
            let x = [0.3, 0.5, 0.7, 1.1];
            let (a, b, y, z) = (0.3f64, 0.5, 0.7, 1.1);
            let want = [b + a.exp() * z, a, 2.0 * (y - z), -2.0 * (y - z) + a.exp()];
            let g = super::slice_ends::gradient(&x);
            for k in 0..4 {
                assert!((g[k] - want[k]).abs() < 1e-14, "{g:?}");
            }
        }

        #[test]
        fn chunk_products_by_hand() {
            let x = [0.5, 1.5, 2.0, -0.3, 0.7];
            assert!((super::chunk_products(&x) - (0.75 - 0.6 + 0.7)).abs() < 1e-13);
            assert_eq!(
                super::chunk_products::gradient(&x),
                vec![1.5, 0.5, -0.3, 2.0, 1.0]
            );
        }

        #[test]
        fn arrays_from_slices_by_hand() {
            let x = [0.5, 1.5, 2.0, -0.3];
            assert!((super::arrays_from_slices(&x) - (3.0 + 0.25 * 2.0)).abs() < 1e-13);
            let g = super::arrays_from_slices::gradient(&x);
            assert_eq!(g, vec![2.0 * 0.5 * 2.0, 2.0, 1.5 + 0.25, 0.0]);
        }
    }
}

/// A borrowed fixed-size array of rows (`&[[f64; 2]; 4]`, a Bezier curve's control
/// points) as an argument: its gradient, and its generic form (the rows are data there,
/// so the Hessian is over the scalar argument).
mod borrowed_array_rows {
    use mochi::prelude::*;

    #[differentiable]
    pub fn bezier_radius(p: &[[f64; 2]; 4], t: f64) -> f64 {
        let u = 1.0 - t;
        let w = [u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t];
        let (mut x, mut y) = (0.0, 0.0);
        for k in 0..4 {
            x += w[k] * p[k][0];
            y += w[k] * p[k][1];
        }
        (x * x + y * y).sqrt()
    }

    #[test]
    fn gradient_and_hessian_match_differences() {
        let p = [[0.0, 0.0], [0.3, 1.0], [0.8, 1.2], [1.0, 0.5]];
        let (dp, dt) = bezier_radius::gradient(&p, 0.4);
        let h = 1e-6;
        let fd = (bezier_radius(&p, 0.4 + h) - bezier_radius(&p, 0.4 - h)) / (2.0 * h);
        assert!((dt - fd).abs() < 1e-6, "{dt} against {fd}");
        for k in 0..4 {
            for c in 0..2 {
                let (mut up, mut down) = (p, p);
                up[k][c] += h;
                down[k][c] -= h;
                let fd = (bezier_radius(&up, 0.4) - bezier_radius(&down, 0.4)) / (2.0 * h);
                assert!(
                    (dp[k][c] - fd).abs() < 1e-6,
                    "p[{k}][{c}]: {} against {fd}",
                    dp[k][c]
                );
            }
        }
        let hm = bezier_radius::hessian(&p, 0.4);
        assert_eq!(hm.nrows(), 1);
        let g = |t: f64| bezier_radius::gradient(&p, t).1;
        let fd = (g(0.4 + 1e-5) - g(0.4 - 1e-5)) / 2e-5;
        assert!(
            (hm[[0, 0]] - fd).abs() < 1e-5,
            "{} against {fd}",
            hm[[0, 0]]
        );
    }
}

/// Elements of array fields of structs in a slice written in place (`bodies[i].vel[0] +=
/// ..`, `b.pos[k] += ..` of `iter_mut().zip(..)`): a small physics step.
mod fields_of_elements {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Body {
        pub pos: [f64; 2],
        pub vel: [f64; 2],
    }

    #[differentiable]
    pub fn kick(bodies: &mut [Body], dt: f64) {
        for i in 0..bodies.len() {
            for k in 0..2 {
                bodies[i].vel[k] -= dt * bodies[i].pos[k];
            }
        }
    }

    #[differentiable]
    pub fn drift(bodies: &mut [Body], dt: f64) {
        let damping = vec![1.0, 0.5];
        for (b, d) in bodies.iter_mut().zip(damping.iter()) {
            b.pos[0] += dt * d * b.vel[0];
            b.pos[1] += dt * b.vel[1];
        }
    }

    #[differentiable]
    pub fn energy_after(x: &[f64]) -> f64 {
        let mut bodies: Vec<Body> = x
            .chunks(4)
            .map(|c| Body {
                pos: [c[0], c[1]],
                vel: [c[2], c[3]],
            })
            .collect();
        for _ in 0..3 {
            kick(&mut bodies, 0.1);
            drift(&mut bodies, 0.1);
        }
        let mut e = 0.0;
        for b in &bodies {
            e += 0.5 * (b.vel[0] * b.vel[0] + b.vel[1] * b.vel[1]);
            e += 0.5 * (b.pos[0] * b.pos[0] + b.pos[1] * b.pos[1]);
        }
        e
    }

    #[test]
    fn gradient_matches_differences() {
        let x = [0.3, -0.2, 1.0, 0.5, -0.7, 0.4, 0.2, -1.1];
        let g = energy_after::gradient(&x);
        crate::common::assert_gradient_matches(energy_after, &g, &x);
    }
}

/// A marked method of an enum of the user's, called on a local bound to a variant.
mod enum_locals {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Act {
        Relu,
        Tanh,
        Leaky(f64),
    }

    impl Act {
        #[differentiable]
        pub fn apply(&self, v: f64) -> f64 {
            match self {
                Act::Relu => v.max(0.0),
                Act::Tanh => v.tanh(),
                Act::Leaky(a) => {
                    if v > 0.0 {
                        v
                    } else {
                        a * v
                    }
                }
            }
        }
    }

    #[differentiable]
    pub fn activations(p: &[f64]) -> f64 {
        let a = Act::Tanh;
        let b = Act::Leaky(0.1);
        let c = Act::Relu;
        a.apply(p[0] * p[1]) + b.apply(p[1] - 2.0) + c.apply(p[0] + p[1])
    }

    #[test]
    fn gradient_matches_differences() {
        let p = [0.4, 0.9];
        let g = activations::gradient(&p);
        crate::common::assert_gradient_matches(activations, &g, &p);
    }
}

/// Chains, loops and `zip`s whose sequence is the value a call returns: a helper's
/// `Vec` (`softmax(z).iter().map(..)`), a method's (`l.forward(&x).iter()`), taken by
/// `iter()`, `into_iter()` or by value, collected by a typed `let`, an assignment or the
/// function's tail.
mod chains_on_call_results {
    use mochi::prelude::*;

    #[differentiable]
    pub fn softmax(z: &[f64]) -> Vec<f64> {
        let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        e.iter().map(|v| v / s).collect()
    }

    #[differentiable]
    pub fn scaled(x: &[f64], s: f64) -> Vec<f64> {
        x.iter().map(|v| v * s).collect()
    }

    #[differentiable]
    pub fn entropy(x: &[f64]) -> f64 {
        -softmax(x).iter().map(|p| p * p.ln()).sum::<f64>()
    }

    #[differentiable]
    pub fn collected_by_let(x: &[f64]) -> f64 {
        let h: Vec<f64> = scaled(x, 0.7).iter().map(|v| v.tanh()).collect();
        let g = scaled(x, -1.2)
            .iter()
            .map(|v| v.exp())
            .collect::<Vec<f64>>();
        h[0] * h[1] + h[2] * g[3]
    }

    #[differentiable]
    pub fn collected_by_assignment(x: &[f64]) -> f64 {
        let mut h = x.to_vec();
        for _ in 0..2 {
            h = scaled(&h, 0.9).iter().map(|v| v.sin()).collect();
        }
        h.iter().map(|v| v * v).sum()
    }

    #[differentiable]
    pub fn collected_as_tail(x: &[f64], a: f64) -> Vec<f64> {
        scaled(x, a).iter().map(|v| v.sin()).collect()
    }

    #[differentiable]
    pub fn loops_over_results(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for v in scaled(x, 0.8).iter() {
            s += v.cos();
        }
        for v in scaled(x, -0.5) {
            s += v * v * v;
        }
        for (i, v) in softmax(x).into_iter().enumerate() {
            s += (i as f64 + 1.0) * v;
        }
        s
    }

    #[differentiable]
    pub fn zipped_with_results(x: &[f64]) -> f64 {
        let mut s: f64 = x
            .iter()
            .zip(scaled(x, 1.5).iter())
            .map(|(u, v)| u * v.sin())
            .sum();
        for (u, v) in scaled(x, 0.3).iter().zip(softmax(x)) {
            s += u * v;
        }
        s
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Layer {
        pub w: Vec<f64>,
        pub b: Vec<f64>,
    }

    impl Layer {
        #[differentiable]
        pub fn forward(&self, x: &[f64]) -> Vec<f64> {
            let n = x.len();
            let mut y = self.b.clone();
            for o in 0..y.len() {
                for i in 0..n {
                    y[o] += self.w[o * n + i] * x[i];
                }
            }
            y
        }

        #[differentiable]
        pub fn activated(&self, x: &[f64]) -> f64 {
            self.forward(x).iter().map(|v| v.tanh()).sum()
        }
    }

    #[differentiable]
    pub fn method_results(p: &[f64]) -> f64 {
        let l = Layer {
            w: p[0..4].to_vec(),
            b: vec![0.1, -0.2],
        };
        let x = [0.5, p[4]];
        let h: Vec<f64> = l.forward(&x).iter().map(|&v| v.tanh()).collect();
        let mut s = h[0] * h[1] + l.forward(&x).iter().map(|v| v * v).sum::<f64>();
        for v in l.forward(&h) {
            s += v.sin();
        }
        s
    }

    /// A polynomial's terms, summed by a chain on the method's result, with its Hessian.
    #[derive(Clone, Debug, Tangent)]
    pub struct Poly {
        pub c: Vec<f64>,
    }

    #[differentiable(higher_order)]
    impl Poly {
        pub fn terms(&self, t: f64) -> Vec<f64> {
            let mut out = Vec::new();
            let mut p = 1.0;
            for k in 0..self.c.len() {
                out.push(self.c[k] * p);
                p *= t;
            }
            out
        }
        pub fn eval(&self, t: f64) -> f64 {
            self.terms(t).iter().sum()
        }
        pub fn energy(&self, t: f64) -> f64 {
            let sq: Vec<f64> = self.terms(t).iter().map(|v| v * v).collect();
            let mut e = 0.0;
            for v in self.terms(t) {
                e += v * t;
            }
            sq.iter().sum::<f64>() + e
        }
    }

    mod orders {
        use crate::all_orders;
        all_orders!(entropy, [0.3, -0.2, 0.9, 0.1]);
        all_orders!(collected_by_let, [0.3, -0.2, 0.9, 0.1]);
        all_orders!(collected_by_assignment, [0.3, -0.2, 0.9, 0.1]);
        all_orders!(loops_over_results, [0.3, -0.2, 0.9, 0.1]);
        all_orders!(zipped_with_results, [0.3, -0.2, 0.9, 0.1]);
    }

    #[test]
    fn tail_jacobian_matches_differences() {
        let (x, a) = ([0.3, -0.2, 0.9], 0.7);
        let (_, j) = collected_as_tail::jacobian(&x, a);
        assert_eq!(j.dim(), (3, 4));
        for i in 0..3 {
            for k in 0..3 {
                let want = if i == k { (x[i] * a).cos() * a } else { 0.0 };
                assert!(
                    (j[[i, k]] - want).abs() < 1e-12,
                    "J[{i},{k}] = {}",
                    j[[i, k]]
                );
            }
            let want = (x[i] * a).cos() * x[i];
            assert!((j[[i, 3]] - want).abs() < 1e-12, "J[{i},3] = {}", j[[i, 3]]);
        }
    }

    #[test]
    fn method_result_gradient_matches_differences() {
        let p = [0.4, 0.9, -0.3, 0.5, 0.7];
        let g = method_results::gradient(&p);
        crate::common::assert_gradient_matches(method_results, &g, &p);
        let l = Layer {
            w: vec![0.4, 0.9, -0.3, 0.5],
            b: vec![0.1, -0.2],
        };
        let (gl, gx) = l.activated_gradient(&[0.5, -0.6]);
        crate::common::assert_gradient_matches(|x| l.activated(x), &gx, &[0.5, -0.6]);
        let f = |w: &[f64]| {
            Layer {
                w: w.to_vec(),
                b: l.b.clone(),
            }
            .activated(&[0.5, -0.6])
        };
        crate::common::assert_gradient_matches(f, &gl.w, &l.w);
    }

    #[test]
    fn method_result_hessian_matches_the_polynomial() {
        let p = Poly {
            c: vec![0.5, -1.0, 0.3],
        };
        let t = 0.8;
        let (gp, gt) = p.eval_gradient(t);
        assert!((gt - (-1.0 + 2.0 * 0.3 * t)).abs() < 1e-12);
        for (g, want) in gp.c.iter().zip([1.0, t, t * t]) {
            assert!((g - want).abs() < 1e-12, "{:?}", gp.c);
        }
        let h = p.eval_hessian(t);
        // Over (c0, c1, c2, t): ∂²/∂t² = 2 c2, ∂²/∂c2∂t = 2t, ∂²/∂c1∂t = 1.
        assert!((h[[3, 3]] - 0.6).abs() < 1e-12, "{h}");
        assert!((h[[2, 3]] - 2.0 * t).abs() < 1e-12, "{h}");
        assert!((h[[1, 3]] - 1.0).abs() < 1e-12, "{h}");
        assert!(h[[0, 3]].abs() < 1e-12, "{h}");
        let (gp, gt) = p.energy_gradient(t);
        crate::common::assert_gradient_matches(|q| p.energy(q[0]), &[gt], &[t]);
        crate::common::assert_gradient_matches(|c| Poly { c: c.to_vec() }.energy(t), &gp.c, &p.c);
    }
}

/// Structs named by one capital letter (`struct P`), which a function that does not
/// declare the letter as a type parameter takes for the user's type: a receiver of
/// its marked methods, a constructor's type, a struct literal's.
mod one_letter_types {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct P {
        pub x: f64,
        pub y: f64,
    }

    impl P {
        #[differentiable]
        pub fn norm2(&self) -> f64 {
            self.x * self.x + self.y * self.y
        }
    }

    #[differentiable]
    pub fn dist2(a: &P, b: &P) -> f64 {
        let d = P {
            x: a.x - b.x,
            y: a.y - b.y,
        };
        d.norm2()
    }

    #[differentiable]
    pub fn path_length(v: &[f64]) -> f64 {
        let pts: Vec<P> = (0..v.len() / 2)
            .map(|i| P {
                x: v[2 * i],
                y: v[2 * i + 1],
            })
            .collect();
        let mut s = 0.0;
        for w in pts.windows(2) {
            s += dist2(&w[0], &w[1]).sqrt();
        }
        s
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Q {
        pub a: f64,
        pub b: f64,
    }

    #[differentiable(higher_order)]
    impl Q {
        pub fn new(a: f64, b: f64) -> Q {
            Q { a, b }
        }
        pub fn plus(&self, o: &Q) -> Q {
            Q::new(self.a + o.a, self.b + o.b)
        }
        pub fn size(&self) -> f64 {
            (self.a * self.a + self.b * self.b).sqrt()
        }
    }

    #[differentiable(higher_order)]
    pub fn sizes(v: &[f64]) -> f64 {
        let q = Q::new(v[0], v[1]);
        let r = Q { a: v[2], b: 0.5 };
        q.plus(&r).size() * q.size()
    }

    /// A one-letter type parameter is still one.
    #[differentiable]
    #[allow(clippy::assign_op_pattern)]
    pub fn squares<T: mochi::Real>(x: &[T]) -> T {
        let mut s = x[0] * x[0];
        for i in 1..x.len() {
            s = s + x[i] * x[i];
        }
        s
    }

    mod orders {
        use crate::all_orders;
        all_orders!(sizes, [0.3, -0.2, 0.9]);
    }

    #[test]
    fn gradients_match_differences() {
        let v = [0.3, -0.2, 0.9, 0.1, 1.5, 0.7];
        let g = path_length::gradient(&v);
        crate::common::assert_gradient_matches(path_length, &g, &v);
        let (a, b) = (P { x: 0.3, y: 0.4 }, P { x: -0.1, y: 1.0 });
        let (ga, gb) = dist2::gradient(&a, &b);
        assert!(
            (ga.x - 0.8).abs() < 1e-12 && (ga.y + 1.2).abs() < 1e-12,
            "{ga:?}"
        );
        assert!(
            (gb.x + 0.8).abs() < 1e-12 && (gb.y - 1.2).abs() < 1e-12,
            "{gb:?}"
        );
        assert_eq!(squares::gradient(&[1.0f64, 2.0]), vec![2.0, 4.0]);
    }
}

/// A helper called with a value computed from a loop's element over a constant array
/// (`for &y in YS.iter() { lg(y + 1.0) }`, `for &y in &YS`, a local array of
/// literals): a constant argument, so the generic form calls the helper as written and
/// lifts its value, as it does for `lg(YS[i] + 1.0)`, the value read back as the
/// helper's float (`Unlift`: the twin's `YS` holds its scalar). Before, the caller had
/// no Hessian ("it calls `lg`, whose twin is not known").
mod constant_loop_arguments {
    use mochi::prelude::*;

    #[differentiable]
    pub fn lg(x: f64) -> f64 {
        let mut a = 1.0;
        for i in 1..3 {
            a += 0.5 / (x + i as f64);
        }
        a.ln() + x * x
    }

    /// Not marked: called on constants only.
    fn plain_weight(y: f64) -> f64 {
        1.0 + y * y
    }

    const YS: [f64; 3] = [1.0, 2.0, 0.5];

    #[differentiable]
    pub fn over_iter(b: &[f64]) -> f64 {
        let mut s = 0.0;
        for &y in YS.iter() {
            s += b[0] * y * lg(y + 1.0) + b[1].sin() * plain_weight(y);
        }
        s
    }

    #[differentiable]
    pub fn over_reference(b: &[f64]) -> f64 {
        let mut s = 0.0;
        for &y in &YS {
            s += (b[0] * lg(y)).tanh() * b[1];
        }
        s
    }

    #[differentiable]
    pub fn over_local_array(b: &[f64]) -> f64 {
        let ys = [0.25, 1.5];
        let mut s = 0.0;
        for y in ys {
            s += b[0] * b[1] * lg(2.0 * y);
        }
        s
    }

    const PTS: [[f64; 2]; 2] = [[1.0, 0.5], [-0.5, 2.0]];
    const IDX: [usize; 2] = [1, 0];

    /// Not marked: given a row of a constant, and an index.
    fn row_value(p: [f64; 2], s: f64) -> f64 {
        p[0] * s + p[1]
    }
    fn index_weight(i: usize) -> f64 {
        1.0 + i as f64
    }

    /// Rows of a constant given to a plain helper (before: a type error at the
    /// attribute, `[T; 2]` for `[f64; 2]`, which cost the gradient too), and an index
    /// from a constant of integers.
    #[differentiable]
    pub fn over_rows(b: &[f64]) -> f64 {
        let mut s = 0.0;
        for &p in PTS.iter() {
            s += b[0] * p[0] + (b[1] * row_value(p, 2.0)).sin();
        }
        for &i in &IDX {
            s += b[i] * b[i] * index_weight(i);
        }
        s
    }

    mod orders {
        use crate::all_orders;
        all_orders!(over_rows, [0.3, -0.7]);
        all_orders!(over_iter, [0.3, -0.7]);
        all_orders!(over_reference, [0.3, -0.7]);
        all_orders!(over_local_array, [0.3, -0.7]);
    }
}

/// A configuration of constants built in the body (`let hp = Hyper { l2: 0.01, clip:
/// 5.0 };`, a struct that need not derive `Tangent`): kept as written in the generic
/// form, its fields read lifted, so the function has its Hessian. Before: "it builds a
/// struct; mark it `#[differentiable(higher_order)]` …". And a constant struct defined
/// outside, read by field.
mod constant_configurations {
    use mochi::prelude::*;

    #[derive(Clone, Copy)]
    struct Hyper {
        l2: f64,
        clip: f64,
        steps: usize,
    }

    #[differentiable]
    pub fn logistic(w: &[f64]) -> f64 {
        let hp = Hyper {
            l2: 0.01,
            clip: 5.0,
            steps: 2,
        };
        let xs = [[0.5, 1.0], [-1.0, 0.3], [0.2, -0.7]];
        let ys = [1.0, 0.0, 1.0];
        let mut loss = 0.0;
        for (x, &y) in xs.iter().zip(ys.iter()) {
            let z = (w[0] * x[0] + w[1] * x[1]).clamp(-hp.clip, hp.clip);
            let p = 1.0 / (1.0 + (-z).exp());
            loss -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
        }
        for _ in 0..hp.steps {
            loss += hp.l2 * w.iter().map(|v| v * v).sum::<f64>();
        }
        loss
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Cfg {
        pub scale: f64,
        pub n: usize,
    }

    #[differentiable(higher_order)]
    pub fn scaled_sines(w: &[f64]) -> f64 {
        let cfg = Cfg { scale: 0.5, n: 2 };
        let mut s = 0.0;
        for i in 0..cfg.n {
            s += (w[i] * cfg.scale).sin() * w[cfg.n - 1 - i];
        }
        s
    }

    /// Not marked: takes the configuration.
    fn penalty(hp: &Hyper, v: f64) -> f64 {
        hp.l2 * v * v
    }

    /// The configuration given to a plain helper, with a constant.
    #[differentiable]
    pub fn configured_helper(w: &[f64]) -> f64 {
        let hp = Hyper {
            l2: 0.5,
            clip: 1.0,
            steps: 1,
        };
        (w[0] * w[1]).clamp(-hp.clip, hp.clip) + penalty(&hp, 3.0) * w[0]
    }

    const SETTINGS: Hyper = Hyper {
        l2: 0.1,
        clip: 2.0,
        steps: 2,
    };

    /// A constant struct defined outside, read by field. Before: type errors at the
    /// attribute (its float fields beside the scalar), which cost the gradient too.
    #[differentiable]
    pub fn module_settings(w: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..SETTINGS.steps {
            s += (w[i] * 3.0).clamp(-SETTINGS.clip, SETTINGS.clip) + SETTINGS.l2 * w[i] * w[i];
        }
        s
    }

    #[derive(Clone, Copy)]
    struct Pt {
        x: f64,
        y: f64,
    }

    const DATA: [Pt; 3] = [
        Pt { x: 0.0, y: 1.0 },
        Pt { x: 1.0, y: 0.5 },
        Pt { x: -0.5, y: 2.0 },
    ];

    /// Fields of the elements of a constant array of structs (`DATA[i].x`).
    #[differentiable]
    pub fn line_fit(w: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..DATA.len() {
            let r = w[0] * DATA[i].x + w[1] - DATA[i].y;
            s += r * r * (1.0 + w[0] * w[0]);
        }
        s
    }

    mod orders {
        use crate::all_orders;
        all_orders!(line_fit, [0.3, -0.4]);
        all_orders!(module_settings, [0.3, -0.4]);
        all_orders!(configured_helper, [0.3, -0.4]);
        all_orders!(logistic, [0.3, -0.4]);
        all_orders!(scaled_sines, [0.3, -0.4]);
    }
}

/// A chain collected inside `Some(..)` or `Ok(..)` as a helper's value (its tail, or a
/// `return`), in a function returning `Option<Vec<f64>>` or `Result<Vec<f64>, E>`.
/// Before: "no rule for `iter` with arguments `(&[f64],)`" and "the size for values of
/// type `[f64]` cannot be known", the `collect` having no type.
mod wrapped_collects {
    use mochi::prelude::*;

    #[differentiable]
    pub fn normalized(x: &[f64]) -> Option<Vec<f64>> {
        let n = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        if n == 0.0 {
            return None;
        }
        Some(x.iter().map(|v| v / n).collect())
    }

    #[differentiable]
    pub fn checked_logs(x: &[f64]) -> Result<Vec<f64>, String> {
        if x.iter().any(|v| *v <= -1.0) {
            return Err("log of a value at or below zero".to_string());
        }
        if x.is_empty() {
            return Ok(Vec::new());
        }
        Ok(x.iter().map(|v| (1.0 + v).ln()).collect())
    }

    #[differentiable]
    pub fn unwrapped(x: &[f64]) -> f64 {
        let u = normalized(x).unwrap();
        let s: f64 = u.iter().map(|v| v.exp()).sum();
        s + normalized(x)
            .unwrap()
            .iter()
            .map(|v| v * v * v)
            .sum::<f64>()
    }

    /// (Through the `Result` too, since its generic form gives `Result<Vec<T>, String>`.)
    #[differentiable]
    pub fn logs_product(x: &[f64]) -> f64 {
        let l = checked_logs(x).unwrap();
        l[0] * l[2] + l[1]
    }

    mod orders {
        use crate::all_orders;
        all_orders!(unwrapped, [0.3, -0.4, 0.9]);
        all_orders!(logs_product, [0.3, -0.4, 0.9]);
    }

    #[test]
    fn result_collect_gradient_matches_differences() {
        let x = [0.3, -0.4, 0.9];
        let g = logs_product::gradient(&x);
        crate::common::assert_gradient_matches(logs_product, &g, &x);
        assert!(checked_logs(&[-2.0]).is_err());
    }
}

/// A plain helper over integers returning a float (Enzyme's `mycos` with its factorial),
/// called where no cast makes its value the scalar: the caller keeps every order.
mod integer_helpers_returning_floats {
    use mochi::prelude::*;

    fn factorial_f(n: u32) -> f64 {
        (1..=n).map(|k| k as f64).product()
    }

    fn weight(i: usize) -> f64 {
        1.0 / (1 + i) as f64
    }

    #[differentiable]
    pub fn cos_series(x: &[f64]) -> f64 {
        let mut sum = 0.0;
        for n in 0..=8u32 {
            let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
            sum += sign * x[0].powi(2 * n as i32) / factorial_f(2 * n);
        }
        let mut w = 0.0;
        for i in 0..x.len() {
            w += weight(i) * x[i] * x[i];
        }
        sum * x[1] + w
    }

    /// GradBench's `llsq`: the sample point from integers, its sign by a marked helper
    /// given that (constant) point.
    fn t(i: usize, n: usize) -> f64 {
        -1.0 + i as f64 * 2.0 / (n as f64 - 1.0)
    }

    #[differentiable]
    fn sign(ti: f64) -> f64 {
        let mut s = 0.0;
        if ti > 0.0 {
            s = 1.0;
        }
        if ti < 0.0 {
            s = -1.0;
        }
        s
    }

    #[differentiable]
    pub fn llsq(x: &[f64]) -> f64 {
        let n = 7;
        let mut sum = 0.0;
        for i in 0..n {
            let ti = t(i, n);
            let mut residual = sign(ti);
            let mut power = 1.0;
            for xj in x.iter() {
                residual -= xj * power;
                power *= ti;
            }
            sum += residual * residual;
        }
        sum / 2.0
    }

    mod orders {
        use crate::all_orders;
        all_orders!(cos_series, [0.7, -0.4, 1.1]);
        all_orders!(llsq, [0.2, 1.1, -0.3]);
    }

    #[test]
    fn the_series_is_the_cosine() {
        // The series times x[1], and Σ x[i]² / (1 + i) = 0.49 + 0.5.
        let x = [0.7, 1.0, 0.0];
        assert!((cos_series(&x) - 0.7f64.cos() - 0.99).abs() < 1e-9);
    }
}

/// Searches through adapters (`skip(k).find(p)`, `rev().find(p)`, `map(f).find(p)`,
/// `take(n).find(p)`), searches taken out at once (`*…find(p).unwrap()`,
/// `.unwrap_or(&d)`), `filter(p).last().copied().unwrap_or(d)`.
// (`filter(p).last()` is the form users write, and the one tested.)
#[allow(clippy::double_ended_iterator_last)]
mod searches {
    use mochi::prelude::*;

    #[differentiable]
    pub fn found(x: &[f64]) -> f64 {
        let k = x.iter().position(|&v| v > 1.0).unwrap_or(0);
        let after = x
            .iter()
            .skip(k + 1)
            .find(|&&v| v < 0.0)
            .copied()
            .unwrap_or(0.0);
        let last_big = x.iter().rev().find(|v| **v > 0.5).copied().unwrap_or(1.0);
        let square = x.iter().map(|v| v * v).find(|v| *v > 0.2).unwrap_or(0.0);
        let first_neg = *x.iter().take(3).find(|v| **v < 0.0).unwrap();
        let by_ref = x.iter().find(|v| **v > 0.5).unwrap_or(&1.0);
        let derefed = *x.iter().skip(1).find(|v| **v > 0.5).unwrap_or(&1.0);
        let last_neg = x
            .iter()
            .filter(|v| **v < 0.0)
            .last()
            .copied()
            .unwrap_or(1.0);
        let stepped = x
            .iter()
            .step_by(2)
            .rfind(|v| **v > 0.0)
            .copied()
            .unwrap_or(0.0);
        x[k] * after + last_big * square + first_neg + by_ref * derefed + last_neg * stepped
    }

    /// Every search falls back to its default (none finds its element).
    #[differentiable]
    pub fn defaults(x: &[f64]) -> f64 {
        let a = x
            .iter()
            .skip(1)
            .find(|&&v| v > 10.0)
            .copied()
            .unwrap_or(2.0);
        let b = x
            .iter()
            .filter(|v| **v > 10.0)
            .last()
            .copied()
            .unwrap_or(3.0);
        let c = *x.iter().rev().find(|v| **v > 10.0).unwrap_or(&4.0);
        a * b * c * x[0] * x[1]
    }

    mod orders {
        use crate::all_orders;
        all_orders!(found, [0.3, 1.4, -0.5, 0.8, -0.2, 0.6]);
        all_orders!(defaults, [0.3, 1.4, -0.5]);
    }

    #[test]
    fn the_searches_find_what_the_iterators_find() {
        let x = [0.3, 1.4, -0.5, 0.8, -0.2, 0.6];
        // k = 1; after = -0.5; last_big = 0.6; square = 1.96; first_neg = -0.5;
        // by_ref = 1.4; derefed = 1.4; last_neg = -0.2; stepped = rfind of [0.3, -0.5,
        // -0.2] positive = 0.3.
        let want = 1.4 * -0.5 + 0.6 * 1.96 - 0.5 + 1.4 * 1.4 - 0.2 * 0.3;
        assert!((found(&x) - want).abs() < 1e-12, "{} {want}", found(&x));
        assert_eq!(defaults(&[0.3, 1.4, -0.5]), 24.0 * 0.3 * 1.4);
    }
}

/// `std::mem::swap` of locals, of buffers (a double-buffered stencil) and of `&mut`
/// parameters; `mem::replace`, `mem::take`; `v.swap(i, j)`.
mod mem_swaps {
    use mochi::prelude::*;

    #[differentiable]
    pub fn diffuse(u0: &[f64]) -> f64 {
        let n = u0.len();
        let mut cur = u0.to_vec();
        let mut next = vec![0.0; n];
        for _ in 0..4 {
            for i in 1..n - 1 {
                next[i] = cur[i] + 0.2 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
            }
            next[0] = cur[0];
            next[n - 1] = cur[n - 1];
            std::mem::swap(&mut cur, &mut next);
        }
        cur.iter().map(|v| v * v).sum()
    }

    #[differentiable]
    fn ordered(lo: &mut f64, hi: &mut f64) {
        if *lo > *hi {
            std::mem::swap(lo, hi);
        }
    }

    #[differentiable]
    pub fn scalars(x: &[f64]) -> f64 {
        let mut a = x[0];
        let mut b = x[1] * 2.0;
        if a < b {
            std::mem::swap(&mut a, &mut b);
        }
        let old = std::mem::replace(&mut a, x[2] * 3.0);
        let mut v = vec![x[0], x[1]];
        v.swap(0, 1);
        let t = std::mem::take(&mut v);
        let (mut p, mut q) = (x[2], x[0]);
        ordered(&mut p, &mut q);
        a * b + old * old + t[0] * 5.0 + t[1] + p * q.sin() + v.len() as f64
    }

    mod orders {
        use crate::all_orders;
        all_orders!(diffuse, [0.3, 1.4, -0.5, 0.8, -0.2, 0.6]);
        all_orders!(scalars, [0.3, 1.4, -0.5]);
    }

    #[test]
    fn the_swaps_move_the_values() {
        // a = 2.8 and b = 0.3 swapped, old = 2.8, a = -1.5, t = [1.4, 0.3], (p, q) =
        // (-0.5, 0.3) already in order, v emptied by `take`.
        let want = -1.5 * 0.3 + 2.8 * 2.8 + 1.4 * 5.0 + 0.3 + -0.5 * 0.3f64.sin();
        assert!((scalars(&[0.3, 1.4, -0.5]) - want).abs() < 1e-12);
    }
}

/// A `Vec<_>` collected from a `map` building tuple structs (named in capitals and a
/// digit, `P2`) or structs, under `higher_order`.
mod collected_structs {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct P2(pub f64, pub f64);

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Q2 {
        pub x: f64,
        pub y: f64,
    }

    #[differentiable(higher_order)]
    impl P2 {
        pub fn minus(&self, o: &P2) -> P2 {
            P2(self.0 - o.0, self.1 - o.1)
        }
        pub fn len_sq(&self) -> f64 {
            self.0 * self.0 + self.1 * self.1
        }
    }

    #[differentiable(higher_order)]
    pub fn polyline(x: &[f64]) -> f64 {
        let pts: Vec<_> = x.chunks(2).map(|c| P2(c[0], c[1])).collect();
        let mut total = 0.0;
        for w in pts.windows(2) {
            total += w[1].minus(&w[0]).len_sq().sqrt();
        }
        let P2(a, b) = pts[0];
        total + a * b
    }

    #[differentiable(higher_order)]
    pub fn products(x: &[f64]) -> f64 {
        let qs: Vec<_> = x.chunks(2).map(|c| Q2 { x: c[0], y: c[1] }).collect();
        qs.iter().map(|q| q.x * q.y.sin()).sum()
    }

    mod orders {
        use crate::all_orders;
        all_orders!(polyline, [0.3, 1.4, -0.5, 0.8, -0.2, 0.6]);
        all_orders!(products, [0.3, 1.4, -0.5, 0.8]);
    }
}

/// Forms found by ports of numerical code: a constant table of tuples with a `bool`
/// (an option book), a type alias of arrays under `higher_order`, a local array of rows
/// walked by a chain, a closure-taking helper given `&[a, b]`, a nested range collect
/// whose row closure is a block, a generic helper asking for `FloatConst`.
mod ported_numerics {
    use mochi::num_traits::{Float, FloatConst};
    use mochi::prelude::*;

    /// (strike, maturity, is a call)
    const BOOK: [(f64, f64, bool); 3] = [(0.9, 0.5, true), (1.1, 1.0, false), (1.0, 0.75, true)];

    #[differentiable]
    pub fn book(x: &[f64]) -> f64 {
        let (spot, rate) = (x[0], x[1]);
        let mut value = 0.0;
        for &(strike, t, is_call) in BOOK.iter() {
            let forward = spot * (rate * t).exp();
            let payoff = if is_call {
                forward - strike
            } else {
                strike - forward
            };
            value += payoff * payoff * t;
        }
        value
    }

    pub type Mat2 = [[f64; 2]; 2];

    #[differentiable(higher_order)]
    fn rotation(a: f64) -> Mat2 {
        let (s, c) = a.sin_cos();
        [[c, -s], [s, c]]
    }

    #[differentiable(higher_order)]
    fn apply(m: &Mat2, v: &[f64; 2]) -> [f64; 2] {
        let mut out = [0.0; 2];
        for i in 0..2 {
            for j in 0..2 {
                out[i] += m[i][j] * v[j];
            }
        }
        out
    }

    #[differentiable(higher_order)]
    pub fn rotated(x: &[f64]) -> f64 {
        let p = apply(&rotation(x[0]), &[x[1], x[2]]);
        p[0] * p[1] + p[0]
    }

    #[differentiable]
    pub fn charges(x: &[f64]) -> f64 {
        let rows = [[1.0, 1.0 - x[2]], [x[0], 0.5]];
        rows.iter()
            .map(|c| 1.0 / ((x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2) + 1.0).sqrt())
            .sum()
    }

    #[differentiable]
    fn euler<F: Fn(f64, &[f64]) -> Vec<f64>>(f: F, y0: &[f64], h: f64, steps: usize) -> Vec<f64> {
        let mut y = y0.to_vec();
        let mut t = 0.0;
        for _ in 0..steps {
            let k = f(t, &y);
            for i in 0..y.len() {
                y[i] += h * k[i];
            }
            t += h;
        }
        y
    }

    #[differentiable]
    pub fn oscillator(x: &[f64]) -> f64 {
        let w = x[0];
        let y = euler(|_t, s| vec![s[1], -w * s[0]], &[x[1], 0.0], 0.1, 10);
        y[0] * y[0] + y[1]
    }

    #[differentiable]
    pub fn gram(x: &[f64]) -> f64 {
        let n = x.len();
        let a: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                let xi = x[i];
                (0..n).map(|j| (xi - x[j]).cos() + xi * x[j]).collect()
            })
            .collect();
        a[0][1] * a[1][2] + a[2][2]
    }

    #[differentiable]
    fn wrapped_normal<T: Float + FloatConst>(x: T, s: T) -> T {
        -(x * x) / (s + s) - (T::TAU() * s).ln() / (T::one() + T::one())
    }

    #[differentiable]
    pub fn generic_const(x: &[f64]) -> f64 {
        wrapped_normal(x[0], 1.0 + x[1] * x[1]) + x[1]
    }

    mod orders {
        use crate::all_orders;
        all_orders!(book, [1.05, 0.03]);
        all_orders!(rotated, [0.4, 0.8, -0.3]);
        all_orders!(charges, [0.3, 0.7, 0.2]);
        all_orders!(oscillator, [1.3, 0.6]);
        all_orders!(gram, [0.3, -0.5, 0.9]);
        all_orders!(generic_const, [0.4, 0.7]);
    }

    /// `a` taken by value as `Vec<Vec<f64>>`: its Jacobian runs on copies.
    #[differentiable]
    pub fn solve2(a: Vec<Vec<f64>>, b: Vec<f64>) -> Vec<f64> {
        let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
        vec![
            (b[0] * a[1][1] - b[1] * a[0][1]) / det,
            (a[0][0] * b[1] - a[1][0] * b[0]) / det,
        ]
    }

    #[test]
    fn a_jacobian_with_rows_taken_by_value() {
        let a = vec![vec![2.0, 0.5], vec![0.25, 3.0]];
        let (y, j) = solve2::jacobian(a.clone(), vec![1.0, -1.0]);
        let det = 6.0 - 0.125;
        assert!((y[0] - (3.0 + 0.5) / det).abs() < 1e-12);
        // ∂x/∂b = A⁻¹.
        let inv = [[3.0 / det, -0.5 / det], [-0.25 / det, 2.0 / det]];
        for r in 0..2 {
            for c in 0..2 {
                assert!((j[[r, c]] - inv[r][c]).abs() < 1e-12, "{j:?}");
            }
        }
    }
}

/// `chunks_exact(n)` held in a variable and its `remainder()` (also `rchunks_exact`).
mod remainders {
    use mochi::prelude::*;

    #[differentiable]
    pub fn pairs_and_rest(x: &[f64]) -> f64 {
        let it = x.chunks_exact(2);
        let rem: f64 = it.remainder().iter().map(|v| v * v).sum();
        let mut s = 0.0;
        for c in it {
            s += c[0] * c[1].sin();
        }
        let head = x.rchunks_exact(3).remainder();
        s + rem * rem + head.iter().sum::<f64>() * x[0]
    }

    mod orders {
        use crate::all_orders;
        all_orders!(pairs_and_rest, [0.3, -0.4, 0.9, 1.2, -0.7]);
    }

    #[test]
    fn the_remainders_are_the_ends() {
        let x = [0.3, -0.4, 0.9, 1.2, -0.7];
        // Pairs (0.3, -0.4), (0.9, 1.2); remainder [-0.7]; rchunks_exact(3) leaves
        // [0.3, -0.4].
        let want = 0.3 * (-0.4f64).sin() + 0.9 * 1.2f64.sin() + 0.49 * 0.49 + (0.3 - 0.4) * 0.3;
        assert!((pairs_and_rest(&x) - want).abs() < 1e-12);
    }
}

/// Forms of a third batch of ports: a builder taking `mut self`, a fold over a `Vec` of
/// structs from a struct with an operator, a chain over structs reading fields of a
/// local, a marked `const fn`, rows of a constant table handed to a method taking a
/// slice, `windows(n).into_iter()`, a `match` of a choice as a function's value.
mod struct_programs {
    use mochi::prelude::*;
    use std::ops::{Add, Sub};

    #[derive(Clone, Debug, Tangent)]
    pub struct Schedule {
        pub lr: f64,
        pub decay: f64,
    }

    #[differentiable(higher_order)]
    impl Schedule {
        pub fn new(lr: f64) -> Self {
            Schedule { lr, decay: 1.0 }
        }
        pub fn with_decay(mut self, d: f64) -> Self {
            self.decay = d;
            self
        }
        pub fn at(&self, t: f64) -> f64 {
            self.lr * (-self.decay * t).exp()
        }
    }

    #[differentiable(higher_order)]
    pub fn schedule_area(x: &[f64]) -> f64 {
        let s = Schedule::new(x[0]).with_decay(x[1]);
        (1..=4).map(|k| s.at(k as f64 * 0.5)).sum::<f64>() * 0.5
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V2 {
        pub x: f64,
        pub y: f64,
    }

    #[differentiable(higher_order)]
    impl Add for V2 {
        type Output = V2;
        fn add(self, o: V2) -> V2 {
            V2 {
                x: self.x + o.x,
                y: self.y + o.y,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Sub for V2 {
        type Output = V2;
        fn sub(self, o: V2) -> V2 {
            V2 {
                x: self.x - o.x,
                y: self.y - o.y,
            }
        }
    }

    impl V2 {
        pub fn zero() -> Self {
            V2 { x: 0.0, y: 0.0 }
        }
    }

    #[differentiable(higher_order)]
    pub fn spread(p: &[f64]) -> f64 {
        let pts: Vec<V2> = p.chunks(2).map(|c| V2 { x: c[0], y: c[1] }).collect();
        let sum = pts.iter().fold(V2::zero(), |acc, &q| acc + q);
        let c = V2 {
            x: sum.x / 3.0,
            y: sum.y / 3.0,
        };
        pts.iter()
            .map(|q| {
                let d = *q - c;
                d.x * d.x + d.y * d.y
            })
            .sum::<f64>()
            + c.x * c.y
    }

    #[differentiable]
    const fn half(v: f64) -> f64 {
        v * 0.5
    }

    #[differentiable]
    pub fn uses_const_fn(x: &[f64]) -> f64 {
        half(x[0] * x[1]) + half(x[1]).sin()
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Lin {
        pub w: Vec<f64>,
    }

    impl Lin {
        #[differentiable]
        pub fn predict(&self, xi: &[f64]) -> f64 {
            self.w.iter().zip(xi).map(|(a, b)| a * b).sum::<f64>()
        }
    }

    const XS: [[f64; 2]; 3] = [[0.5, 1.0], [-0.3, 0.4], [1.1, -0.6]];
    const YS: [f64; 3] = [0.8, -0.1, 0.3];

    #[differentiable]
    pub fn lin_loss(x: &[f64]) -> f64 {
        let m = Lin { w: x.to_vec() };
        let mut s = 0.0;
        for (xi, &yi) in XS.iter().zip(YS.iter()) {
            let r = m.predict(xi) - yi;
            s += r * r;
        }
        s
    }

    // (`into_iter()` of an iterator is the form tested.)
    #[allow(clippy::useless_conversion)]
    #[differentiable]
    pub fn window_sums(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (i, w) in x.windows(2).into_iter().enumerate() {
            s += (i as f64 + 1.0) * w[0] * w[1];
        }
        s
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Shape {
        Circle { r: f64 },
        Square { a: f64 },
    }

    /// A function of a choice alone: its value (no derivative flows to the settings).
    #[differentiable]
    pub fn area(s: &Shape) -> f64 {
        match s {
            Shape::Circle { r } => std::f64::consts::PI * r * r,
            Shape::Square { a } => a * a,
        }
    }

    mod orders {
        use crate::all_orders;
        all_orders!(schedule_area, [0.5, 0.8]);
        all_orders!(spread, [0.3, 1.4, -0.5, 0.8, 0.2, -0.6]);
        all_orders!(uses_const_fn, [0.7, -0.4]);
        all_orders!(window_sums, [0.3, -0.4, 0.9, 1.2]);
    }

    #[test]
    fn rows_of_a_constant_given_to_a_method() {
        let x = [0.4, -0.2];
        let g = lin_loss::gradient(&x);
        crate::common::assert_gradient_matches(lin_loss, &g, &x);
    }

    #[test]
    fn the_value_of_a_choice() {
        assert_eq!(area(&Shape::Square { a: 3.0 }), 9.0);
        let (v, _) = area::value_and_gradient(&Shape::Circle { r: 1.0 });
        assert!((v - std::f64::consts::PI).abs() < 1e-15);
    }
}

/// `?` after `map_err(|e| ..)` reading the error, and `Box<dyn Error>` results built by
/// an early `return Err(Box::new(..))` and by `?`.
mod error_results {
    use mochi::prelude::*;

    #[derive(Debug)]
    pub struct Bad(pub usize);

    impl std::fmt::Display for Bad {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "bad value at {}", self.0)
        }
    }

    impl std::error::Error for Bad {}

    #[differentiable]
    pub fn scaled(x: &[f64], text: &str) -> Result<f64, String> {
        let k: f64 = text
            .trim()
            .parse::<f64>()
            .map_err(|e| format!("scale: {e}"))?;
        Ok(k * x.iter().map(|v| v * v).sum::<f64>())
    }

    #[differentiable]
    pub fn logs(x: &[f64], text: &str) -> Result<f64, Box<dyn std::error::Error>> {
        let mut s = 0.0;
        for (i, &v) in x.iter().enumerate() {
            if v <= 0.0 {
                return Err(Box::new(Bad(i)));
            }
            s += v.ln() * (i as f64 + 1.0);
        }
        let scale = text.parse::<f64>()?;
        Ok(s * scale)
    }

    #[test]
    fn gradients_and_errors() {
        let x = [0.5, 1.5];
        let (g, _) = scaled::gradient(&x, " 2.0 ").expect("parses");
        assert_eq!(g, vec![2.0, 6.0]);
        let e = scaled::gradient(&x, "two").expect_err("does not parse");
        assert!(e.starts_with("scale: "), "{e}");
        let (g, _) = logs::gradient(&x, "1.5").expect("positive");
        assert!((g[0] - 1.5 / 0.5).abs() < 1e-12 && (g[1] - 3.0 / 1.5).abs() < 1e-12);
        let e = logs::gradient(&[0.5, -1.0], "1.5").expect_err("a negative value");
        assert_eq!(e.to_string(), "bad value at 1");
        assert!(logs::gradient(&x, "x").is_err());
    }
}

/// Helpers returning a `Result` (its error an enum of the user's holding a float) or a
/// tuple with a count beside its floats: their callers keep every order.
mod fallible_helpers {
    use mochi::prelude::*;

    #[derive(Debug, Clone, PartialEq)]
    pub enum DomainError {
        Negative(f64),
    }

    #[differentiable]
    fn checked_sqrt(v: f64) -> Result<f64, DomainError> {
        if v < 0.0 {
            return Err(DomainError::Negative(v));
        }
        Ok(v.sqrt())
    }

    #[differentiable]
    fn stats(x: &[f64]) -> (f64, f64, usize) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let v = x.iter().map(|t| (t - m) * (t - m)).sum::<f64>() / n;
        let above = x.iter().filter(|t| **t > m).count();
        (m, v, above)
    }

    #[differentiable]
    pub fn with_fallbacks(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x {
            s += checked_sqrt(v).unwrap_or_else(|_| -v * 0.5);
            s += match checked_sqrt(v * v + 0.1) {
                Ok(r) => r.ln(),
                Err(_) => 0.0,
            };
        }
        let (m, var, above) = stats(x);
        s + m * var + above as f64
    }

    mod orders {
        use crate::all_orders;
        all_orders!(with_fallbacks, [0.7, -0.4, 1.3, -0.9, 0.5]);
    }

    #[test]
    fn the_error_holds_the_value() {
        assert_eq!(checked_sqrt(-2.0), Err(DomainError::Negative(-2.0)));
        assert_eq!(checked_sqrt(4.0), Ok(2.0));
    }
}

/// Loops whose head makes its sequence: `for v in &g(x)`, `for v in g(x)` by value,
/// `for (i, v) in g(x).iter().enumerate()`, `zip(&g(x))`, `for v in &vec![..]`, `for v in
/// [a, b]`.
mod loops_over_made_sequences {
    // `&vec![..]` is the form under test.
    #![allow(clippy::useless_vec)]
    use mochi::prelude::*;

    #[differentiable]
    pub fn scaled(x: &[f64], a: f64) -> Vec<f64> {
        x.iter().map(|v| v * a).collect()
    }

    #[differentiable]
    pub fn over_calls(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for v in &scaled(x, 3.0) {
            s += v.sin();
        }
        for v in scaled(x, x[0]) {
            s += v * v;
        }
        for (i, v) in scaled(x, 0.5).iter().enumerate() {
            s += (i as f64 + 1.0) * v.exp();
        }
        for (a, b) in x.iter().zip(&scaled(x, x[1])) {
            s += a * b;
        }
        for w in scaled(x, 2.0).windows(2) {
            s += w[0] * w[1];
        }
        for v in &vec![x[0] * x[1], x[2].cos()] {
            s += v * v;
        }
        for v in [x[1].sin(), x[0] * 0.5] {
            s += v * x[2];
        }
        s
    }

    mod orders {
        use crate::all_orders;
        all_orders!(over_calls, [0.3, -0.4, 0.9]);
    }

    #[test]
    fn the_loops_read_the_made_sequences() {
        let x: [f64; 3] = [0.3, -0.4, 0.9];
        let mut want = 0.0;
        for v in x {
            want += (3.0 * v).sin() + (x[0] * v).powi(2);
        }
        for (i, v) in x.iter().enumerate() {
            want += (i as f64 + 1.0) * (0.5 * v).exp() + v * (x[1] * v);
        }
        want += 4.0 * (x[0] * x[1] + x[1] * x[2]);
        want += (x[0] * x[1]).powi(2) + x[2].cos().powi(2);
        want += (x[1].sin() + x[0] * 0.5) * x[2];
        assert!((over_calls(&x) - want).abs() < 1e-12);
    }
}

/// Forms of a fourth batch of ports: an `Option` of a pair taken apart in `if let` and in
/// a `match` arm, the ends of sub-slices as options (`x[1..].first().copied()`,
/// `x[2..].last().map_or(..)`, `x[a..b].get(i)`), the pieces of a sub-slice
/// (`x[1..].chunks(2)`), a nested chain over pieces inside a method's chain, and a `mut`
/// struct given its own borrow (`v.dot(&v)`, `v = v.add(&v.cross(&b))`).
mod ported_batch_four {
    use mochi::prelude::*;

    #[differentiable]
    pub fn roots(a: f64, b: f64, c: f64) -> Option<(f64, f64)> {
        let d = b * b - 4.0 * a * c;
        if d < 0.0 {
            return None;
        }
        let s = d.sqrt();
        Some(((-b + s) / (2.0 * a), (-b - s) / (2.0 * a)))
    }

    #[differentiable]
    pub fn option_pairs_and_ends(x: &[f64]) -> f64 {
        let mut t = 0.0;
        if let Some((r1, r2)) = roots(1.0, x[0], x[1]) {
            t += r1 * r2 + r1 - r2;
        }
        t += match roots(1.0, x[1], x[0]) {
            Some((p, q)) => p * q.sin(),
            None => 0.0,
        };
        let mut s = 0.0;
        for c in x[1..].chunks(2) {
            s += c[0] * c[c.len() - 1];
        }
        let head = x[1..].first().copied().unwrap_or(0.0);
        let tail = x[2..].last().map_or(1.0, |v| v.cos());
        let mid = *x[1..3].get(1).unwrap_or(&0.0);
        let past = x[1..3].get(5).copied().unwrap_or(0.25);
        t + s + head * tail + mid * past
    }

    mod orders {
        use crate::all_orders;
        all_orders!(option_pairs_and_ends, [2.5, 0.7, -0.4, 0.9]);
    }

    #[test]
    fn the_pairs_and_ends_are_read() {
        let x: [f64; 4] = [2.5, 0.7, -0.4, 0.9];
        let s1 = (x[0] * x[0] - 4.0 * x[1]).sqrt();
        let (r1, r2) = ((-x[0] + s1) / 2.0, (-x[0] - s1) / 2.0);
        // x[1]² - 4·x[0] < 0: the match takes `None`.
        assert!(x[1] * x[1] - 4.0 * x[0] < 0.0);
        let chunks = x[1] * x[2] + x[3] * x[3];
        let want = r1 * r2 + r1 - r2 + chunks + x[1] * x[3].cos() + x[2] * 0.25;
        assert!((option_pairs_and_ends(&x) - want).abs() < 1e-12);
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V3 {
        pub x: f64,
        pub y: f64,
        pub z: f64,
    }

    #[differentiable(higher_order)]
    impl V3 {
        pub fn new(x: f64, y: f64, z: f64) -> V3 {
            V3 { x, y, z }
        }
        pub fn cross(&self, o: &V3) -> V3 {
            V3::new(
                self.y * o.z - self.z * o.y,
                self.z * o.x - self.x * o.z,
                self.x * o.y - self.y * o.x,
            )
        }
        pub fn add(&self, o: &V3) -> V3 {
            V3::new(self.x + o.x, self.y + o.y, self.z + o.z)
        }
        pub fn dot(&self, o: &V3) -> f64 {
            self.x * o.x + self.y * o.y + self.z * o.z
        }
        pub fn scale(&mut self, k: f64) {
            self.x *= k;
            self.y *= k;
            self.z *= k;
        }
    }

    /// Euler steps of a velocity turned by a field: `v` is `mut` and lent to its own
    /// methods' arguments, and scaled in place (`&mut self`).
    #[differentiable]
    pub fn self_lent_steps(p: &[f64]) -> f64 {
        let b = V3::new(0.3, p[1], 0.2);
        let mut v = V3::new(p[0], 0.5, p[2]);
        for _ in 0..3 {
            v = v.add(&v.cross(&b));
            v.scale(1.0 / (1.0 + 0.1 * v.x * v.x));
        }
        let w = v.cross(&v.add(&b));
        v.dot(&v) + w.dot(&b)
    }

    /// The same without the `&mut self` method (which has no generic form): every order.
    #[differentiable(higher_order)]
    pub fn self_lent(p: &[f64]) -> f64 {
        let b = V3::new(0.3, p[1], 0.2);
        let mut v = V3::new(p[0], 0.5, p[2]);
        for _ in 0..3 {
            v = v.add(&v.cross(&b));
        }
        let w = v.cross(&v.add(&b));
        v.dot(&v) + w.dot(&b)
    }

    mod struct_orders {
        use crate::all_orders;
        all_orders!(self_lent, [0.3, -0.7, 0.4]);
    }

    #[test]
    fn self_lent_steps_against_finite_differences() {
        let p = [0.3, -0.7, 0.4];
        let g = self_lent_steps::gradient(&p);
        crate::common::assert_gradient_matches(self_lent_steps, &g, &p);
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Clusters {
        pub centroids: Vec<f64>,
        pub dim: usize,
    }

    #[differentiable]
    impl Clusters {
        /// Each point's squared distance to its nearest centroid, summed.
        pub fn cost(&self, points: &[f64]) -> f64 {
            let d = self.dim;
            let mut total = 0.0;
            for p in points.chunks(d) {
                let best = self
                    .centroids
                    .chunks(d)
                    .map(|c| c.iter().zip(p).map(|(a, b)| (a - b) * (a - b)).sum::<f64>())
                    .fold(f64::INFINITY, f64::min);
                total += best;
            }
            total
        }
    }

    #[test]
    fn nearest_centroid_cost_against_finite_differences() {
        let c = Clusters {
            centroids: vec![0.1, 0.2, 1.5, -0.3],
            dim: 2,
        };
        let pts = [0.0, 0.1, 1.2, -0.5, 0.4, 0.6];
        // Nearest: c0 (0.02), c1 (0.13), c0 (0.25).
        assert!((c.cost(&pts) - (0.02 + 0.13 + 0.25)).abs() < 1e-12);
        let (dc, dp) = c.cost_gradient(&pts);
        let f = |cs: &[f64], ps: &[f64]| {
            Clusters {
                centroids: cs.to_vec(),
                dim: 2,
            }
            .cost(ps)
        };
        for j in 0..4 {
            let (mut u, mut w) = (c.centroids.clone(), c.centroids.clone());
            u[j] += 1e-6;
            w[j] -= 1e-6;
            let fd = (f(&u, &pts) - f(&w, &pts)) / 2e-6;
            assert!(
                (dc.centroids[j] - fd).abs() < 1e-6,
                "centroid {j}: {} vs {fd}",
                dc.centroids[j]
            );
        }
        for j in 0..6 {
            let (mut u, mut w) = (pts, pts);
            u[j] += 1e-6;
            w[j] -= 1e-6;
            let fd = (f(&c.centroids, &u) - f(&c.centroids, &w)) / 2e-6;
            assert!((dp[j] - fd).abs() < 1e-6, "point {j}: {} vs {fd}", dp[j]);
        }
    }
}

/// `std::iter::successors` with a fixed count (`nth(k).unwrap()`, `take(n)` then a
/// consumer), and a predicate method (`contains`) of a `mut` struct in a condition.
mod successors_and_predicates {
    use mochi::prelude::*;
    use std::iter::successors;

    #[differentiable]
    pub fn heron_and_geometric(x: &[f64]) -> f64 {
        let a = x[0];
        let root = successors(Some(1.0), |&t| Some(0.5 * (t + a / t)))
            .nth(6)
            .unwrap();
        let geo: f64 = std::iter::successors(Some(x[1]), |t| Some(*t * x[2]))
            .take(5)
            .sum();
        let weighted: f64 = successors(Some(x[2]), |t| Some(t * 0.5))
            .take(3)
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v * v)
            .sum();
        root * geo + weighted
    }

    mod orders {
        use crate::all_orders;
        all_orders!(heron_and_geometric, [2.0, 0.7, 0.4]);
    }

    #[test]
    fn the_sequences_have_their_values() {
        let x: [f64; 3] = [2.0, 0.7, 0.4];
        let geo: f64 = (0..5).map(|k| x[1] * x[2].powi(k)).sum();
        let weighted: f64 = (0..3)
            .map(|k| (k as f64 + 1.0) * (x[2] * 0.5f64.powi(k)).powi(2))
            .sum();
        // Heron's iteration from 1 reaches √2 to rounding in six steps.
        let want = 2f64.sqrt() * geo + weighted;
        assert!((heron_and_geometric(&x) - want).abs() < 1e-12);
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Interval {
        pub lo: f64,
        pub hi: f64,
    }

    #[differentiable]
    impl Interval {
        pub fn width(&self) -> f64 {
            self.hi - self.lo
        }
        pub fn expand(&mut self, v: f64) {
            if v < self.lo {
                self.lo = v;
            }
            if v > self.hi {
                self.hi = v;
            }
        }
        pub fn contains(&self, v: f64) -> bool {
            v >= self.lo && v <= self.hi
        }
        pub fn is_wide(&self) -> bool {
            self.hi - self.lo > 1.0
        }
    }

    #[differentiable]
    pub fn range_score(x: &[f64]) -> f64 {
        let mut range = Interval { lo: x[0], hi: x[0] };
        for &v in &x[1..] {
            range.expand(v);
        }
        let mut s = 0.0;
        for &v in x {
            if !range.contains(v * 1.5) {
                s += 0.1 * v * v;
            }
        }
        if range.is_wide() {
            s += range.width();
        }
        s / range.width()
    }

    #[test]
    fn range_score_against_finite_differences() {
        let x = [0.3, -0.6, 0.9, 0.1];
        // Range [-0.6, 0.9], width 1.5 (wide); outside after ×1.5: -0.6 (-0.9), 0.9 (1.35).
        let want = (0.1 * (0.36 + 0.81) + 1.5) / 1.5;
        assert!((range_score(&x) - want).abs() < 1e-12);
        let g = range_score::gradient(&x);
        crate::common::assert_gradient_matches(range_score, &g, &x);
    }
}

/// Forms of a fifth batch of ports: `|&v|` over a sub-slice handing `v` to a helper,
/// pairs from a helper `unzip`ped into two `Vec`s, rows grown by `extend_from_slice(&[..])`,
/// and a function pushing onto a `&mut Vec` that already holds values, checked by
/// `test_rule` (whose accumulators are shaped as the arguments after the call).
mod ported_batch_five {
    use mochi::prelude::*;

    #[differentiable]
    pub fn softplus(v: f64, b: f64) -> f64 {
        (1.0 + (b * v).exp()).ln() / b
    }

    #[differentiable]
    pub fn polar(a: f64, b: f64) -> (f64, f64) {
        (a.hypot(b), b.atan2(a))
    }

    #[differentiable]
    pub fn unzipped_and_extended(x: &[f64]) -> f64 {
        let beta = x[0];
        let soft: f64 = x[1..].iter().map(|&v| softplus(v, beta)).sum();
        let (radii, angles): (Vec<f64>, Vec<f64>) =
            x[1..].chunks(2).map(|c| polar(c[0], c[1])).unzip();
        let mut rows = Vec::with_capacity(3 * radii.len());
        for (r, a) in radii.iter().zip(&angles) {
            rows.extend_from_slice(&[1.0, r * a.sin(), a.cos()]);
        }
        soft + rows.iter().map(|v| v * v).sum::<f64>()
    }

    mod orders {
        use crate::all_orders;
        all_orders!(unzipped_and_extended, [1.3, 0.4, -0.8, 1.1, 0.6]);
    }

    #[test]
    fn the_rows_hold_what_was_pushed() {
        let x: [f64; 5] = [1.3, 0.4, -0.8, 1.1, 0.6];
        let mut want: f64 = x[1..]
            .iter()
            .map(|v| (1.0 + (x[0] * v).exp()).ln() / x[0])
            .sum();
        for c in x[1..].chunks(2) {
            let (r, a) = (c[0].hypot(c[1]), c[1].atan2(c[0]));
            want += 1.0 + (r * a.sin()).powi(2) + a.cos().powi(2);
        }
        assert!((unzipped_and_extended(&x) - want).abs() < 1e-12);
    }

    /// Pushes xᵢ and xᵢ² onto `out`, which may hold values already.
    #[differentiable]
    pub fn push_features(x: &[f64], out: &mut Vec<f64>) {
        for i in 0..x.len() {
            out.push(x[i]);
            out.push(x[i] * x[i]);
        }
    }

    #[test]
    fn pushing_onto_a_filled_vec_passes_the_rule_harness() {
        mochi::testing::test_rule(
            (vec![0.3, -0.7, 1.2], vec![0.5, 2.0]),
            |a| push_features(&a.0, &mut a.1),
            |a| push_features::rrule(&a.0, &mut a.1),
        );
    }
}

/// Helpers generic over the float, called with it named (`smoothstep::<f64>(t)`), also on
/// a constant: the generic form infers its own scalar.
mod named_float_calls {
    use mochi::num_traits::Float;
    use mochi::prelude::*;

    #[differentiable]
    fn smoothstep<T: Float>(t: T) -> T {
        let two = T::from(2.0).unwrap();
        let three = T::from(3).unwrap();
        t * t * (three - two * t)
    }

    #[differentiable]
    fn lennard_jones<T: Float>(r2: T) -> T {
        let inv6 = T::one() / (r2 * r2 * r2);
        inv6 * inv6 - inv6
    }

    #[differentiable(higher_order)]
    pub fn blended(x: &[f64]) -> f64 {
        smoothstep::<f64>(x[0] * x[1]) + x[2] * smoothstep::<f64>(0.3)
    }

    #[differentiable(higher_order)]
    pub fn pair_energy(x: &[f64]) -> f64 {
        let (dx, dy) = (x[0] - x[2], x[1] - x[3]);
        lennard_jones::<f64>(dx * dx + dy * dy)
    }

    mod t {
        use crate::all_orders;
        all_orders!(blended, [0.3, 0.8, -0.4]);
        all_orders!(pair_energy, [0.1, 0.2, 1.0, 0.7]);
    }
}

/// Structs holding `Vec`s of structs (`Net { layers: Vec<Layer> }`), walked in their
/// methods (`for l in &self.layers`, `self.layers.iter().enumerate()`) and by a function
/// given the outer struct; a local array handed to a method taking a slice.
mod layered_structs {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Layer {
        w: Vec<f64>,
        b: f64,
    }

    #[differentiable(higher_order)]
    impl Layer {
        fn forward(&self, x: &[f64]) -> f64 {
            (self.w.iter().zip(x).map(|(a, v)| a * v).sum::<f64>() + self.b).tanh()
        }
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Net {
        layers: Vec<Layer>,
    }

    #[differentiable(higher_order)]
    impl Net {
        fn total(&self, x: &[f64]) -> f64 {
            let mut s = 0.0;
            for l in &self.layers {
                s += l.forward(x);
            }
            s
        }
        fn weighted(&self, x: &[f64]) -> f64 {
            let mut s = 0.0;
            for (k, l) in self.layers.iter().enumerate() {
                s += (k as f64 + 1.0) * l.forward(x);
            }
            s
        }
        fn folded(&self, x: &[f64]) -> f64 {
            self.layers
                .iter()
                .fold(0.0, |acc, l| acc * 0.5 + l.forward(x))
        }
        fn indexed(&self, x: &[f64]) -> f64 {
            let mut s = 0.0;
            for k in 0..self.layers.len() {
                s += self.layers[k].forward(x) * self.layers[k].b;
            }
            s
        }
    }

    #[differentiable(higher_order)]
    fn outputs(net: &Net, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for l in net.layers.iter() {
            s += l.forward(x).powi(2);
        }
        s
    }

    fn net(p: &[f64]) -> Net {
        Net {
            layers: vec![
                Layer {
                    w: p[..2].to_vec(),
                    b: p[2],
                },
                Layer {
                    w: p[3..5].to_vec(),
                    b: p[5],
                },
            ],
        }
    }

    /// A local array given to a method that takes a slice, in a loop over a local `Vec`
    /// of structs.
    #[differentiable(higher_order)]
    pub fn local_layers(p: &[f64]) -> f64 {
        let layers: Vec<Layer> = vec![
            Layer {
                w: p[..2].to_vec(),
                b: p[2],
            },
            Layer {
                w: p[3..5].to_vec(),
                b: p[5],
            },
        ];
        let x = [0.3, p[0]];
        let mut s = 0.0;
        for l in layers.iter() {
            s += l.forward(&x);
        }
        s
    }

    #[differentiable(higher_order)]
    pub fn through_net(p: &[f64]) -> f64 {
        let n = Net {
            layers: vec![
                Layer {
                    w: p[..2].to_vec(),
                    b: p[2],
                },
                Layer {
                    w: p[3..5].to_vec(),
                    b: p[5],
                },
            ],
        };
        let x = [0.3, -0.7];
        n.total(&x) + 0.5 * n.weighted(&x) + outputs(&n, &x) + n.folded(&x) - n.indexed(&x)
    }

    #[test]
    fn net_argument_gradient() {
        let p = [0.3, -0.2, 0.5, 0.1, 0.7, 0.9];
        let x = [0.3, -0.7];
        let (dn, dx) = outputs::gradient(&net(&p), &x);
        let flat: Vec<f64> = dn
            .layers
            .iter()
            .flat_map(|l| l.w.iter().copied().chain(std::iter::once(l.b)))
            .collect();
        let want = crate::common::fd(&|z: &[f64]| outputs(&net(z), &x), &p);
        crate::common::close("outputs by the net", &flat, &want);
        let want_x = crate::common::fd(&|z: &[f64]| outputs(&net(&p), z), &x);
        crate::common::close("outputs by x", &dx, &want_x);
    }

    /// A layer whose sizes are integer fields, its output grown from
    /// `Vec::with_capacity(self.n_out)`; named as the standard library's `Sized` trait,
    /// which the derived code names by its path.
    #[derive(Clone, Debug, Tangent)]
    pub struct Sized {
        w: Vec<f64>,
        n_in: usize,
        n_out: usize,
    }

    #[differentiable(higher_order)]
    impl Sized {
        fn forward(&self, x: &[f64]) -> Vec<f64> {
            let mut out = Vec::with_capacity(self.n_out);
            for o in 0..self.n_out {
                let mut z = 0.0;
                for i in 0..self.n_in {
                    z += self.w[o * self.n_in + i] * x[i];
                }
                out.push(z.tanh());
            }
            out
        }
    }

    #[differentiable(higher_order)]
    pub fn sized_layer(p: &[f64]) -> f64 {
        let l = Sized {
            w: p.to_vec(),
            n_in: 2,
            n_out: 2,
        };
        let y = l.forward(&[0.4, -0.9]);
        y[0] * y[1] + y[1]
    }

    mod t {
        use crate::all_orders;
        all_orders!(local_layers, [0.3, -0.2, 0.5, 0.1, 0.7, 0.9]);
        all_orders!(sized_layer, [0.3, -0.2, 0.5, 0.1]);
        all_orders!(through_net, [0.3, -0.2, 0.5, 0.1, 0.7, 0.9]);
    }
}

/// Code written as users write it around their own types and slices, every order: a
/// `Vec` of structs rebuilt by `ps = ps.iter().map(..).collect()` (the local declared
/// with its type) from a method returning the type by name (`-> Particle`), a local
/// `p` and a closure's `p` side by side; a method returning an integer (`degree() ->
/// usize`); a helper called inside a closure on a
/// `Vec` the closure builds; `match x.split_first()` by recursion and `if let` of
/// `split_last`; `chunks_exact(k).remainder()`; a constant struct built by a builder
/// chain in the body; enum methods binding their variants' floats (`Loss::Huber(d)`),
/// a constant table of `(Loss, f64)`, a variant built of constants, and two enums with a
/// method of the same name reached through a struct's field typed as one of them.
mod users_types {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Particle {
        pos: [f64; 2],
        mass: f64,
    }

    #[differentiable(higher_order)]
    impl Particle {
        fn new(pos: [f64; 2], mass: f64) -> Particle {
            Particle { pos, mass }
        }
        fn stepped(&self, dt: f64) -> Particle {
            Particle {
                pos: [
                    self.pos[0] + dt * self.pos[1],
                    self.pos[1] - dt * self.pos[0],
                ],
                mass: self.mass,
            }
        }
        fn energy(&self) -> f64 {
            self.mass * (self.pos[0] * self.pos[0] + self.pos[1] * self.pos[1])
        }
    }

    /// Three steps of rotation-like updates of each particle, then the total energy.
    #[differentiable(higher_order)]
    pub fn rebuilt_particles(x: &[f64]) -> f64 {
        let mut ps: Vec<Particle> = Vec::new();
        for c in x.chunks(3) {
            let mut p = Particle::new([c[0], c[1]], 1.0);
            p.mass = c[2];
            ps.push(p);
        }
        for _ in 0..3 {
            ps = ps.iter().map(|p| p.stepped(0.1)).collect();
        }
        ps.iter().map(|p| p.energy()).sum()
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Poly {
        c: Vec<f64>,
    }

    #[differentiable(higher_order)]
    impl Poly {
        fn degree(&self) -> usize {
            self.c.len() - 1
        }
        fn eval(&self, t: f64) -> f64 {
            self.c.iter().rev().fold(0.0, |a, &k| a * t + k)
        }
        /// The coefficients' sum per degree: the integer method called on `self`.
        fn per_degree(&self) -> f64 {
            self.c.iter().sum::<f64>() / self.degree() as f64
        }
    }

    /// p(t)·deg p + (number of pairs)·t², the coefficients and t laid end to end.
    #[differentiable(higher_order)]
    pub fn scaled_by_degree(x: &[f64]) -> f64 {
        let (c, t) = (&x[..x.len() - 1], x[x.len() - 1]);
        let p = Poly { c: c.to_vec() };
        p.eval(t) * p.degree() as f64 + (c.len() / 2) as f64 * t * t + p.per_degree() * t
    }

    #[differentiable(higher_order)]
    fn logsumexp(v: &[f64]) -> f64 {
        let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        m + v.iter().map(|t| (t - m).exp()).sum::<f64>().ln()
    }

    /// A kernel density's log-likelihood at two points, each through a `Vec` built in the
    /// closure and handed to a helper; the bandwidth's log is `x[0]`, the data the rest.
    #[differentiable(higher_order)]
    pub fn kernel_loglik(x: &[f64]) -> f64 {
        let h = x[0].exp();
        let data = &x[1..];
        [0.3, -0.4]
            .iter()
            .map(|&p| {
                let terms: Vec<f64> = data.iter().map(|&d| -0.5 * ((p - d) / h).powi(2)).collect();
                logsumexp(&terms) - x[0]
            })
            .sum()
    }

    /// Horner's rule by recursion on `split_first`.
    #[differentiable(higher_order)]
    fn horner(c: &[f64], t: f64) -> f64 {
        match c.split_first() {
            Some((c0, rest)) => c0 + t * horner(rest, t),
            None => 0.0,
        }
    }

    /// The last element times Σ sin of the others (`if let` of `split_last`), plus the
    /// polynomial of the first three at the last, plus the squares of what pairs leave.
    #[differentiable(higher_order)]
    pub fn split_and_remainder(x: &[f64]) -> f64 {
        let ends = if let Some((l, init)) = x.split_last() {
            l * init.iter().map(|v| v.sin()).sum::<f64>()
        } else {
            0.0
        };
        let rem: f64 = x.chunks_exact(2).remainder().iter().map(|v| v * v).sum();
        let pairs: f64 = x.chunks_exact(2).map(|c| c[0] * c[1]).sum();
        ends + horner(&x[..3], x[x.len() - 1]) + rem + pairs
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Springs {
        ks: Vec<f64>,
        anchor: f64,
    }

    #[differentiable(higher_order)]
    impl Springs {
        fn new(ks: Vec<f64>) -> Self {
            Springs { ks, anchor: 0.0 }
        }
        fn with_anchor(mut self, a: f64) -> Self {
            self.anchor = a;
            self
        }
        fn energy(&self, x: &[f64]) -> f64 {
            x.iter()
                .zip(&self.ks)
                .map(|(e, k)| 0.5 * k * (e - self.anchor).powi(2))
                .sum()
        }
    }

    /// A chain of springs of constant stiffnesses built by a builder in the body.
    #[differentiable(higher_order)]
    pub fn fixed_springs(x: &[f64]) -> f64 {
        let chain = Springs::new(vec![1.0, 2.0, 1.5]).with_anchor(0.1);
        chain.energy(x) + x[0] * x[1]
    }

    #[derive(Clone, Copy, Debug, PartialEq, Tangent)]
    pub enum Loss {
        Mse,
        Huber(f64),
        LogCosh,
    }

    #[differentiable(higher_order)]
    impl Loss {
        fn value(&self, r: f64) -> f64 {
            match *self {
                Loss::Mse => r * r,
                Loss::Huber(delta) => {
                    let a = r.abs();
                    if a <= delta {
                        0.5 * r * r
                    } else {
                        delta * (a - 0.5 * delta)
                    }
                }
                Loss::LogCosh => r.cosh().ln(),
            }
        }
        /// The same name as `Act::apply`.
        fn apply(&self, r: f64) -> f64 {
            self.value(r)
        }
        fn quadratic(&self, r: f64) -> f64 {
            match self {
                Self::Huber(d) => d * r * r,
                _ => r,
            }
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Tangent)]
    pub enum Act {
        Tanh,
        Softplus,
    }

    #[differentiable(higher_order)]
    impl Act {
        fn apply(&self, v: f64) -> f64 {
            match self {
                Act::Tanh => v.tanh(),
                Act::Softplus => v.exp().ln_1p(),
            }
        }
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Settings {
        act: Act,
        rate: f64,
    }

    const LOSSES: [(Loss, f64); 3] = [
        (Loss::Mse, 0.5),
        (Loss::Huber(0.3), 1.0),
        (Loss::LogCosh, 2.0),
    ];
    const SETTINGS: Settings = Settings {
        act: Act::Softplus,
        rate: 0.7,
    };

    /// Weighted losses from a constant table, a Huber loss built in the body, and an
    /// activation reached through a field typed as `Act` (which shares `apply` with
    /// `Loss`).
    #[differentiable(higher_order)]
    pub fn losses_and_settings(x: &[f64]) -> f64 {
        let r = x[0] * x[1] - 0.2;
        let mut total = 0.0;
        for (loss, w) in LOSSES.iter() {
            total += w * loss.value(r) + loss.quadratic(x[1]);
        }
        let huber = Loss::Huber(0.25);
        let tanh = Settings {
            act: Act::Tanh,
            rate: 0.3,
        };
        total + huber.apply(x[0] - 0.9) + activated(x, &SETTINGS) + activated(&x[..1], &tanh)
    }

    #[differentiable(higher_order)]
    fn activated(x: &[f64], s: &Settings) -> f64 {
        x.iter().map(|&v| s.rate * s.act.apply(v)).sum()
    }

    pub trait Shape {
        fn area(&self) -> f64;
        fn perimeter(&self) -> f64;
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Rect {
        w: f64,
        h: f64,
    }

    #[differentiable]
    impl Shape for Rect {
        fn area(&self) -> f64 {
            self.w * self.h
        }
        fn perimeter(&self) -> f64 {
            2.0 * (self.w + self.h)
        }
    }

    /// Σ area/perimeter of rectangles by a trait's methods in a chain: a gradient; its
    /// generic form is refused with the method's name (a trait implementation's methods
    /// have none), where a caller asks for a Hessian, not a type error in the function.
    #[differentiable(higher_order)]
    pub fn rect_ratios(p: &[f64]) -> f64 {
        let rects: Vec<Rect> = p.chunks(2).map(|c| Rect { w: c[0], h: c[1] }).collect();
        rects.iter().map(|s| s.area() / s.perimeter()).sum()
    }

    #[test]
    fn trait_methods_keep_the_gradient() {
        let p = [0.7, 1.3, 2.0, 0.4];
        let g = rect_ratios::gradient(&p);
        crate::common::assert_gradient_matches(rect_ratios, &g, &p);
        // ∂/∂w of wh/(2(w + h)) = h² / (2(w + h)²).
        assert!((g[0] - 1.3f64.powi(2) / (2.0 * 2.0f64.powi(2))).abs() < 1e-14);
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Stack {
        ws: Vec<Vec<f64>>,
        hidden: Act,
    }

    #[differentiable(higher_order)]
    impl Stack {
        /// The layers folded over the input: an activation collected in one branch of
        /// the closure's `if`, the pre-activation returned in the other.
        fn forward(&self, x: &[f64]) -> Vec<f64> {
            let last = self.ws.len() - 1;
            self.ws.iter().enumerate().fold(x.to_vec(), |h, (k, w)| {
                let z: Vec<f64> = h.iter().zip(w).map(|(a, b)| a * b + 0.1).collect();
                if k < last {
                    z.iter().map(|&v| self.hidden.apply(v)).collect()
                } else {
                    z
                }
            })
        }
    }

    #[differentiable(higher_order)]
    pub fn folded_branches(x: &[f64]) -> f64 {
        let s = Stack {
            ws: vec![x.to_vec(), vec![0.5, -0.7]],
            hidden: Act::Tanh,
        };
        s.forward(&[0.4, -0.3]).iter().map(|o| o * o).sum()
    }

    mod t {
        use crate::all_orders;
        all_orders!(folded_branches, [0.3, 0.5]);
        all_orders!(rebuilt_particles, [0.3, 0.5, 1.2, -0.4, 0.8, 0.7]);
        all_orders!(scaled_by_degree, [0.3, -0.2, 0.5, 0.9, 0.4]);
        all_orders!(kernel_loglik, [-0.4, 0.1, 0.9, -0.5]);
        all_orders!(split_and_remainder, [0.3, -0.2, 0.5, 0.9, 0.7]);
        all_orders!(fixed_springs, [0.3, -0.2, 0.5]);
        all_orders!(losses_and_settings, [0.35, 1.5]);
    }

    #[test]
    fn values_by_hand() {
        // Each particle turns by the same matrix three times; the energy is m|pos|²·(1 + dt²)³.
        let x = [0.3, 0.5, 1.2, -0.4, 0.8, 0.7];
        let want: f64 = x
            .chunks(3)
            .map(|c| c[2] * (c[0] * c[0] + c[1] * c[1]) * 1.01f64.powi(3))
            .sum();
        assert!((rebuilt_particles(&x) - want).abs() < 1e-12);
        // deg p = 3, two pairs of coefficients: ∂/∂c_k = 3 t^k + t/3.
        let g = scaled_by_degree::gradient(&[0.3, -0.2, 0.5, 0.9, 0.4]);
        for (k, gk) in g[..4].iter().enumerate() {
            assert!((gk - 3.0 * 0.4f64.powi(k as i32) - 0.4 / 3.0).abs() < 1e-14);
        }
        // A Huber loss's second derivative is 1 inside its threshold and 0 beyond.
        let h = losses_and_settings::hessian(&[0.35, 1.5]);
        let h_in = losses_and_settings::hessian(&[0.95, 1.5]);
        assert!((h[[0, 0]] - h_in[[0, 0]]).abs() > 0.1);
    }
}

/// Models that change their own fields: a step over a half of `split_at` or a sub-slice,
/// zipped with `iter_mut()` of a field; layers of a `Vec` field filled by `iter_mut()` and
/// `copy_from_slice`; `Option<f64>` settings read by `map(..).unwrap_or(..)` and
/// `map_or`, with a Hessian of a struct holding them.
mod mutating_models {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Lin {
        w: Vec<f64>,
        b: Vec<f64>,
        l1: Option<f64>,
        l2: Option<f64>,
    }

    #[differentiable]
    impl Lin {
        /// `grad` holds the weights' gradient, then the bias's.
        fn step(&mut self, grad: &[f64], lr: f64) {
            let (gw, gb) = grad.split_at(self.w.len());
            for (w, g) in self.w.iter_mut().zip(gw) {
                *w -= lr * g;
            }
            for (b, g) in self.b.iter_mut().zip(gb.iter()) {
                *b -= lr * g;
            }
        }
        /// The same step over sub-slices named first, and one written in the `for`.
        fn step_sliced(&mut self, grad: &[f64], lr: f64) {
            let n = self.w.len();
            let gw = &grad[..n];
            for (w, g) in self.w.iter_mut().zip(gw) {
                *w -= lr * g;
            }
            for (b, g) in self.b.iter_mut().zip(&grad[n..]) {
                *b -= lr * g;
            }
        }
        fn out(&self, x: &[f64]) -> f64 {
            self.w.iter().zip(x).map(|(w, v)| w * v).sum::<f64>() + self.b[0]
        }
        fn penalty(&self, s: f64) -> f64 {
            let c1 = self.l1.map(|c| c * s).unwrap_or(0.0);
            let c2 = self.l2.map_or(0.0, |c| c * s * s);
            let w1: f64 = self.w.iter().map(|w| (w * w + 1e-3).sqrt()).sum();
            let w2: f64 = self.w.iter().map(|w| w * w).sum();
            c1 * w1 + c2 * w2
        }
    }

    /// One step with a gradient of the data's, then the loss and the penalty.
    #[differentiable]
    pub fn after_step(p: &[f64]) -> f64 {
        let x = [0.7, -1.2];
        let mut m = Lin {
            w: p[..2].to_vec(),
            b: vec![p[2]],
            l1: Some(0.1),
            l2: None,
        };
        let grad = vec![p[3] * x[0], p[3] * x[1], p[3]];
        m.step(&grad, 0.1);
        let mut n = m.clone();
        n.l2 = Some(p[4]);
        n.step_sliced(&grad, 0.05);
        m.out(&x).powi(2) + n.out(&x).powi(2) + m.penalty(2.0) + n.penalty(p[3])
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Layer {
        w: Vec<f64>,
        b: Vec<f64>,
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Net {
        layers: Vec<Layer>,
    }

    #[differentiable]
    impl Net {
        /// Copies flat parameters into the layers, `(w, b)` per layer.
        fn set_params(&mut self, p: &[f64]) {
            let mut off = 0;
            for layer in self.layers.iter_mut() {
                let nw = layer.w.len();
                layer.w.copy_from_slice(&p[off..off + nw]);
                off += nw;
                let nb = layer.b.len();
                layer.b.copy_from_slice(&p[off..off + nb]);
                off += nb;
            }
        }
        fn out(&self, x: f64) -> f64 {
            let mut h = x;
            for l in &self.layers {
                h = (l.w[0] * h + l.b[0]).tanh();
            }
            h
        }
    }

    #[differentiable]
    pub fn filled_net(p: &[f64]) -> f64 {
        let layer = Layer {
            w: vec![0.0],
            b: vec![0.0],
        };
        let mut net = Net {
            layers: vec![layer.clone(), layer],
        };
        net.set_params(p);
        (net.out(0.7) - 0.2).powi(2) + net.out(-0.4).powi(2)
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Settings {
        scale: f64,
        decay: Option<f64>,
        floor: Option<f64>,
    }

    #[differentiable(higher_order)]
    impl Settings {
        fn apply(&self, v: f64) -> f64 {
            let d = self.decay.map(|d| (-d * v * v).exp()).unwrap_or(1.0);
            let f = self.floor.map_or(0.0, |f| f * v);
            self.scale * v * d + f
        }
    }

    /// A Hessian through a struct of `Option` settings, one of them `None`.
    #[differentiable(higher_order)]
    pub fn optional_settings(x: &[f64]) -> f64 {
        let s = Settings {
            scale: x[0],
            decay: Some(x[1]),
            floor: None,
        };
        let t = Settings {
            floor: Some(x[1] * x[0]),
            ..s.clone()
        };
        x[2..]
            .iter()
            .map(|&v| s.apply(v) + t.apply(v).powi(2))
            .sum()
    }

    /// Each element with its neighbour round the ring (`cycle().skip(1)`), scaled by
    /// weights repeated without end (`w.iter().cycle()`), and differences of sub-slices
    /// zipped in a `for`.
    #[differentiable(higher_order)]
    pub fn ring_neighbours(x: &[f64]) -> f64 {
        let n = x.len();
        let mut out = vec![0.0; n];
        for (o, (a, b)) in out.iter_mut().zip(x.iter().zip(x.iter().cycle().skip(1))) {
            *o = a * b + a.sin();
        }
        let w = [2.0, 3.0];
        for (v, c) in out.iter_mut().zip(w.iter().cycle()) {
            *v *= c;
        }
        let mut d = vec![0.0; n - 1];
        for (e, (a, b)) in d.iter_mut().zip(x[1..].iter().zip(&x[..n - 1])) {
            *e = a - b;
        }
        out.iter().map(|v| v * v).sum::<f64>() + d.iter().map(|e| e.powi(4)).sum::<f64>()
    }

    /// A net made by a marked function (`-> Net`), then changed by its `&mut self`
    /// methods on the local.
    #[differentiable]
    fn made_net(p: &[f64]) -> Net {
        let layer = Layer {
            w: vec![p[0]],
            b: vec![p[1]],
        };
        Net {
            layers: vec![layer.clone(), layer],
        }
    }

    #[differentiable]
    pub fn net_from_a_call(p: &[f64]) -> f64 {
        let mut net = made_net(p);
        net.set_params(&p[2..]);
        let before = made_net(p).out(0.3);
        net.out(0.7) * before
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Schedule {
        base: f64,
        warmup: Option<f64>,
        decay: Option<f64>,
        clip: Option<f64>,
    }

    #[differentiable(higher_order)]
    impl Schedule {
        /// base · min(t / warmup, 1) · e^{-decay·t}, squashed below `clip` when positive.
        fn rate(&self, t: f64) -> f64 {
            let ramp = self.warmup.map(|w| (t / w).min(1.0)).unwrap_or(1.0);
            let fade = self
                .decay
                .and_then(|d| if d > 0.0 { Some((-d * t).exp()) } else { None })
                .unwrap_or(1.0);
            let clip = self.clip.and_then(|c| if c > 0.0 { Some(c) } else { None });
            let r = self.base * ramp * fade;
            match clip {
                Some(c) => c * (r / c).tanh(),
                None => r,
            }
        }
        fn with_base(&self, base: f64) -> Schedule {
            Schedule {
                base,
                ..self.clone()
            }
        }
    }

    /// `and_then` of `Option` fields, a `Some(c)` arm, and a value of the type returned by
    /// its own method (`let u = s.with_base(..)`) then called on, in a Hessian.
    #[differentiable(higher_order)]
    pub fn scheduled(p: &[f64]) -> f64 {
        let s = Schedule {
            base: p[0],
            warmup: Some(p[1]),
            decay: Some(p[2]),
            clip: Some(2.0),
        };
        let u = Schedule {
            clip: None,
            decay: None,
            ..s.clone()
        };
        let v = u.with_base(p[0] * p[2]);
        s.rate(0.5) + u.rate(0.7) * s.rate(1.5) + v.rate(3.0)
    }

    mod t {
        use crate::all_orders;
        all_orders!(optional_settings, [0.8, 0.3, 0.5, -1.1, 0.9]);
        all_orders!(scheduled, [0.9, 2.0, 0.3]);

        #[test]
        fn net_from_a_call_against_differences() {
            let p = [0.4, -0.3, 0.3, -0.2, 0.5, 0.1];
            let g = super::net_from_a_call::gradient(&p);
            crate::common::assert_gradient_matches(super::net_from_a_call, &g, &p);
        }

        #[test]
        fn scheduled_by_hand() {
            let (b, w, d) = (0.9_f64, 2.0_f64, 0.3_f64);
            let rate = |base: f64, t: f64, decay: bool, clip: bool| {
                let r = base * (t / w).min(1.0) * if decay { (-d * t).exp() } else { 1.0 };
                if clip {
                    2.0 * (r / 2.0).tanh()
                } else {
                    r
                }
            };
            let want = rate(b, 0.5, true, true)
                + rate(b, 0.7, false, false) * rate(b, 1.5, true, true)
                + rate(b * d, 3.0, false, false);
            let got = super::scheduled(&[b, w, d]);
            assert!((got - want).abs() < 1e-14, "{got} vs {want}");
        }
        all_orders!(ring_neighbours, [0.3, -0.2, 0.5, 0.9, -0.6]);

        #[test]
        fn ring_neighbours_by_hand() {
            let x = [0.3_f64, -0.2, 0.5, 0.9, -0.6];
            let w = [2.0, 3.0, 2.0, 3.0, 2.0];
            let ring: f64 = (0..5)
                .map(|i| (w[i] * (x[i] * x[(i + 1) % 5] + x[i].sin())).powi(2))
                .sum();
            let diffs: f64 = (0..4).map(|i| (x[i + 1] - x[i]).powi(4)).sum();
            let got = super::ring_neighbours(&x);
            assert!(
                (got - ring - diffs).abs() < 1e-13,
                "{got} vs {}",
                ring + diffs
            );
        }

        #[test]
        fn after_step_against_differences() {
            let p = [0.3, -0.2, 0.5, 0.9, 0.4];
            let g = super::after_step::gradient(&p);
            crate::common::assert_gradient_matches(super::after_step, &g, &p);
        }

        #[test]
        fn filled_net_against_differences() {
            let p = [0.3, -0.2, 0.5, 0.1];
            let g = super::filled_net::gradient(&p);
            crate::common::assert_gradient_matches(super::filled_net, &g, &p);
            // The net is tanh(w1 tanh(w0 x + b0) + b1): ∂/∂b1 by hand.
            let (x0, x1) = (0.7f64, -0.4f64);
            let h0 = (p[0] * x0 + p[1]).tanh();
            let o0 = (p[2] * h0 + p[3]).tanh();
            let h1 = (p[0] * x1 + p[1]).tanh();
            let o1 = (p[2] * h1 + p[3]).tanh();
            let db1 = 2.0 * (o0 - 0.2) * (1.0 - o0 * o0) + 2.0 * o1 * (1.0 - o1 * o1);
            assert!((g[3] - db1).abs() < 1e-12, "{} vs {db1}", g[3]);
        }

        #[test]
        fn after_step_value_by_hand() {
            let p = [0.3, -0.2, 0.5, 0.9, 0.4];
            let x = [0.7, -1.2];
            let g = [p[3] * x[0], p[3] * x[1], p[3]];
            let m: Vec<f64> = (0..3).map(|k| p[k] - 0.1 * g[k]).collect();
            let n: Vec<f64> = (0..3).map(|k| m[k] - 0.05 * g[k]).collect();
            let out = |v: &[f64]| v[0] * x[0] + v[1] * x[1] + v[2];
            let w1 = |v: &[f64]| (v[0] * v[0] + 1e-3).sqrt() + (v[1] * v[1] + 1e-3).sqrt();
            let w2 = |v: &[f64]| v[0] * v[0] + v[1] * v[1];
            let want = out(&m).powi(2)
                + out(&n).powi(2)
                + 0.1 * 2.0 * w1(&m)
                + 0.1 * p[3] * w1(&n)
                + p[4] * p[3] * p[3] * w2(&n);
            let got = super::after_step(&p);
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }
}

/// Complex numbers as pairs, a helper given a constant pair in a Hessian's function, and
/// a recursive helper of ten arguments (its arguments' tuple past eight).
mod pairs_and_wide_args {
    use mochi::prelude::*;
    use std::f64::consts::PI;

    #[differentiable(higher_order)]
    fn cexp(z: (f64, f64)) -> (f64, f64) {
        let r = z.0.exp();
        (r * z.1.cos(), r * z.1.sin())
    }

    #[differentiable(higher_order)]
    fn cmul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
    }

    /// |X₁|² + |X₂|² of the discrete Fourier transform, the twiddles `cexp((0.0, θ))` of
    /// constants.
    #[differentiable(higher_order)]
    pub fn dft_power(x: &[f64]) -> f64 {
        let n = x.len();
        let mut p = 0.0;
        for k in 1..3 {
            let mut acc = (0.0, 0.0);
            for (j, &v) in x.iter().enumerate() {
                let w = cexp((0.0, -2.0 * PI * (k * j) as f64 / n as f64));
                let term = cmul((v, 0.0), w);
                acc = (acc.0 + term.0, acc.1 + term.1);
            }
            p += acc.0 * acc.0 + acc.1 * acc.1;
        }
        p
    }

    #[differentiable(higher_order)]
    fn integrand(t: f64, k: f64, s: f64) -> f64 {
        (-k * t * t).exp() * (1.0 + s * t)
    }

    #[differentiable(higher_order)]
    fn simpson(a: f64, b: f64, fa: f64, fm: f64, fb: f64) -> f64 {
        (b - a) / 6.0 * (fa + 4.0 * fm + fb)
    }

    /// Adaptive Simpson with Richardson's correction, to a fixed depth.
    #[allow(clippy::too_many_arguments)]
    #[differentiable(higher_order)]
    fn adaptive(
        a: f64,
        b: f64,
        fa: f64,
        fm: f64,
        fb: f64,
        whole: f64,
        eps: f64,
        k: f64,
        s: f64,
        depth: u32,
    ) -> f64 {
        let m = 0.5 * (a + b);
        let (lm, rm) = (0.5 * (a + m), 0.5 * (m + b));
        let (flm, frm) = (integrand(lm, k, s), integrand(rm, k, s));
        let left = simpson(a, m, fa, flm, fm);
        let right = simpson(m, b, fm, frm, fb);
        let delta = left + right - whole;
        if depth == 0 || delta.abs() <= 15.0 * eps {
            left + right + delta / 15.0
        } else {
            adaptive(a, m, fa, flm, fm, left, 0.5 * eps, k, s, depth - 1)
                + adaptive(m, b, fm, frm, fb, right, 0.5 * eps, k, s, depth - 1)
        }
    }

    /// ∫₀ᵇ e^{-k t²}(1 + s t) dt, p = (k, s, b).
    #[differentiable(higher_order)]
    pub fn adaptive_simpson(p: &[f64]) -> f64 {
        let (k, s, b) = (p[0], p[1], p[2]);
        let (fa, fm, fb) = (
            integrand(0.0, k, s),
            integrand(0.5 * b, k, s),
            integrand(b, k, s),
        );
        let whole = simpson(0.0, b, fa, fm, fb);
        adaptive(0.0, b, fa, fm, fb, whole, 1e-9, k, s, 12)
    }

    mod t {
        use crate::all_orders;
        all_orders!(dft_power, [0.4, -0.3, 1.1, 0.6, -0.8, 0.2]);
        all_orders!(adaptive_simpson, [0.8, 0.5, 2.0]);

        #[test]
        fn values_by_hand() {
            // |X_k|² = (Σ x_j cos θ_jk)² + (Σ x_j sin θ_jk)², θ_jk = 2πjk/n.
            let x = [0.4, -0.3, 1.1, 0.6, -0.8, 0.2];
            let want: f64 = (1..3)
                .map(|k| {
                    let th = |j: usize| 2.0 * super::PI * (k * j) as f64 / 6.0;
                    let re: f64 = (0..6).map(|j| x[j] * th(j).cos()).sum();
                    let im: f64 = (0..6).map(|j| x[j] * th(j).sin()).sum();
                    re * re + im * im
                })
                .sum();
            assert!((super::dft_power(&x) - want).abs() < 1e-12);
            // The integral against a fine composite Simpson rule.
            let (k, s, b) = (0.8_f64, 0.5_f64, 2.0_f64);
            let f = |t: f64| (-k * t * t).exp() * (1.0 + s * t);
            let n = 2000;
            let h = b / n as f64;
            let fine: f64 = (0..n)
                .map(|i| {
                    let a = i as f64 * h;
                    h / 6.0 * (f(a) + 4.0 * f(a + 0.5 * h) + f(a + h))
                })
                .sum();
            let got = super::adaptive_simpson(&[k, s, b]);
            assert!((got - fine).abs() < 1e-8, "{got} vs {fine}");
            // ∂/∂s is ∫ t e^{-k t²} dt = (1 - e^{-k b²}) / (2k).
            let g = super::adaptive_simpson::gradient(&[k, s, b]);
            let want_s = (1.0 - (-k * b * b).exp()) / (2.0 * k);
            assert!((g[1] - want_s).abs() < 1e-7, "{} vs {want_s}", g[1]);
        }
    }
}

/// A model built from flat parameters by a marked function (`-> Mlp`), one built by an
/// associated function of an unmarked block and filled by a `&mut self` method, rows
/// given as a constant array to methods taking slices, and a constant model built by the
/// same function from a constant table.
mod models_by_sizes {
    use mochi::prelude::*;

    const XS: [[f64; 2]; 3] = [[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]];
    const YS: [f64; 3] = [0.2, -0.4, 0.9];
    const ANCHOR: [f64; 5] = [0.1, -0.1, 0.2, 0.3, -0.2];

    #[derive(Clone, Debug, Tangent)]
    pub struct Net {
        w1: Vec<f64>,
        b1: f64,
        w2: Vec<f64>,
    }

    impl Net {
        fn zeros() -> Net {
            Net {
                w1: vec![0.0; 2],
                b1: 0.0,
                w2: vec![0.0; 2],
            }
        }
    }

    #[differentiable(higher_order)]
    impl Net {
        fn predict(&self, x: &[f64]) -> f64 {
            let h = (self.w1[0] * x[0] + self.w1[1] * x[1] + self.b1).tanh();
            self.w2[0] * h + self.w2[1] * h * h
        }
        fn fit(&self, xs: &[[f64; 2]], ys: &[f64]) -> f64 {
            xs.iter()
                .zip(ys)
                .map(|(x, y)| (self.predict(x) - y).powi(2))
                .sum::<f64>()
                / ys.len() as f64
        }
        fn distance(&self, o: &Net) -> f64 {
            let d1: f64 = self
                .w1
                .iter()
                .zip(&o.w1)
                .map(|(a, b)| (a - b).powi(2))
                .sum();
            let d2: f64 = self
                .w2
                .iter()
                .zip(&o.w2)
                .map(|(a, b)| (a - b).powi(2))
                .sum();
            d1 + d2 + (self.b1 - o.b1).powi(2)
        }
        fn set_params(&mut self, p: &[f64]) {
            self.w1.copy_from_slice(&p[..2]);
            self.b1 = p[2];
            self.w2.copy_from_slice(&p[3..5]);
        }
    }

    #[differentiable(higher_order)]
    fn from_params(p: &[f64]) -> Net {
        Net {
            w1: p[..2].to_vec(),
            b1: p[2],
            w2: p[3..5].to_vec(),
        }
    }

    /// The fit of a net from `from_params`, pulled towards the constant `ANCHOR` net.
    #[differentiable(higher_order)]
    pub fn anchored_fit(p: &[f64]) -> f64 {
        let net = from_params(p);
        let anchor = from_params(&ANCHOR);
        net.fit(&XS, &YS) + 0.1 * net.distance(&anchor)
    }

    /// The same fit through `Net::zeros()` and `set_params`.
    #[differentiable]
    pub fn filled_fit(p: &[f64]) -> f64 {
        let mut net = Net::zeros();
        net.set_params(p);
        net.fit(&XS, &YS)
    }

    mod t {
        use crate::all_orders;
        all_orders!(anchored_fit, [0.3, -0.2, 0.5, 0.9, -0.4]);

        #[test]
        fn filled_fit_against_differences_and_anchored() {
            let p = [0.3, -0.2, 0.5, 0.9, -0.4];
            let g = super::filled_fit::gradient(&p);
            crate::common::assert_gradient_matches(super::filled_fit, &g, &p);
            // The anchored fit less the filled one is the pull, 0.1·|p - ANCHOR|².
            let pull: f64 = p
                .iter()
                .zip(super::ANCHOR)
                .map(|(a, b)| 0.1 * (a - b) * (a - b))
                .sum();
            let diff = super::anchored_fit(&p) - super::filled_fit(&p);
            assert!((diff - pull).abs() < 1e-14, "{diff} vs {pull}");
            let ga = super::anchored_fit::gradient(&p);
            for k in 0..5 {
                let want = g[k] + 0.2 * (p[k] - super::ANCHOR[k]);
                assert!((ga[k] - want).abs() < 1e-12, "{k}: {} vs {want}", ga[k]);
            }
        }
    }
}

/// A trajectory `Vec` of states grown by `push` from the last element's step (`vec![State
/// { .. }]`, `traj[t].step(dt)`), and a Kalman-like update through helpers given a
/// constant matrix (`transpose(f)` of a local of constants), in Hessians.
mod trajectories {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct State {
        q: Vec<f64>,
        p: Vec<f64>,
    }

    #[differentiable(higher_order)]
    impl State {
        /// One symplectic Euler step of the pendulum chain q'' = -sin q.
        fn step(&self, dt: f64) -> State {
            let p: Vec<f64> = self
                .p
                .iter()
                .zip(&self.q)
                .map(|(p, q)| p - dt * q.sin())
                .collect();
            let q: Vec<f64> = self.q.iter().zip(&p).map(|(q, p)| q + dt * p).collect();
            State { q, p }
        }
    }

    const TRACK: [f64; 5] = [0.4, 0.42, 0.41, 0.37, 0.3];

    #[differentiable(higher_order)]
    pub fn fitted_track(x: &[f64]) -> f64 {
        let mut traj = vec![State {
            q: x[..2].to_vec(),
            p: x[2..].to_vec(),
        }];
        for t in 0..4 {
            let next = traj[t].step(0.1);
            traj.push(next);
        }
        traj.iter()
            .zip(TRACK.iter())
            .map(|(s, y)| (s.q[0] - y).powi(2) + 0.1 * s.q[1] * s.p[1])
            .sum()
    }

    #[differentiable(higher_order)]
    fn mat_mul(a: [[f64; 2]; 2], b: [[f64; 2]; 2]) -> [[f64; 2]; 2] {
        let mut c = [[0.0; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                for k in 0..2 {
                    c[i][j] += a[i][k] * b[k][j];
                }
            }
        }
        c
    }

    #[differentiable(higher_order)]
    fn transpose(a: [[f64; 2]; 2]) -> [[f64; 2]; 2] {
        [[a[0][0], a[1][0]], [a[0][1], a[1][1]]]
    }

    /// F P Fᵀ + Q four times, the trace's log: `transpose(f)` of the constant `f`.
    #[differentiable(higher_order)]
    pub fn propagated_covariance(x: &[f64]) -> f64 {
        let f = [[1.0, 0.5], [0.0, 1.0]];
        let mut p = [[x[0], x[1]], [x[1], x[2]]];
        for _ in 0..4 {
            let fp = mat_mul(f, p);
            p = mat_mul(fp, transpose(f));
            p[0][0] += x[3];
            p[1][1] += x[3];
        }
        (p[0][0] + p[1][1]).ln()
    }

    mod t {
        use crate::all_orders;
        all_orders!(fitted_track, [0.4, -0.3, 0.2, 0.5]);
        all_orders!(propagated_covariance, [0.9, 0.1, 0.7, 0.2]);

        #[test]
        fn values_by_hand() {
            let x = [0.4_f64, -0.3, 0.2, 0.5];
            let (mut q, mut p) = (vec![x[0], x[1]], vec![x[2], x[3]]);
            let mut want = 0.0;
            for (t, y) in super::TRACK.iter().enumerate() {
                if t > 0 {
                    for k in 0..2 {
                        p[k] -= 0.1 * q[k].sin();
                        q[k] += 0.1 * p[k];
                    }
                }
                want += (q[0] - y).powi(2) + 0.1 * q[1] * p[1];
            }
            let got = super::fitted_track(&x);
            assert!((got - want).abs() < 1e-14, "{got} vs {want}");
            // F P Fᵀ by hand: p00 becomes a + b + c/4, p01 = b + c/2, p11 = c;
            // Q adds q on the diagonal.
            let (mut a, mut b, mut c) = (0.9_f64, 0.1_f64, 0.7_f64);
            for _ in 0..4 {
                let (na, nb) = (a + b + 0.25 * c + 0.2, b + 0.5 * c);
                (a, b, c) = (na, nb, c + 0.2);
            }
            let got = super::propagated_covariance(&[0.9, 0.1, 0.7, 0.2]);
            assert!(
                (got - (a + c).ln()).abs() < 1e-14,
                "{got} vs {}",
                (a + c).ln()
            );
        }
    }
}

/// An enum of shapes as constants: `match self` (by reference) with a block arm in a
/// Hessian, and a `for` over a constant table matching each element with a guard on a
/// bound field (`Shape::Circle { r } if *r > 0.5`). (The method is named apart from the
/// `area` a trait implements in `users_types`: the generic form tells methods apart by
/// name across the crate.)
mod shape_tables {
    use mochi::prelude::*;
    use std::f64::consts::PI;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Shape {
        Circle { r: f64 },
        Rect { w: f64, h: f64 },
        Triangle(f64, f64, f64),
    }

    #[differentiable(higher_order)]
    impl Shape {
        fn covered(&self) -> f64 {
            match self {
                Shape::Circle { r } => PI * r * r,
                Shape::Rect { w, h } => w * h,
                Shape::Triangle(a, b, c) => {
                    let s = 0.5 * (a + b + c);
                    (s * (s - a) * (s - b) * (s - c)).sqrt()
                }
            }
        }
    }

    const SHAPES: [Shape; 3] = [
        Shape::Circle { r: 0.8 },
        Shape::Rect { w: 1.5, h: 0.6 },
        Shape::Triangle(1.0, 1.2, 1.5),
    ];

    #[differentiable(higher_order)]
    pub fn coats(t: &[f64]) -> f64 {
        SHAPES
            .iter()
            .zip(t)
            .map(|(s, ti)| s.covered() * (ti * ti).exp())
            .sum()
    }

    /// (A guard comparing a field of a constant's element with a literal, `*r > 0.5`:
    /// `f64` in the generic form too.)
    #[differentiable(higher_order)]
    pub fn paint(t: &[f64]) -> f64 {
        let price = t[3];
        let mut total = 0.0;
        for (s, ti) in SHAPES.iter().zip(t) {
            let rim = match s {
                Shape::Circle { r } if *r > 0.5 => 0.8 * price * r,
                Shape::Circle { .. } => price,
                Shape::Rect { w, .. } => price * w,
                Shape::Triangle(..) => 1.1 * price,
            };
            total += s.covered() * ti.exp() + rim * ti;
        }
        total
    }

    mod t {
        use crate::all_orders;
        all_orders!(coats, [0.1, 0.2, 0.3]);
        all_orders!(paint, [0.1, 0.2, 0.3, 1.5]);

        #[test]
        fn paint_by_hand() {
            let t = [0.1, 0.2, 0.3, 1.5];
            let g = super::paint::gradient(&t);
            crate::common::assert_gradient_matches(super::paint, &g, &t);
            let heron = {
                let s: f64 = 0.5 * (1.0 + 1.2 + 1.5);
                (s * (s - 1.0) * (s - 1.2) * (s - 1.5)).sqrt()
            };
            let areas = [super::PI * 0.64, 0.9, heron];
            let rims = [0.8 * 0.8, 1.5, 1.1];
            for k in 0..3 {
                let want = areas[k] * t[k].exp() + rims[k] * t[3];
                assert!((g[k] - want).abs() < 1e-13, "{k}: {} vs {want}", g[k]);
            }
            let want_price: f64 = (0..3).map(|k| rims[k] * t[k]).sum();
            assert!((g[3] - want_price).abs() < 1e-13);
        }
    }
}

/// A type of the user's built by its marked `From` implementations (`Vec2::from([a, b])`,
/// `let v: Vec2 = (a, b).into()`), two of them for one type.
mod conversions {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Vec2 {
        x: f64,
        y: f64,
    }

    #[differentiable]
    impl From<[f64; 2]> for Vec2 {
        fn from(a: [f64; 2]) -> Self {
            Vec2 { x: a[0], y: a[1] }
        }
    }

    #[differentiable]
    impl From<(f64, f64)> for Vec2 {
        fn from(a: (f64, f64)) -> Self {
            Vec2 { x: a.0, y: a.1 }
        }
    }

    #[differentiable]
    impl Vec2 {
        fn norm(&self) -> f64 {
            (self.x * self.x + self.y * self.y).sqrt()
        }
    }

    #[differentiable]
    pub fn converted(p: &[f64]) -> f64 {
        let a = Vec2::from([p[0], p[1]]);
        let b: Vec2 = (p[1], p[2] * 2.0).into();
        a.norm() * b.norm() + a.x * b.y
    }

    #[test]
    fn converted_against_differences_and_by_hand() {
        let p = [0.3, -0.5, 0.8];
        let g = converted::gradient(&p);
        crate::common::assert_gradient_matches(converted, &g, &p);
        let (na, nb) = ((0.09_f64 + 0.25).sqrt(), (0.25_f64 + 2.56).sqrt());
        assert!((converted(&p) - (na * nb + 0.3 * 1.6)).abs() < 1e-14);
        // ∂/∂p₀ = (p₀/|a|)·|b| + 2p₂.
        assert!((g[0] - (0.3 / na * nb + 1.6)).abs() < 1e-13, "{}", g[0]);
    }
}

/// A recurrent cell as a struct: gates zipping the `Vec`s helpers return
/// (`matvec(&self.w, x).iter().zip(&matvec(&self.u, h))`), and a loss reading the first
/// `self.n_h` entries of the state (`state[..self.n_h].iter().zip(head)`).
mod recurrent_cells {
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    fn matvec(w: &[f64], x: &[f64]) -> Vec<f64> {
        w.chunks(x.len())
            .map(|r| r.iter().zip(x).map(|(a, b)| a * b).sum())
            .collect()
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Cell {
        w: Vec<f64>,
        u: Vec<f64>,
        b: Vec<f64>,
        n_h: usize,
    }

    #[differentiable(higher_order)]
    impl Cell {
        fn step(&self, h: &[f64], x: &[f64]) -> Vec<f64> {
            matvec(&self.w, x)
                .iter()
                .zip(&matvec(&self.u, h))
                .zip(&self.b)
                .map(|((a, c), d)| (a + c + d).tanh())
                .collect()
        }
        fn loss(&self, xs: &[f64], head: &[f64]) -> f64 {
            let mut state = vec![0.0; 2 * self.n_h];
            for x in xs.chunks(2) {
                let next = self.step(&state[..self.n_h], x);
                state[..self.n_h].copy_from_slice(&next);
            }
            state[..self.n_h].iter().zip(head).map(|(a, b)| a * b).sum()
        }
    }

    #[differentiable(higher_order)]
    pub fn cell_loss(p: &[f64]) -> f64 {
        let cell = Cell {
            w: p[..4].to_vec(),
            u: p[4..8].to_vec(),
            b: vec![0.1, -0.2],
            n_h: 2,
        };
        cell.loss(&[0.5, -0.3, 0.2, 0.8], &[1.0, -0.5])
    }

    mod t {
        use crate::all_orders;
        all_orders!(cell_loss, [0.3, -0.2, 0.5, 0.1, 0.4, -0.6, 0.2, 0.7]);

        #[test]
        fn cell_loss_by_hand() {
            let p = [0.3, -0.2, 0.5, 0.1, 0.4, -0.6, 0.2, 0.7];
            let mut h = [0.0_f64; 2];
            for x in [[0.5, -0.3], [0.2, 0.8]] {
                let b = [0.1, -0.2];
                let mut next = [0.0; 2];
                for r in 0..2 {
                    let wx = p[2 * r] * x[0] + p[2 * r + 1] * x[1];
                    let uh = p[4 + 2 * r] * h[0] + p[4 + 2 * r + 1] * h[1];
                    next[r] = (wx + uh + b[r]).tanh();
                }
                h = next;
            }
            let want = h[0] - 0.5 * h[1];
            assert!((super::cell_loss(&p) - want).abs() < 1e-14);
        }
    }
}

/// A local closure with typed parameters called from an element closure (`|&v|`), its
/// arguments values computed before the chain; and the same closure parameter name (`v`)
/// bound again by the closure it calls, in the generic form that Hessians run on.
mod closures_called_from_chains {
    use mochi::prelude::*;

    const DATA: [f64; 4] = [0.4, 1.3, 2.2, 0.9];

    #[differentiable(higher_order)]
    pub fn log_add(a: f64, b: f64) -> f64 {
        a.max(b) + (-(a - b).abs()).exp().ln_1p()
    }

    /// θ = (_, μ₁, ln σ₁, μ₂, ln σ₂): a two-component mixture's log-likelihood of `DATA`.
    #[differentiable(higher_order)]
    pub fn mixture(theta: &[f64]) -> f64 {
        let (s1, s2) = (theta[2].exp(), theta[4].exp());
        let component = |v: f64, mu: f64, s: f64| -0.5 * ((v - mu) / s).powi(2) - s.ln();
        DATA.iter()
            .map(|&v| log_add(component(v, theta[1], s1), component(v, theta[3], s2)))
            .sum::<f64>()
            + theta[0] * theta[0]
    }

    /// The elements themselves differentiable, and the closure's values put into a
    /// tuple and an array.
    #[differentiable(higher_order)]
    pub fn paired(x: &[f64]) -> f64 {
        let k = x[0].exp();
        let scaled = |v: f64, w: f64| v * w + k;
        x[1..]
            .iter()
            .map(|&v| {
                let t = (scaled(v, k), k);
                let a = [k, scaled(v, 2.0)];
                t.0 * t.1 + a[0] * a[1]
            })
            .sum()
    }

    /// A local closure that captures nothing, called with a differentiable argument
    /// from a chain over constant data. Before 2026-12-05 its derivative was a silent
    /// zero: the call is inlined as a block in parentheses, whose `let`s the chain's
    /// constant test did not see.
    #[differentiable(higher_order)]
    pub fn centred_data(theta: &[f64]) -> f64 {
        let component = |v: f64, mu: f64| -0.5 * (v - mu).powi(2);
        DATA.iter().map(|&v| component(v, theta[1])).sum::<f64>() + theta[0]
    }

    /// The same in the forms a user writes by hand: a block as an operand, an `if`
    /// branch and a `match` arm binding a differentiable value, over constant data.
    #[differentiable(higher_order)]
    pub fn blocks_in_chains(theta: &[f64]) -> f64 {
        let a: f64 = DATA
            .iter()
            .map(|&v| {
                v * {
                    let mu = theta[0];
                    mu * mu
                }
            })
            .sum();
        let b: f64 = DATA
            .iter()
            .map(|&v| {
                if v > 1.0 {
                    let mu = theta[1];
                    mu * v
                } else {
                    0.0
                }
            })
            .sum();
        let c: f64 = DATA
            .iter()
            .map(|&v| match v > 1.0 {
                true => {
                    let s = theta[2].sin();
                    s * v
                }
                false => 0.0,
            })
            .sum();
        a + b + c
    }

    #[test]
    fn blocks_by_hand() {
        let theta = [0.5, -0.3, 0.8];
        // Σv = 4.8; the data above 1 sum to 3.5.
        let g = centred_data::gradient(&theta);
        let want: f64 = DATA.iter().map(|v| v - theta[1]).sum();
        assert!((g[1] - want).abs() < 1e-13 && g[0] == 1.0, "{g:?}");
        let g = blocks_in_chains::gradient(&theta);
        assert!((g[0] - 4.8 * 2.0 * theta[0]).abs() < 1e-13, "{g:?}");
        assert!((g[1] - 3.5).abs() < 1e-13, "{g:?}");
        assert!((g[2] - 3.5 * theta[2].cos()).abs() < 1e-13, "{g:?}");
    }

    fn mixture_by_hand(theta: &[f64]) -> f64 {
        let (s1, s2) = (theta[2].exp(), theta[4].exp());
        let c = |v: f64, mu: f64, s: f64| -0.5 * ((v - mu) / s).powi(2) - s.ln();
        DATA.iter()
            .map(|&v| {
                let (a, b) = (c(v, theta[1], s1), c(v, theta[3], s2));
                (a.exp() + b.exp()).ln()
            })
            .sum::<f64>()
            + theta[0] * theta[0]
    }

    #[test]
    fn values_by_hand() {
        let theta = [0.3, 0.5, -0.2, 1.8, 0.1];
        assert!((mixture(&theta) - mixture_by_hand(&theta)).abs() < 1e-12);
        // ∂/∂θ₀ = 2θ₀: the first entry is outside the chain.
        assert!((mixture::gradient(&theta)[0] - 0.6).abs() < 1e-14);
        let x = [0.2, 0.5, -1.0];
        let k = 0.2f64.exp();
        let by_hand: f64 = [0.5, -1.0]
            .iter()
            .map(|&v| (v * k + k) * k + k * (2.0 * v + k))
            .sum();
        assert!((paired(&x) - by_hand).abs() < 1e-13);
        // ∂/∂v = k² + 2k for each element.
        let g = paired::gradient(&x);
        assert!((g[1] - (k * k + 2.0 * k)).abs() < 1e-13 && (g[2] - g[1]).abs() < 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(mixture, [0.3, 0.5, -0.2, 1.8, 0.1]);
        all_orders!(paired, [0.2, 0.5, -1.0, 0.7]);
        all_orders!(centred_data, [0.3, 0.5]);
        all_orders!(blocks_in_chains, [0.5, -0.3, 0.8]);
    }
}

/// Products written as squares (`x[i] * x[i]`, `(x[i] - m) * (x[i] - m)`, `d * d`),
/// whose two factors are one value, in loops and outside them; and a triangular loop
/// whose inner range starts at the outer variable.
mod squares_and_triangles {
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    pub fn spread(x: &[f64]) -> f64 {
        let n = x.len();
        let m = x.iter().sum::<f64>() / n as f64;
        let mut s = 0.0;
        for i in 0..n {
            s += (x[i] - m) * (x[i] - m) + 0.5 * x[i] * x[i];
            for j in i + 1..n {
                let d = x[i] - x[j];
                s += 0.1 * d * d;
            }
        }
        let last = x[n - 1];
        s + last * last * last
    }

    #[test]
    fn gradient_by_hand() {
        let x = [0.5, -1.2, 2.0, 0.3];
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let g = spread::gradient(&x);
        for k in 0..x.len() {
            // Σ(xᵢ − m)² gives 2(x_k − m) (the deviations sum to zero); ½Σxᵢ² gives x_k;
            // 0.1·Σ_{i<j}(xᵢ − xⱼ)² gives 0.2·Σ_j (x_k − x_j); the cube 3x².
            let pairs: f64 = x.iter().map(|xj| 0.2 * (x[k] - xj)).sum();
            let cube = if k == 3 { 3.0 * x[3] * x[3] } else { 0.0 };
            let want = 2.0 * (x[k] - m) + x[k] + pairs + cube;
            assert!((g[k] - want).abs() < 1e-12, "{k}: {} against {want}", g[k]);
        }
    }

    mod t {
        use crate::all_orders;
        all_orders!(spread, [0.5, -1.2, 2.0, 0.3]);
    }
}

/// A table of plain structs as a constant, read through a chain and a `for` loop; a
/// filter taking `enumerate`'s pair whole; a local closure bound inside a `vec!`
/// element's block.
mod constant_tables {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug)]
    pub struct Obs {
        t: f64,
        y: f64,
        w: f64,
    }

    const OBS: [Obs; 4] = [
        Obs {
            t: 0.0,
            y: 0.3,
            w: 1.0,
        },
        Obs {
            t: 0.5,
            y: 0.9,
            w: 0.5,
        },
        Obs {
            t: 1.0,
            y: 1.4,
            w: 2.0,
        },
        Obs {
            t: 1.5,
            y: 2.2,
            w: 0.75,
        },
    ];

    const DATA: [f64; 5] = [0.4, 1.3, 2.2, 0.9, 1.7];

    /// Weighted least squares of a line through the table, twice: a chain and a loop.
    #[differentiable(higher_order)]
    pub fn weighted_fit(theta: &[f64]) -> f64 {
        let by_chain: f64 = OBS
            .iter()
            .map(|o| {
                let pred = theta[0] * o.t + theta[1];
                o.w * (pred - o.y).powi(2)
            })
            .sum();
        let mut by_loop = 0.0;
        for ob in OBS.iter() {
            by_loop += ob.w * (theta[0] * ob.t - ob.y);
        }
        by_chain + 0.1 * by_loop
    }

    #[differentiable(higher_order)]
    pub fn picked(theta: &[f64]) -> f64 {
        DATA.iter()
            .enumerate()
            .filter(|p| *p.1 > 1.0 && p.0 < theta.len())
            .map(|(i, &v)| {
                let p = theta[i];
                p * p * v
            })
            .sum()
    }

    // (The `vec!` is the form under test.)
    #[allow(clippy::useless_vec)]
    #[differentiable(higher_order)]
    pub fn listed(x: &[f64]) -> f64 {
        let v = vec![
            {
                let g = |a: f64| (a * a).tanh();
                DATA.iter().map(|&w| g(w + x[0])).sum::<f64>()
            },
            x[1],
        ];
        v[0] * v[1]
    }

    #[test]
    fn by_hand() {
        let theta = [0.8, 0.35];
        let (mut g0, mut g1) = (0.0, 0.0);
        for o in OBS.iter() {
            let r = theta[0] * o.t + theta[1] - o.y;
            g0 += 2.0 * o.w * r * o.t + 0.1 * o.w * o.t;
            g1 += 2.0 * o.w * r;
        }
        let g = weighted_fit::gradient(&theta);
        assert!(
            (g[0] - g0).abs() < 1e-13 && (g[1] - g1).abs() < 1e-13,
            "{g:?}"
        );
        let h = weighted_fit::hessian(&theta);
        let h11: f64 = OBS.iter().map(|o| 2.0 * o.w).sum();
        assert!((h[[1, 1]] - h11).abs() < 1e-13);
        // The data above 1 are at 1, 2 and 4: ∂/∂θᵢ = 2θᵢ·vᵢ there, 0 elsewhere.
        let theta = [0.1, 0.2, 0.3, 0.4, 0.5];
        let g = picked::gradient(&theta);
        assert_eq!(g[0], 0.0);
        assert_eq!(g[3], 0.0);
        assert!((g[1] - 0.52).abs() < 1e-14 && (g[2] - 1.32).abs() < 1e-14);
        assert!((g[4] - 1.7).abs() < 1e-14);
        let x = [0.3, 0.5];
        let sum: f64 = DATA.iter().map(|w| ((w + 0.3) * (w + 0.3)).tanh()).sum();
        assert!((listed::gradient(&x)[1] - sum).abs() < 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(weighted_fit, [0.8, 0.35]);
        all_orders!(picked, [0.1, 0.2, 0.3, 0.4, 0.5]);
        all_orders!(listed, [0.3, 0.5]);
    }
}

/// Generic helpers bounded by `mochi::Real` with the operators written out beside it (in
/// a `where` clause), called from a function over `f64` with a Hessian: before
/// 2026-12-05 "the trait bound `__MochiT: mochi::Real` is not satisfied".
mod real_helpers_with_operator_bounds {
    use mochi::prelude::*;

    #[differentiable]
    pub fn sq<T>(v: T) -> T
    where
        T: Copy + std::ops::Mul<Output = T> + mochi::Real,
    {
        v * v
    }

    #[differentiable]
    pub fn lerp<T: mochi::Real + std::ops::Add<Output = T>>(a: T, b: T, t: T) -> T {
        a + (b - a) * t
    }

    #[differentiable(higher_order)]
    pub fn energy(x: &[f64]) -> f64 {
        let t = x[0];
        let tail = &x[1..];
        tail.windows(2)
            .map(|w| sq(lerp(w[0], w[1], t)))
            .sum::<f64>()
            + sq(t - 0.5)
    }

    /// The energy at (0.3, 1.0, 2.0, −1.0) worked out by hand: the point, the value and
    /// ∂/∂t.
    pub fn energy_by_hand() -> ([f64; 4], f64, f64) {
        let x = [0.3, 1.0, 2.0, -1.0];
        let l = |a: f64, b: f64| a + (b - a) * 0.3;
        let want = l(1.0, 2.0).powi(2) + l(2.0, -1.0).powi(2) + (0.3f64 - 0.5).powi(2);
        // ∂/∂t = Σ 2·lerp·(b − a) + 2(t − 0.5).
        let dt = 2.0 * l(1.0, 2.0) * 1.0 + 2.0 * l(2.0, -1.0) * -3.0 + 2.0 * (0.3 - 0.5);
        (x, want, dt)
    }

    #[test]
    fn by_hand() {
        let (x, want, dt) = energy_by_hand();
        assert!((energy(&x) - want).abs() < 1e-14);
        assert!((energy::gradient(&x)[0] - dt).abs() < 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(energy, [0.3, 1.0, 2.0, -1.0]);
    }
}

/// `windows`, `chunks` and `rchunks` of a sub-slice written in the chain or the loop
/// (`x[1..].windows(2)`), with generic helpers called on the window's elements.
mod windows_of_sub_slices {
    use super::real_helpers_with_operator_bounds::{lerp, sq};
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    pub fn energy(x: &[f64]) -> f64 {
        let t = x[0];
        x[1..]
            .windows(2)
            .map(|w| sq(lerp(w[0], w[1], t)))
            .sum::<f64>()
            + sq(t - 0.5)
    }

    #[differentiable]
    pub fn framed(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (a, b) in x[..4].windows(2).zip(x[2..].windows(2)) {
            s += sq(a[0] - b[1]) + a[1] * b[0];
        }
        s + x[1..x.len() - 1]
            .rchunks(2)
            .map(|c| c[0] * c[c.len() - 1])
            .sum::<f64>()
    }

    #[test]
    fn by_hand() {
        let (x, want, dt) = super::real_helpers_with_operator_bounds::energy_by_hand();
        assert!((energy(&x) - want).abs() < 1e-14);
        assert!((energy::gradient(&x)[0] - dt).abs() < 1e-13);
        // framed over 6 values: pairs (x0,x1)|(x2,x3), (x1,x2)|(x3,x4), (x2,x3)|(x4,x5),
        // then x[1..5] in rchunks of 2 from the end: (x3,x4), (x1,x2).
        let x = [0.3, -0.7, 1.1, 0.5, 2.0, -1.3];
        let mut want = vec![0.0; 6];
        for i in 0..3 {
            let d = x[i] - x[i + 3];
            want[i] += 2.0 * d;
            want[i + 3] -= 2.0 * d;
            want[i + 1] += x[i + 2];
            want[i + 2] += x[i + 1];
        }
        for (a, b) in [(3, 4), (1, 2)] {
            want[a] += x[b];
            want[b] += x[a];
        }
        crate::common::close_to("framed", &framed::gradient(&x), &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(energy, [0.3, 1.0, 2.0, -1.0, 0.7]);
        all_orders!(framed, [0.3, -0.7, 1.1, 0.5, 2.0, -1.3]);
    }
}

/// `x.get(a..b)` (also `..b`, `a..`, `a..=b`) in `if let`, `let … else`, `match` and
/// `map(..).unwrap_or(..)`, and `let Some(v) = x[1..].get(i) else`.
mod sub_slices_by_get {
    use mochi::prelude::*;

    #[differentiable]
    pub fn parts(x: &[f64]) -> f64 {
        let mut s = x[0];
        if let Some(p) = x.get(..2) {
            s += p[0] * p[1];
        }
        if let Some(p) = x.get(2..) {
            s += p.iter().map(|v| v * v).sum::<f64>();
        }
        // Out of range for four values: skipped.
        if let Some(p) = x.get(3..=9) {
            s += 100.0 * p[0];
        }
        s + x.get(1..=2).map(|p| p[0] * p[1]).unwrap_or(0.0)
    }

    #[differentiable]
    pub fn framed(x: &[f64]) -> f64 {
        let Some(t) = x.get(1..3) else {
            return 0.0;
        };
        let Some(&v) = x[1..].get(2) else {
            return t[0];
        };
        let k = 2;
        let w = match x.get(k..k + 2) {
            Some(w) => w[0] * w[1].exp(),
            None => x[0],
        };
        t[0].sin() * t[1] + v * x[0] + w
    }

    #[test]
    fn by_hand() {
        let x = [0.3, -0.7, 1.1, 0.5];
        let g = parts::gradient(&x);
        let want = [1.0 + x[1], x[0] + x[2], 2.0 * x[2] + x[1], 2.0 * x[3]];
        crate::common::close_to("parts", &g, &want, 1e-14);
        let g = framed::gradient(&x);
        let want = [
            x[3],
            x[1].cos() * x[2],
            x[1].sin() + x[3].exp(),
            x[0] + x[2] * x[3].exp(),
        ];
        crate::common::close_to("framed", &g, &want, 1e-14);
        // Too short for `x.get(1..3)`: the early return, no derivative.
        assert_eq!(framed::value_and_gradient(&x[..2]), (0.0, vec![0.0, 0.0]));
        // Too short for `x[1..].get(2)`: `t[0]`.
        assert_eq!(framed::gradient(&x[..3]), vec![0.0, 1.0, 0.0]);
        assert_eq!(
            framed::hessian(&x[..3]),
            ndarray::Array2::<f64>::zeros((3, 3))
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(parts, [0.3, -0.7, 1.1, 0.5]);
        all_orders!(framed, [0.3, -0.7, 1.1, 0.5]);
    }
}

/// A local buffer cut in two: `let t = v.split_off(k);`, `let t: Vec<f64> =
/// v.drain(a..b).collect();` (also `..b`, `a..`, `a..=b`) and `v.drain(r);`.
mod split_off_and_drain {
    use mochi::prelude::*;

    #[differentiable]
    pub fn halves(x: &[f64]) -> f64 {
        let mut y: Vec<f64> = x.iter().map(|v| v * 2.0).collect();
        let mut s = 0.0;
        while y.len() > 1 {
            let mut t = y.split_off(y.len() / 2);
            t[0] += 1.0;
            s += y.iter().sum::<f64>() * t.iter().map(|v| v.sin()).sum::<f64>();
        }
        s + y[0]
    }

    #[differentiable]
    pub fn drained(x: &[f64]) -> f64 {
        let mut y: Vec<f64> = x.iter().map(|v| v * 2.0 + 1.0).collect();
        let head: Vec<f64> = y.drain(..2).collect();
        let mut z = x.to_vec();
        z.drain(1..=2);
        let rest: Vec<_> = y.drain(1..).collect();
        head[0] * head[1]
            + y.iter().sum::<f64>() * 3.0
            + z[0] * z[1]
            + rest.iter().map(|v| v.exp()).sum::<f64>()
    }

    #[test]
    fn by_hand() {
        let x = [0.3, -0.7, 1.1, 0.5, 0.8];
        // y = 2x + 1; head = (y₀, y₁), then y = (y₂), rest = (y₃, y₄); z = (x₀, x₃, x₄).
        let y: Vec<f64> = x.iter().map(|v| v * 2.0 + 1.0).collect();
        let want = [
            2.0 * y[1] + x[3],
            2.0 * y[0],
            6.0,
            x[0] + 2.0 * y[3].exp(),
            2.0 * y[4].exp(),
        ];
        let g = drained::gradient(&x);
        crate::common::close_to("drained", &g, &want, 1e-13);
        // halves of 3 values: y = (2x₀), t = (2x₁ + 1, 2x₂); s = 2x₀·(sin(2x₁ + 1) + sin 2x₂).
        let x = [0.3f64, -0.7, 1.1];
        let (a, b) = ((2.0 * x[1] + 1.0).sin(), (2.0 * x[2]).sin());
        let want = [
            2.0 * (a + b) + 2.0,
            4.0 * x[0] * (2.0 * x[1] + 1.0).cos(),
            4.0 * x[0] * (2.0 * x[2]).cos(),
        ];
        let g = halves::gradient(&x);
        crate::common::close_to("halves", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(halves, [0.3, -0.7, 1.1, 0.5, 0.8]);
        all_orders!(drained, [0.3, -0.7, 1.1, 0.5, 0.8]);
    }
}

/// Maps of constants beside the differentiable values: class counts keyed by integer
/// labels (`*counts.entry(l).or_insert(0) += 1`), read as `counts[l]` with `l` an element
/// of the labels, in a `for` over a `zip` and in a chain, and a table of weights keyed by
/// names.
mod maps_of_constants {
    use mochi::prelude::*;
    use std::collections::HashMap;

    #[differentiable]
    pub fn class_balanced(x: &[f64], labels: &[usize]) -> f64 {
        let mut counts: HashMap<usize, usize> = HashMap::new();
        for &l in labels {
            *counts.entry(l).or_insert(0) += 1;
        }
        let mut s = 0.0;
        for (v, l) in x.iter().zip(labels) {
            s += v * v / counts[l] as f64;
        }
        for (v, l) in x.iter().zip(labels) {
            s += v.exp() / *counts.get(l).unwrap() as f64;
        }
        s + x
            .iter()
            .zip(labels)
            .map(|(v, l)| v.sin() * counts[l] as f64)
            .sum::<f64>()
    }

    #[differentiable]
    pub fn by_name(x: &[f64]) -> f64 {
        let names = ["a", "b", "a", "c"];
        let w: HashMap<&str, f64> = [("a", 2.0), ("b", 0.5), ("c", -1.0)].into_iter().collect();
        names.iter().zip(x).map(|(n, v)| w[n] * v * v).sum()
    }

    #[differentiable]
    pub fn grouped(x: &[f64]) -> f64 {
        class_balanced(x, &[0, 1, 0, 2, 1])
    }

    #[test]
    fn by_hand() {
        let x = [0.3, -0.7, 1.1, 0.5, 0.9];
        let labels = [0, 1, 0, 2, 1];
        let counts = [2.0, 2.0, 2.0, 1.0, 2.0];
        let (g, _) = class_balanced::gradient(&x, &labels);
        let want: Vec<f64> = (0..5)
            .map(|k| 2.0 * x[k] / counts[k] + x[k].exp() / counts[k] + x[k].cos() * counts[k])
            .collect();
        crate::common::close_to("class_balanced", &g, &want, 1e-13);
        let g = by_name::gradient(&x[..4]);
        let want = [4.0 * x[0], x[1], 4.0 * x[2], -2.0 * x[3]];
        crate::common::close_to("by_name", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(by_name, [0.3, -0.7, 1.1, 0.5]);
        all_orders!(grouped, [0.3, -0.7, 1.1, 0.5, 0.9]);
    }
}

/// A chain's closure whose value is an operation on a block, an `if` or a `match`
/// (`|&v| { let t = v * 2.0; t } + 1.0`, `|&v| if v > 0.0 { v } else { -v } * 2.0`), and
/// a helper's `Result` unwrapped with a default inside one (`h(v).unwrap_or(0.0) + 1.0`).
mod blocks_as_operands {
    use mochi::prelude::*;

    #[differentiable]
    pub fn root(v: f64) -> Result<f64, String> {
        if v < 0.0 {
            return Err(format!("root of {v}"));
        }
        Ok(v.sqrt())
    }

    #[differentiable]
    pub fn operands(x: &[f64]) -> f64 {
        let a: f64 = x.iter().map(|&v| { let t = v * 2.0; t * t } + 1.0).sum();
        let b: f64 = x.iter().map(|&v| if v > 0.0 { v } else { -v } * 2.0).sum();
        let c: f64 = x
            .iter()
            .map(|&v| {
                match v > 0.5 {
                    true => v,
                    false => v * v,
                }
                .exp()
            })
            .sum();
        let d: f64 = x.iter().map(|&v| root(v).unwrap_or(0.0) + 1.0).sum();
        a + b + c + d
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.2, 0.7, 1.1];
        let g = operands::gradient(&x);
        let want: Vec<f64> = x
            .iter()
            .map(|&v| {
                let c = if v > 0.5 {
                    v.exp()
                } else {
                    2.0 * v * (v * v).exp()
                };
                let d = if v < 0.0 { 0.0 } else { 0.5 / v.sqrt() };
                8.0 * v + 2.0 * v.signum() + c + d
            })
            .collect();
        crate::common::close_to("operands", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(operands, [0.3, -0.2, 0.7, 1.1]);
    }
}

/// A chain inside a chain's closure with adapters of its own (`rev`, `enumerate`,
/// `skip`, `zip`), reading a local of the closure: a polynomial by Horner over a
/// constant table (`A.iter().rev().fold(0.0, |p, &a| p * t + a)` with `t` computed from
/// the element), also inside a `fold`'s closure.
mod chains_in_chain_closures {
    use mochi::prelude::*;

    const A: [f64; 4] = [0.3, -0.2, 0.5, 0.1];

    #[differentiable]
    pub fn horner(x: &[f64]) -> f64 {
        x.iter()
            .map(|&v| {
                let t = 1.0 / (1.0 + 0.5 * v * v);
                A.iter().rev().fold(0.0, |p, &a| p * t + a) * t
            })
            .sum()
    }

    #[differentiable]
    pub fn adapters(x: &[f64]) -> f64 {
        let powers: f64 = x
            .iter()
            .map(|&v| {
                let t = v * 0.5;
                A.iter()
                    .enumerate()
                    .map(|(i, &w)| w * t.powi(i as i32))
                    .sum::<f64>()
            })
            .sum();
        let pairs: f64 = x
            .iter()
            .map(|&v| {
                let s = v.sin();
                A.iter()
                    .zip(A.iter().skip(1))
                    .map(|(a, b)| a * s + b * s * s)
                    .sum::<f64>()
            })
            .sum();
        let folded = x.iter().fold(0.0, |acc, &v| {
            let t = v.exp();
            acc + A.iter().rev().fold(0.0, |p, &a| p * t + a)
        });
        powers + pairs + folded
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let g = horner::gradient(&x);
        // f(t) = t·(a0 + a1 t + a2 t² + a3 t³), t = 1 / (1 + v²/2), dt/dv = −v t².
        let want: Vec<f64> = x
            .iter()
            .map(|&v| {
                let t = 1.0 / (1.0 + 0.5 * v * v);
                let df = A[0] + 2.0 * A[1] * t + 3.0 * A[2] * t * t + 4.0 * A[3] * t * t * t;
                df * (-v * t * t)
            })
            .collect();
        crate::common::close_to("horner", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(horner, [0.3, -0.7, 1.1]);
        all_orders!(adapters, [0.3, -0.7, 1.1]);
    }
}

/// `split_at` and `split_at_mut` of a sub-slice written in the `let`
/// (`let (a, b) = x[1..].split_at(2);`, `(&x[1..]).split_at(2)`, `v[1..].split_at_mut(2)`).
mod split_sub_slices {
    use mochi::prelude::*;

    // (The borrowed receiver is one of the forms tested.)
    #[allow(clippy::needless_borrow)]
    #[differentiable]
    pub fn halves(x: &[f64]) -> f64 {
        let (a, b) = x[1..].split_at(2);
        let (c, d) = (&x[..x.len() - 1]).split_at(1);
        a[0] * b[1] + b.iter().map(|v| v * v).sum::<f64>() * a.len() as f64 + c[0] * d[d.len() - 1]
    }

    #[differentiable]
    pub fn halves_mut(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let (a, b) = v[1..].split_at_mut(2);
        a[0] += b[0];
        b[1] *= a[1];
        v.iter().map(|t| t * t).sum()
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1, 0.5, 0.8];
        // a = x[1..3], b = x[3..], c = x[..1], d = x[1..4].
        let g = halves::gradient(&x);
        let want = [x[3], x[4], 0.0, 4.0 * x[3] + x[0], x[1] + 4.0 * x[4]];
        crate::common::close_to("halves", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(halves, [0.3, -0.7, 1.1, 0.5, 0.8]);
        all_orders!(halves_mut, [0.3, -0.7, 1.1, 0.5, 0.8]);
    }
}

/// `round_ties_even`, piecewise constant like `round`, at every order.
mod rounded_ties_even {
    use mochi::prelude::*;

    #[differentiable]
    pub fn snapped(x: &[f64]) -> f64 {
        x[0] * (x[1] * 3.0).round_ties_even() + (x[0] * 4.0).round_ties_even().powi(2) * x[1]
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, 0.7];
        let g = snapped::gradient(&x);
        // round_ties_even(2.1) = 2, round_ties_even(1.2) = 1.
        crate::common::close_to("snapped", &g, &[2.0, 1.0], 1e-15);
    }

    mod t {
        use crate::all_orders;
        all_orders!(snapped, [0.3, 0.7]);
    }
}

/// Compound assignments of arrays by borrowed constants (`c -= &e`, `c *= &h`, `c /=
/// &Array2::from_elem(..)`), which were passed to the rules as references to references.
mod compound_by_borrowed_constants {
    use mochi::prelude::*;
    use ndarray::{Array1, Array2};

    #[differentiable]
    pub fn gram(x: &Array1<f64>) -> f64 {
        let m = x.to_owned().into_shape_with_order((2, 2)).unwrap();
        let mut c = m.dot(&m.t());
        let e = Array2::<f64>::eye(2);
        let h = Array2::from_elem((2, 2), 0.5);
        c -= &e;
        c *= &h;
        c += &(&e * 3.0);
        c /= &Array2::from_elem((2, 2), 2.0);
        c.mapv(|v| v * v).sum()
    }

    #[test]
    fn at_every_order() {
        let x = ndarray::array![0.3, 0.7, -0.4, 1.1];
        let f = |v: &[f64]| gram(&Array1::from(v.to_vec()));
        let g = gram::gradient(&x);
        crate::common::assert_gradient_matches(f, g.as_slice().unwrap(), x.as_slice().unwrap());
        // The Hessian against central differences of the gradient.
        let h = gram::hessian(&x);
        let grad = |v: &[f64]| gram::gradient(&Array1::from(v.to_vec())).to_vec();
        crate::common::assert_hessian_matches("gram", grad, &h, x.as_slice().unwrap(), 1e-6);
    }
}

/// Functions generic over a length (`const N: usize`): their own `hessian`, `jvp` and
/// `jacobian`, and every order of their callers (arrays written in the call, bound to a
/// local, or an argument of a fixed size), also beside a float type parameter.
mod over_lengths {
    use mochi::num_traits::Float;
    use mochi::prelude::*;

    #[differentiable]
    pub fn norm<const N: usize>(v: [f64; N]) -> f64 {
        v.iter().map(|a| a * a).sum::<f64>().sqrt()
    }

    #[differentiable]
    pub fn chain_energy<const N: usize>(x: &[f64; N], k: f64) -> f64 {
        let mut e = 0.0;
        for i in 1..N {
            e += k * (x[i] - x[i - 1]).powi(2);
        }
        e / N as f64
    }

    #[differentiable]
    pub fn scaled<const N: usize>(v: [f64; N], k: f64) -> [f64; N] {
        let mut out = [0.0; N];
        for i in 0..N {
            out[i] = v[i] * k + v[i].sin();
        }
        out
    }

    #[differentiable]
    pub fn dot<T: Float, const N: usize>(a: [T; N], b: [T; N]) -> T {
        let mut s = T::zero();
        for i in 0..N {
            s = s + a[i] * b[i];
        }
        s
    }

    #[differentiable]
    pub fn caller(x: &[f64]) -> f64 {
        let p = [x[0], x[1], x[2]];
        let s = scaled(p, x[3]);
        norm(p) * chain_energy(&[x[0], x[1], x[2], x[3]], 0.5) + s[0] * s[2] + dot(p, s)
    }

    #[differentiable]
    pub fn fixed(x: &[f64; 3]) -> f64 {
        chain_energy(x, 2.0) + x[0] * x[1] * x[2]
    }

    #[differentiable]
    pub fn mean<const N: usize>(v: &[f64; N]) -> f64 {
        v.iter().sum::<f64>() / N as f64
    }

    // The array a length-generic callee is given is a call's result, whose length only
    // its type knows.
    #[differentiable]
    pub fn of_results(x: &[f64]) -> f64 {
        let p = [x[0], x[1], x[2]];
        mean(&scaled(p, x[3])) + norm(scaled(p, 2.0))
    }

    #[test]
    fn own_companions() {
        let x = [0.3f64, -0.7, 1.1];
        // H of |v|: (I − v vᵀ/|v|²)/|v|.
        let h = norm::hessian(x);
        let r = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        for i in 0..3 {
            for j in 0..3 {
                let want = (f64::from(u8::from(i == j)) - x[i] * x[j] / (r * r)) / r;
                assert!((h[[i, j]] - want).abs() < 1e-13, "H[{i},{j}]");
            }
        }
        // ∂/∂x0 of k/3·[(x1 − x0)² + (x2 − x1)²] along e0 is −2k/3·(x1 − x0).
        let (y, d) = chain_energy::jvp(&x, 0.5, (&[1.0, 0.0, 0.0][..], 0.0));
        assert!((y - chain_energy(&x, 0.5)).abs() < 1e-15);
        assert!((d + (x[1] - x[0]) / 3.0).abs() < 1e-14, "{d}");
        // J of v·k + sin v in (v, k): diagonal k + cos v, then the column v.
        let (v, j) = scaled::jacobian(x, 2.0);
        assert!((v[1] - (2.0 * x[1] + x[1].sin())).abs() < 1e-15);
        for r in 0..3 {
            for c in 0..3 {
                let want = if r == c { 2.0 + x[r].cos() } else { 0.0 };
                assert!((j[[r, c]] - want).abs() < 1e-14, "J[{r},{c}]");
            }
            assert!((j[[r, 3]] - x[r]).abs() < 1e-14, "J[{r},3]");
        }
        // The fixed-size argument's Hessian: k/3 · the chain's Laplacian, plus x0 x1 x2's.
        let h = fixed::hessian(&x);
        let lap = [[1.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 1.0]];
        let cross = [[0.0, x[2], x[1]], [x[2], 0.0, x[0]], [x[1], x[0], 0.0]];
        for i in 0..3 {
            for j in 0..3 {
                let want = 4.0 / 3.0 * lap[i][j] + cross[i][j];
                assert!((h[[i, j]] - want).abs() < 1e-13, "fixed H[{i},{j}]");
            }
        }
    }

    mod t {
        use crate::all_orders;
        all_orders!(caller, [0.3, -0.7, 1.1, 0.4]);
        all_orders!(of_results, [0.3, -0.7, 1.1, 0.4]);
    }
}

/// A helper returning a part of its slice argument beside floats, its lifetime elided
/// (`fn unpack(theta: &[f64]) -> (f64, f64, &[f64])`), and its callers at every order.
mod borrowed_results {
    use mochi::prelude::*;

    #[differentiable]
    pub fn unpack(theta: &[f64]) -> (f64, f64, &[f64]) {
        let (head, beta) = theta.split_at(2);
        (head[0], head[1].exp(), beta)
    }

    #[differentiable]
    pub fn regression(theta: &[f64]) -> f64 {
        const X: [f64; 4] = [0.5, -1.0, 1.5, 2.0];
        const Y: [f64; 4] = [1.0, 0.2, 2.1, 2.9];
        let (a, s, beta) = unpack(theta);
        let mut nll = 0.0;
        for (x, y) in X.iter().zip(Y) {
            let r = (y - a - beta[0] * x - beta[1] * x * x) / s;
            nll += 0.5 * r * r + s.ln();
        }
        nll
    }

    #[test]
    fn by_hand() {
        let theta = [0.1f64, -0.3, 0.8, 0.05];
        let g = regression::gradient(&theta);
        let (a, s) = (theta[0], theta[1].exp());
        let mut want = [0.0; 4];
        for (x, y) in [0.5f64, -1.0, 1.5, 2.0].iter().zip([1.0f64, 0.2, 2.1, 2.9]) {
            let r = (y - a - theta[2] * x - theta[3] * x * x) / s;
            want[0] -= r / s;
            want[1] += 1.0 - r * r;
            want[2] -= r * x / s;
            want[3] -= r * x * x / s;
        }
        crate::common::close_to("regression", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(regression, [0.1, -0.3, 0.8, 0.05]);
    }
}

/// A part of a sub-slice, `&x[k * d..][..d]` (the layout of packed parameters, as
/// ADBench's GMM writes it), `x[1..][1]`, `x[..4][1..3]`, `x[1..=3][2]`, and the bounds
/// of the slice of a slice kept (`x[0..2][..3]` panics in the gradient too).
mod parts_of_sub_slices {
    use mochi::prelude::*;

    #[differentiable]
    pub fn sq(x: &[f64]) -> f64 {
        x.iter().map(|v| v * v).sum()
    }

    #[differentiable]
    pub fn packed(x: &[f64]) -> f64 {
        let d = 2;
        let mut s = 0.0;
        for k in 0..2 {
            s += sq(&x[k * d..][..d]) * x[k * d..][1];
        }
        s + x[1..][..2].iter().sum::<f64>() * x[1..][1]
            + sq(&x[..4][1..3]) * x[1..=3][2]
            + x[0..4][1..].iter().map(|v| v.sin()).sum::<f64>()
    }

    /// An element of a sub-slice written (`v[1..][0] = ..`), which is `v[1]`.
    #[differentiable]
    pub fn written(x: &[f64], a: f64) -> f64 {
        let mut v = x.to_vec();
        v[1..][0] = a * v[0];
        v[1] + v[2]
    }

    #[test]
    fn written_by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let (dx, da) = written::gradient(&x, 2.0);
        crate::common::close_to("written", &dx, &[2.0, 0.0, 1.0], 1e-15);
        assert_eq!(da, x[0]);
    }

    #[differentiable]
    pub fn past_the_end(x: &[f64]) -> f64 {
        sq(&x[0..2][..3])
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1, 0.4, 0.9];
        let g = packed::gradient(&x);
        // (x0² + x1²)x1 + (x2² + x3²)x3 + (x1 + x2)x2 + (x1² + x2²)x3 + sin x1 + sin x2 + sin x3
        let want = [
            2.0 * x[0] * x[1],
            x[0] * x[0] + 3.0 * x[1] * x[1] + x[2] + 2.0 * x[1] * x[3] + x[1].cos(),
            2.0 * x[2] * x[3] + x[1] + 2.0 * x[2] + 2.0 * x[2] * x[3] + x[2].cos(),
            x[2] * x[2] + 3.0 * x[3] * x[3] + x[1] * x[1] + x[2] * x[2] + x[3].cos(),
            0.0,
        ];
        crate::common::close_to("packed", &g, &want, 1e-13);
    }

    #[test]
    #[should_panic(expected = "out of range for slice of length 2")]
    fn bounds_kept() {
        let _ = past_the_end::gradient(&[0.3, -0.7, 1.1, 0.4]);
    }

    mod t {
        use crate::all_orders;
        all_orders!(packed, [0.3, -0.7, 1.1, 0.4, 0.9]);
    }
}

/// The last of a `scan` (`scan(0.0, |s, &v| { *s += v * v; Some(*s) }).last()`), and a
/// piece of `chunks`/`windows` walked by a `for` of its own (`for v in row`).
mod scans_and_pieces {
    use mochi::prelude::*;

    #[differentiable]
    pub fn running(x: &[f64]) -> f64 {
        let total = x
            .iter()
            .scan(0.0, |acc, &v| {
                *acc += v * v;
                Some(*acc)
            })
            .last()
            .unwrap_or(0.0);
        let second = x
            .iter()
            .scan(1.0, |p, &v| {
                *p *= v;
                Some(*p)
            })
            .nth(1)
            .unwrap_or(0.0);
        total.sqrt() + second
    }

    #[differentiable]
    pub fn softmax_rows(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for row in x.chunks(3) {
            let z: f64 = row.iter().map(|v| v.exp()).sum();
            for v in row {
                s += v.exp() / z * v;
            }
        }
        for w in x.windows(2) {
            for &v in w {
                s += v * w[0];
            }
        }
        s
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let g = running::gradient(&x);
        let r = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let want = [x[0] / r + x[1], x[1] / r + x[0], x[2] / r];
        crate::common::close_to("running", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(running, [0.3, -0.7, 1.1]);
        all_orders!(softmax_rows, [0.3, -0.7, 1.1, 0.2, 0.5, -0.1]);
    }
}

/// A recursive function over slice patterns (`[a, rest @ ..] => a + 1.0 / f(rest)`).
/// Before 2026-12-06 it had no generic form, and the reason held braces of its own
/// (before that, the reason was read as a format string and the attribute failed with
/// "invalid format string"); now the rest bound by the pattern carries the slice's
/// derivative, and it has every order.
mod recursive_slice_patterns {
    use mochi::prelude::*;

    #[differentiable]
    pub fn continued_fraction(x: &[f64]) -> f64 {
        match x {
            [] => 0.0,
            [a] => *a,
            [a, rest @ ..] => a + 1.0 / continued_fraction(rest),
        }
    }

    #[test]
    fn by_hand() {
        let x = [0.5f64, 1.2, 0.7];
        let g = continued_fraction::gradient(&x);
        // a0 + 1/(a1 + 1/a2)
        let d = x[1] + 1.0 / x[2];
        let want = [1.0, -1.0 / (d * d), 1.0 / (d * d * x[2] * x[2])];
        crate::common::close_to("continued_fraction", &g, &want, 1e-13);
        let f = |z: &[f64]| continued_fraction(z);
        crate::common::assert_gradient_matches(f, &g, &x);
    }

    mod t {
        use crate::all_orders;
        all_orders!(continued_fraction, [0.5, 1.2, 0.7]);
    }
}

/// Constants defined outside the function handed to plain (unmarked) helpers: a struct
/// of hyperparameters with no `Tangent`, by reference and by value (`shrink(&HP)`), an
/// array named by one letter (`wsum(&W)`, also to a helper taking a slice), a float by
/// a module path (`twice(cfg::SCALE)`). The helpers take them at their own types at
/// every order (before, the generic form read them back as floats: a type error at the
/// attribute, or no `hessian`).
mod constants_to_plain_helpers {
    use mochi::prelude::*;

    #[derive(Clone, Copy)]
    pub struct Hyper {
        lr: f64,
        decay: f64,
    }
    const HP: Hyper = Hyper {
        lr: 0.1,
        decay: 0.9,
    };
    const W: [f64; 3] = [0.5, -1.0, 2.0];
    mod cfg {
        pub const SCALE: f64 = 1.5;
    }

    fn shrink(h: &Hyper) -> f64 {
        h.lr * h.decay
    }
    fn shrink_v(h: Hyper) -> f64 {
        h.lr + h.decay
    }
    fn wsum(w: &[f64; 3]) -> f64 {
        w.iter().sum()
    }
    fn wsq(w: &[f64]) -> f64 {
        w.iter().map(|v| v * v).sum()
    }
    fn twice(s: f64) -> f64 {
        2.0 * s
    }

    #[differentiable]
    pub fn decayed(x: &[f64]) -> f64 {
        let k = shrink(&HP);
        let m = shrink_v(HP);
        x.iter().map(|v| k * v * v).sum::<f64>() + m * x[0] * x[1]
    }

    #[differentiable]
    pub fn weighted(x: &[f64]) -> f64 {
        let a = wsum(&W);
        let b = wsq(&W);
        (x[0] * a + x[1] * b).sin() + x[0] * x[0] * twice(cfg::SCALE)
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7];
        let g = decayed::gradient(&x);
        let (k, m) = (0.1 * 0.9, 0.1 + 0.9);
        crate::common::close_to(
            "decayed",
            &g,
            &[2.0 * k * x[0] + m * x[1], 2.0 * k * x[1] + m * x[0]],
            1e-14,
        );
        let g = weighted::gradient(&x);
        let (a, b) = (1.5, 0.25 + 1.0 + 4.0);
        let c = (x[0] * a + x[1] * b).cos();
        crate::common::close_to("weighted", &g, &[a * c + 6.0 * x[0], b * c], 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(decayed, [0.3, -0.7]);
        all_orders!(weighted, [0.3, -0.7]);
    }
}

/// A pivot search over rows the function writes (`(k..n).max_by(|&i, &j|
/// a[i][k].abs().total_cmp(&a[j][k].abs()))` in Gaussian elimination): the comparator
/// reads them and changes nothing (before, it was refused as a closure that changes a
/// variable with a derivative, because the generic form's comparator ends in
/// `unwrap_or`).
mod pivot_searches {
    use mochi::prelude::*;

    #[differentiable]
    pub fn det_pivoted(x: &[f64]) -> f64 {
        let n = 3;
        let mut a: Vec<Vec<f64>> = (0..n).map(|i| x[i * n..(i + 1) * n].to_vec()).collect();
        let mut det = 1.0;
        for k in 0..n {
            let piv = (k..n)
                .max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))
                .unwrap();
            if piv != k {
                a.swap(piv, k);
                det = -det;
            }
            let p = a[k][k];
            det *= p;
            for i in k + 1..n {
                let factor = a[i][k] / p;
                for j in k..n {
                    a[i][j] -= factor * a[k][j];
                }
            }
        }
        det
    }

    #[differentiable]
    pub fn largest_by_partial_cmp(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v[0] *= 2.0;
        let i = (0..v.len())
            .min_by(|&i, &j| v[j].partial_cmp(&v[i]).unwrap())
            .unwrap();
        v[i] * v[i]
    }

    #[test]
    fn cofactors() {
        // The gradient of a determinant is its cofactor matrix.
        let x = [0.3f64, 2.0, -0.5, 1.2, 0.4, 0.9, -0.8, 0.6, 1.5];
        let g = det_pivoted::gradient(&x);
        let m = |r: usize, c: usize| x[3 * r + c];
        let mut want = [0.0; 9];
        for r in 0..3 {
            for c in 0..3 {
                let (r1, r2, c1, c2) = ((r + 1) % 3, (r + 2) % 3, (c + 1) % 3, (c + 2) % 3);
                want[3 * r + c] = m(r1, c1) * m(r2, c2) - m(r1, c2) * m(r2, c1);
            }
        }
        crate::common::close_to("det_pivoted", &g, &want, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(det_pivoted, [0.3, 2.0, -0.5, 1.2, 0.4, 0.9, -0.8, 0.6, 1.5]);
        all_orders!(largest_by_partial_cmp, [0.3, 2.0, -0.5]);
    }
}

/// Struct forms the generic form reads (Hessians of `higher_order` functions): a
/// `sum::<P3>()` of a chain then a method of the result, a method of the difference of
/// two elements' fields (`(bodies[1].pos - bodies[0].pos).norm()`), and `vec![P3::zero();
/// n]` (before, no `hessian`: "it calls the method `norm`", and "the macro `vec!` cannot
/// be differentiated", the comma of `lift_value::<T, _>` read as the macro's).
mod struct_forms_read {
    use mochi::prelude::*;
    use std::iter::Sum;
    use std::ops::{Add, AddAssign, Mul, Sub};

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct P3 {
        x: f64,
        y: f64,
        z: f64,
    }

    #[differentiable(higher_order)]
    impl P3 {
        fn new(x: f64, y: f64, z: f64) -> Self {
            P3 { x, y, z }
        }
        fn zero() -> Self {
            P3 {
                x: 0.0,
                y: 0.0,
                z: 0.0,
            }
        }
        fn dot(&self, o: &P3) -> f64 {
            self.x * o.x + self.y * o.y + self.z * o.z
        }
        fn norm(&self) -> f64 {
            self.dot(self).sqrt()
        }
    }

    #[differentiable(higher_order)]
    impl Add for P3 {
        type Output = P3;
        fn add(self, o: P3) -> P3 {
            P3::new(self.x + o.x, self.y + o.y, self.z + o.z)
        }
    }

    #[differentiable(higher_order)]
    impl Sub for P3 {
        type Output = P3;
        fn sub(self, o: P3) -> P3 {
            P3::new(self.x - o.x, self.y - o.y, self.z - o.z)
        }
    }

    #[differentiable(higher_order)]
    impl Mul<f64> for P3 {
        type Output = P3;
        fn mul(self, k: f64) -> P3 {
            P3::new(self.x * k, self.y * k, self.z * k)
        }
    }

    #[differentiable(higher_order)]
    impl AddAssign for P3 {
        fn add_assign(&mut self, o: P3) {
            self.x += o.x;
            self.y += o.y;
            self.z += o.z;
        }
    }

    #[differentiable(higher_order)]
    impl Sum for P3 {
        fn sum<I: Iterator<Item = P3>>(iter: I) -> P3 {
            iter.fold(P3::zero(), |a, b| a + b)
        }
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Body3 {
        pos: P3,
        vel: P3,
        mass: f64,
    }

    #[differentiable(higher_order)]
    pub fn bodies(p: &[f64]) -> f64 {
        let bodies: Vec<Body3> = p
            .chunks(7)
            .map(|c| Body3 {
                pos: P3::new(c[0], c[1], c[2]),
                vel: P3::new(c[3], c[4], c[5]),
                mass: c[6],
            })
            .collect();
        let momentum = bodies.iter().map(|b| b.vel * b.mass).sum::<P3>();
        let sep = bodies[1].pos - bodies[0].pos;
        let mut half = vec![P3::zero(); bodies.len()];
        for i in 0..bodies.len() {
            half[i] += bodies[i].vel * 0.5;
        }
        momentum.norm() + 1.0 / sep.norm() + half[1].dot(&half[0])
    }

    #[test]
    fn by_hand() {
        let p = [
            0.1f64, 0.2, 0.3, 1.0, -0.5, 0.25, 2.0, 1.1, -0.4, 0.9, 0.3, 0.7, -0.2, 0.5,
        ];
        let g = bodies::gradient(&p);
        // ∂/∂x1 of 1/|sep| with sep = pos1 − pos0: −sep_x/|sep|³.
        let s = [p[7] - p[0], p[8] - p[1], p[9] - p[2]];
        let r = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt();
        let m = [
            p[3] * p[6] + p[10] * p[13],
            p[4] * p[6] + p[11] * p[13],
            p[5] * p[6] + p[12] * p[13],
        ];
        let mn = (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt();
        assert!((g[7] + s[0] / (r * r * r)).abs() < 1e-12, "{}", g[7]);
        // ∂/∂v0x: m0·M_x/|M| + v1x/4.
        assert!(
            (g[3] - (p[6] * m[0] / mn + p[10] / 4.0)).abs() < 1e-12,
            "{}",
            g[3]
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(
            bodies,
            [0.1, 0.2, 0.3, 1.0, -0.5, 0.25, 2.0, 1.1, -0.4, 0.9, 0.3, 0.7, -0.2, 0.5]
        );
    }
}

/// Enums of the crate as arguments: matched inside a chain's closure, whose derived
/// closure holds the captured enum by reference (`Loss::Huber(delta)` binds `delta:
/// f64` as written; before, a type error at the user's `r.abs() <= delta`), and passed
/// through by the companions (`hessian(&x, Act::Tanh)`; before, no `hessian`: "an
/// argument is a struct or an enum").
mod enum_arguments {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Loss {
        Squared,
        Huber(f64),
        LogCosh,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Tangent)]
    pub enum Act {
        Tanh,
        Sigmoid,
    }

    #[differentiable(higher_order)]
    pub fn robust(r: &[f64], loss: Loss) -> f64 {
        r.iter()
            .map(|&v| match loss {
                Loss::Squared => 0.5 * v * v,
                Loss::Huber(delta) => {
                    if v.abs() <= delta {
                        0.5 * v * v
                    } else {
                        delta * (v.abs() - 0.5 * delta)
                    }
                }
                Loss::LogCosh => v.cosh().ln(),
            })
            .sum()
    }

    #[differentiable(higher_order)]
    pub fn activated(x: &[f64], act: Act) -> f64 {
        x.iter()
            .map(|&v| match act {
                Act::Tanh => v.tanh(),
                Act::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            })
            .map(|a| a * a)
            .sum::<f64>()
            .sqrt()
    }

    #[test]
    fn robust_by_hand() {
        let r = [0.3f64, -2.0, 1.5];
        let (g, _) = robust::gradient(&r, Loss::Huber(1.0));
        crate::common::close_to("huber", &g, &[0.3, -1.0, 1.0], 1e-15);
        let (g, _) = robust::gradient(&r, Loss::LogCosh);
        let want: Vec<f64> = r.iter().map(|v| v.tanh()).collect();
        crate::common::close_to("logcosh", &g, &want, 1e-15);
        for loss in [Loss::Squared, Loss::Huber(1.0), Loss::LogCosh] {
            let h = robust::hessian(&r, loss);
            crate::common::assert_hessian_matches(
                "robust",
                |v: &[f64]| robust::gradient(v, loss).0,
                &h,
                &r,
                1e-5,
            );
        }
    }

    #[test]
    fn activated_at_every_order() {
        let x = [0.7f64, -0.4, 1.3];
        for act in [Act::Tanh, Act::Sigmoid] {
            let (g, _) = activated::gradient(&x, act);
            let fd = crate::common::fd(&|v: &[f64]| activated(v, act), &x);
            crate::common::close("activated", &g, &fd);
            let h = activated::hessian(&x, act);
            crate::common::assert_hessian_matches(
                "activated",
                |v: &[f64]| activated::gradient(v, act).0,
                &h,
                &x,
                1e-5,
            );
        }
    }
}

/// ndarray's `array!` with values computed in the function (`array![[c[[1, 1]],
/// -c[[0, 1]]], ..] / det`, the inverse of a 2×2 covariance): its elements carry
/// derivatives (before, "the macro `vec!` cannot take differentiable values").
mod array_literals_of_locals {
    use mochi::prelude::*;
    use ndarray::array;

    #[differentiable]
    pub fn gaussian_2d(t: &[f64]) -> f64 {
        let l = array![[t[2].exp(), 0.0], [t[3], t[4].exp()]];
        let cov = l.dot(&l.t());
        let det = cov[[0, 0]] * cov[[1, 1]] - cov[[0, 1]] * cov[[1, 0]];
        let inv = array![[cov[[1, 1]], -cov[[0, 1]]], [-cov[[1, 0]], cov[[0, 0]]]] / det;
        let d = array![0.5 - t[0], -0.3 - t[1]];
        -0.5 * d.dot(&inv.dot(&d)) - 0.5 * det.ln()
    }

    #[test]
    fn gradient() {
        let t = [0.1f64, -0.2, 0.3, 0.4, -0.1];
        let g = gaussian_2d::gradient(&t);
        crate::common::assert_gradient_matches(gaussian_2d, &g, &t);
        // ∂/∂μ of −½ dᵀΣ⁻¹d is Σ⁻¹d.
        let (a, b, c) = (t[2].exp(), t[3], t[4].exp());
        let (s00, s01, s11) = (a * a, a * b, b * b + c * c);
        let det = s00 * s11 - s01 * s01;
        let d = [0.5 - t[0], -0.3 - t[1]];
        let want = [
            (s11 * d[0] - s01 * d[1]) / det,
            (s00 * d[1] - s01 * d[0]) / det,
        ];
        crate::common::close_to("gaussian_2d", &g[..2], &want, 1e-12);
    }
}

/// A slice bound to the whole of an array or a `Vec` (`let s: &[f64] = &z;`), also as a
/// local closure's slice parameter given one (`q(&z, &w)` of `|to: &[f64], from:
/// &[f64]|`): read as the sub-slice of all of it (before, a type error at the attribute,
/// the array's cotangent given a `Vec`'s).
mod slices_of_whole_arrays {
    use mochi::prelude::*;

    #[differentiable]
    pub fn bound(p: &[f64]) -> f64 {
        let z = [p[0], p[1]];
        let s: &[f64] = &z;
        s[0] * s[1] + s.iter().map(|v| v.sin()).sum::<f64>()
    }

    #[differentiable]
    pub fn proposal(p: &[f64]) -> f64 {
        let z = [p[0], p[1]];
        let w = vec![p[1] * p[2], p[0]];
        let tau = p[2];
        let q = |to: &[f64], from: &[f64]| -> f64 {
            let d0 = to[0] - from[0] - tau * from[1];
            let d1 = to[1] - from[1];
            -(d0 * d0 + d1 * d1) / (4.0 * tau)
        };
        q(&z, &w) - q(&w, &z) + q(p, &z)
    }

    #[test]
    fn by_hand() {
        let p = [0.3f64, -0.7, 1.1];
        let g = bound::gradient(&p);
        crate::common::close_to(
            "bound",
            &g,
            &[p[1] + p[0].cos(), p[0] + p[1].cos(), 0.0],
            1e-15,
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(bound, [0.3, -0.7, 1.1]);
        all_orders!(proposal, [0.6, -0.3, 0.4]);
    }
}

/// Euclidean remainders and quotients of floats (a phase wrapped into a period, a bin
/// index), at every order: the generic form's scalar has them too.
mod euclidean_remainders {
    use mochi::prelude::*;

    #[differentiable]
    pub fn wrapped(p: &[f64]) -> f64 {
        let phase = (p[0] * 3.0 + 5.0).rem_euclid(2.0 * std::f64::consts::PI);
        let turns = (p[1] * 4.0).div_euclid(1.5);
        phase.sin() * p[1] + (p[2] * p[0]).rem_euclid(0.7) * p[2] + turns * p[0]
    }

    #[differentiable]
    pub fn period_of_input(p: &[f64]) -> f64 {
        // both operands differentiable: ∂/∂r = −div_euclid(x, r)
        let r = p[1] * p[1] + 0.5;
        p[0].rem_euclid(r) * p[2].exp()
    }

    #[test]
    fn by_hand() {
        let p = [-1.3f64, 0.8, 0.4];
        let g = period_of_input::gradient(&p);
        let r = p[1] * p[1] + 0.5;
        let q = p[0].div_euclid(r);
        let e = p[2].exp();
        crate::common::close_to(
            "period_of_input",
            &g,
            &[e, -q * 2.0 * p[1] * e, p[0].rem_euclid(r) * e],
            1e-14,
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(wrapped, [0.3, -0.7, 1.1]);
        all_orders!(period_of_input, [-1.3, 0.8, 0.4]);
    }
}

/// One-dimensional ndarray views of slices and `Vec`s made inside the function
/// (`ArrayView1::from(&x[..3])`, `aview1(..)`), at every order: their cotangents flow
/// back into the sequence's elements.
mod views_of_slices {
    use mochi::prelude::*;
    use ndarray::{aview1, ArrayView, ArrayView1};

    #[differentiable]
    pub fn halves(p: &[f64]) -> f64 {
        let a = ArrayView1::from(&p[..3]);
        let w = ArrayView1::from(&p[3..6]);
        a.dot(&w).sin() + a.mapv(f64::exp).sum().ln() + (&a * &w).mean().unwrap()
    }

    #[differentiable]
    pub fn of_a_vec(p: &[f64]) -> f64 {
        let v: Vec<f64> = p.iter().map(|a| a * a).collect();
        let a = ArrayView::from(&v);
        let b = ArrayView1::from(p);
        a.dot(&b)
    }

    #[differentiable]
    pub fn free_functions(p: &[f64]) -> f64 {
        let a = aview1(&p[1..]);
        let b = ndarray::aview1(&p[..2]);
        a.mapv(f64::exp).sum() * b.dot(&b)
    }

    #[test]
    fn by_hand() {
        let p = [0.3f64, 0.5, -0.2];
        let g = free_functions::gradient(&p);
        let (s, q) = (p[1].exp() + p[2].exp(), p[0] * p[0] + p[1] * p[1]);
        crate::common::close_to(
            "free_functions",
            &g,
            &[
                s * 2.0 * p[0],
                p[1].exp() * q + s * 2.0 * p[1],
                p[2].exp() * q,
            ],
            1e-14,
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(halves, [0.3, -0.7, 1.1, 0.4, 0.9, -0.5]);
        all_orders!(of_a_vec, [0.3, -0.7, 1.1]);
        all_orders!(free_functions, [0.3, 0.5, -0.2]);
    }
}

/// A helper returning an ndarray array, its result bound without a type and read with
/// array methods (`let a = features(x); a.dot(&a)`), at every order: the caller's
/// generic form knows the helper's result is an array (the helper declared before it;
/// declared after, the local's written type says so, `ui/array_method_on_untyped_local.rs`).
mod array_results_of_helpers {
    use mochi::prelude::*;
    use ndarray::Array1;

    #[differentiable]
    fn features(x: &[f64]) -> Array1<f64> {
        Array1::from_iter(x.iter().map(|v| v.tanh()))
    }

    #[differentiable]
    pub fn untyped(x: &[f64]) -> f64 {
        let a = features(x);
        a.dot(&a).sqrt() + a[1] * a.sum()
    }

    #[differentiable]
    pub fn typed_before_helper(x: &[f64]) -> f64 {
        let a: Array1<f64> = later(x);
        (&a * &a).mapv(f64::exp).sum()
    }

    #[differentiable]
    fn later(x: &[f64]) -> Array1<f64> {
        Array1::from_iter(x.iter().map(|v| 2.0 * v))
    }

    mod t {
        use crate::all_orders;
        all_orders!(untyped, [0.3, -0.7, 1.1]);
        all_orders!(typed_before_helper, [0.3, -0.7, 0.4]);
    }
}

/// A function generic over `Real` taking its scalar by reference (`fn square<T:
/// Real>(x: &T)`, as `std::autodiff`'s examples write it), called from a function over
/// `f64`: the caller has its companions at every order (the generic form's bridge
/// respells `&T` as it respells `T`).
mod generic_by_reference {
    use mochi::prelude::*;

    #[differentiable]
    fn square<T: mochi::Real>(x: &T) -> T {
        *x * *x
    }

    #[differentiable]
    fn scaled<T: mochi::Real>(x: &T, v: &[T], k: T) -> T {
        v.iter().map(|a| *a * *x).sum::<T>() * k
    }

    #[differentiable]
    pub fn caller(x: &[f64]) -> f64 {
        let a = x[0];
        let b = x[1] * x[2];
        square(&a) * x[2] + square(&b).sin() + scaled(&x[0], &x[1..], x[2])
    }

    #[test]
    fn by_hand() {
        let g = square::gradient(&3.0_f64);
        assert_eq!(g, 6.0);
        let x = [0.3f64, -0.7, 1.1];
        let b = x[1] * x[2];
        let c = 2.0 * b * (b * b).cos();
        let g = caller::gradient(&x);
        crate::common::close_to(
            "caller",
            &g,
            &[
                2.0 * x[0] * x[2] + (x[1] + x[2]) * x[2],
                c * x[2] + x[0] * x[2],
                x[0] * x[0] + c * x[1] + x[0] * (x[1] + x[2]) + x[0] * x[2],
            ],
            1e-14,
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(caller, [0.3, -0.7, 1.1]);
    }
}

/// Recursion over slice patterns, as functional-style Rust writes a fold (`match x {
/// [] => .., [h, t @ ..] => h + f(t) }`, also `if let`), at every order: the rest bound
/// by the pattern carries the slice's derivative, so the recursive call goes to the
/// generic form itself.
mod recursive_slice_folds {
    use mochi::prelude::*;

    #[differentiable]
    pub fn folded(x: &[f64]) -> f64 {
        match x {
            [] => 0.0,
            [h, t @ ..] => h.sin() * h + folded(t),
        }
    }

    #[differentiable]
    pub fn pairs(x: &[f64]) -> f64 {
        match x {
            [a, b, rest @ ..] => a * b + 0.5 * pairs(rest),
            [a] => a.exp(),
            [] => 1.0,
        }
    }

    #[differentiable]
    pub fn by_if_let(x: &[f64]) -> f64 {
        if let [first, rest @ ..] = x {
            first.tanh() * (1.0 + by_if_let(rest))
        } else {
            0.0
        }
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let g = folded::gradient(&x);
        let want: Vec<f64> = x.iter().map(|h| h.sin() + h * h.cos()).collect();
        crate::common::close_to("folded", &g, &want, 1e-15);
    }

    mod t {
        use crate::all_orders;
        all_orders!(folded, [0.3, -0.7, 1.1]);
        all_orders!(pairs, [0.3, -0.7, 1.1, 0.4, -0.2]);
        all_orders!(by_if_let, [0.3, -0.7, 1.1]);
    }
}

/// Helpers declared after their caller and handed another call's value: a helper
/// generic over a length given the array another helper returns (`sq(&scaled(p, k))`),
/// a helper over a slice given a returned `Vec`, and over floats given a returned float.
/// Before 2026-12-06 the first was a type error at the attribute (E0107: the caller's
/// generic form named the scalar alone of a function generic over a length too), which
/// broke the gradient as well; the caller now has every order.
mod calls_given_calls {
    use mochi::prelude::*;

    #[differentiable]
    pub fn caller(p: &[f64]) -> f64 {
        sq(&scaled(p, 2.0)) + g(h(p[0]), p[1]) + g(h(p[1]).sin(), 0.5) + sumv(&twice(p))
    }

    #[differentiable]
    fn scaled(p: &[f64], k: f64) -> [f64; 3] {
        [p[0] * k, p[1] * k, p[2]]
    }

    #[differentiable]
    fn sq<const N: usize>(a: &[f64; N]) -> f64 {
        a.iter().map(|v| v * v.sin()).sum()
    }

    #[differentiable]
    fn g(a: f64, b: f64) -> f64 {
        a * b.exp()
    }

    #[differentiable]
    fn h(a: f64) -> f64 {
        a.tanh()
    }

    #[differentiable]
    fn twice(p: &[f64]) -> Vec<f64> {
        p.iter().map(|v| 2.0 * v * v).collect()
    }

    #[differentiable]
    fn sumv(p: &[f64]) -> f64 {
        p.iter().sum()
    }

    mod t {
        use crate::all_orders;
        all_orders!(caller, [0.3, 0.5, -0.2]);
    }
}

/// `for` loops over the pieces of a constant (`for pair in TEXT.windows(2)`, an LSTM's
/// consecutive characters; `DATA.chunks(2)`, `DATA.chunks_exact(2)`), at every order: the
/// generic form walks the pieces' positions, each piece a sub-slice of the lifted
/// constant (before 2026-12-06, no generic form: "it walks the pieces of the constant").
mod pieces_of_constants {
    use mochi::prelude::*;

    const TEXT: [[f64; 3]; 4] = [
        [0.1, 0.2, 0.7],
        [0.3, 0.3, 0.4],
        [0.6, 0.2, 0.2],
        [0.5, 0.4, 0.1],
    ];
    const DATA: [f64; 5] = [0.5, -1.0, 2.0, 0.3, 0.9];

    #[differentiable]
    pub fn walks(p: &[f64]) -> f64 {
        let mut total = 0.0;
        for pair in TEXT.windows(2) {
            let x: f64 = pair[0].iter().zip(p).map(|(a, w)| a * w).sum();
            total += (x * pair[1][0]).tanh();
        }
        for c in DATA.chunks(2) {
            total += c.iter().map(|v| v * p[0]).sum::<f64>().sin();
        }
        'outer: for c in DATA.chunks_exact(2) {
            if c[0] > 1.0 {
                break 'outer;
            }
            total += c[0] * p[1] * c[1] * p[2];
        }
        total
    }

    mod t {
        use crate::all_orders;
        all_orders!(walks, [0.3, 0.5, -0.2]);
    }
}

/// Adapters that leave a chain's items as they are, `inspect(f)` (a debugging print)
/// and `fuse()`, in chains over a differentiable sequence, at every order (before
/// 2026-12-06, "no rule for `iter`" at the chain's source).
mod no_op_adapters {
    use mochi::prelude::*;

    #[differentiable]
    pub fn inspected(x: &[f64]) -> f64 {
        x.iter()
            .inspect(|v| assert!(v.is_finite()))
            .map(|v| v * v.sin())
            .fuse()
            .sum::<f64>()
            + x.windows(2).fuse().map(|w| w[0] * w[1]).sum::<f64>()
    }

    mod t {
        use crate::all_orders;
        all_orders!(inspected, [0.3, -0.7, 1.1]);
    }
}

/// Pairs collected straight from a `zip` or an `enumerate`, an argsort's start
/// (`x.iter().copied().zip(0..).collect::<Vec<(f64, usize)>>()`, then `sort_by` on the
/// value), at every order (before 2026-12-06, "no rule for `iter`": the chains read a
/// collect after a `map`, and these were given none).
mod pair_collects {
    use mochi::prelude::*;

    #[differentiable]
    pub fn argsorted(x: &[f64]) -> f64 {
        let mut v: Vec<(f64, usize)> = x.iter().copied().zip(0..).collect();
        v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        v.iter()
            .enumerate()
            .map(|(rank, (val, idx))| val.sin() * (*idx as f64 + 1.0) * (rank as f64 + 0.5))
            .sum()
    }

    #[differentiable]
    pub fn indexed(x: &[f64]) -> f64 {
        let v: Vec<(usize, f64)> = x.iter().copied().enumerate().collect();
        let w: Vec<(f64, f64)> = x.iter().copied().zip(x.iter().map(|t| t * t)).collect();
        v.iter()
            .map(|(i, val)| val.exp() * (*i as f64))
            .sum::<f64>()
            + w.iter().map(|(a, b)| a * b).sum::<f64>()
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1, 0.4];
        let g = indexed::gradient(&x);
        let want: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| i as f64 * v.exp() + 3.0 * v * v)
            .collect();
        crate::common::close_to("indexed", &g, &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(argsorted, [0.3, -0.7, 1.1, 0.4]);
        all_orders!(indexed, [0.3, -0.7, 1.1, 0.4]);
    }
}

/// ndarray's `arr1` and `arr2` of constants and literals beside differentiable arrays:
/// `arr1(&W)` of a `const`, `arr1(&[..])` and `arr2(&[[..], [..]])` of literals, also by
/// path and with the type written.
mod arrays_of_constants {
    use mochi::prelude::*;
    use ndarray::{arr1, arr2, Array1};

    const W: [f64; 3] = [0.8, -0.4, 1.1];

    #[differentiable]
    pub fn distance_to_constant(x: &[f64]) -> f64 {
        let w = arr1(&W);
        let a = Array1::from(x.to_vec());
        let d = &a - &w;
        d.dot(&d).sqrt()
    }

    #[differentiable]
    pub fn literal_weights(x: &[f64]) -> f64 {
        let m = arr2(&[[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]]);
        let w: Array1<f64> = ndarray::arr1(&[0.5, -1.0, 2.0]);
        let a = Array1::from_vec(x.to_vec());
        m.dot(&a).mapv(f64::tanh).sum() + (&a * &w).sum() + a.dot(&w).powi(2)
    }

    const W2: [[f64; 2]; 2] = [[1.0, 0.5], [-0.3, 2.0]];

    #[differentiable]
    pub fn constant_matrix(x: &[f64]) -> f64 {
        let m: ndarray::Array2<f64> = arr2(&W2);
        let v = arr1(&x[..2]);
        let all = arr1(x);
        m.dot(&v).mapv(f64::sin).sum() * all.sum()
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let d: Vec<f64> = x.iter().zip(&W).map(|(a, b)| a - b).collect();
        let n = d.iter().map(|v| v * v).sum::<f64>().sqrt();
        let want: Vec<f64> = d.iter().map(|v| v / n).collect();
        crate::common::close_to(
            "distance",
            &distance_to_constant::gradient(&x),
            &want,
            1e-14,
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(distance_to_constant, [0.3, -0.7, 1.4]);
        all_orders!(literal_weights, [0.3, -0.7, 1.1]);
        all_orders!(constant_matrix, [0.3, -0.7, 1.1]);
    }
}

/// `map` of an array written in place, by a closure or a function's path, its result
/// taken apart by an array pattern.
mod maps_of_array_literals {
    use mochi::prelude::*;

    #[differentiable]
    pub fn by_path(x: &[f64]) -> f64 {
        let [p, q] = [x[0], x[1] * x[2]].map(f64::exp);
        p * q + [x[2]; 3].map(|v| v.sin() * x[0]).iter().sum::<f64>()
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let e = (x[0] + x[1] * x[2]).exp();
        let s = 3.0 * x[2].sin();
        let want = [e + s, e * x[2], e * x[1] + 3.0 * x[0] * x[2].cos()];
        crate::common::close_to("by_path", &by_path::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(by_path, [0.3, -0.7, 1.1]);
    }
}

/// `if let Some((&last, init)) = x.split_last()`: the end bound by value.
mod ends_by_value {
    use mochi::prelude::*;

    #[differentiable]
    pub fn last_times_rest(x: &[f64]) -> f64 {
        if let Some((&last, init)) = x.split_last() {
            last * init.iter().map(|v| v.sin()).sum::<f64>()
        } else {
            0.0
        }
    }

    #[differentiable]
    pub fn first_over_rest(x: &[f64]) -> f64 {
        match x.split_first() {
            Some((&h, rest)) => h.exp() / (1.0 + rest.iter().map(|v| v * v).sum::<f64>()),
            None => 0.0,
        }
    }

    /// A walk down the slice, `while let Some((&h, t)) = rest.split_first() { ..; rest =
    /// t; }`, and up it by `split_last`.
    #[differentiable]
    pub fn walks(x: &[f64]) -> f64 {
        let mut rest = x;
        let mut s = 0.0;
        while let Some((&h, t)) = rest.split_first() {
            s = s * 0.5 + h.sin();
            rest = t;
        }
        let mut rest = x;
        while let Some((last, init)) = rest.split_last() {
            s += last * rest.len() as f64;
            rest = init;
        }
        s
    }

    #[test]
    fn walks_by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let want = [
            0.25 * x[0].cos() + 1.0,
            0.5 * x[1].cos() + 2.0,
            x[2].cos() + 3.0,
        ];
        crate::common::close_to("walks", &walks::gradient(&x), &want, 1e-14);
    }

    #[test]
    fn empty() {
        assert_eq!(last_times_rest::gradient(&[]), Vec::<f64>::new());
        assert_eq!(first_over_rest(&[]), 0.0);
    }

    mod t {
        use crate::all_orders;
        all_orders!(last_times_rest, [0.3, -0.7, 1.1, 0.4]);
        all_orders!(first_over_rest, [0.3, -0.7, 1.1]);
        all_orders!(walks, [0.3, -0.7, 1.1, 0.4]);
    }
}

/// `?` on an option read from the slice (`x.first()?`, `x.get(1)?`, `x.last()?`) and on a
/// helper's `Option` result, in a helper whose callers ask for every order.
mod options_by_question_mark {
    use mochi::prelude::*;

    #[differentiable]
    pub fn safe_ln(v: f64) -> Option<f64> {
        if v > 0.0 {
            Some(v.ln())
        } else {
            None
        }
    }

    #[differentiable]
    pub fn geometric_mean(x: &[f64]) -> Option<f64> {
        let first = x.first()?;
        let mut s = safe_ln(*first)?;
        for &v in &x[1..] {
            s += safe_ln(v)?;
        }
        Some((s / x.len() as f64).exp())
    }

    #[differentiable]
    pub fn ends(x: &[f64]) -> Option<f64> {
        let l = x.last()?;
        let s = safe_ln(x[0])?;
        let t = x.get(1)?;
        Some(s * l + t * t)
    }

    #[differentiable]
    pub fn caller(x: &[f64]) -> f64 {
        geometric_mean(x).unwrap_or(0.0) + ends(x).unwrap_or(0.0)
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, 0.7, 1.1];
        let g = (x[0] * x[1] * x[2]).powf(1.0 / 3.0);
        let want = [
            g / (3.0 * x[0]) + x[2] / x[0],
            g / (3.0 * x[1]) + 2.0 * x[1],
            g / (3.0 * x[2]) + x[0].ln(),
        ];
        crate::common::close_to("caller", &caller::gradient(&x), &want, 1e-13);
        // A non-positive entry: `None`, and the fallback's zero gradient.
        assert_eq!(caller::gradient(&[-0.3, 0.7]), vec![0.0, 0.0]);
    }

    mod t {
        use crate::all_orders;
        all_orders!(caller, [0.3, 0.7, 1.1]);
    }
}

/// `collect::<Vec<(usize, f64)>>()` with the collected type in the turbofish.
mod collects_by_turbofish {
    use mochi::prelude::*;

    #[differentiable]
    pub fn indexed(x: &[f64]) -> f64 {
        let v = x.iter().copied().enumerate().collect::<Vec<(usize, f64)>>();
        let w = x.iter().map(|t| t * t).collect::<Vec<f64>>();
        v.iter()
            .map(|(i, val)| val.exp() * (*i as f64))
            .sum::<f64>()
            + w.iter().sum::<f64>()
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.7, 1.1];
        let want: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| i as f64 * v.exp() + 2.0 * v)
            .collect();
        crate::common::close_to("indexed", &indexed::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(indexed, [0.3, -0.7, 1.1]);
    }
}

/// Copies of a sequence's pieces collected as rows, `x.chunks(3).map(|c| c.to_vec())`
/// (also `chunks_exact`, `windows`, `to_owned`, `Vec::from`), with and without the rows'
/// type written.
mod rows_from_pieces {
    use mochi::prelude::*;

    #[differentiable]
    pub fn rows(x: &[f64]) -> f64 {
        let rows = x.chunks(3).map(|c| c.to_vec()).collect::<Vec<_>>();
        let pairs: Vec<Vec<f64>> = x.chunks_exact(2).map(Vec::from).collect();
        let more: Vec<Vec<f64>> = x.chunks(2).map(<[f64]>::to_vec).collect();
        let wins: Vec<_> = x.windows(3).map(|c| c.to_owned()).collect();
        rows.iter()
            .map(|r| r.iter().map(|v| v.sin()).sum::<f64>() * r[0])
            .sum::<f64>()
            + pairs.iter().map(|r| r[0] * r[1]).sum::<f64>()
            + wins.iter().map(|r| r[0] * r[2]).sum::<f64>()
            + more[3][0] * more[1][1]
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, 0.7, 1.1, 0.4, -0.2, 0.9, 1.3];
        let mut want = [0.0; 7];
        for r in (0..7).step_by(3) {
            let end = (r + 3).min(7);
            let s: f64 = x[r..end].iter().map(|v| v.sin()).sum();
            want[r] += s;
            for j in r..end {
                want[j] += x[r] * x[j].cos();
            }
        }
        for p in (0..6).step_by(2) {
            want[p] += x[p + 1];
            want[p + 1] += x[p];
        }
        for w in 0..5 {
            want[w] += x[w + 2];
            want[w + 2] += x[w];
        }
        want[6] += x[3];
        want[3] += x[6];
        crate::common::close_to("rows", &rows::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(rows, [0.3, 0.7, 1.1, 0.4, -0.2, 0.9, 1.3]);
    }
}

/// Trait methods of the crate's structs on values the syntax shows: a unit struct bound
/// to a local (`let sq = SquaredLoss;`) or written as the receiver (`SquaredLoss.loss(..)`),
/// a struct literal as the receiver (`PseudoHuber { delta: d }.loss(..)`); a struct update
/// from a local (`Opts { bias: p[1], ..tuned }`, `tuned` used after), and under
/// `higher_order` an `if let` binding a variant's setting.
mod values_of_the_crates_types {
    use mochi::prelude::*;

    pub trait LossFn {
        fn loss(&self, pred: f64, y: f64) -> f64;
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct SquaredLoss;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct PseudoHuber {
        delta: f64,
    }

    #[differentiable]
    impl LossFn for SquaredLoss {
        #[differentiable]
        fn loss(&self, pred: f64, y: f64) -> f64 {
            0.5 * (pred - y).powi(2)
        }
    }

    #[differentiable]
    impl LossFn for PseudoHuber {
        #[differentiable]
        fn loss(&self, pred: f64, y: f64) -> f64 {
            let r = (pred - y) / self.delta;
            self.delta * self.delta * ((1.0 + r * r).sqrt() - 1.0)
        }
    }

    #[differentiable]
    pub fn losses(p: &[f64]) -> f64 {
        let sq = SquaredLoss;
        let mut total = 0.0;
        for (t, y) in [(0.1, 0.3), (0.5, 0.9), (0.8, 1.0)] {
            let pred = p[0] * t + p[1];
            total += sq.loss(pred, y)
                + SquaredLoss.loss(pred, 2.0 * y)
                + PseudoHuber { delta: 0.7 }.loss(pred, y);
        }
        total
    }

    /// The trait's method called by the trait's path, `LossFn::loss(&sq, ..)`.
    #[differentiable]
    pub fn by_trait_path(p: &[f64]) -> f64 {
        let sq = SquaredLoss;
        LossFn::loss(&sq, p[0], p[1]) + LossFn::loss(&SquaredLoss, p[1] * p[2], 0.5)
    }

    /// Positions kept in a map of constants, `BTreeMap::from([..])`, at every order.
    #[differentiable]
    pub fn keyed_positions(p: &[f64]) -> f64 {
        let at = std::collections::BTreeMap::from([("scale", 0usize), ("shift", 2)]);
        p[at["scale"]] * p[at["shift"]].sin() + p[1] * p[1]
    }

    #[derive(Clone, Debug, Default, Tangent)]
    pub struct Opts {
        gain: f64,
        bias: f64,
        temp: Option<f64>,
        rounds: usize,
    }

    #[differentiable]
    pub fn updated(p: &[f64]) -> f64 {
        let tuned = Opts {
            gain: p[0],
            temp: Some(0.5),
            ..Default::default()
        };
        let shifted = Opts {
            bias: p[1],
            ..tuned
        };
        shifted.gain * shifted.bias / shifted.temp.unwrap_or(1.0)
            + tuned.gain * (tuned.rounds as f64 + 1.0)
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Reg {
        Off,
        L2(f64),
    }

    #[differentiable(higher_order)]
    pub fn penalised(p: &[f64]) -> f64 {
        let local = if p.len() > 1 { Reg::L2(0.05) } else { Reg::Off };
        let extra = if let Reg::L2(lam) = local {
            lam * p[0] * p[1]
        } else {
            0.0
        };
        p.iter().map(|v| v.sin()).sum::<f64>() + extra
    }

    #[test]
    fn by_hand() {
        let p = [0.3f64, 0.7];
        let g = updated::gradient(&p);
        crate::common::close_to("updated", &g, &[2.0 * p[1] + 1.0, 2.0 * p[0]], 1e-14);
        let mut want = [0.0; 2];
        for (t, y) in [(0.1, 0.3), (0.5, 0.9), (0.8, 1.0)] {
            let pred = p[0] * t + p[1];
            let r = (pred - y) / 0.7;
            let d = (pred - y) + (pred - 2.0 * y) + 0.7 * r / (1.0 + r * r).sqrt();
            want[0] += d * t;
            want[1] += d;
        }
        crate::common::close_to("losses", &losses::gradient(&p), &want, 1e-13);
        let q = [0.3f64, 0.7, 1.1];
        let want = [
            q[0] - q[1],
            q[1] - q[0] + (q[1] * q[2] - 0.5) * q[2],
            (q[1] * q[2] - 0.5) * q[1],
        ];
        crate::common::close_to("by_trait_path", &by_trait_path::gradient(&q), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(penalised, [0.3, 0.7, -0.4]);
        all_orders!(keyed_positions, [0.3, 0.7, 1.1]);
    }
}

/// A chain over a constant table of integer counts, the closure casting each count and
/// reading differentiable captures: a Poisson log-likelihood (`(k as f64) * mu.ln() -
/// mu`, also `f64::from(k)`) with a helper called in the closure.
mod counts_in_chains {
    use mochi::prelude::*;

    const COUNTS: [u32; 5] = [2, 7, 4, 0, 9];

    #[differentiable]
    pub fn log_factorial(k: f64) -> f64 {
        let mut s = 0.0;
        let mut j = 2.0;
        while j <= k {
            s += f64::ln(j);
            j += 1.0;
        }
        s
    }

    #[differentiable]
    pub fn poisson(x: &[f64]) -> f64 {
        let mu = x[0].exp();
        let w = x[1].tanh();
        COUNTS
            .iter()
            .map(|&k| (k as f64) * mu.ln() - mu - log_factorial(k as f64))
            .sum::<f64>()
            + COUNTS.iter().map(|k| f64::from(*k) * w * w).sum::<f64>()
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.4];
        let total: f64 = COUNTS.iter().map(|&k| k as f64).sum();
        let want = [
            total - 5.0 * x[0].exp(),
            total * 2.0 * x[1].tanh() * (1.0 - x[1].tanh().powi(2)),
        ];
        crate::common::close_to("poisson", &poisson::gradient(&x), &want, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(poisson, [0.3, -0.4]);
    }
}

/// `swap_remove`, bound and as a statement: the last element moved into the hole (was
/// refused: "changes the length of a differentiable buffer").
mod swapped_out {
    use mochi::prelude::*;

    #[differentiable]
    pub fn swap_removed(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|t| t * 1.5).collect();
        let r = v.swap_remove(1);
        let s = v.swap_remove(0);
        v.swap_remove(v.len() - 1);
        r * v[1] + s * v[0] + v.iter().sum::<f64>()
    }

    /// Drained from the front by `swap_remove(0)` in a `while`: the order is x₀, then
    /// the last, then the rest.
    #[differentiable]
    pub fn drained(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let mut s = 0.0;
        while !v.is_empty() {
            let e = v.swap_remove(0);
            s = s * 0.9 + e.sin();
        }
        s
    }

    #[test]
    fn by_hand() {
        let x3 = [0.3f64, -0.8, 1.1];
        // Taken x₀, x₂ (moved to the front), x₁.
        let want = [0.81 * x3[0].cos(), x3[1].cos(), 0.9 * x3[2].cos()];
        crate::common::close_to("drained", &drained::gradient(&x3), &want, 1e-14);
        // v = 1.5x; r = v₁, v = [v₀, v₄, v₂, v₃]; s = v₀, v = [v₃, v₄, v₂]; then
        // [v₃, v₄]: f = 2.25 (x₁x₄ + x₀x₃) + 1.5 (x₃ + x₄).
        let x = [0.3f64, -0.8, 1.1, 0.5, -0.2];
        let f = 2.25 * (x[1] * x[4] + x[0] * x[3]) + 1.5 * (x[3] + x[4]);
        assert!((swap_removed(&x) - f).abs() < 1e-14);
        let want = [
            2.25 * x[3],
            2.25 * x[4],
            0.0,
            2.25 * x[0] + 1.5,
            2.25 * x[1] + 1.5,
        ];
        crate::common::close_to("swap_removed", &swap_removed::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(swap_removed, [0.3, -0.8, 1.1, 0.5, -0.2]);
        all_orders!(drained, [0.3, -0.8, 1.1, 0.5]);
    }
}

/// `Option` accumulators filled in place: `*o.get_or_insert(c) += e`, a `&mut` held from
/// `get_or_insert` in a `let` and written through, and `get_or_insert_with` (each
/// refused before: "assignment to this place").
mod option_accumulators {
    use mochi::prelude::*;

    #[differentiable]
    pub fn accumulated(x: &[f64]) -> f64 {
        let mut sum: Option<f64> = None;
        let mut prod: Option<f64> = None;
        for &v in x {
            *sum.get_or_insert(0.0) += v * v;
            let p = prod.get_or_insert(1.0);
            *p *= 1.0 + v;
        }
        sum.unwrap_or(0.0) + prod.unwrap_or(1.0)
    }

    // (`get_or_insert_with` is the form tested.)
    #[allow(clippy::unnecessary_lazy_evaluations)]
    #[differentiable]
    pub fn filled_lazily(x: &[f64]) -> f64 {
        let mut best: Option<f64> = None;
        for &v in x {
            let b = best.get_or_insert_with(|| 0.5);
            *b = *b * 0.5 + v.sin();
        }
        let mut m = None;
        *m.get_or_insert_with(|| 2.0) -= x[0];
        best.unwrap() * m.unwrap()
    }

    /// A running maximum through the held `&mut`: `if v > *m { *m = v; }`.
    #[differentiable]
    pub fn running_max(x: &[f64]) -> f64 {
        let mut mx: Option<f64> = None;
        for &v in x {
            let m = mx.get_or_insert(v);
            if v > *m {
                *m = v;
            }
        }
        mx.unwrap_or(0.0) * x[0]
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.8, 1.1];
        crate::common::close_to(
            "running_max",
            &running_max::gradient(&x),
            &[1.1, 0.0, 0.3],
            1e-14,
        );
        let p: f64 = x.iter().map(|v| 1.0 + v).product();
        let want: Vec<f64> = x.iter().map(|v| 2.0 * v + p / (1.0 + v)).collect();
        crate::common::close_to("accumulated", &accumulated::gradient(&x), &want, 1e-14);
        let b = ((0.5 * 0.5 + x[0].sin()) * 0.5 + x[1].sin()) * 0.5 + x[2].sin();
        assert!((filled_lazily(&x) - b * (2.0 - x[0])).abs() < 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(accumulated, [0.3, -0.8, 1.1, 0.5]);
        all_orders!(filled_lazily, [0.3, -0.8, 1.1]);
        all_orders!(running_max, [0.3, -0.8, 1.1, 0.5]);
    }
}

/// `try_fold` as the loop it is, ending at the first `None` or `Err` (was refused: "not
/// supported; write the walk as a `for` loop"): over `Option`, over `Result` with a
/// `String` error, and with a pair as the accumulator.
mod tried_folds {
    use mochi::prelude::*;

    #[differentiable]
    pub fn damped(x: &[f64]) -> f64 {
        x.iter()
            .try_fold(0.0, |acc, &v| {
                if v > 5.0 {
                    None
                } else {
                    Some(acc * 0.5 + v.sin())
                }
            })
            .unwrap_or(-1.0)
    }

    #[differentiable]
    pub fn log_product(x: &[f64]) -> f64 {
        let r: Result<f64, String> = x.iter().copied().try_fold(1.0, |p, v| {
            if v < -5.0 {
                Err(format!("too small: {v}"))
            } else {
                Ok(p * (1.0 + v * v))
            }
        });
        match r {
            Ok(p) => p.ln(),
            Err(_) => 0.0,
        }
    }

    #[differentiable]
    pub fn paired(x: &[f64]) -> f64 {
        let s = x.iter().enumerate().try_fold((0.0, 0.0), |(a, b), (i, v)| {
            if i > 10 {
                None
            } else {
                Some((a + v * i as f64, b + v.exp()))
            }
        });
        let (a, b) = s.unwrap();
        a * b
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.8, 1.1];
        let want = [0.25 * x[0].cos(), 0.5 * x[1].cos(), x[2].cos()];
        crate::common::close_to("damped", &damped::gradient(&x), &want, 1e-14);
        // The walk stops at 6.0: the result is the constant -1.
        let stopped = [0.3f64, 6.0, 1.1];
        assert_eq!(damped(&stopped), -1.0);
        assert_eq!(damped::gradient(&stopped), vec![0.0; 3]);
        let want: Vec<f64> = x.iter().map(|v| 2.0 * v / (1.0 + v * v)).collect();
        crate::common::close_to("log_product", &log_product::gradient(&x), &want, 1e-14);
        assert_eq!(log_product::gradient(&[0.3, -6.0]), vec![0.0; 2]);
    }

    mod t {
        use crate::all_orders;
        all_orders!(damped, [0.3, -0.8, 1.1, 0.5]);
        all_orders!(log_product, [0.3, -0.8, 1.1, 0.5]);
        all_orders!(paired, [0.3, -0.8, 1.1, 0.5]);
    }
}

/// The best element by an integer key (`min_by_key`/`max_by_key` over `x.iter()`,
/// `copied()` and `enumerate()` pairs bound whole; each "no rule for `iter`" before),
/// and a `Vec` of integers computed from the differentiable values, typed so (`let mut b:
/// Vec<i64> = x.iter().map(..).collect(); b.sort(); b.dedup();`; before, "no rule for
/// `iter`" and no `hessian` for the `sort`).
mod keyed_bests {
    use mochi::prelude::*;

    #[differentiable]
    pub fn keyed(x: &[f64]) -> f64 {
        let lo = x
            .iter()
            .copied()
            .min_by_key(|v| (v * 10.0).round() as i64)
            .unwrap();
        let hi = *x.iter().max_by_key(|v| (v.abs() * 10.0) as u32).unwrap();
        let (k, v) = x
            .iter()
            .enumerate()
            .min_by_key(|&(i, _)| (i * 7) % 5)
            .unwrap();
        let (j, w) = x
            .iter()
            .enumerate()
            .max_by_key(|(i, v)| (**v * 3.0).floor() as i64 + *i as i64)
            .unwrap();
        lo * x[0] + hi * hi + v * (k as f64 + 1.0) + w * (j as f64 + 0.5)
    }

    #[differentiable]
    pub fn buckets(x: &[f64]) -> f64 {
        let mut b: Vec<i64> = x.iter().map(|v| (v * 2.0).floor() as i64).collect();
        b.sort();
        b.dedup();
        let k = b.len() as f64;
        x.iter().map(|v| v * v).sum::<f64>() * k + x[0] * b[0] as f64
    }

    #[test]
    fn by_hand() {
        // lo = x₁ (key -9), hi = x₂ (key 11), (k, v) = (0, x₀) (key 0), (j, w) = (2, x₂)
        // (key 5).
        let x = [0.33f64, -0.87, 1.14, 0.52];
        let want = [x[1] + 1.0, x[0], 2.0 * x[2] + 2.5, 0.0];
        crate::common::close_to("keyed", &keyed::gradient(&x), &want, 1e-14);
        // Buckets ⌊2x⌋ = 0, -2, 2, 1: four distinct, the smallest -2.
        let want: Vec<f64> = (0..4)
            .map(|i| 8.0 * x[i] + if i == 0 { -2.0 } else { 0.0 })
            .collect();
        crate::common::close_to("buckets", &buckets::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(keyed, [0.33, -0.87, 1.14, 0.52]);
        all_orders!(buckets, [0.33, -0.87, 1.14, 0.52]);
    }
}

/// A helper taking the element and its index, called in a closure over
/// `x.iter().enumerate()` (`map`, and a `fold`'s): the element carries the derivative in
/// the generic form too (before, the generic form called the helper as a function of
/// constants and failed to build: no `hessian`).
mod helpers_in_enumerated_closures {
    use mochi::prelude::*;

    #[differentiable]
    pub fn term(v: f64, i: usize) -> f64 {
        v.powi(i as i32 + 1) / (i + 1) as f64 + (0.3 * i as f64 + v).sin()
    }

    #[differentiable]
    pub fn mapped(x: &[f64]) -> f64 {
        x.iter().enumerate().map(|(i, &v)| term(v, i)).sum()
    }

    #[differentiable]
    pub fn folded(x: &[f64]) -> f64 {
        x.iter()
            .enumerate()
            .fold(0.0, |acc, (i, v)| acc * 0.5 + term(*v, i))
    }

    #[test]
    fn by_hand() {
        let x = [0.3f64, -0.8, 1.1];
        let want: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| v.powi(i as i32) + (0.3 * i as f64 + v).cos())
            .collect();
        crate::common::close_to("mapped", &mapped::gradient(&x), &want, 1e-14);
        let h = mapped::hessian(&x);
        for i in 0..3 {
            let d = i as f64 * x[i].powi(i as i32 - 1) - (0.3 * i as f64 + x[i]).sin();
            assert!((h[[i, i]] - d).abs() < 1e-12, "{i}: {} vs {d}", h[[i, i]]);
        }
        assert_eq!(h[[0, 1]], 0.0);
    }

    mod t {
        use crate::all_orders;
        all_orders!(mapped, [0.3, -0.8, 1.1, 0.5]);
        all_orders!(folded, [0.3, -0.8, 1.1, 0.5]);
    }
}

/// A `&mut self` method that returns a value (`-> bool`, `-> usize`) changes its
/// receiver's derivative as a `-> ()` one does (and a method writing a `&mut` argument,
/// that argument's). In a marked `impl` block it was called
/// as a plain function of constants: the gradient missed the change (a silent wrong
/// gradient before 2026-12-06: 12 for 36 below, and zeros for a trait's accumulator),
/// and as a statement, `s.bump();`, the call was dropped from the derived code. Marked
/// one by one, marked as a block without marked methods, in an unmarked block with
/// marked methods, and a trait's.
mod mut_self_with_results {
    use mochi::prelude::*;

    #[derive(Clone, Tangent)]
    pub struct Marked {
        x: f64,
        n: usize,
    }

    #[differentiable]
    impl Marked {
        #[differentiable]
        fn bump(&mut self) -> bool {
            self.x *= 3.0;
            self.n += 1;
            true
        }
        #[differentiable]
        fn grow(&mut self, by: f64) -> usize {
            self.x += by * self.x;
            self.n
        }
        #[differentiable]
        fn big(&self) -> bool {
            self.x > 100.0
        }
    }

    #[derive(Clone, Tangent)]
    pub struct Whole {
        x: f64,
    }

    #[differentiable]
    impl Whole {
        fn bump(&mut self) -> bool {
            self.x *= 3.0;
            true
        }
        fn scaled(&self, by: f64) -> f64 {
            self.x * by
        }
    }

    #[derive(Clone, Tangent)]
    pub struct Loose {
        x: f64,
    }

    impl Loose {
        #[differentiable]
        fn bump(&mut self) -> bool {
            self.x *= 3.0;
            true
        }
    }

    #[derive(Clone, Tangent)]
    pub struct Acc {
        s: f64,
    }

    pub trait Push {
        fn add(&mut self, v: f64) -> bool;
    }

    #[differentiable]
    impl Push for Acc {
        #[differentiable]
        fn add(&mut self, v: f64) -> bool {
            self.s += v * v;
            true
        }
    }

    #[derive(Clone, Tangent)]
    pub struct Emitter {
        w: f64,
    }

    #[differentiable]
    impl Emitter {
        #[differentiable]
        fn emit(&self, out: &mut Vec<f64>, x: f64) -> usize {
            out.push(self.w * x);
            out.len()
        }
        #[differentiable]
        fn scale_into(&self, out: &mut [f64]) -> bool {
            for o in out.iter_mut() {
                *o *= self.w;
            }
            true
        }
    }

    /// `&self` methods writing a `&mut` argument: the writes lost their derivative too.
    #[differentiable]
    pub fn emitted(x: &[f64]) -> f64 {
        let e = Emitter { w: x[0] };
        let mut out = Vec::new();
        let n = e.emit(&mut out, x[1]);
        e.emit(&mut out, x[2]);
        let mut v = x.to_vec();
        e.scale_into(&mut v);
        out.iter().sum::<f64>() * n as f64 + v[1]
    }

    #[derive(Clone, Tangent)]
    pub struct Ring {
        buf: Vec<f64>,
        head: usize,
    }

    #[differentiable]
    impl Ring {
        /// Writes `v` over the oldest value; that value once the ring has gone round.
        #[differentiable]
        fn push(&mut self, v: f64) -> Option<f64> {
            let old = self.buf[self.head];
            self.buf[self.head] = v;
            self.head = (self.head + 1) % self.buf.len();
            if self.head == 1 {
                Some(old)
            } else {
                None
            }
        }
        #[differentiable]
        fn push_all(&mut self, vs: &[f64]) -> usize {
            let mut evicted = 0;
            for &v in vs {
                if self.push(v).is_some() {
                    evicted += 1;
                }
            }
            evicted
        }
    }

    #[differentiable]
    pub fn scaled_past(s: &mut f64, by: f64) -> bool {
        *s *= by;
        *s > 10.0
    }

    /// What a call that writes a differentiable value returns, read by a query
    /// (`r.push(v).is_some()`, also inside the crate's method, on `self`), a comparison
    /// or a cast (`scaled_past(&mut s, b) as usize`): the call's write was lost, all
    /// zeros, before 2026-12-06.
    #[differentiable]
    pub fn queried(x: &[f64]) -> f64 {
        let mut r = Ring {
            buf: vec![0.0; 2],
            head: 0,
        };
        let mut n = 0.0;
        for &v in x {
            if r.push(v).unwrap_or(0.0) > 0.5 {
                n += 1.0;
            }
        }
        let mut s = x[0];
        let k = scaled_past(&mut s, x[1]) as usize;
        let c = r.push_all(x) + 1;
        r.buf[0] * 2.0 + r.buf[1] + n + s * (k + c) as f64
    }

    /// A trait's `&mut self` method: the gradient was all zeros.
    #[differentiable]
    pub fn accumulated(x: &[f64]) -> f64 {
        let mut a = Acc { s: 0.0 };
        for &v in x {
            a.add(v);
        }
        let ok = a.add(x[0]);
        if ok {
            a.s
        } else {
            0.0
        }
    }

    #[differentiable]
    pub fn in_condition(s0: &Marked) -> f64 {
        let mut s = s0.clone();
        if s.bump() {
            s.x * s.x
        } else {
            0.0
        }
    }

    #[differentiable]
    pub fn bound_and_dropped(x: &[f64]) -> f64 {
        let mut s = Marked { x: x[0], n: 1 };
        let grew: bool = s.bump();
        s.bump();
        let k = s.grow(x[1]);
        if grew && !s.big() {
            s.x * k as f64
        } else {
            0.0
        }
    }

    #[differentiable]
    pub fn whole_block(x: &[f64]) -> f64 {
        let mut s = Whole { x: x[0] };
        let _ = s.bump();
        s.bump();
        s.scaled(x[1])
    }

    #[differentiable]
    pub fn loose(x: &[f64]) -> f64 {
        let mut s = Loose { x: x[0] };
        let twice = s.bump() && s.bump();
        if twice {
            s.x * x[1]
        } else {
            0.0
        }
    }

    #[test]
    fn by_hand_and_by_differences() {
        let g = in_condition::gradient(&Marked { x: 2.0, n: 1 });
        assert_eq!(g.x, 36.0);
        // s.x = 9 x₀ (1 + x₁), k = 3: f = 27 x₀ (1 + x₁).
        let x = [0.7, 0.4];
        let want = [27.0 * 1.4, 27.0 * 0.7];
        crate::common::close_to(
            "bound_and_dropped",
            &bound_and_dropped::gradient(&x),
            &want,
            1e-13,
        );
        assert!((bound_and_dropped(&x) - 27.0 * 0.7 * 1.4).abs() < 1e-13);
        // 9 x₀ x₁ both.
        let want = [9.0 * 0.4, 9.0 * 0.7];
        crate::common::close_to("whole_block", &whole_block::gradient(&x), &want, 1e-13);
        crate::common::close_to("loose", &loose::gradient(&x), &want, 1e-13);
        let g = bound_and_dropped::gradient(&x);
        crate::common::assert_gradient_matches(bound_and_dropped, &g, &x);
        crate::common::assert_gradient_matches(whole_block, &whole_block::gradient(&x), &x);
        crate::common::assert_gradient_matches(loose, &loose::gradient(&x), &x);
        let x3 = [0.3, -0.8, 1.1];
        let want = [4.0 * x3[0], 2.0 * x3[1], 2.0 * x3[2]];
        crate::common::close_to("accumulated", &accumulated::gradient(&x3), &want, 1e-14);
        // w (x₁ + x₂) + w x₁ (n = 1).
        let want = [x3[1] + x3[2] + x3[1], x3[0] + x3[0], x3[0]];
        crate::common::close_to("emitted", &emitted::gradient(&x3), &want, 1e-14);
        crate::common::assert_gradient_matches(emitted, &emitted::gradient(&x3), &x3);
        // The ring ends [x₁, x₂] after x, [x₂ (pushed again: x₀ then x₁ evicted),
        // ...]: 2 x₁' + x₂' of the last three pushes, + s (k + c) with s = x₀ x₁.
        let g = queried::gradient(&x3);
        crate::common::assert_gradient_matches(queried, &g, &x3);
        assert!(g.iter().any(|v| *v != 0.0));
    }
}

/// A `&mut` parameter of the crate's type lent on at every call in a loop (`kf.predict();
/// kf.update(z)` of `kf: &mut Kalman`: "use of moved value" before), a row's `swap`
/// (`m[2].swap(0, 2)`: "no rule for `swap`"), and a local closure writing a capture by a
/// method (`let mut emit = |v| out.push(v);`: it pushed into a copy, a type error at the
/// attribute).
mod lent_on {
    use mochi::prelude::*;

    #[derive(Clone, Tangent)]
    pub struct Kalman {
        x: f64,
        p: f64,
        a: f64,
    }

    #[differentiable]
    impl Kalman {
        #[differentiable]
        fn predict(&mut self) {
            self.x *= self.a;
            self.p = self.a * self.a * self.p + 0.1;
        }
        #[differentiable]
        fn update(&mut self, z: f64) -> f64 {
            let k = self.p / (self.p + 0.5);
            let y = z - self.x;
            self.x += k * y;
            self.p *= 1.0 - k;
            y * y
        }
    }

    #[differentiable]
    pub fn run(kf: &mut Kalman, zs: &[f64]) -> f64 {
        let mut s = 0.0;
        for &z in zs {
            kf.predict();
            s += kf.update(z);
        }
        s
    }

    #[differentiable]
    pub fn filtered(x: &[f64]) -> f64 {
        let mut kf = Kalman {
            x: x[0],
            p: 1.0,
            a: x[1],
        };
        let s = run(&mut kf, &x[2..]);
        s + kf.x
    }

    // (A `Vec` of rows is the form tested.)
    #[allow(clippy::useless_vec)]
    #[differentiable]
    pub fn rows_swapped(x: &[f64]) -> f64 {
        let mut m = vec![x[..3].to_vec(), x[1..4].to_vec(), x[2..5].to_vec()];
        m[2].swap(0, 2);
        m.swap(0, 1);
        m[0][0] * m[2][0] + m[1][2] * m[2][2]
    }

    #[differentiable]
    pub fn emitted(x: &[f64]) -> f64 {
        let mut out: Vec<f64> = Vec::new();
        let mut emit = |v: f64| out.push(v.exp());
        for i in 0..x.len() {
            emit(x[i] * 0.5);
        }
        out.iter().sum::<f64>() * out[0]
    }

    #[test]
    fn by_differences() {
        let x = [0.3f64, 0.9, 0.5, -0.2, 1.1];
        crate::common::assert_gradient_matches(filtered, &filtered::gradient(&x), &x);
        let g = rows_swapped::gradient(&x);
        crate::common::assert_gradient_matches(rows_swapped, &g, &x);
        // m = [x₁.., x₀.., [x₄, x₃, x₂]]: x₁ x₄ + x₂ x₂.
        crate::common::close_to(
            "rows_swapped",
            &g,
            &[0.0, x[4], 2.0 * x[2], 0.0, x[1]],
            1e-14,
        );
        crate::common::assert_gradient_matches(emitted, &emitted::gradient(&x), &x);
    }
}

/// The function's value chosen by an `if`/`match` whose arms return early from inside
/// a loop (Numerical Recipes' `expint`: the continued fraction returns on convergence,
/// the arm's value after the loop otherwise): before, "a block with a value after a
/// `break`, `continue` or `return` inside it is not supported".
mod returns_inside_arms {
    use mochi::prelude::*;

    #[differentiable]
    pub fn series_or_product(x: &[f64]) -> f64 {
        let t = x[0];
        if t > 1.0 {
            let mut h = 1.0 / (t + 1.0);
            for i in 1..=50 {
                let del = 1.0 + (-t * i as f64).exp();
                h *= del;
                if (del - 1.0).abs() < 1e-12 {
                    return h * (-t).exp() * x[1];
                }
            }
            h * (-t).exp() * x[1]
        } else {
            let mut ans = -t.ln();
            for i in 1..=60 {
                let term = t.powi(i) / i as f64;
                ans += term;
                if term < 1e-16 {
                    break;
                }
            }
            ans * x[1]
        }
    }

    #[differentiable]
    pub fn by_match(x: &[f64]) -> f64 {
        let k = (x[0] * 2.0).floor() as i64;
        match k {
            0 => {
                for &v in &x[1..] {
                    if v > 5.0 {
                        return v;
                    }
                }
                x[1] * x[2]
            }
            _ => x[0].sin() + x[2],
        }
    }

    #[test]
    fn by_hand() {
        // Below 1: −ln t − ln(1 − t) (the series summed), times x₁.
        let x = [0.5f64, 1.5];
        let g = series_or_product::gradient(&x);
        let v = -(x[0].ln()) - (1.0 - x[0]).ln();
        crate::common::close_to(
            "series",
            &g,
            &[x[1] * (-1.0 / x[0] + 1.0 / (1.0 - x[0])), v],
            1e-10,
        );
    }

    mod below {
        use crate::all_orders;
        all_orders!(series_or_product, [0.4, 1.5]);
        all_orders!(by_match, [0.3, 0.8, -0.4]);
    }

    mod above {
        use crate::all_orders;
        all_orders!(series_or_product, [2.0, 1.5]);
        all_orders!(by_match, [0.7, 0.8, -0.4]);
    }
}

/// Calls that write a differentiable value where the call's other operands or its
/// container hid it: a `&mut` parameter passed on as it is inside a condition, an
/// argument read before a later argument writes it, a call inside `matches!`, a
/// `&mut self` method on a field or an element, and the closures and combinators around
/// such calls.
mod written_where_read {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Basin {
        pub level: f64,
        pub spilled: f64,
    }

    /// Fills the basin; above `cap` the excess spills: whether it did.
    #[differentiable]
    pub fn fill(b: &mut Basin, q: f64, cap: f64) -> bool {
        b.level += q;
        if b.level > cap {
            b.spilled += b.level - cap;
            b.level = cap;
            true
        } else {
            false
        }
    }

    /// `fill(b, ..)` of the `&mut` parameter `b` as it is, in an `if`: the call ran
    /// without the derivative of what it wrote before 2026-12-06 (1.7 for 2.7).
    #[differentiable]
    pub fn cycle(b: &mut Basin, q: f64) -> f64 {
        fill(b, q, 2.0);
        let a = b.level * 0.3;
        b.level -= a;
        if fill(b, q * 0.5, 2.0) {
            a * 2.0
        } else {
            a
        }
    }

    #[differentiable]
    pub fn cycled(x: &[f64]) -> f64 {
        let mut b = Basin {
            level: x[0],
            spilled: 0.0,
        };
        let mut s = 0.0;
        for &q in &x[1..] {
            s += cycle(&mut b, q);
        }
        s + b.level * b.spilled
    }

    #[differentiable]
    pub fn leak(s: &mut f64, r: f64) -> f64 {
        let out = *s * r;
        *s -= out;
        out
    }

    #[differentiable]
    pub fn mix(a: f64, b: f64) -> f64 {
        a * b + a.sin()
    }

    /// `mix(s, leak(&mut s, r))`: `s` read before `leak` changes it (before 2026-12-06 the
    /// call read it after, 0.43 for 0.97); `mix(leak(&mut s, r), s)` after.
    #[differentiable]
    pub fn read_then_written(x: &[f64]) -> f64 {
        let mut s = x[0];
        let r = mix(leak(&mut s, x[1]), s);
        let q = mix(s, leak(&mut s, x[2]));
        r + q * s
    }

    /// Helpers lent a buffer and answering a count, at every order (they had no generic
    /// form, so their callers had no `hessian`).
    #[differentiable]
    pub fn clip_all(v: &mut [f64], hi: f64) -> usize {
        let mut n = 0;
        for e in v.iter_mut() {
            if *e > hi {
                *e = hi;
                n += 1;
            }
        }
        n
    }

    #[differentiable]
    pub fn clipped(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a * 1.5).collect();
        let hi = x[0] + 0.5;
        let n = clip_all(&mut v, hi);
        let m = clip_all(&mut v[1..], 0.9 * hi);
        v.iter().sum::<f64>() * (n + 2 * m) as f64 + v[2] * v[3]
    }

    #[derive(Clone, Copy, Debug, PartialEq, Tangent)]
    pub enum Trend {
        Rising,
        Falling,
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Tracker {
        pub last: f64,
        pub ups: usize,
    }

    #[differentiable]
    impl Tracker {
        fn see(&mut self, v: f64) -> Trend {
            let t = if v > self.last {
                self.ups += 1;
                Trend::Rising
            } else {
                Trend::Falling
            };
            self.last = v;
            t
        }
        fn moved(&mut self, v: f64) -> Option<f64> {
            if v > self.last {
                let d = v - self.last;
                self.last = v;
                Some(d)
            } else {
                None
            }
        }
    }

    /// `matches!(t.see(v), Trend::Rising)`: the call inside the macro ran without the
    /// derivative of what it wrote before 2026-12-06 (3.8 for 0 on `x₀`).
    #[differentiable]
    pub fn trend_flags(x: &[f64]) -> f64 {
        let mut t = Tracker { last: x[0], ups: 0 };
        let mut s = 0.0;
        for &v in &x[1..] {
            if matches!(t.see(v), Trend::Rising) && t.ups > 1 {
                s += t.last * t.last;
            }
        }
        s + t.last * t.ups as f64
    }

    /// `t.moved(v).map(|d| ..).unwrap_or(..)`, `.map_or(..)` of a `&mut self` method's
    /// `Option` (no rule for `map` before).
    #[differentiable]
    pub fn moved_queries(x: &[f64]) -> f64 {
        let mut t = Tracker { last: x[0], ups: 0 };
        let a = t.moved(x[1]).map(|d| d * 3.0).unwrap_or(0.0);
        let b = t.moved(x[2]).map_or(-1.0, |d| d + 1.0);
        a * b + t.last
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Gauge {
        pub level: f64,
        pub trips: usize,
    }

    #[differentiable]
    impl Gauge {
        pub fn new(level: f64) -> Gauge {
            Gauge { level, trips: 0 }
        }
        fn raise(&mut self, by: f64) -> bool {
            self.level += by;
            if self.level > 1.0 {
                self.level *= 0.5;
                self.trips += 1;
                true
            } else {
                false
            }
        }
        fn kick(&mut self, by: f64) -> f64 {
            self.level *= 1.0 + by;
            self.level * self.level
        }
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Meter {
        pub gauge: Gauge,
        pub gain: f64,
        pub gs: Vec<Gauge>,
    }

    #[differentiable]
    impl Meter {
        /// `self.gauge.raise(..)`: a `&mut self` method on a field of `self`.
        fn feed(&mut self, v: f64) -> f64 {
            if self.gauge.raise(v * self.gain) {
                self.gauge.level * 2.0
            } else {
                self.gauge.level
            }
        }
        /// `self.gs[i].raise(..)` on an element of a field.
        fn feed_all(&mut self, v: f64) -> f64 {
            let mut s = 0.0;
            for i in 0..self.gs.len() {
                self.gs[i].raise(v);
                s += self.gs[i].level;
            }
            s
        }
    }

    /// Methods on a field of a local (`m.gauge.raise(..)`, in an `if` and as a statement
    /// reading the field in its argument) and on its elements: "not
    /// `#[differentiable]`" before.
    #[differentiable]
    pub fn fields_and_elements(x: &[f64]) -> f64 {
        let mut m = Meter {
            gauge: Gauge {
                level: x[0],
                trips: 0,
            },
            gain: x[1],
            gs: vec![Gauge::new(x[2]), Gauge::new(x[3])],
        };
        let mut hits = 0.0;
        let mut s = 0.0;
        for &v in &x[2..] {
            if m.gauge.raise(v * m.gain) {
                hits += 1.0;
            }
            m.gauge.raise(m.gauge.level * 0.1);
            s += m.feed(v) + m.feed_all(v * 0.3);
        }
        m.gs[1].raise(x[0]);
        m.gauge.level * (1.0 + hits) + s * m.gs[1].level
    }

    /// `gs.iter_mut().map(|g| g.kick(..)).sum()` ("no rule for `iter_mut`" before), also
    /// over `enumerate`, and a `product`.
    #[differentiable]
    pub fn kicked(x: &[f64]) -> f64 {
        let mut gs: Vec<Gauge> = x[1..].iter().map(|&l| Gauge::new(l)).collect();
        let e: f64 = gs.iter_mut().map(|g| g.kick(x[0])).sum();
        let w = gs
            .iter_mut()
            .enumerate()
            .map(|(i, g)| g.kick(0.1 * i as f64) + 1.0)
            .product::<f64>();
        e * gs[0].level + w
    }

    /// `gs.last_mut().unwrap().kick(..)`, `gs.first_mut().unwrap()`, and
    /// `iter_mut().map(..).fold(..)` / `.collect()` of a `&mut self` method (no rule for
    /// `last_mut`, `iter_mut` before).
    #[differentiable]
    pub fn ends_and_folds(x: &[f64]) -> f64 {
        let mut gs: Vec<Gauge> = x[1..].iter().map(|&l| Gauge::new(l)).collect();
        let a = gs.last_mut().unwrap().kick(x[0]);
        let b = gs.first_mut().unwrap().kick(0.5 * x[0]);
        let c = gs
            .iter_mut()
            .map(|g| g.kick(0.1 * x[0]))
            .fold(0.0, |acc, e| acc + e * e);
        let d: Vec<f64> = gs.iter_mut().map(|g| g.kick(0.2)).collect();
        a * b + c + d[0] * d[1] + gs[2].level
    }

    mod t {
        use crate::all_orders;
        all_orders!(read_then_written, [1.3, 0.4, 0.25]);
        all_orders!(clipped, [0.4, 0.8, -0.3, 0.55]);
    }

    fn against_differences(f: fn(&[f64]) -> f64, g: Vec<f64>, x: &[f64]) {
        crate::common::assert_gradient_matches(f, &g, x);
    }

    #[test]
    fn by_differences() {
        let x = [0.8, 1.1, 0.6, 1.4];
        against_differences(cycled, cycled::gradient(&x), &x);
        let x = [0.5, 0.8, 0.3, 0.9, 0.6];
        against_differences(trend_flags, trend_flags::gradient(&x), &x);
        let x = [0.3, 0.7, 0.45, 0.9, 0.15];
        against_differences(fields_and_elements, fields_and_elements::gradient(&x), &x);
        let x = [0.2, 0.7, 1.3, 0.4];
        against_differences(kicked, kicked::gradient(&x), &x);
        let x = [0.2, 0.7, 1.3];
        against_differences(moved_queries, moved_queries::gradient(&x), &x);
        let x = [0.3, 0.6, 0.4, 0.5];
        against_differences(ends_and_folds, ends_and_folds::gradient(&x), &x);
    }

    #[test]
    fn by_hand() {
        // Rising at 0.8 (ups 1) and 0.9 (ups 2): f = x₃² + 2x₄.
        let x = [0.5f64, 0.8, 0.3, 0.9, 0.6];
        assert!((trend_flags(&x) - (0.81 + 1.2)).abs() < 1e-13);
        crate::common::close_to(
            "trend_flags",
            &trend_flags::gradient(&x),
            &[0.0, 0.0, 0.0, 1.8, 2.0],
            1e-13,
        );
        // s₁ = x₀(1 − x₁), r = mix(x₀x₁, s₁); s₂ = s₁(1 − x₂), q = mix(s₁, s₁x₂):
        // the value read before the second write.
        let x = [1.3f64, 0.4, 0.25];
        let s1 = x[0] * (1.0 - x[1]);
        let s2 = s1 * (1.0 - x[2]);
        let want = (x[0] * x[1] * s1 + (x[0] * x[1]).sin()) + (s1 * s1 * x[2] + s1.sin()) * s2;
        assert!((read_then_written(&x) - want).abs() < 1e-13);
        // Both moves up: a = 3(x₁ − x₀), b = x₂ − x₁ + 1, f = ab + x₂.
        let x = [0.2f64, 0.7, 1.3];
        let (a, b) = (3.0 * (x[1] - x[0]), x[2] - x[1] + 1.0);
        crate::common::close_to(
            "moved_queries",
            &moved_queries::gradient(&x),
            &[-3.0 * b, 3.0 * b - a, a + 1.0],
            1e-13,
        );
    }
}

/// A `scan` whose state is a tuple written by field, and the best element by a
/// comparator copied out with a default.
mod scans_and_bests {
    use mochi::prelude::*;

    /// `st.0 += v` of a tuple state (refused before 2026-12-06: "no rule for `scan`").
    #[differentiable]
    pub fn scan_pair_state(x: &[f64]) -> f64 {
        let run: Vec<f64> = x
            .iter()
            .scan((0.0, 1.0), |st, &v| {
                st.0 += v;
                st.1 *= 0.5;
                Some(st.0 * st.1)
            })
            .collect();
        run.iter().map(|v| v.sin()).sum()
    }

    /// `x.iter().max_by(cmp).copied().unwrap_or(0.0)` ("no rule for `max_by`" before).
    #[differentiable]
    pub fn copied_best_or(x: &[f64]) -> f64 {
        let far = x
            .iter()
            .max_by(|a, b| a.abs().total_cmp(&b.abs()))
            .copied()
            .unwrap_or(0.0);
        let near = x
            .iter()
            .min_by(|a, b| a.abs().total_cmp(&b.abs()))
            .cloned()
            .unwrap_or_else(|| x[0]);
        far * near + far.sin()
    }

    /// Index pairs collected from a `flat_map` without a derivative (typed as floats,
    /// "mismatched types", before 2026-12-06), then read by a chain of differentiable
    /// values; a `Zip` fold whose step is a plain sum.
    #[differentiable]
    pub fn margin_pairs(w: &[f64]) -> f64 {
        let s: Vec<f64> = w.iter().map(|v| v * 2.0 + v * v).collect();
        let rel = [3.0, 1.0, 2.0, 0.0];
        let pairs: Vec<(usize, usize)> = (0..4)
            .flat_map(|i| (0..4).map(move |j| (i, j)))
            .filter(|&(i, j)| rel[i] > rel[j])
            .collect();
        let a = ndarray::Array1::from(w.to_vec());
        let q = ndarray::Zip::from(&a).fold(0.0, |acc, &v| acc + v * v);
        pairs
            .iter()
            .map(|&(i, j)| (1.0 - (s[i] - s[j])).max(0.0))
            .sum::<f64>()
            / pairs.len() as f64
            + q
    }

    /// A `Zip` closure carrying a value from one element to the next, over a matrix and
    /// over its transpose. `Zip` visits the transpose by columns (its memory order);
    /// before 2026-12-06 the derivation visited it by rows, a wrong value and gradient;
    /// from then until 2026-12-07 an operand not in standard layout was refused. Now the
    /// derivation visits the elements in the order `Zip` does, read from the operands'
    /// layouts (`__private::zip_by_columns`).
    #[differentiable]
    pub fn zip_carried(x: &[f64], transposed: bool) -> f64 {
        let m = ndarray::Array2::from_shape_vec((2, 3), x.to_vec()).unwrap();
        let v = if transposed { m.t() } else { m.view() };
        let mut s = 0.0;
        ndarray::Zip::from(&v).for_each(|&e| s = s * 0.5 + e);
        s * s
    }

    #[test]
    fn zip_carried_in_standard_layout() {
        let x = [0.3f64, -0.7, 1.1, 0.5, 0.9, -0.4];
        let g = zip_carried::gradient(&x, false);
        crate::common::assert_gradient_matches(|x| zip_carried(x, false), &g.0, &x);
    }

    #[test]
    fn zip_carried_over_a_transpose_follows_zip() {
        let x = [0.3f64, -0.7, 1.1, 0.5, 0.9, -0.4];
        // `Zip` walks mᵀ (3×2, column-major) in memory order, x's own.
        let s = x.iter().fold(0.0, |s, e| s * 0.5 + e);
        let (y, g) = zip_carried::value_and_gradient(&x, true);
        assert!((y - s * s).abs() < 1e-12, "{y} against {}", s * s);
        assert!((y - zip_carried(&x, true)).abs() < 1e-12);
        crate::common::assert_gradient_matches(|x| zip_carried(x, true), &g.0, &x);
    }

    /// Carried values written as two order-free statements: a discounted sum (`s *=
    /// 0.5; s += e;`), a counter weighting the terms (`k += 1.0; s += k * e * e;`) and a
    /// running sum written out (`s += e; *o = s;`). Each statement alone is a sum or a
    /// product, the same in any order; together they depend on it. Before 2026-12-07
    /// they were not seen to: over a transpose, a wrong value and gradient (the
    /// discounted sum 1.3469 where `Zip` gives 1.0469 at `XZ`). Now they are walked in
    /// `Zip`'s order, by columns over the transpose.
    #[differentiable]
    pub fn zip_two_statement_carries(x: &[f64], transposed: bool) -> f64 {
        let m = ndarray::Array2::from_shape_vec((2, 3), x.to_vec()).unwrap();
        let v = if transposed { m.t() } else { m.view() };
        let mut s = 0.0;
        ndarray::Zip::from(&v).for_each(|&e| {
            s *= 0.5;
            s += e;
        });
        let mut k = 0.0;
        let mut c = 0.0;
        ndarray::Zip::from(&v).for_each(|&e| {
            k += 1.0;
            c += k * e * e;
        });
        let mut out = ndarray::Array2::<f64>::zeros(v.raw_dim());
        let mut r = 0.0;
        ndarray::Zip::from(&mut out).and(&v).for_each(|o, &e| {
            r += e;
            *o = r;
        });
        s + c + out[[1, 1]] * out[[0, 1]]
    }

    const XZ: [f64; 6] = [0.3, -0.8, 1.1, 0.6, -0.2, 0.9];

    #[test]
    fn zip_two_statement_carries_by_hand() {
        let x = XZ;
        // Standard layout: the logical order is x's own.
        let d: Vec<f64> = (0..6).map(|l| 0.5f64.powi(5 - l)).collect();
        let s: f64 = (0..6).map(|l| d[l] * x[l]).sum();
        let c: f64 = (0..6).map(|l| (l as f64 + 1.0) * x[l] * x[l]).sum();
        let (p, q) = (x[..5].iter().sum::<f64>(), x[0] + x[1]);
        let (y, g) = zip_two_statement_carries::value_and_gradient(&x, false);
        assert!((y - (s + c + p * q)).abs() < 1e-12, "{y}");
        let want: Vec<f64> = (0..6)
            .map(|l| {
                d[l] + 2.0 * (l as f64 + 1.0) * x[l]
                    + if l <= 4 { q } else { 0.0 }
                    + if l <= 1 { p } else { 0.0 }
            })
            .collect();
        crate::common::close_to("zip_two_statement_carries", &g.0, &want, 1e-12);
    }

    #[test]
    fn zip_two_statement_carries_over_a_transpose_follow_zip() {
        let x = XZ;
        // mᵀ (3×2) is column-major: `Zip` alone over it walks its memory, x's order, so
        // `s` and `c` are as in standard layout. With the row-major `out` beside it the
        // layouts disagree and `Zip` walks logical order, mᵀ's: x₀, x₃, x₁, x₄, x₂, x₅;
        // out[[0, 1]] = x₀ + x₃ and out[[1, 1]] = x₀ + x₃ + x₁ + x₄.
        let d: Vec<f64> = (0..6).map(|l| 0.5f64.powi(5 - l)).collect();
        let s: f64 = (0..6).map(|l| d[l] * x[l]).sum();
        let c: f64 = (0..6).map(|l| (l as f64 + 1.0) * x[l] * x[l]).sum();
        let (q, p) = (x[0] + x[3], x[0] + x[3] + x[1] + x[4]);
        let (y, g) = zip_two_statement_carries::value_and_gradient(&x, true);
        assert!((y - (s + c + p * q)).abs() < 1e-12, "{y}");
        assert!(
            (y - zip_two_statement_carries(&x, true)).abs() < 1e-12,
            "{y}"
        );
        let want: Vec<f64> = (0..6)
            .map(|l| {
                d[l] + 2.0 * (l as f64 + 1.0) * x[l]
                    + if [0, 3, 1, 4].contains(&l) { q } else { 0.0 }
                    + if [0, 3].contains(&l) { p } else { 0.0 }
            })
            .collect();
        crate::common::close_to("zip_two_statement_carries (transposed)", &g.0, &want, 1e-12);
        crate::common::assert_gradient_matches(|x| zip_two_statement_carries(x, true), &g.0, &x);
    }

    /// `if let Some(m) = v.iter_mut().max_by(cmp) { *m *= 2.0; }`, also `find` (no rule
    /// for `iter_mut` before 2026-12-06).
    #[differentiable]
    pub fn best_written(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        if let Some(m) = v.iter_mut().max_by(|a, b| a.total_cmp(b)) {
            *m *= 2.0;
        }
        if let Some(m) = v.iter_mut().find(|t| **t < 0.0) {
            *m = -*m * x[1];
        } else {
            v[0] += 1.0;
        }
        v.iter().map(|t| t * t).sum()
    }

    #[test]
    fn by_hand() {
        // v = [0.3, 2x₁, −x₂x₁, 0.9]: f = 0.09 + 4x₁² + x₂²x₁² + 0.81.
        let x = [0.3f64, 1.7, -0.4, 0.9];
        let g = best_written::gradient(&x);
        crate::common::close_to(
            "best_written",
            &g,
            &[
                0.6,
                8.0 * 1.7 + 2.0 * 0.16 * 1.7,
                -2.0 * 0.4 * 1.7 * 1.7,
                1.8,
            ],
            1e-12,
        );
        // Partial sums 0.5, 1.7, 1.4 halved 1, 2, 3 times.
        let x = [0.5f64, 1.2, -0.3];
        let g = scan_pair_state::gradient(&x);
        let (a, b, c) = (0.5f64 * 0.5, 1.7f64 * 0.25, 1.4f64 * 0.125);
        let (da, db, dc) = (a.cos() * 0.5, b.cos() * 0.25, c.cos() * 0.125);
        crate::common::close_to("scan", &g, &[da + db + dc, db + dc, dc], 1e-13);
        // far = −1.5 (largest magnitude), near = 0.2.
        let x = [0.2f64, -1.5, 0.7];
        let g = copied_best_or::gradient(&x);
        crate::common::close_to("bests", &g, &[-1.5, 0.2 + (-1.5f64).cos(), 0.0], 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(scan_pair_state, [0.5, 1.2, -0.3, 0.8]);
        all_orders!(copied_best_or, [0.2, -1.5, 0.7]);
        all_orders!(best_written, [0.3, 1.7, -0.4, 0.9]);
        all_orders!(margin_pairs, [0.3, -0.2, 0.25, 0.1]);
    }
}

/// Row operations through `split_at_mut` of a `Vec<Vec<f64>>` (the borrow checker's
/// idiom for reading the pivot row while writing the rows below it): the lower half
/// walked by `iter_mut()` or directly, the pivot bound from the top half or read through
/// it. A cascade of type errors before 2026-12-06.
mod split_rows {
    use mochi::prelude::*;

    /// The determinant by elimination: the product of the pivots.
    #[differentiable]
    pub fn det_split_rows(x: &[f64]) -> f64 {
        let n = 3;
        let mut a: Vec<Vec<f64>> = (0..n).map(|i| x[i * n..(i + 1) * n].to_vec()).collect();
        for k in 0..n {
            let (top, bottom) = a.split_at_mut(k + 1);
            let pivot = &top[k];
            for row in bottom.iter_mut() {
                let f = row[k] / pivot[k];
                for j in k..n {
                    row[j] -= f * pivot[j];
                }
            }
        }
        (0..n).map(|i| a[i][i]).product()
    }

    /// Elimination on the augmented rows, the lower half walked directly, then back
    /// substitution.
    #[differentiable]
    pub fn solve_split_rows(x: &[f64]) -> f64 {
        let n = 3;
        let mut a: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                let mut r = x[i * n..(i + 1) * n].to_vec();
                r.push(x[9 + i]);
                r
            })
            .collect();
        for k in 0..n {
            let (top, rest) = a.split_at_mut(k + 1);
            for row in rest {
                let f = row[k] / top[k][k];
                for j in k..=n {
                    row[j] -= f * top[k][j];
                }
            }
        }
        let mut sol = vec![0.0; n];
        for i in (0..n).rev() {
            let mut s = a[i][n];
            for j in i + 1..n {
                s -= a[i][j] * sol[j];
            }
            sol[i] = s / a[i][i];
        }
        sol[0] + 2.0 * sol[1] + 3.0 * sol[2]
    }

    #[test]
    fn against_nalgebra() {
        let x = [
            2.0f64, 0.5, 1.0, 0.3, 3.0, 0.7, 1.1, 0.4, 2.5, 1.0, -0.5, 0.25,
        ];
        let m = nalgebra::Matrix3::from_row_slice(&x[..9]);
        assert!((det_split_rows(&x) - m.determinant()).abs() < 1e-12);
        // ∂det/∂A = det · A⁻ᵀ.
        let cof = m.determinant() * m.try_inverse().unwrap().transpose();
        let g = det_split_rows::gradient(&x);
        for i in 0..3 {
            for j in 0..3 {
                assert!((g[i * 3 + j] - cof[(i, j)]).abs() < 1e-12, "[{i},{j}]");
            }
        }
        // y = cᵀA⁻¹b: ∂y/∂b = A⁻ᵀc, ∂y/∂A = −(A⁻ᵀc) solᵀ.
        let b = nalgebra::Vector3::new(x[9], x[10], x[11]);
        let c = nalgebra::Vector3::new(1.0, 2.0, 3.0);
        let inv = m.try_inverse().unwrap();
        let sol = inv * b;
        let lam = inv.transpose() * c;
        assert!((solve_split_rows(&x) - c.dot(&sol)).abs() < 1e-12);
        let g = solve_split_rows::gradient(&x);
        for i in 0..3 {
            for j in 0..3 {
                assert!((g[i * 3 + j] + lam[i] * sol[j]).abs() < 1e-12, "A[{i},{j}]");
            }
            assert!((g[9 + i] - lam[i]).abs() < 1e-12, "b[{i}]");
        }
    }

    mod t {
        use crate::all_orders;
        all_orders!(
            det_split_rows,
            [2.0, 0.5, 1.0, 0.3, 3.0, 0.7, 1.1, 0.4, 2.5]
        );
        all_orders!(
            solve_split_rows,
            [2.0, 0.5, 1.0, 0.3, 3.0, 0.7, 1.1, 0.4, 2.5, 1.0, -0.5, 0.25]
        );
    }
}

/// The order of evaluation where a call writes what an operand beside it reads: the
/// right side of `=` and `op=` first (a float's), a float method's receiver before its
/// argument, struct fields as written, a `match` arm's, `return`'s and `break`'s value,
/// a closure's body. Each gave a wrong gradient (and some a wrong value) before
/// 2026-12-06: the operand was read after the call wrote it.
mod evaluation_order {
    use mochi::prelude::*;

    #[differentiable]
    pub fn leak(s: &mut f64, r: f64) -> f64 {
        let out = *s * r;
        *s -= out;
        out
    }

    #[differentiable]
    pub fn bump(s: &mut f64) -> f64 {
        *s *= 3.0;
        *s
    }

    #[differentiable]
    pub fn mix(a: f64, b: f64) -> f64 {
        a * b + a.sin()
    }

    /// Triples `v[i]`: the new `v[i]` times `v[i + 1]`.
    #[differentiable]
    pub fn tweak(v: &mut [f64], i: usize) -> f64 {
        v[i] *= 3.0;
        v[i] * v[i + 1]
    }

    #[differentiable]
    pub fn assigned(x: &[f64]) -> f64 {
        let mut s = x[0];
        let mut y = x[2];
        let first = y * y;
        y = s * leak(&mut s, x[1]);
        let second = y;
        y = mix(s, leak(&mut s, x[2]));
        first + second * y + s
    }

    #[differentiable]
    pub fn accumulated(x: &[f64]) -> f64 {
        let mut s = x[0];
        let mut acc = 0.0;
        for &r in &x[1..] {
            acc += s * leak(&mut s, r);
        }
        acc -= mix(s, leak(&mut s, 0.5));
        acc * s
    }

    /// `s *= leak(&mut s, r)`: the right side first (the generic form borrowed `s`
    /// twice before).
    #[differentiable]
    pub fn compound_self(x: &[f64]) -> f64 {
        let mut s = x[0];
        s *= leak(&mut s, x[1]);
        s -= leak(&mut s, x[2]);
        s += bump(&mut s);
        s
    }

    #[differentiable]
    pub fn index_compound(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v[1] += tweak(&mut v, 1);
        v[0] -= tweak(&mut v, 0) * v[2];
        v[0] * v[1] + v[2]
    }

    #[differentiable]
    pub fn receivers(x: &[f64]) -> f64 {
        let mut s = x[0];
        let a = s.powf(leak(&mut s, x[1]));
        let b = s.mul_add(bump(&mut s), x[1]);
        a * b + s
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Pair {
        pub a: f64,
        pub b: f64,
    }

    #[differentiable]
    pub fn struct_literal(x: &[f64]) -> f64 {
        let mut s = x[0];
        let p = Pair {
            a: s,
            b: leak(&mut s, x[1]),
        };
        let q = Pair {
            b: leak(&mut s, x[2]),
            a: s,
        };
        p.a * p.b + q.a * q.b.sin() + s
    }

    #[differentiable]
    pub fn match_arms(x: &[f64]) -> f64 {
        let mut s = x[0];
        let mut acc = 0.0;
        for k in 0..3 {
            let y = match k {
                0 => s * leak(&mut s, x[1]),
                1 => mix(s, leak(&mut s, x[2])),
                _ => s,
            };
            acc += y;
        }
        acc * s
    }

    #[differentiable]
    pub fn returned_early(x: &[f64]) -> f64 {
        let mut s = x[0];
        for &r in &x[1..] {
            if r > 0.5 {
                return s * leak(&mut s, r) + s;
            }
            s *= 1.0 + r;
        }
        s
    }

    #[differentiable]
    pub fn break_value(x: &[f64]) -> f64 {
        let mut s = x[0];
        let mut k = 0;
        let v = loop {
            k += 1;
            if k == 3 {
                break s * leak(&mut s, x[1]);
            }
            s *= x[2];
        };
        v + s
    }

    /// A closure's body (the value was wrong too before).
    #[differentiable]
    pub fn closure_writes(x: &[f64]) -> f64 {
        let mut s = x[0];
        let mut acc = 0.0;
        x[1..].iter().for_each(|r| {
            acc += s * leak(&mut s, *r);
        });
        acc * s
    }

    #[differentiable]
    pub fn take(s: &mut f64, r: f64) -> Option<f64> {
        if r <= 0.0 {
            return None;
        }
        let out = *s * r;
        *s -= out;
        Some(out)
    }

    /// `s * take(&mut s, r)?`, `mix(s, take(&mut s, r)?)`, in a loop too: the `?` is
    /// bound before its statement, and `s` was read after the call wrote it (value 1.142
    /// for 1.272, 1.630 for 2.240 before 2026-12-06).
    #[differentiable]
    pub fn tried(x: &[f64]) -> Option<f64> {
        let mut s = x[0];
        let y = s * take(&mut s, x[1])?;
        let z = mix(s, take(&mut s, x[2])?);
        let mut acc = 0.0;
        for &r in &x[1..] {
            acc += s * take(&mut s, r)?;
        }
        Some(y * z + acc + s)
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Jar {
        pub s: f64,
    }

    #[differentiable]
    impl Jar {
        fn take(&mut self, r: f64) -> Option<f64> {
            if r <= 0.0 {
                return None;
            }
            let out = self.s * r;
            self.s -= out;
            Some(out)
        }
        /// `self.s * self.take(r)?` in a method.
        fn tried(&mut self, r1: f64, r2: f64) -> Option<f64> {
            let y = self.s * self.take(r1)?;
            let z = mix(self.s, self.take(r2)?);
            Some(y * z + self.s)
        }
    }

    #[differentiable]
    pub fn jar_tried(x: &[f64]) -> Option<f64> {
        let mut j = Jar { s: x[0] };
        let y = j.tried(x[1], x[2])?;
        Some(y * j.s)
    }

    #[test]
    fn tried_against_differences() {
        for (f, g) in [
            (
                tried as fn(&[f64]) -> Option<f64>,
                tried::value_and_gradient as fn(&[f64]) -> (Option<f64>, Vec<f64>),
            ),
            (jar_tried, jar_tried::value_and_gradient),
        ] {
            let x = [1.2f64, 0.3, 0.45];
            let (y, gr) = g(&x);
            let want = f(&x).unwrap();
            assert!((y.unwrap() - want).abs() < 1e-13, "{y:?} against {want}");
            crate::common::assert_gradient_matches(|x| f(x).unwrap(), &gr, &x);
        }
        // The `None` side: a rate at zero.
        assert!(tried(&[1.2, 0.0, 0.45]).is_none());
        assert!(tried::value_and_gradient(&[1.2, 0.0, 0.45]).0.is_none());
    }

    /// `assert!` and `assert_eq!` whose arguments write.
    #[differentiable]
    pub fn asserted(x: &[f64]) -> f64 {
        let mut s = x[0];
        assert!(leak(&mut s, x[1]) > 0.0, "leaked");
        assert_eq!(bump(&mut s) > 0.0, x[0] > 0.0);
        s * s
    }

    /// A named argument of `println!` that writes: bound, and named.
    #[differentiable]
    pub fn printed_named(x: &[f64]) -> f64 {
        let mut s = x[0];
        println!("{v:.3}", v = leak(&mut s, x[1]));
        s * s
    }

    mod t {
        use crate::all_orders;
        all_orders!(assigned, [1.1, 0.4, 0.3]);
        all_orders!(accumulated, [1.3, 0.2, 0.35, 0.15]);
        all_orders!(compound_self, [1.1, 0.3, 0.2]);
        all_orders!(index_compound, [0.6, 0.8, 0.5]);
        all_orders!(receivers, [1.2, 0.3]);
        all_orders!(match_arms, [1.2, 0.3, 0.45]);
        all_orders!(returned_early, [1.2, 0.3, 0.7, 0.2]);
        all_orders!(break_value, [1.2, 0.3, 0.9]);
        all_orders!(closure_writes, [1.3, 0.2, 0.35, 0.15]);
        all_orders!(printed_named, [0.9, 0.4]);
        all_orders!(asserted, [0.9, 0.4]);
    }

    #[test]
    fn by_hand() {
        // s₁ = s₀(1 − r): compound_self's f = 6 s₀² r₁(1 − r₁)(1 − 2r₂).
        let x = [1.1f64, 0.3, 0.2];
        let (s, r1, r2) = (x[0], x[1], x[2]);
        let want = [
            12.0 * s * r1 * (1.0 - r1) * (1.0 - 2.0 * r2),
            6.0 * s * s * (1.0 - 2.0 * r1) * (1.0 - 2.0 * r2),
            -12.0 * s * s * r1 * (1.0 - r1),
        ];
        crate::common::close_to("compound_self", &compound_self::gradient(&x), &want, 1e-12);
        // p = (s₀, s₀r₁), s₁ = s₀(1 − r₁); q = (s₁(1 − r₂), s₁r₂): the values as Rust
        // reads them.
        let x = [1.2f64, 0.3, 0.45];
        let s1 = x[0] * (1.0 - x[1]);
        let s2 = s1 * (1.0 - x[2]);
        let want = x[0] * x[0] * x[1] + s2 * (s1 * x[2]).sin() + s2;
        assert!((struct_literal(&x) - want).abs() < 1e-13);
        let (y, _) = struct_literal::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-13);
        // printed_named: f = s₀²(1 − r)².
        let x = [0.9f64, 0.4];
        let g = printed_named::gradient(&x);
        crate::common::close_to(
            "printed_named",
            &g,
            &[2.0 * x[0] * 0.36, -2.0 * x[0] * x[0] * 0.6],
            1e-12,
        );
    }

    #[test]
    fn values_agree() {
        let x = [1.3f64, 0.2, 0.35, 0.15];
        let (y, _) = closure_writes::value_and_gradient(&x);
        assert!((y - closure_writes(&x)).abs() < 1e-13);
        let x = [1.2f64, 0.3, 0.45];
        assert!((struct_literal::value_and_gradient(&x).0 - struct_literal(&x)).abs() < 1e-13);
    }
}

/// A chain over `&[(Vec<f64>, f64)]` whose closure hands the row to a method taking
/// `&[f64]` (`data.iter().map(|(x, y)| self.logit(x))`): the row bound by reference, as
/// the closure had it ("expected `&[f64]`, found `Vec<f64>`" at the attribute before
/// 2026-12-06). The gradient in the model and in the data against central differences.
mod tuple_rows {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Model {
        pub w: Vec<f64>,
        pub b: f64,
    }

    #[differentiable]
    impl Model {
        fn logit(&self, x: &[f64]) -> f64 {
            let mut z = self.b;
            for i in 0..x.len() {
                z += self.w[i] * x[i];
            }
            z
        }
        fn nll(&self, data: &[(Vec<f64>, f64)]) -> f64 {
            data.iter()
                .map(|(x, y)| {
                    let z = self.logit(x);
                    z.max(0.0) - y * z + (-z.abs()).exp().ln_1p()
                })
                .sum::<f64>()
                / data.len() as f64
        }
    }

    #[differentiable]
    pub fn loss(w: &[f64], data: &[(Vec<f64>, f64)]) -> f64 {
        let m = Model {
            w: w[..2].to_vec(),
            b: w[2],
        };
        m.nll(data)
    }

    #[test]
    fn against_differences() {
        let data = vec![
            (vec![0.5, -1.0], 1.0),
            (vec![1.5, 0.3], 0.0),
            (vec![-0.4, 0.8], 1.0),
        ];
        let w = [0.3, -0.2, 0.1];
        let (gw, gd) = loss::gradient(&w, &data);
        crate::common::assert_gradient_matches(|w| loss(w, &data), &gw, &w);
        let h = 1e-6;
        for i in 0..3 {
            for j in 0..3 {
                let (mut u, mut d) = (data.clone(), data.clone());
                if j < 2 {
                    u[i].0[j] += h;
                    d[i].0[j] -= h;
                } else {
                    u[i].1 += h;
                    d[i].1 -= h;
                }
                let fd = (loss(&w, &u) - loss(&w, &d)) / (2.0 * h);
                let g = if j < 2 { gd[i].0[j] } else { gd[i].1 };
                assert!(
                    (g - fd).abs() < 1e-6,
                    "data[{i}] part {j}: {g} against {fd}"
                );
            }
        }
    }
}

/// A sub-slice of a row handed to a helper (`sqnorm(&icf[c][d..])`, the GMM objective
/// as ADBench writes it), sorting and reversing a `&mut [f64]` parameter in place, and
/// `skip`/`take` on the sources of a zipped `for` over `iter_mut()`. Before: "`[f64]:
/// Clone` is not satisfied" at the attribute, "no method `clone` for `&mut [f64]`", and
/// "this `for` … is not one the derivation writes as an index loop".
mod rows_sorts_and_zips {
    use mochi::prelude::*;

    #[differentiable]
    pub fn sqnorm(v: &[f64]) -> f64 {
        v.iter().map(|a| a * a).sum()
    }

    #[differentiable]
    pub fn exp_each(v: &[f64]) -> Vec<f64> {
        v.iter().map(|a| a.exp()).collect()
    }

    /// Rows of the parameter and of a local, cut at `d`, handed on.
    #[differentiable]
    pub fn row_pieces(icf: &[Vec<f64>], d: usize) -> f64 {
        let mut s = 0.0;
        for c in 0..icf.len() {
            let qd = exp_each(&icf[c][..d]);
            let next = (c + 1) % icf.len();
            s += qd[0] * sqnorm(&icf[c][d..]) + sqnorm(&icf[next][1..d + 1]);
        }
        s
    }

    #[differentiable]
    pub fn local_row_pieces(x: &[f64]) -> f64 {
        let rows: Vec<Vec<f64>> = x
            .chunks(3)
            .map(|c| c.iter().map(|v| v.sin()).collect())
            .collect();
        let mut s = 0.0;
        for i in 0..rows.len() {
            s += sqnorm(&rows[i][1..]) * rows[i][0] + sqnorm(&rows[(i + 1) % rows.len()][..2]);
        }
        s
    }

    #[differentiable]
    pub fn sort_in(v: &mut [f64]) {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }

    #[differentiable]
    pub fn reverse_in(v: &mut [f64]) {
        v.reverse();
    }

    /// The largest two of `x² + x` weighted: sorted, reversed through helpers.
    #[differentiable]
    pub fn top_two(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a * a + a).collect();
        sort_in(&mut v);
        reverse_in(&mut v[..]);
        2.0 * v[0] + v[1]
    }

    #[differentiable]
    pub fn shifted_zips(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let old = v.clone();
        for (a, b) in v.iter_mut().zip(old.iter().skip(1)) {
            *a = *a * b + 1.0;
        }
        for (a, b) in v.iter_mut().skip(1).zip(x.iter().take(3)) {
            *a += a.sin() * b;
        }
        for (a, b) in v[1..].iter_mut().skip(1).zip(x.iter().skip(2).take(2)) {
            *a -= b * b;
        }
        v.iter()
            .enumerate()
            .map(|(i, a)| (i as f64 + 1.0) * a * a)
            .sum()
    }

    #[test]
    fn row_pieces_against_differences() {
        let x = [
            0.3, -0.5, 0.8, 0.45, 0.2, -0.35, 0.7, 1.1, -0.2, 0.15, 0.6, -0.9,
        ];
        let rows = |v: &[f64]| -> Vec<Vec<f64>> { v.chunks(4).map(|c| c.to_vec()).collect() };
        let (g, _) = row_pieces::gradient(&rows(&x), 2);
        crate::common::assert_gradient_matches(|v| row_pieces(&rows(v), 2), &g.concat(), &x);
    }

    #[test]
    fn top_two_by_hand() {
        // The largest two of v = x² + x are at x[3] = 1.2 (2.64) and x[2] = 0.8 (1.44).
        let x = [0.3, -0.5, 0.8, 1.2, 0.45];
        let g = top_two::gradient(&x);
        let want = [0.0, 0.0, 2.0 * 0.8 + 1.0, 2.0 * (2.0 * 1.2 + 1.0), 0.0];
        crate::common::close_to("top_two", &g, &want, 1e-12);
    }

    #[test]
    fn shifted_zips_by_hand_value() {
        // The plain loops, by index.
        let x = [0.3_f64, -0.5, 0.8, 0.45, 1.2];
        let mut v = x.to_vec();
        for i in 0..4 {
            v[i] = v[i] * x[i + 1] + 1.0;
        }
        for i in 0..3 {
            v[i + 1] += v[i + 1].sin() * x[i];
        }
        for i in 0..2 {
            v[i + 2] -= x[i + 2] * x[i + 2];
        }
        let want: f64 = v
            .iter()
            .enumerate()
            .map(|(i, a)| (i as f64 + 1.0) * a * a)
            .sum();
        let (y, _) = shifted_zips::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
    }

    /// `copy_within` (a range of every kind) and `Option::take`/`replace` of a
    /// differentiable value. Before: "no rule for `copy_within`", "no rule for `take`".
    #[differentiable]
    pub fn copied_within(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a.sin()).collect();
        v.copy_within(1.., 0);
        v.copy_within(..=1, 3);
        v.copy_within(2..3, 1);
        v.iter()
            .enumerate()
            .map(|(i, a)| (i as f64 + 1.0) * a * a)
            .sum()
    }

    #[differentiable]
    pub fn taken_options(x: &[f64]) -> f64 {
        let mut o = Some(x[0] * x[1]);
        let a = o.take().unwrap_or(0.0);
        let b = o.unwrap_or(x[2]);
        o = Some(a + b);
        let c = o.replace(x[2] * 2.0).unwrap_or(0.0);
        a * b + c * o.unwrap_or(0.0)
    }

    #[test]
    fn copied_and_taken_by_hand() {
        let x = [0.8_f64, 1.1, 0.6, -0.4, 0.3];
        let mut v: Vec<f64> = x.iter().map(|a| a.sin()).collect();
        v.copy_within(1.., 0);
        v.copy_within(..=1, 3);
        v.copy_within(2..3, 1);
        let want: f64 = v
            .iter()
            .enumerate()
            .map(|(i, a)| (i as f64 + 1.0) * a * a)
            .sum();
        let (y, _) = copied_within::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-14, "{y} against {want}");
        // a = x₀x₁, b = x₂, c = a + b, o = 2x₂: f = x₀x₁x₂ + 2x₂(x₀x₁ + x₂).
        let x = [0.8_f64, 1.1, 0.6];
        let (y, g) = taken_options::value_and_gradient(&x);
        let want = x[0] * x[1] * x[2] + 2.0 * x[2] * (x[0] * x[1] + x[2]);
        assert!((y - want).abs() < 1e-14, "{y} against {want}");
        let dg = [
            3.0 * x[1] * x[2],
            3.0 * x[0] * x[2],
            3.0 * x[0] * x[1] + 4.0 * x[2],
        ];
        crate::common::close_to("taken_options", &g, &dg, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(copied_within, [0.8, 1.1, 0.6, -0.4, 0.3]);
        all_orders!(taken_options, [0.8, 1.1, 0.6]);
        all_orders!(
            local_row_pieces,
            [0.3, -0.5, 0.8, 0.45, 0.2, -0.35, 0.7, 1.1, -0.2]
        );
        all_orders!(top_two, [0.3, -0.5, 0.8, 1.2, 0.45]);
        all_orders!(shifted_zips, [0.3, -0.5, 0.8, 0.45, 1.2]);
    }
}

/// Writes the caller's accumulator must not see, and operands that must be read once
/// and in order. Each gave a wrong gradient (some a wrong value) before 2026-12-06:
/// - a `mut` parameter taken by value and written in the body (`fn bump(mut x: f64, y)
///   { x += y; .. }`, `fn plus(mut self, v) -> Acc`), whose writes went into the
///   caller's accumulator of the argument, which already held the cotangent of the
///   caller's other reads of it;
/// - a float method's receiver that writes inside a larger expression, `(s + leak(&mut
///   s, r)).sin()`, `.powf(s)`, and a call's such argument `f(s + leak(&mut s, r))`
///   (`s` read after `leak` changed it);
/// - an element assigned at an index that changes something when computed, `v[next(&mut
///   k)] *= a` (the index computed twice).
mod mut_params_and_receivers {
    use mochi::prelude::*;

    #[differentiable]
    pub fn bump(mut x: f64, y: f64) -> f64 {
        x += y;
        x * x
    }

    #[differentiable]
    pub fn bumped_twice(x: &[f64]) -> f64 {
        let a = x[0] * 2.0;
        a * 3.0 + bump(a, x[1]) + a * a + bump(bump(a, x[2]), a)
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Acc {
        pub s: f64,
        pub t: f64,
    }

    #[differentiable]
    pub fn plus_free(mut a: Acc, v: f64) -> Acc {
        a.t += a.s * v;
        a.s += v;
        a
    }

    #[differentiable]
    impl Acc {
        pub fn start(s: f64) -> Acc {
            Acc { s, t: 0.0 }
        }

        fn plus(mut self, v: f64) -> Acc {
            self.t += self.s * v;
            self.s += v;
            self
        }

        fn times(mut self, k: f64) -> Acc {
            self.s *= k;
            self.t *= k;
            self.scaled(1.5)
        }

        fn scaled(self, k: f64) -> Acc {
            Acc {
                s: self.s * k,
                t: self.t,
            }
        }
    }

    /// `a` is read after `plus` and `times` took copies of it and changed them.
    #[differentiable]
    pub fn builders_by_value(x: &[f64]) -> f64 {
        let a = Acc::start(x[0]);
        let b = a.plus(a.s * x[1]);
        let c = b.times(x[2]).plus(b.t);
        let d = plus_free(a, x[2]);
        a.s * b.t + c.s * c.t + b.s + d.t * a.s
    }

    #[differentiable]
    pub fn leak(s: &mut f64, r: f64) -> f64 {
        let out = *s * r;
        *s -= out;
        out
    }

    #[differentiable]
    pub fn mix1(a: f64) -> f64 {
        a * a + 0.5 * a
    }

    #[differentiable]
    pub fn receivers_that_write(x: &[f64]) -> f64 {
        let mut s = x[0];
        let a = (s + leak(&mut s, x[1])).powf(s);
        let b = (s + leak(&mut s, x[1])).sin() * s;
        let c = mix1(s * 2.0 - leak(&mut s, x[2]) * s);
        let mut acc = 0.0;
        for _ in 0..2 {
            acc += (s + leak(&mut s, x[1])).sin() * s;
        }
        a + b + c + acc + s
    }

    /// Not marked: an integer counter.
    pub fn next_index(k: &mut usize) -> usize {
        *k += 1;
        *k - 1
    }

    #[differentiable]
    pub fn counted_writes(x: &[f64]) -> f64 {
        let mut k = 1;
        let mut v = x.to_vec();
        v[next_index(&mut k)] *= x[0];
        v[next_index(&mut k)] += v[0] * v[1];
        v[0] * v[1] + v[2] + k as f64
    }

    #[test]
    fn values_by_hand() {
        let x = [1.1_f64, 0.3, 0.7];
        // bump(a, y) = (a + y)²: ∂/∂x₁ of the first is 2(a + x₁)·1 alone.
        let a = 2.2;
        let b2 = (a + 0.7) * (a + 0.7);
        let want = a * 3.0 + (a + 0.3) * (a + 0.3) + a * a + (b2 + a) * (b2 + a);
        let (y, g) = bumped_twice::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        assert!((g[1] - 2.0 * (a + 0.3)).abs() < 1e-12, "{g:?}");
        // counted_writes: v₁ = x₁x₀, v₂ = x₂ + x₀·x₁x₀, k = 3.
        let (y, g) = counted_writes::value_and_gradient(&x);
        let (v1, v2) = (0.3 * 1.1, 0.7 + 1.1 * 0.3 * 1.1);
        assert!((y - (1.1 * v1 + v2 + 3.0)).abs() < 1e-12, "{y}");
        let want = [v1 + 1.1 * 0.3 + 2.0 * 1.1 * 0.3, 1.1 * 1.1 + 1.1 * 1.1, 1.0];
        crate::common::close_to("counted_writes", &g, &want, 1e-12);
        // builders_by_value against its own plain value.
        let (y, _) = builders_by_value::value_and_gradient(&x);
        assert!((y - builders_by_value(&x)).abs() < 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(bumped_twice, [1.1, 0.3, 0.7]);
        all_orders!(receivers_that_write, [1.1, 0.3, 0.7]);
    }

    #[test]
    fn against_differences() {
        let x = [1.1_f64, 0.3, 0.7];
        for (f, g) in [
            (
                builders_by_value as fn(&[f64]) -> f64,
                builders_by_value::gradient(&x),
            ),
            (counted_writes, counted_writes::gradient(&x)),
        ] {
            crate::common::assert_gradient_matches(f, &g, &x);
        }
    }
}

/// A struct of a sibling module imported by name alone (`use super::shapes::Pt;`), built
/// in a function with a generic form: the form names the struct's mirror through `Pt`
/// itself. Before: "cannot find struct `__MochiTwinPt` in this scope" at the literal.
mod imported_struct {
    pub mod shapes {
        use mochi::prelude::*;

        #[derive(Clone, Copy, Debug, Tangent)]
        pub struct Pt {
            pub x: f64,
            pub y: f64,
        }

        #[derive(Clone, Copy, Debug, Tangent)]
        pub struct Pair(pub f64, pub f64);
    }

    use mochi::prelude::*;
    use shapes::{Pair, Pt};

    #[differentiable(higher_order)]
    pub fn spread(v: &[f64]) -> f64 {
        let ps: Vec<Pt> = v.chunks(2).map(|c| Pt { x: c[0], y: c[1] }).collect();
        let q = Pair(ps[0].x * ps[1].y, ps[1].x);
        let mut s = q.0 * q.1;
        for p in &ps {
            s += p.x * p.x * p.y;
        }
        s
    }

    mod t {
        use crate::all_orders;
        all_orders!(spread, [0.3, -0.5, 0.8, 0.45, 1.2, 0.7]);
    }
}

/// `match` on a tuple of `Option`s (`(Some(p), Some(q)) if p > q => .., (Some(p), None)
/// => .., _ => ..`, with a literal beside, `(0, Some(p))`), `if let (Some(p), _) = (a,
/// b)`, and runs of arms with one pattern guarded but the last (`Ok(l) if l > 0.0 => ..,
/// Ok(l) => .., Err(_) => ..`). Before: "a `match` arm or `if let` pattern that binds
/// parts of a differentiable value … is not supported".
mod option_tuples_and_guards {
    use mochi::prelude::*;

    #[differentiable]
    pub fn checked_ln(v: f64) -> Result<f64, String> {
        if v <= 0.0 {
            return Err(format!("ln of {v}"));
        }
        Ok(v.ln())
    }

    #[differentiable]
    pub fn guarded_results(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x {
            s += match checked_ln(v) {
                Ok(l) if l > 0.0 => l * l,
                Ok(l) => -l,
                Err(_) => v * v,
            };
        }
        s
    }

    #[differentiable]
    pub fn option_pairs(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            let a = x.get(i + 1).copied();
            let b = if x[i] > 0.0 { Some(x[i] * 0.5) } else { None };
            s += match (a, b) {
                (Some(p), Some(q)) if p > q => p * q,
                (Some(p), Some(q)) => p - q,
                (Some(p), None) => p.sin(),
                (None, Some(q)) => q * q,
                (None, None) => 1.0,
            };
            if let (Some(p), _) = (x.first(), b) {
                s += p * 0.5;
            }
            s += match (i % 2, a) {
                (0, Some(p)) => p * 3.0,
                (_, Some(p)) => p,
                _ => 0.0,
            };
        }
        s
    }

    /// A helper's `Result` through `map(..).unwrap_or(..)`, `find_map(|&v| ..)`, an
    /// integer sum typed by its binding (`let n: usize = chain.sum();`). Before: "no
    /// method `is_some` for `Result`", "only names … can bind a differentiable value",
    /// "cannot add-assign `usize` to `f64`".
    #[differentiable]
    pub fn results_found_and_counted(x: &[f64]) -> f64 {
        let c = checked_ln(x[1]).map(|l| l * 2.0).unwrap_or(0.0);
        let b = x
            .iter()
            .find_map(|&v| if v > 1.0 { Some(v.ln()) } else { None })
            .unwrap_or(0.0);
        let total: usize = (1..=x.len()).map(|i| i * i).sum();
        c + b * x[0] + x[2] / total as f64
    }

    #[differentiable]
    pub fn checked_sqrt(v: f64) -> Option<f64> {
        if v < 0.0 {
            None
        } else {
            Some(v.sqrt())
        }
    }

    /// `Option::zip` ended by `map(|(p, q)| ..).unwrap_or(d)`, `map_or(d, |(p, q)| ..)`,
    /// `if let Some((p, q)) = a.zip(b)`, beside an iterator's `zip`. Before: "no rule for
    /// `first` with arguments `(&[f64],)`" and a cascade of type errors.
    #[differentiable]
    pub fn zipped_options(x: &[f64]) -> f64 {
        let a = x
            .first()
            .copied()
            .zip(x.last().copied())
            .map(|(p, q)| p * q)
            .unwrap_or(0.0);
        let b = x
            .get(1)
            .copied()
            .zip(x.get(7).copied())
            .map_or(4.0 * x[1] * x[1], |(p, q)| p + q);
        let c = if let Some((p, q)) = checked_sqrt(x[0]).zip(checked_sqrt(x[2])) {
            p * q
        } else {
            0.0
        };
        let pairs: f64 = x.iter().zip(x.iter().skip(1)).map(|(p, q)| p * q).sum();
        a + b + c + pairs
    }

    /// `unwrap_or_default()` and `ok()` before `map`, `map_or`, `unwrap_or` on helpers'
    /// `Option`s and `Result`s. Before: "no rule for `unwrap_or_default`", "no rule for
    /// `ok`".
    #[differentiable]
    pub fn shorthand_options(x: &[f64]) -> f64 {
        let a = checked_sqrt(x[1] - 5.0).unwrap_or_default() + x[2];
        let c = checked_ln(x[1]).ok().map(|l| l * 2.0).unwrap_or(0.0);
        let d = checked_ln(x[0]).ok().unwrap_or(0.0);
        let e = checked_ln(x[2]).ok().map_or(1.0, |l| l * l);
        let f = checked_sqrt(x[0]).unwrap_or_default();
        a * x[1] + c + d + e + f
    }

    /// A tuple of options of `String`s beside the derivative, guarded arms and an
    /// `.ok().map(..)` kept as an `Option`: run as written (the rewrites are for values
    /// with a derivative; `unwrap` would move the strings out twice).
    #[differentiable]
    pub fn untouched_options(x: &[f64]) -> f64 {
        let names = (Some(String::from("ab")), Some(String::from("c")));
        let k = match (names.0, names.1) {
            (Some(n), Some(m)) if n.len() > m.len() => 2,
            (Some(n), _) => n.len(),
            _ => 0,
        };
        let parsed: Option<usize> = "3".parse::<usize>().ok().map(|n| n + 1);
        x[0] * (k + parsed.unwrap_or(0)) as f64
    }

    #[test]
    fn untouched_by_hand() {
        let (y, g) = untouched_options::value_and_gradient(&[1.5]);
        assert_eq!((y, g[0]), (9.0, 6.0));
    }

    #[test]
    fn shorthands_by_hand() {
        // a = x₂ (x₁ − 5 < 0), c = 2 ln x₁, d = ln x₀, e = ln² x₂, f = √x₀.
        let x = [0.8_f64, 1.3, 0.6];
        let (y, g) = shorthand_options::value_and_gradient(&x);
        let want =
            0.6 * 1.3 + 2.0 * 1.3f64.ln() + 0.8f64.ln() + 0.6f64.ln().powi(2) + 0.8f64.sqrt();
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let dg = [
            1.0 / 0.8 + 0.5 / 0.8f64.sqrt(),
            0.6 + 2.0 / 1.3,
            1.3 + 2.0 * 0.6f64.ln() / 0.6,
        ];
        crate::common::close_to("shorthand_options", &g, &dg, 1e-12);
    }

    #[test]
    fn zipped_by_hand() {
        let x = [0.7_f64, 1.2, 0.5];
        let (y, g) = zipped_options::value_and_gradient(&x);
        let want = 0.7 * 0.5 + 4.0 * 1.44 + (0.7_f64 * 0.5).sqrt() + 0.7 * 1.2 + 1.2 * 0.5;
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let r = (0.7_f64 * 0.5).sqrt();
        let dg = [
            0.5 + 0.5 * 0.5 / r + 1.2,
            8.0 * 1.2 + 0.7 + 0.5,
            0.7 + 0.5 * 0.7 / r + 1.2,
        ];
        crate::common::close_to("zipped_options", &g, &dg, 1e-12);
    }

    #[test]
    fn by_hand() {
        // c = 2 ln x₁, b = ln x₀ (the first above 1), total = 1 + 4 + 9 + 16 = 30.
        let x = [2.0_f64, 0.5, -0.7, 1.5];
        let (y, g) = results_found_and_counted::value_and_gradient(&x);
        let want = 2.0 * 0.5f64.ln() + 2f64.ln() * 2.0 - 0.7 / 30.0;
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let dg = [2f64.ln() + 1.0, 2.0 / 0.5, 1.0 / 30.0, 0.0];
        crate::common::close_to("results_found_and_counted", &g, &dg, 1e-12);
        // ln 2 > 0, ln 0.5 < 0, −0.7 has no log, ln 1.5 > 0.
        let x = [2.0_f64, 0.5, -0.7, 1.5];
        let (y, g) = guarded_results::value_and_gradient(&x);
        let want = 2f64.ln().powi(2) - 0.5f64.ln() + 0.49 + 1.5f64.ln().powi(2);
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let dg = [
            2.0 * 2f64.ln() / 2.0,
            -1.0 / 0.5,
            -1.4,
            2.0 * 1.5f64.ln() / 1.5,
        ];
        crate::common::close_to("guarded_results", &g, &dg, 1e-12);
        // Every arm of `option_pairs` taken: (1.6, 1.0) p > q; (−0.7, 0.8) p < q; (1.5,
        // none); (0.3, 0.75) p < q; (none, 0.15).
        let x = [2.0_f64, 1.6, -0.7, 1.5, 0.3];
        let (y, _) = option_pairs::value_and_gradient(&x);
        assert!((y - option_pairs(&x)).abs() < 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(guarded_results, [2.0, 0.5, -0.7, 1.5]);
        all_orders!(option_pairs, [2.0, 1.6, -0.7, 1.5, 0.3]);
        all_orders!(results_found_and_counted, [2.0, 0.5, -0.7, 1.5]);
        all_orders!(zipped_options, [0.7, 1.2, 0.5]);
        all_orders!(shorthand_options, [0.8, 1.3, 0.6]);
    }
}

/// Iterators of iterators flattened, as `std::autodiff`'s examples write them:
/// `it.map(|r| r.into_iter().map(f)).flatten()` is `it.flat_map(..)`.
#[allow(clippy::map_flatten, clippy::into_iter_on_ref, clippy::useless_vec)]
mod mapped_then_flattened {
    use mochi::prelude::*;

    #[differentiable]
    pub fn root_sum(x: &Vec<Vec<f32>>) -> f32 {
        x.into_iter()
            .map(|x| x.into_iter().map(|x| x.sqrt()))
            .flatten()
            .sum()
    }

    #[differentiable]
    pub fn rows_flattened(x: &[f64]) -> f64 {
        let rows = vec![x[..2].to_vec(), x[2..].to_vec()];
        let a = rows
            .iter()
            .map(|r| r.iter().map(|v| v * v * x[0]))
            .flatten()
            .sum::<f64>();
        let b = x
            .chunks(2)
            .map(|c| c.iter().map(|v| v.sin()))
            .flatten()
            .sum::<f64>();
        a + b
    }

    #[test]
    fn by_hand() {
        let g = root_sum::gradient(&vec![vec![1.0, 4.0], vec![16.0]]);
        assert_eq!(g, vec![vec![0.5, 0.25], vec![0.125]]);
        // ∂/∂x₀ = Σ v² + 2x₀·x₀ + cos x₀; ∂/∂xₖ = 2xₖx₀ + cos xₖ
        let x = [0.3_f64, 1.2, -0.7, 0.9];
        let (y, g) = rows_flattened::value_and_gradient(&x);
        assert!((y - rows_flattened(&x)).abs() < 1e-12);
        let sq: f64 = x.iter().map(|v| v * v).sum();
        let mut want: Vec<f64> = x.iter().map(|v| 2.0 * v * x[0] + v.cos()).collect();
        want[0] = sq + 2.0 * x[0] * x[0] + x[0].cos();
        crate::common::close_to("rows_flattened", &g, &want, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(rows_flattened, [0.3, 1.2, -0.7, 0.9]);
    }
}

/// Where Rust computes a value before the place it goes to, or once for many uses: the
/// right side of `=` and of a float's `op=` before the index, `resize`'s value once.
/// Before 2026-12-07 each of these gave a wrong value, without an error.
mod computed_before_the_place {
    use mochi::prelude::*;

    #[differentiable]
    pub fn leak(s: &mut f64, r: f64) -> f64 {
        let out = *s * r;
        *s -= out;
        out
    }

    /// `out[k] = { k += 1; .. }` writes at the new `k`; `out[k] *= { k -= 1; .. }`
    /// scales the element at the new `k` too.
    #[differentiable]
    pub fn cursor_in_right_side(x: &[f64]) -> f64 {
        let n = x.len();
        let mut out = vec![1.0; n];
        let mut k = 0;
        while k + 1 < n {
            out[k] = {
                k += 1;
                x[k - 1] * x[k]
            };
        }
        out[k] *= {
            k -= 1;
            out[k] + x[k]
        };
        let mut s = 0.0;
        for i in 0..n {
            s += out[i] * (i as f64 + 1.0);
        }
        s
    }

    /// `resize`'s value is computed once, before the call: from the last element then,
    /// and a helper in it runs once.
    #[differentiable]
    pub fn resized(x: &[f64]) -> f64 {
        let mut v = x[..3].to_vec();
        v.resize(5, v[v.len() - 1] * x[0]);
        let mut s = x[0];
        let mut w = vec![x[2]];
        w.resize(4, leak(&mut s, x[1]));
        v[3] * v[4] + v[1] * v[4] + v[2] + w[1] * w[3] + w[2] * s + w[0]
    }

    #[test]
    fn by_hand() {
        // out = [1, x₀x₁, x₁x₂, x₂x₃], then out₂ *= x₁x₂ + x₂:
        // f = 2x₀x₁ + 3x₁x₂(x₁x₂ + x₂) + 4x₂x₃ + 1.
        let x = [0.7_f64, 1.2, -0.5, 0.9];
        let (a, b, c, d) = (x[0], x[1], x[2], x[3]);
        let y = cursor_in_right_side(&x);
        let want = 2.0 * a * b + 3.0 * b * c * (b * c + c) + 4.0 * c * d + 1.0;
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let (yd, g) = cursor_in_right_side::value_and_gradient(&x);
        assert!((yd - want).abs() < 1e-12, "{yd} against {want}");
        let dg = [
            2.0 * b,
            2.0 * a + 3.0 * (2.0 * b * c * c + c * c),
            3.0 * (2.0 * b * b * c + 2.0 * b * c) + 4.0 * d,
            4.0 * c,
        ];
        crate::common::close_to("cursor_in_right_side", &g, &dg, 1e-12);
        // v = [x₀, x₁, x₂, x₀x₂, x₀x₂]; w = [x₂, p, p, p] with p = x₀x₁, s = x₀(1 − x₁):
        // f = (x₀x₂)² + x₁x₀x₂ + x₂ + p² + p·s + x₂.
        let x = [0.7_f64, 0.4, 0.5];
        let (a, b, c) = (x[0], x[1], x[2]);
        let (p, s) = (a * b, a * (1.0 - b));
        let want = (a * c).powi(2) + b * a * c + c + p * p + p * s + c;
        let (y, g) = resized::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        assert!((resized(&x) - want).abs() < 1e-12);
        let dg = [
            2.0 * a * c * c + b * c + 2.0 * p * b + b * s + p * (1.0 - b),
            a * c + 2.0 * p * a + a * s - p * a,
            2.0 * a * a * c + a * b + 2.0,
        ];
        crate::common::close_to("resized", &g, &dg, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(cursor_in_right_side, [0.7, 1.2, -0.5, 0.9]);
        all_orders!(resized, [0.7, 0.4, 0.5]);
    }
}

/// Closures, accessors and casts as everyday code writes them.
mod closures_accessors_and_casts {
    use mochi::prelude::*;

    /// The chain's closure reads the loop's integer `k`, which hides a float `k`.
    #[differentiable]
    pub fn closure_reads_loop_integer(x: &[f64]) -> f64 {
        let k = x[0];
        let mut s = 0.0;
        for k in 1..3 {
            s += x.iter().map(|v| v * k as f64).sum::<f64>() * x[k];
        }
        let t: f64 = x.iter().map(|v| v * k).sum();
        s * k + t
    }

    /// An `FnMut` closure dropped to end its borrow before the capture is read.
    #[differentiable]
    #[allow(clippy::drop_non_drop)]
    pub fn dropped_fnmut(x: &[f64]) -> f64 {
        let mut acc = x[2];
        let mut add = |v: f64| acc += v * v;
        add(x[0]);
        add(x[1]);
        drop(add);
        let mut n = 0.0;
        let mut bump = |v: f64| {
            n += v.sin();
        };
        bump(x[3]);
        std::mem::drop(bump);
        acc * x[0] + n
    }

    /// Elements held by name through `last_mut`, `first_mut`, `get_mut`.
    #[differentiable]
    pub fn held_elements(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let l = v.last_mut().unwrap();
        *l = *l * *l + x[0];
        let h = v.first_mut().unwrap();
        *h *= x[1];
        let m = v.get_mut(1).expect("four elements");
        *m += x[2] * 0.5;
        let mut w = vec![x[0]];
        for i in 1..x.len() {
            w.push(x[i] * 2.0);
            let e = w.last_mut().unwrap();
            *e += x[i - 1] * x[i];
        }
        v[0] + v[3] * v[1] + w.iter().map(|t| t * t).sum::<f64>()
    }

    /// Casts of a float to a narrow integer, then to an index.
    #[differentiable]
    pub fn narrow_casts(x: &[f64]) -> f64 {
        let n = x.len();
        let j = (x[0] * 1000.0) as u8 as usize % n;
        let i = ((x[1] * 3.0).floor() as i64).rem_euclid(n as i64) as usize;
        x[j] * x[1] + x[i].sin() * (j as u32 as f64)
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Grid {
        pub v: Vec<f64>,
    }

    #[differentiable]
    impl Grid {
        pub fn blend(&mut self, w: &[f64], r: f64) {
            for i in 0..self.v.len() {
                self.v[i] = self.v[i] * r + w[i];
            }
        }
    }

    /// A `&mut self` method given a copy of its receiver's field.
    #[differentiable]
    pub fn blended_with_own_copy(x: &[f64]) -> f64 {
        let mut g = Grid { v: x[..3].to_vec() };
        g.blend(&g.v.clone(), x[3]);
        g.v.iter().map(|t| t * t).sum()
    }

    #[test]
    fn by_hand() {
        // S = Σx: f = (S·x₁ + 2S·x₂)·x₀ + x₀S.
        let x = [0.3_f64, 1.2, -0.7, 0.9];
        let s: f64 = x.iter().sum();
        let want = (s * x[1] + 2.0 * s * x[2]) * x[0] + x[0] * s;
        let (y, g) = closure_reads_loop_integer::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let q = x[1] + 2.0 * x[2] + 1.0;
        let mut dg: Vec<f64> = vec![x[0] * q; 4];
        dg[0] += s * q;
        dg[1] += x[0] * s;
        dg[2] += 2.0 * x[0] * s;
        crate::common::close_to("closure_reads_loop_integer", &g, &dg, 1e-12);
        // f = (x₂ + x₀² + x₁²)·x₀ + sin x₃
        let (y, g) = dropped_fnmut::value_and_gradient(&x);
        let acc = x[2] + x[0] * x[0] + x[1] * x[1];
        assert!((y - (acc * x[0] + x[3].sin())).abs() < 1e-12);
        let dg = [acc + 2.0 * x[0] * x[0], 2.0 * x[1] * x[0], x[0], x[3].cos()];
        crate::common::close_to("dropped_fnmut", &g, &dg, 1e-12);
        // (1 + 2·(1 + 1) + ...)·g = 2·g: blend doubles v by r = x₃ and adds v.
        let (y, g) = blended_with_own_copy::value_and_gradient(&x);
        let r = x[3];
        let want: f64 = x[..3].iter().map(|v| (v * (r + 1.0)).powi(2)).sum();
        assert!((y - want).abs() < 1e-12);
        let sq: f64 = x[..3].iter().map(|v| v * v).sum();
        let mut dg: Vec<f64> = x[..3].iter().map(|v| 2.0 * v * (r + 1.0).powi(2)).collect();
        dg.push(2.0 * (r + 1.0) * sq);
        crate::common::close_to("blended_with_own_copy", &g, &dg, 1e-12);
        let y = held_elements::value_and_gradient(&x).0;
        assert!((y - held_elements(&x)).abs() < 1e-12);
        let y = narrow_casts::value_and_gradient(&x).0;
        assert!((y - narrow_casts(&x)).abs() < 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(closure_reads_loop_integer, [0.3, 1.2, -0.7, 0.9]);
        all_orders!(dropped_fnmut, [0.3, 1.2, -0.7, 0.9]);
        all_orders!(held_elements, [0.3, 1.2, -0.7, 0.9]);
        all_orders!(narrow_casts, [0.3, 1.2, -0.7, 0.9]);
    }
}

/// Forms of code ported from other projects' AD test suites: float-trait methods by path,
/// `f64::from` of a `bool`, an `Option` field read by reference.
mod ported_forms {
    use mochi::num_traits::Float;
    use mochi::prelude::*;

    #[differentiable]
    pub fn float_paths(x: &[f64]) -> f64 {
        Float::exp(-x[0] * x[1] / 2.0) + mochi::num_traits::Float::powi(x[1], 3) + f64::sin(x[0])
    }

    #[differentiable]
    #[allow(clippy::needless_late_init, clippy::needless_bool_assign)]
    pub fn from_flag(x: &[f64]) -> f64 {
        let a;
        if x[0] > 0.0 {
            a = true;
        } else {
            a = false;
        }
        let k = 3u32;
        f64::from(a).cos() + x[0] * x[0] * f64::from(k) + x[1]
    }

    #[derive(Clone, Tangent)]
    pub struct Partial {
        pub a: f64,
        pub b: Option<Vec<f64>>,
    }

    #[differentiable]
    pub fn optional_field(x: &[f64]) -> f64 {
        let t = Partial {
            a: x[1],
            b: Some(x[2..].to_vec()),
        };
        let u = Partial { a: x[0], b: None };
        let tb = if let Some(b) = &t.b {
            b.iter().sum::<f64>()
        } else {
            0.0
        };
        let ub = if let Some(b) = &u.b { b[0] } else { u.a * 2.0 };
        t.a * tb + ub
    }

    #[test]
    fn by_hand() {
        let x = [0.3_f64, 1.2, -0.7, 0.9];
        let e = (-x[0] * x[1] / 2.0).exp();
        let (y, g) = float_paths::value_and_gradient(&x);
        assert!((y - (e + x[1].powi(3) + x[0].sin())).abs() < 1e-12);
        let dg = [
            -x[1] / 2.0 * e + x[0].cos(),
            -x[0] / 2.0 * e + 3.0 * x[1] * x[1],
            0.0,
            0.0,
        ];
        crate::common::close_to("float_paths", &g, &dg, 1e-12);
        let (y, g) = from_flag::value_and_gradient(&x);
        assert!((y - (1.0_f64.cos() + 3.0 * x[0] * x[0] + x[1])).abs() < 1e-12);
        crate::common::close_to("from_flag", &g, &[6.0 * x[0], 1.0, 0.0, 0.0], 1e-12);
        // f = x₁(x₂ + x₃) + 2x₀
        let (y, g) = optional_field::value_and_gradient(&x);
        assert!((y - (x[1] * (x[2] + x[3]) + 2.0 * x[0])).abs() < 1e-12);
        crate::common::close_to("optional_field", &g, &[2.0, x[2] + x[3], x[1], x[1]], 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(float_paths, [0.3, 1.2, -0.7, 0.9]);
        all_orders!(from_flag, [0.3, 1.2, -0.7, 0.9]);
    }
}

/// The generic form (the Hessian's) of code that names its arrays by an alias and makes
/// cell indices by rounding floats. Before 2026-12-07 each was a type error in the generic
/// form, which failed the function whether or not a Hessian was asked for.
mod aliases_and_rounded_cells {
    use mochi::prelude::*;

    pub type M2 = [[f64; 2]; 2];
    const CELL: f64 = 0.5;

    #[differentiable(higher_order)]
    pub fn mm(a: &M2, b: &M2) -> M2 {
        let mut c = [[0.0; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
            }
        }
        c
    }

    /// Powers of a 2×2 matrix kept in a `Vec<M2>`.
    #[differentiable]
    pub fn kept_powers(x: &[f64]) -> f64 {
        let a: M2 = [[x[0], x[1]], [x[2], x[3]]];
        let mut ps: Vec<M2> = Vec::new();
        let mut p = a;
        for _ in 0..3 {
            ps.push(p);
            p = mm(&p, &a);
        }
        let mut s = ps[2][0][1];
        for q in ps.iter() {
            s += q[0][0] + q[1][1];
        }
        s
    }

    /// Weights chosen by the cell a point falls in (`(p / CELL).floor() as i64`).
    #[differentiable]
    pub fn cell_weights(x: &[f64]) -> f64 {
        let pts: Vec<[f64; 2]> = vec![[x[0], x[1]], [x[2], x[3]]];
        let cells: Vec<(i64, i64)> = pts
            .iter()
            .map(|p| ((p[0] / CELL).floor() as i64, (p[1] / CELL).floor() as i64))
            .collect();
        let mut s = 0.0;
        for k in 0..pts.len() {
            let w = (cells[k].0 + 2 * cells[k].1) as f64;
            s += w * pts[k][0] * pts[k][1];
        }
        s
    }

    #[test]
    fn by_hand() {
        let x = [0.3_f64, 1.2, -0.7, 0.9];
        // cells: (0, 2) and (−2, 1): weights 4 and 0.
        let (y, g) = cell_weights::value_and_gradient(&x);
        assert!((y - 4.0 * x[0] * x[1]).abs() < 1e-12);
        crate::common::close_to(
            "cell_weights",
            &g,
            &[4.0 * x[1], 4.0 * x[0], 0.0, 0.0],
            1e-12,
        );
        let (y, _) = kept_powers::value_and_gradient(&x);
        assert!((y - kept_powers(&x)).abs() < 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(kept_powers, [0.3, 1.2, -0.7, 0.9]);
        all_orders!(cell_weights, [0.3, 1.2, -0.7, 0.9]);
    }
}

/// Element loops over matrices held by locals (whose type the macro cannot see): `for v
/// in m.iter()`, `.enumerate()`, `.zip(..)`, `for v in m.iter_mut()` and chains written
/// on `m.t()`, in logical order. Before: "a `for` loop or iterator chain over
/// `Array2<f64>` is differentiated element by element over a sequence read by one
/// index", refused at the loop, and "no rule for `iter`" on `m.t()`.
mod matrix_element_loops {
    use mochi::prelude::*;
    use ndarray::{Array1, Array2};

    #[differentiable]
    pub fn weighted_by_position(x: &[f64]) -> f64 {
        let m = Array2::from_shape_vec((2, 3), x.to_vec()).unwrap();
        let mut s = 0.0;
        for (i, v) in m.iter().enumerate() {
            s += v * v * (i as f64 + 1.0);
        }
        s
    }

    /// The transpose walked in its own order: element `k` of `m.t()` is `m[k % 2][k / 2]`.
    #[differentiable]
    pub fn transposed_walks(x: &[f64]) -> f64 {
        let m = Array2::from_shape_vec((2, 3), x.to_vec()).unwrap();
        let w = [1.0, -2.0, 0.5, 3.0, 0.25, 1.5];
        let mut s = 0.0;
        for (a, b) in m.t().iter().zip(w.iter()) {
            s += a * a * b;
        }
        let c: f64 = m.t().iter().enumerate().map(|(k, v)| v * k as f64).sum();
        s + c * c
    }

    /// Written in place twice, then read by index and summed.
    #[allow(clippy::assign_op_pattern)]
    #[differentiable]
    pub fn written_in_place(x: &[f64]) -> f64 {
        let mut m = Array2::from_shape_vec((2, 3), x.to_vec()).unwrap();
        for v in m.iter_mut() {
            *v = v.exp() * *v;
        }
        let mut k = 1.0;
        for v in m.iter_mut() {
            *v *= k;
            k += 0.5;
        }
        m[[1, 2]] * m[[0, 1]] + m.sum()
    }

    #[differentiable]
    pub fn written_by_position(x: &[f64]) -> f64 {
        let mut m = Array2::from_shape_vec((3, 2), x.to_vec()).unwrap();
        for (i, v) in m.iter_mut().enumerate() {
            *v = v.sin() + i as f64 * *v;
        }
        m.t().dot(&m).sum()
    }

    /// A vector local (`Array1`) walked and written the same way.
    #[differentiable]
    pub fn vector_local(x: &[f64]) -> f64 {
        let a = Array1::from(x.to_vec());
        let mut b = a.mapv(|v| v * v);
        for v in b.iter_mut() {
            *v += 1.0;
        }
        let mut s = 0.0;
        for v in b.iter() {
            s += v.ln();
        }
        s
    }

    const X: [f64; 6] = [0.3, 1.2, -0.7, 0.9, 0.4, 1.5];

    #[test]
    fn by_hand() {
        let x = X;
        // m is row-major: logical order is x's own.
        let (y, g) = weighted_by_position::value_and_gradient(&x);
        let want: f64 = (0..6).map(|i| x[i] * x[i] * (i as f64 + 1.0)).sum();
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let gw: Vec<f64> = (0..6).map(|i| 2.0 * x[i] * (i as f64 + 1.0)).collect();
        crate::common::close_to("weighted_by_position", &g, &gw, 1e-12);

        // m.t() visits m[0][0], m[1][0], m[0][1], m[1][1], m[0][2], m[1][2]: x[0], x[3],
        // x[1], x[4], x[2], x[5].
        let order = [0, 3, 1, 4, 2, 5];
        let w = [1.0, -2.0, 0.5, 3.0, 0.25, 1.5];
        let c: f64 = (0..6).map(|k| x[order[k]] * k as f64).sum();
        let want: f64 = (0..6)
            .map(|k| x[order[k]] * x[order[k]] * w[k])
            .sum::<f64>()
            + c * c;
        let (y, g) = transposed_walks::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let mut gw = [0.0; 6];
        for k in 0..6 {
            gw[order[k]] = 2.0 * x[order[k]] * w[k] + 2.0 * c * k as f64;
        }
        crate::common::close_to("transposed_walks", &g, &gw, 1e-12);

        // written_in_place: u_k = x_k e^{x_k} (1 + k/2); y = u_5 u_1 + Σ u_k.
        let u: Vec<f64> = (0..6)
            .map(|k| x[k] * x[k].exp() * (1.0 + 0.5 * k as f64))
            .collect();
        let du: Vec<f64> = (0..6)
            .map(|k| (1.0 + x[k]) * x[k].exp() * (1.0 + 0.5 * k as f64))
            .collect();
        let (y, g) = written_in_place::value_and_gradient(&x);
        let want = u[5] * u[1] + u.iter().sum::<f64>();
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let mut gw = du.clone();
        gw[5] += u[1] * du[5];
        gw[1] += u[5] * du[1];
        crate::common::close_to("written_in_place", &g, &gw, 1e-12);

        let (y, g) = vector_local::value_and_gradient(&x);
        let want: f64 = x.iter().map(|v| (v * v + 1.0).ln()).sum();
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        let gw: Vec<f64> = x.iter().map(|v| 2.0 * v / (v * v + 1.0)).collect();
        crate::common::close_to("vector_local", &g, &gw, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(weighted_by_position, super::X);
        all_orders!(transposed_walks, super::X);
        all_orders!(written_in_place, super::X);
        all_orders!(written_by_position, super::X);
        all_orders!(vector_local, super::X);
    }
}

/// A median by `select_nth_unstable_by` (before 2026-12-07, "no rule for
/// `select_nth_unstable_by`"), read at its position and through the halves it leaves;
/// a `while` whose condition reads `*v.last().unwrap()` (before, "type `f64` cannot be
/// dereferenced" at the condition).
mod selections_and_last {
    use mochi::prelude::*;

    #[differentiable]
    pub fn median_and_halves(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|t| t * t + 0.5 * t).collect();
        let k = v.len() / 2;
        v.select_nth_unstable_by(k, |a, b| a.partial_cmp(b).unwrap());
        let below: f64 = v[..k].iter().sum();
        let above: f64 = v[k + 1..].iter().map(|t| t * t).sum();
        v[k] * 3.0 + below * above
    }

    #[differentiable]
    pub fn grow_until_last(x: &[f64]) -> f64 {
        let mut v = vec![x[0], x[1]];
        while *v.last().unwrap() < 4.0 && v.len() < 12 {
            let n = v.len();
            let next = v[n - 1] * x[2] + v[n - 2] * x[3];
            v.push(next);
        }
        v.iter().sum::<f64>() / v.len() as f64 + *v.first().unwrap()
    }

    const X5: [f64; 5] = [0.9, -0.3, 1.4, 0.2, -1.1];
    const XG: [f64; 4] = [0.5, 1.0, 1.5, 0.8];

    #[test]
    fn by_hand() {
        let x = X5;
        // u = t² + t/2: [1.26, -0.06, 2.66, 0.14, 0.66]; sorted -0.06, 0.14, 0.66, 1.26,
        // 2.66 (gaps ≥ 0.2): the median is u₄ (x = -1.1), below {u₁, u₃}, above {u₀, u₂}.
        let u: Vec<f64> = x.iter().map(|t| t * t + 0.5 * t).collect();
        let du: Vec<f64> = x.iter().map(|t| 2.0 * t + 0.5).collect();
        let (b, a) = (u[1] + u[3], u[0] * u[0] + u[2] * u[2]);
        let (y, g) = median_and_halves::value_and_gradient(&x);
        assert!((y - (3.0 * u[4] + b * a)).abs() < 1e-12, "{y}");
        let want = [
            b * 2.0 * u[0] * du[0],
            a * du[1],
            b * 2.0 * u[2] * du[2],
            a * du[3],
            3.0 * du[4],
        ];
        crate::common::close_to("median_and_halves", &g, &want, 1e-12);

        // v = [0.5, 1.0, 1.9, 3.65, 6.995]: the loop stops when the last passes 4.
        let (y, _) = grow_until_last::value_and_gradient(&XG);
        let v = [0.5, 1.0, 1.9, 3.65, 6.995];
        assert!(
            (y - (v.iter().sum::<f64>() / 5.0 + 0.5)).abs() < 1e-12,
            "{y}"
        );
        assert!((y - grow_until_last(&XG)).abs() < 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(median_and_halves, super::X5);
        all_orders!(grow_until_last, super::XG);
    }
}

/// A constant table held by a local borrow and walked in batches (`let data: &[[f64;
/// 3]] = &DATA; for batch in data.chunks(2) { for row in batch { .. } }`), the closest
/// neighbours by `zip(x.iter().skip(1)).min_by(..)`, and a chain through `f32`. Before
/// 2026-12-07: E0716 "temporary value dropped while borrowed" at the attribute (the
/// generic form's copy of the constant is a local, which the replayed loops borrowed),
/// "no rule for `iter`" with `skip`, and "no rule for `as f32`" in the generic form,
/// which failed the whole function.
mod constant_aliases_and_neighbours {
    use mochi::prelude::*;

    pub const DATA: [[f64; 3]; 5] = [
        [0.5, 1.2, 1.0],
        [-0.3, 0.8, 0.0],
        [1.5, -0.4, 1.0],
        [-1.1, -0.7, 0.0],
        [0.2, 0.1, 1.0],
    ];

    /// Two epochs of batch gradient steps of a linear fit, then the squared loss.
    #[differentiable]
    pub fn batch_steps(x: &[f64]) -> f64 {
        let (mut w0, mut w1) = (x[0], x[1]);
        let lr = x[2];
        let data: &[[f64; 3]] = &DATA;
        for _ in 0..2 {
            for batch in data.chunks(2) {
                let (mut g0, mut g1) = (0.0, 0.0);
                for row in batch {
                    let r = w0 * row[0] + w1 * row[1] - row[2];
                    g0 += r * row[0];
                    g1 += r * row[1];
                }
                w0 -= lr * g0;
                w1 -= lr * g1;
            }
        }
        let mut loss = 0.0;
        for row in data {
            loss += (w0 * row[0] + w1 * row[1] - row[2]).powi(2);
        }
        loss
    }

    /// The pair of neighbours closest together.
    #[differentiable]
    pub fn closest_pair(x: &[f64]) -> f64 {
        let (a, b) = x
            .iter()
            .zip(x.iter().skip(1))
            .min_by(|p, q| (p.1 - p.0).abs().total_cmp(&(q.1 - q.0).abs()))
            .unwrap();
        a * b + (b - a).sin()
    }

    /// Squares taken through `f32` (a gradient only: the generic form holds one float).
    #[differentiable]
    pub fn through_f32(x: &[f64]) -> f64 {
        x.iter()
            .map(|v| *v as f32 as f64)
            .map(|v| v * v)
            .sum::<f64>()
    }

    const X: [f64; 3] = [0.4, -0.3, 0.2];
    const XC: [f64; 5] = [0.7, -0.4, 1.3, 1.1, -0.9];

    /// The same steps written over the constant by index, by hand.
    fn batch_steps_by_index(x: &[f64]) -> f64 {
        let (mut w0, mut w1) = (x[0], x[1]);
        for _ in 0..2 {
            for start in (0..5).step_by(2) {
                let (mut g0, mut g1) = (0.0, 0.0);
                for row in &DATA[start..(start + 2).min(5)] {
                    let r = w0 * row[0] + w1 * row[1] - row[2];
                    g0 += r * row[0];
                    g1 += r * row[1];
                }
                w0 -= x[2] * g0;
                w1 -= x[2] * g1;
            }
        }
        DATA.iter()
            .map(|row| (w0 * row[0] + w1 * row[1] - row[2]).powi(2))
            .sum()
    }

    #[test]
    fn by_hand() {
        let (y, g) = batch_steps::value_and_gradient(&X);
        assert!((y - batch_steps_by_index(&X)).abs() < 1e-12, "{y}");
        crate::common::assert_gradient_matches(batch_steps_by_index, &g, &X);

        // Gaps |x₁ − x₀| = 1.1, 1.7, 0.2, 2.0: the pair (x₂, x₃) = (1.3, 1.1).
        let (y, g) = closest_pair::value_and_gradient(&XC);
        let (a, b) = (XC[2], XC[3]);
        assert!((y - (a * b + (b - a).sin())).abs() < 1e-12, "{y}");
        let c = (b - a).cos();
        crate::common::close_to("closest_pair", &g, &[0.0, 0.0, b - c, a + c, 0.0], 1e-12);

        let (y, g) = through_f32::value_and_gradient(&XC);
        let r: Vec<f64> = XC.iter().map(|v| *v as f32 as f64).collect();
        assert_eq!(y, r.iter().map(|v| v * v).sum::<f64>());
        let want: Vec<f64> = r.iter().map(|v| 2.0 * v).collect();
        crate::common::close_to("through_f32", &g, &want, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(batch_steps, super::X);
        all_orders!(closest_pair, super::XC);
    }
}

/// Configuration read by the `cfg!` macro (a `bool` the compiler fills in): the way a
/// differentiable function configures its code (`#[cfg(..)]` on a statement is refused,
/// `ui/cfg_on_statement.rs`). Before 2026-12-07 the generic form refused `cfg!`, so the
/// function had no Hessian.
mod configured_by_cfg_macro {
    use mochi::prelude::*;

    #[differentiable]
    pub fn configured(x: &[f64]) -> f64 {
        let mut s = x[0] * x[1];
        if cfg!(any()) {
            s += 100.0 * x[2];
        }
        if cfg!(all()) {
            s += x[2].sin();
        } else {
            s *= 100.0;
        }
        s * s
    }

    const X: [f64; 3] = [0.4, 0.9, 1.1];

    #[test]
    fn by_hand() {
        let x = X;
        let s = x[0] * x[1] + x[2].sin();
        let (y, g) = configured::value_and_gradient(&x);
        assert!((y - s * s).abs() < 1e-12, "{y}");
        let want = [2.0 * s * x[1], 2.0 * s * x[0], 2.0 * s * x[2].cos()];
        crate::common::close_to("configured", &g, &want, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(configured, super::X);
    }
}

/// ode_solvers' shape: a system given by reference whose method writes the derivative
/// into a buffer (`sys.system(t, y, &mut k1)`, RK4 stages), and a coefficient table
/// `const C: &[f64] = &[..]` passed to a marked helper taking a slice. Before
/// 2026-12-07: "`&mut` of a differentiable value is supported only as an argument of a
/// function call" at the call (the receiver, bound first for the evaluation order, was
/// no longer seen as one), and "expected `&[__MochiT]`, found `Vec<__MochiT>`" in the
/// generic form, which failed the function.
mod systems_and_coefficient_tables {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct VanDerPol {
        pub mu: f64,
    }

    #[differentiable(higher_order)]
    impl VanDerPol {
        pub fn system(&self, _t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = y[1];
            dy[1] = self.mu * (1.0 - y[0] * y[0]) * y[1] - y[0];
        }
    }

    /// One RK4 step.
    #[differentiable(higher_order)]
    pub fn rk4_step(sys: &VanDerPol, y: &[f64], h: f64) -> Vec<f64> {
        let n = y.len();
        let (mut k1, mut k2, mut k3, mut k4) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        sys.system(0.0, y, &mut k1);
        let y2: Vec<f64> = (0..n).map(|i| y[i] + 0.5 * h * k1[i]).collect();
        sys.system(0.5 * h, &y2, &mut k2);
        let y3: Vec<f64> = (0..n).map(|i| y[i] + 0.5 * h * k2[i]).collect();
        sys.system(0.5 * h, &y3, &mut k3);
        let y4: Vec<f64> = (0..n).map(|i| y[i] + h * k3[i]).collect();
        sys.system(h, &y4, &mut k4);
        (0..n)
            .map(|i| y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
            .collect()
    }

    #[differentiable(higher_order)]
    pub fn integrated(x: &[f64]) -> f64 {
        let sys = VanDerPol { mu: x[2] };
        let mut y = vec![x[0], x[1]];
        for _ in 0..3 {
            y = rk4_step(&sys, &y, 0.1);
        }
        y[0] * y[0] + y[1]
    }

    const COEFFS: &[f64] = &[1.0, -0.5, 0.25, 0.125];

    #[differentiable]
    pub fn horner(z: f64, coeff: &[f64]) -> f64 {
        let mut s = 0.0;
        for c in coeff.iter().rev() {
            s = s * z + c;
        }
        s
    }

    #[differentiable]
    pub fn tables(x: &[f64]) -> f64 {
        horner(x[0], COEFFS) * horner(x[1], &COEFFS[1..]) + COEFFS[3] * x[2]
    }

    const X: [f64; 3] = [0.6, -0.4, 1.3];

    /// The same step written out with the system's formula, by hand.
    fn integrated_by_hand(x: &[f64]) -> f64 {
        let f = |y: [f64; 2]| [y[1], x[2] * (1.0 - y[0] * y[0]) * y[1] - y[0]];
        let mut y = [x[0], x[1]];
        let h = 0.1;
        for _ in 0..3 {
            let k1 = f(y);
            let k2 = f([y[0] + 0.5 * h * k1[0], y[1] + 0.5 * h * k1[1]]);
            let k3 = f([y[0] + 0.5 * h * k2[0], y[1] + 0.5 * h * k2[1]]);
            let k4 = f([y[0] + h * k3[0], y[1] + h * k3[1]]);
            for i in 0..2 {
                y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
        }
        y[0] * y[0] + y[1]
    }

    #[test]
    fn by_hand() {
        let (y, g) = integrated::value_and_gradient(&X);
        assert!((y - integrated_by_hand(&X)).abs() < 1e-12, "{y}");
        crate::common::assert_gradient_matches(integrated_by_hand, &g, &X);

        // horner(z, c) = 1 − z/2 + z²/4 + z³/8; of c[1..]: −1/2 + z/4 + z²/8.
        let (p, q) = (
            1.0 - X[0] / 2.0 + X[0].powi(2) / 4.0 + X[0].powi(3) / 8.0,
            -0.5 + X[1] / 4.0 + X[1].powi(2) / 8.0,
        );
        let (dp, dq) = (
            -0.5 + X[0] / 2.0 + 3.0 * X[0].powi(2) / 8.0,
            0.25 + X[1] / 4.0,
        );
        let (y, g) = tables::value_and_gradient(&X);
        assert!((y - (p * q + 0.125 * X[2])).abs() < 1e-12, "{y}");
        crate::common::close_to("tables", &g, &[dp * q, p * dq, 0.125], 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(integrated, super::X);
        all_orders!(tables, super::X);
    }
}

/// A chain whose closure hands its element to code of the user's: a constant table of
/// counts (`u64`) mapped through a method of a marked struct (`|&k| p.ln_pmf(k)`, statrs'
/// shape), and a float sequence mapped through a marked helper. Before 2026-12-07: "no
/// rule for `x.iter().map(f).sum()` with arguments `(&[u64; 4], ..)`" (the sequence
/// rules hold floats; the chain is an index loop now).
mod chains_handing_elements_on {
    use mochi::prelude::*;

    const COUNTS: [u64; 4] = [2, 0, 3, 1];

    fn ln_factorial(k: u64) -> f64 {
        (1..=k).map(|i| (i as f64).ln()).sum()
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Poisson {
        pub lambda: f64,
    }

    #[differentiable(higher_order)]
    impl Poisson {
        pub fn ln_pmf(&self, k: u64) -> f64 {
            k as f64 * self.lambda.ln() - self.lambda - ln_factorial(k)
        }
    }

    #[differentiable(higher_order)]
    pub fn cube(v: f64) -> f64 {
        v * v * v
    }

    #[differentiable(higher_order)]
    pub fn counts_loglik(x: &[f64]) -> f64 {
        let p = Poisson {
            lambda: x[0] * x[0],
        };
        let by_sum: f64 = COUNTS.iter().map(|&k| p.ln_pmf(k)).sum();
        let by_fold = COUNTS.iter().fold(0.0, |acc, k| acc + 0.5 * p.ln_pmf(*k));
        by_sum + by_fold + x.iter().map(|v| cube(*v)).sum::<f64>()
    }

    const X: [f64; 2] = [1.3, -0.4];

    #[test]
    fn by_hand() {
        let x = X;
        let lam = x[0] * x[0];
        let total: f64 = COUNTS.iter().map(|&k| k as f64).sum();
        let ll: f64 = COUNTS
            .iter()
            .map(|&k| k as f64 * lam.ln() - lam - ln_factorial(k))
            .sum();
        let (y, g) = counts_loglik::value_and_gradient(&x);
        let want_y = 1.5 * ll + x[0].powi(3) + x[1].powi(3);
        assert!((y - want_y).abs() < 1e-12, "{y} against {want_y}");
        // d/dλ of the log likelihood is Σk/λ − n; λ = x₀², so times 2x₀.
        let dl = 1.5 * (total / lam - COUNTS.len() as f64) * 2.0 * x[0];
        let want = [dl + 3.0 * x[0] * x[0], 3.0 * x[1] * x[1]];
        crate::common::close_to("counts_loglik", &g, &want, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(counts_loglik, super::X);
    }
}

/// Builder chains of methods taking `mut self` and returning `Self`, under
/// `higher_order`: on a local (`base.with_decay(p[1]).with_warm(2.0 * p[2])`), on a
/// struct literal, and on a clone of a configuration of constants. Before 2026-12-07:
/// "`&__MochiTwinSched<__MochiT>: Receive<&Sched>` is not satisfied" in the generic
/// form (a chain's result was not known to be the struct), and "no rule for
/// `with_warm` with arguments `(&Sched, &__MochiT)`" for the configuration.
mod builder_chains {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Sched {
        pub rate: f64,
        pub decay: f64,
        pub warm: f64,
    }

    #[differentiable(higher_order)]
    impl Sched {
        pub fn with_decay(mut self, d: f64) -> Self {
            self.decay = d;
            self
        }
        pub fn with_warm(mut self, w: f64) -> Self {
            self.warm = w;
            self
        }
        pub fn at(&self, t: f64) -> f64 {
            self.rate * (-self.decay * t).exp() * (1.0 - (-t / self.warm).exp())
        }
    }

    #[differentiable(higher_order)]
    pub fn on_local(p: &[f64]) -> f64 {
        let base = Sched {
            rate: p[0],
            decay: 0.1,
            warm: 1.0,
        };
        let s = base.with_decay(p[1]).with_warm(2.0 * p[2]);
        s.at(3.0)
    }

    #[differentiable(higher_order)]
    pub fn on_literal(p: &[f64]) -> f64 {
        let s = Sched {
            rate: p[0],
            decay: 0.1,
            warm: 1.0,
        }
        .with_decay(p[1] * p[1])
        .with_warm(2.0 * p[2])
        .with_decay(p[1]);
        s.at(3.0) * s.at(0.5)
    }

    #[differentiable(higher_order)]
    pub fn on_constants(p: &[f64]) -> f64 {
        let base = Sched {
            rate: 1.5,
            decay: 0.1,
            warm: 1.0,
        };
        let t = base.clone().with_warm(p[0]).with_decay(0.5 * p[2]);
        t.at(1.5) * p[1] + base.at(2.0)
    }

    /// `rate·e^{−d t}·(1 − e^{−t/w})` and its partial derivatives in (rate, d, w).
    fn at(rate: f64, d: f64, w: f64, t: f64) -> (f64, [f64; 3]) {
        let (e, u) = ((-d * t).exp(), (-t / w).exp());
        let v = rate * e * (1.0 - u);
        (v, [e * (1.0 - u), -t * v, -rate * e * u * t / (w * w)])
    }

    const X: [f64; 3] = [0.7, 0.3, 1.4];

    #[test]
    fn by_hand() {
        let p = X;
        let (v, d) = at(p[0], p[1], 2.0 * p[2], 3.0);
        let (y, g) = on_local::value_and_gradient(&p);
        assert!((y - v).abs() < 1e-12, "{y} against {v}");
        crate::common::close_to("on_local", &g, &[d[0], d[1], 2.0 * d[2]], 1e-12);

        let (a, da) = at(p[0], p[1], 2.0 * p[2], 3.0);
        let (b, db) = at(p[0], p[1], 2.0 * p[2], 0.5);
        let (y, g) = on_literal::value_and_gradient(&p);
        assert!((y - a * b).abs() < 1e-12, "{y} against {}", a * b);
        let want: Vec<f64> = (0..3)
            .map(|k| {
                let s = if k == 2 { 2.0 } else { 1.0 };
                s * (da[k] * b + a * db[k])
            })
            .collect();
        crate::common::close_to("on_literal", &g, &want, 1e-12);

        let (t, dt) = at(1.5, 0.5 * p[2], p[0], 1.5);
        let (c, _) = at(1.5, 0.1, 1.0, 2.0);
        let (y, g) = on_constants::value_and_gradient(&p);
        assert!((y - (t * p[1] + c)).abs() < 1e-12, "{y}");
        let want = [dt[2] * p[1], t, 0.5 * dt[1] * p[1]];
        crate::common::close_to("on_constants", &g, &want, 1e-12);
    }

    mod t {
        use crate::all_orders;
        all_orders!(on_local, super::X);
        all_orders!(on_literal, super::X);
        all_orders!(on_constants, super::X);
    }
}

/// `scan` with a tuple state taken apart in the closure's pattern, `|(s1, s2), &v|`: a
/// biquad filter in transposed direct form II, and a pair of running values. Before
/// 2026-12-07: "this iterator chain (`.scan(..)` ..) is not one the derivation writes as
/// a loop" (the state had to be one name).
mod scan_tuple_states {
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    pub fn biquad_energy(x: &[f64]) -> f64 {
        let (b0, b1, b2, a1, a2) = (x[0], x[1], x[2], x[3], x[4]);
        x[5..]
            .iter()
            .scan((0.0_f64, 0.0_f64), |(s1, s2), &v| {
                let out = *s1 + b0 * v;
                *s1 = *s2 + b1 * v - a1 * out;
                *s2 = b2 * v - a2 * out;
                Some(out)
            })
            .map(|y| y * y)
            .sum()
    }

    #[differentiable(higher_order)]
    pub fn running_pair(x: &[f64]) -> f64 {
        let init = (x[0], 0.0);
        let v: Vec<f64> = x[1..]
            .iter()
            .scan(init, |(m, n), v| {
                *m = 0.5 * *m + 0.5 * v;
                *n += 1.0;
                Some(*m * m.sin() / *n)
            })
            .collect();
        v.iter().sum()
    }

    const X: [f64; 8] = [0.5, 0.2, -0.1, 0.3, 0.1, 1.0, -0.5, 0.7];

    #[test]
    fn by_hand() {
        let x = X;
        // Three samples through the filter, unrolled: y₀ = b0·u₀; y₁ = b0·u₁ + s1₀;
        // y₂ = b0·u₂ + s1₁, the states as the recursion writes them.
        let (b0, b1, b2, a1, a2) = (x[0], x[1], x[2], x[3], x[4]);
        let u = &x[5..];
        let y0 = b0 * u[0];
        let (s1, s2) = (b1 * u[0] - a1 * y0, b2 * u[0] - a2 * y0);
        let y1 = s1 + b0 * u[1];
        let s1b = s2 + b1 * u[1] - a1 * y1;
        let y2 = s1b + b0 * u[2];
        let (y, g) = biquad_energy::value_and_gradient(&x);
        let want = y0 * y0 + y1 * y1 + y2 * y2;
        assert!((y - want).abs() < 1e-14, "{y} against {want}");
        // ∂/∂b2 reaches only y₂ (through s2 of the first sample): ∂y₂/∂b2 = u₀.
        assert!((g[2] - 2.0 * y2 * u[0]).abs() < 1e-13, "{g:?}");

        // The pair: m halves towards each element, n counts.
        let (mut m, mut total, mut dm) = (x[0], 0.0, 1.0);
        let mut d0 = 0.0;
        for (k, v) in x[1..].iter().enumerate() {
            m = 0.5 * m + 0.5 * v;
            dm *= 0.5;
            let n = (k + 1) as f64;
            total += m * m.sin() / n;
            d0 += (m.sin() + m * m.cos()) / n * dm;
        }
        let (y, g) = running_pair::value_and_gradient(&x);
        assert!((y - total).abs() < 1e-14, "{y} against {total}");
        assert!((g[0] - d0).abs() < 1e-13, "{} against {d0}", g[0]);
    }

    mod t {
        use crate::all_orders;
        all_orders!(biquad_energy, super::X);
        all_orders!(running_pair, super::X);
    }
}

/// A method taking `self` by value that calls the type's other methods on `self`, of
/// either kind: `fn scaled(self, s) { let c = self.conj(); .. }` (`conj(&self)`, glam's
/// and nalgebra's `Quat * Vec3` shape) and `fn both(self) { self.eval(t) *
/// self.norm_sq() }` (`norm_sq(self)`). Before 2026-12-07: "expected `&Q2`, found `Q2`"
/// at the call (the derivation passed `self` as it is).
mod by_value_self_calls {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Q2 {
        pub w: f64,
        pub x: f64,
    }

    #[differentiable(higher_order)]
    impl Q2 {
        pub fn conj(&self) -> Q2 {
            Q2 {
                w: self.w,
                x: -self.x,
            }
        }
        pub fn scaled(self, s: f64) -> Q2 {
            let c = self.conj();
            Q2 {
                w: c.w * s,
                x: c.x * s + self.w,
            }
        }
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Poly {
        pub c: Vec<f64>,
    }

    #[differentiable(higher_order)]
    impl Poly {
        pub fn eval(&self, t: f64) -> f64 {
            self.c.iter().rev().fold(0.0, |acc, &a| acc * t + a)
        }
        pub fn norm_sq(self) -> f64 {
            self.c.iter().map(|v| v * v).sum()
        }
        pub fn both(self) -> f64 {
            self.eval(0.5) * self.norm_sq()
        }
    }

    #[differentiable(higher_order)]
    pub fn by_value(x: &[f64]) -> f64 {
        let q = Q2 { w: x[0], x: x[1] }.scaled(x[2]);
        let p = Poly {
            c: vec![x[0], x[1], x[2]],
        };
        q.w * q.x + p.both()
    }

    const X: [f64; 3] = [0.5, 0.2, -0.7];

    #[test]
    fn by_hand() {
        let [a, b, s] = X;
        // q = (a·s, −b·s + a); p(½)·|c|² with p(t) = a + b t + s t².
        let (qw, qx) = (a * s, -b * s + a);
        let (e, n) = (a + 0.5 * b + 0.25 * s, a * a + b * b + s * s);
        let (y, g) = by_value::value_and_gradient(&X);
        let want_y = qw * qx + e * n;
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let want = [
            s * qx + qw + n + e * 2.0 * a,
            -s * qw + 0.5 * n + e * 2.0 * b,
            a * qx - b * qw + 0.25 * n + e * 2.0 * s,
        ];
        crate::common::close_to("by_value", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(by_value, super::X);
    }
}

/// Layers in a `Vec` of structs whose methods are marked one by one (not the `impl`
/// block), walked by `for l in &layers` / `layers.iter()` / `layers.iter_mut()`: the
/// loop variable is a value of the type, so `l.forward(&h)` and `l.shrink(f)` (`&mut
/// self`) are the type's methods. Before 2026-12-07: "no rule for `forward` with
/// arguments `(&Dense, &Vec<f64>)`" (and `Dense is indexed with [..]` after it).
#[allow(clippy::useless_vec)]
mod layers_with_methods_marked_alone {
    use mochi::prelude::*;

    #[derive(Clone, Tangent)]
    pub struct Dense {
        pub w: Vec<f64>,
        pub b: Vec<f64>,
        pub n_in: usize,
        pub n_out: usize,
    }

    impl Dense {
        #[differentiable(higher_order)]
        pub fn forward(&self, inp: &[f64]) -> Vec<f64> {
            let mut out = Vec::with_capacity(self.n_out);
            for o in 0..self.n_out {
                let mut s = self.b[o];
                for i in 0..self.n_in {
                    s += self.w[o * self.n_in + i] * inp[i];
                }
                out.push(s);
            }
            out
        }

        #[differentiable]
        pub fn shrink(&mut self, f: f64) {
            for v in self.w.iter_mut() {
                *v *= f;
            }
        }
    }

    const INPUT: [f64; 3] = [0.5, -0.8, 1.2];

    #[differentiable(higher_order)]
    pub fn two_layers(x: &[f64]) -> f64 {
        let layers = vec![
            Dense {
                w: x[..6].to_vec(),
                b: x[6..8].to_vec(),
                n_in: 3,
                n_out: 2,
            },
            Dense {
                w: x[8..10].to_vec(),
                b: x[10..11].to_vec(),
                n_in: 2,
                n_out: 1,
            },
        ];
        let mut h: Vec<f64> = INPUT.to_vec();
        for l in &layers {
            h = l.forward(&h).iter().map(|v| v.tanh()).collect();
        }
        h[0]
    }

    #[differentiable]
    pub fn shrunk(x: &[f64]) -> f64 {
        let mut layers = vec![Dense {
            w: x[..6].to_vec(),
            b: x[6..8].to_vec(),
            n_in: 3,
            n_out: 2,
        }];
        for l in layers.iter_mut() {
            l.shrink(x[8]);
        }
        let mut s = 0.0;
        for l in layers.iter() {
            s += l.forward(&INPUT).iter().sum::<f64>();
        }
        s
    }

    #[differentiable]
    pub fn given(layers: &[Dense], x0: &[f64]) -> f64 {
        let mut h = x0.to_vec();
        for l in layers.iter() {
            h = l.forward(&h).iter().map(|v| v.tanh()).collect();
        }
        h.iter().map(|v| v * v).sum()
    }

    /// The last layer without `tanh`, told by `enumerate`.
    #[differentiable(higher_order)]
    pub fn enumerated(x: &[f64]) -> f64 {
        let layers = vec![
            Dense {
                w: x[..6].to_vec(),
                b: x[6..8].to_vec(),
                n_in: 3,
                n_out: 2,
            },
            Dense {
                w: x[8..10].to_vec(),
                b: x[10..11].to_vec(),
                n_in: 2,
                n_out: 1,
            },
        ];
        let mut h: Vec<f64> = INPUT.to_vec();
        for (k, l) in layers.iter().enumerate() {
            let z = l.forward(&h);
            h = if k + 1 < layers.len() {
                z.iter().map(|v| v.tanh()).collect()
            } else {
                z
            };
        }
        h[0] * h[0]
    }

    const X: [f64; 11] = [0.4, -0.2, 0.7, 0.1, -0.5, 0.3, 0.05, -0.1, 0.8, -0.6, 0.2];

    #[test]
    fn by_hand() {
        let x = X;
        let tanh_layer = |w: &[f64], b: &[f64], h: &[f64]| -> Vec<f64> {
            b.iter()
                .enumerate()
                .map(|(o, bo)| {
                    (bo + (0..h.len()).map(|i| w[o * h.len() + i] * h[i]).sum::<f64>()).tanh()
                })
                .collect()
        };
        let h1 = tanh_layer(&x[..6], &x[6..8], &INPUT);
        let (y, g) = two_layers::value_and_gradient(&x);
        let out = tanh_layer(&x[8..10], &x[10..11], &h1)[0];
        assert!((y - out).abs() < 1e-14, "{y} against {out}");
        // The last layer's weights: ∂y/∂w₂ₖ = (1 − y²)·h1ₖ, ∂y/∂b₂ = 1 − y².
        let d = 1.0 - out * out;
        crate::common::close_to("two_layers", &g[8..], &[d * h1[0], d * h1[1], d], 1e-13);
        crate::common::assert_gradient_matches(two_layers, &g, &x);

        // shrunk: Σₒ (f·wₒ·u + bₒ), so ∂/∂f = Σₒ wₒ·u.
        let (y, g) = shrunk::value_and_gradient(&x);
        let wu: f64 = (0..2)
            .map(|o| (0..3).map(|i| x[o * 3 + i] * INPUT[i]).sum::<f64>())
            .sum();
        assert!((y - (x[8] * wu + x[6] + x[7])).abs() < 1e-14, "{y}");
        assert!((g[8] - wu).abs() < 1e-14, "{} against {wu}", g[8]);
        crate::common::assert_gradient_matches(shrunk, &g, &x);

        // enumerated: z = w₂·h1 + b₂, y = z², so ∂y/∂b₂ = 2z.
        let z = (0..2).map(|i| x[8 + i] * h1[i]).sum::<f64>() + x[10];
        let (y, g) = enumerated::value_and_gradient(&x);
        assert!((y - z * z).abs() < 1e-14, "{y} against {}", z * z);
        assert!(
            (g[10] - 2.0 * z).abs() < 1e-14,
            "{} against {}",
            g[10],
            2.0 * z
        );
        crate::common::assert_gradient_matches(enumerated, &g, &x);

        let make = |x: &[f64]| {
            vec![
                Dense {
                    w: x[..6].to_vec(),
                    b: x[6..8].to_vec(),
                    n_in: 3,
                    n_out: 2,
                },
                Dense {
                    w: x[8..10].to_vec(),
                    b: x[10..11].to_vec(),
                    n_in: 2,
                    n_out: 1,
                },
            ]
        };
        let (_, (gl, gx)) = given::value_and_gradient(&make(&x), &INPUT);
        let flat: Vec<f64> = gl
            .iter()
            .flat_map(|t| t.w.iter().chain(&t.b).copied())
            .collect();
        crate::common::assert_gradient_matches(|y: &[f64]| given(&make(y), &INPUT), &flat, &x);
        crate::common::assert_gradient_matches(|y: &[f64]| given(&make(&x), y), &gx, &INPUT);
    }

    mod t {
        use crate::all_orders;
        all_orders!(two_layers, super::X);
        all_orders!(enumerated, super::X);
    }
}

/// The rows of a constant table walked by reference in nested loops, `for zs in Z.iter() {
/// for z in zs { .. } }` (Monte Carlo paths from pre-drawn normals). Before 2026-12-07:
/// E0716 "temporary value dropped while borrowed" at the attribute, from the generic
/// form (its copy of the constant is a local, which the replayed inner loop borrowed),
/// so the function did not compile at all.
mod constant_rows_by_reference {
    use mochi::prelude::*;

    const Z: [[f64; 4]; 3] = [
        [0.1, -0.3, 0.5, 0.2],
        [-0.4, 0.8, 0.1, -0.2],
        [0.3, 0.3, -0.6, 0.9],
    ];

    #[differentiable(higher_order)]
    pub fn paths(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for zs in Z.iter() {
            let mut s = x[0];
            for z in zs {
                s *= 1.0 + x[1] * z;
            }
            total += s;
        }
        total
    }

    #[differentiable(higher_order)]
    pub fn paths_enumerated(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for (i, zs) in Z.iter().enumerate() {
            let mut path = Vec::with_capacity(zs.len());
            let mut s = x[0];
            for (j, z) in zs.iter().enumerate() {
                s *= (x[1] * z * (i + j) as f64).sin() + 2.0;
                path.push(s);
            }
            for &z in &Z[i] {
                s += z * x[1];
            }
            total += s + path.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        }
        total
    }

    /// Neighbour lists of different lengths (`[&[usize]; 3]`, whose copy in the generic
    /// form holds `Vec`s, not `Copy`).
    const NBRS: [&[usize]; 3] = [&[1], &[0], &[0, 1]];

    #[differentiable(higher_order)]
    pub fn neighbours(x: &[f64]) -> f64 {
        let mut e = 0.0;
        for (i, nb) in NBRS.iter().enumerate() {
            let k = nb.len() as f64;
            let m = nb.iter().map(|&j| x[j]).sum::<f64>() / k;
            e += (x[i] - m).powi(2);
        }
        for nb in NBRS.iter() {
            for &j in nb.iter() {
                e += x[j].sin();
            }
        }
        e
    }

    const X: [f64; 2] = [0.7, -0.4];

    #[test]
    fn by_hand() {
        let x = X;
        // x₀·Σ_rows Π(1 + x₁z); ∂/∂x₁ by the product rule.
        let (mut y0, mut d0, mut d1) = (0.0, 0.0, 0.0);
        for row in &Z {
            let p: f64 = row.iter().map(|z| 1.0 + x[1] * z).product();
            y0 += x[0] * p;
            d0 += p;
            d1 += x[0]
                * (0..4)
                    .map(|j| {
                        row[j]
                            * (0..4)
                                .filter(|&i| i != j)
                                .map(|i| 1.0 + x[1] * row[i])
                                .product::<f64>()
                    })
                    .sum::<f64>();
        }
        let (y, g) = paths::value_and_gradient(&x);
        assert!((y - y0).abs() < 1e-14, "{y} against {y0}");
        crate::common::close_to("paths", &g, &[d0, d1], 1e-13);
        let (y, g) = paths_enumerated::value_and_gradient(&x);
        assert!((y - paths_enumerated(&x)).abs() < 1e-14, "{y}");
        crate::common::assert_gradient_matches(paths_enumerated, &g, &x);

        // (x₀ − x₁)² + (x₁ − x₀)² + (x₂ − (x₀ + x₁)/2)², and the sines of the neighbours
        // listed: x₁, x₀, then x₀ and x₁.
        let (y, g) = neighbours::value_and_gradient(&[0.7, -0.4, 0.2]);
        let (a, b, c) = (0.7_f64, -0.4_f64, 0.2_f64);
        let want_y =
            2.0 * (a - b).powi(2) + (c - 0.5 * (a + b)).powi(2) + 2.0 * a.sin() + 2.0 * b.sin();
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let m = c - 0.5 * (a + b);
        let want = [
            4.0 * (a - b) - m + 2.0 * a.cos(),
            -4.0 * (a - b) - m + 2.0 * b.cos(),
            2.0 * m,
        ];
        crate::common::close_to("neighbours", &g, &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(paths, super::X);
        all_orders!(paths_enumerated, super::X);
        all_orders!(neighbours, [0.7, -0.4, 0.2]);
    }
}

/// statrs' shape: a distribution built by a constructor returning a `Result`, unwrapped
/// (`Normal::new(0.0, 1.5).unwrap()`, `.expect(..)`), whose methods are the type's. Before
/// 2026-12-07: "no rule for `cdf` with arguments `(&Normal, &f64)`" on a value of
/// constants (the local's type was not known), and a type error for one built from
/// parameters. (Gradients only: a `Result` has no generic form.)
mod constructors_returning_results {
    use mochi::prelude::*;

    #[derive(Clone, Debug, Tangent)]
    pub struct Normal {
        pub mean: f64,
        pub std_dev: f64,
    }

    #[differentiable]
    impl Normal {
        pub fn new(mean: f64, std_dev: f64) -> Result<Normal, String> {
            if std_dev <= 0.0 {
                Err(format!("std_dev {std_dev} is not positive"))
            } else {
                Ok(Normal { mean, std_dev })
            }
        }
        pub fn ln_pdf(&self, x: f64) -> f64 {
            let d = (x - self.mean) / self.std_dev;
            -0.5 * d * d - self.std_dev.ln()
        }
    }

    #[differentiable]
    pub fn nll(beta: &[f64]) -> f64 {
        let n = Normal::new(0.0, 1.5).unwrap();
        let m = Normal::new(beta[1], 2.0).expect("positive");
        let mut s = 0.0;
        for k in 0..3 {
            s -= n.ln_pdf(beta[0] * k as f64) + m.ln_pdf(0.3 * k as f64);
        }
        s
    }

    #[test]
    fn by_hand() {
        let b = [0.7, -0.4];
        let (mut want_y, mut d0, mut d1) = (0.0, 0.0, 0.0);
        for k in 0..3 {
            let (u, v) = (b[0] * k as f64 / 1.5, (0.3 * k as f64 - b[1]) / 2.0);
            want_y += 0.5 * u * u + 1.5_f64.ln() + 0.5 * v * v + 2.0_f64.ln();
            d0 += u * k as f64 / 1.5;
            d1 -= v / 2.0;
        }
        let (y, g) = nll::value_and_gradient(&b);
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        crate::common::close_to("nll", &g, &[d0, d1], 1e-14);
        crate::common::assert_gradient_matches(nll, &g, &b);
    }
}

/// The best piece of a sequence by a comparator, `x.chunks_exact(2).min_by(cmp).unwrap()`
/// (the nearest point of a flat point cloud), `windows(k).max_by(..)`, `chunks(k)`. Before
/// 2026-12-07: "no rule for `chunks_exact`" and "no rule for `min_by`".
mod best_piece {
    use mochi::prelude::*;

    const QUERIES: [[f64; 2]; 3] = [[0.1, 0.2], [1.0, -0.5], [-0.7, 0.9]];

    #[differentiable(higher_order)]
    pub fn nearest(x: &[f64]) -> f64 {
        let mut cost = 0.0;
        for q in QUERIES.iter() {
            let best = x
                .chunks_exact(2)
                .min_by(|a, b| {
                    let da = (a[0] - q[0]).powi(2) + (a[1] - q[1]).powi(2);
                    let db = (b[0] - q[0]).powi(2) + (b[1] - q[1]).powi(2);
                    da.partial_cmp(&db).unwrap()
                })
                .unwrap();
            cost += (best[0] - q[0]).powi(2) + (best[1] - q[1]).powi(2);
        }
        cost
    }

    #[differentiable(higher_order)]
    pub fn heaviest(x: &[f64]) -> f64 {
        let w = x
            .windows(3)
            .max_by(|a, b| a.iter().sum::<f64>().total_cmp(&b.iter().sum::<f64>()))
            .unwrap();
        let c = x.chunks(4).min_by(|a, b| a[0].total_cmp(&b[0])).unwrap();
        w[0] * w[1] * w[2] + c.iter().map(|v| v * v).sum::<f64>()
    }

    const X: [f64; 6] = [0.0, 0.3, 0.9, -0.4, -0.5, 1.1];

    #[test]
    fn by_hand() {
        let x = X;
        // Nearest points: q₀ → (0, 0.3), q₁ → (0.9, −0.4), q₂ → (−0.5, 1.1).
        let (y, g) = nearest::value_and_gradient(&x);
        let want_y = [(0, 0), (2, 1), (4, 2)]
            .iter()
            .map(|&(p, q)| (x[p] - QUERIES[q][0]).powi(2) + (x[p + 1] - QUERIES[q][1]).powi(2))
            .sum::<f64>();
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let mut want = [0.0; 6];
        for (p, q) in [(0, 0), (2, 1), (4, 2)] {
            want[p] = 2.0 * (x[p] - QUERIES[q][0]);
            want[p + 1] = 2.0 * (x[p + 1] - QUERIES[q][1]);
        }
        crate::common::close_to("nearest", &g, &want, 1e-14);

        // The windows of three sum to 1.2, 0.8, 0.0 and 0.2: the heaviest is x[0..3]. The
        // chunk of four with the least first element: x[4..6] (−0.5, against 0.0).
        let (y, g) = heaviest::value_and_gradient(&x);
        let want_y = x[0] * x[1] * x[2] + x[4] * x[4] + x[5] * x[5];
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let want = [
            x[1] * x[2],
            x[0] * x[2],
            x[0] * x[1],
            0.0,
            2.0 * x[4],
            2.0 * x[5],
        ];
        crate::common::close_to("heaviest", &g, &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(nearest, super::X);
        all_orders!(heaviest, super::X);
    }
}

/// Loops and chains over an array literal, `for (k, w) in [0.5, 1.5, 2.0].iter().enumerate()`,
/// `[1.0, 2.0, 3.0].iter().map(|i| p * i).collect()` (Zygote's `Iterators.take` test).
/// Before 2026-12-07: E0716 "temporary value dropped while borrowed" (the replayed
/// iterator borrowed the literal, a temporary).
mod array_literal_sources {
    use mochi::prelude::*;

    #[differentiable]
    pub fn take_scaled(p: f64) -> f64 {
        let v: Vec<f64> = [1.0, 2.0, 3.0].iter().map(|i| p * i).collect();
        v.iter().take(2).map(|i| p * i).sum::<f64>()
    }

    #[differentiable(higher_order)]
    pub fn weighted(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (k, w) in [0.5, 1.5, 2.0].iter().enumerate() {
            s += w * x[k] * x[k];
        }
        for w in [0.25; 2].iter() {
            s += w * x[0];
        }
        let v: Vec<f64> = [1.0, 2.0, 3.0].iter().map(|i| x[1] * i).collect();
        s + v.iter().sum::<f64>() + [x[0], x[1]].iter().map(|v| v.sin()).sum::<f64>()
    }

    const X: [f64; 3] = [0.7, -0.4, 0.3];

    #[test]
    fn by_hand() {
        // Σ p·i over the first two of p·(1, 2, 3): 3p², 12 at p = 2.
        let (y, g) = take_scaled::value_and_gradient(2.0);
        assert!(
            (y - 12.0).abs() < 1e-14 && (g - 12.0).abs() < 1e-14,
            "{y} {g}"
        );
        let x = X;
        let (y, g) = weighted::value_and_gradient(&x);
        let want_y = 0.5 * x[0] * x[0]
            + 1.5 * x[1] * x[1]
            + 2.0 * x[2] * x[2]
            + 0.5 * x[0]
            + 6.0 * x[1]
            + x[0].sin()
            + x[1].sin();
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let want = [
            x[0] + 0.5 + x[0].cos(),
            3.0 * x[1] + 6.0 + x[1].cos(),
            4.0 * x[2],
        ];
        crate::common::close_to("weighted", &g, &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(weighted, super::X);
    }
}

/// A slice viewed as an array, `ArrayView2::from_shape((n, n), x).unwrap()` (also
/// `ArrayView1`): read as the same values owned. Before 2026-12-07: "no rule for
/// `array_view2_from_shape`".
mod array_views_of_slices {
    use mochi::prelude::*;
    use ndarray::{ArrayView1, ArrayView2, Axis};

    #[differentiable(higher_order)]
    pub fn viewed(x: &[f64]) -> f64 {
        let a = ArrayView2::from_shape((2, 2), x).unwrap();
        let v = ArrayView1::from_shape(4, x).unwrap();
        a.mapv(f64::sin).dot(&a).sum_axis(Axis(1)).sum() + v.sum() * v[0]
    }

    const X: [f64; 4] = [0.7, -0.4, 0.3, 1.1];

    #[test]
    fn by_hand() {
        let x = X;
        // Σᵢⱼ (sin A · A)ᵢⱼ = Σᵢₖ sin(Aᵢₖ)·(row sum k of A).
        let r = [x[0] + x[1], x[2] + x[3]];
        let s: f64 = x.iter().sum();
        let want_y = x[0].sin() * r[0]
            + x[1].sin() * r[1]
            + x[2].sin() * r[0]
            + x[3].sin() * r[1]
            + s * x[0];
        let (y, g) = viewed::value_and_gradient(&x);
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        // ∂/∂A₀₀ = cos(A₀₀)·r₀ + sin(A₀₀) + sin(A₁₀), and the sum term.
        let d0 = x[0].cos() * r[0] + x[0].sin() + x[2].sin() + s + x[0];
        assert!((g[0] - d0).abs() < 1e-14, "{} against {d0}", g[0]);
        crate::common::assert_gradient_matches(viewed, &g, &x);
    }

    mod t {
        use crate::all_orders;
        all_orders!(viewed, super::X);
    }
}

/// `b.broadcast((3, 4)).unwrap()` of a differentiable array (a row repeated, and a column
/// by `insert_axis` then its transpose), at every order. Before 2026-12-07: the function
/// had its gradient but no Hessian ("it calls the method `broadcast`").
mod broadcasts_at_every_order {
    use mochi::prelude::*;
    use ndarray::{Array1, Array2, Axis};

    #[differentiable(higher_order)]
    pub fn rows(x: &[f64]) -> f64 {
        let b = Array1::from(x.to_vec());
        let a: Array2<f64> =
            Array2::from_shape_fn((3, 4), |(i, j)| 0.5 * (i as f64 + 1.0) - 0.25 * j as f64);
        let bb = b.broadcast((3, 4)).unwrap();
        (&a * &bb).sum() + bb.mapv(|v| v * v).sum()
    }

    #[differentiable(higher_order)]
    pub fn columns(x: &[f64]) -> f64 {
        let s = Array1::from(x[..3].to_vec());
        let w: Array2<f64> = Array2::from_shape_fn((3, 3), |(i, j)| (i + 2 * j + 1) as f64);
        let col = s.view().insert_axis(Axis(1));
        let big = col.broadcast((3, 3)).unwrap();
        (&w * &big).sum() + (&big.t() * &big).sum()
    }

    const X: [f64; 4] = [-0.4, -0.1, 0.2, 0.5];

    #[test]
    fn by_hand() {
        let x = X;
        // rows: Σᵢⱼ aᵢⱼ·xⱼ + 3·Σⱼ xⱼ²; Σᵢ aᵢⱼ = 3 − 0.75j.
        let (y, g) = rows::value_and_gradient(&x);
        let want_y: f64 = (0..4)
            .map(|j| (3.0 - 0.75 * j as f64) * x[j] + 3.0 * x[j] * x[j])
            .sum();
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let want: Vec<f64> = (0..4).map(|j| 3.0 - 0.75 * j as f64 + 6.0 * x[j]).collect();
        crate::common::close_to("rows", &g, &want, 1e-14);
        // columns: Σᵢⱼ wᵢⱼ·sᵢ + (Σ s)²; Σⱼ wᵢⱼ = 3(i + 1) + 6.
        let (y, g) = columns::value_and_gradient(&x);
        let s: f64 = x[..3].iter().sum();
        let want_y: f64 = (0..3)
            .map(|i| (3.0 * (i as f64 + 1.0) + 6.0) * x[i])
            .sum::<f64>()
            + s * s;
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let want = [9.0 + 2.0 * s, 12.0 + 2.0 * s, 15.0 + 2.0 * s, 0.0];
        crate::common::close_to("columns", &g, &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(rows, super::X);
        all_orders!(columns, super::X);
    }
}

/// `std::array::from_fn` nested (`[[f64; 5]; 5]` of an image, the inner length from the
/// element type) and over a named or long length (`[f64; NN]`, a zeroed array written in
/// a loop). Before 2026-12-07: "closures are differentiated only as the argument of an
/// adapter method" at the inner `from_fn`, and at a length other than a literal up to 64.
mod arrays_from_fn {
    use mochi::prelude::*;

    const NN: usize = 70;

    #[differentiable(higher_order)]
    pub fn image(x: &[f64]) -> f64 {
        let img: [[f64; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|j| x[i * 3 + j]));
        let mut s = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                s += img[i][j] * img[j][i] * (i + 1) as f64;
            }
        }
        s
    }

    #[differentiable]
    pub fn long(x: &[f64]) -> f64 {
        let a: [f64; NN] = std::array::from_fn(|k| x[k % 3] * k as f64);
        let b: [f64; 70] = std::array::from_fn(|_| x[0]);
        a.iter().sum::<f64>() + b.iter().map(|v| v * v).sum::<f64>()
    }

    const X: [f64; 9] = [0.3, -0.2, 0.5, 0.1, 0.7, -0.6, 0.4, 0.2, -0.3];

    #[test]
    fn by_hand() {
        let x = X;
        // Σᵢⱼ mᵢⱼ·mⱼᵢ·(i + 1): ∂/∂mₐ_b = m_bₐ·((a + 1) + (b + 1)).
        let (y, g) = image::value_and_gradient(&x);
        let m = |i: usize, j: usize| x[i * 3 + j];
        let want_y: f64 = (0..9)
            .map(|k| m(k / 3, k % 3) * m(k % 3, k / 3) * (k / 3 + 1) as f64)
            .sum();
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let want: Vec<f64> = (0..9)
            .map(|k| m(k % 3, k / 3) * ((k / 3 + 1) + (k % 3 + 1)) as f64)
            .collect();
        crate::common::close_to("image", &g, &want, 1e-14);
        // long: Σₖ x[k mod 3]·k + 70·x₀²; the multiples of k for each residue.
        let (y, g) = long::value_and_gradient(&x[..3]);
        let sums: Vec<f64> = (0..3)
            .map(|r| (0..NN).filter(|k| k % 3 == r).map(|k| k as f64).sum())
            .collect();
        let want_y = (0..3).map(|r| sums[r] * x[r]).sum::<f64>() + 70.0 * x[0] * x[0];
        assert!((y - want_y).abs() < 1e-11, "{y} against {want_y}");
        let want = [sums[0] + 140.0 * x[0], sums[1], sums[2]];
        crate::common::close_to("long", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(image, super::X);
    }
}

/// Tuples of floats as arguments (`p: (f64, f64)`, a pose `(f64, f64, f64)`) at every
/// order: the companions take the tuple, and its direction and its part of `hvp` are
/// tuples too. Before 2026-12-08: gradients only ("`fit` has no higher-order
/// companions … because an argument is `&mut` or a fixed-size array of arrays …", a
/// reason that was not this function's).
mod tuple_arguments {
    use mochi::prelude::*;

    /// Least squares of a line `a·t + b` through the points `(t, y)` of `ts`.
    #[differentiable]
    pub fn fit(p: (f64, f64), ts: &[f64]) -> f64 {
        let (a, b) = p;
        ts.iter()
            .enumerate()
            .map(|(k, t)| (a * t + b - (k as f64).sqrt()).powi(2))
            .sum()
    }

    /// A planar pose `(x, y, θ)` moving the point (1, 0), and a penalty on its angle.
    #[differentiable]
    pub fn pose(q: (f64, f64, f64)) -> f64 {
        let (x, y, th) = q;
        let (px, py) = (x + th.cos(), y + th.sin());
        px * px * py + 0.5 * th * th
    }

    /// A scalar, a tuple and a `Vec`, in that order.
    #[differentiable]
    pub fn mixed(s: f64, p: (f64, f64), v: Vec<f64>) -> f64 {
        let mut acc = s * p.0;
        for (i, w) in v.iter().enumerate() {
            acc += w * w * p.1 + (i as f64) * s * w;
        }
        acc * p.0
    }

    /// One gradient step on `fit` inside a differentiable function: the gradient's rule
    /// (its pullback is `fit`'s Hessian-vector product) takes the tuple too.
    #[differentiable]
    pub fn after_step(x: &[f64]) -> f64 {
        let (gp, _) = fit::gradient((x[0], x[1]), &x[2..]);
        let (a, b) = (x[0] - 0.1 * gp.0, x[1] - 0.1 * gp.1);
        fit((a, b), &x[2..])
    }

    fn fd(f: &dyn Fn(&[f64]) -> f64, x: &[f64], i: usize) -> f64 {
        let h = 1e-6;
        let (mut u, mut d) = (x.to_vec(), x.to_vec());
        u[i] += h;
        d[i] -= h;
        (f(&u) - f(&d)) / (2.0 * h)
    }

    #[test]
    fn fit_by_hand() {
        let ts = [0.5, 1.5, -1.0];
        let p = (0.7, -0.2);
        // H over (a, b, t₀, t₁, t₂) of Σₖ rₖ², rₖ = a·tₖ + b − √k: 2·Jᵀ J + 2·Σ rₖ ∇²rₖ,
        // with ∂rₖ/∂a = tₖ, ∂rₖ/∂b = 1, ∂rₖ/∂tₖ = a, and ∂²rₖ/∂a∂tₖ = 1.
        let h = fit::hessian(p, &ts);
        let r: Vec<f64> = (0..3)
            .map(|k| p.0 * ts[k] + p.1 - (k as f64).sqrt())
            .collect();
        let mut want = [[0.0; 5]; 5];
        for k in 0..3 {
            let mut j = [0.0; 5];
            j[0] = ts[k];
            j[1] = 1.0;
            j[2 + k] = p.0;
            for a in 0..5 {
                for b in 0..5 {
                    want[a][b] += 2.0 * j[a] * j[b];
                }
            }
            want[0][2 + k] += 2.0 * r[k];
            want[2 + k][0] += 2.0 * r[k];
        }
        for a in 0..5 {
            for b in 0..5 {
                assert!(
                    (h[[a, b]] - want[a][b]).abs() < 1e-12,
                    "H[{a},{b}] = {} against {}",
                    h[[a, b]],
                    want[a][b]
                );
            }
        }
        // jvp and hvp take the tuple's direction as a tuple.
        let v = ((0.3, -0.4), &[0.2, 0.1, -0.5][..]);
        let flat_v = [0.3, -0.4, 0.2, 0.1, -0.5];
        let (y, d) = fit::jvp(p, &ts, v);
        assert!((y - fit(p, &ts)).abs() < 1e-15);
        let ((ga, gb), gt) = fit::gradient(p, &ts);
        let flat_g = [ga, gb, gt[0], gt[1], gt[2]];
        let want_d: f64 = flat_g.iter().zip(&flat_v).map(|(g, v)| g * v).sum();
        assert!((d - want_d).abs() < 1e-13, "{d} against {want_d}");
        let ((ha, hb), ht) = fit::hvp(p, &ts, v);
        let hv: Vec<f64> = (0..5)
            .map(|a| (0..5).map(|b| want[a][b] * flat_v[b]).sum())
            .collect();
        let got = [ha, hb, ht[0], ht[1], ht[2]];
        crate::common::close_to("fit hvp", &got, &hv, 1e-12);
    }

    #[test]
    fn pose_and_mixed_against_differences() {
        // pose: the gradient against differences and the Hessian against differences of
        // the gradient; `hessian` lays the tuple's floats in order.
        let q = (0.4, -0.3, 0.9);
        let f = |z: &[f64]| pose((z[0], z[1], z[2]));
        let z = [q.0, q.1, q.2];
        let (gx, gy, gth) = pose::gradient(q);
        let g = [gx, gy, gth];
        for i in 0..3 {
            let want = fd(&f, &z, i);
            assert!(
                (g[i] - want).abs() < 1e-8,
                "pose g[{i}] {} against {want}",
                g[i]
            );
        }
        let h = pose::hessian(q);
        for j in 0..3 {
            let gj = |z: &[f64]| {
                let g = pose::gradient((z[0], z[1], z[2]));
                [g.0, g.1, g.2][j]
            };
            for i in 0..3 {
                let want = fd(&gj, &z, i);
                assert!(
                    (h[[j, i]] - want).abs() < 1e-7,
                    "pose H[{j},{i}] {} against {want}",
                    h[[j, i]]
                );
            }
        }
        // mixed: the Hessian over (s, p.0, p.1, v₀, v₁, v₂).
        let x = [0.6, 1.2, -0.7, 0.5, -0.25, 0.8];
        let m = |z: &[f64]| mixed(z[0], (z[1], z[2]), z[3..].to_vec());
        let h = mixed::hessian(x[0], (x[1], x[2]), x[3..].to_vec());
        for j in 0..6 {
            let gj = |z: &[f64]| {
                let (gs, gp, gv) = mixed::gradient(z[0], (z[1], z[2]), z[3..].to_vec());
                [gs, gp.0, gp.1, gv[0], gv[1], gv[2]][j]
            };
            for i in 0..6 {
                let want = fd(&gj, &x, i);
                assert!(
                    (h[[j, i]] - want).abs() < 1e-7,
                    "mixed H[{j},{i}] {} against {want}",
                    h[[j, i]]
                );
            }
        }
        let (gs, gp, gv) = mixed::gradient(x[0], (x[1], x[2]), x[3..].to_vec());
        let g = [gs, gp.0, gp.1, gv[0], gv[1], gv[2]];
        for i in 0..6 {
            let want = fd(&m, &x, i);
            assert!(
                (g[i] - want).abs() < 1e-8,
                "mixed g[{i}] {} against {want}",
                g[i]
            );
        }
    }

    #[test]
    fn through_an_inner_gradient() {
        let x = [0.7, -0.2, 0.5, 1.5, -1.0];
        let g = after_step::gradient(&x);
        for i in 0..5 {
            let want = fd(&after_step, &x, i);
            assert!((g[i] - want).abs() < 1e-7, "g[{i}] {} against {want}", g[i]);
        }
    }
}

/// A buffer lent to a helper and refilled there (`out.clear();` then `push`/`extend`),
/// the buffer-reuse idiom of Rust code, called twice on the same buffer; and one cut
/// and edited in place (`truncate`, `resize`, `remove`, `insert`, `pop`, `retain`,
/// `swap_remove`). Before 2026-12-08: "`.clear(..)` changes the length of a
/// differentiable buffer, which is not supported" (`*out = Vec::new();` was the way
/// round), and the same of `.truncate(..)` at a `resize`.
mod lent_buffers_cleared {
    use mochi::prelude::*;

    #[differentiable]
    pub fn refill(x: &[f64], out: &mut Vec<f64>) -> f64 {
        out.clear();
        out.extend(x.iter().map(|v| v.exp()));
        out.push(x[0] * x[1]);
        out.iter().sum::<f64>() / out.len() as f64
    }

    #[differentiable]
    pub fn pairs_into(x: &[f64], out: &mut Vec<f64>) {
        out.clear();
        for w in x.windows(2) {
            out.push(w[0] * w[1]);
        }
    }

    #[differentiable]
    pub fn twice(x: &[f64]) -> f64 {
        let mut o = vec![1.0, 2.0];
        let a = refill(x, &mut o);
        let b = refill(&x[1..], &mut o);
        let mut p = Vec::new();
        pairs_into(x, &mut p);
        a * b + o.iter().map(|v| v * v).sum::<f64>() + p.iter().sum::<f64>()
    }

    /// A lent buffer resized, cut and edited in place.
    #[differentiable]
    pub fn edits(x: &[f64], out: &mut Vec<f64>) {
        out.extend_from_slice(x);
        out.remove(1);
        out.insert(0, x[2] * 2.0);
        out.pop();
        out.retain(|v| *v > -0.5);
        out.swap_remove(0);
        out.truncate(3);
        out.resize(3, x[3]);
    }

    #[differentiable]
    pub fn edited(x: &[f64]) -> f64 {
        let mut o = vec![0.25];
        edits(x, &mut o);
        o.iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v * v)
            .sum()
    }

    /// The lent buffer read before it is cleared: its incoming values have cotangents.
    #[differentiable]
    pub fn read_then_cleared(x: &[f64], out: &mut Vec<f64>) -> f64 {
        let s = out.iter().sum::<f64>();
        out.clear();
        out.push(x[0] * s);
        out.push(x[1]);
        s * x[1]
    }

    #[differentiable]
    pub fn inserted(v: &mut Vec<f64>, a: f64) {
        v.insert(0, a * 2.0);
    }

    #[differentiable]
    pub fn positive_sum(x: &[f64], v: &mut Vec<f64>) -> f64 {
        v.retain(|&t| t > 0.0);
        v.iter().sum::<f64>() * x[0]
    }

    /// Each rule against its primal with `test_rule` (values, the arguments as the
    /// function leaves them, shapes, accumulation into cotangents that already hold
    /// values, finite differences): the caller's buffer changes length under the rule.
    /// (Until 2026-12-08 `insert` and `retain` of a `&mut Vec` parameter were refused,
    /// `ui/insert_active.rs` and `ui/retain_mut_param.rs`.)
    #[test]
    fn rules_against_primals() {
        use mochi::testing::test_rule;
        test_rule(
            (vec![0.5_f64, -1.0, 2.0], 1.5_f64),
            |a| inserted(&mut a.0, a.1),
            |a| inserted::rrule(&mut a.0, a.1),
        );
        test_rule(
            (vec![0.7_f64, 0.2], vec![0.5_f64, -1.0, 2.0]),
            |a| positive_sum(&a.0, &mut a.1),
            |a| positive_sum::rrule(&a.0, &mut a.1),
        );
        test_rule(
            (vec![0.7_f64, 0.2, -0.4, 0.9], vec![0.5_f64, -1.0]),
            |a| edits(&a.0, &mut a.1),
            |a| edits::rrule(&a.0, &mut a.1),
        );
        test_rule(
            (vec![0.7_f64, 0.2], vec![0.5_f64, -1.0, 3.0]),
            |a| read_then_cleared(&a.0, &mut a.1),
            |a| read_then_cleared::rrule(&a.0, &mut a.1),
        );
        test_rule(
            (vec![0.7_f64, 0.2, -0.4], vec![0.5_f64]),
            |a| refill(&a.0, &mut a.1),
            |a| refill::rrule(&a.0, &mut a.1),
        );
    }

    const X: [f64; 4] = [0.3, -0.7, 1.1, 0.4];

    #[test]
    fn edits_by_hand() {
        // [0.25, x₀, x₁, x₂, x₃] → remove(1) → [0.25, x₁, x₂, x₃] → insert(0, 2x₂) →
        // pop → [2x₂, 0.25, x₁, x₂] → retain(> −0.5) drops x₁ = −0.7 → [2x₂, 0.25, x₂]
        // → swap_remove(0) → [x₂, 0.25] → resize(3, x₃) → [x₂, 0.25, x₃]:
        // x₂² + 2·0.0625 + 3·x₃².
        let x = X;
        let mut o = vec![0.25];
        edits(&x, &mut o);
        assert_eq!(o, vec![x[2], 0.25, x[3]]);
        let (y, g) = edited::value_and_gradient(&x);
        let want_y = x[2] * x[2] + 0.125 + 3.0 * x[3] * x[3];
        assert!((y - want_y).abs() < 1e-15, "{y} against {want_y}");
        crate::common::close_to("edited", &g, &[0.0, 0.0, 2.0 * x[2], 6.0 * x[3]], 1e-15);
    }

    #[test]
    fn by_hand() {
        let x = X;
        // refill(x): (Σ eˣ + x₀x₁) / (n + 1), whatever the buffer held.
        let mut o = vec![9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0];
        let (y, (gx, _)) = refill::value_and_gradient(&x, &mut o);
        let want_y = (x.iter().map(|v| v.exp()).sum::<f64>() + x[0] * x[1]) / 5.0;
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let mut want: Vec<f64> = x.iter().map(|v| v.exp() / 5.0).collect();
        want[0] += x[1] / 5.0;
        want[1] += x[0] / 5.0;
        crate::common::close_to("refill", &gx, &want, 1e-14);
        // twice: each piece by hand, the buffer's last contents (refill of x[1..]).
        let g = twice::gradient(&x);
        let a = want_y;
        let t = &x[1..];
        let b = (t.iter().map(|v| v.exp()).sum::<f64>() + t[0] * t[1]) / 4.0;
        let da: Vec<f64> = want.clone();
        let mut db = [0.0; 4];
        for k in 1..4 {
            db[k] = x[k].exp() / 4.0;
        }
        db[1] += x[2] / 4.0;
        db[2] += x[1] / 4.0;
        // o = [e^{x₁}, e^{x₂}, e^{x₃}, x₁x₂]: Σ o², and Σ pairs xₖxₖ₊₁.
        let mut want = vec![0.0; 4];
        for k in 0..4 {
            want[k] += da[k] * b + a * db[k];
        }
        for k in 1..4 {
            want[k] += 2.0 * x[k].exp() * x[k].exp();
        }
        want[1] += 2.0 * x[1] * x[2] * x[2];
        want[2] += 2.0 * x[1] * x[2] * x[1];
        for k in 0..3 {
            want[k] += x[k + 1];
            want[k + 1] += x[k];
        }
        crate::common::close_to("twice", &g, &want, 1e-13);
    }

    mod t {
        use crate::all_orders;
        all_orders!(twice, super::X);
        all_orders!(edited, super::X);
    }
}

/// Arrays walked in blocks and seen in another order: `axis_chunks_iter` (mini-batches,
/// in a `for` and in a chain), `as_standard_layout` of a transpose, `permuted_axes` and
/// `swap_axes` of a differentiable array. Before 2026-12-08: "no rule for
/// `axis_chunks_iter`", "no rule for `as_standard_layout`", "no rule for
/// `permuted_axes`", and "no rule for `swap_axes`".
mod arrays_reordered {
    use mochi::prelude::*;
    use ndarray::{Array2, Array3, Axis};

    #[differentiable]
    pub fn batches(x: &[f64]) -> f64 {
        let m = Array2::from_shape_vec((4, 3), x.to_vec()).unwrap();
        let mut s = 0.0;
        for (k, b) in m.axis_chunks_iter(Axis(0), 3).enumerate() {
            s += (k as f64 + 1.0) * b.sum().powi(2);
        }
        s
    }

    #[differentiable]
    pub fn column_blocks(x: &[f64]) -> f64 {
        let m = Array2::from_shape_vec((4, 3), x.to_vec()).unwrap();
        m.axis_chunks_iter(Axis(1), 2)
            .map(|b| b.sum_axis(Axis(1)).mapv(|v| v.sin()).sum())
            .sum()
    }

    #[differentiable]
    pub fn standard(x: &[f64]) -> f64 {
        let m = Array2::from_shape_vec((4, 3), x.to_vec()).unwrap();
        let t = m.t().as_standard_layout().to_owned();
        t.row(0).dot(&t.row(1))
    }

    #[differentiable]
    pub fn permuted(x: &[f64]) -> f64 {
        let m = Array3::from_shape_vec((2, 3, 2), x.to_vec()).unwrap();
        let p = m.permuted_axes([2, 0, 1]);
        p[[1, 0, 2]] * p[[0, 1, 1]] + p.sum_axis(Axis(0)).mapv(|v| v * v).sum()
    }

    #[differentiable]
    pub fn swapped(x: &[f64]) -> f64 {
        let mut m = Array2::from_shape_vec((4, 3), x.to_vec()).unwrap();
        m.swap_axes(0, 1);
        m[[2, 1]] * m[[0, 3]] + m.row(1).sum()
    }

    const X: [f64; 12] = [
        0.3, -0.2, 0.5, 0.1, 0.7, -0.6, 0.4, 0.2, -0.3, 0.8, -0.5, 0.6,
    ];

    #[test]
    fn by_hand() {
        let x = X;
        let m = |r: usize, c: usize| x[r * 3 + c];
        // batches: rows 0..3 (weight 1) and row 3 (weight 2), each block's sum squared.
        let s0: f64 = x[..9].iter().sum();
        let s1: f64 = x[9..].iter().sum();
        let want: Vec<f64> = (0..12)
            .map(|k| if k < 9 { 2.0 * s0 } else { 4.0 * s1 })
            .collect();
        crate::common::close_to("batches", &batches::gradient(&x), &want, 1e-14);
        // column_blocks: columns {0, 1} and {2}; Σ_r sin(Σ_{c ∈ block} m[r, c]).
        let want: Vec<f64> = (0..12)
            .map(|k| {
                let (r, c) = (k / 3, k % 3);
                if c < 2 {
                    (m(r, 0) + m(r, 1)).cos()
                } else {
                    m(r, 2).cos()
                }
            })
            .collect();
        crate::common::close_to("column_blocks", &column_blocks::gradient(&x), &want, 1e-14);
        // standard: Σ_r m[r, 0]·m[r, 1].
        let want: Vec<f64> = (0..12)
            .map(|k| match k % 3 {
                0 => x[k + 1],
                1 => x[k - 1],
                _ => 0.0,
            })
            .collect();
        crate::common::close_to("standard", &standard::gradient(&x), &want, 1e-15);
        // permuted: p[[a, b, c]] = m[[b, c, a]], so p[[1, 0, 2]]·p[[0, 1, 1]] is x₅·x₈; the
        // sum over p's axis 0 is over m's last axis: Σ_{i,j} (m[i,j,0] + m[i,j,1])².
        let mut want: Vec<f64> = (0..12).map(|k| 2.0 * (x[k & !1] + x[k | 1])).collect();
        want[5] += x[8];
        want[8] += x[5];
        crate::common::close_to("permuted", &permuted::gradient(&x), &want, 1e-14);
        // swapped: m'[i, j] = m[j, i]: m[1, 2]·m[3, 0] + Σ_j m[j, 1].
        let mut want = vec![0.0; 12];
        want[5] = x[9];
        want[9] = x[5];
        for r in 0..4 {
            want[r * 3 + 1] += 1.0;
        }
        crate::common::close_to("swapped", &swapped::gradient(&x), &want, 1e-15);
    }

    mod t {
        use crate::all_orders;
        all_orders!(batches, super::X);
        all_orders!(column_blocks, super::X);
        all_orders!(standard, super::X);
        all_orders!(permuted, super::X);
        all_orders!(swapped, super::X);
    }
}

/// `VecDeque` as Rust code uses it: a moving window (`push_back`, then `pop_front` past
/// its length), a deque grown at both ends and read at them, and a work queue drained
/// by `while let Some(v) = q.pop_front()` that pushes more work. Before 2026-12-08:
/// "`.push_back(..)` of a differentiable value into a buffer is not supported" and the
/// same of `pop_front`. The derivation reads the deque as a `Vec`.
mod deques_as_buffers {
    use mochi::prelude::*;
    use std::collections::VecDeque;

    #[differentiable]
    pub fn moving_average(x: &[f64]) -> f64 {
        let mut win: VecDeque<f64> = VecDeque::with_capacity(3);
        let mut out = 0.0;
        for (t, &v) in x.iter().enumerate() {
            win.push_back(v);
            if win.len() > 3 {
                win.pop_front();
            }
            let m = win.iter().sum::<f64>() / win.len() as f64;
            out += (t as f64 + 1.0) * m * m;
        }
        out
    }

    #[differentiable]
    pub fn both_ends(x: &[f64]) -> f64 {
        let mut d: VecDeque<f64> = VecDeque::new();
        d.push_back(x[0]);
        d.push_back(x[1]);
        d.push_front(x[2]);
        d.push_back(x[3] * x[4]);
        let f = *d.front().unwrap();
        let b = *d.back().unwrap();
        f * b + d[1] * d[2] + d.len() as f64 * d[1]
    }

    #[differentiable]
    pub fn work_queue(x: &[f64]) -> f64 {
        let mut q: VecDeque<f64> = x.iter().copied().collect();
        let mut s = 0.0;
        let mut k = 0;
        while let Some(v) = q.pop_front() {
            s += v * v * (k as f64 + 1.0);
            if k < 3 {
                q.push_back(v * 0.5);
            }
            k += 1;
        }
        if let Some(a) = q.pop_front() {
            s += a;
        }
        let mut r = VecDeque::from(vec![x[0], x[1]]);
        r.pop_back();
        let z = r.pop_front().unwrap();
        s + z * z * z
    }

    const X: [f64; 6] = [0.3, -0.7, 1.1, 0.4, -0.2, 0.9];

    #[test]
    fn by_hand() {
        let x = X;
        // both_ends: d = [x₂, x₀, x₁, x₃x₄]: x₂x₃x₄ + x₀x₁ + 4x₀.
        let (y, g) = both_ends::value_and_gradient(&x);
        let want_y = x[2] * x[3] * x[4] + x[0] * x[1] + 4.0 * x[0];
        assert!((y - want_y).abs() < 1e-15, "{y} against {want_y}");
        let want = [x[1] + 4.0, x[0], x[3] * x[4], x[2] * x[4], x[2] * x[3], 0.0];
        crate::common::close_to("both_ends", &g, &want, 1e-15);
        // work_queue: the six inputs at trips 1..6, then x₀/2, x₁/2, x₂/2 at trips 7..9
        // (weights squared: ¼), and x₀³ from the second deque.
        let w = [
            1.0 + 7.0 / 4.0,
            2.0 + 8.0 / 4.0,
            3.0 + 9.0 / 4.0,
            4.0,
            5.0,
            6.0,
        ];
        let (y, g) = work_queue::value_and_gradient(&x);
        let want_y: f64 = (0..6).map(|k| w[k] * x[k] * x[k]).sum::<f64>() + x[0].powi(3);
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        let mut want: Vec<f64> = (0..6).map(|k| 2.0 * w[k] * x[k]).collect();
        want[0] += 3.0 * x[0] * x[0];
        crate::common::close_to("work_queue", &g, &want, 1e-14);
        // moving_average: the window's mean at each step, weighted by the step.
        let (y, g) = moving_average::value_and_gradient(&x);
        let mut want_y = 0.0;
        let mut want = [0.0; 6];
        for t in 0..6usize {
            let lo = t.saturating_sub(2);
            let n = (t - lo + 1) as f64;
            let m: f64 = x[lo..=t].iter().sum::<f64>() / n;
            want_y += (t as f64 + 1.0) * m * m;
            for k in lo..=t {
                want[k] += (t as f64 + 1.0) * 2.0 * m / n;
            }
        }
        assert!((y - want_y).abs() < 1e-14, "{y} against {want_y}");
        crate::common::close_to("moving_average", &g, &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(moving_average, super::X);
        all_orders!(both_ends, super::X);
        all_orders!(work_queue, super::X);
    }
}

/// A tuple of `Option`s of references taken apart by value (`if let (Some(&f), Some(&l))
/// = (x.first(), x.last())`), in `if let` and in a `match` with a guard. Before
/// 2026-12-08: "a `match` arm or `if let` pattern that binds parts of a differentiable
/// value … is not supported" (`Some(f)` without the `&` was taken).
mod option_tuple_refs {
    use mochi::prelude::*;

    #[differentiable]
    pub fn ends(x: &[f64]) -> f64 {
        let mut s = x[1] * x[1];
        if let (Some(&f), Some(&l)) = (x.first(), x.last()) {
            s += f * l;
        }
        s
    }

    #[differentiable]
    pub fn three(x: &[f64]) -> f64 {
        match (x.first(), x.get(2), x.last()) {
            (Some(&f), Some(&m), Some(&l)) if f > 0.0 => f * l + m * m,
            (Some(&f), _, Some(l)) => f - l,
            _ => 0.0,
        }
    }

    #[test]
    fn by_hand() {
        let x = [0.3, -0.7, 1.1, 0.4];
        crate::common::close_to("ends", &ends::gradient(&x), &[0.4, -1.4, 0.0, 0.3], 1e-15);
        crate::common::close_to("three", &three::gradient(&x), &[0.4, 0.0, 2.2, 0.3], 1e-15);
        // f ≤ 0: the second arm, f − l.
        let y = [-0.3, 0.5, 0.2];
        crate::common::close_to("three", &three::gradient(&y), &[1.0, 0.0, -1.0], 1e-15);
    }

    mod t {
        use crate::all_orders;
        all_orders!(ends, [0.3, -0.7, 1.1, 0.4]);
        all_orders!(three, [0.3, -0.7, 1.1, 0.4]);
    }
}

/// A sub-slice of a buffer rearranged in place: `v[1..5].rotate_left(1)`,
/// `v[2..].rotate_right(2)`, `v[1..].sort_by(cmp)`, beside `v[1..4].reverse()` and
/// `v[2..].swap(0, 1)`. Before 2026-12-08: "no rule for `rotate_left` with arguments
/// `(&[f64], ..)`" and the same of `sort_by`.
mod sub_slices_in_place {
    use mochi::prelude::*;

    fn weighted(v: &[f64]) -> f64 {
        v.iter()
            .enumerate()
            .map(|(k, e)| (k as f64 + 1.0) * e * e)
            .sum()
    }

    #[differentiable]
    pub fn rotated(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v[1..5].rotate_left(1);
        v[2..].rotate_right(2);
        v.iter()
            .enumerate()
            .map(|(k, e)| (k as f64 + 1.0) * e * e)
            .sum()
    }

    #[differentiable]
    pub fn sorted_tail(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v[1..].sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[..3].sort_unstable_by(|a, b| b.total_cmp(a));
        v[1..4].reverse();
        v[2..].swap(0, 1);
        v.iter()
            .enumerate()
            .map(|(k, e)| (k as f64 + 1.0) * e * e)
            .sum()
    }

    const X: [f64; 6] = [0.3, -0.7, 1.1, 0.4, -0.2, 0.9];

    /// The gradient of Σ (k + 1)·v_k² where `v` is `x` rearranged (distinct values):
    /// each input weighted by the position it ends at.
    fn by_position(x: &[f64], v: &[f64]) -> Vec<f64> {
        x.iter()
            .map(|xi| {
                let p = v.iter().position(|e| e == xi).unwrap();
                2.0 * (p as f64 + 1.0) * xi
            })
            .collect()
    }

    #[test]
    fn by_hand() {
        let x = X;
        let mut v = x.to_vec();
        v[1..5].rotate_left(1);
        v[2..].rotate_right(2);
        let (y, g) = rotated::value_and_gradient(&x);
        assert_eq!(y, weighted(&v));
        crate::common::close_to("rotated", &g, &by_position(&x, &v), 1e-15);
        let mut v = x.to_vec();
        v[1..].sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[..3].sort_unstable_by(|a, b| b.total_cmp(a));
        v[1..4].reverse();
        v[2..].swap(0, 1);
        let (y, g) = sorted_tail::value_and_gradient(&x);
        assert_eq!(y, weighted(&v));
        crate::common::close_to("sorted_tail", &g, &by_position(&x, &v), 1e-15);
    }

    mod t {
        use crate::all_orders;
        all_orders!(rotated, super::X);
        all_orders!(sorted_tail, super::X);
    }
}

/// Rows of a constant table handed to a marked helper (`dist(&XA[i], &XA[j])`, a kernel
/// matrix over fixed points; beside a row of the parameters, `dist(&XA[i], &x[..2])`),
/// at every order. Before 2026-12-08: gradients only ("it calls `dist`, whose twin is
/// not known").
mod constant_rows_to_helpers {
    use mochi::prelude::*;

    const XA: [[f64; 2]; 3] = [[0.1, 0.2], [0.5, -0.3], [0.9, 0.4]];

    #[differentiable]
    pub fn dist(a: &[f64], b: &[f64]) -> f64 {
        let mut s = 0.0;
        for d in 0..a.len() {
            s += (a[d] - b[d]) * (a[d] - b[d]);
        }
        s.sqrt()
    }

    /// Σ_{i≠j} exp(−|xᵢ − xⱼ| / ℓ) with ℓ = e^{θ₀}, times θ₁.
    #[differentiable]
    pub fn kernel_sum(x: &[f64]) -> f64 {
        let l = x[0].exp();
        let mut q = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                if i != j {
                    q += (-dist(&XA[i], &XA[j]) / l).exp();
                }
            }
        }
        q * x[1]
    }

    #[differentiable]
    pub fn to_points(x: &[f64]) -> f64 {
        let mut q = 0.0;
        for i in 0..3 {
            q += dist(&XA[i], &x[..2]) * x[2];
        }
        q
    }

    #[test]
    fn by_hand() {
        // kernel_sum: ∂/∂θ₀ = θ₁ Σ e^{−r/ℓ} r/ℓ, ∂/∂θ₁ = Σ e^{−r/ℓ}.
        let x = [0.3_f64, 1.7];
        let l = x[0].exp();
        let rs: Vec<f64> = (0..3)
            .flat_map(|i| (0..3).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| ((XA[i][0] - XA[j][0]).powi(2) + (XA[i][1] - XA[j][1]).powi(2)).sqrt())
            .collect();
        let s: f64 = rs.iter().map(|r| (-r / l).exp()).sum();
        let d0: f64 = rs.iter().map(|r| (-r / l).exp() * r / l).sum();
        crate::common::close_to(
            "kernel_sum",
            &kernel_sum::gradient(&x),
            &[x[1] * d0, s],
            1e-14,
        );
        // to_points: θ₂ Σ (p − aᵢ)/|p − aᵢ| and Σ |p − aᵢ|.
        let x = [0.3, -0.5, 1.2];
        let mut want = [0.0; 3];
        for a in XA {
            let r = ((x[0] - a[0]).powi(2) + (x[1] - a[1]).powi(2)).sqrt();
            want[0] += x[2] * (x[0] - a[0]) / r;
            want[1] += x[2] * (x[1] - a[1]) / r;
            want[2] += r;
        }
        crate::common::close_to("to_points", &to_points::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(kernel_sum, [0.3, 1.7]);
        all_orders!(to_points, [0.3, -0.5, 1.2]);
    }
}

/// Pieces of a constant table walked with their positions (`for (t, pair) in
/// GOLD.windows(2).enumerate()`, a CRF's gold path; `chunks(2).enumerate()`), at every
/// order. Before 2026-12-08: gradients only ("it walks the pieces of the constant `GOLD`
/// in a `for`").
mod constant_pieces_enumerated {
    use mochi::prelude::*;

    const GOLD: [usize; 4] = [0, 2, 1, 1];
    const W: [f64; 5] = [0.5, -1.0, 2.0, 0.25, 1.5];

    #[differentiable]
    pub fn gold_path(x: &[f64]) -> f64 {
        let tr = |a: usize, b: usize| x[a * 3 + b];
        let mut s = 0.0;
        for (t, pair) in GOLD.windows(2).enumerate() {
            s += (t as f64 + 1.0) * tr(pair[0], pair[1]) * tr(pair[1], pair[0]);
        }
        for (k, c) in W.chunks(2).enumerate() {
            s += c.iter().sum::<f64>() * x[k] * x[k];
        }
        s
    }

    #[test]
    fn by_hand() {
        let x: Vec<f64> = (0..9).map(|k| 0.1 * k as f64 - 0.35).collect();
        let mut want = vec![0.0; 9];
        for t in 0..3 {
            let (a, b) = (GOLD[t], GOLD[t + 1]);
            let w = t as f64 + 1.0;
            want[a * 3 + b] += w * x[b * 3 + a];
            want[b * 3 + a] += w * x[a * 3 + b];
        }
        for (k, c) in W.chunks(2).enumerate() {
            want[k] += 2.0 * c.iter().sum::<f64>() * x[k];
        }
        crate::common::close_to("gold_path", &gold_path::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(gold_path, [0.1, -0.3, 0.5, 0.7, -0.2, 0.4, 0.9, -0.6, 0.3]);
    }
}

/// Data made inside the function from constants and handed to marked helpers beside
/// a float literal (`helper(&ls, 1.0)` of a `let ls = vec![LS[0], LS[1]];`,
/// `rowsum(&k)` of a Gram matrix `k` of fixed points): the function itself failed to
/// compile before 2026-12-08 (E0308 "expected `&[f64]`, found `&Vec<__MochiT>`" in its
/// generic form, which every `#[differentiable]` function has) or had no Hessian ("it
/// calls `rowsum`, whose twin is not known").
mod data_made_of_constants {
    use mochi::prelude::*;

    const LS: [f64; 2] = [0.7, 1.1];
    const XS: [f64; 3] = [0.1, 0.5, 0.9];

    #[differentiable]
    pub fn scaled_sum(ls: &[f64], s: f64) -> f64 {
        ls.iter().map(|v| v * s).sum()
    }

    #[differentiable]
    pub fn gram(xs: &[f64], l: f64) -> Vec<Vec<f64>> {
        let n = xs.len();
        let mut k = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                k[i][j] = (-(xs[i] - xs[j]).powi(2) / (2.0 * l * l)).exp();
            }
        }
        k
    }

    #[differentiable]
    pub fn rowsum(a: &[Vec<f64>]) -> Vec<f64> {
        a.iter().map(|r| r.iter().sum::<f64>()).collect()
    }

    #[differentiable]
    pub fn weighted(x: &[f64]) -> f64 {
        let ls = vec![LS[0], LS[1]];
        let k = gram(&XS, 0.9);
        let r = rowsum(&k);
        let c = scaled_sum(&ls, 2.0);
        c * x[0] * x[1] + r.iter().zip(x.iter()).map(|(a, b)| a * b * b).sum::<f64>()
    }

    #[test]
    fn by_hand() {
        let x = [0.3, -0.2, 0.5];
        let c = 2.0 * (LS[0] + LS[1]);
        let r: Vec<f64> = (0..3)
            .map(|i| {
                (0..3)
                    .map(|j| (-(XS[i] - XS[j]).powi(2) / (2.0 * 0.81)).exp())
                    .sum()
            })
            .collect();
        let want = [
            c * x[1] + 2.0 * r[0] * x[0],
            c * x[0] + 2.0 * r[1] * x[1],
            2.0 * r[2] * x[2],
        ];
        crate::common::close_to("weighted", &weighted::gradient(&x), &want, 1e-14);
        let h = weighted::hessian(&x);
        let want_h = [
            [2.0 * r[0], c, 0.0],
            [c, 2.0 * r[1], 0.0],
            [0.0, 0.0, 2.0 * r[2]],
        ];
        for i in 0..3 {
            crate::common::close_to("weighted H", &h.row(i).to_vec(), &want_h[i], 1e-14);
        }
    }

    mod t {
        use crate::all_orders;
        all_orders!(weighted, [0.3, -0.2, 0.5]);
    }
}

/// A drained range walked by a chain (`v.drain(1..3).sum()`, `v.drain(1..4).rev()
/// .collect()`) and a range copied to the end (`v.extend_from_within(1..3)`), at every
/// order. Before 2026-12-08: "`.drain(..)` changes the length of a differentiable
/// buffer" (only `drain(..).collect()` whole and `drain(..);` were taken) and "no rule
/// for `extend_from_within`".
mod drained_chains {
    use mochi::prelude::*;

    #[differentiable]
    pub fn drained_sum(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let s: f64 = v.drain(1..3).sum();
        s * v[0] + v.len() as f64
    }

    #[differentiable]
    pub fn within(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.extend_from_within(1..3);
        v.iter()
            .enumerate()
            .map(|(k, e)| (k as f64 + 1.0) * e * e)
            .sum()
    }

    #[differentiable]
    pub fn drained_reversed(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let t: Vec<f64> = v.drain(1..4).rev().collect();
        t[0] * v[0] + 2.0 * t[2] * v[1]
    }

    /// Chains over drained ranges inside larger expressions (since 2026-12-09; before,
    /// "`.drain(..)` changes the length …" unless bound by a `let` of their own):
    /// 2x₀ + x₀² + x₁² + x₄·x₂ + (x₂·x₃ when x₀ > 0, else 0).
    #[differentiable(higher_order)]
    pub fn drained_in_expressions(x: &[f64]) -> f64 {
        let mut s = x.to_vec();
        let a = x[0] * 2.0 + s.drain(..2).map(|v| v * v).sum::<f64>();
        let mut total = 0.0;
        total += s.drain(2..).sum::<f64>();
        let b = if x[0] > 0.0 {
            s.drain(..).product::<f64>()
        } else {
            0.0
        };
        a + total * x[2] + b
    }

    /// `return v.drain(1..).map(f).sum::<f64>();` in a branch: Σₖ₌₁ xₖ² when x₀ > 0,
    /// else x₀.
    #[differentiable]
    pub fn drained_in_return(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        if x[0] > 0.0 {
            return v.drain(1..).map(|t| t * t).sum::<f64>();
        }
        v[0]
    }

    const X: [f64; 5] = [0.3, 0.2, 0.5, 0.7, -0.4];

    #[test]
    fn in_return() {
        let x = X;
        let want = [0.0, 2.0 * x[1], 2.0 * x[2], 2.0 * x[3], 2.0 * x[4]];
        crate::common::close_to(
            "drained_in_return",
            &drained_in_return::gradient(&x),
            &want,
            1e-15,
        );
        let y = [-1.0, 2.0];
        crate::common::close_to(
            "drained_in_return",
            &drained_in_return::gradient(&y),
            &[1.0, 0.0],
            1e-15,
        );
    }

    #[test]
    fn in_expressions() {
        let x = X;
        let want = [2.0 + 2.0 * x[0], 2.0 * x[1], x[4] + x[3], x[2], x[2]];
        crate::common::close_to(
            "drained_in_expressions",
            &drained_in_expressions::gradient(&x),
            &want,
            1e-15,
        );
        let mut y = X;
        y[0] = -0.3;
        let want = [2.0 + 2.0 * y[0], 2.0 * y[1], y[4], 0.0, y[2]];
        crate::common::close_to(
            "drained_in_expressions",
            &drained_in_expressions::gradient(&y),
            &want,
            1e-15,
        );
    }

    #[test]
    fn by_hand() {
        let x = X;
        // (x₁ + x₂)·x₀ + 3
        let (y, g) = drained_sum::value_and_gradient(&x);
        assert!((y - ((x[1] + x[2]) * x[0] + 3.0)).abs() < 1e-15);
        crate::common::close_to(
            "drained_sum",
            &g,
            &[x[1] + x[2], x[0], x[0], 0.0, 0.0],
            1e-15,
        );
        // v = [x₀, …, x₄, x₁, x₂]: weights 1..=5 and 6, 7 on the copies.
        let w = [1.0, 2.0 + 6.0, 3.0 + 7.0, 4.0, 5.0];
        let want: Vec<f64> = (0..5).map(|k| 2.0 * w[k] * x[k]).collect();
        crate::common::close_to("within", &within::gradient(&x), &want, 1e-14);
        // t = [x₃, x₂, x₁], v = [x₀, x₄]: x₃x₀ + 2x₁x₄.
        let want = [x[3], 2.0 * x[4], 0.0, x[0], 2.0 * x[1]];
        crate::common::close_to(
            "drained_reversed",
            &drained_reversed::gradient(&x),
            &want,
            1e-15,
        );
    }

    mod t {
        use crate::all_orders;
        all_orders!(drained_sum, super::X);
        all_orders!(within, super::X);
        all_orders!(drained_reversed, super::X);
        all_orders!(drained_in_expressions, super::X);
    }
}

/// Class counts kept in a map over a constant table of labels
/// (`*counts.entry(l).or_insert(0) += 1` in `for &l in LABELS.iter()`), then the group
/// means' weighted squares, at every order. Before 2026-12-08: gradients only ("its
/// generic form cannot be derived (… assignment to this place is not supported …)").
mod counts_by_label {
    use mochi::prelude::*;
    use std::collections::HashMap;

    const LABELS: [usize; 6] = [1, 0, 2, 0, 2, 2];

    #[differentiable]
    pub fn group_means(x: &[f64]) -> f64 {
        let mut counts: HashMap<usize, usize> = HashMap::new();
        for &l in LABELS.iter() {
            *counts.entry(l).or_insert(0) += 1;
        }
        let mut sums = vec![0.0; 3];
        for (v, &l) in x.iter().zip(LABELS.iter()) {
            sums[l] += *v;
        }
        let mut f = 0.0;
        for l in 0..3 {
            let m = sums[l] / counts[&l] as f64;
            f += (l as f64 + 1.0) * m * m;
        }
        f
    }

    #[test]
    fn by_hand() {
        // Σ_l (l + 1)·(S_l / n_l)²: H[i][j] = 2(l + 1)/n_l² when i, j share label l.
        let x = [0.3, 0.2, 0.5, 0.7, -0.4, 0.1];
        let n = [2.0, 1.0, 3.0];
        let h = group_means::hessian(&x);
        for i in 0..6 {
            for j in 0..6 {
                let (li, lj) = (LABELS[i], LABELS[j]);
                let want = if li == lj {
                    2.0 * (li as f64 + 1.0) / (n[li] * n[li])
                } else {
                    0.0
                };
                assert!(
                    (h[[i, j]] - want).abs() < 1e-14,
                    "H[{i},{j}] = {} against {want}",
                    h[[i, j]]
                );
            }
        }
    }

    mod t {
        use crate::all_orders;
        all_orders!(group_means, [0.3, 0.2, 0.5, 0.7, -0.4, 0.1]);
    }
}

/// A type of your own, its operators and its methods declared in one module and used
/// in another that imports the module with a glob (`use crate::…::geom::*;`), at every
/// order. Before 2026-12-08: "no rule for `-` with arguments `(&geom::V2, &geom::V2)`"
/// (the rules' traits were private to the type's module).
mod types_from_another_module {
    pub mod geom {
        use mochi::prelude::*;
        use std::ops::{Add, Sub};

        #[derive(Clone, Copy, Debug, Tangent)]
        pub struct V2 {
            pub x: f64,
            pub y: f64,
        }

        #[differentiable(higher_order)]
        impl Add for V2 {
            type Output = V2;
            fn add(self, o: V2) -> V2 {
                V2 {
                    x: self.x + o.x,
                    y: self.y + o.y,
                }
            }
        }

        #[differentiable(higher_order)]
        impl Sub for V2 {
            type Output = V2;
            fn sub(self, o: V2) -> V2 {
                V2 {
                    x: self.x - o.x,
                    y: self.y - o.y,
                }
            }
        }

        #[differentiable(higher_order)]
        impl V2 {
            pub fn norm2(&self) -> f64 {
                self.x * self.x + self.y * self.y
            }
        }
    }

    pub mod user {
        use super::geom::*;
        use mochi::prelude::*;

        #[differentiable(higher_order)]
        pub fn spread(x: &[f64]) -> f64 {
            let a = V2 { x: x[0], y: x[1] };
            let b = V2 { x: x[2], y: x[3] };
            (a - b).norm2() + (a + b).x * a.norm2()
        }

        mod t {
            use crate::all_orders;
            all_orders!(spread, [0.3, 0.2, 0.5, -0.7]);
        }
    }

    #[test]
    fn by_hand() {
        // |a − b|² + (a₀ + b₀)|a|².
        let x = [0.3, 0.2, 0.5, -0.7];
        let n = x[0] * x[0] + x[1] * x[1];
        let s = x[0] + x[2];
        let want = [
            2.0 * (x[0] - x[2]) + n + 2.0 * s * x[0],
            2.0 * (x[1] - x[3]) + 2.0 * s * x[1],
            -2.0 * (x[0] - x[2]) + n,
            -2.0 * (x[1] - x[3]),
        ];
        crate::common::close_to("spread", &user::spread::gradient(&x), &want, 1e-15);
    }
}

/// A type of your own imported by name into another module (`use crate::geom::Point2;`,
/// `use super::{C2, S1};`, a child module's `use super::P;` of a private type): its
/// marked operators (with the float on either side, `Neg`), methods taking the type and
/// by value, and associated constructors, at every order. Before 2026-12-09: "no rule
/// for `-` with arguments `(&geom::Point2, &geom::Point2)`" (a name brings the type, not the
/// rule traits of its blocks; only a glob of the module worked).
mod types_imported_by_name {
    pub mod geom {
        use mochi::prelude::*;
        use std::ops::{Add, Mul, Neg, Sub};

        #[derive(Clone, Copy, Debug, Tangent)]
        pub struct Point2 {
            pub x: f64,
            pub y: f64,
        }

        #[differentiable(higher_order)]
        impl Add for Point2 {
            type Output = Point2;
            fn add(self, o: Point2) -> Point2 {
                Point2 {
                    x: self.x + o.x,
                    y: self.y + o.y,
                }
            }
        }

        #[differentiable(higher_order)]
        impl Sub for Point2 {
            type Output = Point2;
            fn sub(self, o: Point2) -> Point2 {
                Point2 {
                    x: self.x - o.x,
                    y: self.y - o.y,
                }
            }
        }

        #[differentiable(higher_order)]
        impl Mul<f64> for Point2 {
            type Output = Point2;
            fn mul(self, k: f64) -> Point2 {
                Point2 {
                    x: self.x * k,
                    y: self.y * k,
                }
            }
        }

        #[differentiable(higher_order)]
        impl Mul<Point2> for f64 {
            type Output = Point2;
            fn mul(self, v: Point2) -> Point2 {
                Point2 {
                    x: self * v.x,
                    y: self * v.y,
                }
            }
        }

        #[differentiable(higher_order)]
        impl Neg for Point2 {
            type Output = Point2;
            fn neg(self) -> Point2 {
                Point2 {
                    x: -self.x,
                    y: -self.y,
                }
            }
        }

        #[differentiable(higher_order)]
        impl Point2 {
            pub fn new(x: f64, y: f64) -> Point2 {
                Point2 { x, y }
            }
            pub fn norm2(&self) -> f64 {
                self.x * self.x + self.y * self.y
            }
            pub fn dot(&self, o: &Point2) -> f64 {
                self.x * o.x + self.y * o.y
            }
            pub fn scaled(self, k: f64) -> Point2 {
                Point2 {
                    x: self.x * k,
                    y: self.y * k,
                }
            }
        }

        #[derive(Clone, Copy, Debug, Tangent)]
        struct P {
            a: f64,
        }

        #[differentiable(higher_order)]
        impl P {
            fn sq(&self) -> f64 {
                self.a * self.a
            }
        }

        /// A child module of the private type's.
        pub mod child {
            use super::P;
            use mochi::prelude::*;

            #[differentiable(higher_order)]
            pub fn psq(x: &[f64]) -> f64 {
                let p = P { a: x[0] };
                p.sq() * x[1]
            }

            mod t {
                use crate::all_orders;
                all_orders!(psq, [1.5, 2.0]);
            }
        }
    }

    pub mod user {
        use super::geom::Point2;
        use mochi::prelude::*;

        /// 0.5(a + b) − (−a)·a₀ · b + |a − b|² + (a₀ + b₀)|a|².
        #[differentiable(higher_order)]
        pub fn spread(x: &[f64]) -> f64 {
            let a = Point2 { x: x[0], y: x[1] };
            let b = Point2::new(x[2], x[3]);
            let c = 0.5 * (a + b) - (-a).scaled(x[0]);
            (a - b).norm2() + (a + b).x * a.norm2() + c.dot(&b)
        }

        /// Gradients of a function taking the type itself.
        #[differentiable]
        pub fn energy(a: Point2, b: Point2) -> f64 {
            let d = a - b;
            d.norm2() + a.dot(&b) + (d * 2.0).norm2()
        }

        mod t {
            use crate::all_orders;
            all_orders!(spread, [0.3, 0.2, 0.5, -0.7]);
        }
    }

    pub mod shapes {
        pub mod defs {
            use mochi::prelude::*;
            use std::ops::Add;

            #[derive(Clone, Copy, Debug, Tangent)]
            pub(crate) struct C2 {
                pub(crate) re: f64,
                pub(crate) im: f64,
            }

            #[differentiable(higher_order)]
            impl Add for C2 {
                type Output = C2;
                fn add(self, o: C2) -> C2 {
                    C2 {
                        re: self.re + o.re,
                        im: self.im + o.im,
                    }
                }
            }

            #[differentiable(higher_order)]
            impl C2 {
                pub(crate) fn abs2(&self) -> f64 {
                    self.re * self.re + self.im * self.im
                }
            }

            #[derive(Clone, Copy, Debug, Tangent)]
            pub(super) struct S1 {
                pub(super) v: f64,
            }

            #[differentiable(higher_order)]
            impl S1 {
                pub(super) fn cube(&self) -> f64 {
                    self.v * self.v * self.v
                }
            }
        }

        use defs::{C2, S1};
        use mochi::prelude::*;

        /// |(x₀ + x₁, x₁ + 1)|² + x₀³.
        #[differentiable(higher_order)]
        pub fn both(x: &[f64]) -> f64 {
            let c = C2 { re: x[0], im: x[1] } + C2 { re: x[1], im: 1.0 };
            let s = S1 { v: x[0] };
            c.abs2() + s.cube()
        }

        mod t {
            use crate::all_orders;
            all_orders!(both, [0.7, -0.4]);
        }
    }

    /// Two types of one name, each with a constructor of the same arguments, one
    /// reached through the crate's path (before 2026-12-09, beside the error of a name,
    /// "type annotations needed" where both constructors were reached).
    pub mod pa {
        use mochi::prelude::*;

        #[derive(Clone, Copy, Debug, Tangent)]
        pub struct Pt {
            pub u: f64,
            pub v: f64,
        }

        #[differentiable(higher_order)]
        impl Pt {
            pub fn new(u: f64, v: f64) -> Pt {
                Pt { u, v }
            }
            pub fn size(&self) -> f64 {
                self.u * self.u + self.v * self.v
            }
        }
    }

    pub mod pb {
        use mochi::prelude::*;

        #[derive(Clone, Copy, Debug, Tangent)]
        pub struct Pt {
            pub r: f64,
            pub s: f64,
        }

        #[differentiable(higher_order)]
        impl Pt {
            pub fn new(r: f64, s: f64) -> Pt {
                Pt { r, s: 3.0 * s }
            }
            pub fn size(&self) -> f64 {
                self.r * self.s
            }
        }
    }

    pub mod paths {
        use super::pa::Pt;
        use mochi::prelude::*;

        /// x₀² + x₁² + 3x₁x₀ (the second by the crate's path to `pb::Pt`).
        #[differentiable]
        pub fn two_pts(x: &[f64]) -> f64 {
            let p = Pt::new(x[0], x[1]);
            let r = crate::types_imported_by_name::pb::Pt::new(x[1], x[0]);
            p.size() + r.size()
        }

        /// The type imported inside the body: |a − b|².
        #[differentiable]
        pub fn imported_in_body(x: &[f64]) -> f64 {
            use crate::types_imported_by_name::geom::Point2;
            let a = Point2::new(x[0], x[1]);
            let b = Point2 { x: x[2], y: x[3] };
            (a - b).norm2()
        }

        /// Σₖ₌₁³ |a − (k, 0)|²: a constructor given a float of a loop counter, which
        /// carries no derivative (before 2026-12-09, no Hessian: "it calls
        /// `Point2::new`, whose twin is not known").
        #[differentiable(higher_order)]
        pub fn from_counter(x: &[f64]) -> f64 {
            use super::geom::Point2;
            let a = Point2::new(x[0], x[1]);
            let mut s = 0.0;
            for k in 1..4 {
                let kf = k as f64;
                s += (a - Point2::new(kf, 0.0)).norm2();
            }
            s
        }

        mod t {
            use crate::all_orders;
            all_orders!(from_counter, [0.3, 0.2]);
        }

        /// Three points of a constant table.
        pub const TABLE: [[f64; 2]; 3] = [[1.0, 0.0], [0.0, 0.5], [-0.6, -0.3]];

        /// Σₖ |a − (pₖ₀, pₖ₁)|² over `TABLE.iter()`: a constructor given the elements of
        /// a constant table, which the generic form holds in its scalar (before, no
        /// Hessian: "expected `f64`, found type parameter" at `Point2::new`).
        #[differentiable(higher_order)]
        pub fn from_table(x: &[f64]) -> f64 {
            use super::geom::Point2;
            let a = Point2::new(x[0], x[1]);
            TABLE
                .iter()
                .map(|p| (a - Point2::new(p[0], p[1])).norm2())
                .sum()
        }

        mod t2 {
            use crate::all_orders;
            all_orders!(from_table, [0.3, 0.2]);
        }
    }

    /// One `Pt` glob-imported (its rule traits in scope) and the other reached by its
    /// path, each constructor taking two floats. On 2026-12-08's build the second call
    /// reached the first type's rule, silently: value 0.26 against the function's 0.31
    /// at (0.3, 0.2), gradient (1.2, 0.8) against (1.2, 1.3). A longer path is now a
    /// rule method of its own, keyed by the type it names.
    pub mod glob_and_path {
        use super::pa::*;
        use mochi::prelude::*;

        /// x₀² + x₁² + 3x₁x₀.
        #[differentiable]
        pub fn two_pts(x: &[f64]) -> f64 {
            let p = Pt::new(x[0], x[1]);
            let r = crate::types_imported_by_name::pb::Pt::new(x[1], x[0]);
            p.size() + r.size()
        }

        #[test]
        fn value_and_gradient() {
            let x = [0.3, 0.2];
            let (y, g) = two_pts::value_and_gradient(&x);
            assert!(
                (y - two_pts(&x)).abs() < 1e-15,
                "{y} against {}",
                two_pts(&x)
            );
            let want = [2.0 * x[0] + 3.0 * x[1], 2.0 * x[1] + 3.0 * x[0]];
            crate::common::close_to("two_pts", &g, &want, 1e-15);
        }
    }

    #[test]
    fn by_hand() {
        use geom::Point2;
        let x = [0.3, 0.2, 0.5, -0.7];
        // c = (0.5 + x₀)a + 0.5b, so c·b = (0.5 + x₀)(a·b) + 0.5|b|².
        let n = x[0] * x[0] + x[1] * x[1];
        let s = x[0] + x[2];
        let ab = x[0] * x[2] + x[1] * x[3];
        let k = 0.5 + x[0];
        let want = [
            2.0 * (x[0] - x[2]) + n + 2.0 * s * x[0] + ab + k * x[2],
            2.0 * (x[1] - x[3]) + 2.0 * s * x[1] + k * x[3],
            -2.0 * (x[0] - x[2]) + n + k * x[0] + x[2],
            -2.0 * (x[1] - x[3]) + k * x[1] + x[3],
        ];
        crate::common::close_to("spread", &user::spread::gradient(&x), &want, 1e-14);

        // 5|a − b|² + a·b.
        let (a, b) = (Point2 { x: 1.0, y: 2.0 }, Point2 { x: 0.5, y: -1.0 });
        let (ga, gb) = user::energy::gradient(a, b);
        let got = [ga.x, ga.y, gb.x, gb.y];
        let want = [
            10.0 * 0.5 + 0.5,
            10.0 * 3.0 - 1.0,
            -10.0 * 0.5 + 1.0,
            -10.0 * 3.0 + 2.0,
        ];
        crate::common::close_to("energy", &got, &want, 1e-14);

        let y = [0.7, -0.4];
        let (re, im) = (y[0] + y[1], y[1] + 1.0);
        let want = [2.0 * re + 3.0 * y[0] * y[0], 2.0 * re + 2.0 * im];
        crate::common::close_to("both", &shapes::both::gradient(&y), &want, 1e-14);
        crate::common::close_to(
            "psq",
            &geom::child::psq::gradient(&[1.5, 2.0]),
            &[6.0, 2.25],
            1e-15,
        );

        let want = [2.0 * x[0] + 3.0 * x[1], 2.0 * x[1] + 3.0 * x[0], 0.0, 0.0];
        crate::common::close_to("two_pts", &paths::two_pts::gradient(&x), &want, 1e-15);
        let want = [
            2.0 * (x[0] - x[2]),
            2.0 * (x[1] - x[3]),
            -2.0 * (x[0] - x[2]),
            -2.0 * (x[1] - x[3]),
        ];
        crate::common::close_to(
            "imported_in_body",
            &paths::imported_in_body::gradient(&x),
            &want,
            1e-15,
        );
        let y = [0.3, 0.2];
        let want = [2.0 * (3.0 * y[0] - 6.0), 6.0 * y[1]];
        crate::common::close_to(
            "from_counter",
            &paths::from_counter::gradient(&y),
            &want,
            1e-14,
        );
        // 2Σₖ(a − pₖ) with Σₖ pₖ = (0.4, 0.2).
        let want = [2.0 * (3.0 * y[0] - 0.4), 2.0 * (3.0 * y[1] - 0.2)];
        crate::common::close_to("from_table", &paths::from_table::gradient(&y), &want, 1e-14);
    }
}

/// A flattened chain whose later stages count positions across the rows:
/// `img.iter().flatten().zip(W.iter())`, `.enumerate()`, `flat_map(|r| r.iter().map(f))
/// .skip(1).step_by(2)`, `for (k, p) in rows.iter().flatten().enumerate()`,
/// `rows.into_iter().flatten().rev().take(3).collect()`. Before 2026-12-09: "this
/// iterator chain (`.zip(..)` …) is not one the derivation writes as a loop" (only
/// `map`, `filter`, `filter_map`, `copied` and `cloned` could follow a flattening).
#[allow(clippy::ptr_arg, clippy::useless_vec)]
mod flattened_with_positions {
    use mochi::prelude::*;

    const W: [f64; 4] = [0.5, -1.0, 2.0, 0.25];

    /// Σₖ xₖ Wₖ through rows of two.
    #[differentiable(higher_order)]
    pub fn weighted(x: &[f64]) -> f64 {
        let img: Vec<Vec<f64>> = x.chunks(2).map(|c| c.to_vec()).collect();
        img.iter()
            .flatten()
            .zip(W.iter())
            .map(|(p, w)| p * w * p)
            .sum()
    }

    /// Σₖ k xₖ.
    #[differentiable(higher_order)]
    pub fn positions(x: &[f64]) -> f64 {
        let img = vec![vec![x[0], x[1]], vec![x[2], x[3]]];
        img.iter()
            .flatten()
            .enumerate()
            .map(|(k, &p)| p * p * k as f64)
            .sum()
    }

    /// Σₖ (k + 1) xₖ² over rows of three and one.
    #[differentiable(higher_order)]
    pub fn in_a_for(x: &[f64]) -> f64 {
        let rows = vec![vec![x[0], x[1], x[2]], vec![x[3]]];
        let mut s = 0.0;
        for (k, p) in rows.iter().flatten().enumerate() {
            s += (k as f64 + 1.0) * p * p;
        }
        s
    }

    /// sin(2x₁) + sin(2x₃): the doubled elements from the second, every other one.
    #[differentiable(higher_order)]
    pub fn skipped(x: &[f64]) -> f64 {
        let rows: Vec<Vec<f64>> = x.chunks(2).map(|c| c.to_vec()).collect();
        rows.iter()
            .flat_map(|r| r.iter().map(|v| v * 2.0))
            .skip(1)
            .step_by(2)
            .map(|v| v.sin())
            .sum::<f64>()
    }

    /// 3x₃ + x₂x₁: the last three, from the end.
    #[differentiable(higher_order)]
    pub fn reversed(x: &[f64]) -> f64 {
        let rows = vec![vec![x[0], x[1]], vec![x[2], x[3]]];
        let v: Vec<f64> = rows.into_iter().flatten().rev().take(3).collect();
        v[0] * 3.0 + v[1] * v[2]
    }

    mod t {
        use crate::all_orders;
        all_orders!(weighted, [0.3, -0.8, 1.1, 0.6]);
        all_orders!(positions, [0.3, -0.8, 1.1, 0.6]);
        all_orders!(in_a_for, [0.3, -0.8, 1.1, 0.6]);
        all_orders!(skipped, [0.3, -0.8, 1.1, 0.6]);
        all_orders!(reversed, [0.3, -0.8, 1.1, 0.6]);
    }

    #[test]
    fn by_hand() {
        let x = [0.3, -0.8, 1.1, 0.6];
        let w: Vec<f64> = (0..4).map(|k| 2.0 * W[k] * x[k]).collect();
        crate::common::close_to("weighted", &weighted::gradient(&x), &w, 1e-15);
        let w: Vec<f64> = (0..4).map(|k| 2.0 * k as f64 * x[k]).collect();
        crate::common::close_to("positions", &positions::gradient(&x), &w, 1e-15);
        let w: Vec<f64> = (0..4).map(|k| 2.0 * (k as f64 + 1.0) * x[k]).collect();
        crate::common::close_to("in_a_for", &in_a_for::gradient(&x), &w, 1e-15);
        let h = in_a_for::hessian(&x);
        for k in 0..4 {
            assert_eq!(h[[k, k]], 2.0 * (k as f64 + 1.0));
        }
        let w = [0.0, 2.0 * (2.0 * x[1]).cos(), 0.0, 2.0 * (2.0 * x[3]).cos()];
        crate::common::close_to("skipped", &skipped::gradient(&x), &w, 1e-15);
        crate::common::close_to(
            "reversed",
            &reversed::gradient(&x),
            &[0.0, x[2], x[1], 3.0],
            1e-15,
        );
    }

    /// A parameter of rows, its maximum (`fold(f64::NEG_INFINITY, f64::max)` after
    /// `copied`, which a flattening took before): the cotangent in the row it came from.
    #[differentiable]
    pub fn peak(img: &Vec<Vec<f64>>) -> f64 {
        img.iter()
            .flatten()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    #[test]
    fn peak_of_rows() {
        let m = vec![vec![1.0, 5.0], vec![2.0]];
        assert_eq!(peak::gradient(&m), vec![vec![0.0, 1.0], vec![0.0]]);
    }
}

/// A series summed while its terms are large (`successors(..).take_while(|t| t.abs() >
/// tol)`, the step a block ending in `Some(..)`), and `rfold`/`rfind`, at every order.
/// Before 2026-12-09: "closures are differentiated only as the argument of an adapter
/// method" and "no rule for `rfold`".
mod series_until_small {
    use mochi::prelude::*;

    /// J₀(x₀) by its power series, the terms kept while |t| > 1e-17.
    #[differentiable(higher_order)]
    pub fn bessel_j0(x: &[f64]) -> f64 {
        let y = 0.25 * x[0] * x[0];
        std::iter::successors(Some((1.0_f64, 0.0_f64)), |&(term, k)| {
            let k1 = k + 1.0;
            Some((-term * y / (k1 * k1), k1))
        })
        .take_while(|&(term, _)| term.abs() > 1e-17)
        .map(|(term, _)| term)
        .sum()
    }

    /// Σ rᵏ while rᵏ > 10⁻³, times x₁.
    #[differentiable(higher_order)]
    pub fn geometric(x: &[f64]) -> f64 {
        let r = x[0];
        let s: f64 = std::iter::successors(Some(1.0_f64), |&t| Some(t * r))
            .take_while(|&t| t > 1e-3)
            .sum();
        s * x[1]
    }

    /// Horner from the last coefficient by `rfold`: p(t) = Σₖ cₖ tᵏ, t = x₀, cₖ = xₖ₊₁.
    #[differentiable(higher_order)]
    pub fn horner(x: &[f64]) -> f64 {
        let t = x[0];
        x[1..].iter().rfold(0.0, |acc, &c| acc * t + c)
    }

    /// The last coefficient above ½ (by `rfind`), squared.
    #[differentiable]
    pub fn last_large(x: &[f64]) -> f64 {
        let v = x.iter().rfind(|&&v| v > 0.5).copied().unwrap_or(0.0);
        v * v
    }

    mod t {
        use crate::all_orders;
        all_orders!(bessel_j0, [1.3]);
        all_orders!(geometric, [0.5, 2.0]);
        all_orders!(horner, [0.7, 1.0, -2.0, 0.5, 3.0]);
    }

    #[test]
    fn by_hand() {
        // J₀′ = −J₁.
        let x: f64 = 1.3;
        let y = 0.25 * x * x;
        let (mut t, mut j1) = (0.5 * x, 0.5 * x);
        for k in 1..40 {
            t *= -y / (k as f64 * (k as f64 + 1.0));
            j1 += t;
        }
        crate::common::close_to("bessel_j0", &bessel_j0::gradient(&[x]), &[-j1], 1e-13);
        // 0.5⁹ > 10⁻³ > 0.5¹⁰: Σₖ₌₀⁹ rᵏ.
        let r: f64 = 0.5;
        let s: f64 = (0..10).map(|k| r.powi(k)).sum();
        let ds: f64 = (1..10).map(|k| k as f64 * r.powi(k - 1)).sum();
        crate::common::close_to(
            "geometric",
            &geometric::gradient(&[r, 2.0]),
            &[2.0 * ds, s],
            1e-14,
        );
        let x = [0.7, 1.0, -2.0, 0.5, 3.0];
        let t = x[0];
        let want = [
            -2.0 + 2.0 * 0.5 * t + 3.0 * 3.0 * t * t,
            1.0,
            t,
            t * t,
            t * t * t,
        ];
        crate::common::close_to("horner", &horner::gradient(&x), &want, 1e-14);
        let x = [0.9, 0.6, 0.2, 0.1];
        crate::common::close_to(
            "last_large",
            &last_large::gradient(&x),
            &[0.0, 1.2, 0.0, 0.0],
            1e-15,
        );
    }
}

/// The element `select_nth_unstable_by` leaves at `k`, read from its result:
/// `let (_, m, _) = v.select_nth_unstable_by(k, cmp);` and `*v.select_nth_…(k, cmp).1`.
/// Before 2026-12-09: "mismatched types" and "no field `1` on type `()`" (only the
/// statement form was taken).
mod selected_element_read {
    use mochi::prelude::*;

    /// The median of an odd count, squared.
    #[differentiable]
    pub fn median_tuple(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let k = v.len() / 2;
        let (_, m, _) = v.select_nth_unstable_by(k, |a, b| a.total_cmp(b));
        *m * *m
    }

    /// NumPy's even median: the upper middle by selection, the lower as the largest
    /// before it.
    #[differentiable]
    pub fn even_median(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let mid = v.len() / 2;
        let hi = *v
            .select_nth_unstable_by(mid, |a, b| a.partial_cmp(b).unwrap())
            .1;
        let lo = v[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lo + hi)
    }

    #[test]
    fn by_hand() {
        let x = [0.9, -0.2, 0.4, 1.7, 0.1];
        crate::common::close_to(
            "median_tuple",
            &median_tuple::gradient(&x),
            &[0.0, 0.0, 0.8, 0.0, 0.0],
            1e-15,
        );
        crate::common::assert_gradient_matches(median_tuple, &median_tuple::gradient(&x), &x);
        let y = [0.9, -0.2, 0.4, 1.7];
        crate::common::close_to(
            "even_median",
            &even_median::gradient(&y),
            &[0.5, 0.0, 0.5, 0.0],
            1e-15,
        );
        assert_eq!(even_median::value_and_gradient(&y).0, even_median(&y));
    }
}

/// A buffer deduplicated in place: `v.dedup()`, `v.dedup_by(|a, b| (*a - *b).abs() <
/// tol)` after a sort, `v.dedup_by_key(|e| key)`, at every order. Before 2026-12-09: "no
/// rule for `dedup_by` with arguments `(&Vec<f64>, &())`".
mod deduplicated_buffers {
    use mochi::prelude::*;

    /// Sorted, neighbours closer than 0.65 to the last kept dropped, then Σ (k + 1)·vₖ.
    #[differentiable(higher_order)]
    pub fn merged_close(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v.dedup_by(|a, b| (*a - *b).abs() < 0.65);
        v.iter()
            .enumerate()
            .map(|(k, &a)| (k as f64 + 1.0) * a * a)
            .sum::<f64>()
    }

    /// Σ of squares of the runs' first elements, plus the sum of the first of each run of
    /// a key (⌊2e⌋) times the count of runs.
    #[differentiable(higher_order)]
    pub fn runs(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.dedup();
        let mut w = x.to_vec();
        w.dedup_by_key(|e| (*e * 2.0).floor() as i64);
        v.iter().map(|t| t * t).sum::<f64>() + w.iter().sum::<f64>() * v.len() as f64
    }

    mod t {
        use crate::all_orders;
        all_orders!(merged_close, [0.3, 1.5, 0.1, 2.6, 2.2]);
    }

    #[test]
    fn by_hand() {
        // Sorted 0.1 0.3 1.5 2.2 2.6: 0.3 and 2.6 dropped; x₂, x₁, x₄ weighted 1, 2, 3.
        let x = [0.3, 1.5, 0.1, 2.6, 2.2];
        let want = [0.0, 4.0 * x[1], 2.0 * x[2], 0.0, 6.0 * x[4]];
        crate::common::close_to("merged_close", &merged_close::gradient(&x), &want, 1e-14);
        // Runs 0.3 0.3 | 0.7 | 0.9 0.9 | 1.2: four firsts; keys 0 0 1 1 1 2: x₀, x₂, x₅.
        let y = [0.3, 0.3, 0.7, 0.9, 0.9, 1.2];
        let want = [
            2.0 * y[0] + 4.0,
            0.0,
            2.0 * y[2] + 4.0,
            2.0 * y[3],
            0.0,
            2.0 * y[5] + 4.0,
        ];
        crate::common::close_to("runs", &runs::gradient(&y), &want, 1e-14);
        let h = runs::hessian(&y);
        assert_eq!((h[[0, 0]], h[[1, 1]], h[[3, 3]]), (2.0, 0.0, 2.0));
    }
}

/// A method building its struct with a field collected from a chain over the crate's
/// structs (`Cloud { pts: self.pts.iter().map(|p| *p * k).collect(), w: self.w }`).
/// Gradients (the block without `higher_order`). Before 2026-12-08: "expected `f64`,
/// found `V3`" at the chain (the collect was read as one of floats).
mod struct_fields_collected {
    use mochi::prelude::*;
    use std::ops::Mul;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V3 {
        pub x: f64,
        pub y: f64,
        pub z: f64,
    }

    #[differentiable]
    impl Mul<f64> for V3 {
        type Output = V3;
        fn mul(self, k: f64) -> V3 {
            V3 {
                x: self.x * k,
                y: self.y * k,
                z: self.z * k,
            }
        }
    }

    #[derive(Clone, Debug, Tangent)]
    pub struct Cloud {
        pub pts: Vec<V3>,
        pub w: f64,
    }

    #[differentiable]
    impl Cloud {
        pub fn scaled(&self, k: f64) -> Self {
            Cloud {
                pts: self.pts.iter().map(|p| *p * k).collect(),
                w: self.w,
            }
        }
    }

    #[differentiable]
    pub fn spread(x: &[f64]) -> f64 {
        let c = Cloud {
            pts: vec![
                V3 {
                    x: x[0],
                    y: x[1],
                    z: x[2],
                },
                V3 {
                    x: x[3],
                    y: x[4],
                    z: x[5],
                },
            ],
            w: 2.0,
        };
        let s = c.scaled(x[6]);
        s.pts.iter().map(|p| p.x * p.y + p.z).sum::<f64>() * s.w
    }

    #[test]
    fn by_hand() {
        // 2 Σ (k²·xᵢyᵢ + k·zᵢ) over the two points.
        let x = [0.3, 0.2, 0.5, 0.7, -0.4, 0.1, 1.5];
        let k = x[6];
        let want = [
            2.0 * k * k * x[1],
            2.0 * k * k * x[0],
            2.0 * k,
            2.0 * k * k * x[4],
            2.0 * k * k * x[3],
            2.0 * k,
            2.0 * (2.0 * k * (x[0] * x[1] + x[3] * x[4]) + x[2] + x[5]),
        ];
        crate::common::close_to("spread", &spread::gradient(&x), &want, 1e-14);
    }
}

/// `std::iter::successors` collected whole (`successors(..).take(4).collect()`) and
/// zipped onto a sub-slice without `take` (`x[..5].iter().zip(successors(..))`), at every
/// order. Before 2026-12-08: "no rule for `collect`" and "closures are differentiated
/// only as the argument of an adapter method".
mod successors_collected_and_zipped {
    use mochi::prelude::*;

    /// p = [x₀, x₀x₁, x₀x₁², x₀x₁³] zipped with x[2..]: Σ x₀x₁ᵏ·x₂₊ₖ.
    #[differentiable]
    pub fn powers_taken(x: &[f64]) -> f64 {
        let p: Vec<f64> = std::iter::successors(Some(x[0]), |&q| Some(q * x[1]))
            .take(4)
            .collect();
        p.iter().zip(x[2..].iter()).map(|(a, b)| a * b).sum()
    }

    /// Σ_{k<5} x_k·rᵏ with r = x₅.
    #[differentiable]
    pub fn powers_zipped(x: &[f64]) -> f64 {
        let r = x[5];
        x[..5]
            .iter()
            .zip(std::iter::successors(Some(1.0), |&q| Some(q * r)))
            .map(|(v, w)| v * w)
            .sum()
    }

    const X: [f64; 6] = [0.3, -0.7, 1.1, 0.4, -0.2, 0.9];

    #[test]
    fn by_hand() {
        let x = X;
        let mut want = [0.0; 6];
        for k in 0..4 {
            let pk = x[0] * x[1].powi(k as i32);
            want[0] += x[1].powi(k as i32) * x[2 + k];
            if k > 0 {
                want[1] += x[0] * k as f64 * x[1].powi(k as i32 - 1) * x[2 + k];
            }
            want[2 + k] += pk;
        }
        crate::common::close_to("powers_taken", &powers_taken::gradient(&x), &want, 1e-14);
        let r = x[5];
        let mut want = [0.0; 6];
        for k in 0..5 {
            want[k] = r.powi(k as i32);
            if k > 0 {
                want[5] += x[k] * k as f64 * r.powi(k as i32 - 1);
            }
        }
        crate::common::close_to("powers_zipped", &powers_zipped::gradient(&x), &want, 1e-14);
    }

    mod t {
        use crate::all_orders;
        all_orders!(powers_taken, super::X);
        all_orders!(powers_zipped, super::X);
    }
}

/// `higher_order` blocks of a struct written in another module than the struct's, which
/// imports the struct's module with a glob (an inherent block and a marked `Div<f64>`),
/// used from a third module that imports the struct by name. (Imported by name in the
/// blocks' module, the first error names the glob: `ui/higher_order_impl_imported_by_name`.)
mod blocks_in_another_module {
    pub mod shapes {
        use mochi::prelude::*;

        #[derive(Clone, Copy, Debug, Tangent)]
        pub struct V2 {
            pub x: f64,
            pub y: f64,
        }
    }

    pub mod ops {
        use super::shapes::*;
        use mochi::prelude::*;

        #[differentiable(higher_order)]
        impl V2 {
            pub fn new(x: f64, y: f64) -> V2 {
                V2 { x, y }
            }
            pub fn norm(&self) -> f64 {
                (self.x * self.x + self.y * self.y).sqrt()
            }
        }

        #[differentiable(higher_order)]
        impl std::ops::Div<f64> for V2 {
            type Output = V2;
            fn div(self, s: f64) -> V2 {
                V2 {
                    x: self.x / s,
                    y: self.y / s,
                }
            }
        }
    }

    pub mod user {
        use super::shapes::V2;
        use mochi::prelude::*;

        /// |(x₀, x₁) / x₂| · x₂² = |(x₀, x₁)| · x₂ (x₂ > 0).
        #[differentiable(higher_order)]
        pub fn scaled_norm(x: &[f64]) -> f64 {
            let a = V2::new(x[0], x[1]) / x[2];
            a.norm() * x[2] * x[2]
        }

        mod t {
            use crate::all_orders;
            all_orders!(scaled_norm, [0.3, -0.4, 1.5]);
        }
    }

    #[test]
    fn by_hand() {
        let x = [0.3, -0.4, 1.5];
        // r = 0.5: ∂/∂xᵢ = xᵢ x₂ / r (i < 2), ∂/∂x₂ = r.
        let want = [0.3 * 1.5 / 0.5, -0.4 * 1.5 / 0.5, 0.5];
        crate::common::close_to(
            "scaled_norm",
            &user::scaled_norm::gradient(&x),
            &want,
            1e-14,
        );
    }
}

/// A chain that drops elements by value (`filter`, `filter_map`) or carries a state
/// (`scan`), followed by a stage that counts positions in what is left: `filter(p)
/// .skip(1)`, `.enumerate()` (also in a `for`), `filter_map(f).step_by(2)`, `map(f)
/// .filter(p).zip(w)`, `scan(..).skip(2)`, `scan(..).step_by(3)`, `filter(p).rev()`,
/// `.take_while(q)`, `.chain(..)`, `scan(..).skip_while(q)`. Before, refused: "this
/// iterator chain (`.skip(..)` …) is not one the derivation writes as a loop".
#[allow(clippy::ptr_arg, clippy::useless_vec)]
mod positions_after_a_filter {
    use mochi::prelude::*;

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    /// Σ v³ over the positive elements after the first.
    #[differentiable(higher_order)]
    pub fn skipped(x: &[f64]) -> f64 {
        x.iter()
            .filter(|v| **v > 0.0)
            .skip(1)
            .map(|v| v * v * v)
            .sum()
    }

    /// Σₖ k sin vₖ over the positive elements, k counted among them.
    #[differentiable(higher_order)]
    pub fn counted(x: &[f64]) -> f64 {
        x.iter()
            .filter(|v| **v > 0.0)
            .enumerate()
            .map(|(k, v)| k as f64 * v.sin())
            .sum()
    }

    /// Σₖ (k + 1) cos vₖ over the elements with |v| > 0.5, in a `for`.
    #[differentiable(higher_order)]
    pub fn in_a_for(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (k, v) in x.iter().filter(|v| v.abs() > 0.5).enumerate() {
            s += (k as f64 + 1.0) * v.cos();
        }
        s
    }

    /// Σ √v over every other positive element.
    #[differentiable(higher_order)]
    pub fn every_other_root(x: &[f64]) -> f64 {
        x.iter()
            .filter_map(|&v| if v > 0.0 { Some(v.sqrt()) } else { None })
            .step_by(2)
            .sum()
    }

    /// Σₖ wₖ (3v)² over the tripled positive elements, zipped with weights.
    #[differentiable(higher_order)]
    pub fn zipped(x: &[f64]) -> f64 {
        let w = [1.0, 2.0, 3.0, 4.0, 5.0];
        x.iter()
            .map(|v| v * 3.0)
            .filter(|v| *v > 0.0)
            .zip(w.iter())
            .map(|(a, b)| a * a * b)
            .sum()
    }

    /// Σ cₖ² over the prefix sums from the third.
    #[differentiable(higher_order)]
    pub fn prefix_sums(x: &[f64]) -> f64 {
        x.iter()
            .scan(0.0, |s, &v| {
                *s += v;
                Some(*s)
            })
            .skip(2)
            .map(|c| c * c)
            .sum()
    }

    /// p₃ + 2p₀ of the running products p, read every third.
    #[differentiable(higher_order)]
    pub fn products(x: &[f64]) -> f64 {
        let v: Vec<f64> = x
            .iter()
            .scan(1.0, |s, &v| {
                *s *= v;
                Some(*s)
            })
            .step_by(3)
            .collect();
        v[1] + 2.0 * v[0]
    }

    /// x₄² + 2x₃² + 3x₂² + 4x₀²: the positive elements from the end.
    #[differentiable(higher_order)]
    pub fn reversed(x: &[f64]) -> f64 {
        x.iter()
            .filter(|v| **v > 0.0)
            .rev()
            .enumerate()
            .map(|(k, v)| (k as f64 + 1.0) * v * v)
            .sum()
    }

    /// Σ v² over the positive elements below 2 until the first that is not, then all.
    #[differentiable(higher_order)]
    pub fn chained_until(x: &[f64]) -> f64 {
        let head: f64 = x
            .iter()
            .filter(|v| **v > 0.0)
            .take_while(|v| **v < 2.0)
            .map(|v| v * v)
            .sum();
        head + x
            .iter()
            .filter(|v| **v < 0.0)
            .chain(x.iter())
            .map(|v| v.sin())
            .sum::<f64>()
    }

    /// Σ cₖ over the prefix sums from the first above 1.
    #[differentiable(higher_order)]
    pub fn sums_from(x: &[f64]) -> f64 {
        x.iter()
            .scan(0.0, |s, &v| {
                *s += v;
                Some(*s)
            })
            .skip_while(|c| *c < 1.0)
            .map(|c| c * c)
            .sum()
    }

    mod t {
        use crate::all_orders;
        all_orders!(reversed, super::X);
        all_orders!(chained_until, super::X);
        all_orders!(sums_from, super::X);
        all_orders!(skipped, super::X);
        all_orders!(counted, super::X);
        all_orders!(in_a_for, super::X);
        all_orders!(every_other_root, super::X);
        all_orders!(zipped, super::X);
        all_orders!(prefix_sums, super::X);
        all_orders!(products, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let close = crate::common::close_to;
        // The positive ones: x₀, x₂, x₃, x₄.
        let g = [
            0.0,
            0.0,
            3.0 * x[2] * x[2],
            3.0 * x[3] * x[3],
            3.0 * x[4] * x[4],
        ];
        close("skipped", &skipped::gradient(&x), &g, 1e-14);
        let g = [0.0, 0.0, x[2].cos(), 2.0 * x[3].cos(), 3.0 * x[4].cos()];
        close("counted", &counted::gradient(&x), &g, 1e-14);
        // |v| > 0.5: x₀, x₂, x₄ at k = 0, 1, 2.
        let g = [-x[0].sin(), 0.0, -2.0 * x[2].sin(), 0.0, -3.0 * x[4].sin()];
        close("in_a_for", &in_a_for::gradient(&x), &g, 1e-14);
        // √ of x₀, x₂, x₃, x₄, every other: x₀ and x₃.
        let g = [0.5 / x[0].sqrt(), 0.0, 0.0, 0.5 / x[3].sqrt(), 0.0];
        close(
            "every_other_root",
            &every_other_root::gradient(&x),
            &g,
            1e-14,
        );
        // 3x₀, 3x₂, 3x₃, 3x₄ with weights 1, 2, 3, 4: 18 w v.
        let g = [18.0 * x[0], 0.0, 36.0 * x[2], 54.0 * x[3], 72.0 * x[4]];
        close("zipped", &zipped::gradient(&x), &g, 1e-13);
        let c: Vec<f64> = (0..5).map(|k| x[..=k].iter().sum()).collect();
        let t = 2.0 * (c[2] + c[3] + c[4]);
        let g = [t, t, t, 2.0 * (c[3] + c[4]), 2.0 * c[4]];
        close("prefix_sums", &prefix_sums::gradient(&x), &g, 1e-13);
        let p3 = x[0] * x[1] * x[2] * x[3];
        let mut g: Vec<f64> = (0..5)
            .map(|j| if j < 4 { p3 / x[j] } else { 0.0 })
            .collect();
        g[0] += 2.0;
        close("products", &products::gradient(&x), &g, 1e-14);
        // Positive from the end: x₄, x₃, x₂, x₀ at k + 1 = 1, 2, 3, 4.
        let g = [8.0 * x[0], 0.0, 6.0 * x[2], 4.0 * x[3], 2.0 * x[4]];
        close("reversed", &reversed::gradient(&x), &g, 1e-14);
        // Positive below 2, in order: x₀, x₂, x₃ (x₄ = 2.1 ends it); sin of x₁ twice.
        let g = [
            2.0 * x[0] + x[0].cos(),
            2.0 * x[1].cos(),
            2.0 * x[2] + x[2].cos(),
            2.0 * x[3] + x[3].cos(),
            x[4].cos(),
        ];
        close("chained_until", &chained_until::gradient(&x), &g, 1e-14);
        // Prefix sums 0.7, 0.4, 1.8, 2.05, 4.15: from c₂ on.
        let c: Vec<f64> = (0..5).map(|k| x[..=k].iter().sum()).collect();
        let t = 2.0 * (c[2] + c[3] + c[4]);
        let g = [t, t, t, 2.0 * (c[3] + c[4]), 2.0 * c[4]];
        close("sums_from", &sums_from::gradient(&x), &g, 1e-13);
    }
}

/// Chains read from an array literal whose closures carry derivatives, with a stage
/// besides `map` and `sum`: `[1.5, 2.25, 2.625].iter().enumerate().map(..).sum()`
/// (Beale's function as JAX's and Optim.jl's tests write it), `.into_iter().skip(1)
/// .collect()`, `.fold(..)`, and a literal of differentiable values read backwards.
/// Before, refused: "`Enumerate<Iter<'_, {float}>>` has no tangent type".
mod literal_sources {
    use mochi::prelude::*;

    /// Σᵢ (cᵢ − x(1 − yⁱ⁺¹))².
    #[differentiable(higher_order)]
    pub fn beale(p: &[f64]) -> f64 {
        let (x, y) = (p[0], p[1]);
        [1.5, 2.25, 2.625]
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let r = c - x * (1.0 - y.powi(i as i32 + 1));
                r * r
            })
            .sum::<f64>()
    }

    /// 2x₀x₁ + 3x₀x₁x₂ + 0.5x₂ + 0.25: the constants after the first, scaled, and a
    /// Horner fold.
    #[differentiable(higher_order)]
    pub fn skipped_and_folded(p: &[f64]) -> f64 {
        let v: Vec<f64> = [1.0, 2.0, 3.0]
            .into_iter()
            .skip(1)
            .map(|c| c * p[0] * p[1])
            .collect();
        v[0] + v[1] * p[2] + [0.5, 0.25].iter().fold(0.0, |a, &c| a * p[2] + c)
    }

    /// 2x₁ + 2x₀: a literal of differentiable values, from the end, counted.
    #[differentiable(higher_order)]
    pub fn of_values(p: &[f64]) -> f64 {
        [p[0], p[1] * 2.0, p[2] * p[2]]
            .iter()
            .rev()
            .enumerate()
            .map(|(k, v)| k as f64 * v)
            .sum::<f64>()
    }

    mod t {
        use crate::all_orders;
        all_orders!(beale, [1.2, 0.4, 0.3]);
        all_orders!(skipped_and_folded, [1.2, 0.4, 0.3]);
        all_orders!(of_values, [1.2, 0.4, 0.3]);
    }

    #[test]
    fn by_hand() {
        let p = [1.2_f64, 0.4, 0.3];
        let (x, y) = (p[0], p[1]);
        let (mut gx, mut gy) = (0.0, 0.0);
        for (i, c) in [1.5, 2.25, 2.625].iter().enumerate() {
            let k = i as i32 + 1;
            let r = c - x * (1.0 - y.powi(k));
            gx += -2.0 * r * (1.0 - y.powi(k));
            gy += 2.0 * r * x * f64::from(k) * y.powi(k - 1);
        }
        crate::common::close_to("beale", &beale::gradient(&p), &[gx, gy, 0.0], 1e-13);
        // 2x₀x₁ + 3x₀x₁x₂ + 0.5x₂ + 0.25.
        let g = [
            2.0 * p[1] + 3.0 * p[1] * p[2],
            2.0 * p[0] + 3.0 * p[0] * p[2],
            3.0 * p[0] * p[1] + 0.5,
        ];
        crate::common::close_to(
            "skipped_and_folded",
            &skipped_and_folded::gradient(&p),
            &g,
            1e-14,
        );
        // Reversed: x₂² at k = 0, 2x₁ at k = 1, x₀ at k = 2.
        crate::common::close_to(
            "of_values",
            &of_values::gradient(&p),
            &[2.0, 2.0, 0.0],
            1e-14,
        );
    }
}

/// Under `higher_order`, an enum's method reading the fields its arms bind by reference
/// (`Ease::InPow(p) => t.powf(*p)` of `match self`, `*d as i32` of an integer), a method
/// taking `self` by value called on the references a loop over a table gives, and a
/// free function matching a borrowed enum with guards. Before, the generic form bound
/// the lifted fields by value: "type `T` cannot be dereferenced", and "`&&Ease:
/// Receive<Ease>` is not satisfied".
mod variant_fields_by_reference {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Ease {
        Linear,
        InPow(f64),
        Poly(f64, u32),
    }

    #[differentiable(higher_order)]
    impl Ease {
        pub fn eased_at(&self, t: f64) -> f64 {
            match self {
                Ease::Linear => t,
                Ease::InPow(p) => t.powf(*p),
                Ease::Poly(c, d) => (t + c).powi(*d as i32) + c * t,
            }
        }
        pub fn eased_by_value(self, t: f64) -> f64 {
            match self {
                Ease::Linear => t,
                Ease::InPow(p) => t.powf(p),
                Ease::Poly(c, d) => (t + c).powi(d as i32),
            }
        }
    }

    pub const TRACK: [Ease; 3] = [Ease::Linear, Ease::InPow(1.5), Ease::Poly(0.5, 3)];

    /// Σᵢ eᵢ(xᵢ) twice over the table.
    #[differentiable(higher_order)]
    pub fn eased(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (i, e) in TRACK.iter().enumerate() {
            s += e.eased_at(x[i]) + e.eased_by_value(x[i]);
        }
        s
    }

    /// r / c for `InPow(c)` with c > 1, c rᵈ for `Poly(c, d)` with d ≥ 2, sin r else.
    #[differentiable(higher_order)]
    pub fn weight_of(k: &Ease, r: f64) -> f64 {
        match k {
            Ease::InPow(c) if *c > 1.0 => r / c,
            Ease::Poly(c, d) if *d >= 2 => c * r.powi(*d as i32),
            _ => r.sin(),
        }
    }

    /// `weight_of` at the table's third entry.
    #[differentiable(higher_order)]
    pub fn weighted(x: &[f64]) -> f64 {
        weight_of(&TRACK[2], x[0]) * x[1]
    }

    mod t {
        use crate::all_orders;
        all_orders!(eased, [0.7, 0.3, 1.4]);
        all_orders!(weighted, [0.8, 1.3]);
    }

    #[test]
    fn by_hand() {
        let x = [0.7_f64, 0.3, 1.4];
        // 2 from the linear entry; 2 · 1.5 x₁^0.5; 2 · 3 (x₂ + 0.5)² + 0.5.
        let g = [2.0, 3.0 * x[1].sqrt(), 6.0 * (x[2] + 0.5).powi(2) + 0.5];
        crate::common::close_to("eased", &eased::gradient(&x), &g, 1e-13);
        let h = weight_of::hessian(&Ease::Poly(0.5, 3), 0.8);
        // d²/dr² 0.5 r³ = 3 r.
        assert!((h[[0, 0]] - 2.4).abs() < 1e-13, "{}", h[[0, 0]]);
    }
}

/// Under `higher_order`, a marked helper over `[f64; 3]` called both with differentiable
/// values and with an array literal of constants (`normalize3([0.3, 0.2, 1.0])`, a fixed
/// view direction). Before: no Hessian, "it calls `normalize3`, whose twin is not known".
mod constant_array_arguments {
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    pub fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    }

    #[differentiable(higher_order)]
    pub fn normalize3(a: [f64; 3]) -> [f64; 3] {
        let l = dot3(a, a).sqrt();
        [a[0] / l, a[1] / l, a[2] / l]
    }

    /// Schlick: f₀ + (1 − f₀)(1 − n·v)⁵ with n = x[..3]/|x[..3]| and a fixed v.
    #[differentiable(higher_order)]
    pub fn fresnel(x: &[f64]) -> f64 {
        let n = normalize3([x[0], x[1], x[2]]);
        let v = normalize3([0.3, 0.2, 1.0]);
        let f0 = x[3];
        f0 + (1.0 - f0) * (1.0 - dot3(n, v)).powi(5)
    }

    mod t {
        use crate::all_orders;
        all_orders!(fresnel, [0.2, 0.1, 0.9, 0.04]);
    }

    #[test]
    fn by_hand() {
        let x = [0.2_f64, 0.1, 0.9, 0.04];
        let l = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        let m = (0.09_f64 + 0.04 + 1.0).sqrt();
        let v = [0.3 / m, 0.2 / m, 1.0 / m];
        let n = [x[0] / l, x[1] / l, x[2] / l];
        let c = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
        // ∂c/∂xᵢ = (vᵢ − c nᵢ)/l; ∂f/∂c = −5(1 − f₀)(1 − c)⁴; ∂f/∂f₀ = 1 − (1 − c)⁵.
        let k = -5.0 * (1.0 - x[3]) * (1.0 - c).powi(4);
        let g = [
            k * (v[0] - c * n[0]) / l,
            k * (v[1] - c * n[1]) / l,
            k * (v[2] - c * n[2]) / l,
            1.0 - (1.0 - c).powi(5),
        ];
        crate::common::close_to("fresnel", &fresnel::gradient(&x), &g, 1e-14);
    }
}

/// Under `higher_order`: a type built by its marked `From` implementations (two of them,
/// `P2::from([a, b])`, `let b: P2 = (a, b).into()`), and lets typed as the type, an
/// array or a `Vec` of it (`let c: P2 = P2::new(..)`, `let ps: [P2; 2] = [..]`).
mod conversions_at_every_order {
    use mochi::prelude::*;
    use std::ops::{Add, Mul};

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct P2 {
        pub x: f64,
        pub y: f64,
    }

    #[differentiable(higher_order)]
    impl From<[f64; 2]> for P2 {
        fn from(a: [f64; 2]) -> Self {
            P2 { x: a[0], y: a[1] }
        }
    }

    #[differentiable(higher_order)]
    impl From<(f64, f64)> for P2 {
        fn from(t: (f64, f64)) -> Self {
            P2 { x: t.0, y: t.1 }
        }
    }

    #[differentiable(higher_order)]
    impl Add for P2 {
        type Output = P2;
        fn add(self, o: P2) -> P2 {
            P2 {
                x: self.x + o.x,
                y: self.y + o.y,
            }
        }
    }

    #[differentiable(higher_order)]
    impl Mul<f64> for P2 {
        type Output = P2;
        fn mul(self, k: f64) -> P2 {
            P2 {
                x: self.x * k,
                y: self.y * k,
            }
        }
    }

    #[differentiable(higher_order)]
    impl P2 {
        pub const ZERO: P2 = P2 { x: 0.0, y: 0.0 };

        pub fn new(x: f64, y: f64) -> P2 {
            P2 { x, y }
        }
        pub fn dot(&self, o: &P2) -> f64 {
            self.x * o.x + self.y * o.y
        }
        /// Different weights on the two fields: x and y mixed up shows.
        pub fn weighted(&self) -> f64 {
            1.3 * self.x - 0.7 * self.y
        }
    }

    /// a = (x₀, x₁), b = (x₁, x₂), c = (x₂x₀, 1):
    /// w(a)·b.y + a·b + c.x·c.y = (1.3x₀ − 0.7x₁)x₂ + x₀x₁ + x₁x₂ + x₂x₀.
    #[differentiable(higher_order)]
    pub fn converted(x: &[f64]) -> f64 {
        let a = P2::from([x[0], x[1]]);
        let b: P2 = (x[1], x[2]).into();
        let c: P2 = P2::new(x[2] * x[0], 1.0);
        a.weighted() * b.y + a.dot(&b) + c.x * c.y
    }

    /// a = (x₀, x₁), ps = [a, (x₀x₁, x₀x₂)], s = [ps₀ + ps₁, 0]:
    /// ps₁·a + w(s₀)·s₁.x + Σ p.y² = x₀²x₁ + x₀x₁x₂ + (x₁ + x₀x₂)².
    #[differentiable(higher_order)]
    pub fn typed_sequences(x: &[f64]) -> f64 {
        let a: P2 = [x[0], x[1]].into();
        let ps: [P2; 2] = [a, P2::from((x[1], x[2])) * x[0]];
        let s: Vec<P2> = vec![ps[0] + ps[1], P2::ZERO];
        ps[1].dot(&a) + s[0].weighted() * s[1].x + s.iter().map(|p| p.y * p.y).sum::<f64>()
    }

    mod t {
        use crate::all_orders;
        all_orders!(converted, [0.7, -0.4, 1.3]);
        all_orders!(typed_sequences, [0.7, -0.4, 1.3]);
    }

    #[test]
    fn by_hand() {
        let x = [0.7_f64, -0.4, 1.3];
        let g = [
            1.3 * x[2] + x[1] + x[2],
            -0.7 * x[2] + x[0] + x[2],
            1.3 * x[0] - 0.7 * x[1] + x[1] + x[0],
        ];
        crate::common::close_to("converted", &converted::gradient(&x), &g, 1e-13);
        let h = converted::hessian(&x);
        let want = [[0.0, 1.0, 2.3], [1.0, 0.0, 0.3], [2.3, 0.3, 0.0]];
        for i in 0..3 {
            crate::common::close_to("converted's Hessian", &h.row(i).to_vec(), &want[i], 1e-13);
        }
        let q = x[1] + x[0] * x[2];
        let g = [
            2.0 * x[0] * x[1] + x[1] * x[2] + 2.0 * q * x[2],
            x[0] * x[0] + x[0] * x[2] + 2.0 * q,
            x[0] * x[1] + 2.0 * q * x[0],
        ];
        crate::common::close_to("typed_sequences", &typed_sequences::gradient(&x), &g, 1e-13);
    }
}

/// Under `higher_order`, names bound again by `let`: the slice parameter `x` by a struct
/// named `x` (fields `x` and `y`), bound again from itself; a float bound twice beside a
/// struct built from it.
mod rebound_names {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V2 {
        pub x: f64,
        pub y: f64,
    }

    #[differentiable(higher_order)]
    impl V2 {
        /// Different weights on the two fields: x and y mixed up shows.
        pub fn weighted(&self) -> f64 {
            1.3 * self.x - 0.7 * self.y
        }
        pub fn scaled(&self, k: f64) -> V2 {
            V2 {
                x: self.x * k,
                y: self.y * k,
            }
        }
    }

    /// x = (x₀, x₁), then x = (x.y·x₂, x.x) = (x₁x₂, x₀):
    /// w(x) + x.x·x.y = 1.3x₁x₂ − 0.7x₀ + x₀x₁x₂.
    #[differentiable(higher_order)]
    pub fn slice_rebound_as_struct(x: &[f64]) -> f64 {
        let y = x[2];
        let x = V2 { x: x[0], y: x[1] };
        let x = V2 { x: x.y * y, y: x.x };
        x.weighted() + x.x * x.y
    }

    /// k = 2x₂, p = (x₀, x₁)·k, k = k + p.x = 2x₂(1 + x₀), s = 3 w(p):
    /// s·k = 12x₂²(1.3x₀ − 0.7x₁)(1 + x₀).
    #[differentiable(higher_order)]
    pub fn float_rebound(x: &[f64]) -> f64 {
        let k = x[2];
        let k = 2.0 * k;
        let p = V2 { x: x[0], y: x[1] }.scaled(k);
        let k = k + p.x;
        let mut s = 0.0;
        for i in 0..2 {
            s += p.weighted() * (i as f64 + 1.0);
        }
        s * k
    }

    mod t {
        use crate::all_orders;
        all_orders!(slice_rebound_as_struct, [0.7, -0.4, 1.3]);
        all_orders!(float_rebound, [0.7, -0.4, 1.3]);
    }

    #[test]
    fn by_hand() {
        let x = [0.7_f64, -0.4, 1.3];
        let g = [
            -0.7 + x[1] * x[2],
            1.3 * x[2] + x[0] * x[2],
            1.3 * x[1] + x[0] * x[1],
        ];
        crate::common::close_to(
            "slice_rebound_as_struct",
            &slice_rebound_as_struct::gradient(&x),
            &g,
            1e-13,
        );
        let (w, q) = (1.3 * x[0] - 0.7 * x[1], 1.0 + x[0]);
        let c = 12.0 * x[2] * x[2];
        let g = [c * (1.3 * q + w), c * -0.7 * q, 24.0 * x[2] * w * q];
        crate::common::close_to("float_rebound", &float_rebound::gradient(&x), &g, 1e-13);
    }
}

/// Halves named as the slice they split (`let (x, u) = x.split_at(2);`, then `x` bound
/// again; `let (a, x) = x.split_at(1);`; `Some((x, rest)) = x.split_first()` in an `if
/// let`, a `let`-`else` or a `match`). Until 2026-12-07 the first two differentiated the
/// wrong elements silently (the other half read from the half named `x`: an LQR cost's
/// controls an empty slice), the others did not compile.
mod halves_named_as_their_slice {
    use mochi::prelude::*;

    /// An LQR-like cost: the state (x₀, x₁) stepped by the controls x₂.. .
    #[differentiable(higher_order)]
    pub fn controls_after_state(x: &[f64]) -> f64 {
        let (x, u) = x.split_at(2);
        let mut x = [x[0], x[1]];
        let mut cost = 0.0_f64;
        for &u in u.iter() {
            cost += x[0] * x[0] + u * u;
            x = [x[0] + 0.1 * x[1], x[1] + 0.1 * u];
        }
        cost + x[1] * x[1]
    }

    /// 5x₀x₁ + Σᵢ (i + 1)·uᵢ², u = x[2..].
    #[differentiable(higher_order)]
    pub fn split_twice(x: &[f64]) -> f64 {
        let (x, u) = x.split_at(2);
        let (a, x) = x.split_at(1);
        a[0] * x[0] * 5.0
            + u.iter()
                .enumerate()
                .map(|(i, v)| (i + 1) as f64 * v * v)
                .sum::<f64>()
    }

    /// x₀x₁ + 2x₂ + (n − 1).
    #[differentiable(higher_order)]
    pub fn head_named_as_slice(x: &[f64]) -> f64 {
        if let Some((x, rest)) = x.split_first() {
            x * rest[0] + rest[1] * 2.0 + rest.len() as f64
        } else {
            0.0
        }
    }

    /// x₀x₁ + 2x₂ + (n − 1), by `let`-`else`.
    #[differentiable(higher_order)]
    pub fn head_named_as_slice_let_else(x: &[f64]) -> f64 {
        let Some((x, rest)) = x.split_first() else {
            return 0.0;
        };
        x * rest[0] + rest[1] * 2.0 + rest.len() as f64
    }

    /// x₄x₀ + 2x₁, by `match` on `split_last`.
    #[differentiable(higher_order)]
    pub fn last_named_as_slice(x: &[f64]) -> f64 {
        match x.split_last() {
            Some((x, init)) => x * init[0] + init[1] * 2.0,
            None => 0.0,
        }
    }

    /// (x₀, x₁) walked by the controls: x₀ += v·x₁, x₁ *= 1.5; then x₀ + 2x₁.
    #[differentiable(higher_order)]
    pub fn state_copied_to_a_vec(x: &[f64]) -> f64 {
        let (x, u) = x.split_at(2);
        let mut x = x.to_vec();
        for &v in u {
            x[0] += v * x[1];
            x[1] *= 1.5;
        }
        x[0] + 2.0 * x[1]
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(controls_after_state, super::X);
        all_orders!(split_twice, super::X);
        all_orders!(head_named_as_slice, super::X);
        all_orders!(state_copied_to_a_vec, super::X);
        all_orders!(head_named_as_slice_let_else, super::X);
        all_orders!(last_named_as_slice, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let close = |name: &str, vg: (f64, Vec<f64>), f: fn(&[f64]) -> f64, w: &[f64]| {
            crate::common::assert_value_and_gradient(name, vg, f, &x, w, 1e-13)
        };
        close(
            "split_twice",
            split_twice::value_and_gradient(&x),
            split_twice,
            &[5.0 * x[1], 5.0 * x[0], 2.0 * x[2], 4.0 * x[3], 6.0 * x[4]],
        );
        close(
            "head_named_as_slice",
            head_named_as_slice::value_and_gradient(&x),
            head_named_as_slice,
            &[x[1], x[0], 2.0, 0.0, 0.0],
        );
        close(
            "head_named_as_slice_let_else",
            head_named_as_slice_let_else::value_and_gradient(&x),
            head_named_as_slice_let_else,
            &[x[1], x[0], 2.0, 0.0, 0.0],
        );
        close(
            "last_named_as_slice",
            last_named_as_slice::value_and_gradient(&x),
            last_named_as_slice,
            &[x[4], 2.0, 0.0, 0.0, x[0]],
        );
        let s = x[2] + 1.5 * x[3] + 2.25 * x[4];
        close(
            "state_copied_to_a_vec",
            state_copied_to_a_vec::value_and_gradient(&x),
            state_copied_to_a_vec,
            &[1.0, s + 6.75, x[1], 1.5 * x[1], 2.25 * x[1]],
        );
        // The cost by hand: three steps of the recursion, the states kept.
        let (mut p, mut q) = (x[0], x[1]);
        let mut want = 0.0;
        for &u in &x[2..] {
            want += p * p + u * u;
            (p, q) = (p + 0.1 * q, q + 0.1 * u);
        }
        want += q * q;
        let (v, g) = controls_after_state::value_and_gradient(&x);
        assert!((v - want).abs() < 1e-13, "{v} against {want}");
        crate::common::assert_gradient_matches(controls_after_state, &g, &x);
    }
}

/// The element `pop`, `remove` or `swap_remove` takes, used inside an expression
/// (`let mut acc = st.pop().unwrap().sin() * 3.0;`, `v.remove(1) * 2.0 + 1.0`, `s =
/// v.pop().expect(..).exp() + s;`): bound whole before the statement. Until 2026-12-07:
/// "`.pop(..)` of a differentiable buffer is supported as a statement … or bound whole".
mod taken_inside_expressions {
    use mochi::prelude::*;

    /// st = 2x; acc = 3 sin(2x₄), then acc ← 0.5 s + 0.9 acc over x₃, x₂, x₁, x₀.
    #[differentiable(higher_order)]
    pub fn popped_then_walked(x: &[f64]) -> f64 {
        let mut st: Vec<f64> = x.iter().map(|v| v * 2.0).collect();
        let mut acc = st.pop().unwrap().sin() * 3.0;
        while let Some(s) = st.pop() {
            acc = s * 0.5 + acc * 0.9;
        }
        acc
    }

    /// a = 2x₁ + 1; b = (x₀ + a)² (x₀ swapped out, x₄ into its place); s = exp(x₃);
    /// a·b + s + x₄ + x₂.
    #[differentiable(higher_order)]
    #[allow(clippy::assign_op_pattern)]
    pub fn removed_in_arithmetic(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let a = v.remove(1) * 2.0 + 1.0;
        let b = (v.swap_remove(0) + a).powi(2);
        let mut s = 0.0;
        s = v.pop().expect("one left").exp() + s;
        a * b + s + v.iter().sum::<f64>()
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(popped_then_walked, super::X);
        all_orders!(removed_in_arithmetic, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        // acc = 3 sin(2x₄)·0.9⁴ + Σₖ 0.5·2xₖ·0.9ᵏ for k = 3, 2, 1, 0 popped in turn
        // (x₃ first, weighted 0.9³ at the end).
        let mut g = vec![0.0; 5];
        for k in 0..4 {
            g[k] = 0.9_f64.powi(k as i32);
        }
        g[4] = 3.0 * 2.0 * (2.0 * x[4]).cos() * 0.9_f64.powi(4);
        crate::common::close_to(
            "popped_then_walked",
            &popped_then_walked::gradient(&x),
            &g,
            1e-13,
        );
        let a = 2.0 * x[1] + 1.0;
        let q = x[0] + a;
        let b = q * q;
        let g = [
            a * 2.0 * q,
            2.0 * b + a * 2.0 * q * 2.0,
            1.0,
            x[3].exp(),
            1.0,
        ];
        crate::common::close_to(
            "removed_in_arithmetic",
            &removed_in_arithmetic::gradient(&x),
            &g,
            1e-12,
        );
    }
}

/// The best element of what a `filter` (or `filter_map`) leaves: `max_by`, `min_by`,
/// `reduce`, then `copied`, `unwrap`, `unwrap_or(d)`, read through `*`, held as an
/// `Option`, or used in an expression. The part up to the filter is gathered into a
/// buffer first (as for positions counted after one). Before: "this iterator chain
/// (`.iter(..)` …) is not one the derivation writes as a loop".
mod best_after_a_filter {
    use mochi::prelude::*;

    /// The largest positive element (x₄) times x₀.
    #[differentiable(higher_order)]
    pub fn largest_positive(x: &[f64]) -> f64 {
        x.iter()
            .filter(|v| **v > 0.0)
            .max_by(|a, b| a.total_cmp(b))
            .copied()
            .unwrap_or(0.0)
            * x[0]
    }

    /// The smallest positive element (x₃) times x₀.
    #[differentiable(higher_order)]
    pub fn smallest_positive(x: &[f64]) -> f64 {
        let m = *x
            .iter()
            .filter(|v| **v > 0.0)
            .min_by(|a, b| a.partial_cmp(b).unwrap())
            .unwrap();
        m * x[0]
    }

    /// The largest square below 2 (x₂²) plus x₀.
    #[differentiable(higher_order)]
    pub fn largest_square_below(x: &[f64]) -> f64 {
        x.iter()
            .map(|v| v * v)
            .filter(|v| *v < 2.0)
            .reduce(f64::max)
            .unwrap_or(0.0)
            + x[0]
    }

    /// The smallest logarithm of a positive element (ln x₃) times x₄.
    #[differentiable(higher_order)]
    pub fn smallest_log(x: &[f64]) -> f64 {
        let m = x
            .iter()
            .filter_map(|v| if *v > 0.0 { Some(v.ln()) } else { None })
            .min_by(|a, b| a.total_cmp(b))
            .unwrap();
        m * x[4]
    }

    /// Of the elements inside (−1, 1), the one largest in magnitude (x₀), held as an
    /// `Option`: 3x₀.
    #[differentiable(higher_order)]
    pub fn held_best(x: &[f64]) -> f64 {
        let best = x
            .iter()
            .copied()
            .filter(|v| v.abs() < 1.0)
            .max_by(|a, b| a.abs().total_cmp(&b.abs()));
        best.unwrap_or(0.0) * 3.0
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(largest_positive, super::X);
        all_orders!(smallest_positive, super::X);
        all_orders!(largest_square_below, super::X);
        all_orders!(smallest_log, super::X);
        all_orders!(held_best, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let close = |name: &str, vg: (f64, Vec<f64>), f: fn(&[f64]) -> f64, w: &[f64]| {
            crate::common::assert_value_and_gradient(name, vg, f, &x, w, 1e-14)
        };
        close(
            "largest_positive",
            largest_positive::value_and_gradient(&x),
            largest_positive,
            &[x[4], 0.0, 0.0, 0.0, x[0]],
        );
        close(
            "smallest_positive",
            smallest_positive::value_and_gradient(&x),
            smallest_positive,
            &[x[3], 0.0, 0.0, x[0], 0.0],
        );
        close(
            "largest_square_below",
            largest_square_below::value_and_gradient(&x),
            largest_square_below,
            &[1.0, 0.0, 2.0 * x[2], 0.0, 0.0],
        );
        close(
            "smallest_log",
            smallest_log::value_and_gradient(&x),
            smallest_log,
            &[0.0, 0.0, 0.0, x[4] / x[3], x[3].ln()],
        );
        close(
            "held_best",
            held_best::value_and_gradient(&x),
            held_best,
            &[3.0, 0.0, 0.0, 0.0, 0.0],
        );
    }
}

/// Names the rewrites read through, bound again by the code they rewrite: two closures
/// capturing one name bound again between them (each read its own snapshot), a zip of
/// pieces whose second is named as the sequence (`|(w, x)|` over `x.windows(2)
/// .zip(x.windows(5))`), an inner closure's parameter named as the sequence of the outer
/// chain's windows, a `for` or an `if let` binding a window's name after a `split_at` or
/// a `let w = &x[..]`, zipped elements named crosswise (`|(y, x)|`). Until 2026-12-07
/// the first five read the wrong values silently (the last piece of the zip and the
/// inner closure also panicked out of bounds).
mod names_read_by_rewrites {
    use mochi::prelude::*;

    const TAPS: [[f64; 2]; 2] = [[0.5, -1.0], [2.0, 0.25]];

    /// scale(t) = x₀t, shift(t) = t + 2x₁, then k = 5x₂: x₀x₃ + 3(x₄ + 2x₁) + 5x₂x₅.
    #[differentiable(higher_order)]
    pub fn closures_capturing_one_name(x: &[f64]) -> f64 {
        let k = x[0];
        let scale = |t: f64| k * t;
        let k = x[1];
        let shift = |t: f64| t + 2.0 * k;
        let k = x[2] * 5.0;
        scale(x[3]) + 3.0 * shift(x[4]) + k * x[5]
    }

    /// Two `move` closures over a `let mut k` assigned after each:
    /// x₀x₃ + 3(x₄ − 2x₁) + (2x₁ + x₂)².
    #[differentiable(higher_order)]
    pub fn move_closures_over_an_assigned_name(x: &[f64]) -> f64 {
        let mut k = x[0];
        let scale = move |t: f64| k * t;
        k = x[1] * 2.0;
        let shift = move |t: f64| t - k;
        k += x[2];
        scale(x[3]) + shift(x[4]) * 3.0 + k * k
    }

    /// f(t) = x₀t, g(t) = f(t) + x₁, then k = x₂: (x₀x₃ + x₁)·x₂.
    #[differentiable(higher_order)]
    pub fn closure_calling_closure(x: &[f64]) -> f64 {
        let k = x[0];
        let f = |t: f64| k * t;
        let k = x[1];
        let g = |t: f64| f(t) + k;
        let k = x[2];
        g(x[3]) * k
    }

    /// x₀x₄ + 3x₁x₂ + x₁x₅ + 3x₂x₃.
    #[differentiable(higher_order)]
    pub fn zipped_piece_named_as_sequence(x: &[f64]) -> f64 {
        x.windows(2)
            .zip(x.windows(5))
            .map(|(w, x)| w[0] * x[4] + 3.0 * w[1] * x[2])
            .sum::<f64>()
    }

    /// 3x₀x₁ + x₂² + 2x₁x₃ + x₃x₄ + 2x₂x₅.
    #[differentiable(higher_order)]
    pub fn chunk_and_window_named_as_sequence(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (c, x) in x.chunks(2).zip(x.windows(2)) {
            s += c[0] * x[1] + 2.0 * c[1] * x[0];
        }
        s
    }

    /// Σₖ Σₜ (Tₜ₀pₖ + Tₜ₁pₖ₊₁)² over p = x[..3], + x₃x₄x₅.
    #[differentiable(higher_order)]
    pub fn inner_parameter_named_as_sequence(x: &[f64]) -> f64 {
        let p = x[..3].to_vec();
        p.windows(2)
            .map(|w| {
                TAPS.iter()
                    .map(|p| (p[0] * w[0] + p[1] * w[1]).powi(2))
                    .sum::<f64>()
            })
            .sum::<f64>()
            + x[3] * x[4] * x[5]
    }

    /// x₀x₂ + 2x₁x₃ + Σₖ (x₃₊ₖ − x₂₊ₖ)², k = 0..3.
    #[differentiable(higher_order)]
    pub fn window_name_bound_by_a_for(x: &[f64]) -> f64 {
        let (w, ys) = x.split_at(2);
        let mut s = w[0] * ys[0] + 2.0 * w[1] * ys[1];
        for w in ys.windows(2) {
            s += (w[1] - w[0]) * (w[1] - w[0]);
        }
        s
    }

    /// 4x₁ + x₂² + 2x₄x₅ + 3x₅.
    #[differentiable(higher_order)]
    pub fn window_name_bound_by_an_if_let(x: &[f64]) -> f64 {
        let w = &x[1..3];
        let mut s = w[0] * 4.0 + w[1] * w[1];
        if let Some(w) = x.get(4..6) {
            s += w[0] * w[1] * 2.0 + 3.0 * w[1];
        }
        s
    }

    /// Σᵢ 2xᵢ + 3xᵢ₊₁², i = 0..5.
    #[differentiable(higher_order)]
    pub fn elements_named_crosswise(x: &[f64]) -> f64 {
        x.iter()
            .zip(x[1..].iter())
            .map(|(y, x)| y * 2.0 + x * x * 3.0)
            .sum::<f64>()
    }

    const X: [f64; 6] = [0.7, -0.3, 1.4, 0.25, 2.1, -0.9];

    mod t {
        use crate::all_orders;
        all_orders!(closures_capturing_one_name, super::X);
        all_orders!(move_closures_over_an_assigned_name, super::X);
        all_orders!(closure_calling_closure, super::X);
        all_orders!(zipped_piece_named_as_sequence, super::X);
        all_orders!(chunk_and_window_named_as_sequence, super::X);
        all_orders!(inner_parameter_named_as_sequence, super::X);
        all_orders!(window_name_bound_by_a_for, super::X);
        all_orders!(window_name_bound_by_an_if_let, super::X);
        all_orders!(elements_named_crosswise, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let close = |name: &str, vg: (f64, Vec<f64>), f: fn(&[f64]) -> f64, w: &[f64]| {
            crate::common::assert_value_and_gradient(name, vg, f, &x, w, 1e-13)
        };
        close(
            "closures_capturing_one_name",
            closures_capturing_one_name::value_and_gradient(&x),
            closures_capturing_one_name,
            &[x[3], 6.0, 5.0 * x[5], x[0], 3.0, 5.0 * x[2]],
        );
        let k = 2.0 * x[1] + x[2];
        close(
            "move_closures_over_an_assigned_name",
            move_closures_over_an_assigned_name::value_and_gradient(&x),
            move_closures_over_an_assigned_name,
            &[x[3], -6.0 + 4.0 * k, 2.0 * k, x[0], 3.0, 0.0],
        );
        close(
            "closure_calling_closure",
            closure_calling_closure::value_and_gradient(&x),
            closure_calling_closure,
            &[x[3] * x[2], x[2], x[0] * x[3] + x[1], x[0] * x[2], 0.0, 0.0],
        );
        close(
            "zipped_piece_named_as_sequence",
            zipped_piece_named_as_sequence::value_and_gradient(&x),
            zipped_piece_named_as_sequence,
            &[
                x[4],
                3.0 * x[2] + x[5],
                3.0 * x[1] + 3.0 * x[3],
                3.0 * x[2],
                x[0],
                x[1],
            ],
        );
        close(
            "chunk_and_window_named_as_sequence",
            chunk_and_window_named_as_sequence::value_and_gradient(&x),
            chunk_and_window_named_as_sequence,
            &[
                3.0 * x[1],
                3.0 * x[0] + 2.0 * x[3],
                2.0 * x[2] + 2.0 * x[5],
                2.0 * x[1] + x[4],
                x[3],
                2.0 * x[2],
            ],
        );
        let mut g = vec![0.0, 0.0, 0.0, x[4] * x[5], x[3] * x[5], x[3] * x[4]];
        for k in 0..2 {
            for t in TAPS {
                let r = t[0] * x[k] + t[1] * x[k + 1];
                g[k] += 2.0 * r * t[0];
                g[k + 1] += 2.0 * r * t[1];
            }
        }
        close(
            "inner_parameter_named_as_sequence",
            inner_parameter_named_as_sequence::value_and_gradient(&x),
            inner_parameter_named_as_sequence,
            &g,
        );
        let mut g = vec![x[2], 2.0 * x[3], x[0], 2.0 * x[1], 0.0, 0.0];
        for j in 2..5 {
            let d = x[j + 1] - x[j];
            g[j] -= 2.0 * d;
            g[j + 1] += 2.0 * d;
        }
        close(
            "window_name_bound_by_a_for",
            window_name_bound_by_a_for::value_and_gradient(&x),
            window_name_bound_by_a_for,
            &g,
        );
        close(
            "window_name_bound_by_an_if_let",
            window_name_bound_by_an_if_let::value_and_gradient(&x),
            window_name_bound_by_an_if_let,
            &[0.0, 4.0, 2.0 * x[2], 0.0, 2.0 * x[5], 2.0 * x[4] + 3.0],
        );
        let mut g = vec![0.0; 6];
        for i in 0..5 {
            g[i] += 2.0;
            g[i + 1] += 6.0 * x[i + 1];
        }
        close(
            "elements_named_crosswise",
            elements_named_crosswise::value_and_gradient(&x),
            elements_named_crosswise,
            &g,
        );
    }
}

/// More names bound again where a rewrite reads by name: a slice pattern's element named
/// as the slice (`[x, .., y]` over `x`), windows of a window named alike, the element
/// `while let` pops named as the stack, a loop body binding the name of the buffer it
/// walks. Before: none compiled.
mod names_bound_again_in_loops {
    use mochi::prelude::*;

    /// 2x₀x₅ + 3x₀ + x₁.
    #[differentiable(higher_order)]
    pub fn slice_pattern_named_as_slice(x: &[f64]) -> f64 {
        let m = match x {
            [x, .., y] => x * y * 2.0 + 3.0 * x,
            _ => 0.0,
        };
        m + x[1]
    }

    /// Σₖ Σⱼ (k + 1)(j + 2)·xₖ₊ⱼ·xₖ₊ⱼ₊₁.
    #[differentiable(higher_order)]
    pub fn windows_of_a_window_named_alike(x: &[f64]) -> f64 {
        let mut s = 0.0_f64;
        for (k, w) in x.windows(3).enumerate() {
            for (j, w) in w.windows(2).enumerate() {
                s += (k as f64 + 1.0) * (j as f64 + 2.0) * w[0] * w[1];
            }
        }
        s
    }

    /// Σₖ k·x₆₋ₖ², the last popped first: Σᵢ (6 − i)·xᵢ².
    #[differentiable(higher_order)]
    pub fn popped_named_as_the_stack(x: &[f64]) -> f64 {
        let mut x = x.to_vec();
        let mut s = 0.0_f64;
        let mut k = 1.0_f64;
        while let Some(x) = x.pop() {
            s += k * x * x;
            k += 1.0;
        }
        s
    }

    /// yᵢ = 2xᵢ + xᵢ², then Σᵢ (i + 1)·yᵢ.
    #[differentiable(higher_order)]
    pub fn buffer_name_bound_in_its_loop(x: &[f64]) -> f64 {
        let mut y = x.to_vec();
        for (k, e) in y.iter_mut().enumerate() {
            let y = x[k] * x[k];
            *e = *e * 2.0 + y;
        }
        y.iter()
            .enumerate()
            .map(|(i, a)| (i as f64 + 1.0) * a)
            .sum::<f64>()
    }

    const X: [f64; 6] = [0.7, -0.3, 1.4, 0.25, 2.1, -0.9];

    mod t {
        use crate::all_orders;
        all_orders!(slice_pattern_named_as_slice, super::X);
        all_orders!(windows_of_a_window_named_alike, super::X);
        all_orders!(popped_named_as_the_stack, super::X);
        all_orders!(buffer_name_bound_in_its_loop, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let close = |name: &str, vg: (f64, Vec<f64>), f: fn(&[f64]) -> f64, w: &[f64]| {
            crate::common::assert_value_and_gradient(name, vg, f, &x, w, 1e-13)
        };
        close(
            "slice_pattern_named_as_slice",
            slice_pattern_named_as_slice::value_and_gradient(&x),
            slice_pattern_named_as_slice,
            &[2.0 * x[5] + 3.0, 1.0, 0.0, 0.0, 0.0, 2.0 * x[0]],
        );
        let mut g = vec![0.0; 6];
        for k in 0..4 {
            for j in 0..2 {
                let c = (k as f64 + 1.0) * (j as f64 + 2.0);
                g[k + j] += c * x[k + j + 1];
                g[k + j + 1] += c * x[k + j];
            }
        }
        close(
            "windows_of_a_window_named_alike",
            windows_of_a_window_named_alike::value_and_gradient(&x),
            windows_of_a_window_named_alike,
            &g,
        );
        let g: Vec<f64> = (0..6).map(|i| 2.0 * (6.0 - i as f64) * x[i]).collect();
        close(
            "popped_named_as_the_stack",
            popped_named_as_the_stack::value_and_gradient(&x),
            popped_named_as_the_stack,
            &g,
        );
        let g: Vec<f64> = (0..6)
            .map(|i| (i as f64 + 1.0) * (2.0 + 2.0 * x[i]))
            .collect();
        close(
            "buffer_name_bound_in_its_loop",
            buffer_name_bound_in_its_loop::value_and_gradient(&x),
            buffer_name_bound_in_its_loop,
            &g,
        );
    }
}

/// A closure that reads a captured name and also binds that name inside its body (a
/// `let`, an inner closure's parameter, an `if let`, a `for`), or names it only in a
/// macro, the name bound again after the closure: the inlined body reads what the
/// closure captured. Until 2026-12-07 such a name had no snapshot and the body read the
/// new value, silently.
mod captures_bound_inside_closures {
    use mochi::prelude::*;

    const TAB: [f64; 2] = [1.5, 2.5];

    /// f(t) = x₀t + 2t: x₀x₂ + 2x₂ + x₁x₃.
    #[differentiable(higher_order)]
    pub fn let_in_body(x: &[f64]) -> f64 {
        let k = x[0];
        let f = |t: f64| {
            let s = k * t;
            let k = 2.0_f64;
            s + k * t
        };
        let k = x[1];
        f(x[2]) + k * x[3]
    }

    /// f(t) = x₀t + 4t: x₀x₂ + 4x₂ + 3x₁x₃.
    #[differentiable(higher_order)]
    pub fn inner_parameter(x: &[f64]) -> f64 {
        let k = x[0];
        let f = |t: f64| k * t + TAB.iter().map(|k| k * t).sum::<f64>();
        let k = x[1] * 3.0;
        f(x[2]) + k * x[3]
    }

    /// f(t) = x₀t + x₅t: (x₀x₂ + x₅x₂)·x₁.
    #[differentiable(higher_order)]
    pub fn if_let_in_body(x: &[f64]) -> f64 {
        let k = x[0];
        let f = |t: f64| {
            let a = k * t;
            if let Some(&k) = x.get(5) {
                a + k * t
            } else {
                a
            }
        };
        let k = x[1];
        f(x[2]) * k
    }

    /// f(t) = x₀t + 4t²: x₀x₂ + 4x₂² + x₁.
    #[differentiable(higher_order)]
    pub fn for_in_body(x: &[f64]) -> f64 {
        let k = x[0];
        let f = |t: f64| {
            let mut s = k * t;
            for &k in TAB.iter() {
                s += k * t * t;
            }
            s
        };
        let k = x[1];
        f(x[2]) + k
    }

    /// f(t) = x₀t + 2t²: (x₀x₂ + 2x₂²)·x₁.
    #[differentiable(higher_order)]
    #[allow(clippy::useless_vec)]
    pub fn only_in_a_macro(x: &[f64]) -> f64 {
        let k = x[0];
        let f = |t: f64| {
            let v = vec![k * t, t * t];
            v[0] + 2.0 * v[1]
        };
        let k = x[1];
        f(x[2]) * k
    }

    const X: [f64; 6] = [0.7, -0.3, 1.4, 0.25, 2.1, -0.9];

    mod t {
        use crate::all_orders;
        all_orders!(let_in_body, super::X);
        all_orders!(inner_parameter, super::X);
        all_orders!(if_let_in_body, super::X);
        all_orders!(for_in_body, super::X);
        all_orders!(only_in_a_macro, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let close = |name: &str, vg: (f64, Vec<f64>), f: fn(&[f64]) -> f64, w: &[f64]| {
            crate::common::assert_value_and_gradient(name, vg, f, &x, w, 1e-13)
        };
        close(
            "let_in_body",
            let_in_body::value_and_gradient(&x),
            let_in_body,
            &[x[2], x[3], x[0] + 2.0, x[1], 0.0, 0.0],
        );
        close(
            "inner_parameter",
            inner_parameter::value_and_gradient(&x),
            inner_parameter,
            &[x[2], 3.0 * x[3], x[0] + 4.0, 3.0 * x[1], 0.0, 0.0],
        );
        close(
            "if_let_in_body",
            if_let_in_body::value_and_gradient(&x),
            if_let_in_body,
            &[
                x[2] * x[1],
                x[0] * x[2] + x[5] * x[2],
                (x[0] + x[5]) * x[1],
                0.0,
                0.0,
                x[2] * x[1],
            ],
        );
        close(
            "for_in_body",
            for_in_body::value_and_gradient(&x),
            for_in_body,
            &[x[2], 1.0, x[0] + 8.0 * x[2], 0.0, 0.0, 0.0],
        );
        close(
            "only_in_a_macro",
            only_in_a_macro::value_and_gradient(&x),
            only_in_a_macro,
            &[
                x[2] * x[1],
                x[0] * x[2] + 2.0 * x[2] * x[2],
                (x[0] + 4.0 * x[2]) * x[1],
                0.0,
                0.0,
                0.0,
            ],
        );
    }
}

/// A struct taken apart by a pattern: a part named as the value it is taken from (`let
/// Loaded { p, m } = p;`, `let Span(s, w) = s;`), a struct inside a struct (`let Span(Pt(a,
/// b), w) = s;`), a borrowed value (`let Pt(a, b) = &q;`), a `for` loop's pattern (`for
/// (i, &Pt(a, b)) in pts.iter().enumerate()`), a closure's (`|&Particle { v, m, .. }|`) and
/// a `match` of one arm. Until 2026-12-07 the first read the later fields from the new
/// binding (`let Loaded { p, m } = p;` gave `m` the particle's mass: 3.55 against 1.74),
/// and the others did not compile ("only names, `_`, and tuples and arrays of them can
/// bind a differentiable value", "this parameter pattern is not supported").
mod structs_taken_apart {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Pt(f64, f64);
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Span(Pt, f64);
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Particle {
        x: f64,
        v: f64,
        m: f64,
    }
    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Loaded {
        p: Particle,
        m: f64,
    }

    /// (x₂ + x₃)·x₁²/2 + x₃ sin x₀.
    #[differentiable(higher_order)]
    pub fn part_named_as_whole(x: &[f64]) -> f64 {
        let p = Loaded {
            p: Particle {
                x: x[0],
                v: x[1],
                m: x[2],
            },
            m: x[3],
        };
        let Loaded { p, m } = p;
        (p.m + m) * p.v * p.v * 0.5 + m * p.x.sin()
    }

    /// x₀x₂ + x₁x₂² + x₀x₁ + x₃(x₀ + x₁).
    #[differentiable(higher_order)]
    pub fn nested_and_crossed(x: &[f64]) -> f64 {
        let s = Span(Pt(x[0], x[1]), x[2]);
        let Span(s, w) = s;
        let first = s.0 * w + s.1 * w * w;
        let s = Span(s, x[3]);
        let Span(Pt(s, b), w) = s;
        let q = Particle { x: s, v: b, m: w };
        let Particle { x: v, v: x, m } = q;
        first + v * x + m * (s + b)
    }

    /// Σᵢ (i + 1)·aᵢbᵢ + Σ sin(aᵢ)·bᵢ + Σ aᵢbᵢ², over the pairs (xᵢ, xᵢ₊₁).
    #[differentiable(higher_order)]
    pub fn loop_patterns(x: &[f64]) -> f64 {
        let pts: Vec<Pt> = x.windows(2).map(|w| Pt(w[0], w[1])).collect();
        let mut s = 0.0;
        for (i, &Pt(a, b)) in pts.iter().enumerate() {
            s += (i as f64 + 1.0) * a * b;
        }
        for Pt(a, b) in pts.iter() {
            s += a.sin() * b;
        }
        for Pt(a, pts) in pts {
            s += a * pts * pts;
        }
        s
    }

    /// Kinetic and potential energy of the particles (xᵢ, xᵢ₊₁, xᵢ₊₂), and a weighted
    /// cross term with the fields' names swapped.
    #[differentiable(higher_order)]
    pub fn closure_patterns(x: &[f64]) -> f64 {
        let ps: Vec<Particle> = x
            .windows(3)
            .map(|w| Particle {
                x: w[0],
                v: w[1],
                m: w[2],
            })
            .collect();
        let ke: f64 = ps
            .iter()
            .map(|&Particle { v, m, .. }| 0.5 * m * v * v)
            .sum();
        let pe = ps
            .iter()
            .fold(0.0, |acc, Particle { x, m, .. }| acc + m * x * 9.81);
        let w: f64 = ps
            .iter()
            .enumerate()
            .map(|(i, &Particle { x: v, v: x, .. })| (i + 1) as f64 * v * x)
            .sum();
        let q = Pt(x[0], x[1]);
        let Pt(a, b) = &q;
        let &Pt(c, d) = &q;
        let one = match q {
            Pt(q, e) => q * e.cos(),
        };
        ke + pe + w + a * b * c + d + one
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(part_named_as_whole, super::X);
        all_orders!(nested_and_crossed, super::X);
        all_orders!(loop_patterns, super::X);
        all_orders!(closure_patterns, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let (v, g) = part_named_as_whole::value_and_gradient(&x);
        let want = (x[2] + x[3]) * x[1] * x[1] * 0.5 + x[3] * x[0].sin();
        assert!((v - want).abs() < 1e-13, "{v} against {want}");
        let dw = [
            x[3] * x[0].cos(),
            (x[2] + x[3]) * x[1],
            x[1] * x[1] * 0.5,
            x[1] * x[1] * 0.5 + x[0].sin(),
            0.0,
        ];
        crate::common::close_to("part_named_as_whole", &g, &dw, 1e-13);
        let (v, g) = nested_and_crossed::value_and_gradient(&x);
        let want = x[0] * x[2] + x[1] * x[2] * x[2] + x[0] * x[1] + x[3] * (x[0] + x[1]);
        assert!((v - want).abs() < 1e-13, "{v} against {want}");
        let dw = [
            x[2] + x[1] + x[3],
            x[2] * x[2] + x[0] + x[3],
            x[0] + 2.0 * x[1] * x[2],
            x[0] + x[1],
            0.0,
        ];
        crate::common::close_to("nested_and_crossed", &g, &dw, 1e-13);
    }
}

/// Methods of a marked block named as a library's (`norm`, `dot`) called on a binding
/// of the type that is bound again later (`let a = a.scale(2.0);`, `let a = c.sub(..)`),
/// with locals named as the methods. Until 2026-12-07: "no rule for `v2_norm` with
/// arguments `(&V2,)`" at the first call.
mod receivers_bound_again {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V2 {
        x: f64,
        y: f64,
    }

    #[differentiable(higher_order)]
    impl V2 {
        fn new(x: f64, y: f64) -> V2 {
            V2 { x, y }
        }
        fn dot(&self, o: &V2) -> f64 {
            self.x * o.x + self.y * o.y
        }
        fn norm(&self) -> f64 {
            self.dot(self).sqrt()
        }
        fn scale(&self, s: f64) -> V2 {
            V2::new(self.x * s, self.y * s)
        }
        fn sub(&self, o: &V2) -> V2 {
            V2::new(self.x - o.x, self.y - o.y)
        }
    }

    /// ‖a‖ + 2a₀, a = (x₀, x₁).
    #[differentiable(higher_order)]
    pub fn scaled_after_norm(x: &[f64]) -> f64 {
        let a = V2::new(x[0], x[1]);
        let norm = a.norm();
        let a = a.scale(2.0);
        norm + a.x
    }

    /// The locals named as the methods, `a` bound again from the old `a`.
    #[differentiable(higher_order)]
    pub fn locals_named_as_methods(x: &[f64]) -> f64 {
        let a = V2::new(x[0], x[1]);
        let b = V2::new(x[2], x[3]);
        let norm = a.norm();
        let scale = x[4] / norm;
        let dot = a.dot(&b);
        let c = b.scale(scale).sub(&a);
        let a = c.sub(&a.scale(dot));
        norm * a.norm() + c.dot(&a) + scale * dot
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(scaled_after_norm, super::X);
        all_orders!(locals_named_as_methods, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let (v, g) = scaled_after_norm::value_and_gradient(&x);
        let n = x[0].hypot(x[1]);
        assert!((v - (n + 2.0 * x[0])).abs() < 1e-13, "{v}");
        crate::common::close_to(
            "scaled_after_norm",
            &g,
            &[x[0] / n + 2.0, x[1] / n, 0.0, 0.0, 0.0],
            1e-13,
        );
    }
}

/// A chain held in a name and used once in a `let` that binds the name again (`let x =
/// x.iter().map(..); let x: Vec<f64> = x.collect();`), or after a `let` of another name.
/// Until 2026-12-07: "this iterator chain (`.iter(..)` with arguments `(&[f64],)`) is
/// not one the derivation writes as a loop".
mod held_chains_bound_again {
    use mochi::prelude::*;

    /// (Σ tanh(xᵢ)tanh(xᵢ₊₁))/n, then y² + y.
    #[differentiable(higher_order)]
    pub fn collected_as_same_name(x: &[f64]) -> f64 {
        let n = x.len() as f64;
        let x = x.iter().map(|v| v.tanh());
        let x: Vec<f64> = x.collect();
        let x: f64 = x
            .iter()
            .zip(x.iter().skip(1))
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / n;
        x * x + x
    }

    /// Σ wᵢxᵢ + 2x₁² + Σᵢ₌₁ exp(xᵢ).
    #[differentiable(higher_order)]
    pub fn summed_and_folded(x: &[f64]) -> f64 {
        let w = [1.0, 2.0, 3.0, 4.0, 5.0];
        let pairs = x.iter().zip(w.iter()).map(|(a, b)| a * b);
        let n = 2.0;
        let s: f64 = pairs.sum();
        let sq = x.iter().map(|v| v * v * n);
        let sq: Vec<f64> = sq.collect();
        let t = x.iter().skip(1).map(|v| v.exp());
        let t = t.fold(0.0, |acc, v| acc + v);
        s + sq[1] + t
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(collected_as_same_name, super::X);
        all_orders!(summed_and_folded, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let (v, g) = summed_and_folded::value_and_gradient(&x);
        let want: f64 = (0..5).map(|i| (i + 1) as f64 * x[i]).sum::<f64>()
            + 2.0 * x[1] * x[1]
            + x[1..].iter().map(|v| v.exp()).sum::<f64>();
        assert!((v - want).abs() < 1e-12, "{v} against {want}");
        let dw: Vec<f64> = (0..5)
            .map(|i| {
                (i + 1) as f64
                    + if i == 1 { 4.0 * x[1] } else { 0.0 }
                    + if i > 0 { x[i].exp() } else { 0.0 }
            })
            .collect();
        crate::common::close_to("summed_and_folded", &g, &dw, 1e-12);
    }
}

/// A `match` on a tuple of a struct's state fields and comparisons, whose arms bind the
/// parts that carry no derivative (`(on, _, _) => on` of a `bool` field, `(1, r)` of
/// `self.count % 3`). Until 2026-12-07: "a `match` arm or `if let` pattern that binds
/// parts of a differentiable value … is not supported".
mod tuple_matches_on_state {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Relay {
        on: bool,
        y: f64,
    }

    #[differentiable]
    impl Relay {
        #[differentiable]
        fn feed(&mut self, v: f64, lo: f64, hi: f64) -> f64 {
            self.on = match (self.on, v > hi, v < lo) {
                (false, true, _) => true,
                (true, _, true) => false,
                (on, _, _) => on,
            };
            let target = if self.on { v } else { 0.5 * v };
            self.y += 0.3 * (target - self.y);
            self.y
        }
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Machine {
        stage: usize,
        count: usize,
        val: f64,
    }

    #[differentiable]
    impl Machine {
        #[differentiable]
        fn tick(&mut self, u: f64) {
            match (self.stage, self.count % 3) {
                (0, 0) => self.val += u,
                (0, _) => self.val *= 1.0 + 0.1 * u,
                (1, r) => self.val -= (r as f64 + 1.0) * 0.05 * u * self.val,
                (s, _) => self.val += s as f64 * 0.01 * u,
            }
            self.count += 1;
            if self.count % 4 == 0 {
                self.stage += 1;
            }
        }
    }

    /// A relay with hysteresis driven by a sine, the output summed.
    #[differentiable]
    pub fn relay_output(x: &[f64]) -> f64 {
        let mut r = Relay { on: false, y: x[0] };
        let mut s = 0.0;
        for k in 0..40 {
            let v = x[1] * (0.3 * k as f64).sin() + x[2];
            s += r.feed(v, -0.5, 0.5) * 0.1;
        }
        s
    }

    /// A machine through its stages, its value at the end.
    #[differentiable]
    pub fn machine_value(x: &[f64]) -> f64 {
        let mut m = Machine {
            stage: 0,
            count: 0,
            val: x[0],
        };
        for k in 0..12 {
            m.tick(x[1 + k % 2]);
        }
        m.val
    }

    #[test]
    fn gradients() {
        for x in [[0.4, 1.3, 0.2], [-0.3, 0.9, 0.35], [1.1, -0.7, 0.05]] {
            let (v, g) = relay_output::value_and_gradient(&x);
            assert_eq!(v, relay_output(&x));
            crate::common::assert_gradient_matches(relay_output, &g, &x);
            let (v, g) = machine_value::value_and_gradient(&x);
            assert_eq!(v, machine_value(&x));
            crate::common::assert_gradient_matches(machine_value, &g, &x);
        }
        // The relay switches: on for part of the drive and off for part.
        let x = [0.4, 1.3, 0.2];
        let mut r = Relay { on: false, y: 0.0 };
        let states: Vec<bool> = (0..40)
            .map(|k| {
                r.feed(x[1] * (0.3 * k as f64).sin() + x[2], -0.5, 0.5);
                r.on
            })
            .collect();
        assert!(states.contains(&true) && states.contains(&false));
    }
}

/// A method named as a library's (`push`) on a parameter of the crate's own type (`r:
/// &mut Ring`), and a `match` of one arm binding names or a tuple of them (`match (r, s)
/// { (s, r) => .. }`, `match x[2] { x => .. }`). Until 2026-12-07 the first was taken
/// for `Vec::push` (a type error at the attribute: "`ArrayBase<..>: Scalar` is not
/// satisfied"), the second was "a `match` arm … that binds parts of a differentiable
/// value … is not supported".
mod own_methods_and_single_arms {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Ring {
        buf: [f64; 3],
        head: usize,
        full: bool,
        sum: f64,
    }

    #[differentiable]
    impl Ring {
        #[differentiable]
        fn push(&mut self, v: f64) -> f64 {
            let old = self.buf[self.head];
            self.buf[self.head] = v;
            self.head = (self.head + 1) % 3;
            if self.head == 0 {
                self.full = true;
            }
            self.sum += v - old;
            let n = if self.full { 3 } else { self.head };
            self.sum / n as f64
        }
    }

    /// The moving average's squared residuals, weighted.
    #[differentiable]
    pub fn run_ring(r: &mut Ring, xs: &[f64]) -> f64 {
        let mut err = 0.0;
        for (i, &v) in xs.iter().enumerate() {
            let avg = r.push(v);
            let v = v - avg;
            err += v * v * (1.0 + 0.1 * i as f64);
        }
        err
    }

    #[differentiable]
    pub fn ring_residuals(x: &[f64]) -> f64 {
        let mut r = Ring {
            buf: [0.0; 3],
            head: 0,
            full: false,
            sum: 0.0,
        };
        run_ring(&mut r, x) + r.sum
    }

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Grid {
        h: f64,
        n: usize,
    }

    /// Not marked: called as written, its result an integer.
    impl Grid {
        fn len(&self) -> usize {
            self.n
        }
    }

    /// A method named as a library's that is not marked stays the plain call.
    #[differentiable]
    pub fn grid_scaled(g: &Grid, x: &[f64]) -> f64 {
        let n = g.len();
        x[0] * g.h * n as f64 + x[1]
    }

    /// ((x₀ − 2x₁)(x₂² + 1) + x₁ with the names swapped by a one-arm `match`.
    #[differentiable(higher_order)]
    pub fn single_arms(x: &[f64]) -> f64 {
        let (r, s) = (x[1], x[0]);
        let t = match (r, s) {
            (s, r) => r - 2.0 * s,
        };
        let u = match x[2] {
            x => x * x + 1.0,
        };
        t * u + r
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(single_arms, super::X);
    }

    #[test]
    fn gradients() {
        let x = X;
        let (v, g) = ring_residuals::value_and_gradient(&x);
        assert_eq!(v, ring_residuals(&x));
        crate::common::assert_gradient_matches(ring_residuals, &g, &x);
        let (v, g) = single_arms::value_and_gradient(&x);
        let u = x[2] * x[2] + 1.0;
        assert!((v - ((x[0] - 2.0 * x[1]) * u + x[1])).abs() < 1e-13, "{v}");
        let dw = [u, 1.0 - 2.0 * u, 2.0 * x[2] * (x[0] - 2.0 * x[1]), 0.0, 0.0];
        crate::common::close_to("single_arms", &g, &dw, 1e-13);
        let grid = Grid { h: 0.5, n: 3 };
        let (v, (dg, dx)) = grid_scaled::value_and_gradient(&grid, &x);
        assert!((v - (1.5 * x[0] + x[1])).abs() < 1e-13, "{v}");
        assert!((dg.h - 3.0 * x[0]).abs() < 1e-13, "{}", dg.h);
        crate::common::close_to("grid_scaled", &dx, &[1.5, 1.0, 0.0, 0.0, 0.0], 1e-13);
    }
}

/// Names bound apart: an arm's or a loop body's binding named as a value of the function
/// with a derivative is its own (found by probes, where each form failed to compile).
mod arms_and_elements_named_apart {
    use mochi::prelude::*;
    use std::f64::consts::PI;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub enum Shape {
        Circle(f64),
        Rect { w: f64, h: f64 },
    }

    const SHAPES: [Shape; 3] = [
        Shape::Circle(0.8),
        Shape::Rect { w: 1.5, h: 0.6 },
        Shape::Circle(0.3),
    ];

    /// x₁x₂(0.73π·x₀ + 0.9 + 1.5x₁ + x₀): the `Rect` arm's `w`, `h` are the table's.
    #[differentiable]
    pub fn shape_areas(x: &[f64]) -> f64 {
        let w = x[0];
        let h = x[1] * x[2];
        let mut total = 0.0;
        for (i, s) in SHAPES.iter().enumerate() {
            let a = match s {
                Shape::Circle(r) => PI * r * r * w,
                Shape::Rect { w, h } => w * h + x[i] * w,
            };
            total += a * h;
        }
        total + w * h
    }

    /// A guard reading the field through the reference (`*w`), a field bound `mut` and
    /// changed in its arm.
    #[differentiable]
    pub fn guarded_shapes(x: &[f64]) -> f64 {
        let w = x[0];
        let mut total = 0.0;
        for (i, s) in SHAPES.iter().enumerate() {
            total += match s {
                Shape::Circle(w) if *w > 0.5 => w * x[i] * x[i],
                Shape::Circle(r) => r + x[i],
                Shape::Rect { w, h: mut hh } => {
                    hh += 1.0;
                    w * hh * x[i]
                }
            } * w;
        }
        total
    }

    #[differentiable]
    pub fn sigmoid(z: f64) -> f64 {
        1.0 / (1.0 + (-z).exp())
    }

    /// A focal loss over labels held as `Option`s: `if let Some(y) = t` of a borrowed
    /// one reads `*y`, and names the mean prediction `y` read after the loop.
    #[differentiable]
    pub fn focal(x: &[f64]) -> f64 {
        let targets: [Option<f64>; 4] = [Some(1.0), None, Some(0.0), Some(1.0)];
        let gamma = 1.5 + 0.5 * x[4].tanh();
        let y = x[..4].iter().map(|&z| sigmoid(z)).sum::<f64>() / 4.0;
        let mut loss = 0.0;
        for (i, t) in targets.iter().enumerate() {
            if let Some(y) = t {
                let p = sigmoid(x[i]);
                let (pt, at) = if *y > 0.5 { (p, 0.25) } else { (1.0 - p, 0.75) };
                loss -= at * (1.0 - pt).powf(gamma) * pt.ln();
            }
        }
        loss + 0.01 * y
    }

    #[differentiable]
    pub fn gelu(v: f64) -> f64 {
        let c = (2.0 / PI).sqrt();
        0.5 * v * (1.0 + (c * (v + 0.044715 * v.powi(3))).tanh())
    }

    /// `map(gelu)` of the function, and a local named `gelu` after it.
    #[differentiable]
    pub fn gelu_layer(x: &[f64]) -> f64 {
        let hidden: Vec<f64> = x.iter().copied().map(gelu).collect();
        let out: f64 = hidden
            .iter()
            .zip(x.iter().rev())
            .map(|(h, w)| gelu(h * w))
            .sum();
        let gelu = out - 0.3;
        gelu * gelu + hidden.iter().map(|h| h * h).sum::<f64>() * 0.01
    }

    #[differentiable]
    pub fn scale_rows(m: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
        let mut out = [0.0; 3];
        for (i, row) in m.iter().enumerate() {
            out[i] = row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
        }
        out
    }

    /// Skinning: the vertex `v` of a constant table read as `*v`, and the body's own
    /// `v` (the skinned vertex) bound after.
    #[differentiable]
    pub fn skinned(x: &[f64]) -> f64 {
        let bones = [
            [[x[0], 0.1, 0.0], [0.0, x[1], 0.2], [0.3, 0.0, 1.0]],
            [[1.0, x[2], 0.0], [0.1, 1.0, 0.0], [0.0, 0.2, x[3]]],
        ];
        let verts = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.3, -0.4, 0.9]];
        let weights = [[1.0, 0.0], [0.6, 0.4], [0.5, 0.5]];
        let mut err = 0.0;
        for (i, (v, w)) in verts.iter().zip(weights.iter()).enumerate() {
            let mut acc = [0.0; 3];
            for b in 0..2 {
                let p = scale_rows(&bones[b], *v);
                for k in 0..3 {
                    acc[k] += w[b] * p[k];
                }
            }
            let v = acc;
            err += (0..3).map(|k| (v[k] - 0.1 * i as f64).powi(2)).sum::<f64>();
        }
        err
    }

    /// Himmelblau's function over `chunks_exact(2)`, each piece taken apart by a slice
    /// pattern (`&[x, y]` naming the parameter again, and `[a, b]` by reference).
    #[differentiable]
    pub fn himmelblau_pairs(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for pair in x.chunks_exact(2) {
            if let &[x, y] = pair {
                total += (x * x + y - 11.0).powi(2) + (x + y * y - 7.0).powi(2);
            }
            if let [a, b] = pair {
                total += 0.1 * *a * *b;
            }
        }
        total + x[0]
    }

    /// Two constant cameras lent in an array literal, the inner loop left early by a
    /// labelled `continue`: Σ_{i≤3} 3xᵢ² + ¼ sin xᵢ.
    #[differentiable]
    pub fn two_cameras(x: &[f64]) -> f64 {
        let near = [1.0, 0.5];
        let far = [2.0, -0.25];
        let mut total = 0.0;
        'cams: for cam in [&near, &far] {
            for (i, p) in x.iter().enumerate() {
                if i > 3 {
                    continue 'cams;
                }
                total += cam[0] * p * p + cam[1] * p.sin();
            }
        }
        total
    }

    const GRID: [[f64; 2]; 2] = [[0.5, 1.5], [2.0, -1.0]];

    /// A constant table's row named as the function's `row`, taken apart by `*row`:
    /// (0.75x₀ − 2x₁)·x₀x₁.
    #[differentiable]
    pub fn rows_named_alike(x: &[f64]) -> f64 {
        let row = x[0] * x[1];
        let mut s = 0.0;
        for (i, row) in GRID.iter().enumerate() {
            let [p, q] = *row;
            s += p * q * x[i];
        }
        s * row
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(shape_areas, super::X);
        all_orders!(guarded_shapes, super::X);
        all_orders!(focal, super::X);
        all_orders!(gelu_layer, super::X);
        all_orders!(skinned, super::X);
        all_orders!(himmelblau_pairs, [3.2, 1.9, -2.7, 3.1]);
        all_orders!(two_cameras, super::X);
        all_orders!(rows_named_alike, super::X);
    }

    #[test]
    fn by_hand() {
        let x = X;
        let c = 0.73 * PI;
        let s = c * x[0] + 0.9 + 1.5 * x[1] + x[0];
        let value = x[1] * x[2] * s;
        let dx = [
            x[1] * x[2] * (c + 1.0),
            x[2] * s + 1.5 * x[1] * x[2],
            x[1] * s,
            0.0,
            0.0,
        ];
        crate::common::assert_by_hand(
            "shape_areas",
            shape_areas::value_and_gradient(&x),
            shape_areas,
            &x,
            value,
            &dx,
        );
        let value: f64 = x[..4].iter().map(|p| 3.0 * p * p + 0.25 * p.sin()).sum();
        let mut dx: Vec<f64> = x[..4].iter().map(|p| 6.0 * p + 0.25 * p.cos()).collect();
        dx.push(0.0);
        crate::common::assert_by_hand(
            "two_cameras",
            two_cameras::value_and_gradient(&x),
            two_cameras,
            &x,
            value,
            &dx,
        );
        let r = x[0] * x[1];
        let inner = 0.75 * x[0] - 2.0 * x[1];
        crate::common::assert_by_hand(
            "rows_named_alike",
            rows_named_alike::value_and_gradient(&x),
            rows_named_alike,
            &x,
            inner * r,
            &[
                0.75 * r + inner * x[1],
                -2.0 * r + inner * x[0],
                0.0,
                0.0,
                0.0,
            ],
        );
        // Only the first piece of a slice pattern differs from Himmelblau's own.
        let p = [3.2, 1.9, -2.7, 3.1];
        let (v, g) = himmelblau_pairs::value_and_gradient(&p);
        assert_eq!(v, himmelblau_pairs(&p));
        let h = |a: f64, b: f64| {
            (
                4.0 * a * (a * a + b - 11.0) + 2.0 * (a + b * b - 7.0) + 0.1 * b,
                2.0 * (a * a + b - 11.0) + 4.0 * b * (a + b * b - 7.0) + 0.1 * a,
            )
        };
        let (g0, g1) = h(p[0], p[1]);
        let (g2, g3) = h(p[2], p[3]);
        crate::common::close_to("himmelblau_pairs", &g, &[g0 + 1.0, g1, g2, g3], 1e-12);
    }
}

/// Options read where they were made: a `match` whose arms bind other names (or none)
/// than its first, and an `Option` held in a name while what it reads changes. Each gave
/// a value other than the function's before (a silent wrong answer).
mod options_read_where_made {
    use mochi::prelude::*;

    /// The first element above 1 (x₂ here), its arm naming it `w` beside the function's
    /// `v`: x₂v + sin x₂ + v·x₁ with v = x₀/2 + x₄.
    #[differentiable]
    pub fn first_above(x: &[f64]) -> f64 {
        let v = 0.5 * x[0] + x[4];
        let hit = x.iter().copied().find(|&t| t > 1.0);
        let r = match hit {
            Some(v) if v > 2.0 => v.ln(),
            Some(w) => w * v + w.sin(),
            None => v * v,
        };
        r + v * x[1]
    }

    /// The `_` arm reads the function's `s` (the last element is not above 3):
    /// (s/4 + x₂)·s with s = x₀² + x₁.
    #[differentiable]
    pub fn tail_or_norm(x: &[f64]) -> f64 {
        let s = x[0] * x[0] + x[1];
        let tail = match x.last().copied() {
            Some(s) if s > 3.0 => s.sqrt(),
            _ => s * 0.25 + x[2],
        };
        tail * s
    }

    /// `prev` read at the index it was made with, before `k += 2`: (x₁² + 1)·sin x₃.
    #[differentiable]
    pub fn lagged(x: &[f64]) -> f64 {
        let mut k = 1;
        let prev = x.get(k).copied();
        k += 2;
        let lag = prev.map_or(0.0, |p| p * p + 1.0);
        let cur = x.get(k).copied().unwrap_or(-1.0);
        lag * cur.sin()
    }

    /// The best scaled by the first `w`, then `w` bound again: (x₄w₀ + 1)·w₁ with
    /// w₀ = 1/2 + x₀², w₁ = 2w₀ + x₁.
    #[differentiable]
    pub fn best_scaled(x: &[f64]) -> f64 {
        let w = 0.5 + x[0] * x[0];
        let best = x.iter().map(|v| v * w).max_by(|a, b| a.total_cmp(b));
        let w = w * 2.0 + x[1];
        best.map_or(0.0, |m| m * w) + w
    }

    /// The position above the first threshold (x₂), read after it is halved: x₂² − ½.
    #[differentiable]
    pub fn crossing(x: &[f64]) -> f64 {
        let mut thr = 1.0;
        let cross = x.iter().position(|&v| v > thr);
        thr *= 0.5;
        cross.map_or(0.0, |i| x[i] * x[i] - thr)
    }

    /// A ring's neighbours: `right` made with the loop's `i`, read after `i` is bound
    /// again to the left neighbour's index.
    #[differentiable]
    pub fn ring(x: &[f64]) -> f64 {
        let n = x.len();
        let mut e = 0.0;
        for i in 0..n {
            let right = x.get(i + 1);
            let here = x[i];
            let i = (i + n - 1) % n;
            let left = x[i];
            e += right.map_or(here * left, |r| (r - here).powi(2) + r * left);
        }
        e
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(first_above, super::X);
        all_orders!(tail_or_norm, super::X);
        all_orders!(lagged, super::X);
        all_orders!(best_scaled, super::X);
        all_orders!(crossing, super::X);
        all_orders!(ring, super::X);
    }

    fn by_hand(name: &str, vg: (f64, Vec<f64>), f: fn(&[f64]) -> f64, value: f64, dx: &[f64]) {
        crate::common::assert_by_hand(name, vg, f, &X, value, dx);
    }

    #[test]
    fn values_by_hand() {
        let x = X;
        let v = 0.5 * x[0] + x[4];
        by_hand(
            "first_above",
            first_above::value_and_gradient(&x),
            first_above,
            x[2] * v + x[2].sin() + v * x[1],
            &[0.5 * (x[2] + x[1]), v, v + x[2].cos(), 0.0, x[2] + x[1]],
        );
        let s = x[0] * x[0] + x[1];
        let ds = 0.5 * s + x[2];
        by_hand(
            "tail_or_norm",
            tail_or_norm::value_and_gradient(&x),
            tail_or_norm,
            (0.25 * s + x[2]) * s,
            &[ds * 2.0 * x[0], ds, s, 0.0, 0.0],
        );
        let lag = x[1] * x[1] + 1.0;
        by_hand(
            "lagged",
            lagged::value_and_gradient(&x),
            lagged,
            lag * x[3].sin(),
            &[0.0, 2.0 * x[1] * x[3].sin(), 0.0, lag * x[3].cos(), 0.0],
        );
        let (w0, w1) = (0.5 + x[0] * x[0], 1.0 + 2.0 * x[0] * x[0] + x[1]);
        let m = x[4] * w0;
        by_hand(
            "best_scaled",
            best_scaled::value_and_gradient(&x),
            best_scaled,
            (m + 1.0) * w1,
            &[
                4.0 * x[0] * (m + 1.0) + w1 * x[4] * 2.0 * x[0],
                m + 1.0,
                0.0,
                0.0,
                w1 * w0,
            ],
        );
        let (v, g) = ring::value_and_gradient(&x);
        assert_eq!(v, ring(&x));
        crate::common::assert_gradient_matches(ring, &g, &x);
        by_hand(
            "crossing",
            crossing::value_and_gradient(&x),
            crossing,
            x[2] * x[2] - 0.5,
            &[0.0, 0.0, 2.0 * x[2], 0.0, 0.0],
        );
    }
}

/// Held pieces, windows and elements read as they were made: two forms that gave values
/// other than the function's before (a silent wrong answer), and a chain before `find`.
mod held_values_read_as_made {
    use mochi::prelude::*;

    /// Pieces of two, the size bound again before they are read: 3(x₀x₁ + x₂x₃ + x₄).
    #[differentiable]
    pub fn pairs_scaled(x: &[f64]) -> f64 {
        let n = 2;
        let ch = x.chunks(n);
        let n = 3;
        ch.map(|c| c.iter().product::<f64>() * n as f64).sum()
    }

    /// Parameters unpacked by advancing a slice: (x₀ + 2x₁)x₂ + x₃² + x₄².
    #[differentiable]
    pub fn unpacked(x: &[f64]) -> f64 {
        let mut rest: &[f64] = x;
        let a = &rest[..2];
        rest = &rest[2..];
        let b = &rest[..1];
        rest = &rest[1..];
        (a[0] + 2.0 * a[1]) * b[0] + rest.iter().map(|c| c * c).sum::<f64>()
    }

    /// The first doubled element above 1 (x₀ here), `|&v|` in both closures: 2x₀x₁.
    #[differentiable]
    pub fn first_doubled(x: &[f64]) -> f64 {
        let hit = x.iter().map(|&v| v * 2.0).find(|&v| v > 1.0);
        hit.unwrap_or(0.0) * x[1]
    }

    const X: [f64; 5] = [0.7, -0.3, 1.4, 0.25, 2.1];

    mod t {
        use crate::all_orders;
        all_orders!(pairs_scaled, super::X);
        all_orders!(unpacked, super::X);
        all_orders!(first_doubled, super::X);
    }

    #[test]
    fn values_by_hand() {
        let x = X;
        crate::common::assert_by_hand(
            "pairs_scaled",
            pairs_scaled::value_and_gradient(&x),
            pairs_scaled,
            &x,
            3.0 * (x[0] * x[1] + x[2] * x[3] + x[4]),
            &[3.0 * x[1], 3.0 * x[0], 3.0 * x[3], 3.0 * x[2], 3.0],
        );
        crate::common::assert_by_hand(
            "unpacked",
            unpacked::value_and_gradient(&x),
            unpacked,
            &x,
            (x[0] + 2.0 * x[1]) * x[2] + x[3] * x[3] + x[4] * x[4],
            &[x[2], 2.0 * x[2], x[0] + 2.0 * x[1], 2.0 * x[3], 2.0 * x[4]],
        );
        crate::common::assert_by_hand(
            "first_doubled",
            first_doubled::value_and_gradient(&x),
            first_doubled,
            &x,
            2.0 * x[0] * x[1],
            &[2.0 * x[1], 2.0 * x[0], 0.0, 0.0, 0.0],
        );
    }
}
