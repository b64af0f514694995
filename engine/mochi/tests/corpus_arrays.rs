//! ndarray code under `#[differentiable]`: reductions, products, elementwise maths,
//! closures in `mapv`, views, linear algebra.

#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

mod common;
use mochi::prelude::*;
use ndarray::{array, s, Array1, Array2, ArrayView1, ArrayView2, Axis, CowArray, Ix1};

#[differentiable]
fn array_sum(x: &Array1<f64>) -> f64 {
    x.sum()
}

#[differentiable]
fn quadratic_form(a: &Array2<f64>, x: &Array1<f64>) -> f64 {
    let ax = a.dot(x);
    x.dot(&ax)
}

#[differentiable]
fn elementwise(x: &Array1<f64>, y: &Array1<f64>) -> f64 {
    let z = x * y + x - y / 2.0;
    (z.clone() * z).sum()
}

#[differentiable]
fn map_sin_cos_exp(x: &Array2<f64>) -> f64 {
    x.mapv(|v| v.exp().cos().sin()).sum()
}

#[differentiable]
fn mapv_capturing(x: &Array1<f64>, a: f64) -> f64 {
    x.mapv(|v| (v * a).tanh()).sum()
}

#[differentiable]
fn index_loop(m: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..m.nrows() {
        for j in 0..m.ncols() {
            s += m[[i, j]] * m[[j, i]];
        }
    }
    s
}

#[differentiable]
fn transpose_matmul(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let c = a.t().dot(b);
    c.sum()
}

#[differentiable]
fn kron_sum(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    ndarray::linalg::kron(a, b).sum()
}

#[differentiable]
fn cholesky_logdet(k: &Array2<f64>) -> f64 {
    let l = mochi::linalg::cholesky(k).expect("positive definite");
    mochi::linalg::logdet_cholesky(&l)
}

#[differentiable]
fn view_argument(x: ArrayView1<f64>, w: ArrayView1<'_, f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * w[i] * w[i];
    }
    s
}

#[differentiable]
fn write_local_matrix(x: &Array1<f64>) -> f64 {
    let n = x.len();
    let mut m = Array2::<f64>::zeros((n, n));
    for i in 0..n {
        for j in 0..n {
            m[[i, j]] = x[i] * x[j] + 1.0;
        }
    }
    m.sum()
}

#[differentiable]
fn zip_map_collect(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    ndarray::Zip::from(a)
        .and(b)
        .map_collect(|&x, &y| x * y.exp())
        .sum()
}

#[differentiable]
fn fold_over_array(x: &Array1<f64>, c: f64) -> f64 {
    x.fold(c, |acc, v| acc * 0.9 + v * v)
}

#[differentiable]
fn broadcast_sin_cos_exp(x: &Array2<f64>) -> f64 {
    x.mapv(f64::exp).mapv(f64::cos).mapv(f64::sin).sum()
}

#[differentiable]
fn f32_arrays(x: &Array1<f32>, a: f32) -> f32 {
    (x * a).mapv(|v| v.sin()).sum()
}

#[differentiable]
fn log_joint(theta: &[f64], data: &Array1<f64>) -> f64 {
    // μ on (0.1, 10) through a scaled logistic, σ > 0 through exp; Normal prior on μ,
    // LogNormal observations.
    let (mu, log_jac_mu) = mochi::stats::to_interval(theta[0], 0.1, 10.0);
    let (sigma, log_jac_sigma) = mochi::stats::to_positive(theta[1]);
    let prior = mochi::stats::normal_logpdf(mu, 1.0, 2.0);
    let lik = mochi::stats::lognormal_logpdf_sum(data, mu, sigma);
    prior + lik + log_jac_mu + log_jac_sigma
}

// Structured cotangents: `sum`, `mean` and `sum_axis` leave broadcast forms, which
// flow through `+`, scaling, transposition and copies, and are written out where an
// element is read or overwritten.

