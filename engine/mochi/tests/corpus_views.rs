//! Writes through mutable views of an array: `b.row_mut(i).assign(&v)`,
//! `b.slice_mut(s![..]).fill(c)`, `mapv_inplace` on a view, and a view kept in a local
//! (`let mut r = b.row_mut(i); r += x; r[k] = e;`). The lowering writes in place and the
//! reverse sweep takes the view's part of the cotangent out. Checked by `test_rule`
//! (finite differences, the adjoint identity), by exact values, and one Hessian against
//! differences of the gradient.
//!
//! Also arrays walked and built element by element: `for v in a.iter()` and chains over
//! a matrix parameter (read through `a.flatten()`, in logical order), and
//! `Array1::from_iter(chain)`, `chain.collect::<Array1<_>>()`,
//! `Array2::from_shape_fn(shape, |(i, j)| e)`; and ndarray's `Zip` (`for_each` writing
//! a `&mut` operand, `map_collect` and `fold`, over any number of operands), with
//! `zip_mut_with`, `scaled_add` and the `concatenate!`/`stack!` macros; and `match`,
//! `if let` and `let … else` on the `Result` of a Cholesky factorization.
//!
//! And windows of a slice kept in locals, as code that unpacks a parameter vector
//! writes them: `let w = &theta[a..b];` (read through `theta` itself), several bound
//! by one tuple `let (w, b) = (&theta[..k], &theta[k..]);`, with the checks of slicing
//! and of indexing the window kept.

mod common;
use mochi::prelude::*;
use ndarray::{
    array, azip, concatenate, s, stack, Array, Array1, Array2, Array3, ArrayView2, Axis, Slice, Zip,
};

#[differentiable]
fn rows_assigned(x: &Array1<f64>) -> f64 {
    let mut b = Array2::<f64>::zeros((3, x.len()));
    for i in 0..3 {
        let r = x.mapv(|v| v * (i as f64 + 1.0));
        b.row_mut(i).assign(&r);
    }
    b.mapv(|v| v.sin()).sum()
}

#[differentiable]
fn slices_written(x: &Array1<f64>) -> f64 {
    let mut b = Array1::<f64>::zeros(5);
    b.slice_mut(s![1..3]).assign(x);
    b.slice_mut(s![3..]).fill(x[0] * x[1]);
    b.slice_mut(s![..;2]).mapv_inplace(|v| v * v + 1.0);
    let mut t = b.slice_mut(s![-2..]);
    t += x;
    let mut h = b.slice_mut(s![..2]);
    h *= 3.0;
    b.iter()
        .enumerate()
        .map(|(k, v)| v * (k as f64 + 0.5))
        .sum::<f64>()
}

#[differentiable]
fn matrix_views(a: &Array2<f64>, x: &Array1<f64>) -> f64 {
    let mut m = a.to_owned();
    m.column_mut(1).assign(x);
    let mut r0 = m.row_mut(0);
    r0 -= x;
    r0[1] *= 2.0;
    let s0 = r0.sum();
    r0[2] = s0 * x[1];
    let mut d = m.clone();
    d.diag_mut().fill(x[2]);
    d.index_axis_mut(Axis(0), 2).mapv_inplace(f64::exp);
    d.slice_axis_mut(Axis(1), Slice::from(1..))
        .mapv_inplace(|v| v * x[0]);
    m.dot(&d).sum() + d.slice(s![.., 0]).sum()
}

/// `assign` broadcasts its source: a vector into each row of a block, a one-element
/// array into a row.
#[differentiable]
fn broadcast_assign(x: &Array1<f64>) -> f64 {
    let mut b = Array2::<f64>::zeros((3, 3));
    b.slice_mut(s![0..2, ..]).assign(x);
    let one = x.slice(s![1..2]).to_owned();
    b.row_mut(2).assign(&one);
    (&b * &b).sum()
}

/// A column kept in a local, written element by element in a loop.
#[differentiable]
fn column_elements(a: &Array2<f64>, w: f64) -> f64 {
    let mut m = a.to_owned();
    for j in 0..m.ncols() {
        let mut c = m.column_mut(j);
        for i in 0..3 {
            c[i] = c[i] * w + (i + j) as f64;
        }
        c *= w;
    }
    m.mapv(|v| v.tanh()).sum()
}

