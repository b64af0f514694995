//! Everyday Rust: `if let`, `while let`, `let … else`, `match` on an `Option<f64>`,
//! written as Rust users write them, each checked by `test_rule` (finite differences,
//! the adjoint identity, the pullback contract).

#![allow(
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::manual_map,
    clippy::assign_op_pattern,
    clippy::useless_vec
)]

mod common;
use mochi::prelude::*;
use ndarray::Array1;

#[differentiable]
fn if_let_inactive_option(x: f64, k: Option<usize>) -> f64 {
    let mut y = x;
    if let Some(n) = k {
        y = y * n as f64;
    }
    y * x
}

#[differentiable]
fn if_let_active_option(x: f64, w: Option<f64>) -> f64 {
    if let Some(v) = w {
        x * v.sin()
    } else {
        x.cos()
    }
}

#[differentiable]
fn if_let_else_if_let(x: f64, a: Option<f64>, b: Option<f64>) -> f64 {
    let mut y = x * x;
    if let Some(u) = a {
        y += u * x;
    } else if let Some(v) = b {
        y -= v.exp();
    }
    y
}

#[differentiable]
fn match_option_f64(x: f64, w: Option<f64>) -> f64 {
    let s = match w {
        Some(v) => v * x,
        None => 1.0,
    };
    s.tanh()
}

#[differentiable]
fn match_option_none_first(x: &[f64], w: Option<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += match w {
            None => x[i],
            Some(c) => c * x[i] * x[i],
        };
    }
    s
}

#[differentiable]
fn while_let_pop(x: f64, mut steps: Vec<usize>) -> f64 {
    let mut y = x;
    while let Some(k) = steps.pop() {
        y = y * 0.5 + (k as f64) * x.sin();
    }
    y
}

#[differentiable]
fn let_else_option(x: f64, k: Option<f64>) -> f64 {
    let Some(s) = k else {
        return x * 2.0;
    };
    x * s + s
}

#[differentiable]
fn let_else_inactive(x: &[f64], n: Option<usize>) -> f64 {
    let Some(n) = n else { return 0.0 };
    let mut y = 0.0;
    for i in 0..n {
        y += x[i] * x[i];
    }
    y
}

#[differentiable]
fn if_let_enum(x: f64, n: usize) -> f64 {
    let r: Result<usize, String> = if n > 1 { Ok(n) } else { Err(String::new()) };
    let mut y = x.exp();
    if let Ok(k) = r {
        y = y * (k as f64 + 1.0);
    }
    y
}

#[differentiable]
fn local_closure_called(x: f64) -> f64 {
    let sq = |v: f64| v * v;
    sq(x) + sq(x.sin())
}

#[differentiable]
fn local_closure_captures(x: &[f64], a: f64) -> f64 {
    let scale = |v: f64, w: f64| a * v + w;
    let mut s = 0.0;
    for i in 1..x.len() {
        s += scale(x[i], x[i - 1]).tanh();
    }
    s
}

#[differentiable]
fn local_closure_in_macro(x: f64, a: f64) -> f64 {
    let f = |w: f64| (w * a).sin();
    let v = vec![f(x), f(x * x), a];
    v[0] * v[1] + v[2]
}

#[differentiable]
fn local_closure_in_adapter(x: &[f64], a: f64) -> f64 {
    let f = |v: &f64| (v * a).sin();
    x.iter().map(f).sum::<f64>()
}

/// `f64::from(x)` of an `f32` and of an integer (what clippy's `cast_lossless`
/// suggests for `x as f64`).
#[differentiable]
fn lossless_from(x: f32, y: f64) -> f64 {
    f64::from(x) * y + f64::from(3_i32) * y * y
}

