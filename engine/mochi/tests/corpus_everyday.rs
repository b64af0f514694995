//! Everyday idioms that failed to compile before: a `for &v in x` element passed to a
//! helper, array patterns, `max_by(..).copied().unwrap()` and `*chain.max_by(..)
//! .unwrap()`, a method whose closure captures `self` — each checked by `test_rule`
//! (finite differences, the adjoint identity) or against a closed form. Also arrays:
//! views by value in iterator adapters, columns (not contiguous), `var`/`std`, arrays
//! made from a `Vec`.

#![allow(
    clippy::double_ended_iterator_last,
    clippy::iter_nth_zero,
    clippy::iter_next_slice,
    clippy::manual_unwrap_or,
    clippy::manual_unwrap_or_default,
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::unnecessary_lazy_evaluations,
    clippy::useless_vec,
    clippy::while_let_on_iterator
)]

mod common;
use mochi::prelude::*;
use ndarray::{Array1, Array2, ArrayView1};

#[differentiable]
fn cube(x: f64) -> f64 {
    x * x * x
}

/// The element bound by value (`&v`) goes to a helper as a value.
#[differentiable]
fn helper_of_element(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x {
        s += cube(v) * v.sin();
    }
    s
}

/// The same with `enumerate` and `zip`, by value and by reference.
#[differentiable]
fn helper_of_pairs(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, &v) in x.iter().enumerate() {
        s += (i as f64 + 1.0) * cube(v);
    }
    for (&a, b) in x.iter().zip(y.iter()) {
        s += cube(a) * b;
    }
    s
}

/// `let [a, b, c] = [..]` and a nested tuple pattern.
#[differentiable]
fn array_pattern(x: &[f64]) -> f64 {
    let [a, b, c] = [x[0], x[1].exp(), x[2] * x[0]];
    let (d, [e, _]) = (a * b, [c, x[1]]);
    d + e * c - b
}

/// `max_by` with the `Option` copied, and `min_by` under `*`.
#[differentiable]
fn max_and_min_by(x: &[f64]) -> f64 {
    let hi = x
        .iter()
        .max_by(|a, b| a.partial_cmp(b).unwrap())
        .copied()
        .unwrap();
    let lo = *x.iter().min_by(|a, b| a.total_cmp(b)).unwrap();
    hi * hi - lo + x.iter().map(|v| (v - hi).exp()).sum::<f64>()
}

#[derive(Clone, Debug, Tangent)]
struct Layer {
    w: f64,
    b: Vec<f64>,
}

impl Layer {
    /// A closure in an adapter that reads `self`'s fields.
    #[differentiable]
    fn loss(&self, x: &[f64]) -> f64 {
        x.iter().map(|v| (v * self.w).sin()).sum::<f64>()
            + x.iter()
                .zip(self.b.iter())
                .map(|(v, b)| (v * self.w + b).tanh())
                .sum::<f64>()
    }
}

/// An array view taken by value, reduced by iterator adapters (the pullback must not
/// borrow the view).
#[differentiable]
fn view_by_value(x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>()
        + x.iter()
            .zip(y.iter())
            .map(|(a, b)| a * b.sin())
            .sum::<f64>()
        + y.iter().fold(0.0, |acc, v| acc + v.exp())
}

/// Columns of a matrix (not contiguous in memory) reduced by iterator adapters.
#[differentiable]
fn column_adapters(a: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    for col in a.columns() {
        s += col.iter().map(|v| v * v).sum::<f64>().sqrt();
    }
    s + a.column(1).iter().fold(0.0, |acc, v| acc + v.exp())
}

/// Variance and standard deviation with `ddof`, and arrays made from a `Vec`.
#[differentiable]
fn spread_and_from_vec(x: &Array1<f64>, v: &Vec<f64>) -> f64 {
    let a = Array1::from(v.clone());
    let m = Array2::from_shape_vec((2, 2), v.to_vec()).unwrap();
    x.var(0.0) + x.std(1.0) * a.dot(&a) + m.dot(&m).sum() + Array1::from_vec(v.clone()).var(1.0)
}

/// A buffer grown by `push` and `extend_from_slice`, then read by index and by a chain;
/// rows pushed onto a `Vec<Vec<f64>>`.
#[differentiable]
fn grown_buffers(x: &[f64], a: f64) -> f64 {
    let mut v = Vec::new();
    for &xi in x {
        v.push(xi * a);
    }
    v.extend_from_slice(&x[1..]);
    v.push(a.sin());
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for i in 0..2 {
        rows.push(vec![x[i], x[i] * a]);
    }
    v[0] * v[v.len() - 1] + v.iter().map(|t| t * t).sum::<f64>() + rows[1][1] * rows[0][0]
}

