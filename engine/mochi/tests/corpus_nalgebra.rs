//! nalgebra code under `#[differentiable]`, written as nalgebra users write it: state
//! estimation, robotics, small networks, geometry, Gaussian models.

#![allow(clippy::needless_range_loop)]

mod common;
use mochi::prelude::*;
use nalgebra::{
    DMatrix, DVector, Matrix2, Matrix3, Matrix4, Point3, Rotation3, UnitQuaternion, Vector2,
    Vector3, Vector4,
};

/// One Kalman filter update: the innovation's negative log-likelihood after predicting
/// with `f` and process noise `q`.
#[differentiable]
fn kalman_step(
    f: &DMatrix<f64>,
    h: &DMatrix<f64>,
    q: &DMatrix<f64>,
    r: &DMatrix<f64>,
    x: &DVector<f64>,
    p: &DMatrix<f64>,
    z: &DVector<f64>,
) -> f64 {
    let x_pred = f * x;
    let p_pred = f * p * f.transpose() + q;
    let innovation = z - h * &x_pred;
    let s = h * &p_pred * h.transpose() + r;
    let chol = s.clone().cholesky().expect("innovation covariance");
    let alpha = chol.solve(&innovation);
    0.5 * innovation.dot(&alpha) + 0.5 * chol.ln_determinant()
}

/// A 2-D pose-graph edge: the squared error of a relative pose measurement, poses as
/// (x, y, θ).
#[differentiable]
fn pose_graph_residual(pi: &Vector3<f64>, pj: &Vector3<f64>, meas: &Vector3<f64>) -> f64 {
    let (c, s) = (pi[2].cos(), pi[2].sin());
    let dx = pj[0] - pi[0];
    let dy = pj[1] - pi[1];
    let ex = c * dx + s * dy - meas[0];
    let ey = -s * dx + c * dy - meas[1];
    let et = pj[2] - pi[2] - meas[2];
    ex * ex + ey * ey + et * et
}

/// Inverse kinematics of a planar three-link arm: squared distance of the end effector
/// to a target, plus a small joint regulariser.
#[differentiable]
fn inverse_kinematics_loss(q: &DVector<f64>, lengths: &DVector<f64>, target: &DVector<f64>) -> f64 {
    let mut angle = 0.0;
    let mut x = 0.0;
    let mut y = 0.0;
    for i in 0..q.len() {
        angle += q[i];
        x += lengths[i] * angle.cos();
        y += lengths[i] * angle.sin();
    }
    let ex = x - target[0];
    let ey = y - target[1];
    ex * ex + ey * ey + 1e-3 * q.norm_squared()
}

/// A two-layer perceptron on a batch (one sample per column), tanh hidden layer, mean
/// squared error.
#[differentiable]
fn mlp_loss(
    w1: &DMatrix<f64>,
    b1: &DVector<f64>,
    w2: &DMatrix<f64>,
    x: &DMatrix<f64>,
    y: &DMatrix<f64>,
) -> f64 {
    let n = x.ncols();
    let mut pre = w1 * x;
    for j in 0..n {
        for i in 0..pre.nrows() {
            pre[(i, j)] += b1[i];
        }
    }
    let hidden = pre.map(|v| v.tanh());
    let out = w2 * hidden;
    let err = out - y;
    err.norm_squared() / (n as f64)
}

/// Least squares through the normal equations, solved by Cholesky.
#[differentiable]
fn normal_equations(a: &DMatrix<f64>, b: &DVector<f64>) -> f64 {
    let ata = a.transpose() * a;
    let atb = a.transpose() * b;
    let chol = ata.cholesky().expect("full column rank");
    let x = chol.solve(&atb);
    x.sum()
}

/// A general linear solve by LU, then a quadratic of the solution.
#[differentiable]
fn lu_solve_quadratic(a: &DMatrix<f64>, b: &DVector<f64>) -> f64 {
    let x = a.clone().lu().solve(b).expect("invertible");
    x.dot(&x)
}

/// The log-density of a multivariate normal with covariance `k`.
#[differentiable]
fn gaussian_log_density(k: &DMatrix<f64>, y: &DVector<f64>) -> f64 {
    let chol = k.clone().cholesky().expect("positive definite");
    let alpha = chol.solve(y);
    let n = y.len() as f64;
    -0.5 * y.dot(&alpha) - 0.5 * chol.ln_determinant() - 0.5 * n * (2.0 * std::f64::consts::PI).ln()
}

/// Torque of a force about a pivot plus the work along a displacement.
#[differentiable]
fn torque_and_work(r: &Vector3<f64>, force: &Vector3<f64>, d: &Vector3<f64>) -> f64 {
    let torque = r.cross(force);
    torque.norm() + force.dot(d)
}

/// The volume of the parallelepiped spanned by the columns of a 3 × 3 matrix, and the
/// trace-like sum of its inverse.
#[differentiable]
fn determinant_and_inverse(m: &Matrix3<f64>) -> f64 {
    let det = m.determinant();
    let inv = m.try_inverse().expect("invertible");
    det * det + inv.sum()
}

/// Small matrices built from scalars (`Matrix2::new` row by row: a rotation by `th`),
/// `Matrix3::new` and `Vector4::new`.
#[differentiable]
fn built_from_scalars(th: f64, v: &Vector2<f64>, a: f64) -> f64 {
    let (s, c) = th.sin_cos();
    let r = Matrix2::new(c, -s, s, c);
    let w = r * v;
    let m = Matrix3::new(a, 1.0, th, 0.5 * a, 2.0, -th, a * th, 0.3, 1.0);
    let q = Vector4::new(a, th, a * th, 1.0);
    w[0] * 3.0 + w[1] * w[1] + m.determinant() + q.norm_squared() + m[(0, 2)] * m[(2, 0)]
}

/// A Gaussian-kernel Gram matrix built element by element, then its log-determinant
/// by Cholesky.
#[differentiable]
fn kernel_logdet(x: &DVector<f64>, ell: f64) -> f64 {
    let n = x.len();
    let mut k = DMatrix::<f64>::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let d = x[i] - x[j];
            k[(i, j)] = (-0.5 * d * d / (ell * ell)).exp();
        }
        k[(i, i)] += 0.1;
    }
    let chol = k.cholesky().expect("positive definite");
    chol.ln_determinant()
}