/// Linear interpolation at `t`, the interval found by `partition_point`.
#[differentiable]
fn interpolate(xs: &[f64], ys: &[f64], t: f64) -> f64 {
    let k = xs.partition_point(|&v| v <= t).clamp(1, xs.len() - 1);
    let w = (t - xs[k - 1]) / (xs[k] - xs[k - 1]);
    ys[k - 1] * (1.0 - w) + ys[k] * w
}

/// A local closure taking `&[f64]`, called with rows of a `&[Vec<f64>]` from
/// `keys.iter()` (attention scores' log-sum-exp).
#[differentiable]
fn closure_over_rows(keys: &[Vec<f64>], q: &[f64]) -> f64 {
    let score = |k: &[f64]| -> f64 { k.iter().zip(q).map(|(a, b)| a * b).sum() };
    let mut s = 0.0;
    for k in keys.iter() {
        s += score(k).exp();
    }
    s.ln()
}

/// `drop(v)` of a differentiable local once it is no longer needed.
#[differentiable]
fn dropped_buffer(x: &[f64]) -> f64 {
    let v = x.to_vec();
    let s = v[0] * v[1];
    drop(v);
    s * x[2]
}

mod checked {
    use crate::check;

    check!(local_closure_called, (0.7_f64,), |a| (a.0));
    check!(lossless_from, (1.5_f32, 0.5_f64), |a| (a.0, a.1));
    check!(dropped_buffer, (vec![0.3, -0.7, 1.1],), |a| (&a.0));
    check!(
        closure_over_rows,
        (
            vec![vec![0.3, -0.2], vec![0.5, 0.9], vec![-1.0, 0.4]],
            vec![0.7, -0.4]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        interpolate,
        (vec![0.0, 1.0, 2.5, 4.0], vec![1.0, 3.0, -1.0, 2.0], 1.7_f64),
        |a| (&a.0, &a.1, a.2)
    );
    check!(local_closure_in_macro, (0.7_f64, 1.3_f64), |a| (a.0, a.1));
    check!(
        local_closure_captures,
        (vec![0.5_f64, -1.2, 0.3], 0.8_f64),
        |a| (&a.0, a.1)
    );
    check!(
        local_closure_in_adapter,
        (vec![0.5_f64, -1.2, 0.3], 0.8_f64),
        |a| (&a.0, a.1)
    );

    check!(if_let_inactive_option, (1.3_f64, Some(3_usize)), |a| (
        a.0, a.1
    ));
    check!(if_let_active_option, (1.3_f64, Some(0.4_f64)), |a| (
        a.0, a.1
    ));
    check!(
        if_let_else_if_let,
        (0.7_f64, None::<f64>, Some(0.3_f64)),
        |a| (a.0, a.1, a.2)
    );
    check!(match_option_f64, (0.7_f64, Some(-0.4_f64)), |a| (a.0, a.1));
    check!(
        match_option_none_first,
        (vec![0.5_f64, -1.2, 0.3], Some(0.8_f64)),
        |a| (&a.0, a.1)
    );
    check!(while_let_pop, (0.9_f64, vec![1_usize, 2, 3]), |a| (
        a.0,
        a.1.clone()
    ));
    check!(let_else_option, (0.9_f64, Some(1.7_f64)), |a| (a.0, a.1));
    check!(
        let_else_inactive,
        (vec![0.5_f64, -1.2, 0.3], Some(2_usize)),
        |a| (&a.0, a.1)
    );
    check!(if_let_enum, (0.4_f64, 3_usize), |a| (a.0, a.1));

    #[test]
    fn none_branches() {
        let (_, (dx, dw)) = super::if_let_active_option::value_and_gradient(1.3, None);
        assert!((dx - -(1.3_f64.sin())).abs() < 1e-12);
        assert_eq!(dw, None);
        let (y, (dx, _)) = super::let_else_option::value_and_gradient(0.9, None);
        assert_eq!((y, dx), (1.8, 2.0));
    }
}

#[differentiable]
fn labelled_break(x: f64) -> f64 {
    let mut y = x;
    'outer: for _ in 0..4 {
        for _ in 0..4 {
            y = y * x + 0.1;
            if y > 3.0 {
                break 'outer;
            }
        }
        y = y.sin() + 1.0;
    }
    y
}