/// A softmax returned as a collected chain (the tail's type is the return type), its
/// entropy through a helper, `reverse`, and `rem_euclid`.
#[differentiable]
fn softmax(x: &[f64]) -> Vec<f64> {
    let m = x.iter().cloned().fold(f64::MIN, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

#[differentiable]
fn entropy_reversed(x: &[f64], period: f64) -> f64 {
    let mut p = softmax(x);
    p.reverse();
    p.iter()
        .enumerate()
        .map(|(i, v)| -(i as f64 + 1.0) * v * v.ln())
        .sum::<f64>()
        + x[0].rem_euclid(period) * period
}

/// `x.get(i)`, `x.first()`, `x.last()` matched or tested with `if let`, by value
/// (`Some(&v)`) and by reference (`Some(v)`, read as `*v`).
#[differentiable]
fn element_options(x: &[f64], i: usize) -> f64 {
    let a = match x.get(i) {
        Some(v) => *v * 2.0,
        None => x[0] * 3.0,
    };
    let b = if let Some(&v) = x.first() { v * v } else { 0.0 };
    let c = match x.last() {
        Some(v) => v.sin(),
        None => 0.0,
    };
    let Some(&d) = x.get(1) else {
        return a;
    };
    let Some(e) = x.get(2) else {
        return a + d;
    };
    a + b + c * d + *e * e
}

#[derive(Clone, Debug, Tangent)]
struct Term {
    weight: f64,
    centre: f64,
}

/// Iterator adapters over a slice of structs, reading their fields.
#[differentiable]
fn struct_chain(terms: &[Term], x: f64) -> f64 {
    terms
        .iter()
        .map(|t| t.weight * (x - t.centre).powi(2))
        .sum::<f64>()
        + terms
            .iter()
            .zip(terms.iter().skip(1))
            .map(|(a, b)| a.weight * b.centre)
            .sum::<f64>()
}

/// An `Option` built with `Some(..)` and a `Result` with `Ok(..)`, returned by helpers
/// and read with `unwrap_or`, `unwrap_or_else` and `?`-free matching.
#[differentiable]
fn first_square(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        None
    } else {
        Some(x[0] * x[0])
    }
}

#[differentiable]
fn checked_log(v: f64) -> Result<f64, String> {
    if v > 0.0 {
        Ok(v.ln())
    } else {
        Err(format!("log of {v}"))
    }
}

#[differentiable]
fn options_and_results(x: &[f64], d: f64) -> f64 {
    let a = first_square(x).unwrap_or(d);
    let b = first_square(&x[3..]).unwrap_or_else(|| d * d);
    let c = checked_log(x[1]).unwrap_or(0.0);
    let e = checked_log(-x[1] * x[1]).unwrap_or(d.sin());
    a + b * c + e
}

/// Matrices in iterator adapters (an L2 penalty on a weight matrix, a transpose
/// zipped with the matrix), `indexed_iter`, `mapv_inplace` and `to_vec` of an array.
#[differentiable]
fn matrix_idioms(w: &Array2<f64>, x: &Array1<f64>) -> f64 {
    let h = w.dot(x);
    let penalty = 0.01 * w.iter().map(|v| v * v).sum::<f64>();
    let sym = w.t().iter().zip(w.iter()).map(|(p, q)| p * q).sum::<f64>();
    let mut weighted = 0.0;
    for ((i, j), v) in w.indexed_iter() {
        weighted += v * (i + 2 * j) as f64;
    }
    let mut e = w.clone();
    e.mapv_inplace(|v| v.exp());
    let hv = h.to_vec();
    h.iter().map(|v| v.tanh()).sum::<f64>()
        + penalty
        + sym
        + weighted
        + e.sum() * hv[0]
        + x.indexed_iter().map(|(i, v)| v * i as f64).sum::<f64>()
}

/// Sorting a differentiable buffer (a median-like statistic and a trimmed sum).
#[differentiable]
fn sorted_statistics(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut w: Vec<f64> = x.iter().map(|t| t * t).collect();
    w.sort_unstable_by(|a, b| b.total_cmp(a));
    v[v.len() / 2] * v[0] + w[1..w.len() - 1].iter().sum::<f64>()
}

#[differentiable]
fn normal_lpdf(x: f64, mu: f64, sigma: f64) -> f64 {
    -0.5 * ((x - mu) / sigma).powi(2) - sigma.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
}

/// A closure in an adapter that passes captured values (`mu`, `s`) to a helper.
#[differentiable]
fn normal_loglik(data: &[f64], mu: f64, log_sigma: f64) -> f64 {
    let s = log_sigma.exp();
    data.iter().map(|&x| normal_lpdf(x, mu, s)).sum::<f64>()
        + data.iter().map(|x| normal_lpdf(*x, mu, s)).sum::<f64>()
}

/// Functions by path in adapters (`.map(f64::sqrt)`, `.mapv(f64::tanh)`), a fold over a
/// tuple accumulator, a helper filling a `&mut [f64]`.
#[differentiable]
fn paths_and_tuples(x: &[f64], a: &Array1<f64>) -> f64 {
    let s: f64 = x.iter().copied().sum();
    let t = x.iter().copied().map(f64::sqrt).sum::<f64>();
    let (sum, prod) = x.iter().fold((0.0, 1.0), |(s, p), &v| (s + v, p * v));
    let mut out = vec![0.0; x.len()];
    doubled_into(x, &mut out);
    s * t + sum * prod + a.mapv(f64::tanh).sum() + out[1]
}

#[differentiable]
fn doubled_into(x: &[f64], out: &mut [f64]) {
    for i in 0..x.len() {
        out[i] = x[i] * 2.0;
    }
}

/// A chain over a range of `i32` (and a negative start): the elements keep the
/// range's type.
#[differentiable]
fn exp_series(x: f64, n: i32) -> f64 {
    (0..n)
        .map(|k| x.powi(k) / (1..=k).product::<i32>().max(1) as f64)
        .sum::<f64>()
        + (-2..3).map(|k| (x * k as f64).sin()).sum::<f64>()
}

/// `chain` of two chains, `skip_while` and `take_while`.
#[differentiable]
fn chained_and_while(x: &[f64]) -> f64 {
    let a = x
        .iter()
        .take(2)
        .chain(x.iter().skip(3))
        .map(|v| v.exp())
        .sum::<f64>();
    let b = x
        .iter()
        .skip_while(|v| **v < 0.5)
        .map(|v| v * v)
        .sum::<f64>();
    let c = x
        .iter()
        .take_while(|v| v.abs() < 1.0)
        .map(|v| v.sin())
        .sum::<f64>();
    a + b * c
}

/// `[x, y].concat()` (of parameters, and of values built in place), `rotate_left`,
/// `rotate_right`.
#[differentiable]
fn concat_and_rotate(x: &[f64], y: &[f64]) -> f64 {
    let z = [x, y].concat();
    let w = [x.to_vec(), vec![x[0] * y[1]]].concat();
    let mut l = z.clone();
    l.rotate_left(2);
    let mut r = w.clone();
    r.rotate_right(1);
    z.iter()
        .enumerate()
        .map(|(i, v)| (i as f64 + 1.0) * v * v)
        .sum::<f64>()
        + l[0] * r[0]
        + l[l.len() - 1] * r[1].sin()
}

mod checked {
    use crate::check;
    use ndarray::array;

    check!(helper_of_element, (vec![0.3_f64, -1.2, 0.8],), |a| (&a.0));
    check!(
        concat_and_rotate,
        (vec![0.3_f64, -1.2, 0.8], vec![0.5_f64, 0.9]),
        |a| (&a.0, &a.1)
    );
    check!(
        helper_of_pairs,
        (vec![0.3_f64, -1.2, 0.8], vec![1.5_f64, 0.2, -0.4]),
        |a| (&a.0, &a.1)
    );
    check!(array_pattern, (vec![0.3_f64, -1.2, 0.8],), |a| (&a.0));
    check!(max_and_min_by, (vec![0.3_f64, -1.2, 0.8, 0.1],), |a| (&a.0));
    check!(element_options, (vec![0.3_f64, -1.2, 0.8], 1_usize), |a| (
        &a.0, a.1
    ));
    check!(
        struct_chain,
        (
            vec![
                crate::Term {
                    weight: 0.5,
                    centre: -1.0
                },
                crate::Term {
                    weight: 1.5,
                    centre: 0.25
                },
                crate::Term {
                    weight: -0.7,
                    centre: 2.0
                },
            ],
            0.4_f64
        ),
        |a| (&a.0, a.1)
    );
    check!(
        options_and_results,
        (vec![0.3_f64, 1.2, 0.8], 0.7_f64),
        |a| (&a.0, a.1)
    );
    check!(
        matrix_idioms,
        (
            array![[0.5_f64, 1.0, -0.3], [2.0, 0.1, 0.7]],
            array![0.4_f64, -1.1, 0.6]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        sorted_statistics,
        (vec![0.3_f64, -1.2, 0.8, 2.1, -0.4],),
        |a| (&a.0)
    );
    check!(
        normal_loglik,
        (vec![0.3_f64, -1.2, 0.8], 0.4_f64, -0.2_f64),
        |a| (&a.0, a.1, a.2)
    );
    check!(
        paths_and_tuples,
        (vec![0.3_f64, 1.2, 0.8], array![0.5_f64, -1.0]),
        |a| (&a.0, &a.1)
    );
    check!(exp_series, (0.7_f64, 6_i32), |a| (a.0, a.1));
    check!(
        chained_and_while,
        (vec![0.3_f64, -0.2, 0.7, 2.0, -1.4],),
        |a| (&a.0)
    );
    check!(grown_buffers, (vec![0.3_f64, -1.2, 0.8], 0.7_f64), |a| (
        &a.0, a.1
    ));
    check!(
        entropy_reversed,
        (vec![0.3_f64, -1.2, 0.8, 2.0], 0.7_f64),
        |a| (&a.0, a.1)
    );
    check!(
        view_by_value,
        (array![0.3_f64, -1.2, 0.8], array![1.5_f64, 0.2, -0.4]),
        |a| (a.0.view(), a.1.view())
    );
    check!(
        column_adapters,
        (array![[0.3_f64, -1.2, 0.8], [1.5, 0.2, -0.4]],),
        |a| (&a.0)
    );
    check!(
        spread_and_from_vec,
        (
            array![0.3_f64, -1.2, 0.8, 2.0],
            vec![1.5_f64, 0.2, -0.4, 0.9]
        ),
        |a| (&a.0, &a.1)
    );
}

#[test]
fn element_options_out_of_range() {
    let x = vec![0.3_f64, -1.2, 0.8];
    for i in [0_usize, 2, 3, 7] {
        mochi::testing::test_rule(
            (x.clone(), i),
            |a| element_options(&a.0, a.1),
            |a| element_options::rrule(&a.0, a.1),
        );
    }
    // `x.get(1)` fails on one element: the `else` returns `a` alone.
    mochi::testing::test_rule(
        (vec![0.7_f64], 0_usize),
        |a| element_options(&a.0, a.1),
        |a| element_options::rrule(&a.0, a.1),
    );
}

#[test]
fn method_closure_capturing_self() {
    let layer = Layer {
        w: 0.7,
        b: vec![0.1, -0.2, 0.3],
    };
    let x = [1.0, -0.5, 2.0];
    let (dl, dx) = layer.loss_gradient(&x);
    // Closed forms: ∂/∂x_i = w cos(w x_i) + w sech²(w x_i + b_i),
    // ∂/∂w = Σ x_i cos(w x_i) + Σ x_i sech²(w x_i + b_i), ∂/∂b_i = sech²(w x_i + b_i).
    let sech2 = |t: f64| 1.0 - t.tanh().powi(2);
    let mut dw = 0.0;
    for i in 0..3 {
        let (c, s) = ((layer.w * x[i]).cos(), sech2(layer.w * x[i] + layer.b[i]));
        assert!((dx[i] - layer.w * (c + s)).abs() < 1e-12);
        assert!((dl.b[i] - s).abs() < 1e-12);
        dw += x[i] * (c + s);
    }
    assert!((dl.w - dw).abs() < 1e-12, "{} vs {dw}", dl.w);
}

/// A constant array borrowed as written (`&w * x`) beside a differentiable one.
#[differentiable]
fn weighted_by_constant(x: &Array1<f64>) -> f64 {
    let w = Array1::from_elem(x.len(), 0.5);
    let k = x.len() as f64;
    let z = k * &w;
    (&w * x).sum() + (&z + x).mapv(|v| v.exp()).sum()
}

/// `for` over an array's elements, with and without their indices.
#[differentiable]
fn array_loops(x: &Array1<f64>, y: ArrayView1<f64>) -> f64 {
    let mut acc = 0.0;
    for (i, v) in x.iter().enumerate() {
        acc += (i as f64 + 1.0) * v * v;
    }
    let mut m = y[0];
    for &v in y.iter() {
        if v > m {
            m = v;
        }
    }
    acc * m
}

/// `let part = &x[a..b];` of a differentiable slice, in a loop.
#[differentiable]
fn bound_subslices(theta: &[f64], data: &[f64]) -> f64 {
    let mut total = 0.0;
    for k in 0..data.len() / 2 {
        let point = &data[2 * k..2 * k + 2];
        let c: Vec<f64> = point.iter().zip(theta).map(|(a, b)| a - b).collect();
        total += c[0] * c[1];
    }
    total
}

#[test]
fn borrowed_constants_array_loops_and_bound_subslices() {
    let x = Array1::from(vec![0.3, -0.8, 1.2]);
    mochi::testing::test_rule(
        (x.clone(),),
        |a| weighted_by_constant(&a.0),
        |a| weighted_by_constant::rrule(&a.0),
    );
    let y = Array1::from(vec![0.1, 0.9, -0.4]);
    mochi::testing::test_rule(
        (x.clone(), y.clone()),
        |a| array_loops(&a.0, a.1.view()),
        |a| array_loops::rrule(&a.0, a.1.view()),
    );
    mochi::testing::test_rule(
        (vec![0.5, 0.2], vec![1.0, 2.0, 3.0, 4.0]),
        |a| bound_subslices(&a.0, &a.1),
        |a| bound_subslices::rrule(&a.0, &a.1),
    );
    // Closed form: Σₖ (p₀ − θ₀)(p₁ − θ₁) over the points (1, 2) and (3, 4).
    let (gt, gd) = bound_subslices::gradient(&[0.5, 0.2], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(gt, vec![-(1.8 + 3.8), -(0.5 + 2.5)]);
    assert_eq!(gd, vec![1.8, 0.5, 3.8, 2.5]);
}

/// Helpers reached by `super::` and `self::` paths from inside a module: the derived
/// items live one module deeper, and see the paths from there.
mod nested_paths {
    use mochi::prelude::*;

    #[differentiable]
    pub fn softplus(x: f64) -> f64 {
        (1.0 + x.exp()).ln()
    }

    pub mod inner {
        use mochi::prelude::*;

        #[differentiable]
        pub fn twice(x: f64) -> f64 {
            2.0 * super::softplus(x)
        }

        #[differentiable]
        pub fn through_self(x: &[f64]) -> f64 {
            self::twice(x[0]) * x[1] + super::softplus(x[1])
        }
    }
}

#[test]
fn super_and_self_paths_inside_modules() {
    let sig = |t: f64| 1.0 / (1.0 + (-t).exp());
    let x = [0.3, -0.5];
    let g = nested_paths::inner::through_self::gradient(&x);
    let sp = |t: f64| (1.0 + t.exp()).ln();
    assert!((g[0] - 2.0 * sig(x[0]) * x[1]).abs() < 1e-15);
    assert!((g[1] - (2.0 * sp(x[0]) + sig(x[1]))).abs() < 1e-15);
    #[cfg(feature = "higher-order")]
    {
        let h = nested_paths::inner::through_self::hessian(&x);
        assert!((h[[0, 1]] - 2.0 * sig(x[0])).abs() < 1e-14);
        assert!((h[[1, 1]] - sig(x[1]) * (1.0 - sig(x[1]))).abs() < 1e-14);
    }
}

/// `x.first().copied().unwrap_or(d)`, `x.last().copied().unwrap()`,
/// `x.get(i).cloned().unwrap_or(d)`, `unwrap_or_else(|| ..)` as expressions.
#[differentiable]
fn copied_element_options(x: &[f64], i: usize) -> f64 {
    let head = x.first().copied().unwrap_or(0.0);
    let tail = x.last().copied().unwrap();
    head * tail * x.get(i).cloned().unwrap_or(2.0) + x.get(i + 5).copied().unwrap_or_else(|| x[0])
}

#[test]
fn copied_element_options_as_expressions() {
    let x = vec![0.3_f64, -0.8, 1.2, 0.5];
    for i in [1_usize, 7] {
        mochi::testing::test_rule(
            (x.clone(), i),
            |a| copied_element_options(&a.0, a.1),
            |a| copied_element_options::rrule(&a.0, a.1),
        );
    }
    // i = 1: x₀ x₃ x₁ + x₀ (x[6] is missing): ∂/∂x₀ = x₃ x₁ + 1.
    let g = copied_element_options::gradient(&x, 1).0;
    assert_eq!(g[0], x[3] * x[1] + 1.0);
}

/// A loop over a local array of data (`for &p in points.iter()`, `for &(a, b, y) in
/// data.iter()`, `for &w in &weights`): the iterator borrows a local, which the
/// pullback outlives, so the loop is counted rather than replayed (it failed to
/// compile: "`points` does not live long enough").
#[differentiable]
fn loops_over_local_data(c: &[f64]) -> f64 {
    let points = [0.1, 0.5, 0.9, 1.4, 2.2];
    let data = [(1.0, 2.0, 1.0), (-1.0, 0.5, 0.0), (0.3, -0.7, 1.0)];
    let weights = vec![0.5, 2.0];
    let mut s = 0.0;
    for &p in points.iter() {
        let d0 = (p - c[0]) * (p - c[0]);
        let d1 = (p - c[1]) * (p - c[1]);
        s += d0.min(d1);
    }
    for &(a, b, y) in data.iter() {
        let z = c[0] * a + c[1] * b;
        let q = 1.0 / (1.0 + (-z).exp());
        s -= y * q.ln() + (1.0 - y) * (1.0 - q).ln();
    }
    for &w in &weights {
        s += w * c[0] * c[1];
    }
    for pair in points.windows(2) {
        s += (pair[1] - pair[0]) * c[1].sin();
    }
    s
}

/// The same loops with the elements bound by reference (`for p in points.iter()`,
/// `for w in &weights`, `for (a, b) in data.iter()`, `(i, p)` of `.enumerate()`):
/// `p - c[0]`, `w * c[0]` and `p.sin()` take the element, as in Rust (they failed to
/// compile: "no rule for `-` with arguments `(&&f64, &f64)`").
#[differentiable]
fn element_references_of_local_data(c: &[f64]) -> f64 {
    let points = [0.1, 0.5, 0.9];
    let data = vec![(1.0, 2.0), (-0.5, 0.3)];
    let weights = vec![0.5, 2.0];
    let mut s = 0.0;
    for p in points.iter() {
        s += (p - c[0]) * (c[1] - p) + p.sin() * c[0];
    }
    for w in &weights {
        s += w * c[0] * c[1];
    }
    for (a, b) in data.iter() {
        s += a * c[0] + b * c[1].exp();
    }
    for (i, p) in points.iter().enumerate() {
        s += p * c[i % 2];
    }
    s
}

#[test]
fn element_references_of_local_data_are_the_elements() {
    let c = [0.3, -0.4];
    mochi::testing::test_rule(
        (c.to_vec(),),
        |a| element_references_of_local_data(&a.0),
        |a| element_references_of_local_data::rrule(&a.0),
    );
    // ∂/∂c₀ = Σₚ (−(c₁ − p) + sin p) + Σw·c₁ + Σa + p₀ + p₂;
    // ∂/∂c₁ = Σₚ (p − c₀) + Σw·c₀ + Σb·e^c₁ + p₁.
    let points = [0.1_f64, 0.5, 0.9];
    let d0: f64 =
        points.iter().map(|p| -(c[1] - p) + p.sin()).sum::<f64>() + 2.5 * c[1] + 0.5 + 0.1 + 0.9;
    let d1: f64 =
        points.iter().map(|p| p - c[0]).sum::<f64>() + 2.5 * c[0] + 2.3 * c[1].exp() + 0.5;
    let g = element_references_of_local_data::gradient(&c);
    assert!(
        (g[0] - d0).abs() < 1e-12 && (g[1] - d1).abs() < 1e-12,
        "{g:?}"
    );
}

#[test]
fn loops_over_local_data_are_differentiated() {
    for c in [vec![0.4_f64, 1.7], vec![1.2, 0.2]] {
        mochi::testing::test_rule(
            (c,),
            |a| loops_over_local_data(&a.0),
            |a| loops_over_local_data::rrule(&a.0),
        );
    }
}

/// A configuration enum as an argument (`#[derive(Tangent)]` on a fieldless enum: a
/// choice without a derivative) and a `match` on it that binds nothing.
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
enum Activation {
    Relu,
    Tanh,
    Softplus,
}

#[differentiable]
fn activated_sum(x: &[f64], act: Activation) -> f64 {
    let mut s = 0.0;
    for &v in x {
        s += match act {
            Activation::Relu => v.max(0.0),
            Activation::Tanh => v.tanh(),
            Activation::Softplus => (1.0 + v.exp()).ln(),
        };
    }
    s
}

#[test]
fn a_configuration_enum_chooses_the_branch() {
    for act in [Activation::Relu, Activation::Tanh, Activation::Softplus] {
        mochi::testing::test_rule(
            (vec![0.3, -0.8, 1.2], act),
            |a| activated_sum(&a.0, a.1),
            |a| activated_sum::rrule(&a.0, a.1),
        );
    }
    let (g, _) = activated_sum::gradient(&[0.3, -0.8], Activation::Relu);
    assert_eq!(g, vec![1.0, 0.0]);
}

/// A configuration enum whose variants carry settings (`Huber(d)`, `Pseudo { delta }`):
/// `derive(Tangent)` makes it a choice, the settings constants bound by the `match` (the
/// derive refused variants with fields, and the `match` that binds them, before).
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
enum Loss {
    L2,
    Huber(f64),
    Pseudo { delta: f64 },
}

#[differentiable]
fn robust_loss(r: &[f64], kind: Loss) -> f64 {
    let mut s = 0.0;
    for &v in r {
        s += match kind {
            Loss::L2 => v * v,
            Loss::Huber(d) => {
                if v.abs() <= d {
                    0.5 * v * v
                } else {
                    d * (v.abs() - 0.5 * d)
                }
            }
            Loss::Pseudo { delta } => delta * delta * ((1.0 + (v / delta).powi(2)).sqrt() - 1.0),
        };
    }
    s
}

#[test]
fn a_configuration_enum_with_settings() {
    let r = vec![0.3, -1.7, 2.5];
    for kind in [Loss::L2, Loss::Huber(1.0), Loss::Pseudo { delta: 0.8 }] {
        mochi::testing::test_rule(
            (r.clone(), kind),
            |a| robust_loss(&a.0, a.1),
            |a| robust_loss::rrule(&a.0, a.1),
        );
    }
    // Huber with d = 1: v inside the threshold gives v, outside d·sign(v).
    let (g, _) = robust_loss::gradient(&r, Loss::Huber(1.0));
    assert_eq!(g, vec![0.3, -1.0, 1.0]);
}

/// Growing a buffer from iterator chains: `chain.for_each(|e| v.push(e))` over a `map`,
/// and `v.extend(..)` of a `map`, of `x.iter()` and of a reversed copied chain (they
/// failed to compile: "`for` over a differentiable sequence supports …" and "`.extend(..)`
/// … is not supported").
#[differentiable]
fn buffers_from_chains(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = Vec::new();
    x.iter().map(|a| a * 2.0).for_each(|e| v.push(e));
    v.extend(x.iter().map(|a| a.sin()));
    v.extend(x.iter());
    v.extend(x.iter().rev().copied());
    v.iter()
        .enumerate()
        .map(|(i, a)| a * a * (i as f64 + 1.0))
        .sum()
}

#[test]
fn buffers_grow_from_chains() {
    mochi::testing::test_rule(
        (vec![0.9, 0.8, 0.7],),
        |a| buffers_from_chains(&a.0),
        |a| buffers_from_chains::rrule(&a.0),
    );
}

#[differentiable]
fn softplus_elem(v: f64) -> f64 {
    v.exp().ln_1p()
}

/// A `Vec` parameter iterated by value (`for v in x.into_iter()`, `for v in x`), its
/// elements passed to a function (they were passed as `&f64`: a type error at the
/// attribute), and a function passed to `map` by a path with a module prefix
/// (`map(self::softplus_elem)`), whose caller's Hessian goes through the function's
/// generic form (the path was left as it was: a type error).
#[differentiable]
fn by_value_elements(x: Vec<f64>, w: Vec<f64>) -> f64 {
    let mut s = 0.0;
    for v in x.into_iter() {
        s += softplus_elem(v) * 0.5;
    }
    for (i, v) in w.into_iter().enumerate() {
        s += softplus_elem(v * (i as f64 + 1.0));
    }
    s
}

#[differentiable]
fn mapped_by_module_path(x: &[f64]) -> f64 {
    x.iter().copied().map(self::softplus_elem).sum::<f64>() * x[0]
}

/// A local closure over `&[f64]` given each row of `x.chunks(2)` (also enumerated) and
/// each window of `x.windows(2)`: the inlined closure borrows the piece, which is read
/// in place (a `for` "not one the derivation writes as an index loop" before).
#[differentiable]
fn closure_over_pieces(w: &[f64], x: &[f64]) -> f64 {
    let dot = |r: &[f64]| -> f64 { r.iter().zip(w).map(|(a, b)| a * b).sum() };
    let mut s = 0.0;
    for (i, row) in x.chunks(2).enumerate() {
        s += dot(row) * (i as f64 + 1.0);
    }
    for win in x.windows(2) {
        s += dot(win).powi(2);
    }
    s
}

mod checked_by_value {
    use crate::check;

    check!(
        by_value_elements,
        (vec![0.3_f64, -1.2, 2.0], vec![0.5_f64, -0.25]),
        |a| (a.0.clone(), a.1.clone())
    );
    check!(mapped_by_module_path, (vec![0.3_f64, -1.2, 2.0],), |a| (&a
        .0));
    check!(
        closure_over_pieces,
        (vec![0.7_f64, -0.4], vec![0.3_f64, -1.2, 2.0, 0.9, 1.5]),
        |a| (&a.0, &a.1)
    );
}

#[test]
#[cfg(feature = "higher-order")]
fn a_function_mapped_by_module_path_has_a_hessian() {
    let x = [0.3, -1.2, 2.0];
    let h = mapped_by_module_path::hessian(&x);
    common::assert_hessian_matches(
        "mapped_by_module_path",
        mapped_by_module_path::gradient,
        &h,
        &x,
        1e-6,
    );
}

/// A local closure that returns a `Vec` (`-> Vec<f64>`, built by `collect()`), called
/// on a parameter and on a sub-slice; rows taken by `chunks(2)` into a `Vec<&[f64]>`
/// and by `chunks(3).map(|c| c.to_vec())` into a `Vec<Vec<f64>>`, and windows into a
/// `Vec<Vec<f64>>` (each "no rule for `iter`/`chunks`/`collect`" at the call before).
#[differentiable]
fn closure_returning_vec(x: &[f64]) -> f64 {
    let sq = |r: &[f64]| -> Vec<f64> { r.iter().map(|v| v * v.sin()).collect() };
    let a = sq(&x[1..]);
    let b = sq(x);
    a[0] * b[2] + a.iter().sum::<f64>()
}

#[differentiable]
fn rows_collected(x: &[f64]) -> f64 {
    let rows: Vec<&[f64]> = x.chunks(2).collect();
    let owned: Vec<Vec<f64>> = x.chunks(3).map(|c| c.to_vec()).collect();
    let wins: Vec<Vec<f64>> = x.windows(2).map(|w| w.to_vec()).collect();
    let mut s = rows[0][0] * rows[1][1] + owned[1][0] * owned[0][2];
    for r in rows.iter() {
        s += r.iter().map(|v| v.exp()).sum::<f64>() * 0.1;
    }
    s + wins.len() as f64 * wins[2][1] * wins[0][0]
}

mod checked_closures_and_rows {
    use crate::check;

    check!(
        closure_returning_vec,
        (vec![0.3_f64, -1.2, 2.0, 0.9],),
        |a| (&a.0)
    );
    check!(rows_collected, (vec![0.3_f64, -1.2, 2.0, 0.9, 1.4],), |a| {
        (&a.0)
    });
}

/// Rows flattened by `rows.concat()` (of a `&[Vec<f64>]` and of a `Vec<Vec<f64>>`);
/// a `match` on `binary_search_by`'s result that binds both arms by value (`Err(i) =>
/// i` bound `&usize`: a type error before); `let z: f64 = x.into()` of an `f32`.
#[differentiable]
fn rows_flattened(rows: &[Vec<f64>], owned: Vec<Vec<f64>>) -> f64 {
    let f = rows.concat();
    let g: Vec<f64> = owned.concat();
    f[0] * f[3] + g.iter().map(|v| v * v).sum::<f64>() * f[1]
}

#[differentiable]
fn searched_then_read(xs: &[f64], t: f64) -> f64 {
    let k = match xs.binary_search_by(|v| v.total_cmp(&t)) {
        Ok(i) => i,
        Err(i) => i,
    };
    xs[k.min(xs.len() - 1)] * t
}

#[differentiable]
fn widened(x: f32, y: f64) -> f64 {
    let z: f64 = x.into();
    z * y + z.sin()
}

mod checked_flattened {
    use crate::check;

    check!(
        rows_flattened,
        (
            vec![vec![0.3_f64, -1.2], vec![2.0_f64, 0.9]],
            vec![vec![0.5_f64], vec![1.5_f64, -0.7]]
        ),
        |a| (&a.0, a.1.clone())
    );
    check!(
        searched_then_read,
        (vec![-1.0_f64, 0.5, 2.0, 3.5], 1.25),
        |a| (&a.0, a.1)
    );
}

#[test]
fn widened_f32_has_exact_partials() {
    let (gx, gy) = widened::gradient(0.5_f32, 2.0);
    let z = 0.5_f64;
    assert!((f64::from(gx) - (2.0 + z.cos())).abs() < 1e-6, "{gx}");
    assert_eq!(gy, 0.5);
}

/// An `f32` computed inside a function over `f64` (and an `f64` inside one over
/// `f32`): a literal beside a value of the other float type takes that type (`a * 2.0`
/// of `a = x[0] as f32`: "no rule for `*` with arguments `(&f32, &f64)`" before), in
/// an operation, a float method's argument, through locals made of such values and in
/// a closure over an array of them.
#[differentiable]
fn narrowed(x: &[f64]) -> f64 {
    let a = x[0] as f32;
    let b = (a * 2.0).sin();
    x[1] * b as f64 + x[0]
}

#[differentiable]
fn narrowed_by_type(x: &[f64]) -> f64 {
    let a: f32 = x[0] as f32;
    let c = 1.5 - a.max(0.25) * a.powf(2.0) + (a / 3.0).exp();
    let d = -0.5 * c;
    let v = [a, d];
    let s: f32 = v.iter().map(|t| t * 0.5).sum();
    (d as f64) * x[1] + 2.0 * x[1] + f64::from(s)
}

#[differentiable]
fn widened_inside(x: &[f32]) -> f32 {
    let a = x[0] as f64;
    let b = (a * 0.1).ln_1p() + 1.0 / (a + 2.0);
    b as f32 * x[1]
}

#[test]
fn the_other_float_type_inside_a_function() {
    let g = narrowed::gradient(&[0.3, 0.7]);
    let s = 0.6_f32;
    assert!(
        (g[0] - (1.0 + 1.4 * f64::from(s.cos()))).abs() < 1e-6,
        "{g:?}"
    );
    assert!((g[1] - f64::from(s.sin())).abs() < 1e-7, "{g:?}");
    // d/da of 1.5 - a·a² + exp(a/3) at a = 0.7 (the `max` takes `a`), times -0.5·x₁.
    let x = [0.7, 1.3];
    let g = narrowed_by_type::gradient(&x);
    let a = 0.7_f64;
    let dc = -3.0 * a * a + (a / 3.0).exp() / 3.0;
    // (And 0.5 (a + d) read by a closure over `[a, d]`.)
    let da = -0.5 * dc * 1.3 + 0.5 * (1.0 - 0.5 * dc);
    assert!((g[0] - da).abs() < 1e-5, "{g:?}");
    let c = 1.5 - a.powi(3) + (a / 3.0).exp();
    assert!((g[1] - (-0.5 * c + 2.0)).abs() < 1e-5, "{g:?}");
    let g = widened_inside::gradient(&[0.7_f32, 1.3]);
    let w0 = (0.1 / (1.0 + 0.1 * a) - 1.0 / ((a + 2.0) * (a + 2.0))) * 1.3;
    let w1 = (0.1 * a).ln_1p() + 1.0 / (a + 2.0);
    assert!((f64::from(g[0]) - w0).abs() < 1e-5, "{g:?}");
    assert!((f64::from(g[1]) - w1).abs() < 1e-5, "{g:?}");
}

/// `if let Some(e) = v.get_mut(i) { *e *= c }` (and `get`), the best pair of two zipped
/// sequences by a comparator or a key (`zip(..).max_by(|p, q| p.1.total_cmp(q.1))`,
/// `min_by_key`), and pairs split by `unzip()` (each "no rule for `get_mut`/`iter`/
/// `chunks`" before).
#[differentiable]
fn element_if_present(x: &[f64], c: f64) -> f64 {
    let mut v = x.to_vec();
    if let Some(e) = v.get_mut(1) {
        *e *= c;
    }
    if let Some(e) = v.get_mut(10) {
        *e = 0.0;
    }
    if let Some(e) = v.last_mut() {
        *e = e.sin() * c;
    }
    let mut s = 0.0;
    if let Some(f) = v.get(2) {
        s += f * c;
    } else {
        s -= c;
    }
    s + v.iter().map(|a| a * a).sum::<f64>()
}

#[differentiable]
fn best_pairs(x: &[f64], y: &[f64]) -> f64 {
    let (a, b) = x
        .iter()
        .zip(y.iter())
        .max_by(|p, q| p.1.total_cmp(q.1))
        .unwrap();
    let (c, d) = x
        .iter()
        .zip(y)
        .min_by_key(|p| (*p.0 * 100.0) as i64)
        .unwrap();
    a * b + c * d.sin() + *a
}

#[differentiable]
fn unzipped(x: &[f64]) -> f64 {
    let (s, c): (Vec<f64>, Vec<f64>) = x.iter().map(|a| (a.sin(), a.cos())).unzip();
    let (e, o): (Vec<f64>, Vec<f64>) = x.chunks(2).map(|p| (p[0], p[1] * 2.0)).unzip();
    s[0] * c[1] + s.iter().sum::<f64>() + e[1] * o[0]
}

mod checked_options_and_pairs {
    use crate::check;

    check!(element_if_present, (vec![0.3_f64, -1.2, 2.0], 1.5), |a| (
        &a.0, a.1
    ));
    check!(
        best_pairs,
        (vec![0.3_f64, -1.2, 2.0, 0.7], vec![0.5_f64, 1.1, -0.4, 0.2]),
        |a| (&a.0, &a.1)
    );
    check!(unzipped, (vec![0.3_f64, -1.2, 2.0, 0.7],), |a| (&a.0));
}

#[test]
fn the_best_pair_is_the_one_iterator_max_by_picks() {
    // ties: max_by keeps the last of equal elements, min_by_key the first
    let x = [1.0, 2.0, 3.0];
    let y = [5.0, 1.0, 5.0];
    let g = best_pairs::gradient(&x, &y);
    // (a, b) = (3, 5) (the last max); (c, d) = (1, 5) (the least key, first); f = a·b + c·sin d + a
    assert_eq!(g.0, vec![5.0_f64.sin(), 0.0, 5.0 + 1.0]);
    assert_eq!(g.1, vec![1.0 * 5.0_f64.cos(), 0.0, 3.0]);
}

/// Chains collected into a `Vec` whose length depends on the values (`filter`), and
/// nested collects that build a matrix or transpose rows (each "no rule for `iter`/
/// `map`" before); `unzip` of `|&v|` pairs.
#[differentiable]
fn filtered_and_nested(x: &[f64], m: &[Vec<f64>]) -> f64 {
    let p: Vec<f64> = x.iter().copied().filter(|v| *v > 0.0).collect();
    let q: Vec<f64> = x.iter().map(|a| a * a).filter(|v| *v > 0.5).collect();
    let r: Vec<f64> = x.iter().filter(|v| **v < 1.0).cloned().collect();
    let outer: Vec<Vec<f64>> = (0..2)
        .map(|i| (0..3).map(|j| x[i] * x[j]).collect())
        .collect();
    let t: Vec<Vec<f64>> = (0..2)
        .map(|j| m.iter().map(|row| row[j]).collect())
        .collect();
    let d: Vec<Vec<f64>> = m
        .iter()
        .map(|row| row.iter().map(|v| v * 2.0).collect())
        .collect();
    let (a, b): (Vec<f64>, Vec<f64>) = x.iter().map(|&v| (v, v * v)).unzip();
    p[0] * p.len() as f64
        + q.iter().sum::<f64>()
        + r[0] * outer[1][2]
        + outer[0][1]
        + t[0][1] * t[1][0]
        + d[1][1]
        + a[1] * b[2]
}

mod checked_filtered_and_nested {
    use crate::check;

    check!(
        filtered_and_nested,
        (
            vec![0.3_f64, -1.2, 2.0, 0.9],
            vec![
                vec![0.5_f64, -0.7],
                vec![1.5_f64, 0.25],
                vec![-0.4_f64, 0.8]
            ]
        ),
        |a| (&a.0, &a.1)
    );
}

#[differentiable]
fn squares_of(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| v * v).collect()
}

#[differentiable]
fn dot_of(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p * q).sum()
}

const COUPLING: [[f64; 2]; 2] = [[1.0, 0.5], [-0.3, 2.0]];

/// Chains over a computed source with `enumerate` (`x.to_vec().iter().enumerate()`,
/// `helper(x).iter().enumerate()`: "no rule for `iter`"), sub-slices of a local
/// fixed-size array (a type error at the attribute), a 2-D `const` array (the generic
/// form did not lift it, which broke the gradient too), and `v[a..b].fill(c)`.
#[differentiable]
fn computed_sources_and_locals(x: &[f64], c: f64) -> f64 {
    let a: f64 = x
        .to_vec()
        .iter()
        .enumerate()
        .map(|(i, v)| v * i as f64)
        .sum();
    let b: f64 = squares_of(x)
        .iter()
        .enumerate()
        .map(|(i, v)| v * (i as f64 + 1.0))
        .sum();
    let arr = [x[0], x[1], x[2]];
    let s: f64 = arr[..].iter().sum();
    let d = dot_of(&arr[1..], &arr[..2]);
    let k = COUPLING[0][1] * x[0] + COUPLING[1][0] * x[1] * x[0];
    let mut v = x.to_vec();
    v[..2].fill(0.5);
    v[3..].fill(c);
    a + b + s * d + k + v.iter().map(|e| e * e).sum::<f64>()
}

mod checked_computed_sources {
    use crate::check;

    check!(
        computed_sources_and_locals,
        (vec![0.3_f64, -1.2, 2.0, 0.9, 1.4], 0.7),
        |a| (&a.0, a.1)
    );
}

#[test]
#[cfg(feature = "higher-order")]
fn a_two_dimensional_const_is_lifted_for_the_hessian() {
    let x = [0.3, -1.2, 2.0, 0.9, 1.4];
    let h = computed_sources_and_locals::hessian(&x, 0.7);
    common::assert_hessian_matches(
        "computed_sources_and_locals",
        |z| {
            let (g, gc) = computed_sources_and_locals::gradient(&z[..5], z[5]);
            let mut all = g;
            all.push(gc);
            all
        },
        &h,
        &[0.3, -1.2, 2.0, 0.9, 1.4, 0.7],
        1e-6,
    );
}

/// `flat_map` into an array or a `vec![..]` per element, summed, mapped after, and
/// collected (a `for` "not one the derivation writes" or "no rule for `flat_map`"
/// before); Laplace-style minors by a `filter` over positions inside a `map`.
#[differentiable]
fn flat_mapped(x: &[f64]) -> f64 {
    let a: f64 = x.iter().flat_map(|v| [*v, v * v]).sum();
    let b: f64 = x
        .iter()
        .flat_map(|v| [v.sin(), v * 2.0])
        .map(|e| e * e)
        .sum();
    let c: Vec<f64> = x.iter().flat_map(|v| vec![*v, v * 3.0]).collect();
    let minors: f64 = (0..2)
        .map(|col| {
            let r: Vec<f64> = (0..3).filter(move |&j| j != col).map(|j| x[j]).collect();
            r[0] * r[1] * x[col]
        })
        .sum();
    a * b + c[3] * c[0] + c.len() as f64 + minors
}

mod checked_flat_mapped {
    use crate::check;

    check!(flat_mapped, (vec![0.3_f64, -1.2, 2.0],), |a| (&a.0));
}

const FIXED_NOISE: [f64; 3] = [0.3, -1.2, 0.8];

/// Loops over a `const` array (`for w in NOISE.iter()`, `for &w in &NOISE`, enumerated):
/// each use of a constant is a temporary, which the replayed iterator borrowed past its
/// end (E0716 at the attribute before); read by index instead.
#[differentiable]
fn over_const_noise(a: f64, x: &[f64]) -> f64 {
    let mut s = 0.0;
    for w in FIXED_NOISE.iter() {
        s += a * w + x[0] * *w;
    }
    for &w in &FIXED_NOISE {
        s += (a * w).sin();
    }
    for (i, w) in FIXED_NOISE.iter().enumerate() {
        s += a * a * w * i as f64 + x[1];
    }
    s
}

mod checked_const_noise {
    use crate::check;

    check!(over_const_noise, (0.7_f64, vec![0.4_f64, -0.9]), |a| (
        a.0, &a.1
    ));
}

#[test]
#[cfg(feature = "higher-order")]
fn loops_over_a_const_have_a_hessian() {
    let h = over_const_noise::hessian(0.7, &[0.4, -0.9]);
    common::assert_hessian_matches(
        "over_const_noise",
        |z| {
            let (ga, gx) = over_const_noise::gradient(z[0], &z[1..]);
            let mut all = vec![ga];
            all.extend(gx);
            all
        },
        &h,
        &[0.7, 0.4, -0.9],
        1e-6,
    );
}

/// A particle: position and velocity.
#[derive(Clone, Debug, Tangent)]
pub struct Particle {
    /// Position.
    pub x: f64,
    /// Velocity.
    pub v: f64,
}

/// Chains collected into a `Vec` of arrays (`Vec<[f64; 2]>`, positions) and of structs
/// deriving `Tangent` (each a type error at `collect()` before): built by a loop of
/// pushes.
#[differentiable]
fn collected_arrays_and_structs(x: &[f64]) -> f64 {
    let p: Vec<[f64; 2]> = (0..x.len() / 2).map(|i| [x[2 * i], x[2 * i + 1]]).collect();
    let ps: Vec<Particle> = x.iter().map(|&v| Particle { x: v, v: v * v }).collect();
    p[0][0] * p[1][1] + ps[0].x * ps[1].v + ps[2].v.sin()
}

mod checked_collected_arrays {
    use crate::check;

    check!(
        collected_arrays_and_structs,
        (vec![1.0_f64, 2.0, 3.0, 4.0],),
        |a| (&a.0)
    );
}

/// A body that ends in a `loop` left only by `return` (a type error at the `return`
/// before), and a `for` over a range mapped by a closure that captures a local (`dt`:
/// E0597, the replayed iterator outlived the borrow).
#[differentiable]
fn loop_until_return(x: &[f64]) -> f64 {
    let mut s = 0.0;
    loop {
        s += x[0];
        if s > 1.0 {
            return s * x[1];
        }
    }
}

#[differentiable]
fn range_mapped_by_capturing_closure(a: f64, x: &[f64]) -> f64 {
    let dt = 0.1;
    let mut s = 0.0;
    for t in (0..5).map(|k| k as f64 * dt) {
        s += (a * t).sin() * x[0];
    }
    for t in (0..6).filter(|k| k % 2 == 0).map(|k| k as f64 * dt) {
        s += a * t;
    }
    s
}

mod checked_loop_forms {
    use crate::check;

    check!(loop_until_return, (vec![0.3_f64, 2.0],), |a| (&a.0));
    check!(
        range_mapped_by_capturing_closure,
        (0.7_f64, vec![1.3_f64]),
        |a| (a.0, &a.1)
    );
}

// ---------------------------------------------------------------- `?` and fallible results

#[derive(Clone, Debug, PartialEq)]
enum FitError {
    Negative(f64),
    Parse(String),
}

impl From<String> for FitError {
    fn from(s: String) -> Self {
        FitError::Parse(s)
    }
}

#[differentiable]
fn log_checked(v: f64) -> Result<f64, String> {
    if v <= 0.0 {
        return Err(format!("log of {v}"));
    }
    Ok(v.ln())
}

/// `?` in a loop, inside an expression, on both sides of a `+`, in a branch, with the
/// error converted by `From`, and an `Err` built from a differentiable value.
#[differentiable]
fn try_in_expressions(x: &[f64]) -> Result<f64, FitError> {
    let mut s = 0.0;
    for &v in x {
        s += log_checked(v)? * v;
    }
    let a = log_checked(x[0])? + log_checked(x[1] * x[1])?;
    if x[2] > 5.0 {
        return Err(FitError::Negative(x[2]));
    }
    let c = if x[0] > 1.0 {
        log_checked(x[0] - 1.0)?
    } else {
        x[0]
    };
    Ok(s * a + c)
}

/// `?` on an `Option`: `first()?`, `last()?`, `get(i).copied()?`, `last().cloned()?`,
/// a helper's `Option` and a chain's `reduce`.
#[differentiable]
fn try_options(x: &[f64], i: usize) -> Option<f64> {
    let m = x.first()?;
    let l = *x.last()?;
    let g = x.get(i).copied()?;
    let q = first_square(&x[1..])?;
    let c = x.last().cloned()?;
    let z = x.iter().map(|t| t * t).reduce(|a, b| a + b)?;
    Some(m * g + l.sin() * q + c * z)
}

/// A `std::io::Result`, its error not `Clone`, and `?` on a `Result` of no derivative.
#[differentiable]
fn try_io(x: f64) -> std::io::Result<f64> {
    let k = "2.5".parse::<f64>().map_err(std::io::Error::other)?;
    Ok(x * x * k)
}

#[test]
fn try_operator_gradients() {
    let x = vec![1.3_f64, 0.7, 1.1];
    mochi::testing::test_rule(
        (x.clone(),),
        |a| try_in_expressions(&a.0),
        |a| try_in_expressions::rrule(&a.0),
    );
    mochi::testing::test_rule(
        (vec![0.8_f64, 0.7, 1.1],),
        |a| try_in_expressions(&a.0),
        |a| try_in_expressions::rrule(&a.0),
    );
    // By hand at x: d/dx2 of (s·a + c) with s = Σ v ln v, a = ln x0 + ln x1², c = ln(x0 - 1).
    let g = try_in_expressions::gradient(&x).unwrap();
    let s: f64 = x.iter().map(|v| v * v.ln()).sum();
    let a = x[0].ln() + (x[1] * x[1]).ln();
    assert!((g[2] - (x[2].ln() + 1.0) * a).abs() < 1e-12, "{g:?}");
    assert!(
        (g[0] - ((x[0].ln() + 1.0) * a + s / x[0] + 1.0 / (x[0] - 1.0))).abs() < 1e-12,
        "{g:?}"
    );
    for i in [0_usize, 2] {
        mochi::testing::test_rule(
            (vec![0.3_f64, -1.2, 0.8], i),
            |a| try_options(&a.0, a.1),
            |a| try_options::rrule(&a.0, a.1),
        );
    }
    let g = try_io::gradient(1.5).unwrap();
    assert!((g - 2.0 * 1.5 * 2.5).abs() < 1e-12);
}

/// Where the function returns an error or `None`, `gradient` says so: it is never a
/// zero gradient.
#[test]
fn gradient_of_a_failed_evaluation_is_the_failure() {
    assert_eq!(
        try_in_expressions::gradient(&[0.3, -0.7, 1.1]),
        Err(FitError::Parse("log of -0.7".into()))
    );
    assert_eq!(
        try_in_expressions::gradient(&[0.3, 0.7, 6.0]),
        Err(FitError::Negative(6.0))
    );
    let (y, g) = try_in_expressions::value_and_gradient(&[0.3, -0.7, 1.1]);
    assert!(y.is_err());
    assert_eq!(g, vec![0.0; 3]);
    let mut shadow = vec![0.0; 3];
    assert!(try_in_expressions::gradient_into(&[0.3, -0.7, 1.1], &mut shadow).is_err());
    assert!(try_in_expressions::gradient_into(&[1.3, 0.7, 1.1], &mut shadow).is_ok());
    assert_eq!(
        shadow,
        try_in_expressions::gradient(&[1.3, 0.7, 1.1]).unwrap()
    );
    assert_eq!(try_options::gradient(&[0.3, -1.2, 0.8], 3), None);
    assert_eq!(try_options::gradient(&[], 0), None);
    assert_eq!(try_options::gradient(&[0.3], 0), None);
    let g = try_options::gradient(&[0.3, -1.2, 0.8], 2).unwrap().0;
    // m·g + sin(l)·q with m = x0, g = l = x2, q = x1²,
    let (x0, x1, x2) = (0.3_f64, -1.2_f64, 0.8_f64);
    // + c·z with c = x2, z = Σ x².
    let z = x0 * x0 + x1 * x1 + x2 * x2;
    let want = [
        x2 + x2 * 2.0 * x0,
        x2.sin() * 2.0 * x1 + x2 * 2.0 * x1,
        x0 + x2.cos() * x1 * x1 + z + x2 * 2.0 * x2,
    ];
    for k in 0..3 {
        assert!((g[k] - want[k]).abs() < 1e-12, "{g:?}");
    }
    assert!(log_checked::gradient(-1.0).is_err());
    assert!((log_checked::gradient(4.0).unwrap() - 0.25).abs() < 1e-15);
}

/// A constant held by reference on either side of an operator (`let lr = &c[0];`,
/// `c.iter().next().unwrap()`), as Rust's operators take a `&f64`.
#[differentiable]
fn reference_operands(x: &[f64]) -> f64 {
    let c = vec![0.5, 2.0, -1.5];
    let lr = &c[0];
    let k = c.iter().next().unwrap();
    let mut s = lr * x[0] + x[1] / k - lr;
    for w in c.iter() {
        s += w * x[2] + x[0] - w;
    }
    s
}

#[test]
fn reference_operand_gradients() {
    mochi::testing::test_rule(
        (vec![0.3_f64, -1.2, 0.8],),
        |a| reference_operands(&a.0),
        |a| reference_operands::rrule(&a.0),
    );
    let g = reference_operands::gradient(&[0.3, -1.2, 0.8]);
    assert_eq!(g, vec![0.5 + 3.0, 1.0 / 0.5, 0.5 + 2.0 - 1.5]);
}

#[differentiable]
fn checked_ratio(a: f64, b: f64) -> Option<f64> {
    if b == 0.0 {
        None
    } else {
        Some(a / b)
    }
}

/// `?` after the combinators that change an `Option` into a `Result` and back:
/// `ok_or`, `ok_or_else`, `map_err` (a path and a closure), `ok`; and a `Result`'s
/// `unwrap_or_else(|_| d)`.
#[differentiable]
fn try_combinators(x: &[f64]) -> Result<f64, FitError> {
    let s = log_checked(x[0]).map_err(FitError::Parse)?;
    let t = log_checked(x[1]).map_err(|e| FitError::Parse(format!("second: {e}")))?;
    let q = checked_ratio(s, t).ok_or_else(|| FitError::Negative(t))?;
    let g = x.get(2).copied().ok_or(FitError::Negative(-1.0))?;
    let w = log_checked(x[0] - 10.0).unwrap_or_else(|_| x[0] * g);
    Ok(q + g * s + w)
}

#[differentiable]
fn try_ok(x: &[f64]) -> Option<f64> {
    let s = log_checked(x[0]).ok()?;
    Some(s * x[1])
}

/// A position found by a search, with a default (`unwrap_or`, a `match`, an `if
/// let`), indexing the sequence (an index of type `()` at the attribute before).
#[differentiable]
fn searched_positions(x: &[f64]) -> f64 {
    let k = x.iter().position(|&v| v > 1.0).unwrap_or(x.len() - 1);
    let j = match x.iter().position(|&v| v < 0.0) {
        Some(i) => i,
        None => 0,
    };
    let l = if let Some(i) = x.iter().rposition(|&v| v < 0.5) {
        i
    } else {
        0
    };
    x[k] * 2.0 + x[j] * x[l]
}

#[test]
fn combinators_and_searches() {
    for x in [vec![1.5_f64, 3.0, 0.7], vec![12.0_f64, 2.5, -0.4]] {
        mochi::testing::test_rule(
            (x,),
            |a| try_combinators(&a.0),
            |a| try_combinators::rrule(&a.0),
        );
    }
    assert_eq!(
        try_combinators::gradient(&[1.5, -3.0, 0.7]),
        Err(FitError::Parse("second: log of -3".into()))
    );
    assert_eq!(
        try_combinators::gradient(&[1.5, 1.0, 0.7]),
        Err(FitError::Negative(0.0))
    );
    assert_eq!(
        try_combinators::gradient(&[1.5, 3.0]),
        Err(FitError::Negative(-1.0))
    );
    // q = ln x0 / ln x1, + x2·ln x0 + x0·x2 (x0 < 10): ∂/∂x2 = ln x0 + x0.
    let g = try_combinators::gradient(&[1.5, 3.0, 0.7]).unwrap();
    assert!((g[2] - (1.5_f64.ln() + 1.5)).abs() < 1e-12, "{g:?}");
    assert_eq!(try_ok::gradient(&[-1.0, 2.0]), None);
    let g = try_ok::gradient(&[2.0, 3.0]).unwrap();
    assert!((g[0] - 1.5).abs() < 1e-12 && (g[1] - 2.0_f64.ln()).abs() < 1e-12);
    for x in [
        vec![0.3_f64, 1.7, 1.1, -0.2],
        vec![0.3_f64, 0.7, 0.1, 0.9],
        vec![2.0_f64, -0.7, 0.6, 0.1],
    ] {
        mochi::testing::test_rule(
            (x,),
            |a| searched_positions(&a.0),
            |a| searched_positions::rrule(&a.0),
        );
    }
}

#[differentiable]
fn squares(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| v * v).collect()
}

