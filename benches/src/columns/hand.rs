//! The `hand` column: each case's value and gradient written by hand in plain Rust, no
//! tape and no AD tool, under the same contract as the mochi column (the gradient is
//! added into the caller's shadow buffers, zeroed with `fill(0.0)` inside the timed
//! call). The value is computed the way the case's function computes it (`kron_sum`
//! still forms the Kronecker product); the gradient the cheapest way a person would
//! write it: one pass with `sin_cos` where the value needs `sin` and the gradient `cos`,
//! running sums instead of a saved loop, matrix products through the same GEMM as the
//! primal. It is the row's floor, what mochi's ratio is read against; it is not a peer.

use super::mochi::flat2;
use crate::cases::functions as f;
use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::cell::{gradient_cell, Cell};
use mochi_rules_linalg::{
    cholesky, inverse_from_cholesky, logdet_cholesky, solve_lower_triangular,
};
use ndarray::linalg::{general_mat_mul, kron};
use ndarray::{s, Array1, Array2, ArrayView2, Axis, Zip};
use std::hint::black_box;

/// `Σ xᵢ` as the loop of `_sum_1000` adds it, then `x̄ += 1`.
fn sum(x: &[f64], dx: &mut [f64]) -> f64 {
    let mut y = 0.0;
    for v in x {
        y += v;
    }
    dx.iter_mut().for_each(|d| *d += 1.0);
    y
}

/// `Σ sin xᵢ`: one pass of `sin_cos`, `x̄ᵢ += cos xᵢ`.
fn sum_sin(x: &[f64], dx: &mut [f64]) -> f64 {
    let mut y = 0.0;
    for (&v, d) in x.iter().zip(dx) {
        let (s, c) = v.sin_cos();
        y += s;
        *d += c;
    }
    y
}

/// `Σ sin(cos(exp x))`: one pass, `x̄ += cos(cos eˣ)·(−sin eˣ)·eˣ`.
fn sum_sin_cos_exp(x: &[f64], dx: &mut [f64]) -> f64 {
    let mut y = 0.0;
    for (&v, d) in x.iter().zip(dx) {
        let e = v.exp();
        let (s1, c1) = e.sin_cos();
        let (s2, c2) = c1.sin_cos();
        y += s2;
        *d -= c2 * s1 * e;
    }
    y
}

/// `Σ kron(A, B) = ΣA·ΣB`, the product formed as the primal forms it; `Ā += ΣB`, `B̄ += ΣA`.
fn kron_sum(
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
    da: &mut Array2<f64>,
    db: &mut Array2<f64>,
) -> f64 {
    let y = kron(&a, &b).sum();
    let (sa, sb) = (a.sum(), b.sum());
    *da += sb;
    *db += sa;
    y
}

/// `kron_sum` of `A`'s leading block and `B`'s upper triangle: `Ā` gets `Σ triu B` on the
/// block, `B̄` gets `Σ block` on the upper triangle.
fn kron_view_sum(
    a: &Array2<f64>,
    b: &Array2<f64>,
    da: &mut Array2<f64>,
    db: &mut Array2<f64>,
) -> f64 {
    let (m, n) = (b.nrows() / 2, b.ncols() / 2);
    let block = a.slice(s![0..m, 0..n]);
    let upper = b.triu(0);
    let y = kron(&block, &upper).sum();
    let (sa, sb) = (block.sum(), upper.sum());
    da.slice_mut(s![0..m, 0..n]).map_inplace(|d| *d += sb);
    for ((i, j), d) in db.indexed_iter_mut() {
        if j >= i {
            *d += sa;
        }
    }
    y
}

/// `Σ (Y − W2·relu(W1·X))²`: `Ē = 2E`, `W̄2 −= Ē·Rᵀ`, `H̄ = −(W2ᵀ·Ē) ⊙ [H ≥ 0]`,
/// `W̄1 += H̄·Xᵀ`, `X̄ += W1ᵀ·H̄`, every product through ndarray's GEMM.
fn simple_mlp(
    w2: &Array2<f64>,
    w1: &Array2<f64>,
    y: &Array2<f64>,
    x: &Array2<f64>,
    [dw2, dw1, dy, dx]: &mut [Array2<f64>; 4],
) -> f64 {
    let h = w1.dot(x);
    let r = h.mapv(|v| if v >= 0.0 { v } else { 0.0 });
    let mut e = y.clone();
    general_mat_mul(-1.0, w2, &r, 1.0, &mut e);
    let value = e.iter().map(|v| v * v).sum();
    e *= 2.0;
    *dy += &e;
    general_mat_mul(-1.0, &e, &r.t(), 1.0, dw2);
    let mut hb = Array2::zeros(h.raw_dim());
    general_mat_mul(-1.0, &w2.t(), &e, 0.0, &mut hb);
    Zip::from(&mut hb).and(&h).for_each(|g, &v| {
        if v < 0.0 {
            *g = 0.0;
        }
    });
    general_mat_mul(1.0, &hb, &x.t(), 1.0, dw1);
    general_mat_mul(1.0, &w1.t(), &hb, 1.0, dx);
    value
}