#[differentiable]
fn labelled_continue(x: &[f64], a: f64) -> f64 {
    let mut s = 0.0;
    'rows: for i in 0..x.len() {
        let mut k = 0;
        while k < 3 {
            if x[i] * a > 0.5 {
                continue 'rows;
            }
            s += (x[i] * a).tanh();
            k += 1;
        }
        s *= 0.9;
    }
    s
}

#[differentiable]
fn labelled_loop_search(x: f64) -> f64 {
    let mut y = x;
    let mut n = 0;
    'search: loop {
        let mut m = 0;
        while m < 5 {
            y = y * 1.1 + 0.05;
            m += 1;
            if y > 2.0 {
                break 'search;
            }
        }
        n += 1;
        if n > 3 {
            break;
        }
    }
    y * x
}

mod checked_labels {
    use crate::check;

    check!(labelled_break, (1.2_f64,), |a| (a.0));
    check!(
        labelled_continue,
        (vec![0.5_f64, -1.2, 0.3, 0.9], 0.8_f64),
        |a| (&a.0, a.1)
    );
    check!(labelled_loop_search, (0.7_f64,), |a| (a.0));
}

// ---- iterator chains, sub-slices and small idioms

#[differentiable]
fn sum_sq(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * x[i];
    }
    s
}

#[differentiable]
fn subslices_passed_on(x: &[f64]) -> f64 {
    sum_sq(&x[1..]) + 2.0 * sum_sq(&x[..2]) + sum_sq(&x[1..3]).sqrt()
}

#[differentiable]
fn collect_then_index(x: &[f64]) -> f64 {
    let y: Vec<f64> = x.iter().map(|v| v.sin()).collect();
    let z = x.iter().map(|&v| v * v).collect::<Vec<f64>>();
    y[0] * y[1] + z[2]
}

#[differentiable]
fn total_variation(x: &[f64]) -> f64 {
    x.iter()
        .zip(x.iter().skip(1))
        .map(|(a, b)| (b - a).powi(2))
        .sum()
}

#[differentiable]
fn range_map_sum(x: &[f64]) -> f64 {
    (0..x.len()).map(|i| x[i] * (i as f64 + 0.5)).sum()
}

#[differentiable]
fn enumerate_map_sum(x: &[f64]) -> f64 {
    x.iter()
        .enumerate()
        .map(|(i, v)| v * (i as f64 + 1.0))
        .sum::<f64>()
}

#[differentiable]
fn fold_max(x: &[f64]) -> f64 {
    x.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
}

