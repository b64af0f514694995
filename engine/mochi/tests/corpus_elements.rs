//! Elements passed by reference to differentiable helpers: `dist(&x[i], &mu[c])` on the
//! rows of a `&[Vec<f64>]`, rows of a local matrix, `&x[i]` to a helper taking `&f64`,
//! the same container twice (`pair(&x[i], &x[j])`, also with `i == j`), a field's rows
//! (`&net.rows[i]`), `&m[i][j]`, and an ndarray element `&a[[i, j]]`. The forward sweep
//! passes the element itself; the reverse sweep lends the callee the element's
//! cotangent. Each is checked by `test_rule` (finite differences, the adjoint identity,
//! accumulation) or against finite differences of the gradient.

#![allow(clippy::needless_range_loop, clippy::ptr_arg)]

mod common;
use mochi::prelude::*;
use ndarray::{array, Array2};

#[differentiable]
fn sqdist(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        let t = a[i] - b[i];
        s += t * t;
    }
    s
}

#[differentiable]
fn sq(v: &f64) -> f64 {
    v * v
}

/// Every point's distance to every centre, the rows borrowed from two `&[Vec<f64>]`.
#[differentiable]
fn all_distances(x: &[Vec<f64>], mu: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        for c in 0..mu.len() {
            total += (-sqdist(&x[i], &mu[c])).exp();
        }
    }
    total.ln()
}

#[differentiable]
fn scaled(v: &[f64], s: f64) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for i in 0..v.len() {
        out[i] = s * v[i].sin();
    }
    out
}

/// Rows of a local matrix filled by a helper, then borrowed by another.
#[differentiable]
fn local_rows(w: &[Vec<f64>], s: f64) -> f64 {
    let k = w.len();
    let d = w[0].len();
    let mut m = vec![vec![0.0; d]; k];
    for c in 0..k {
        m[c] = scaled(&w[c], s);
    }
    let mut total = 0.0;
    for c in 0..k {
        for e in 0..k {
            total += sqdist(&m[c], &m[e]) * (c + 1) as f64;
        }
    }
    total
}

/// A scalar element borrowed as `&f64`.
#[differentiable]
fn scalar_elements(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += sq(&x[i]) * x[(i + 1) % x.len()];
    }
    s
}

#[differentiable]
fn pair(a: &f64, b: &f64) -> f64 {
    (a - b).cos() * a
}

/// The same container's elements twice in one call, `i == j` included.
#[differentiable]
fn same_container_twice(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        for j in 0..x.len() {
            s += pair(&x[i], &x[j]);
        }
    }
    s
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Net {
    rows: Vec<Vec<f64>>,
    bias: f64,
}

#[differentiable]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// The rows of a field.
#[differentiable]
fn field_rows(net: &Net, x: &[f64]) -> f64 {
    let mut s = net.bias;
    for i in 0..net.rows.len() {
        s += dot(&net.rows[i], x).tanh();
    }
    s
}

/// `&m[i][j]` and an index that is computed (saved for the reverse sweep).
#[differentiable]
fn nested_elements(m: &[Vec<f64>]) -> f64 {
    let mut s = 0.0;
    for i in 0..m.len() {
        for j in 0..m[i].len() {
            s += sq(&m[i][j]) * sq(&m[(i + 1) % m.len()][j]);
        }
    }
    s
}

/// An ndarray element borrowed as `&f64`.
#[differentiable]
fn array_elements(a: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            s += sq(&a[[i, j]]) * (i + 2 * j + 1) as f64;
        }
    }
    s
}

/// An element borrowed inside a branch (the callee's pullback boxed there).
#[differentiable]
fn element_in_branch(x: &[Vec<f64>], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        if y[i] > 0.0 {
            s += dot(&x[i], y);
        } else {
            s -= sqdist(&x[i], y);
        }
    }
    s
}

mod checked {
    use crate::check;
    use ndarray::array;

    fn rows() -> Vec<Vec<f64>> {
        vec![
            vec![0.5, -0.3, 0.2],
            vec![1.1, 0.4, -0.7],
            vec![-0.2, 0.9, 0.3],
        ]
    }

    check!(
        all_distances,
        (rows(), vec![vec![0.1_f64, 0.2, -0.1], vec![0.7, -0.5, 0.4]]),
        |a| (&a.0, &a.1)
    );
    check!(local_rows, (rows(), 0.7_f64), |a| (&a.0, a.1));
    check!(scalar_elements, (vec![0.5_f64, -1.2, 0.3, 0.8],), |a| (&a
        .0));
    check!(same_container_twice, (vec![0.5_f64, -1.2, 0.3],), |a| (&a
        .0));
    check!(
        field_rows,
        (
            super::Net {
                rows: rows(),
                bias: 0.3
            },
            vec![0.3_f64, -0.2, 0.5]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        nested_elements,
        (vec![vec![0.5_f64, -0.3], vec![1.1, 0.4], vec![0.2, 0.6]],),
        |a| (&a.0)
    );
    check!(
        array_elements,
        (array![[0.5_f64, -0.3, 0.2], [1.1, 0.4, -0.7]],),
        |a| (&a.0)
    );
    check!(element_in_branch, (rows(), vec![0.3_f64, -0.2, 0.5]), |a| (
        &a.0, &a.1
    ));
}

/// The gradient through element arguments equals the gradient with the rows copied
/// into locals first (the form that needs no element argument).
#[differentiable]
fn all_distances_copied(x: &[Vec<f64>], mu: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        for c in 0..mu.len() {
            let xi = x[i].clone();
            let mc = mu[c].clone();
            total += (-sqdist(&xi, &mc)).exp();
        }
    }
    total.ln()
}