/// Softplus-weighted elementwise product and a capture in `map`.
#[differentiable]
fn elementwise_capture(a: &DVector<f64>, b: &DVector<f64>, t: f64) -> f64 {
    let prod = a.component_mul(b);
    let scaled = prod.map(|v| (v * t).exp().ln_1p());
    scaled.sum() - (a - b).norm()
}

/// `zip_map` over two matrices, then a Frobenius norm.
#[differentiable]
fn zip_map_norm(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    let c = a.zip_map(b, |x, y| x * y.sin());
    c.norm() + (a * 0.5 - b / 2.0).sum()
}

/// A rotation about z applied to a point, built from a differentiable angle with the
/// crate's builder functions.
#[differentiable]
fn rotate_point(theta: f64, p: &Vector3<f64>, target: &Vector3<f64>) -> f64 {
    let (c, s) = (theta.cos(), theta.sin());
    let row0 = mochi::nalgebra::vector3(c, -s, 0.0);
    let row1 = mochi::nalgebra::vector3(s, c, 0.0);
    let rotated = mochi::nalgebra::vector3(row0.dot(p), row1.dot(p), p[2]);
    (rotated - target).norm_squared()
}

/// Linear regression from a parameter slice: the design matrix and the weights come
/// from `dmatrix` / `dvector`.
#[differentiable]
fn regression_from_slices(params: &[f64], x: &DMatrix<f64>, y: &DVector<f64>) -> f64 {
    let w = mochi::nalgebra::dvector(params);
    let pred = x * w;
    let r = pred - y;
    r.dot(&r) / (y.len() as f64)
}

/// `f32` end to end: a matrix–vector product, negation and a norm.
#[differentiable]
fn f32_matvec(a: &DMatrix<f32>, x: &DVector<f32>) -> f32 {
    let y = -(a * x);
    y.norm() + x.sum() * 0.5
}

/// Inverse of a Cholesky factorisation and its determinant: a precision-weighted
/// quadratic.
#[differentiable]
fn precision_quadratic(s: &DMatrix<f64>, v: &DVector<f64>) -> f64 {
    let chol = s.clone().cholesky().expect("positive definite");
    let precision = chol.inverse();
    let pv = precision * v;
    v.dot(&pv) + chol.determinant().ln()
}

/// The lower Cholesky factor's diagonal: the sum of log pivots (half the log-determinant).
#[differentiable]
fn cholesky_factor_diagonal(s: &DMatrix<f64>) -> f64 {
    let l = s.clone().cholesky().expect("positive definite").l();
    let mut acc = 0.0;
    for i in 0..l.nrows() {
        acc += l[(i, i)].ln();
    }
    acc
}

/// The determinant of a general matrix through LU, and its inverse.
#[differentiable]
fn lu_determinant_inverse(a: &DMatrix<f64>) -> f64 {
    let lu = a.clone().lu();
    let det = lu.determinant();
    let inv = lu.try_inverse().expect("invertible");
    det + inv.transpose().sum()
}

/// Bundle adjustment: the squared reprojection error of a point seen by a pinhole camera
/// whose pose is a rotation vector and a translation.
#[differentiable]
fn reprojection_error(
    omega: &Vector3<f64>,
    t: &Vector3<f64>,
    point: &Vector3<f64>,
    observed: &Vector2<f64>,
    focal: f64,
) -> f64 {
    let r = mochi::nalgebra::rotation_matrix(omega);
    let pc = r * point + t;
    let u = focal * pc[0] / pc[2] - observed[0];
    let v = focal * pc[1] / pc[2] - observed[1];
    u * u + v * v
}

/// Per-sample squared activations over the columns of a batch, plus the first row of
/// the weights: blocks of a matrix taken inside the body.
#[differentiable]
fn column_losses(w: &DMatrix<f64>, x: &DMatrix<f64>) -> f64 {
    let mut total = 0.0;
    for j in 0..x.ncols() {
        let xj = x.column(j);
        let h = w * xj;
        total += h.norm_squared();
    }
    total + w.row(0).sum() + x.rows(1, 2).norm()
}

/// Named coordinates of a static vector.
#[differentiable]
fn vector_fields(p: &Vector3<f64>) -> f64 {
    p.x * p.y + p.z.sin()
}

/// A Gram matrix's trace, the alignment of a direction with a vector, and a mean of
/// elementwise ratios.
#[differentiable]
fn gram_direction_ratio(a: &DMatrix<f64>, v: &DVector<f64>, w: &DVector<f64>) -> f64 {
    let gram = a.tr_mul(a);
    let u = v.normalize();
    let ratio = v.component_div(&w.add_scalar(2.0));
    gram.trace() + u.dot(w) + ratio.mean()
}

/// Shape queries (rule calls with zero-sized pullbacks) bound to names, passed to
/// constructors and used in ranges and indices.
#[differentiable]
fn shape_queries(x: &DMatrix<f64>, w: &DVector<f64>) -> f64 {
    let n = x.nrows();
    let (_, cols) = x.shape();
    let mut y: DVector<f64> = DVector::zeros(n);
    let mut z: DMatrix<f64> = DMatrix::zeros(n, cols);
    for i in 0..n {
        for j in 0..x.ncols() {
            y[i] += x[(i, j)] * w[j];
            z[(i, j)] = x[(i, j)] * x[(i, j)];
        }
    }
    let square = if x.is_square() { 1.0 } else { 2.0 };
    y.dot(&y) * square + z.sum()
}

/// Iterator adapters over column vectors (dynamic and static), as over slices.
#[differentiable]
fn vector_adapters(v: &DVector<f64>, w: &DVector<f64>, s: &Vector3<f64>) -> f64 {
    v.iter().map(|x| x.sin()).sum::<f64>()
        + v.iter().zip(w.iter()).map(|(a, b)| a * b * b).sum::<f64>()
        + s.iter().fold(0.0, |acc, x| acc + x.exp())
        + s.iter().sum::<f64>() * w.iter().product::<f64>()
}