#[differentiable]
fn sum_then_overwrite(x: &Array2<f64>) -> f64 {
    let mut z = x.to_owned();
    let before = z.sum();
    z[[0, 1]] = before * 2.0;
    z.sum() + before
}

#[differentiable]
fn element_read_after_sum(x: &Array2<f64>) -> f64 {
    let a = x[[1, 0]];
    let t = (x * 2.0).sum();
    a * t
}

#[differentiable]
fn axis_sums_and_means(x: &Array2<f64>, w: &Array1<f64>) -> f64 {
    let col = x.sum_axis(Axis(0));
    let scaled = &col * w;
    let total = x.mean().unwrap() * 3.0;
    let y = x + 1.0;
    scaled.sum() + total + y.t().sum() + (-&y).sum()
}

#[differentiable]
fn sum_of_shifted_kron(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let k = ndarray::linalg::kron(a, b);
    let shifted = &k - 0.5;
    shifted.sum() + (k * 2.0).mean().unwrap()
}

/// Copy-on-write arrays and views of two dimensions, their lifetimes hidden by the
/// aliases: the tangent types are named without the macro knowing the aliases.
#[differentiable]
fn hidden_lifetimes(x: CowArray<f64, Ix1>, m: ArrayView2<f64>) -> f64 {
    let y = m.dot(&x);
    (&y * &y).sum() + x.sum()
}

/// Shape queries bound to names: rule calls with zero-sized pullbacks (the rule crate
/// declares them), so `n` is counted active and costs nothing; ranges over them stay
/// as written.
#[differentiable]
fn shape_queries(x: &Array2<f64>, w: &Array1<f64>) -> f64 {
    let n = x.dim();
    let len = w.len_of(Axis(0));
    let mut s = 0.0;
    for i in 0..n.0 {
        for j in 0..n.1.min(len) {
            s += x[[i, j]] * w[j];
        }
    }
    let (rows, _) = (x.nrows(), x.ncols());
    s * (x.ndim() as f64) + x[[rows - 1, 0]]
}

/// A shape query passed to a constructor (`Array2::zeros(x.dim())`) and into `s![..]`.
#[differentiable]
fn shape_into_constructor_and_slice(x: &Array2<f64>) -> f64 {
    let mut y = Array2::zeros(x.dim());
    for i in 0..x.nrows() {
        for j in 0..x.ncols() {
            y[[i, j]] = x[[i, j]].exp();
        }
    }
    let (m, n) = (x.nrows() / 2, x.ncols());
    let block = y.slice(s![0..m, 1..n]);
    let last = y.slice(s![.., n - 1]);
    block.sum() + last.sum() + Array1::ones(x.raw_dim()[0]).dot(&x.column(0))
}

/// `ndarray::concatenate` and `stack` by path: the rule modules reached through the
/// path mirror.
#[differentiable]
fn joined_by_path(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let c = ndarray::concatenate(Axis(0), &[a.view(), b.view()]).unwrap();
    let d = ndarray::stack(Axis(1), &[a.view(), b.view()]).unwrap();
    (&c * &c).sum() + d.sum()
}