/// `v[a..b].copy_from_slice(src)` (also `clone_from_slice`, `a..=b`, `a..`, `..b`) from
/// a variable, a range of one and a helper's result ("no rule for `copy_from_slice`").
#[differentiable]
fn copied_ranges(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len();
    let mut v = vec![0.0; n + 3];
    v[1..n + 1].copy_from_slice(x);
    v[n + 1..].copy_from_slice(&y[1..3]);
    let mut w = vec![1.0; 4];
    w[..2].copy_from_slice(&squares(&y[..2]));
    w[2..=3].clone_from_slice(&x[..2]);
    v.iter()
        .enumerate()
        .map(|(i, a)| a * (i as f64 + 1.0))
        .sum::<f64>()
        + w.iter().map(|a| a * a).sum::<f64>()
}

#[test]
fn copy_from_slice_into_ranges() {
    let (x, y) = (vec![0.3_f64, 1.7, 1.1], vec![0.5_f64, -0.2, 0.9]);
    mochi::testing::test_rule(
        (x.clone(), y.clone()),
        |t| copied_ranges(&t.0, &t.1),
        |t| copied_ranges::rrule(&t.0, &t.1),
    );
    // v = (0, x0, x1, x2, y1, y2) weighted by 1..6, w = (y0², y1², x0, x1) squared.
    let (gx, gy) = copied_ranges::gradient(&x, &y);
    let want_x = [2.0 + 2.0 * x[0], 3.0 + 2.0 * x[1], 4.0];
    let want_y = [4.0 * y[0].powi(3), 5.0 + 4.0 * y[1].powi(3), 6.0];
    for k in 0..3 {
        assert!((gx[k] - want_x[k]).abs() < 1e-12 && (gy[k] - want_y[k]).abs() < 1e-12);
    }
}

