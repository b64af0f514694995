//! Slices split and walked the way Rust users do: `split_at`, `split_at_mut`,
//! `chunks`, `step_by`, `rev`, `take`/`skip`, `fold`, three-way `zip`, each checked by
//! `test_rule`.

#![allow(
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::double_ended_iterator_last
)]

mod common;
use mochi::prelude::*;

#[differentiable]
fn split_at_halves(x: &[f64]) -> f64 {
    let (a, b) = x.split_at(2);
    a[0] * b[0] + a[1] * b[b.len() - 1]
}

#[differentiable]
fn split_at_sums(x: &[f64]) -> f64 {
    let (head, tail) = x.split_at(1);
    head[0] * tail.iter().map(|v| v * v).sum::<f64>()
}

#[differentiable]
fn split_at_mut_update(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let (a, b) = v.split_at_mut(2);
    a[0] += b[0] * 2.0;
    b[1] = a[1] * a[0];
    v[0] + v[3] * v[1]
}

#[differentiable]
fn chunks_loop(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x.chunks(2) {
        s += c[0] * c[c.len() - 1];
    }
    s
}

#[differentiable]
fn chunks_exact_chain(x: &[f64]) -> f64 {
    x.chunks_exact(2).map(|c| c[0] * c[1]).sum()
}

#[differentiable]
fn chunks_chain(x: &[f64]) -> f64 {
    x.chunks(3).map(|c| c.iter().sum::<f64>().powi(2)).sum()
}

#[differentiable]
fn rev_sum(x: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut w = 1.0;
    for v in x.iter().rev() {
        s += w * v;
        w *= 0.5;
    }
    s
}

#[differentiable]
fn step_by_sum(x: &[f64]) -> f64 {
    x.iter().step_by(2).map(|v| v.sin()).sum()
}

#[differentiable]
fn step_by_loop(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.iter().step_by(2) {
        s += v * v;
    }
    s
}

#[differentiable]
fn take_skip(x: &[f64]) -> f64 {
    let a: f64 = x.iter().take(2).sum();
    let b: f64 = x.iter().skip(2).map(|v| v.exp()).sum();
    a * b
}

#[differentiable]
fn copied_fold(x: &[f64]) -> f64 {
    x.iter().copied().fold(0.0, |acc, v| acc * 0.5 + v * v)
}

#[differentiable]
fn zip_three(x: &[f64], y: &[f64], z: &[f64]) -> f64 {
    x.iter()
        .zip(y.iter())
        .zip(z.iter())
        .map(|((a, b), c)| a * b + c)
        .sum()
}

#[differentiable]
fn zip_three_loop(x: &[f64], y: &[f64], z: &[f64]) -> f64 {
    let mut s = 0.0;
    for ((a, b), c) in x.iter().zip(y).zip(z) {
        s += a * b * c;
    }
    s
}

#[differentiable]
fn last_element(x: &[f64]) -> f64 {
    let l = x.last().unwrap();
    l * x[0]
}

#[differentiable]
fn iter_last(x: &[f64]) -> f64 {
    let l = x.iter().map(|v| v * 2.0).last().unwrap();
    l * x[0]
}

#[differentiable]
fn rev_enumerate(x: &[f64]) -> f64 {
    x.iter()
        .rev()
        .enumerate()
        .map(|(i, v)| v * (i as f64 + 1.0))
        .sum()
}

#[differentiable]
fn rev_enumerate_loop(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, v) in x.iter().rev().enumerate() {
        s += v.powi(i as i32 + 1);
    }
    s
}

#[differentiable]
fn sumsq(v: &[f64]) -> f64 {
    v.iter().map(|t| t * t).sum()
}

/// Halves passed to a helper and zipped together.
#[differentiable]
fn split_halves_helper(x: &[f64]) -> f64 {
    let n = x.len() / 2;
    let (a, b) = x.split_at(n);
    let mut s = sumsq(a) - sumsq(b);
    for (p, q) in a.iter().zip(b.iter()) {
        s += p * q;
    }
    s
}