mod checks {
    use super::*;
    use crate::check;
    #[test]
    fn hidden_lifetimes() {
        mochi::testing::test_rule(
            (array![0.3_f64, -1.2], array![[0.5_f64, 0.1], [-0.4, 0.9]]),
            |a| super::hidden_lifetimes(CowArray::from(a.0.view()), a.1.view()),
            |a| super::hidden_lifetimes::rrule(CowArray::from(a.0.view()), a.1.view()),
        );
    }
    check!(
        shape_queries,
        (
            array![[0.1_f64, -0.3, 0.7], [0.5, 0.2, -1.0]],
            array![0.4_f64, -1.1]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        shape_into_constructor_and_slice,
        (array![
            [0.1_f64, -0.3, 0.7],
            [0.5, 0.2, -1.0],
            [0.3, 0.9, -0.2],
            [1.1, 0.0, 0.6]
        ],),
        |a| (&a.0)
    );
    check!(
        joined_by_path,
        (
            array![[0.1_f64, -0.3], [0.5, 0.2]],
            array![[0.7_f64, 0.4], [-1.0, 0.3]]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        sum_then_overwrite,
        (array![[0.1_f64, -0.3, 0.7], [0.5, 0.2, -1.0]],),
        |a| (&a.0)
    );
    check!(
        element_read_after_sum,
        (array![[0.1_f64, -0.3], [0.5, 0.2], [1.5, -0.4]],),
        |a| (&a.0)
    );
    check!(
        axis_sums_and_means,
        (
            array![[0.1_f64, -0.3, 0.7], [0.5, 0.2, -1.0]],
            array![0.3_f64, -1.2, 2.0]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        sum_of_shifted_kron,
        (
            array![[0.1_f64, -0.3], [0.5, 0.2]],
            array![[1.0_f64, 2.0, 0.5], [0.3, -0.2, 0.1]]
        ),
        |a| (&a.0, &a.1)
    );
    #[test]
    fn gradients_of_structured_cotangents_are_dense() {
        let x = array![[0.1_f64, -0.3, 0.7], [0.5, 0.2, -1.0]];
        let w = array![0.3_f64, -1.2, 2.0];
        let (_, (dx, dw)) = super::axis_sums_and_means::value_and_gradient(&x, &w);
        assert_eq!(dx.shape(), &[2, 3]);
        assert_eq!(dw.shape(), &[3]);
        // ∂/∂xᵢⱼ = wⱼ + 3/6 + 1 − 1
        for ((_, j), v) in dx.indexed_iter() {
            assert!((v - (w[j] + 0.5)).abs() < 1e-12, "{dx}");
        }
        // the shadow-buffer form densifies a structural zero it is given
        let (mut sx, mut sw) = (Array2::zeros((0, 0)), Array1::zeros(0));
        super::axis_sums_and_means::gradient_into(&x, &w, (&mut sx, &mut sw));
        assert_eq!(sx, dx);
        assert_eq!(sw, dw);
    }
    check!(array_sum, (array![1.0_f64, -2.0, 0.5],), |a| (&a.0));
    check!(
        quadratic_form,
        (array![[2.0_f64, 0.3], [0.1, 1.0]], array![0.5_f64, -1.2]),
        |a| (&a.0, &a.1)
    );
    check!(
        elementwise,
        (array![1.0_f64, -2.0, 0.5], array![0.3_f64, 0.7, -1.1]),
        |a| (&a.0, &a.1)
    );
    check!(
        map_sin_cos_exp,
        (array![[0.1_f64, -0.3], [0.5, 0.2]],),
        |a| (&a.0)
    );
    check!(mapv_capturing, (array![1.0_f64, -2.0, 0.5], 0.7_f64), |a| (
        &a.0, a.1
    ));
    check!(index_loop, (array![[0.1_f64, -0.3], [0.5, 0.2]],), |a| (&a
        .0));
    check!(
        transpose_matmul,
        (
            array![[0.1_f64, -0.3, 0.4], [0.5, 0.2, 0.9]],
            array![[1.0_f64], [2.0]]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        kron_sum,
        (
            array![[0.1_f64, -0.3], [0.5, 0.2]],
            array![[1.0_f64, 2.0, 0.5]]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        cholesky_logdet,
        (array![
            [2.0_f64, 0.3, 0.1],
            [0.3, 1.5, 0.2],
            [0.1, 0.2, 1.0]
        ],),
        |a| (&a.0)
    );
    #[test]
    fn views_of_any_layout() {
        let x = array![1.0_f64, -2.0, 0.5, 0.25];
        let w = array![[0.3_f64, 0.7], [-1.1, 0.2], [0.4, 0.9], [1.5, -0.5]];
        // a strided column view
        mochi::testing::test_rule(
            (x.clone(), w.column(1).to_owned()),
            |a| super::view_argument(a.0.view(), a.1.view()),
            |a| super::view_argument::rrule(a.0.view(), a.1.view()),
        );
        let (_, (dx, dw)) = super::view_argument::value_and_gradient(x.view(), w.column(1));
        // ∂/∂xᵢ = wᵢ², ∂/∂wᵢ = 2 xᵢ wᵢ
        assert_eq!(dx[2], 0.9 * 0.9);
        assert_eq!(dw[0], 2.0 * 1.0 * 0.7);
    }
    check!(write_local_matrix, (array![1.0_f64, -2.0, 0.5],), |a| (&a
        .0));
    check!(
        zip_map_collect,
        (array![1.0_f64, -2.0, 0.5], array![0.3_f64, 0.7, -1.1]),
        |a| (&a.0, &a.1)
    );
    check!(
        fold_over_array,
        (array![1.0_f64, -2.0, 0.5], 0.3_f64),
        |a| (&a.0, a.1)
    );
    check!(
        broadcast_sin_cos_exp,
        (array![[0.1_f64, -0.3], [0.5, 0.2]],),
        |a| (&a.0)
    );
    #[test]
    fn f32_arrays() {
        mochi::testing::RuleTest::new(
            (array![1.0_f32, -2.0, 0.5], 0.7_f32),
            |a| super::f32_arrays(&a.0, a.1),
            |a| super::f32_arrays::rrule(&a.0, a.1),
        )
        .tolerance(1e-3, 1e-4)
        .run();
    }
    check!(
        log_joint,
        (vec![0.3_f64, -0.4], array![1.2_f64, 0.7, 2.5, 1.9]),
        |a| (&a.0, &a.1)
    );
}

/// 0-dimensional arrays (`sum_axis` of a vector, `mean_axis(..).unwrap()`), read by
/// `into_scalar()` and by `s[()]`: `into_scalar` had no rule, and the structural zero
/// of a 0-dimensional cotangent (an empty array, which that rank cannot be) panicked.
#[differentiable]
fn zero_dimensional(a: &Array1<f64>, m: &Array2<f64>) -> f64 {
    let s = a.sum_axis(Axis(0));
    let t = a.mapv(|v| v * v).sum_axis(Axis(0)).into_scalar();
    s[()] * s[()]
        + a.mean_axis(Axis(0)).unwrap().into_scalar()
        + t
        + m.sum_axis(Axis(1)).sum_axis(Axis(0)).into_scalar().sin()
}

mod checked_zero_dimensional {
    use crate::check;
    use ndarray::array;

    check!(
        zero_dimensional,
        (
            array![1.0_f64, 2.0, -0.5],
            array![[1.0_f64, 2.0], [0.5, -1.0]]
        ),
        |a| (&a.0, &a.1)
    );
}

/// `Zip::indexed`: the closure's index (`i` of a vector, `(i, j)` of a matrix) first,
/// in `for_each` writing a captured sum or a `&mut` operand, and in `fold`.
#[differentiable]
fn zip_indexed(v: &Array1<f64>, m: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    ndarray::Zip::indexed(v).for_each(|i, &x| s += x * x * (i + 1) as f64);
    ndarray::Zip::indexed(m).for_each(|(i, j), &x| s += x * (i + 2 * j) as f64);
    let mut out = Array2::<f64>::zeros(m.raw_dim());
    ndarray::Zip::indexed(&mut out)
        .and(m)
        .for_each(|(i, _j), o, &x| *o = x.sin() * i as f64);
    s + out.sum()
        + ndarray::Zip::indexed(m).fold(0.0, |acc, (i, j), &x| acc + x * x * (i * j) as f64)
}

#[test]
fn zip_indexed_gradients() {
    let v = ndarray::array![0.3_f64, -0.7, 1.1];
    let m = ndarray::array![[0.3_f64, 0.7], [1.1, -0.4], [0.2, 0.9]];
    mochi::testing::test_rule(
        (v.clone(), m.clone()),
        |t| zip_indexed(&t.0, &t.1),
        |t| zip_indexed::rrule(&t.0, &t.1),
    );
    // By hand: ∂/∂v_i = 2 v_i (i + 1); ∂/∂m_ij = (i + 2j) + i cos(m_ij) + 2 m_ij i j.
    let (dv, dm) = zip_indexed::gradient(&v, &m);
    for i in 0..3 {
        assert!((dv[i] - 2.0 * v[i] * (i + 1) as f64).abs() < 1e-12);
        for j in 0..2 {
            let want =
                (i + 2 * j) as f64 + i as f64 * m[(i, j)].cos() + 2.0 * m[(i, j)] * (i * j) as f64;
            assert!((dm[(i, j)] - want).abs() < 1e-12, "{dm:?}");
        }
    }
}

/// `x.windows(2).into_iter()` of an `Array1` (ndarray's windows are a producer, so the
/// `into_iter()` is needed) in a chain and a `for` loop: "no rule for `windows`" before.
#[differentiable]
fn array_windows(x: &Array1<f64>) -> f64 {
    let tv: f64 = x
        .windows(2)
        .into_iter()
        .map(|w| (w[1] - w[0]).powi(2))
        .sum();
    let mut trap = 0.0;
    for w in x.windows(2).into_iter() {
        trap += 0.5 * (w[0] + w[1]).sin();
    }
    tv + trap
}

#[test]
fn array_windows_gradients() {
    let x = array![0.3_f64, 1.2, -0.7, 0.5];
    mochi::testing::test_rule(
        (x.clone(),),
        |t| array_windows(&t.0),
        |t| array_windows::rrule(&t.0),
    );
    // ∂/∂x_k = 2(x_k − x_{k−1}) − 2(x_{k+1} − x_k) + ½cos(x_{k−1} + x_k) + ½cos(x_k + x_{k+1}),
    // the terms whose neighbour exists.
    let g = array_windows::gradient(&x);
    for k in 0..4 {
        let mut want = 0.0;
        if k > 0 {
            want += 2.0 * (x[k] - x[k - 1]) + 0.5 * (x[k - 1] + x[k]).cos();
        }
        if k < 3 {
            want += -2.0 * (x[k + 1] - x[k]) + 0.5 * (x[k] + x[k + 1]).cos();
        }
        assert!((g[k] - want).abs() < 1e-12, "{g:?}");
    }
}

/// A chain collected into an `Array1` through the `let`'s type (`let y: Array1<f64> =
/// chain.collect();`): "no rule for `collect`" before (the turbofish form worked).
#[differentiable]
fn collected_by_type(x: &Array1<f64>) -> f64 {
    let y: Array1<f64> = x.iter().map(|v| v.sin()).collect();
    let z: ndarray::Array<f64, Ix1> = x.iter().zip(y.iter()).map(|(a, b)| a * b).collect();
    y.sum() * x[0] + z.sum()
}

#[test]
fn collected_by_type_gradients() {
    let x = array![0.3_f64, 1.2, -0.5];
    mochi::testing::test_rule(
        (x.clone(),),
        |t| collected_by_type(&t.0),
        |t| collected_by_type::rrule(&t.0),
    );
    // ∂/∂x_k = x0 cos x_k + [k = 0] Σ sin + sin x_k + x_k cos x_k.
    let g = collected_by_type::gradient(&x);
    let s: f64 = x.iter().map(|v| v.sin()).sum();
    for k in 0..3 {
        let mut want = x[0] * x[k].cos() + x[k].sin() + x[k] * x[k].cos();
        if k == 0 {
            want += s;
        }
        assert!((g[k] - want).abs() < 1e-12, "{g:?}");
    }
}

/// Chains over an array local whose type the macro does not see (made by `dot`, `t()`,
/// `mapv`), of two dimensions: `s.iter().cloned().fold(f64::NEG_INFINITY, f64::max)`,
/// `reduce`, `zip`, `enumerate`, `max_by`, a fold carrying its accumulator. Before, an
/// index loop read `s[k]` of the matrix: "`usize: NdIndex<Dim<[usize; 2]>>` is not
/// satisfied" at the attribute.
#[differentiable]
fn chains_over_matrix_locals(x: &Array2<f64>) -> f64 {
    let s = x.dot(&x.t());
    let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let lo = s.iter().copied().reduce(f64::min).unwrap();
    let lse = s.iter().map(|v| (v - m).exp()).sum::<f64>().ln() + m;
    let t = s.mapv(|v| v.sin());
    let dot = s.iter().zip(t.iter()).map(|(a, b)| a * b).sum::<f64>();
    let top = *s.iter().max_by(|a, b| a.total_cmp(b)).unwrap();
    lse + dot + lo * top
}

/// A transposed view's elements in `iter()`'s (logical) order, weighted by position and
/// folded with a carried accumulator, so that any other order gives another value.
#[differentiable]
fn ordered_chain_over_transpose(x: &Array2<f64>) -> f64 {
    let s = x.t();
    let w = s
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64 + 1.0) * v * v)
        .fold(0.0, |a, b| a * 0.5 + b);
    w + x.iter().cloned().fold(1.0, |a, v| a * 0.5 + v.sin())
}

mod checked_matrix_locals {
    use crate::check;
    use ndarray::array;

    check!(
        chains_over_matrix_locals,
        (array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]],),
        |a| (&a.0)
    );
    check!(
        ordered_chain_over_transpose,
        (array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]],),
        |a| (&a.0)
    );

    #[test]
    fn transpose_order_by_hand() {
        // xᵀ's logical order is x's columns: x[0,0], x[1,0], x[0,1], x[1,1], ...;
        // w = Σ_k 0.5^(5-k) (k + 1) v_k², so ∂w/∂v_k = 0.5^(5-k) (k + 1) 2 v_k; and the
        // second fold gives ∂/∂x_k = 0.5^(5-k) cos x_k in x's own (row) order.
        let x = array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]];
        let g = super::ordered_chain_over_transpose::gradient(&x);
        for (k, (i, j)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
            .into_iter()
            .enumerate()
        {
            let r = 3 * i + j;
            let want = 0.5_f64.powi(5 - k as i32) * (k as f64 + 1.0) * 2.0 * x[(i, j)]
                + 0.5_f64.powi(5 - r as i32) * x[(i, j)].cos();
            assert!(
                (g[(i, j)] - want).abs() < 1e-12,
                "{g:?} at ({i}, {j}): {want}"
            );
        }
    }

    #[cfg(feature = "higher-order")]
    #[test]
    fn matrix_local_hessian_against_gradient_differences() {
        let x = array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]];
        let h = super::chains_over_matrix_locals::hessian(&x);
        let eps = 1e-6;
        for a in 0..6 {
            let mut up = x.clone();
            let mut dn = x.clone();
            up[(a / 3, a % 3)] += eps;
            dn[(a / 3, a % 3)] -= eps;
            let gu = super::chains_over_matrix_locals::gradient(&up);
            let gd = super::chains_over_matrix_locals::gradient(&dn);
            for b in 0..6 {
                let fd = (gu[(b / 3, b % 3)] - gd[(b / 3, b % 3)]) / (2.0 * eps);
                let got = h[[a, b]];
                assert!(
                    (got - fd).abs() < 1e-5 * (1.0 + fd.abs()),
                    "H[{a}][{b}] = {got}, differences {fd}"
                );
            }
        }
    }
}