#[test]
fn element_arguments_match_copied_rows() {
    let x = vec![vec![0.5, -0.3, 0.2], vec![1.1, 0.4, -0.7]];
    let mu = vec![
        vec![0.1, 0.2, -0.1],
        vec![0.7, -0.5, 0.4],
        vec![0.0, 0.3, 0.9],
    ];
    let (y1, (dx1, dmu1)) = all_distances::value_and_gradient(&x, &mu);
    let (y2, (dx2, dmu2)) = all_distances_copied::value_and_gradient(&x, &mu);
    assert!((y1 - y2).abs() < 1e-14);
    let flat = |v: &Vec<Vec<f64>>| v.iter().flatten().copied().collect::<Vec<f64>>();
    for (a, b) in flat(&dx1)
        .iter()
        .chain(&flat(&dmu1))
        .zip(flat(&dx2).iter().chain(&flat(&dmu2)))
    {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    assert!(flat(&dx1).iter().any(|v| v.abs() > 1e-3));
}

/// Second derivatives through element arguments: the Hessian of
/// `same_container_twice` and of `scalar_elements` against central differences of
/// their gradients.
#[test]
fn element_arguments_have_hessians() {
    type Grad = fn(&[f64]) -> Vec<f64>;
    type Hess = fn(&[f64]) -> Array2<f64>;
    let cases: [(Grad, Hess); 2] = [
        (
            |x| same_container_twice::gradient(x),
            |x| same_container_twice::hessian(x),
        ),
        (
            |x| scalar_elements::gradient(x),
            |x| scalar_elements::hessian(x),
        ),
    ];
    let x = [0.5, -1.2, 0.3, 0.8];
    for (grad, hess) in cases {
        common::assert_hessian_matches("element arguments", grad, &hess(&x), &x, 1e-6);
    }
    // and an array element: the gradient of `array_elements` is 2·a·weight
    let a = array![[0.5, -0.3, 0.2], [1.1, 0.4, -0.7]];
    let g = array_elements::gradient(&a);
    for ((i, j), v) in a.indexed_iter() {
        let want = 2.0 * v * (i + 2 * j + 1) as f64;
        assert!((g[[i, j]] - want).abs() < 1e-12, "{} vs {want}", g[[i, j]]);
    }
}

/// A destructuring assignment updates two variables from their old values.
#[differentiable]
fn tuple_assignment(a0: f64, b0: f64) -> f64 {
    let (mut a, mut b) = (a0, b0);
    for _ in 0..4 {
        (a, b) = (b, a + 0.5 * b * a);
    }
    b
}

/// A destructuring assignment into elements and a dropped part.
#[differentiable]
fn tuple_assignment_elements(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let mut s = 0.0;
    for i in 1..v.len() {
        (v[i - 1], v[i], _) = (v[i], v[i - 1] * v[i], s);
        s += v[i - 1];
    }
    s + v[v.len() - 1]
}

/// Simpson's rule written with an inclusive range as a chain's source.
#[differentiable]
fn simpson_inclusive(a: f64, b: f64) -> f64 {
    let n = 6;
    let h = (b - a) / n as f64;
    (0..=n)
        .map(|i| {
            let w = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * (a + i as f64 * h).sin()
        })
        .sum::<f64>()
        * h
        / 3.0
}

/// Indices collected from a range whose bound is a length: a `Vec<usize>`, no
/// derivative.
#[differentiable]
fn collected_indices(x: &[f64]) -> f64 {
    let idx: Vec<usize> = (0..x.len()).collect();
    let mut s = 0.0;
    for &i in idx.iter().rev() {
        s += x[i] * (i + 1) as f64;
    }
    s * x[idx[0]]
}

mod checked_idioms {
    use crate::check;

    check!(tuple_assignment, (0.7_f64, 0.3_f64), |a| (a.0, a.1));
    check!(
        tuple_assignment_elements,
        (vec![0.5_f64, -1.2, 0.3, 0.8],),
        |a| (&a.0)
    );
    check!(simpson_inclusive, (0.2_f64, 1.3_f64), |a| (a.0, a.1));
    check!(collected_indices, (vec![0.5_f64, -1.2, 0.3],), |a| (&a.0));
}

/// The inclusive range covers its end: Simpson's rule on `sin` over `[a, b]` is close to
/// `cos a − cos b`, and its derivative in `b` close to `sin b`.
#[test]
fn inclusive_range_covers_its_end() {
    let (y, (da, db)) = simpson_inclusive::value_and_gradient(0.2, 1.3);
    assert!((y - (0.2f64.cos() - 1.3f64.cos())).abs() < 1e-4, "{y}");
    assert!((db - 1.3f64.sin()).abs() < 1e-3, "{db}");
    assert!((da + 0.2f64.sin()).abs() < 1e-3, "{da}");
    let h = tuple_assignment::hessian(0.7, 0.3);
    let step = 1e-5;
    let g = |a: f64, b: f64| {
        let (ga, gb) = tuple_assignment::gradient(a, b);
        [ga, gb]
    };
    for j in 0..2 {
        let (mut up, mut down) = ([0.7, 0.3], [0.7, 0.3]);
        up[j] += step;
        down[j] -= step;
        let (gu, gd) = (g(up[0], up[1]), g(down[0], down[1]));
        for i in 0..2 {
            let fd = (gu[i] - gd[i]) / (2.0 * step);
            assert!(
                (h[[i, j]] - fd).abs() < 1e-6 * (1.0 + fd.abs()),
                "{} vs {fd}",
                h[[i, j]]
            );
        }
    }
}

/// Writes `z = (x₀, x₁y₀, x₂y₁, …)` into a buffer the caller owns.
#[differentiable]
fn rhs_into(x: &[f64], y: &[f64], z: &mut [f64]) {
    z[0] = x[0];
    for i in 1..x.len() {
        z[i] = x[i] * y[i - 1];
    }
}

/// Buffers passed `&mut` to a helper and read by index between the calls (the kept
/// shape follows each call).
#[differentiable]
fn midpoint_steps(x: &[f64], steps: usize) -> f64 {
    let n = x.len();
    let h = 1.0 / steps as f64;
    let mut k = vec![0.0; n];
    let mut tmp = vec![0.0; n];
    let mut y = vec![0.0; n];
    for _ in 0..steps {
        rhs_into(x, &y, &mut k);
        for i in 0..n {
            tmp[i] = y[i] + 0.5 * h * k[i];
        }
        rhs_into(x, &tmp, &mut k);
        for i in 0..n {
            y[i] += h * k[i];
        }
    }
    y[n - 1] * y[0]
}

#[differentiable]
fn regrow(v: &mut Vec<f64>, a: f64) {
    let mut w = vec![0.0; 3];
    for i in 0..3 {
        w[i] = a * (i + 1) as f64;
    }
    *v = w;
}

/// A helper that changes the length of the buffer it is given: reads before the call
/// see four elements, reads after it three.
#[differentiable]
fn buffer_regrown(x: f64) -> f64 {
    let mut buf = vec![0.0; 4];
    buf[3] = x * x;
    let s = buf[3] * 2.0 + buf[0];
    regrow(&mut buf, x);
    s + buf[2] * buf[1]
}

mod checked_buffers {
    use crate::check;

    check!(
        midpoint_steps,
        (vec![0.9_f64, 1.1, 0.7, 1.3], 3_usize),
        |a| (&a.0, a.1)
    );
    check!(buffer_regrown, (0.7_f64,), |a| (a.0));
}

#[test]
fn a_regrown_buffer_has_the_right_gradient() {
    // s = 2x², then buf = (x, 2x, 3x): y = 2x² + 6x², dy/dx = 16x
    let g = buffer_regrown::gradient(0.7);
    assert!((g - 16.0 * 0.7).abs() < 1e-12, "{g}");
}

/// `for (o, xi) in out.iter_mut().zip(x)`: a slice zipped bare, as `.zip(x.iter())`.
#[differentiable]
fn scale_into(out: &mut [f64], x: &[f64], a: f64) {
    for (o, xi) in out.iter_mut().zip(x) {
        *o = a * xi.sin();
    }
}

#[differentiable]
fn uses_scale_into(x: &[f64], a: f64) -> f64 {
    let mut out = vec![0.0; x.len()];
    scale_into(&mut out, x, a);
    let mut s = 0.0;
    for (v, w) in out.iter().zip(x) {
        s += v * w;
    }
    s
}

mod checked_zip {
    use crate::check;

    check!(uses_scale_into, (vec![0.5_f64, -1.2, 0.3], 0.8_f64), |a| (
        &a.0, a.1
    ));
}

/// `let [a, b] = *x;` of an array behind a reference (the elements are copies).
#[differentiable]
fn destructured_array(x: &[f64; 3]) -> f64 {
    let [a, b, c] = *x;
    let (p, q) = (a * b, c.sin());
    p * q + a
}

#[test]
fn a_destructured_array_has_its_gradient() {
    let x = [0.5, -1.2, 0.3];
    let g = destructured_array::gradient(&x);
    let want = [
        x[1] * x[2].sin() + 1.0,
        x[0] * x[2].sin(),
        x[0] * x[1] * x[2].cos(),
    ];
    for i in 0..3 {
        assert!((g[i] - want[i]).abs() < 1e-12, "{g:?} vs {want:?}");
    }
}