/// Chunks passed to a helper.
#[differentiable]
fn chunks_helper(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x.chunks(4) {
        s += sumsq(c).sqrt();
    }
    s
}

#[differentiable]
fn cube(v: f64) -> f64 {
    v * v * v
}

/// Elements passed on by value (`f(*v)`) and by reference (`f(&x[..])`) from loops.
#[differentiable]
fn deref_arguments(x: &[f64], y: &[f64], r: &f64) -> f64 {
    let mut s = cube(*r);
    for (a, b) in x.iter().zip(y) {
        s += cube(*a) * b;
    }
    for v in x {
        s += cube(*v).sin();
    }
    s
}

/// `split_at_mut` of a `&mut [f64]` argument: the head updated from the tail.
#[differentiable]
fn split_at_mut_argument(s: &mut [f64], a: f64) -> f64 {
    let (h, c) = s.split_at_mut(1);
    h[0] = h[0] * a + c[0];
    c[1] += h[0] * c[0];
    s.iter().map(|v| v * v).sum()
}

#[differentiable]
fn scale_by(v: &mut [f64], a: f64) {
    for i in 0..v.len() {
        v[i] *= a;
    }
}

/// Halves of `split_at_mut` passed to a helper that writes them.
#[differentiable]
fn split_at_mut_halves_passed(x: &mut [f64], a: f64) -> f64 {
    let (head, tail) = x.split_at_mut(2);
    scale_by(head, a);
    scale_by(tail, head[0] + a);
    x.iter().map(|v| v.sin()).sum()
}

mod checked_sequences {
    use crate::check;

    fn x6() -> Vec<f64> {
        vec![0.5, -1.2, 0.3, 0.9, -0.4, 1.1]
    }

    check!(split_at_halves, (x6(),), |a| (&a.0));
    check!(split_at_sums, (x6(),), |a| (&a.0));
    check!(split_at_mut_update, (x6(),), |a| (&a.0));
    check!(chunks_loop, (vec![0.5_f64, -1.2, 0.3, 0.9, -0.4],), |a| {
        (&a.0)
    });
    check!(chunks_exact_chain, (x6(),), |a| (&a.0));
    check!(chunks_chain, (vec![0.5_f64, -1.2, 0.3, 0.9, -0.4],), |a| {
        (&a.0)
    });
    check!(rev_sum, (x6(),), |a| (&a.0));
    check!(step_by_sum, (x6(),), |a| (&a.0));
    check!(step_by_loop, (x6(),), |a| (&a.0));
    check!(take_skip, (x6(),), |a| (&a.0));
    check!(copied_fold, (x6(),), |a| (&a.0));
    check!(
        zip_three,
        (
            x6(),
            vec![0.1_f64, 0.7, -0.4, 1.1, 0.2, 0.3],
            vec![1.0_f64, 2.0, 3.0, -1.0, 0.5, 0.25]
        ),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(
        zip_three_loop,
        (
            x6(),
            vec![0.1_f64, 0.7, -0.4, 1.1, 0.2, 0.3],
            vec![1.0_f64, 2.0, 3.0, -1.0, 0.5, 0.25]
        ),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(last_element, (x6(),), |a| (&a.0));
    check!(iter_last, (x6(),), |a| (&a.0));
    check!(rev_enumerate, (x6(),), |a| (&a.0));
    check!(rev_enumerate_loop, (x6(),), |a| (&a.0));
    check!(split_halves_helper, (x6(),), |a| (&a.0));
    check!(chunks_helper, (x6(),), |a| (&a.0));
    check!(split_at_mut_argument, (x6(), 0.7_f64), |a| (&mut a.0, a.1));
    check!(split_at_mut_halves_passed, (x6(), 0.7_f64), |a| (
        &mut a.0, a.1
    ));
    check!(
        deref_arguments,
        (x6(), vec![0.1_f64, 0.7, -0.4, 1.1, 0.2, 0.3], 0.8_f64),
        |a| (&a.0, &a.1, &a.2)
    );
}