/// Element loops and chains over matrices, weighted by the position `iter()` gives.
#[differentiable]
fn matrix_elements(a: ArrayView2<f64>, b: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        s += x * y * (i as f64 + 1.0);
    }
    for v in &a {
        s += v * v;
    }
    let t: f64 = a.iter().zip(b.iter()).map(|(x, y)| (x - y).powi(2)).sum();
    let c = b.iter().copied().map(|v| v.exp()).collect::<Array1<f64>>();
    s + t + c.sum() + a.iter().fold(1.0, |p, v| p * (1.0 + v))
}

#[differentiable]
fn built_from_elements(a: &Array1<f64>) -> f64 {
    let m = Array3::from_shape_fn((2, 2, 2), |(i, j, k)| a[i] * a[j] - a[k]);
    let v = Array1::from_shape_fn(3, |i| a[i % 2].powi(i as i32 + 1));
    let w = Array1::from_iter(a.iter().map(|x| x * x));
    let n = Array1::from_iter(0..4);
    m.sum() + v.sum() + w[2] * m[[1, 0, 1]] + n.len() as f64
}

#[differentiable]
fn zips(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let mut out = Array1::<f64>::zeros(a.len());
    Zip::from(&mut out)
        .and(a)
        .and(b)
        .for_each(|o, &x, &y| *o = x.sin() * y);
    Zip::from(&mut out).and(a).for_each(|o, x| {
        *o += x * 2.0;
    });
    let c = Zip::from(a)
        .and(b)
        .and(&out)
        .map_collect(|&x, &y, &z| x * y + z);
    let f = Zip::from(a)
        .and(b)
        .fold(0.5, |acc, &x, &y| acc * 0.9 + x * y);
    out.sum() + c.sum() + f
}

#[differentiable]
fn zips_of_matrices(a: &Array2<f64>, w: f64) -> f64 {
    let mut m = a.clone();
    Zip::from(&mut m)
        .and(a)
        .for_each(|o, &x| *o = *o * w + x.exp());
    let t = Zip::from(&m).and(a).map_collect(|&p, &q| p - q * w * p);
    let mut s = 0.0;
    Zip::from(&t).for_each(|&v| s += v * v);
    s + t[[1, 0]]
}

#[differentiable]
fn in_place_and_joined(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let mut y = b.to_owned();
    y.scaled_add(2.0 * a[0], a);
    let c = concatenate![Axis(0), a.view(), y.view()];
    let d = stack![Axis(0), a.view(), b.view(), a.view()];
    let mut e = d.clone();
    e.zip_mut_with(&d, |u, &v| *u = *u * v + v.sin());
    (&c * &c).sum() + c[1] * c[3] + d.row(1).dot(&d.row(0)) + e[[2, 1]].exp()
}

#[differentiable]
fn cholesky_matched(k: &Array2<f64>, y: &Array1<f64>) -> f64 {
    let a = match mochi::linalg::cholesky(k) {
        Ok(l) => mochi::linalg::logdet_cholesky(&l) + y.dot(y),
        Err(_) => f64::INFINITY,
    };
    let b = if let Ok(l) = mochi::linalg::cholesky(k) {
        l.sum()
    } else {
        0.0
    };
    let r = mochi::linalg::cholesky(k);
    let l = match r {
        Err(e) => {
            assert!(e.to_string().contains("positive"));
            return -1.0;
        }
        Ok(l) => l,
    };
    let Ok(m) = mochi::linalg::cholesky(k) else {
        return 0.0;
    };
    a + b + l.diag().mapv(|v| v.ln()).sum() + m[[1, 0]] * 3.0
}

/// ndarray's `azip!`, written as the `Zip` it stands for.
#[differentiable]
fn azips(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let mut out = Array1::<f64>::zeros(a.len());
    azip!((o in &mut out, &x in a, &y in b) *o = x * y.sin());
    let mut s = 0.0;
    azip!((&v in &out) s += v * v);
    s + out.sum()
}

/// A layer's weights and biases unpacked from one parameter vector, as windows.
#[differentiable]
fn unpacked_layer(theta: &[f64], x: &[f64]) -> f64 {
    let n = x.len();
    let (w, b) = (&theta[..2 * n], &theta[2 * n..]);
    let mut s = 0.0;
    for o in 0..b.len() {
        let mut z = b[o];
        for i in 0..n {
            z += w[o * n + i] * x[i];
        }
        s += z.tanh();
    }
    s
}