/// `lanes(axis)` of a matrix walked by `for` and by a chain: the lanes along axis 1 are
/// the rows, along axis 0 the columns. Before: "this `for` over a differentiable
/// sequence … is not one the derivation writes as an index loop".
#[differentiable]
fn lanes_of_matrix(x: &Array2<f64>) -> f64 {
    let m = x.mapv(|v| v * v + v);
    let mut s = 0.0;
    for (i, lane) in m.lanes(Axis(1)).into_iter().enumerate() {
        s += (i as f64 + 1.0) * lane.sum().powi(2);
    }
    s + m
        .lanes(Axis(0))
        .into_iter()
        .map(|c| c[0] * c[1])
        .sum::<f64>()
}

mod checked_lanes {
    use crate::check;
    use ndarray::array;

    check!(
        lanes_of_matrix,
        (array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]],),
        |a| (&a.0)
    );

    #[test]
    fn lanes_by_hand() {
        // s = Σ_i (i + 1) (Σ_j m_ij)² + Σ_j m_0j m_1j with m = x² + x, dm/dx = 2x + 1.
        let x = array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]];
        let m = x.mapv(|v| v * v + v);
        let g = super::lanes_of_matrix::gradient(&x);
        for i in 0..2 {
            let row: f64 = m.row(i).sum();
            for j in 0..3 {
                let other = m[(1 - i, j)];
                let want = (2.0 * (i as f64 + 1.0) * row + other) * (2.0 * x[(i, j)] + 1.0);
                assert!(
                    (g[(i, j)] - want).abs() < 1e-12,
                    "{g:?} at ({i}, {j}): {want}"
                );
            }
        }
    }
}