#[differentiable]
fn root_if_positive(v: f64) -> Option<f64> {
    if v > 0.0 {
        Some(v.sqrt())
    } else {
        None
    }
}

/// `*x.get(k).unwrap_or(&d)` and a helper's `Option` unwrapped inside a chain's
/// closure ("no rule for `get`/`unwrap_or`" before).
#[differentiable]
fn defaults_by_reference(x: &[f64], k: usize) -> f64 {
    let a = *x.get(k).unwrap_or(&0.5) * x[0];
    let b: f64 = x.iter().map(|&v| root_if_positive(v).unwrap_or(0.0)).sum();
    a + b * *x.first().unwrap_or(&1.0)
}

#[test]
fn defaults_by_reference_gradients() {
    for k in [1_usize, 7] {
        mochi::testing::test_rule(
            (vec![0.3_f64, 1.7, -0.4], k),
            |a| defaults_by_reference(&a.0, a.1),
            |a| defaults_by_reference::rrule(&a.0, a.1),
        );
    }
    // k out of range: a = 0.5·x0; b = √x0 + √x1 (x2 < 0 gives 0); f = a + b·x0.
    let x = [0.3_f64, 1.7, -0.4];
    let (g, _) = defaults_by_reference::gradient(&x, 7);
    let b = x[0].sqrt() + x[1].sqrt();
    assert!(
        (g[0] - (0.5 + b + x[0] * 0.5 / x[0].sqrt())).abs() < 1e-12,
        "{g:?}"
    );
    assert!((g[2]).abs() < 1e-15);
}