/// Chains over a slice of nalgebra vectors ("no rule for `iter_map_sum`" before).
#[differentiable]
fn points_chain(ps: &[Vector3<f64>], w: &Vector3<f64>, t: &[f64]) -> f64 {
    ps.iter().map(|p| p.dot(w).powi(2)).sum::<f64>()
        + ps.iter()
            .zip(t)
            .map(|(p, ti)| (p.norm() - ti).powi(2))
            .sum::<f64>()
}

/// A vector read through `as_slice()` ("`AccumulateFrom<Vec<f64>>` is not satisfied"
/// before).
#[differentiable]
fn through_a_slice(x: &DVector<f64>) -> f64 {
    let s = x.as_slice();
    s[0] * s[1] + s.iter().map(|v| v * v).sum::<f64>()
}

/// Matrices and vectors built from row slices of a parameter (sub-slices as constructor
/// arguments: "`[f64]: Clone` is not satisfied" before).
#[differentiable]
fn from_row_slices(x: &[f64]) -> f64 {
    let m = DMatrix::from_row_slice(2, 3, &x[..6]);
    let v = DVector::from_row_slice(&x[..3]);
    let w = DVector::from_column_slice(&x[1..3]);
    (&m * &v).norm_squared() + m[(1, 0)] * 2.0 + w.sum()
}

/// An entry of a rotation read by index (`r[(0, 2)]`; "`Rotation<f64, 3>: IndexShape` is
/// not satisfied" before).
#[differentiable]
fn rotation_entry(w: &Vector3<f64>) -> f64 {
    let r = Rotation3::new(*w);
    r[(0, 2)] * 2.0 + r.matrix()[(1, 0)]
}

/// Loops and chains over the elements of nalgebra vectors and matrices (column by
/// column, as `iter()` walks them): "a `for` loop … over `Matrix<…>`" and "no rule for
/// `iter_map_sum`" before.
#[differentiable]
fn element_walks(x: &DVector<f64>, m: &DMatrix<f64>) -> f64 {
    let mut s = 0.0;
    for v in x.iter() {
        s += v * v.sin();
    }
    for (i, v) in x.iter().enumerate() {
        s += v * i as f64;
    }
    for v in m.iter() {
        s = s * 0.5 + v;
    }
    s + m.iter().map(|v| v.sin()).sum::<f64>()
}

/// The extrema of a vector (`max`, `min`, `amax`, `amin`: "no rule for `max`" before)
/// beside a vector built from a slice two ways and its norm.
#[differentiable]
fn extrema(x: &[f64], m: &DMatrix<f64>) -> f64 {
    let v = DVector::from_vec(x.to_vec());
    let w = DVector::from_column_slice(x);
    v.dot(&w).sqrt() + v.max() * v.min() + w.amax() - w.amin() + m.max() * m.amin()
}

/// Static vectors and matrices built from slices (row by row and column by column), and
/// a `DMatrix` from a column slice and from a `Vec` ("no rule for
/// `matrix3_from_row_slice`" before), each entry used so that a transposed index shows.
#[differentiable]
fn static_from_slices(x: &[f64]) -> f64 {
    let a = Matrix3::from_row_slice(&x[..9]);
    let b = Matrix3::from_column_slice(&x[1..10]);
    let c = Matrix2::from_row_slice(&x[2..6]);
    let d = Matrix4::from_column_slice(&x[..16]);
    let u = Vector3::from_row_slice(&x[3..6]);
    let w = Vector2::from_column_slice(&x[..2]);
    let q = Vector4::from_row_slice(&x[4..8]);
    let e = DMatrix::from_column_slice(2, 3, &x[..6]);
    let f = DMatrix::from_vec(3, 2, x[6..12].to_vec());
    let weights = Matrix3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0);
    let w4 = Matrix4::from_fn(|i, j| (i * 4 + j) as f64 + 1.0);
    a.component_mul(&weights).sum()
        + b.component_mul(&weights.transpose()).sum() * 0.5
        + c[(0, 1)] * 3.0
        + c[(1, 0)]
        + d.component_mul(&w4).sum() * 0.1
        + (a * u).norm_squared()
        + w.dot(&Vector2::new(1.0, -2.0))
        + q[3] * q[0]
        + (&e * &f).sum()
        + e[(1, 0)] * 5.0
        + f[(0, 1)] * 7.0
}

mod checks {
    use super::*;
    use crate::check;

    check!(extrema, (vec![0.3, -0.55, 0.9, 0.12], m(2, 3, 0.1)), |a| (
        &a.0, &a.1
    ));