/// The GP's log marginal likelihood `−½(yᵀK⁻¹y + ln|K| + n ln 2π)` with
/// `K̄ = ½(ββᵀ − K⁻¹)`, `β = K⁻¹y`: `ȳ −= β`, `s̄ += tr K̄`, `x̄ᵢ −= 2 Σⱼ K̄ᵢⱼ dᵢⱼ Eᵢⱼ`.
fn gp_lml(
    x: &Array1<f64>,
    y: &Array1<f64>,
    s: f64,
    (dx, dy, ds): (&mut Array1<f64>, &mut Array1<f64>, &mut f64),
) -> f64 {
    let n = x.len();
    let xc = x.view().insert_axis(Axis(1));
    let xr = x.view().insert_axis(Axis(0));
    let d = &xc - &xr;
    let e = (&d * &d * -0.5).exp();
    let k = &e + &(Array2::<f64>::eye(n) * s);
    let l = cholesky(&k).expect("the kernel matrix is positive definite");
    let alpha = solve_lower_triangular(&l, y);
    let value = -0.5
        * (alpha.dot(&alpha) + logdet_cholesky(&l) + n as f64 * (2.0 * std::f64::consts::PI).ln());
    let k_inv = inverse_from_cholesky(&l);
    let beta = k_inv.dot(y);
    *dy -= &beta;
    for i in 0..n {
        let mut xi = 0.0;
        for j in 0..n {
            let kb = 0.5 * (beta[i] * beta[j] - k_inv[[i, j]]);
            if i == j {
                *ds += kb;
            }
            xi += kb * d[[i, j]] * e[[i, j]];
        }
        dx[i] -= 2.0 * xi;
    }
    value
}

/// The Turing model's log joint: the likelihood loop keeps `Σz` and `Σz²`, from which
/// `μ̄ = Σz/σ` and `σ̄ = (Σz² − n)/σ`; then the priors and the logistic maps.
fn turing_log_joint(theta: &[f64], data: &[f64], dtheta: &mut [f64]) -> f64 {
    let (lo, hi) = (0.1, 10.0);
    let p_mu = 1.0 / (1.0 + (-theta[0]).exp());
    let p_sigma = 1.0 / (1.0 + (-theta[1]).exp());
    let mu = lo + (hi - lo) * p_mu;
    let sigma = lo + (hi - lo) * p_sigma;
    let log_jacobian =
        2.0 * (hi - lo).ln() + p_mu.ln() + (1.0 - p_mu).ln() + p_sigma.ln() + (1.0 - p_sigma).ln();
    let log_prior = f::truncated_normal_logpdf(mu) + f::truncated_normal_logpdf(sigma);
    let (mut log_likelihood, mut sz, mut szz) = (0.0, 0.0, 0.0);
    for &v in data {
        let lx = v.ln();
        let z = (lx - mu) / sigma;
        log_likelihood += -0.5 * z * z - sigma.ln() - lx - f::HALF_LN_2PI;
        sz += z;
        szz += z * z;
    }
    let mu_bar = sz / sigma - (mu - 1.0) / 4.0;
    let sigma_bar = (szz - data.len() as f64) / sigma - (sigma - 1.0) / 4.0;
    let p_mu_bar = mu_bar * (hi - lo) + 1.0 / p_mu - 1.0 / (1.0 - p_mu);
    let p_sigma_bar = sigma_bar * (hi - lo) + 1.0 / p_sigma - 1.0 / (1.0 - p_sigma);
    dtheta[0] += p_mu_bar * p_mu * (1.0 - p_mu);
    dtheta[1] += p_sigma_bar * p_sigma * (1.0 - p_sigma);
    log_prior + log_jacobian + log_likelihood
}