#[differentiable]
fn scale_by_first(d: &mut [f64]) {
    for i in 0..d.len() {
        d[i] = d[i] * 2.0 * d[0];
    }
}

/// `while let Some(v) = it.next()` over an iterator bound before (a `for` now), and
/// `&mut p[..]` of a local array and a `Vec` passed to a helper (a sub-slice refusal
/// before).
#[differentiable]
fn stepped_iterators(x: &[f64]) -> f64 {
    let mut it = x.iter();
    let mut s = 0.0;
    while let Some(v) = it.next() {
        s += v * v;
    }
    let mut sines = x.iter().map(|v| v.sin());
    while let Some(v) = sines.next() {
        s += v * x[0];
    }
    let mut p = [x[0], x[1]];
    scale_by_first(&mut p[..]);
    let mut q = x.to_vec();
    scale_by_first(&mut q[..]);
    s + p[0] * p[1] + q[2]
}

#[test]
fn stepped_iterators_gradients() {
    mochi::testing::test_rule(
        (vec![0.3_f64, 1.7, -0.4],),
        |a| stepped_iterators(&a.0),
        |a| stepped_iterators::rrule(&a.0),
    );
}

/// `nth(k)` of a chain (also after `filter`, `rev`, `step_by`), `zip(1..)` and
/// `(0..).zip(..)` (an open range bounded by what it is zipped with), `cycle()`,
/// `std::iter::repeat`, `repeat_n` and `once` by their full path: each was a
/// "no rule for `nth`/`iter`/`cycle`" or an unresolved path before.
#[differentiable]
fn positional_iterators(x: &[f64]) -> f64 {
    let a = x.iter().map(|v| v * v).nth(1).unwrap();
    let b = x.iter().filter(|v| **v > 0.0).nth(1).unwrap();
    let c = *x.iter().rev().nth(0).unwrap() * x.iter().skip(1).step_by(2).nth(0).copied().unwrap();
    let d: f64 = x.iter().zip(1..).map(|(v, k)| v * k as f64).sum();
    let mut e = 0.0;
    for (k, v) in (0..).zip(x.iter()) {
        e += v.powi(k);
    }
    let f: f64 = x.iter().cycle().skip(1).take(5).map(|v| v.sin()).sum();
    let g = std::iter::repeat(x[0])
        .zip(x.iter())
        .map(|(p, q)| p * q)
        .sum::<f64>()
        + std::iter::once(x[1])
            .chain(x.iter().copied())
            .map(|v| v.exp())
            .sum::<f64>()
        + std::iter::repeat_n(x[2], 3).map(|v| v * v).sum::<f64>();
    a + b * 2.0 + c + d + e + f + g
}