/// Windows of every form: `a..b`, `a..=b`, `..b`, `a..`, read by index, by `len`, by
/// `iter` and passed to a helper; one window used inside a closure.
#[differentiable]
#[allow(clippy::redundant_slicing)]
fn windows_of_every_form(x: &[f64]) -> f64 {
    let head = &x[..2];
    let mid = &x[1..=3];
    let tail = &x[2..];
    let all = &x[..];
    let m = mid.iter().map(|v| v * v).sum::<f64>();
    let t = (0..tail.len())
        .map(|i| tail[i] * head[i % head.len()])
        .sum::<f64>();
    m + t + head_sum(all) * x[0]
}

#[differentiable]
fn head_sum(v: &[f64]) -> f64 {
    v[0] + v[1] * 2.0
}

/// A window of a window, and a window's range passed on.
#[differentiable]
fn chained_windows(x: &[f64]) -> f64 {
    let a = &x[1..];
    let b = &a[1..3];
    b[0] * a[0] + b[1] + head_sum(&a[..2])
}

/// `let (a, b) = (b, a)` swaps: the parts are evaluated before any is bound.
#[differentiable]
fn tuple_swap(x: &[f64]) -> f64 {
    let (a, b) = (x[0], x[1] * 3.0);
    let (a, b) = (b, a);
    a * a + b
}

/// A window read past its end panics as the plain call does, even though the slice it
/// views goes on.
#[differentiable]
fn window_past_its_end(x: &[f64], k: usize) -> f64 {
    let w = &x[0..2];
    w[k] * x[3]
}

/// A valid convolution, each window of an array dotted with the kernel: ndarray's
/// `windows` in a `for` with `enumerate`, written into an output by index.
#[differentiable(higher_order)]
fn array_windows_enumerated(x: &Array1<f64>, w: &Array1<f64>, bias: f64) -> f64 {
    let mut out = Array1::<f64>::zeros(x.len() - w.len() + 1);
    for (i, patch) in x.windows(3).into_iter().enumerate() {
        out[i] = patch.dot(w) + bias;
    }
    out.mapv(f64::tanh).sum()
}

/// `windows` of a computed length in a plain `for`, and in a chain.
#[differentiable(higher_order)]
fn array_windows_looped(x: &Array1<f64>, w: &Array1<f64>) -> f64 {
    let mut s = 0.0;
    for p in x.windows(w.len()) {
        s += p.dot(w).sin();
    }
    s + x
        .windows(w.len())
        .into_iter()
        .map(|p| (p.sum() * p[0]).tanh())
        .sum::<f64>()
}

#[differentiable]
fn array_windows_chained(x: &Array1<f64>, w: &Array1<f64>) -> f64 {
    x.windows(w.len())
        .into_iter()
        .map(|p| p.dot(w).sin())
        .sum::<f64>()
}

/// The windows collected into an array (a vector result), and through `Zip`.
#[differentiable(higher_order)]
fn array_windows_collected(x: &Array1<f64>, w: &Array1<f64>) -> Array1<f64> {
    x.windows(3)
        .into_iter()
        .map(|p| p.dot(w))
        .collect::<Array1<f64>>()
}

#[differentiable]
fn array_windows_zipped(x: &Array1<f64>, w: &Array1<f64>) -> f64 {
    let mut out = Array1::<f64>::zeros(x.len() - 2);
    Zip::from(&mut out)
        .and(x.windows(3))
        .for_each(|o, p| *o = p.dot(w).exp());
    out.sum()
}

/// The windows read by their elements in the chain's closure (`w[0] * w[2]`, `w.len()`),
/// summed and collected.
#[differentiable(higher_order)]
fn array_windows_indexed(x: &Array1<f64>) -> f64 {
    let d: Vec<f64> = x
        .windows(2)
        .into_iter()
        .map(|w| (w[1] - w[0]).powi(2))
        .collect();
    d.iter().sum::<f64>()
        + x.windows(3)
            .into_iter()
            .map(|w| w[0] * w[2] + w[1].sin() * w.len() as f64)
            .sum::<f64>()
}

/// The same windows written as `s![i..i + k]` in a closure over the indices: the closure's
/// parameter is read inside the `s!` macro.
#[differentiable(higher_order)]
fn array_slices_by_index(x: &Array1<f64>, k: usize) -> f64 {
    (0..x.len() + 1 - k)
        .map(|i| x.slice(s![i..i + k]).sum().powi(2))
        .sum::<f64>()
}