/// `fold_axis`/`map_axis` of a view written in place (`m.t().fold_axis(..)`): the view
/// bound first, then reduced lane by lane. Before: "no rule for `fold_axis`" on
/// `ArrayView2`.
#[differentiable]
fn folds_of_transpose(x: &Array2<f64>) -> f64 {
    let m = x.mapv(|v| v * v);
    let h = m.t().fold_axis(Axis(0), 0.0, |&acc, &v| 0.5 * acc + v);
    let l = m.t().map_axis(Axis(1), |r| r[0] - 2.0 * r[1]);
    h[1] * 2.0 + l.dot(&l)
}

mod checked_folds_of_transpose {
    use crate::check;
    use ndarray::array;

    check!(
        folds_of_transpose,
        (array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]],),
        |a| (&a.0)
    );

    #[test]
    fn by_hand() {
        // mᵀ is 3×2; folding axis 0 of mᵀ runs down its columns, that is along the
        // rows of m: h_1 = ((0.5·0 + m₁₀)·0.5 + m₁₁)·0.5 + m₁₂. l_j = m₀ⱼ − 2m₁ⱼ.
        let x = array![[0.3_f64, -0.5, 0.8], [0.45, 0.2, -0.35]];
        let m = x.mapv(|v| v * v);
        let l: Vec<f64> = (0..3).map(|j| m[(0, j)] - 2.0 * m[(1, j)]).collect();
        let h1 = (m[(1, 0)] * 0.5 + m[(1, 1)]) * 0.5 + m[(1, 2)];
        let want = 2.0 * h1 + l.iter().map(|v| v * v).sum::<f64>();
        let (y, g) = super::folds_of_transpose::value_and_gradient(&x);
        assert!((y - want).abs() < 1e-12, "{y} against {want}");
        for j in 0..3 {
            let w1 = 2.0 * [0.25, 0.5, 1.0][j] - 4.0 * l[j];
            let w0 = 2.0 * l[j];
            for (i, w) in [(0, w0), (1, w1)] {
                let want = w * 2.0 * x[(i, j)];
                assert!(
                    (g[(i, j)] - want).abs() < 1e-12,
                    "({i}, {j}): {} against {want}",
                    g[(i, j)]
                );
            }
        }
    }
}