#[test]
fn positional_iterators_gradients() {
    for x in [
        vec![0.3_f64, 1.7, -0.4, 0.9],
        vec![1.1, 0.2, 0.5, -1.3, 2.0],
    ] {
        mochi::testing::test_rule(
            (x.clone(),),
            |a| positional_iterators(&a.0),
            |a| positional_iterators::rrule(&a.0),
        );
    }
    // At x = (0.3, 1.7, -0.4, 0.9): a = x1², b = x1 (the second positive), c = x3·x1,
    // d = Σ (k+1)·x_k, e = Σ x_k^k, f = sin over x1, x2, x3, x0, x1, g as written.
    let x = [0.3_f64, 1.7, -0.4, 0.9];
    let g = positional_iterators::gradient(&x);
    let expected = [
        // a, b, c, d, e, f, g
        0.0 + 0.0 + 0.0 + 1.0 + 0.0 + x[0].cos() + (x.iter().sum::<f64>() + x[0]) + x[0].exp(),
        2.0 * x[1] + 2.0 + x[3] + 2.0 + 1.0 + 2.0 * x[1].cos() + x[0] + 2.0 * x[1].exp(),
        3.0 + 2.0 * x[2] + x[2].cos() + x[0] + x[2].exp() + 6.0 * x[2],
        x[1] + 4.0 + 3.0 * x[3] * x[3] + x[3].cos() + x[0] + x[3].exp(),
    ];
    for (a, b) in g.iter().zip(expected) {
        assert!((a - b).abs() < 1e-12, "{g:?} against {expected:?}");
    }
}

/// An element's `Option` held in a variable or given by a branch: `let p = x.get(i + 1);`,
/// `x.first()`, `x.last().copied()`, `if i > 0 { x.get(i - 1).copied() } else { None }`,
/// then matched, unwrapped with a default or tested with `if let` ("no rule for `get`"
/// before).
#[differentiable]
fn held_element_options(x: &[f64], i: usize) -> f64 {
    let prev = if i > 0 { x.get(i - 1).copied() } else { None };
    let next = x.get(i + 1);
    let first = x.first();
    let last = x.last().copied();
    let a = match first {
        Some(&v) => v,
        None => 0.0,
    };
    let b = if let Some(v) = next { v * x[i] } else { x[i] };
    prev.unwrap_or(1.0) * x[i] + a * last.unwrap_or(0.0) + b
}

#[test]
fn held_element_options_gradients() {
    let x = vec![0.3_f64, 1.7, -0.4, 0.9];
    for i in 0..4 {
        mochi::testing::test_rule(
            (x.clone(), i),
            |a| held_element_options(&a.0, a.1),
            |a| held_element_options::rrule(&a.0, a.1),
        );
    }
    // i = 0: no previous element (x0·1), b = x1·x0; i = 3: no next one (b = x3).
    let g0 = held_element_options::gradient(&x, 0).0;
    let e0 = [1.0 + x[3] + x[1], x[0], 0.0, x[0]];
    let g3 = held_element_options::gradient(&x, 3).0;
    let e3 = [x[3], 0.0, x[3], x[2] + x[0] + 1.0];
    for (g, e) in [(g0, e0), (g3, e3)] {
        for (a, b) in g.iter().zip(e) {
            assert!((a - b).abs() < 1e-12, "{g:?} against {e:?}");
        }
    }
}

/// Chains over a row of a `Vec<Vec<f64>>` (`a[i].iter()`, `a[i][..2].iter()`,
/// `a[i][1..].iter().sum()`, `a[0].iter()`): "this `for` over a differentiable sequence is
/// not one the derivation writes" before, for the sub-slice of a row.
#[differentiable]
fn row_chains(a: &[Vec<f64>], x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        let r: f64 = a[i].iter().zip(x.iter()).map(|(p, q)| p * q).sum();
        s += r * r;
        let e: Vec<f64> = a[i][..2].iter().map(|v| v.exp()).collect();
        s += e[1] + a[i][1..].iter().sum::<f64>();
    }
    s + a[0].iter().map(|v| v.sin()).sum::<f64>()
}