    check!(shape_queries, (m(3, 2, 0.1), v(2, 0.3)), |a| (&a.0, &a.1));
    check!(element_walks, (v(3, 0.3), m(2, 3, 0.2)), |a| (&a.0, &a.1));
    check!(rotation_entry, (Vector3::new(0.1, 0.2, 0.3),), |a| (&a.0));
    check!(
        static_from_slices,
        ((0..16)
            .map(|k| 0.2 + 0.1 * (k as f64).sin())
            .collect::<Vec<f64>>(),),
        |a| (&a.0)
    );
    check!(
        from_row_slices,
        (vec![0.3, 0.7, -0.4, 1.1, 0.5, 0.2, 0.9],),
        |a| (&a.0)
    );
    check!(through_a_slice, (v(3, 0.3),), |a| (&a.0));
    check!(
        points_chain,
        (
            vec![Vector3::new(0.1, 0.2, 0.3), Vector3::new(-0.4, 0.5, 0.6)],
            Vector3::new(0.7, -0.1, 0.2),
            vec![0.3, 0.5]
        ),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(
        vector_adapters,
        (v(4, 0.3), v(4, -0.6), Vector3::new(0.2, -0.4, 0.9)),
        |a| (&a.0, &a.1, &a.2)
    );

    fn m(rows: usize, cols: usize, seed: f64) -> DMatrix<f64> {
        // Not of rank 2, as sin(a i + b j + c) alone would be.
        DMatrix::from_fn(rows, cols, |i, j| {
            ((i * 3 + j * 5) as f64 * 0.7 + seed).sin() + 0.4 * ((i * j) as f64 + seed).cos()
        })
    }
    fn v(n: usize, seed: f64) -> DVector<f64> {
        DVector::from_fn(n, |i, _| ((i * 3) as f64 * 0.9 + seed).cos())
    }
    fn spd(n: usize, seed: f64) -> DMatrix<f64> {
        let a = m(n, n, seed);
        &a * a.transpose() + DMatrix::identity(n, n) * n as f64
    }

    check!(
        kalman_step,
        (
            DMatrix::from_row_slice(2, 2, &[1.0, 0.1, 0.0, 1.0]),
            m(1, 2, 0.3),
            spd(2, 0.1) * 0.1,
            spd(1, 0.2),
            v(2, 0.4),
            spd(2, 0.5),
            v(1, 0.6)
        ),
        |a| (&a.0, &a.1, &a.2, &a.3, &a.4, &a.5, &a.6)
    );
    check!(
        pose_graph_residual,
        (
            Vector3::new(0.1, -0.2, 0.3),
            Vector3::new(1.0, 0.5, 0.7),
            Vector3::new(0.8, 0.6, 0.35)
        ),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(
        inverse_kinematics_loss,
        (
            DVector::from_vec(vec![0.3, -0.4, 0.8]),
            DVector::from_vec(vec![1.0, 0.8, 0.5]),
            DVector::from_vec(vec![1.2, 0.9])
        ),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(
        mlp_loss,
        (
            m(4, 3, 0.1) * 0.5,
            v(4, 0.2),
            m(2, 4, 0.3) * 0.5,
            m(3, 5, 0.4),
            m(2, 5, 0.5)
        ),
        |a| (&a.0, &a.1, &a.2, &a.3, &a.4)
    );
    check!(normal_equations, (m(5, 3, 0.2), v(5, 0.7)), |a| (
        &a.0, &a.1
    ));
    check!(
        lu_solve_quadratic,
        (m(4, 4, 0.3) + DMatrix::identity(4, 4) * 2.0, v(4, 0.1)),
        |a| (&a.0, &a.1)
    );
    check!(gaussian_log_density, (spd(4, 0.6), v(4, 0.9)), |a| (
        &a.0, &a.1
    ));
    check!(
        torque_and_work,
        (
            Vector3::new(0.3, -1.0, 0.5),
            Vector3::new(2.0, 0.4, -0.7),
            Vector3::new(0.1, 0.2, 0.3)
        ),
        |a| (&a.0, &a.1, &a.2)
    );
    check!(
        determinant_and_inverse,
        (Matrix3::new(2.0, 0.3, -0.1, 0.2, 1.5, 0.4, -0.3, 0.1, 1.0),),
        |a| (&a.0)
    );
    check!(kernel_logdet, (v(4, 0.3), 0.8_f64), |a| (&a.0, a.1));
    check!(
        built_from_scalars,
        (0.4_f64, Vector2::new(0.7, -1.2), 1.3_f64),
        |a| (a.0, &a.1, a.2)
    );
    check!(elementwise_capture, (v(5, 0.2), v(5, 1.1), 0.7_f64), |a| (
        &a.0, &a.1, a.2
    ));
    check!(zip_map_norm, (m(3, 2, 0.4), m(3, 2, 1.2)), |a| (&a.0, &a.1));
    check!(
        rotate_point,
        (
            0.4_f64,
            Vector3::new(1.0, 0.5, -0.3),
            Vector3::new(0.2, 1.1, -0.3)
        ),
        |a| (a.0, &a.1, &a.2)
    );
    check!(
        regression_from_slices,
        (vec![0.3, -0.2, 0.5], m(6, 3, 0.8), v(6, 0.1)),
        |a| (&a.0, &a.1, &a.2)
    );
    #[test]
    fn f32_matvec() {
        mochi::testing::RuleTest::new(
            (m(3, 2, 0.1).cast::<f32>(), v(2, 0.3).cast::<f32>()),
            |a| super::f32_matvec(&a.0, &a.1),
            |a| super::f32_matvec::rrule(&a.0, &a.1),
        )
        .tolerance(2e-2, 2e-3)
        .run();
    }
    check!(precision_quadratic, (spd(3, 0.4), v(3, 0.2)), |a| (
        &a.0, &a.1
    ));
    check!(cholesky_factor_diagonal, (spd(3, 0.8),), |a| (&a.0));
    check!(
        lu_determinant_inverse,
        (m(3, 3, 0.5) + DMatrix::identity(3, 3) * 2.0,),
        |a| (&a.0)
    );

    check!(
        reprojection_error,
        (
            Vector3::new(0.1, -0.2, 0.05),
            Vector3::new(0.3, -0.1, 4.0),
            Vector3::new(0.5, 0.4, 1.0),
            Vector2::new(0.2, 0.1),
            1.5_f64
        ),
        |a| (&a.0, &a.1, &a.2, &a.3, a.4)
    );

    check!(column_losses, (m(2, 3, 0.1), m(3, 4, 0.6)), |a| (
        &a.0, &a.1
    ));
    check!(vector_fields, (Vector3::new(0.3, -1.2, 0.8),), |a| (&a.0));

    check!(
        gram_direction_ratio,
        (m(4, 3, 0.2), v(5, 0.3), v(5, 1.7)),
        |a| (&a.0, &a.1, &a.2)
    );

    #[test]
    fn cotangents_are_the_primal_nalgebra_types() {
        // ∂/∂x ‖A x − b‖²/n = 2 Aᵀ (A x − b)/n, a DVector like x.
        let (a, b) = (m(6, 3, 0.8), v(6, 0.1));
        let params = vec![0.3, -0.2, 0.5];
        let (_, (dp, da, db)) = super::regression_from_slices::value_and_gradient(&params, &a, &b);
        let x = DVector::from_vec(params.clone());
        let want = a.transpose() * (&a * &x - &b) * (2.0 / 6.0);
        assert!((DVector::from_vec(dp) - want).norm() < 1e-12);
        assert_eq!((da.shape(), db.len()), ((6, 3), 6));
        // static sizes keep their static types
        let (_, (dr, df, dd)) = super::torque_and_work::value_and_gradient(
            &Vector3::new(0.3, -1.0, 0.5),
            &Vector3::new(2.0, 0.4, -0.7),
            &Vector3::new(0.1, 0.2, 0.3),
        );
        let dd: Vector3<f64> = dd;
        assert_eq!(dd, Vector3::new(2.0, 0.4, -0.7)); // ∂(f·d)/∂d = f
        assert!(dr.norm() > 0.0 && df.norm() > 0.0);
    }
}

#[differentiable]
fn map_by_function_path(v: &DVector<f64>) -> f64 {
    v.map(f64::exp).sum() + v.map(f64::sin).dot(v)
}

mod checked_paths {
    use crate::check;

    check!(
        map_by_function_path,
        (nalgebra::DVector::from_vec(vec![0.3_f64, -0.7, 1.1]),),
        |a| (&a.0)
    );
}

/// Constructors written as nalgebra users write them.
#[allow(clippy::ptr_arg)]
#[differentiable]
fn constructors(x: f64, y: f64, zs: &[f64], w: &Vec<f64>) -> f64 {
    let a = Vector3::new(x, y * x, 1.0);
    let b = Vector2::new(y, x);
    let c = DVector::from_column_slice(zs);
    let d = DVector::from_vec(w.clone());
    a.norm_squared() + b.dot(&b) * c.dot(&d)
}

mod checked_constructors {
    use crate::check;

    check!(
        constructors,
        (0.3_f64, -0.7_f64, vec![0.5_f64, 1.5], vec![-0.2_f64, 0.9]),
        |a| (a.0, a.1, &a.2, &a.3)
    );
}

/// `match` on the `Option` a Cholesky factorisation returns, as nalgebra users write it.
#[differentiable]
fn cholesky_or_fallback(a: &DMatrix<f64>, b: &DVector<f64>) -> f64 {
    match a.clone().cholesky() {
        Some(c) => c.solve(b).norm_squared(),
        None => b.norm_squared(),
    }
}

mod checked_cholesky_match {
    use crate::check;

    check!(
        cholesky_or_fallback,
        (
            nalgebra::DMatrix::from_row_slice(2, 2, &[2.0_f64, 0.3, 0.3, 1.5]),
            nalgebra::DVector::from_vec(vec![0.4_f64, -0.9])
        ),
        |a| (&a.0, &a.1)
    );
}

/// Bundle adjustment as GradBench's `ba` eval computes one residual. The camera is
/// GradBench's eleven numbers: rotation vector, centre, focal length, principal point,
/// radial distortion `k1`, `k2`. It rotates the point (less the centre) by Rodrigues'
/// formula, projects it, distorts and scales it; the weighted reprojection error and
/// the weight's own error `1 − w²`.
#[differentiable]
fn ba_residual(cam: &[f64], point: &Vector3<f64>, observed: &Vector2<f64>, weight: f64) -> f64 {
    let rotation = Vector3::new(cam[0], cam[1], cam[2]);
    let centre = Vector3::new(cam[3], cam[4], cam[5]);
    let (focal, principal) = (cam[6], Vector2::new(cam[7], cam[8]));
    let (k1, k2) = (cam[9], cam[10]);
    let r = Rotation3::new(rotation);
    let xc = r * (point - centre);
    let p = Vector2::new(xc.x / xc.z, xc.y / xc.z);
    let rsq = p.norm_squared();
    let distortion = 1.0 + k1 * rsq + k2 * rsq * rsq;
    let projected = p * (distortion * focal) + principal;
    let e = (projected - observed) * weight;
    let w_err = 1.0 - weight * weight;
    e.norm_squared() + w_err * w_err
}

/// A 3-D pose-graph edge as Ceres' pose-graph example writes it: poses as rotation
/// vectors (turned into unit quaternions) and positions, the measured relative pose as a
/// unit quaternion and a position; the residual is the position error in the first
/// frame and twice the vector part of the rotation error.
#[differentiable]
fn pose_graph_3d_residual(
    wa: &Vector3<f64>,
    pa: &Vector3<f64>,
    wb: &Vector3<f64>,
    pb: &Vector3<f64>,
    q_measured: &UnitQuaternion<f64>,
    p_measured: &Vector3<f64>,
) -> f64 {
    let qa = UnitQuaternion::from_scaled_axis(*wa);
    let qb = UnitQuaternion::from_scaled_axis(*wb);
    let qa_inv = qa.inverse();
    let p_ab = qa_inv.transform_vector(&(pb - pa));
    let q_ab = qa_inv * qb;
    let dq = q_measured * q_ab.inverse();
    let ep = p_ab - p_measured;
    let eq = dq.imag() * 2.0;
    ep.norm_squared() + eq.norm_squared()
}

/// Rigid alignment of points (as in ICP): `Σ ‖R pᵢ + t − qᵢ‖²` with `R` from a rotation
/// vector, points as `Point3`, plus a term through `Rᵀ`, the matrix and a quaternion's
/// rotation matrix.
#[differentiable]
fn rigid_alignment(
    w: &Vector3<f64>,
    t: &Vector3<f64>,
    ps: &[Point3<f64>],
    qs: &[Point3<f64>],
) -> f64 {
    let r = Rotation3::from_scaled_axis(*w);
    let mut total = 0.0;
    for i in 0..ps.len() {
        let moved = r * ps[i] + t;
        total += (moved - qs[i]).norm_squared();
    }
    let back = r.transpose() * (qs[0] - Point3::origin());
    let q = UnitQuaternion::from_scaled_axis(*w);
    let m = q.to_rotation_matrix();
    let tilt = (m.matrix() - r.matrix()).norm_squared();
    total + back.dot(t) + tilt + (r.inverse() * qs[1]).coords.sum()
}

/// A rotation vector in `f32`: a quaternion and a rotation applied to a vector.
#[differentiable]
fn rotate_f32(w: &Vector3<f32>, v: &Vector3<f32>) -> f32 {
    let q = UnitQuaternion::from_scaled_axis(*w);
    let r = Rotation3::new(*w);
    (q * v).dot(&(r * v)) + (q * q).scalar()
}

/// `target · R(ω) p`: its gradient in `ω` at `ω = 0` is `p × target`.
#[differentiable]
fn rotated_alignment(w: &Vector3<f64>, p: &Vector3<f64>, target: &Vector3<f64>) -> f64 {
    let r = Rotation3::from_scaled_axis(*w);
    let q = UnitQuaternion::from_scaled_axis(*w);
    0.5 * (r * p).dot(target) + 0.5 * q.transform_vector(p).dot(target)
}

mod checked_rotations {
    use super::*;
    use crate::check;

    check!(
        ba_residual,
        (
            vec![0.1, -0.2, 0.05, -0.3, 0.1, -4.0, 1.3, 0.02, -0.01, -0.05, 0.01],
            Vector3::new(0.5, 0.4, 1.0),
            Vector2::new(0.2, 0.1),
            0.9_f64
        ),
        |a| (&a.0, &a.1, &a.2, a.3)
    );
    check!(
        pose_graph_3d_residual,
        (
            Vector3::new(0.1, -0.3, 0.2),
            Vector3::new(0.5, 0.2, -0.1),
            Vector3::new(0.4, 0.1, -0.6),
            Vector3::new(1.5, -0.3, 0.4),
            UnitQuaternion::from_scaled_axis(Vector3::new(0.2, 0.3, -0.7)),
            Vector3::new(0.9, -0.4, 0.6)
        ),
        |a| (&a.0, &a.1, &a.2, &a.3, &a.4, &a.5)
    );
    check!(
        rigid_alignment,
        (
            Vector3::new(0.3, -0.2, 0.4),
            Vector3::new(0.1, 0.0, -0.2),
            vec![
                Point3::new(1.0, 0.5, -0.3),
                Point3::new(-0.4, 1.2, 0.8),
                Point3::new(0.2, -0.9, 0.5)
            ],
            vec![
                Point3::new(0.9, 0.7, -0.1),
                Point3::new(-0.6, 1.0, 1.1),
                Point3::new(0.5, -0.8, 0.3)
            ]
        ),
        |a| (&a.0, &a.1, &a.2, &a.3)
    );
    #[test]
    fn rotate_f32() {
        mochi::testing::RuleTest::new(
            (
                Vector3::new(0.3_f32, -0.5, 0.8),
                Vector3::new(1.0_f32, 0.5, -2.0),
            ),
            |a| super::rotate_f32(&a.0, &a.1),
            |a| super::rotate_f32::rrule(&a.0, &a.1),
        )
        .tolerance(2e-2, 2e-3)
        .run();
    }
    check!(
        rotated_alignment,
        (
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.5, -0.3),
            Vector3::new(0.2, 1.1, -0.3)
        ),
        |a| (&a.0, &a.1, &a.2)
    );

    #[test]
    fn the_rotation_vector_gradient_at_zero_is_exact() {
        // d/dω target·(ω × p) = p × target, through both Rodrigues and the quaternion.
        let (p, target) = (Vector3::new(1.0, 0.5, -0.3), Vector3::new(0.2, 1.1, -0.3));
        for scale in [0.0, 1e-12, 1e-8] {
            let w = Vector3::new(0.3, -0.2, 0.9) * scale;
            let (value, (dw, dp, _)) =
                super::rotated_alignment::value_and_gradient(&w, &p, &target);
            assert!((value - p.dot(&target)).abs() < 1e-7);
            assert!(
                (dw - p.cross(&target)).norm() < 1e-7,
                "{dw} at |ω| = {scale}"
            );
            assert!(dw.iter().chain(dp.iter()).all(|v| v.is_finite()));
            if scale == 0.0 {
                assert!((dw - p.cross(&target)).norm() < 1e-15);
                assert!((dp - target).norm() < 1e-15); // R = I: ∂/∂p = target
            }
        }
    }
}

/// The example of `rules/nalgebra/README.md`: a point moved by a rotation from a
/// rotation vector and a translation, read by its named coordinates.
#[differentiable]
fn readme_reprojection(w: &Vector3<f64>, t: &Vector3<f64>, p: &Point3<f64>) -> f64 {
    let r = Rotation3::new(*w);
    let pc = r * p + t;
    pc.x / pc.z + pc.y / pc.z
}

mod checked_readme {
    use super::*;
    use crate::check;

    check!(
        readme_reprojection,
        (
            Vector3::new(0.2, -0.1, 0.3),
            Vector3::new(0.1, 0.2, 3.0),
            Point3::new(0.5, -0.4, 1.0)
        ),
        |a| (&a.0, &a.1, &a.2)
    );
}

/// A vector from an array, scaled by name, and the angle between two vectors.
#[differentiable]
fn angle_between(p: &[f64]) -> f64 {
    let a = Vector3::from([p[0], p[1], p[2]]);
    let b = Vector3::from_row_slice(&p[3..6]);
    let c = Vector2::from([p[0] * p[4], p[2]]);
    a.scale(2.0).dot(&b) + a.angle(&b) + c.scale(p[5]).norm()
}

mod checked_vector_builders {
    use crate::check;

    check!(
        angle_between,
        (vec![0.3, -0.4, 0.7, 0.1, -0.9, 0.5],),
        |a| (&a.0)
    );
}

/// A joint's frame from Euler angles (a hand model's bones), as a rotation and as a
/// unit quaternion, moving one point each.
#[differentiable]
fn euler_joint(p: &[f64]) -> f64 {
    let r = Rotation3::from_euler_angles(p[0], p[1], p[2]);
    let q = UnitQuaternion::from_euler_angles(p[2], p[0], p[1]);
    let a = r * Vector3::new(1.0, 2.0, 3.0);
    let b = q * Vector3::new(-0.5, 0.25, 1.0);
    a.x + a.y * a.z + b.dot(&a)
}

mod checked_euler {
    use crate::check;

    check!(euler_joint, (vec![0.3, -0.4, 0.7],), |a| (&a.0));
}

/// Matrices built entry by entry (`from_fn`): a squared-exponential kernel of
/// differentiable points, and a static matrix from a closure with a branch.
#[differentiable]
fn kernel_from_fn(p: &[f64]) -> f64 {
    let n = p.len();
    let k = DMatrix::from_fn(n, n, |i, j| (-(p[i] - p[j]).powi(2)).exp());
    let m = Matrix3::from_fn(|i, j| p[(i + j) % n] + if i == j { 2.0 } else { 0.0 });
    let v = DVector::from_fn(n, |i, _| p[i] * (i as f64 + 1.0));
    k.sum() + m.determinant().ln() + v.norm()
}

mod checked_from_fn {
    use crate::check;

    check!(kernel_from_fn, (vec![0.3, -0.4, 0.7, 0.1],), |a| (&a.0));
}

/// A homogeneous transform written entry by entry (`Matrix4::new`, sixteen scalars),
/// composed with itself and applied to a point.
#[differentiable]
fn homogeneous_transform(p: &[f64]) -> f64 {
    let (c, s) = (p[0].cos(), p[0].sin());
    #[rustfmt::skip]
    let t = Matrix4::new(
        c, -s, 0.0, p[1],
        s, c, 0.0, p[2],
        0.0, 0.0, 1.0, 0.0,
        0.0, 0.0, 0.0, 1.0,
    );
    let v = (t * t) * Vector4::new(1.0, 0.5, 0.0, 1.0);
    v[0] * v[0] + v[1]
}

mod checked_matrix4_new {
    use crate::check;

    check!(homogeneous_transform, (vec![0.3, -0.4, 0.7],), |a| (&a.0));
}

/// A body's kinetic energy: the inertia tensor built from its principal moments
/// (`Matrix3::from_diagonal`), turned into the world frame by a rotation (`r.matrix()`),
/// a damping `from_diagonal_element`, the diagonal read back (`diagonal()`), and a
/// `DMatrix::from_diagonal`.
#[differentiable]
fn rigid_body_energy(x: &[f64]) -> f64 {
    let moments = Matrix3::from_diagonal(&Vector3::new(x[0], x[1], x[2]));
    let rot = Rotation3::new(Vector3::new(x[3], x[4], x[5]));
    let r = rot.matrix();
    let world = r * moments * r.transpose() + Matrix3::from_diagonal_element(x[0] * x[1]);
    let omega = Vector3::new(x[6], x[7], x[8]);
    let d = DMatrix::from_diagonal(&DVector::from_vec(vec![x[6], x[7] * x[8]]));
    0.5 * omega.dot(&(world * omega)) + world.diagonal().sum() * d.determinant()
}

mod checked_diagonals {
    use crate::check;

    check!(
        rigid_body_energy,
        (vec![1.5, 2.0, 0.7, 0.3, -0.4, 0.2, 0.9, -0.6, 0.4],),
        |a| (&a.0)
    );
}

/// Vectors and matrices filled from iterator chains (`DVector::from_iterator(n, x.iter()
/// .map(..))`, `DMatrix::from_iterator(r, c, ..)`, column by column); before, "no rule
/// for `dvector_from_iterator`" and "no rule for `iter`".
#[differentiable]
fn filled_from_chains(x: &[f64]) -> f64 {
    let n = x.len();
    let v = DVector::from_vec(x.to_vec());
    let f = DVector::from_iterator(n, v.iter().map(|t| t.sin() * t));
    let g = DVector::from_iterator(n, x.iter().zip(v.iter()).map(|(a, b)| a * b + 1.0));
    let m = DMatrix::from_iterator(2, n / 2, x.iter().map(|t| t * t));
    f.dot(&g) + g.norm_squared() + m.sum() * m[(1, 0)]
}

mod checked_from_iterators {
    use crate::check;

    check!(filled_from_chains, (vec![0.4, -1.1, 0.7, 1.3],), |a| (&a.0));
}

/// Points turned by `R_z(x₀) R_x(x₁)` built with `Rotation3::from_axis_angle` about
/// constant axes, and by the same turn as a `UnitQuaternion`: Σ ‖Rp − p‖² + (Rp)_z.
#[differentiable]
fn turntable(x: &[f64]) -> f64 {
    let rz = Rotation3::from_axis_angle(&Vector3::z_axis(), x[0]);
    let rx = Rotation3::from_axis_angle(&Vector3::x_axis(), x[1]);
    let r = rz * rx;
    let tilt = nalgebra::Unit::new_normalize(Vector3::new(1.0, 1.0, 0.0));
    let q = UnitQuaternion::from_axis_angle(&tilt, x[1] - x[0]);
    let mut e = 0.0;
    for c in x[2..].chunks(3) {
        let p = Point3::new(c[0], c[1], c[2]);
        let turned = r * p;
        e += (turned - p).norm_squared() + turned.z + (q * p).x;
    }
    e
}

mod checked_axis_angle {
    use crate::check;

    check!(
        turntable,
        (vec![0.4, -1.1, 0.7, 1.3, -0.2, 0.5, 0.9, 0.3],),
        |a| (&a.0)
    );
}

/// nalgebra's forms that answer a new value or change one in place: a point made
/// homogeneous by `p.push(1.0)` and projected by a constant 3×4 camera, an axis of
/// differentiable numbers by `Unit::new_normalize` turned into a rotation and a unit
/// quaternion, and a normal normalised in place by `n.normalize_mut()` (the norm it
/// had kept). Before: "no rule for `*` with arguments `(&Matrix3x4, &())`" (the
/// `push` read as a `Vec`'s), "no rule for `Unit::new_normalize`", "no rule for
/// `normalize_mut`".
const CAMERA: [f64; 12] = [
    1.2, 0.0, 0.02, 0.2, 0.0, 1.2, -0.01, -0.1, 0.0, 0.0, 1.0, 0.5,
];

#[differentiable]
fn homogeneous_projection(x: &[f64]) -> f64 {
    let pm = nalgebra::Matrix3x4::from_row_slice(&CAMERA);
    let p = Vector3::new(x[0], x[1], x[2]);
    let h = pm * p.push(1.0);
    let u = h.x / h.z - 0.01;
    let v = h.y / h.z + 0.21;
    u * u + v * v
}

#[differentiable]
fn axis_from_numbers(x: &[f64]) -> f64 {
    let axis = nalgebra::Unit::new_normalize(Vector3::new(x[0], x[1], x[2]));
    let r = Rotation3::from_axis_angle(&axis, x[3]);
    let q = UnitQuaternion::from_axis_angle(&axis, x[4]);
    (r * Vector3::new(1.0, 0.5, -0.3)).dot(&Vector3::new(0.3, -1.2, 0.8))
        + (q * Vector3::new(0.2, 0.1, 0.4)).x
        + axis.x * 2.0
}

#[differentiable]
fn normalized_in_place(x: &[f64]) -> f64 {
    let a = Vector3::new(x[0], x[1], x[2]);
    let b = Vector3::new(x[3], x[4], x[5]);
    let mut n = a.cross(&b);
    let len = n.normalize_mut();
    let mut m = a;
    m.normalize_mut();
    n.dot(&Vector3::new(0.3, 0.5, 0.8)) + 0.1 * len + m.z
}

mod checked_new_values_and_in_place {
    use crate::check;

    check!(homogeneous_projection, (vec![0.4, -1.1, 2.7],), |a| (&a.0));
    check!(axis_from_numbers, (vec![0.3, -0.5, 0.8, 1.1, -0.7],), |a| {
        (&a.0)
    });
    check!(
        normalized_in_place,
        (vec![0.7, -0.3, 1.4, 0.25, 2.1, 0.9],),
        |a| (&a.0)
    );
}

/// By hand: `p.push(1.0)` through the camera is the perspective division; the normal's
/// derivative through `normalize_mut` is its direction's and its norm's.
#[test]
fn new_values_and_in_place_by_hand() {
    // h = (1.2p₀ + 0.02p₂ + 0.2, 1.2p₁ − 0.01p₂ − 0.1, p₂ + 0.5).
    let p: [f64; 3] = [0.4, -1.1, 2.7];
    let h = [
        1.2 * p[0] + 0.02 * p[2] + 0.2,
        1.2 * p[1] - 0.01 * p[2] - 0.1,
        p[2] + 0.5,
    ];
    let (u, v) = (h[0] / h[2] - 0.01, h[1] / h[2] + 0.21);
    let g = homogeneous_projection::gradient(&p);
    let want = [
        2.0 * u * 1.2 / h[2],
        2.0 * v * 1.2 / h[2],
        2.0 * u * (0.02 / h[2] - h[0] / (h[2] * h[2]))
            + 2.0 * v * (-0.01 / h[2] - h[1] / (h[2] * h[2])),
    ];
    for k in 0..3 {
        assert!(
            (g[k] - want[k]).abs() < 1e-12,
            "{k}: {} against {}",
            g[k],
            want[k]
        );
    }
    // n = a × b, f = n̂·l + 0.1|n| + m_z with m = a/|a|: ∂f/∂n = (l − n̂(n̂·l))/|n| + 0.1 n̂
    // =: g; ∂(a × b)·g/∂a = b × g, ∂/∂b = g × a; ∂m_z/∂a = (e_z − m m_z)/|a|.
    let x: [f64; 6] = [0.7, -0.3, 1.4, 0.25, 2.1, 0.9];
    let (a, b) = (
        Vector3::new(x[0], x[1], x[2]),
        Vector3::new(x[3], x[4], x[5]),
    );
    let l = Vector3::new(0.3, 0.5, 0.8);
    let n = a.cross(&b);
    let nh = n / n.norm();
    let gn = (l - nh * nh.dot(&l)) / n.norm() + nh * 0.1;
    let m = a / a.norm();
    let ga = b.cross(&gn) + (Vector3::z() - m * m.z) / a.norm();
    let gb = gn.cross(&a);
    let want = [ga.x, ga.y, ga.z, gb.x, gb.y, gb.z];
    let g = normalized_in_place::gradient(&x);
    for k in 0..6 {
        assert!(
            (g[k] - want[k]).abs() < 1e-12,
            "{k}: {} against {}",
            g[k],
            want[k]
        );
    }
}

/// Least squares by the normal equations, the design matrix from an array literal of
/// constants and parameters (`DMatrix::from_row_slice(3, 2, &[1.0, x[0], ..])`). Until
/// 2026-12-07: "no rule for `dmatrix_from_row_slice` with arguments `(&{integer},
/// &{integer}, &[f64; 6])`".
#[differentiable]
fn normal_equations_from_literal(x: &[f64]) -> f64 {
    let a = DMatrix::from_row_slice(3, 2, &[1.0, x[0], 1.0, x[1], 1.0, x[2]]);
    let y = DVector::from_column_slice(&x[3..6]);
    let ata = a.transpose() * &a;
    let aty = a.transpose() * &y;
    let beta = ata.cholesky().unwrap().solve(&aty);
    let r = &a * &beta - y;
    r.norm_squared() + beta[1] * beta[1]
}

/// Static matrices and vectors from array literals, row by row and column by column.
#[differentiable]
fn static_from_literals(x: &[f64]) -> f64 {
    let m = Matrix2::from_row_slice(&[x[0], 0.5, x[1] * x[2], 2.0]);
    let v = Vector2::from_column_slice(&[x[2], 1.0]);
    let k = Matrix2::from_column_slice(&[x[0], x[1], 0.0, 1.0]);
    let w = DVector::from_row_slice(&[x[0].sin(), x[1], 3.0]);
    (m * v).norm() + (k * v).x + w.sum() * 2.0
}

mod checked_array_literals {
    use crate::check;
    check!(
        normal_equations_from_literal,
        (vec![0.3, 0.8, 1.3, 0.4, 1.1, 2.0],),
        |a| (&a.0)
    );
    check!(static_from_literals, (vec![0.3, 0.8, 1.3],), |a| (&a.0));
}

/// By hand: m·v = (x₀x₂ + 0.5, x₁x₂² + 2), k·v = (x₀x₂, x₁x₂ + 1), w = (sin x₀, x₁, 3).
#[test]
fn static_from_literals_by_hand() {
    let x: [f64; 3] = [0.3, 0.8, 1.3];
    let (p, q) = (x[0] * x[2] + 0.5, x[1] * x[2] * x[2] + 2.0);
    let n = p.hypot(q);
    let (v, g) = static_from_literals::value_and_gradient(&x);
    let want = n + x[0] * x[2] + 2.0 * (x[0].sin() + x[1] + 3.0);
    assert!((v - want).abs() < 1e-13, "{v} against {want}");
    let dw = [
        p * x[2] / n + x[2] + 2.0 * x[0].cos(),
        q / n * x[2] * x[2] + 2.0,
        (p * x[0] + q * 2.0 * x[1] * x[2]) / n + x[0],
    ];
    for k in 0..3 {
        assert!(
            (g[k] - dw[k]).abs() < 1e-12,
            "{k}: {} against {}",
            g[k],
            dw[k]
        );
    }
}