/// Features joined by `ndarray::concatenate` and `ndarray::stack` called as functions (and
/// the `concatenate!` macro), centred and squashed: a vector result, so a Jacobian.
#[differentiable(higher_order)]
fn joined_by_calls(a: &Array1<f64>, b: &Array1<f64>) -> Array1<f64> {
    let sb = b.mapv(f64::sin);
    let c = concatenate![Axis(0), a.view(), sb.view()];
    let head = ndarray::concatenate(Axis(0), &[c.slice(s![..2]), b.view()]).unwrap();
    let rows = ndarray::stack(Axis(0), &[a.view(), a.view()]).unwrap();
    let m = c.mean().unwrap() + 0.1 * head.sum() + rows.row(1).dot(a);
    (&c - m).mapv(f64::tanh) * c[0]
}

/// An RBF kernel from `Array::from_shape_fn` (the generic `Array`, its dimension from the
/// shape) and a block from `Array::from_shape_vec`, in a quadratic form.
#[differentiable(higher_order)]
fn generic_array_paths(x: &Array1<f64>, ell: f64) -> f64 {
    let n = x.len();
    let k = Array::from_shape_fn((n, n), |(i, j)| {
        (-(x[i] - x[j]).powi(2) / (2.0 * ell * ell)).exp()
    });
    let w = Array1::from_shape_fn(n, |i| x[i].sin() + 1.5);
    let m = Array::from_shape_vec((2, 2), vec![x[0], x[1], x[2], x[0] * x[1]]).unwrap();
    w.dot(&k.dot(&w)) / (n * n) as f64 + m.sum() + m[[1, 1]] * m[[0, 1]]
}

/// A design matrix joined by `concatenate!` from temporaries (`ones.insert_axis(..)`, a
/// mapped array's), its least-squares misfit against sin t.
#[differentiable(higher_order)]
fn joined_temporaries(coef: &Array1<f64>, t_end: f64) -> f64 {
    let t = Array1::linspace(0.0, 1.0, 5) * t_end;
    let ones = Array1::<f64>::ones(5);
    let design = concatenate![
        Axis(0),
        ones.insert_axis(Axis(0)),
        t.view().insert_axis(Axis(0)),
        t.mapv(|v| v * v).insert_axis(Axis(0))
    ];
    let fit = design.t().dot(coef);
    fit.iter()
        .zip(t.iter())
        .map(|(f, s)| (f - s.sin()).powi(2))
        .sum()
}

#[cfg(test)]
mod checks {
    use super::*;
    use crate::check;