#[test]
fn row_chains_gradients() {
    let a = vec![vec![0.3_f64, 1.2, -0.5], vec![0.7, -0.2, 0.9]];
    let x = vec![0.5_f64, 1.5, -1.0];
    mochi::testing::test_rule(
        (a.clone(), x.clone()),
        |t| row_chains(&t.0, &t.1),
        |t| row_chains::rrule(&t.0, &t.1),
    );
    // ∂/∂a_ij = 2 r_i x_j + [j = 1] e^{a_i1} + [j ≥ 1] + [i = 0] cos a_0j, r_i = a_i · x.
    let (ga, gx) = row_chains::gradient(&a, &x);
    let r: Vec<f64> = a
        .iter()
        .map(|row| row.iter().zip(&x).map(|(p, q)| p * q).sum())
        .collect();
    for i in 0..2 {
        for j in 0..3 {
            let mut want = 2.0 * r[i] * x[j];
            if j == 1 {
                want += a[i][1].exp();
            }
            if j >= 1 {
                want += 1.0;
            }
            if i == 0 {
                want += a[0][j].cos();
            }
            assert!((ga[i][j] - want).abs() < 1e-12, "{ga:?}");
        }
        assert!(gx.len() == 3);
    }
    for j in 0..3 {
        let want = 2.0 * (r[0] * a[0][j] + r[1] * a[1][j]);
        assert!((gx[j] - want).abs() < 1e-12, "{gx:?}");
    }
}

const GL_NODES: [f64; 3] = [-0.774_596_669_241_483_4, 0.0, 0.774_596_669_241_483_4];
const GL_WEIGHTS: [f64; 3] = [5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0];

/// A quadrature rule's nodes and weights zipped (`NODES.iter().zip(WEIGHTS.iter())`,
/// `.zip(&W)` with `&xk`): E0716 at the attribute before; a nested zip under `iter_mut()`
/// (`out.iter_mut().zip(x.iter().zip(y.iter()))`): "this `for` … is not one the derivation
/// writes" before.
#[differentiable]
fn quadrature_and_nested_zips(ab: &[f64], x: &[f64], y: &[f64]) -> f64 {
    let (a, b, p) = (ab[0], ab[1], ab[2]);
    let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
    let mut s = 0.0;
    for (xk, wk) in GL_NODES.iter().zip(GL_WEIGHTS.iter()) {
        let t = mid + half * xk;
        s += wk * (-p * t * t).exp();
    }
    for (&xk, wk) in GL_NODES.iter().zip(&GL_WEIGHTS) {
        s += *wk * xk * p;
    }
    let mut out = vec![0.0; x.len()];
    for (o, (u, v)) in out.iter_mut().zip(x.iter().zip(y.iter())) {
        *o = u * v + u.exp();
    }
    s * half + out.iter().map(|v| v * v).sum::<f64>()
}

/// `let f = x.first()?;` is a reference, as written (`*f < 0.0`), and so are `x.get(i)?`
/// and `x.last()?` (E0614 "`f64` cannot be dereferenced" before); `.copied()?` a value.
#[differentiable]
fn element_references_by_try(x: &[f64]) -> Option<f64> {
    let f = x.first()?;
    if *f < -10.0 {
        return None;
    }
    let g = x.get(1)?;
    let l = x.last()?;
    Some(f * x.iter().sum::<f64>() + *l * g + x.get(2).copied()? * 2.0)
}

#[test]
fn quadrature_and_element_references() {
    let ab = vec![0.2_f64, 1.3, 0.7];
    let (x, y) = (vec![0.3_f64, 1.2, -0.5], vec![0.7_f64, -0.4, 0.9]);
    mochi::testing::test_rule(
        (ab.clone(), x.clone(), y.clone()),
        |t| quadrature_and_nested_zips(&t.0, &t.1, &t.2),
        |t| quadrature_and_nested_zips::rrule(&t.0, &t.1, &t.2),
    );
    // The nested zip's part by hand: ∂/∂x_i = 2 o_i (y_i + e^{x_i}), ∂/∂y_i = 2 o_i x_i.
    let (_, gx, gy) = quadrature_and_nested_zips::gradient(&ab, &x, &y);
    for i in 0..3 {
        let o = x[i] * y[i] + x[i].exp();
        assert!(
            (gx[i] - 2.0 * o * (y[i] + x[i].exp())).abs() < 1e-12,
            "{gx:?}"
        );
        assert!((gy[i] - 2.0 * o * x[i]).abs() < 1e-12, "{gy:?}");
    }
    // ∂/∂x = (Σx + x0, x0 + x_last, x0 + x1 + 2) at three elements.
    let x = [0.3_f64, 1.2, -0.5];
    let g = element_references_by_try::gradient(&x).expect("defined");
    let want = [x.iter().sum::<f64>() + x[0], x[0] + x[2], x[0] + x[1] + 2.0];
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{g:?} against {want:?}");
    }
    assert!(element_references_by_try::gradient(&[0.3, 1.2]).is_none());
    assert!(element_references_by_try::gradient(&[-20.0, 1.2, 3.0]).is_none());
}

#[test]
#[cfg(feature = "higher-order")]
fn quadrature_has_a_hessian() {
    let x = [0.2, 1.3, 0.7];
    let h = quadrature_and_nested_zips::hessian(&x, &[], &[]);
    common::assert_hessian_matches(
        "quadrature",
        |p| quadrature_and_nested_zips::gradient(p, &[], &[]).0,
        &h,
        &x,
        1e-6,
    );
}

/// A helper returning a fixed-size array (`-> [f64; 3]`, a rotation as bundle adjustment
/// writes it) and one taking `&[f64; 3]` and `[f64; 2]`: their callers have `jacobian` and
/// `hessian` (a compile error naming the helper's result type before).
#[differentiable]
fn rotate(w: &[f64], x: &[f64]) -> [f64; 3] {
    let theta = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
    let k = [w[0] / theta, w[1] / theta, w[2] / theta];
    let (c, s) = (theta.cos(), theta.sin());
    let kx = [
        k[1] * x[2] - k[2] * x[1],
        k[2] * x[0] - k[0] * x[2],
        k[0] * x[1] - k[1] * x[0],
    ];
    let kd = k[0] * x[0] + k[1] * x[1] + k[2] * x[2];
    [
        x[0] * c + kx[0] * s + k[0] * kd * (1.0 - c),
        x[1] * c + kx[1] * s + k[1] * kd * (1.0 - c),
        x[2] * c + kx[2] * s + k[2] * kd * (1.0 - c),
    ]
}

#[differentiable]
fn weigh(a: &[f64; 3], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1].sin() * b[1] + a[2] * a[2]
}

#[differentiable]
fn projection(p: &[f64]) -> Vec<f64> {
    let r = rotate(&p[..3], &p[3..6]);
    vec![r[0] / r[2], r[1] / r[2], weigh(&r, [p[0], p[1]])]
}

#[differentiable]
fn projection_norm(p: &[f64]) -> f64 {
    let r = projection(p);
    r[0] * r[0] + r[1] * r[1] + r[2]
}

#[test]
fn fixed_size_array_helpers() {
    let p = vec![0.1_f64, -0.2, 0.3, 1.0, 2.0, 5.0];
    mochi::testing::test_rule(
        (p.clone(),),
        |t| projection_norm(&t.0),
        |t| projection_norm::rrule(&t.0),
    );
}

#[test]
#[cfg(feature = "higher-order")]
fn fixed_size_array_helpers_have_jacobians_and_hessians() {
    let p = [0.1_f64, -0.2, 0.3, 1.0, 2.0, 5.0];
    let (r, j) = projection::jacobian(&p);
    assert_eq!(r, projection(&p));
    let step = 1e-6;
    for k in 0..6 {
        let (mut up, mut down) = (p, p);
        up[k] += step;
        down[k] -= step;
        let (ru, rd) = (projection(&up), projection(&down));
        for i in 0..3 {
            let fd = (ru[i] - rd[i]) / (2.0 * step);
            assert!(
                (j[[i, k]] - fd).abs() < 1e-6 * (1.0 + fd.abs()),
                "J[{i},{k}] {} vs {fd}",
                j[[i, k]]
            );
        }
    }
    let h = projection_norm::hessian(&p);
    common::assert_hessian_matches("projection_norm", projection_norm::gradient, &h, &p, 1e-5);
}

/// `map_while` (in a `sum`, a `for` and before `last()`), and the end of a chain that
/// skips (`filter(..).last()`, `find(p)`) read with a default or by `if let`: "no rule for
/// `map_while`/`last`" before.
#[differentiable]
fn stopping_chains(x: &[f64]) -> f64 {
    let a: f64 = x
        .iter()
        .map_while(|v| if *v < 1.5 { Some(v * v) } else { None })
        .sum();
    let b = x
        .iter()
        .map_while(|&v| (v > 0.0).then(|| v.ln()))
        .last()
        .unwrap_or(0.0);
    let mut c = 0.0;
    for t in x
        .iter()
        .map_while(|v| if *v < 1.5 { Some(v.sin()) } else { None })
    {
        c += t * x[0];
    }
    let d = x
        .iter()
        .filter(|v| **v > 1.0)
        .map(|v| v * v)
        .last()
        .unwrap_or(1.0);
    let e = if let Some(f) = x.iter().copied().find(|v| *v > 1.0) {
        f * 3.0
    } else {
        0.5
    };
    let g = x.iter().map(|v| v.exp()).nth(2).unwrap_or(0.0);
    a + b + c + d + e + g
}

#[test]
fn stopping_chains_gradients() {
    for x in [
        vec![0.3_f64, 1.2, 2.0, 0.5],
        vec![0.3, 1.2, 1.4, 0.5],
        vec![-0.3, 0.2, 0.4, 0.5],
        vec![0.3, 0.2, 0.4, 0.5],
    ] {
        mochi::testing::test_rule(
            (x.clone(),),
            |a| stopping_chains(&a.0),
            |a| stopping_chains::rrule(&a.0),
        );
    }
    // x = (0.3, 1.2, 2.0, 0.5): the sums' walks stop at 2.0, the `ln` one ends at x3 (b =
    // ln x3), the filter keeps 2.0 last (d = x2²), find gives 1.2, nth(2) is e^{x2}:
    // ∂/∂x2 = 2·2 + e², ∂/∂x3 = 1/x3.
    let g = stopping_chains::gradient(&[0.3, 1.2, 2.0, 0.5]);
    assert!((g[2] - (4.0 + 2.0_f64.exp())).abs() < 1e-12, "{g:?}");
    assert!((g[3] - 2.0).abs() < 1e-12, "{g:?}");
}

/// A captured parameter given bare by a branch inside a chain's closure (`if e < 0.0 { 1.0
/// - tau } else { tau }`): "expected `f64`, found `&f64`" before (the closure reads its
/// captures through a reference).
#[differentiable]
fn captured_branch_value(r: &[f64], tau: f64) -> f64 {
    r.iter()
        .map(|&e| {
            let w = if e < 0.0 { 1.0 - tau } else { tau };
            let h = if e.abs() < 0.3 {
                0.5 * e * e / 0.3
            } else {
                e.abs() - 0.15
            };
            w * h
        })
        .sum()
}

#[test]
fn captured_branch_value_gradients() {
    mochi::testing::test_rule(
        (vec![0.5_f64, -0.2, 1.0, -0.9], 0.3_f64),
        |a| captured_branch_value(&a.0, a.1),
        |a| captured_branch_value::rrule(&a.0, a.1),
    );
    // ∂/∂τ = Σ± h(e): 0.35 − 0.2²/0.6 + 0.85 − 0.75.
    let (_, dtau) = captured_branch_value::gradient(&[0.5, -0.2, 1.0, -0.9], 0.3);
    let want = 0.35 - 0.04 / 0.6 + 0.85 - 0.75;
    assert!((dtau - want).abs() < 1e-12, "{dtau} against {want}");
}