#[differentiable]
fn logsumexp(x: &[f64]) -> f64 {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

#[differentiable]
fn rev_take_filter(x: &[f64], a: f64) -> f64 {
    let head: f64 = x.iter().rev().take(2).map(|v| v * a).sum();
    let pos: f64 = x.iter().filter(|v| **v > 0.0).map(|v| v.exp()).sum();
    head * pos
}

#[differentiable]
fn subslice_iter(x: &[f64]) -> f64 {
    x[1..].iter().map(|v| v.tanh()).sum::<f64>() * x[..2].iter().product::<f64>()
}

#[differentiable]
fn for_zip_skip(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in x.iter().zip(x.iter().skip(1)) {
        s += a * b;
    }
    s
}

#[differentiable]
fn windows_loop(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for w in x.windows(2) {
        s += w[0] * w[1] - w[w.len() - 1];
    }
    s
}

#[differentiable]
fn chunks_exact_loop(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x.chunks_exact(2) {
        s += c[0].sin() * c[1];
    }
    s
}

#[differentiable]
fn swap_elements(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.swap(0, 1);
    v[0] * 2.0 + v[1] * v[2]
}

#[differentiable]
fn vec_literal(x: f64, y: f64) -> f64 {
    let v = vec![x, y * x, 1.0];
    v[0] * v[1] + v[2]
}

#[differentiable]
fn first_last(x: &[f64]) -> f64 {
    x.first().unwrap() * x.last().unwrap() + *x.last().unwrap()
}

#[differentiable]
fn untyped_literal_with_arrays(x: &Array1<f64>) -> f64 {
    let mut y = 1.0;
    y = y * x.sum();
    y
}

#[differentiable]
fn for_each_accumulates(x: &[f64], a: f64) -> f64 {
    let mut s = 0.0;
    x.iter()
        .enumerate()
        .for_each(|(i, v)| s += v * a * i as f64);
    s
}

mod checked_chains {
    use crate::check;
    use ndarray::array;

    fn x4() -> Vec<f64> {
        vec![0.5, -1.2, 0.3, 0.9]
    }

    check!(subslices_passed_on, (x4(),), |a| (&a.0));
    check!(collect_then_index, (x4(),), |a| (&a.0));
    check!(total_variation, (x4(),), |a| (&a.0));
    check!(range_map_sum, (x4(),), |a| (&a.0));
    check!(enumerate_map_sum, (x4(),), |a| (&a.0));
    check!(fold_max, (x4(),), |a| (&a.0));
    check!(logsumexp, (x4(),), |a| (&a.0));
    check!(rev_take_filter, (x4(), 0.7_f64), |a| (&a.0, a.1));
    check!(subslice_iter, (x4(),), |a| (&a.0));
    check!(for_zip_skip, (x4(),), |a| (&a.0));
    check!(windows_loop, (x4(),), |a| (&a.0));
    check!(chunks_exact_loop, (x4(),), |a| (&a.0));
    check!(swap_elements, (x4(),), |a| (&a.0));
    check!(vec_literal, (0.4_f64, -1.1_f64), |a| (a.0, a.1));
    check!(first_last, (x4(),), |a| (&a.0));
    check!(untyped_literal_with_arrays, (array![0.5_f64, -1.2],), |a| {
        (&a.0)
    });
    check!(for_each_accumulates, (x4(), 0.7_f64), |a| (&a.0, a.1));

    #[test]
    fn logsumexp_gradient_is_softmax() {
        let x = x4();
        let g = super::logsumexp::gradient(&x);
        let z: f64 = x.iter().map(|v| v.exp()).sum();
        for (gi, xi) in g.iter().zip(&x) {
            assert!((gi - xi.exp() / z).abs() < 1e-12, "{g:?}");
        }
    }
}

// ---- mutual recursion with no annotation: the calls in branches box their pullbacks

#[differentiable]
fn ping(x: f64, n: u32) -> f64 {
    if n == 0 {
        x
    } else {
        pong(x.sin() + 0.1, n - 1) * 1.1
    }
}

#[differentiable]
fn pong(x: f64, n: u32) -> f64 {
    if n == 0 {
        x * x
    } else {
        ping(x * 0.7, n - 1) + x
    }
}

mod checked_recursion {
    use crate::check;

    check!(ping, (0.8_f64, 5_u32), |a| (a.0, a.1));
    check!(pong, (0.8_f64, 4_u32), |a| (a.0, a.1));
}

#[differentiable]
fn local_array_as_slice(x: f64) -> f64 {
    let a = [x, 2.0 * x, x * x];
    let b: [f64; 2] = [x.sin(), 1.0];
    sum_sq(&a) + sum_sq(&b) * a[1]
}

mod checked_arrays {
    use crate::check;

    check!(local_array_as_slice, (0.7_f64,), |a| (a.0));
}

#[differentiable]
fn sign_constant_chain(t: f64) -> f64 {
    let s = if t > 0.0 {
        1.0
    } else if t < 0.0 {
        -1.0
    } else {
        0.0
    };
    let k = match s > 0.0 {
        true => 2.0,
        false => 3.0,
    };
    s * k * t * t
}

mod checked_constants {
    use crate::check;

    check!(sign_constant_chain, (0.7_f64,), |a| (a.0));

    #[test]
    fn negative_side() {
        let (y, g) = super::sign_constant_chain::value_and_gradient(-0.5);
        assert_eq!(y, -0.75);
        assert!((g - 3.0).abs() < 1e-12); // -3 t² → -6 t = 3
    }
}

#[differentiable]
fn concatenate_and_stack(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let c = ndarray::concatenate(ndarray::Axis(0), &[a.view(), b.view()]).unwrap();
    let s = ndarray::stack(ndarray::Axis(0), &[a.view(), b.view()]).unwrap();
    c.mapv(|v| v * v).sum() + s.sum() * c[0]
}

mod checked_join {
    use crate::check;
    use ndarray::array;

    check!(
        concatenate_and_stack,
        (array![0.5_f64, -1.0], array![0.3_f64, 2.0]),
        |a| (&a.0, &a.1)
    );
}

#[differentiable]
fn mut_arg_sum(x: &mut [f64], a: f64) -> f64 {
    x[0] = x[0] * a;
    x.iter().sum::<f64>() + x.iter().map(|v| v * v).sum::<f64>()
}

#[differentiable]
fn mut_array_mapv(x: &mut Array1<f64>, a: f64) -> f64 {
    x[0] = x[0] * a;
    x.mapv(|v| v.sin()).sum() + x.sum()
}

mod checked_mut_args {
    use crate::check;
    use ndarray::array;

    check!(mut_arg_sum, (vec![0.5_f64, -1.0, 0.3], 1.3_f64), |a| (
        &mut a.0, a.1
    ));
    check!(mut_array_mapv, (array![0.5_f64, -1.0, 0.3], 1.3_f64), |a| (
        &mut a.0, a.1
    ));
}

#[differentiable]
fn row_model(w: &[f64], row: &[f64]) -> f64 {
    let mut s = 0.0;
    for j in 0..row.len() {
        s += w[j] * row[j];
    }
    s.tanh()
}

/// A data set as rows, iterated as Rust users do.
#[differentiable]
fn rows_loss(w: &[f64], data: &[Vec<f64>], y: &[f64]) -> f64 {
    let mut loss = 0.0;
    for (row, t) in data.iter().zip(y.iter()) {
        let e = row_model(w, row) - t;
        loss += e * e + 0.01 * row[0] * w[0];
    }
    loss
}

mod checked_rows {
    use crate::check;

    check!(
        rows_loss,
        (
            vec![0.5_f64, -0.3],
            vec![vec![1.0_f64, 2.0], vec![-0.5, 0.7], vec![0.2, -1.1]],
            vec![0.3_f64, -0.2, 0.5]
        ),
        |a| (&a.0, &a.1, &a.2)
    );
}

/// A top-level index variable shadowed later: the first reads keep their index.
#[differentiable]
fn shadowed_index(x: &[f64]) -> f64 {
    let k = 1;
    let a = x[k] * x[k + 1];
    let k = 0;
    a + x[k].exp()
}

mod checked_shadowing {
    use crate::check;

    check!(shadowed_index, (vec![0.5_f64, -1.2, 0.3],), |a| (&a.0));
}

/// A window loop whose body binds the window's name again (an inlined closure's
/// parameter): found by the generator, seed 3002.
#[differentiable]
fn window_name_rebound(x: &[f64]) -> f64 {
    let f = |w: f64| (w * 0.5).sin();
    let mut s = 0.0;
    for w in x.windows(2) {
        s += w[0] * w[1] * f(x[0]).tanh();
    }
    s
}

mod checked_window_rebound {
    use crate::check;

    check!(window_name_rebound, (vec![0.5_f64, -1.2, 0.3],), |a| (&a.0));
}