    check!(rows_assigned, (array![0.3_f64, 0.7],), |a| (&a.0));
    check!(
        array_windows_enumerated,
        (
            array![0.3_f64, -0.2, 0.5, 0.9, -0.4, 0.1],
            array![0.2_f64, 0.7, -0.3],
            0.1_f64
        ),
        |a| (&a.0, &a.1, a.2)
    );
    check!(
        array_windows_looped,
        (
            array![0.3_f64, -0.2, 0.5, 0.9, -0.4, 0.1],
            array![0.2_f64, 0.7, -0.3]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        array_windows_chained,
        (array![0.3_f64, -0.2, 0.5, 0.9, -0.4], array![0.2_f64, 0.7]),
        |a| (&a.0, &a.1)
    );
    check!(
        array_windows_collected,
        (
            array![0.3_f64, -0.2, 0.5, 0.9, -0.4],
            array![0.2_f64, 0.7, -0.3]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        array_windows_indexed,
        (array![0.3_f64, -0.2, 0.5, 0.9, -0.4],),
        |a| (&a.0)
    );
    check!(
        array_windows_zipped,
        (
            array![0.3_f64, -0.2, 0.5, 0.9, -0.4],
            array![0.2_f64, 0.7, -0.3]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        unpacked_layer,
        (
            vec![0.3_f64, -0.7, 0.5, 0.2, 0.1, -0.4],
            vec![0.9_f64, -0.6]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        windows_of_every_form,
        (vec![0.3_f64, -0.7, 0.5, 0.2, 1.1],),
        |a| (&a.0)
    );
    check!(tuple_swap, (vec![0.3_f64, -0.7],), |a| (&a.0));
    check!(
        chained_windows,
        (vec![0.3_f64, -0.7, 0.5, 0.2, 1.1],),
        |a| (&a.0)
    );
    check!(slices_written, (array![0.3_f64, 0.7],), |a| (&a.0));
    check!(
        matrix_views,
        (
            Array2::from_shape_fn((3, 3), |(i, j)| (i + 2 * j) as f64 * 0.1 + 0.05),
            array![0.3_f64, 0.7, -0.4]
        ),
        |a| (&a.0, &a.1)
    );
    check!(broadcast_assign, (array![0.3_f64, 0.7, -0.4],), |a| (&a.0));
    check!(
        column_elements,
        (
            Array2::from_shape_fn((3, 2), |(i, j)| i as f64 * 0.2 - j as f64 * 0.3),
            0.8_f64
        ),
        |a| (&a.0, a.1)
    );

    check!(built_from_elements, (array![0.3_f64, 0.7, -0.2],), |a| (&a
        .0));

    check!(
        zips,
        (array![0.3_f64, 0.7, -0.2], array![0.5_f64, -0.1, 0.9]),
        |a| (&a.0, &a.1)
    );
    check!(
        zips_of_matrices,
        (
            Array2::from_shape_fn((2, 3), |(i, j)| (i + 2 * j) as f64 * 0.1 + 0.05),
            0.7_f64
        ),
        |a| (&a.0, a.1)
    );

    check!(
        in_place_and_joined,
        (array![0.3_f64, 0.7, -0.2], array![0.5_f64, -0.1, 0.9]),
        |a| (&a.0, &a.1)
    );

    check!(
        cholesky_matched,
        (array![[2.0_f64, 0.3], [0.3, 1.5]], array![0.5_f64, -0.1]),
        |a| (&a.0, &a.1)
    );

    #[test]
    fn cholesky_failure_takes_the_err_branch() {
        let bad = array![[-1.0_f64, 0.0], [0.0, 1.0]];
        let y = array![0.5_f64, -0.1];
        let (v, (dk, dy)) = super::cholesky_matched::value_and_gradient(&bad, &y);
        assert_eq!(v, -1.0);
        assert_eq!(v, super::cholesky_matched(&bad, &y));
        assert!(dk.iter().all(|d| *d == 0.0) && dy.iter().all(|d| *d == 0.0));
    }

    check!(
        azips,
        (array![0.3_f64, 0.7, -0.2], array![0.5_f64, -0.1, 0.9]),
        |a| (&a.0, &a.1)
    );

    #[test]
    fn zip_values() {
        let (a, b) = (array![0.3_f64, 0.7, -0.2], array![0.5_f64, -0.1, 0.9]);
        let (v, (ga, _)) = super::zips::value_and_gradient(&a, &b);
        assert_eq!(v, super::zips(&a, &b));
        // out = sin(a)·b + 2a, c = a·b + out, f = fold: ∂/∂a₀ = 2(cos a₀·b₀ + 2) + b₀ + b₀·0.9²
        let want = 2.0 * (a[0].cos() * b[0] + 2.0) + b[0] + b[0] * 0.81;
        assert!((ga[0] - want).abs() < 1e-12, "{} vs {want}", ga[0]);
    }

    #[test]
    fn matrix_elements_in_logical_order() {
        let a = Array2::from_shape_fn((3, 2), |(i, j)| (i + 2 * j) as f64 * 0.1 + 0.05);
        let b = Array2::from_shape_fn((2, 3), |(i, j)| (i * j) as f64 * 0.1 - 0.15);
        mochi::testing::test_rule(
            (a.t().to_owned(), b.clone()),
            |p| super::matrix_elements(p.0.view(), &p.1),
            |p| super::matrix_elements::rrule(p.0.view(), &p.1),
        );
        // a transposed view (its logical order is not its memory order) gives the
        // gradient of the same matrix in standard layout
        let standard = super::matrix_elements::gradient(a.t().to_owned().view(), &b);
        assert_eq!(super::matrix_elements::gradient(a.t(), &b), standard);
        let (v, (ga, _)) = super::matrix_elements::value_and_gradient(a.t(), &b);
        assert_eq!(v, super::matrix_elements(a.t(), &b));
        // the first loop's weight of a.t()[[0, 1]] (position 1, weight 2) is b[[0, 1]]·2
        let at = a.t();
        let want = b[[0, 1]] * 2.0
            + 2.0 * at[[0, 1]]
            + 2.0 * (at[[0, 1]] - b[[0, 1]])
            + at.iter().fold(1.0, |p, v| p * (1.0 + v)) / (1.0 + at[[0, 1]]);
        assert!(
            (ga[[0, 1]] - want).abs() < 1e-12,
            "{} vs {want}",
            ga[[0, 1]]
        );
    }

    #[test]
    fn values_and_known_derivatives() {
        let x = array![0.3_f64, 0.7];
        // b = [0, x0, x1, x0*x1, x0*x1] → squares+1 at 0, 2, 4 → += x at 3, 4 → *3 at 0, 1
        let p = x[0] * x[1];
        let b = [
            3.0,
            3.0 * x[0],
            x[1] * x[1] + 1.0,
            p + x[0],
            p * p + 1.0 + x[1],
        ];
        let want: f64 = b
            .iter()
            .enumerate()
            .map(|(k, v)| v * (k as f64 + 0.5))
            .sum();
        let (v, g) = slices_written::value_and_gradient(&x);
        assert!((v - want).abs() < 1e-14, "{v} vs {want}");
        assert_eq!(v, super::slices_written(&x));
        // ∂/∂x0 = 1.5·3 + 3.5·(x1 + 1) + 4.5·2p·x1
        let d0 = 1.5 * 3.0 + 3.5 * (x[1] + 1.0) + 4.5 * 2.0 * p * x[1];
        assert!((g[0] - d0).abs() < 1e-12, "{} vs {d0}", g[0]);
        // broadcast: rows 0, 1 are x, row 2 is x1 thrice: ∂/∂x1 = 2·2·x1 + 3·2·x1
        let x3 = array![0.3_f64, 0.7, -0.4];
        let g = broadcast_assign::gradient(&x3);
        assert!((g[1] - 10.0 * x3[1]).abs() < 1e-14);
        assert!((g[0] - 4.0 * x3[0]).abs() < 1e-14);
    }

    #[test]
    fn hessian_of_slices_written() {
        let x = array![0.3_f64, 0.7];
        let h = slices_written::hessian(&x);
        common::assert_hessian_matches(
            "slices_written",
            |p| slices_written::gradient(&Array1::from(p.to_vec())).to_vec(),
            &h,
            &[0.3, 0.7],
            1e-6,
        );
        let h = rows_assigned::hessian(&x);
        common::assert_hessian_matches(
            "rows_assigned",
            |p| rows_assigned::gradient(&Array1::from(p.to_vec())).to_vec(),
            &h,
            &[0.3, 0.7],
            1e-6,
        );
    }
}

#[test]
fn windows_read_the_slice_in_place() {
    let theta = [0.3_f64, -0.7, 0.5, 0.2, 0.1, -0.4];
    let x = [0.9_f64, -0.6];
    let (y, (g, _)) = unpacked_layer::value_and_gradient(&theta, &x);
    assert_eq!(y, unpacked_layer(&theta, &x));
    // ∂/∂b0 = 1 - tanh²(z0), z0 = b0 + w00·x0 + w01·x1
    let z0 = theta[4] + theta[0] * x[0] + theta[1] * x[1];
    assert!((g[4] - (1.0 - z0.tanh().powi(2))).abs() < 1e-15);
    assert!((g[1] - (1.0 - z0.tanh().powi(2)) * x[1]).abs() < 1e-15);
    // (a, b) = (3·x1, x0): 9·x1² + x0
    let (y, g) = tuple_swap::value_and_gradient(&[0.3, -0.7]);
    assert_eq!(y, tuple_swap(&[0.3, -0.7]));
    assert!((y - (9.0 * 0.49 + 0.3)).abs() < 1e-12);
    assert_eq!(g[0], 1.0);
    assert!((g[1] - 18.0 * -0.7).abs() < 1e-12);
}

#[test]
fn a_window_read_past_its_end_panics() {
    let x = [0.3_f64, -0.7, 0.5, 0.2];
    assert_eq!(
        window_past_its_end::gradient(&x, 1).0,
        vec![0.0, 0.2, 0.0, -0.7]
    );
    let plain = std::panic::catch_unwind(|| window_past_its_end(&x, 2));
    let derived = std::panic::catch_unwind(|| window_past_its_end::gradient(&x, 2));
    assert!(plain.is_err() && derived.is_err());
    let sliced = std::panic::catch_unwind(|| unpacked_layer::gradient(&x[..3], &[1.0, 2.0]));
    assert!(sliced.is_err(), "a window past the slice's end panics");
}

#[test]
fn array_windows_values_and_hessians() {
    let x = array![0.3_f64, -0.2, 0.5, 0.9, -0.4, 0.1];
    let w = array![0.2_f64, 0.7, -0.3];
    // The windows are the sub-arrays x[i..i + 3]: the values as written by hand.
    let dots: Vec<f64> = (0..4)
        .map(|i| (0..3).map(|j| x[i + j] * w[j]).sum::<f64>())
        .collect();
    let want: f64 = dots.iter().map(|d| (d + 0.1).tanh()).sum();
    assert!((array_windows_enumerated(&x, &w, 0.1) - want).abs() < 1e-14);
    let (y, j) = array_windows_collected::jacobian(&x.slice(s![..5]).to_owned(), &w);
    assert_eq!(y.to_vec(), dots[..3].to_vec());
    // ∂y_i/∂x_{i+j} = w_j, ∂y_i/∂w_j = x_{i+j}.
    for i in 0..3 {
        for k in 0..3 {
            assert_eq!(j[[i, i + k]], w[k]);
            assert_eq!(j[[i, 5 + k]], x[i + k]);
        }
    }
    let flat = |p: &[f64]| (Array1::from(p[..6].to_vec()), Array1::from(p[6..].to_vec()));
    let z: Vec<f64> = x.iter().chain(w.iter()).copied().collect();
    let h = array_windows_enumerated::hessian(&x, &w, 0.1);
    common::assert_hessian_matches(
        "array_windows_enumerated",
        |p| {
            let (a, b) = flat(p);
            let (ga, gb, _) = array_windows_enumerated::gradient(&a, &b, 0.1);
            ga.iter().chain(gb.iter()).copied().collect()
        },
        &h.slice(s![..9, ..9]).to_owned(),
        &z,
        1e-6,
    );
    let h = array_windows_looped::hessian(&x, &w);
    common::assert_hessian_matches(
        "array_windows_looped",
        |p| {
            let (a, b) = flat(p);
            let (ga, gb) = array_windows_looped::gradient(&a, &b);
            ga.iter().chain(gb.iter()).copied().collect()
        },
        &h,
        &z,
        1e-6,
    );
    // Σ_i (x_i + x_{i+1})²: the gradient 2(s_{i-1} + s_i) by hand, the Hessian constant.
    let (v, (g, _)) = array_slices_by_index::value_and_gradient(&x, 2);
    let sums: Vec<f64> = (0..5).map(|i| x[i] + x[i + 1]).collect();
    assert!((v - sums.iter().map(|s| s * s).sum::<f64>()).abs() < 1e-14);
    for i in 0..6 {
        let left = if i > 0 { sums[i - 1] } else { 0.0 };
        let right = if i < 5 { sums[i] } else { 0.0 };
        assert!((g[i] - 2.0 * (left + right)).abs() < 1e-14, "{i}");
    }
    let h = array_slices_by_index::hessian(&x, 2);
    assert_eq!(h[[0, 0]], 2.0);
    assert_eq!(h[[2, 2]], 4.0);
    assert_eq!(h[[2, 3]], 2.0);
    assert_eq!(h[[0, 2]], 0.0);
}

#[test]
fn array_windows_indexed_by_hand() {
    let x = array![0.3_f64, -0.2, 0.5, 0.9, -0.4];
    let want: f64 = (0..4).map(|i| (x[i + 1] - x[i]).powi(2)).sum::<f64>()
        + (0..3)
            .map(|i| x[i] * x[i + 2] + 3.0 * x[i + 1].sin())
            .sum::<f64>();
    assert!((array_windows_indexed(&x) - want).abs() < 1e-14);
    // The Hessian by hand: 2 on the first differences' tridiagonal, 1 between x_i and
    // x_{i+2}, and -3 sin x_j on the diagonal for the windows' middles.
    let h = array_windows_indexed::hessian(&x);
    for i in 0..5 {
        for j in 0..5 {
            let mut want = 0.0;
            if i == j {
                want += if i == 0 || i == 4 { 2.0 } else { 4.0 };
                if (1..=3).contains(&i) {
                    want -= 3.0 * x[i].sin();
                }
            }
            if i.abs_diff(j) == 1 {
                want -= 2.0;
            }
            if i.abs_diff(j) == 2 {
                want += 1.0;
            }
            assert!(
                (h[[i, j]] - want).abs() < 1e-12,
                "h[{i},{j}] {} vs {want}",
                h[[i, j]]
            );
        }
    }
}

#[test]
fn array_windows_of_length_zero_panic_as_ndarrays_do() {
    let x = array![0.3_f64, -0.2, 0.5];
    let w = Array1::<f64>::zeros(0);
    assert!(std::panic::catch_unwind(|| x.windows(0).into_iter().count()).is_err());
    assert!(std::panic::catch_unwind(|| array_windows_looped(&x, &w)).is_err());
    assert!(std::panic::catch_unwind(|| array_windows_looped::gradient(&x, &w)).is_err());
    // (The chain alone too.)
    let chained = |x: &Array1<f64>, w: &Array1<f64>| array_windows_chained::gradient(x, w);
    assert!(std::panic::catch_unwind(|| array_windows_chained(&x, &w)).is_err());
    assert!(std::panic::catch_unwind(|| chained(&x, &w)).is_err());
}

#[test]
fn joined_by_calls_jacobian() {
    let (a, b) = (array![0.3_f64, -0.7, 0.5], array![1.1_f64, 0.4, -0.9, 0.6]);
    let z: Vec<f64> = a.iter().chain(b.iter()).copied().collect();
    let f = |p: &[f64]| {
        joined_by_calls(
            &Array1::from(p[..3].to_vec()),
            &Array1::from(p[3..].to_vec()),
        )
        .to_vec()
    };
    // The value by hand: c = (a, sin b), m = mean(c) + (c0 + c1 + Σb)/10 + a·a.
    let c: Vec<f64> = a.iter().copied().chain(b.iter().map(|t| t.sin())).collect();
    let m = c.iter().sum::<f64>() / 7.0 + 0.1 * (c[0] + c[1] + b.sum()) + a.dot(&a);
    let (y, j) = joined_by_calls::jacobian(&a, &b);
    for i in 0..7 {
        assert!((y[i] - (c[i] - m).tanh() * c[0]).abs() < 1e-14);
    }
    common::check_jac("joined_by_calls", &j, &f, &z);
    let v = [0.3, 0.05, -0.2, 0.4, 0.1, -0.3, 0.2];
    let (_, jv) = joined_by_calls::jvp(
        &a,
        &b,
        (
            &Array1::from(v[..3].to_vec()),
            &Array1::from(v[3..].to_vec()),
        ),
    );
    common::check_jvp("joined_by_calls", &j, &jv.to_vec(), &v);
}

#[test]
fn generic_array_paths_orders() {
    let x = array![0.3_f64, -0.2, 0.5];
    let z = [0.3, -0.2, 0.5, 0.7];
    let f = |p: &[f64]| generic_array_paths(&Array1::from(p[..3].to_vec()), p[3]);
    let (v, (gx, gl)) = generic_array_paths::value_and_gradient(&x, 0.7);
    assert_eq!(v, f(&z));
    let g: Vec<f64> = gx.iter().copied().chain([gl]).collect();
    common::close("generic_array_paths", &g, &common::fd(&f, &z));
    let h = generic_array_paths::hessian(&x, 0.7);
    common::assert_hessian_matches(
        "generic_array_paths",
        |p| {
            let (a, b) = generic_array_paths::gradient(&Array1::from(p[..3].to_vec()), p[3]);
            a.iter().copied().chain([b]).collect()
        },
        &h,
        &z,
        1e-6,
    );
}

#[test]
fn joined_temporaries_orders() {
    let z = [0.1, 0.9, -0.2, 1.5];
    let f = |p: &[f64]| joined_temporaries(&Array1::from(p[..3].to_vec()), p[3]);
    let (g, gt) = joined_temporaries::gradient(&Array1::from(z[..3].to_vec()), z[3]);
    let g: Vec<f64> = g.iter().copied().chain([gt]).collect();
    common::close("joined_temporaries", &g, &common::fd(&f, &z));
    let h = joined_temporaries::hessian(&Array1::from(z[..3].to_vec()), z[3]);
    common::assert_hessian_matches(
        "joined_temporaries",
        |p| {
            let (a, b) = joined_temporaries::gradient(&Array1::from(p[..3].to_vec()), p[3]);
            a.iter().copied().chain([b]).collect()
        },
        &h,
        &z,
        1e-6,
    );
}