/// A search's element bound by `let … else` and `if let` (`let Some(&m) =
/// x.iter().find(p) else { return .. };`, `if let Some(v) = x.iter().find(p) { v * *v }`,
/// `filter(..).last()`): "`.find(..)` over a differentiable sequence is not supported"
/// before.
#[differentiable]
fn searched_elements(x: &[f64]) -> f64 {
    let Some(&m) = x.iter().find(|v| **v > 0.2) else {
        return x[0];
    };
    let Some(k) = x.iter().filter(|v| **v < 0.0).last() else {
        return m * 2.0;
    };
    let Some(p) = x.iter().filter(|v| **v > 0.0).last() else {
        return *k;
    };
    let big = if let Some(v) = x.iter().find(|v| **v > 1.0) {
        v * *v
    } else {
        0.0
    };
    m * m + x[0] + *k + big + *p * *k
}

#[test]
fn searched_elements_gradients() {
    for x in [
        vec![0.1_f64, 0.5, -0.3],
        vec![0.1, 0.15, 0.3],
        vec![0.1, 0.15, -0.3],
        vec![0.1, 1.5, -0.3],
    ] {
        mochi::testing::test_rule(
            (x.clone(),),
            |a| searched_elements(&a.0),
            |a| searched_elements::rrule(&a.0),
        );
    }
    // x = (0.1, 1.5, −0.3): m = x1, k = x2, p = x1, big = x1²: (1, 4 x1 + x2, 1 + x1).
    let g = searched_elements::gradient(&[0.1, 1.5, -0.3]);
    assert_eq!(g, vec![1.0, 6.0 - 0.3, 2.5]);
}

/// A tuple struct deriving `Tangent` built from differentiable values (`Pt(x[0], x[1])`)
/// and passed to a helper: "building `Pt(..)` … is not supported; return … a struct
/// deriving `Tangent`" before, although it derives it.
#[derive(Clone, Debug, Tangent)]
struct Pt(f64, f64);

#[differentiable]
fn pt_norm(p: &Pt) -> f64 {
    (p.0 * p.0 + p.1 * p.1).sqrt()
}

#[differentiable]
fn tuple_structs(x: &[f64]) -> f64 {
    let p = Pt(x[0], x[1]);
    let q = Pt(p.0 * p.1, p.1 - p.0);
    q.0 * q.1 + p.0 + pt_norm(&Pt(x[0], 2.0 * x[1]))
}

#[test]
fn tuple_structs_gradients() {
    mochi::testing::test_rule(
        (vec![0.3_f64, 1.2],),
        |a| tuple_structs(&a.0),
        |a| tuple_structs::rrule(&a.0),
    );
    // x0 x1² − x0² x1 + x0 + √(x0² + 4 x1²).
    let (a, b) = (0.3_f64, 1.2_f64);
    let r = (a * a + 4.0 * b * b).sqrt();
    let g = tuple_structs::gradient(&[a, b]);
    let want = [
        b * b - 2.0 * a * b + 1.0 + a / r,
        2.0 * a * b - a * a + 4.0 * b / r,
    ];
    for (x, y) in g.iter().zip(want) {
        assert!((x - y).abs() < 1e-12, "{g:?} against {want:?}");
    }
    let dp = pt_norm::gradient(&Pt(3.0, 4.0));
    assert!((dp.0 - 0.6).abs() < 1e-12 && (dp.1 - 0.8).abs() < 1e-12);
}

/// Gram–Schmidt as written: rows pushed as `q.push(w.iter().map(|x| x / n).collect())`
/// (the `collect`'s type given by the `push`; "no rule for `collect`" before).
#[differentiable]
fn gram_schmidt(a: &[Vec<f64>]) -> f64 {
    let mut q: Vec<Vec<f64>> = Vec::new();
    for v in a.iter() {
        let mut w = v.clone();
        for u in q.iter() {
            let d: f64 = w.iter().zip(u.iter()).map(|(x, y)| x * y).sum();
            for i in 0..w.len() {
                w[i] -= d * u[i];
            }
        }
        let n = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        q.push(w.iter().map(|x| x / n).collect());
    }
    q[1][0] + 2.0 * q[2][1] - q[0][2]
}

#[test]
fn gram_schmidt_gradients() {
    let a = vec![
        vec![1.0, 0.2, 0.3],
        vec![0.1, 1.5, -0.2],
        vec![0.4, 0.3, 2.0],
    ];
    mochi::testing::test_rule(
        (a.clone(),),
        |t| gram_schmidt(&t.0),
        |t| gram_schmidt::rrule(&t.0),
    );
    // The third row enters only through q2 = its part orthogonal to the first two,
    // normalised, and q2's second element: ∂/∂a2 = 2 (e1 − q2 q2₁)/|w2| projected off
    // the first two directions; its component along a2 itself is 0 (scale invariance).
    let g = gram_schmidt::gradient(&a);
    let along: f64 = g[2].iter().zip(&a[2]).map(|(p, q)| p * q).sum();
    assert!(along.abs() < 1e-12, "{g:?}");
}

/// The ends of a sub-slice (`*x[1..].first().unwrap()`, `x[..n].last()`, `x[1..3].last()
/// .copied().unwrap()`): "no rule for `first`/`last`" before.
#[differentiable]
fn subslice_ends(x: &[f64]) -> f64 {
    let f = *x[1..].first().unwrap();
    let l = *x[..x.len() - 1].last().unwrap();
    let m = x[1..3].last().copied().unwrap();
    f * l + m * m
}

#[test]
fn subslice_ends_gradients() {
    mochi::testing::test_rule(
        (vec![0.3_f64, 1.2, -0.7, 2.0],),
        |a| subslice_ends(&a.0),
        |a| subslice_ends::rrule(&a.0),
    );
    // x1 x2 + x2²: (0, x2, x1 + 2 x2, 0).
    assert_eq!(
        subslice_ends::gradient(&[0.3, 1.2, -0.7, 2.0]),
        vec![0.0, -0.7, 1.2 - 1.4, 0.0]
    );
    // An empty range panics as `unwrap` does.
    let empty = std::panic::catch_unwind(|| subslice_ends::gradient(&[0.3]));
    assert!(empty.is_err());
}

/// `[v; n]` of a differentiable value with a literal length (`[x[1]; 2]`, then written
/// into): "`[x; n]` of a differentiable value is not supported" before.
#[differentiable]
fn repeated_arrays(x: &[f64]) -> f64 {
    let a = [x[1]; 2];
    let mut b = [x[0] * 2.0; 3];
    b[1] += x[2];
    a[0] * a[1] + b.iter().sum::<f64>() + b[1] * b[2]
}

#[test]
fn repeated_arrays_gradients() {
    mochi::testing::test_rule(
        (vec![0.3_f64, 1.2, -0.7],),
        |a| repeated_arrays(&a.0),
        |a| repeated_arrays::rrule(&a.0),
    );
    // x1² + 6 x0 + x2 + (2 x0 + x2)·2 x0: (6 + 8 x0 + 2 x2, 2 x1, 1 + 2 x0).
    let g = repeated_arrays::gradient(&[0.3, 1.2, -0.7]);
    let want = [6.0 + 8.0 * 0.3 - 1.4, 2.4, 1.6];
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{g:?}");
    }
}

/// An index made from a float (`(q.floor() as usize).min(n - 2)`) cast back (`k as
/// f64`): the Hessian was refused ("it casts a float with `as f64`", naming `k as f64`).
#[differentiable]
fn spline_at(y: &[f64], q: f64) -> f64 {
    let n = y.len();
    let k = (q.floor() as usize).min(n - 2);
    let t = q - k as f64;
    y[k] * (1.0 - t) * (1.0 - t) + y[k + 1] * t * t + q * q
}

#[test]
fn spline_at_gradients() {
    mochi::testing::test_rule(
        (vec![0.3_f64, 1.2, -0.7, 2.0], 1.4_f64),
        |a| spline_at(&a.0, a.1),
        |a| spline_at::rrule(&a.0, a.1),
    );
}

#[test]
#[cfg(feature = "higher-order")]
fn spline_at_has_a_hessian() {
    // y1 (1 − t)² + y2 t² + q², t = q − 1 at q = 1.4.
    let h = spline_at::hessian(&[0.3, 1.2, -0.7, 2.0], 1.4);
    let t = 0.4;
    assert!(
        (h[[4, 4]] - (2.0 * 1.2 + 2.0 * -0.7 + 2.0)).abs() < 1e-12,
        "{h:?}"
    );
    assert!((h[[1, 4]] + 2.0 * (1.0 - t)).abs() < 1e-12, "{h:?}");
    assert!((h[[2, 4]] - 2.0 * t).abs() < 1e-12, "{h:?}");
    assert_eq!(h[[0, 4]], 0.0);
}

/// In-place methods on a sub-slice of a buffer (`v[1..].reverse()`, `v[..2].swap(0, 1)`):
/// "no rule for `reverse`/`swap` with arguments `(&[f64], ..)`" before.
#[differentiable]
fn subslice_in_place(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v[1..].reverse();
    v[..2].swap(0, 1);
    let mut s = 0.0;
    for i in 0..v.len() {
        s += v[i] * (i as f64 + 1.0) * v[0];
    }
    s
}

#[test]
fn subslice_in_place_gradients() {
    mochi::testing::test_rule(
        (vec![0.3_f64, 1.2, -0.7, 2.0],),
        |a| subslice_in_place(&a.0),
        |a| subslice_in_place::rrule(&a.0),
    );
    // v = (x3, x0, x2, x1): s = x3 (x3 + 2 x0 + 3 x2 + 4 x1).
    let x = [0.3_f64, 1.2, -0.7, 2.0];
    let g = subslice_in_place::gradient(&x);
    let want = [
        2.0 * x[3],
        4.0 * x[3],
        3.0 * x[3],
        2.0 * x[3] + 2.0 * x[0] + 3.0 * x[2] + 4.0 * x[1],
    ];
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{g:?} against {want:?}");
    }
}

#[test]
#[cfg(feature = "higher-order")]
fn positional_and_stopping_chains_have_hessians() {
    let x = [0.3, 1.7, -0.4, 0.9];
    let h = positional_iterators::hessian(&x);
    common::assert_hessian_matches(
        "positional_iterators",
        positional_iterators::gradient,
        &h,
        &x,
        1e-6,
    );
    let x = [0.3, 1.2, 1.4, 0.5];
    let h = stopping_chains::hessian(&x);
    common::assert_hessian_matches("stopping_chains", stopping_chains::gradient, &h, &x, 1e-6);
}

/// A dimension named by a `const` item, in a parameter's type and in a buffer's length.
const DIM: usize = 3;

#[differentiable]
fn const_length_array(x: &[f64; DIM], w: f64) -> f64 {
    let mut buf = [0.0; DIM];
    for i in 0..DIM {
        buf[i] = x[i] * w;
    }
    let y = *x;
    buf.iter().map(|b| b.sin()).sum::<f64>() * y[DIM - 1]
}

#[differentiable]
fn const_length_buffer(x: &[f64]) -> f64 {
    let mut b = [0.0; DIM];
    for i in 0..DIM {
        b[i] = x[i] * x[(i + 1) % DIM];
    }
    b.iter().map(|v| v.exp()).sum()
}

#[test]
fn arrays_sized_by_a_const_item() {
    mochi::testing::test_rule(
        ([0.3, -0.8, 1.1], 0.7),
        |a| const_length_array(&a.0, a.1),
        |a| const_length_array::rrule(&a.0, a.1),
    );
    mochi::testing::test_rule(
        (vec![0.3, -0.8, 1.1],),
        |a| const_length_buffer(&a.0),
        |a| const_length_buffer::rrule(&a.0),
    );
}

#[test]
#[cfg(feature = "higher-order")]
fn a_const_sized_buffer_keeps_the_hessian() {
    let x = [0.3, -0.8, 1.1];
    let h = const_length_buffer::hessian(&x);
    common::assert_hessian_matches(
        "const_length_buffer",
        const_length_buffer::gradient,
        &h,
        &x,
        1e-6,
    );
}