/// The `hand` cell of `case`, timed as the mochi cell is: shadows allocated once outside,
/// zeroed inside.
pub fn gradient(case: Case, inputs: &Inputs) -> Box<dyn Cell> {
    let i = inputs.clone();
    match case {
        Case::Sum1000 => {
            let dx = Array1::zeros(i.x1000.raw_dim());
            gradient_cell(
                (i.x1000, dx),
                |(x, dx)| {
                    dx.fill(0.0);
                    // ndarray's `sum`, as the case's function (pairwise, vectorised).
                    let y = x.sum();
                    *dx += 1.0;
                    y
                },
                |(_, dx)| dx.to_vec(),
            )
        }
        Case::SumSin1000 => {
            let dx = Array1::zeros(i.x1000.raw_dim());
            gradient_cell(
                (i.x1000, dx),
                |(x, dx)| {
                    dx.fill(0.0);
                    let (x, dx) = (x.as_slice().unwrap(), dx.as_slice_mut().unwrap());
                    sum_sin(x, dx)
                },
                |(_, dx)| dx.to_vec(),
            )
        }
        Case::SumLoop1000 | Case::SumSinLoop1000 => {
            let dx = vec![0.0; i.x1000_vec.len()];
            let g = if case == Case::SumLoop1000 {
                sum
            } else {
                sum_sin
            };
            gradient_cell(
                (i.x1000_vec, dx),
                move |(x, dx)| {
                    dx.fill(0.0);
                    g(x, dx)
                },
                |(_, dx)| dx.clone(),
            )
        }
        Case::KronSum | Case::KronViewSum => {
            let (a, b) = if case == Case::KronSum {
                i.kron
            } else {
                i.kron_view
            };
            let (da, db) = (Array2::zeros(a.raw_dim()), Array2::zeros(b.raw_dim()));
            gradient_cell(
                (a, b, da, db),
                move |(a, b, da, db)| {
                    da.fill(0.0);
                    db.fill(0.0);
                    if case == Case::KronSum {
                        kron_sum(a.view(), b.view(), da, db)
                    } else {
                        kron_view_sum(a, b, da, db)
                    }
                },
                |(_, _, da, db)| [flat2(da), flat2(db)].concat(),
            )
        }
        Case::NaiveMapSinCosExp | Case::MapSinCosExp | Case::BroadcastSinCosExp => {
            let dx = Array2::zeros(i.x10.raw_dim());
            gradient_cell(
                (i.x10, dx),
                |(x, dx)| {
                    dx.fill(0.0);
                    let (x, dx) = (x.as_slice().unwrap(), dx.as_slice_mut().unwrap());
                    sum_sin_cos_exp(x, dx)
                },
                |(_, dx)| flat2(dx),
            )
        }
        Case::SimpleMlp => {
            let m = i.mlp;
            let shadows = [&m.w2, &m.w1, &m.y, &m.x].map(|a| Array2::zeros(a.raw_dim()));
            gradient_cell(
                (m, shadows),
                |(m, shadows)| {
                    for d in shadows.iter_mut() {
                        d.fill(0.0);
                    }
                    simple_mlp(&m.w2, &m.w1, &m.y, &m.x, shadows)
                },
                |(_, shadows)| shadows.iter().flat_map(flat2).collect(),
            )
        }
        Case::GpLml => {
            let g = i.gp;
            let (dx, dy) = (Array1::zeros(g.x.raw_dim()), Array1::zeros(g.y.raw_dim()));
            gradient_cell(
                (g, dx, dy, 0.0),
                |(g, dx, dy, ds)| {
                    dx.fill(0.0);
                    dy.fill(0.0);
                    *ds = 0.0;
                    gp_lml(&g.x, &g.y, g.s, (dx, dy, ds))
                },
                |(_, dx, dy, ds)| [dx.to_vec(), dy.to_vec(), vec![*ds]].concat(),
            )
        }
        Case::TuringBroadcast => {
            let t = i.turing;
            let dtheta = vec![0.0; t.theta.len()];
            gradient_cell(
                (t, dtheta),
                |(t, dtheta)| {
                    dtheta.fill(0.0);
                    turing_log_joint(&t.theta, &t.data, dtheta)
                },
                |(_, dtheta)| dtheta.clone(),
            )
        }
        Case::LargeSingleBlock => gradient_cell(
            (i.block, [0.0; 2]),
            |((x0, a), d)| {
                *d = [0.0; 2];
                let [dx0, da] = d;
                f::large_single_block_adjoint(black_box(*x0), black_box(*a), (dx0, da))
            },
            |(_, d)| d.to_vec(),
        ),
    }
}
