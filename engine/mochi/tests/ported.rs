//! Functions ported from other projects' test suites and benchmarks — GradBench's
//! evals, DiffTests.jl, JAX, Enzyme and Mooncake.jl — written as a Rust user would
//! write them, each checked at every order (`all_orders!`: the gradient and the Hessian
//! against central differences, `jvp` and `hvp` against them), and the functions of
//! other signatures by their gradients, Jacobians and Hessians against central
//! differences.

// The forms are the ones the ported code and users write: index loops, `a = a + b`,
// `vec![..]` where an array would do, a closure where a path would, a labelled `loop`
// left from inside nested `for`s.
#![allow(
    clippy::needless_range_loop,
    clippy::assign_op_pattern,
    clippy::useless_vec,
    clippy::redundant_closure,
    clippy::never_loop
)]

mod common;

/// GradBench and ADBench evals (lse, ode, det, kmeans, lstm, ba, ht, gmm) written as a Rust user would, and classic kernels (a stencil with buffer swaps, Gram–Schmidt, power iteration, the Thomas algorithm, an HMM forward pass).
mod gradbench {
    use super::common::*;
    use mochi::prelude::*;

    // --- GradBench `lse` (cpp/gradbench/evals/lse.hpp): running max, then Σ exp(x − A)
    #[differentiable]
    fn gb_lse(x: &[f64]) -> f64 {
        let mut a = x[0];
        for i in 1..x.len() {
            a = a.max(x[i]);
        }
        let mut s = 0.0;
        for i in 0..x.len() {
            s += (x[i] - a).exp();
        }
        s.ln() + a
    }

    // --- lse of lse's over chunks (a helper called on each chunk inside a chain)
    #[differentiable]
    fn lse_chunks(x: &[f64]) -> f64 {
        let parts: Vec<f64> = x.chunks(2).map(|c| gb_lse(c)).collect();
        gb_lse(&parts) * parts[0]
    }

    // --- GradBench `ode` (evals/ode.hpp): RK4 with a `&mut [f64]` right-hand side,
    //     one scratch buffer `y_tmp` overwritten three times per step
    #[differentiable]
    fn ode_fun(x: &[f64], y: &[f64], z: &mut [f64]) {
        z[0] = x[0];
        for i in 1..x.len() {
            z[i] = x[i] * y[i - 1];
        }
    }
    #[differentiable]
    fn ode_solve(x: &[f64], s: usize) -> Vec<f64> {
        let n = x.len();
        let tf = 2.0;
        let h = tf / s as f64;
        let mut k1 = vec![0.0; n];
        let mut k2 = vec![0.0; n];
        let mut k3 = vec![0.0; n];
        let mut k4 = vec![0.0; n];
        let mut y_tmp = vec![0.0; n];
        let mut yf = vec![0.0; n];
        for _ in 0..s {
            ode_fun(x, &yf, &mut k1);
            for i in 0..n {
                y_tmp[i] = yf[i] + h * k1[i] / 2.0;
            }
            ode_fun(x, &y_tmp, &mut k2);
            for i in 0..n {
                y_tmp[i] = yf[i] + h * k2[i] / 2.0;
            }
            ode_fun(x, &y_tmp, &mut k3);
            for i in 0..n {
                y_tmp[i] = yf[i] + h * k3[i];
            }
            ode_fun(x, &y_tmp, &mut k4);
            for i in 0..n {
                yf[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
            }
        }
        yf
    }
    #[differentiable]
    fn gb_ode(x: &[f64]) -> f64 {
        let y = ode_solve(x, 3);
        let n = y.len();
        y.iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v)
            .sum::<f64>()
            + y[n - 1] * y[n - 1]
    }
    #[differentiable]
    fn gb_ode_vec(x: &[f64]) -> Vec<f64> {
        ode_solve(x, 4)
    }

    // --- GradBench `det` (evals/det.hpp): expansion by minors over successor arrays
    //     `r`, `c` that the recursion edits and restores
    #[differentiable]
    fn det_of_minor(a: &[f64], n: usize, m: usize, r: &mut [usize], c: &mut [usize]) -> f64 {
        let r0 = r[n];
        let mut cj = c[n];
        if m == 1 {
            return a[r0 * n + cj];
        }
        let mut det_m = 0.0;
        let mut sign = 1;
        r[n] = r[r0];
        let mut cj1 = n;
        for _ in 0..m {
            let m0j = a[r0 * n + cj];
            c[cj1] = c[cj];
            let det_s = det_of_minor(a, n, m - 1, r, c);
            c[cj1] = cj;
            if sign > 0 {
                det_m = det_m + m0j * det_s;
            } else {
                det_m = det_m - m0j * det_s;
            }
            cj1 = cj;
            cj = c[cj];
            sign = -sign;
        }
        r[n] = r0;
        det_m
    }
    #[differentiable]
    fn gb_det(a: &[f64]) -> f64 {
        let ell = 3;
        let mut r = vec![0usize; ell + 1];
        let mut c = vec![0usize; ell + 1];
        for i in 0..ell {
            r[i] = i + 1;
            c[i] = i + 1;
        }
        let d = det_of_minor(a, ell, ell, &mut r, &mut c);
        d + 0.1 * d * d
    }

    // --- GradBench `kmeans` (evals/kmeans.hpp): flat points, closest = min(closest, dist)
    const KM_PTS: [f64; 10] = [0.1, 0.2, 0.9, 1.1, 2.3, -0.4, -0.5, 0.7, 1.6, 1.9];
    #[differentiable]
    fn euclid_dist_2(a: &[f64], b: &[f64]) -> f64 {
        let mut dist = 0.0;
        for i in 0..a.len() {
            dist += (a[i] - b[i]) * (a[i] - b[i]);
        }
        dist
    }
    #[differentiable]
    fn gb_kmeans(centroids: &[f64]) -> f64 {
        let d = 2;
        let n = KM_PTS.len() / d;
        let k = centroids.len() / d;
        let mut cost = 0.0;
        for i in 0..n {
            let a = &KM_PTS[i * d..(i + 1) * d];
            let mut closest = f64::INFINITY;
            for j in 0..k {
                let b = &centroids[j * d..(j + 1) * d];
                closest = closest.min(euclid_dist_2(a, b));
            }
            cost += closest;
        }
        cost
    }

    // --- GradBench `lstm` (evals/lstm.hpp): one layer, hidden size 2, the state
    //     starts as constants and is updated in place through `&mut [f64]`
    const LSTM_BIAS: [f64; 8] = [0.1, -0.2, 0.05, 0.3, -0.1, 0.2, 0.0, -0.3];
    const LSTM_EXTRA: [f64; 6] = [0.9, 1.1, 0.7, -0.8, 0.05, -0.02];
    const LSTM_SEQ: [f64; 8] = [0.3, 0.7, 0.9, 0.1, 0.2, 0.8, 0.6, 0.4];
    #[differentiable]
    fn sigmoid(v: f64) -> f64 {
        1.0 / (1.0 + (-v).exp())
    }
    #[differentiable]
    fn lstm_cell(w: &[f64], bias: &[f64], hidden: &mut [f64], cell: &mut [f64], input: &[f64]) {
        let b = hidden.len();
        let (wf, wi, wo, wc) = (&w[..b], &w[b..2 * b], &w[2 * b..3 * b], &w[3 * b..]);
        for i in 0..b {
            let forget = sigmoid(input[i] * wf[i] + bias[i]);
            let ingate = sigmoid(hidden[i] * wi[i] + bias[b + i]);
            let outgate = sigmoid(input[i] * wo[i] + bias[2 * b + i]);
            let change = (hidden[i] * wc[i] + bias[3 * b + i]).tanh();
            cell[i] = cell[i] * forget + ingate * change;
            hidden[i] = outgate * cell[i].tanh();
        }
    }
    #[differentiable]
    fn gb_lstm(w: &[f64]) -> f64 {
        let b = 2;
        let mut hidden = vec![0.1, -0.1];
        let mut cell = vec![0.2, 0.05];
        let mut total = 0.0;
        let mut count = 0;
        let steps = LSTM_SEQ.len() / b - 1;
        for t in 0..steps {
            let input = &LSTM_SEQ[t * b..(t + 1) * b];
            let scaled: Vec<f64> = input
                .iter()
                .zip(&LSTM_EXTRA[..b])
                .map(|(x, wi)| x * wi)
                .collect();
            lstm_cell(w, &LSTM_BIAS[..], &mut hidden, &mut cell, &scaled);
            let ypred: Vec<f64> = hidden
                .iter()
                .enumerate()
                .map(|(i, h)| h * LSTM_EXTRA[b + i] + LSTM_EXTRA[2 * b + i])
                .collect();
            let lse = (ypred.iter().map(|v| v.exp()).sum::<f64>() + 2.0).ln();
            let gold = &LSTM_SEQ[(t + 1) * b..(t + 2) * b];
            for i in 0..b {
                total += gold[i] * (ypred[i] - lse);
            }
            count += b;
        }
        -total / count as f64
    }

    // --- GradBench `ba` (evals/ba.hpp): one reprojection error. p = [rot(3), X(3), f, w]
    const BA_C: [f64; 3] = [0.1, -0.2, -3.0];
    const BA_X0: [f64; 2] = [0.02, -0.01];
    const BA_RAD: [f64; 2] = [0.01, -0.002];
    const BA_FEAT: [f64; 2] = [0.3, -0.2];
    #[differentiable]
    fn sqsum(v: &[f64]) -> f64 {
        v.iter().map(|t| t * t).sum()
    }
    #[differentiable]
    fn cross(a: &[f64], b: &[f64]) -> [f64; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }
    #[differentiable]
    fn rodrigues(rot: &[f64], pt: &[f64]) -> [f64; 3] {
        let sqtheta = sqsum(rot);
        if sqtheta != 0.0 {
            let theta = sqtheta.sqrt();
            let (sintheta, costheta) = theta.sin_cos();
            let theta_inverse = 1.0 / theta;
            let w: Vec<f64> = rot.iter().map(|r| r * theta_inverse).collect();
            let w_cross_pt = cross(&w, pt);
            let tmp = (w[0] * pt[0] + w[1] * pt[1] + w[2] * pt[2]) * (1.0 - costheta);
            let mut out = [0.0; 3];
            for i in 0..3 {
                out[i] = pt[i] * costheta + w_cross_pt[i] * sintheta + w[i] * tmp;
            }
            out
        } else {
            let rc = cross(rot, pt);
            [pt[0] + rc[0], pt[1] + rc[1], pt[2] + rc[2]]
        }
    }
    #[differentiable]
    fn radial_distort(rad: &[f64], proj: &mut [f64]) {
        let rsq = proj[0] * proj[0] + proj[1] * proj[1];
        let l = 1.0 + rad[0] * rsq + rad[1] * rsq * rsq;
        proj[0] = proj[0] * l;
        proj[1] = proj[1] * l;
    }
    #[differentiable]
    fn gb_ba_res(p: &[f64]) -> Vec<f64> {
        let rot = &p[0..3];
        let x = &p[3..6];
        let (f, w) = (p[6], p[7]);
        let xo: Vec<f64> = x.iter().zip(BA_C.iter()).map(|(a, c)| a - c).collect();
        let xcam = rodrigues(rot, &xo);
        let mut proj = vec![xcam[0] / xcam[2], xcam[1] / xcam[2]];
        radial_distort(&BA_RAD[..], &mut proj);
        let e0 = w * (proj[0] * f + BA_X0[0] - BA_FEAT[0]);
        let e1 = w * (proj[1] * f + BA_X0[1] - BA_FEAT[1]);
        vec![e0, e1, 1.0 - w * w]
    }
    #[differentiable]
    fn gb_ba(p: &[f64]) -> f64 {
        let r = gb_ba_res(p);
        r.iter().map(|v| v * v).sum()
    }

    // --- GradBench `ht` (evals/ht.hpp), a piece: Euler angles to R_z R_y R_x with
    //     entries written and then read back (`Rx(1,2) = -Rx(2,1)`), a parent–child
    //     chain of two bones, linear-blend skinning of three vertices. Flat 3×3
    //     row-major matrices, as ADBench's LightMatrix.
    #[differentiable]
    fn mat_mult3(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                let mut s = 0.0;
                for k in 0..3 {
                    s += a[i * 3 + k] * b[k * 3 + j];
                }
                out[i * 3 + j] = s;
            }
        }
        out
    }
    #[differentiable]
    fn euler_to_rot(xzy: &[f64]) -> Vec<f64> {
        let (tx, ty, tz) = (xzy[0], xzy[2], xzy[1]);
        let mut rx = vec![0.0; 9];
        let mut ry = vec![0.0; 9];
        let mut rz = vec![0.0; 9];
        for i in 0..3 {
            rx[i * 4] = 1.0;
            ry[i * 4] = 1.0;
            rz[i * 4] = 1.0;
        }
        rx[4] = tx.cos(); // (1,1)
        rx[7] = tx.sin(); // (2,1)
        rx[5] = -rx[7]; // (1,2) = -(2,1)
        rx[8] = rx[4]; // (2,2) = (1,1)
        ry[0] = ty.cos(); // (0,0)
        ry[2] = ty.sin(); // (0,2)
        ry[6] = -ry[2]; // (2,0) = -(0,2)
        ry[8] = ry[0]; // (2,2) = (0,0)
        rz[0] = tz.cos(); // (0,0)
        rz[3] = tz.sin(); // (1,0)
        rz[1] = -rz[3]; // (0,1) = -(1,0)
        rz[4] = rz[0]; // (1,1) = (0,0)
        let tmp = mat_mult3(&rz, &ry);
        mat_mult3(&tmp, &rx)
    }
    #[differentiable]
    fn mat_vec3(m: &[f64], v: &[f64]) -> Vec<f64> {
        (0..3)
            .map(|i| m[i * 3] * v[0] + m[i * 3 + 1] * v[1] + m[i * 3 + 2] * v[2])
            .collect()
    }
    const HT_VERTS: [f64; 9] = [1.0, 0.0, 0.2, 0.5, 0.8, -0.3, -0.4, 0.3, 0.9];
    const HT_WEIGHTS: [f64; 6] = [0.7, 0.3, 0.4, 0.6, 0.1, 0.9];
    const HT_TARGET: [f64; 9] = [0.9, 0.2, 0.1, 0.3, 0.9, -0.1, -0.2, 0.2, 1.0];
    #[differentiable]
    fn gb_ht(theta: &[f64]) -> f64 {
        let rel0 = euler_to_rot(&theta[0..3]);
        let rel1 = euler_to_rot(&theta[3..6]);
        let abs1 = mat_mult3(&rel0, &rel1);
        let mut err = 0.0;
        for v in 0..3 {
            let vert = &HT_VERTS[v * 3..v * 3 + 3];
            let p0 = mat_vec3(&rel0, vert);
            let p1 = mat_vec3(&abs1, vert);
            let mut pos = vec![0.0; 3];
            for i in 0..3 {
                pos[i] += HT_WEIGHTS[v * 2] * p0[i];
                pos[i] += HT_WEIGHTS[v * 2 + 1] * p1[i];
            }
            for i in 0..3 {
                err += (pos[i] - HT_TARGET[v * 3 + i]).powi(2);
            }
        }
        err
    }

    // --- GradBench `gmm` (evals/gmm.hpp): five slice arguments, a `&mut` helper
    //     (Qtimesx) with a running index, logsumexp, the Wishart prior. Plain test below.
    #[differentiable]
    fn gmm_logsumexp(v: &[f64]) -> f64 {
        let mx = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let semx: f64 = v.iter().map(|t| (t - mx).exp()).sum();
        semx.ln() + mx
    }
    #[differentiable]
    fn qtimesx(qdiag: &[f64], ltri: &[f64], x: &[f64], out: &mut [f64]) {
        let d = x.len();
        for id in 0..d {
            out[id] = qdiag[id] * x[id];
        }
        let mut lidx = 0;
        for i in 0..d {
            for j in i + 1..d {
                out[j] = out[j] + ltri[lidx] * x[i];
                lidx += 1;
            }
        }
    }
    #[differentiable]
    fn gmm_objective(alpha: &[f64], mu: &[f64], q: &[f64], l: &[f64], x: &[f64]) -> f64 {
        let d = 2;
        let k = alpha.len();
        let n = x.len() / d;
        let lsz = d * (d - 1) / 2;
        let (gamma, m) = (1.0, 1);
        let qdiags: Vec<f64> = q.iter().map(|v| v.exp()).collect();
        let sum_qs: Vec<f64> = q.chunks(d).map(|c| c.iter().sum::<f64>()).collect();
        let mut slse = 0.0;
        let mut xcentered = vec![0.0; d];
        let mut qx = vec![0.0; d];
        let mut main_term = vec![0.0; k];
        for ix in 0..n {
            for ik in 0..k {
                for j in 0..d {
                    xcentered[j] = x[ix * d + j] - mu[ik * d + j];
                }
                qtimesx(
                    &qdiags[ik * d..(ik + 1) * d],
                    &l[ik * lsz..(ik + 1) * lsz],
                    &xcentered,
                    &mut qx,
                );
                main_term[ik] =
                    alpha[ik] + sum_qs[ik] - 0.5 * qx.iter().map(|v| v * v).sum::<f64>();
            }
            slse += gmm_logsumexp(&main_term);
        }
        let constant = -(n as f64) * d as f64 * 0.5 * (2.0 * std::f64::consts::PI).ln();
        let lse_alpha = gmm_logsumexp(alpha);
        let mut prior = 0.0;
        for ik in 0..k {
            let frob = qdiags[ik * d..(ik + 1) * d]
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
                + l[ik * lsz..(ik + 1) * lsz]
                    .iter()
                    .map(|v| v * v)
                    .sum::<f64>();
            prior += 0.5 * gamma * gamma * frob - m as f64 * sum_qs[ik];
        }
        constant + slse - n as f64 * lse_alpha - prior
    }

    // --- explicit heat-equation stencil with double buffering by `std::mem::swap`
    //     of two active `Vec`s; the stale buffer is read after the loop
    #[differentiable]
    fn heat_swap(x: &[f64]) -> f64 {
        let n = x.len();
        let mut cur = x.to_vec();
        let mut next = vec![0.0; n];
        for _ in 0..4 {
            next[0] = cur[0];
            next[n - 1] = cur[n - 1];
            for i in 1..n - 1 {
                next[i] = cur[i]
                    + 0.25 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1])
                    + 0.1 * cur[i] * cur[i];
            }
            std::mem::swap(&mut cur, &mut next);
        }
        cur.iter()
            .enumerate()
            .map(|(i, v)| v * (1.0 + i as f64 * 0.1))
            .sum::<f64>()
            + next[2] * next[1]
    }

    // --- modified Gram–Schmidt on rows of a Vec<Vec<f64>>, in place; the helper is
    //     given two rows of the same matrix, and the same row twice (for the norm)
    #[differentiable]
    fn vdot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(p, q)| p * q).sum()
    }
    #[differentiable]
    fn gram_schmidt(x: &[f64]) -> f64 {
        let mut v: Vec<Vec<f64>> = x.chunks(3).map(|c| c.to_vec()).collect();
        for j in 0..v.len() {
            for k in 0..j {
                let d = vdot(&v[j], &v[k]);
                for t in 0..3 {
                    v[j][t] -= d * v[k][t];
                }
            }
            let nrm = vdot(&v[j], &v[j]).sqrt();
            for t in 0..3 {
                v[j][t] /= nrm;
            }
        }
        v[1][0] * 2.0 + v[1][2] * v[0][1] + v[0][0].powi(3) + v[2][1] * v[2][2]
    }

    // --- power iteration with renormalisation every step, then the Rayleigh quotient
    #[differentiable]
    fn power_iteration(x: &[f64]) -> f64 {
        let a = vec![
            3.0 + x[0],
            x[1],
            x[2],
            x[1],
            2.0 + x[3],
            x[4],
            x[2],
            x[4],
            1.0 + x[5],
        ];
        let mut v = vec![1.0, 0.5, 0.25];
        for _ in 0..40 {
            let mut y = vec![0.0; 3];
            for i in 0..3 {
                for j in 0..3 {
                    y[i] += a[i * 3 + j] * v[j];
                }
            }
            let nrm = y.iter().map(|t| t * t).sum::<f64>().sqrt();
            for i in 0..3 {
                v[i] = y[i] / nrm;
            }
        }
        let mut rq = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                rq += v[i] * a[i * 3 + j] * v[j];
            }
        }
        rq
    }

    // --- 1-D convolution (windows × const kernel, tanh) then max-pool over windows
    const KERNEL: [f64; 3] = [0.25, 0.5, -0.3];
    #[differentiable]
    fn conv_pool(x: &[f64]) -> f64 {
        let conv: Vec<f64> = x
            .windows(3)
            .map(|w| {
                w.iter()
                    .zip(KERNEL.iter())
                    .map(|(a, k)| a * k)
                    .sum::<f64>()
                    .tanh()
            })
            .collect();
        let pooled: Vec<f64> = conv.windows(2).map(|w| w[0].max(w[1])).collect();
        pooled.iter().map(|v| v * v).sum::<f64>() + conv[0]
    }

    // --- Thomas algorithm (tridiagonal solve): forward sweep, then a reversed
    //     back-substitution reading the element written on the previous trip
    #[differentiable]
    fn thomas_solve(x: &[f64]) -> f64 {
        let n = x.len();
        let a = -1.0;
        let c = -1.0;
        let b: Vec<f64> = x.iter().map(|v| 2.5 + v * v).collect();
        let d: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| v + 0.1 * i as f64)
            .collect();
        let mut cp = vec![0.0; n];
        let mut dp = vec![0.0; n];
        cp[0] = c / b[0];
        dp[0] = d[0] / b[0];
        for i in 1..n {
            let m = b[i] - a * cp[i - 1];
            cp[i] = c / m;
            dp[i] = (d[i] - a * dp[i - 1]) / m;
        }
        let mut sol = vec![0.0; n];
        sol[n - 1] = dp[n - 1];
        for i in (0..n - 1).rev() {
            sol[i] = dp[i] - cp[i] * sol[i + 1];
        }
        sol.iter()
            .enumerate()
            .map(|(i, s)| s * (1.0 + i as f64))
            .sum::<f64>()
            + sol[0] * sol[n - 1]
    }

    // --- Horner evaluating p and p' together (order of the two updates matters),
    //     three Newton steps for a root of the polynomial with coefficients c
    #[differentiable]
    fn horner_newton(c: &[f64]) -> f64 {
        let n = c.len() - 1;
        let mut t = 1.5;
        for _ in 0..3 {
            let mut p = c[n];
            let mut dp = 0.0;
            for i in (0..n).rev() {
                dp = dp * t + p;
                p = p * t + c[i];
            }
            t -= p / dp;
        }
        t
    }

    // --- HMM forward algorithm in log space; the accumulator starts at −∞ and the
    //     message vector is replaced whole each step
    const HMM_LOGA: [f64; 4] = [-0.2, -1.7, -0.9, -0.5];
    const HMM_OBS: [usize; 5] = [0, 1, 1, 0, 1];
    #[differentiable]
    fn lse2(a: f64, b: f64) -> f64 {
        let m = a.max(b);
        m + ((a - m).exp() + (b - m).exp()).ln()
    }
    #[differentiable]
    fn hmm_forward(x: &[f64]) -> f64 {
        let s = 2;
        let mut alpha: Vec<f64> = (0..s).map(|j| x[j] + x[2 + j * 2 + HMM_OBS[0]]).collect();
        for t in 1..HMM_OBS.len() {
            let mut next = vec![0.0; s];
            for j in 0..s {
                let mut acc = f64::NEG_INFINITY;
                for i in 0..s {
                    acc = lse2(acc, alpha[i] + HMM_LOGA[i * s + j]);
                }
                next[j] = acc + x[2 + j * 2 + HMM_OBS[t]];
            }
            alpha = next;
        }
        lse2(alpha[0], alpha[1])
    }

    mod t {
        use crate::all_orders;
        all_orders!(gb_lse, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(lse_chunks, [0.4, 1.3, -0.7, 0.2, 0.9, 1.1]);
        all_orders!(gb_ode, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(gb_det, [0.4, 1.3, -0.7, 0.2, 0.9, 1.1, -0.3, 0.5, 0.8]);
        all_orders!(gb_kmeans, [0.0, 0.3, 1.2, 1.0, 2.0, -0.2]);
        all_orders!(gb_lstm, [0.5, -0.3, 0.8, 0.2, -0.6, 0.9, 0.4, -0.1]);
        all_orders!(gb_ba, [0.1, -0.2, 0.15, 0.3, 0.5, 2.0, 1.5, 0.9]);
        all_orders!(gb_ht, [0.3, -0.2, 0.5, 0.1, 0.4, -0.3]);
        all_orders!(heat_swap, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(
            gram_schmidt,
            [1.0, 0.2, -0.3, 0.4, 1.1, 0.5, -0.2, 0.3, 0.9]
        );
        all_orders!(power_iteration, [0.2, 0.3, -0.1, 0.4, 0.25, -0.2]);
        all_orders!(conv_pool, [0.4, 1.3, -0.7, 0.2, 0.9, 1.1, -0.3]);
        all_orders!(thomas_solve, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(horner_newton, [-2.0, 0.5, 0.3, 0.4]);
        all_orders!(hmm_forward, [-0.3, -1.2, -0.4, -1.1, -0.9, -0.6]);
    }

    #[test]
    fn jacobians_of_vector_outputs() {
        let x = [0.4, 1.3, -0.7, 0.2, 0.9];
        let (val, j) = gb_ode_vec::jacobian(&x);
        close("gb_ode_vec value", &val, &gb_ode_vec(&x));
        check_jac("gb_ode_vec", &j, &|z| gb_ode_vec(z), &x);
        let v = [0.3, -0.2, 0.5, 0.1, -0.4];
        let (y, jv) = gb_ode_vec::jvp(&x, &v);
        close("gb_ode_vec jvp value", &y, &gb_ode_vec(&x));
        check_jvp("gb_ode_vec", &j, &jv, &v);

        let p = [0.1, -0.2, 0.15, 0.3, 0.5, 2.0, 1.5, 0.9];
        let (val, j) = gb_ba_res::jacobian(&p);
        close("gb_ba_res value", &val, &gb_ba_res(&p));
        check_jac("gb_ba_res", &j, &|z| gb_ba_res(z), &p);
        let v = [0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.7, -0.1];
        let (_, jv) = gb_ba_res::jvp(&p, &v);
        check_jvp("gb_ba_res", &j, &jv, &v);
    }

    #[test]
    fn gmm_objective_all_arguments() {
        let alpha = vec![0.3, -0.2];
        let mu = vec![0.1, 0.4, 1.2, -0.3];
        let q = vec![0.2, -0.1, 0.05, 0.3];
        let l = vec![0.4, -0.25];
        let x = vec![0.0, 0.5, 1.0, -0.2, 0.7, 0.3];
        let sizes = [2usize, 4, 4, 2, 6];
        let split = |z: &[f64]| -> Vec<Vec<f64>> {
            let mut out = Vec::new();
            let mut at = 0;
            for &s in sizes.iter() {
                out.push(z[at..at + s].to_vec());
                at += s;
            }
            out
        };
        let flat: Vec<f64> = [&alpha[..], &mu[..], &q[..], &l[..], &x[..]].concat();
        let f = |z: &[f64]| {
            let p = split(z);
            gmm_objective(&p[0], &p[1], &p[2], &p[3], &p[4])
        };
        let (ga, gm, gq, gl, gx) = gmm_objective::gradient(&alpha, &mu, &q, &l, &x);
        let g: Vec<f64> = [ga, gm, gq, gl, gx].concat();
        close("gmm gradient", &g, &fd(&f, &flat));

        let gf = |z: &[f64]| -> Vec<f64> {
            let p = split(z);
            let (a, b, c, d, e) = gmm_objective::gradient(&p[0], &p[1], &p[2], &p[3], &p[4]);
            [a, b, c, d, e].concat()
        };
        let h = gmm_objective::hessian(&alpha, &mu, &q, &l, &x);
        assert_hessian_matches("gmm", gf, &h, &flat, 1e-4);
    }
}

/// The test functions of DiffTests.jl (number, vector and matrix to number; vector to vector; in-place mutation tests; triangular and dense solves).
mod difftests {
    use super::common::*;
    use mochi::prelude::*;

    // --- NUMBER_TO_NUMBER_FUNCS
    #[differentiable]
    fn num2num_1(x: f64) -> f64 {
        x.sin().powi(2) / x.cos().powi(2)
    }
    #[differentiable]
    fn num2num_2(x: f64) -> f64 {
        2.0 * x + (x * x * x).sqrt()
    }
    #[differentiable]
    fn num2num_3(x: f64) -> f64 {
        10.31_f64.powf(x + x) - x
    }
    #[differentiable]
    fn num2num_5(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }
    #[differentiable]
    fn dt_num2num(x: &[f64]) -> f64 {
        num2num_1(x[0]) + num2num_2(x[1]) * num2num_3(x[2]) + num2num_5(x[0] * x[1])
    }

    // --- num2arr_1!(y, x): fill!(y, 0); y[i] = (sin(x) + y[i-1])^2. The buffer comes
    //     in holding active garbage that `fill` must discard.
    #[differentiable]
    fn num2arr_fill(y: &mut [f64], x: f64) {
        y.fill(0.0);
        for i in 1..y.len() {
            y[i] = (x.sin() + y[i - 1]).powi(2);
        }
    }
    #[differentiable]
    fn dt_num2arr(x: &[f64]) -> f64 {
        let mut y = vec![x[1]; 4];
        num2arr_fill(&mut y, x[0]);
        y.iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v)
            .sum::<f64>()
            * x[1]
    }

    // --- VECTOR_TO_NUMBER_FUNCS: vec2num_1, _2, _4 (dead work, constant), _5, _7
    #[differentiable]
    fn dt_vec2num(x: &[f64]) -> f64 {
        let v1 = (x[0].exp() + x[2].ln() * x[3]) / x[4];
        let v2 = x[0] * x[1] + x[0].sin();
        let v5: f64 = x.iter().map(|v| (-v).powi(3)).sum();
        let v7: f64 = x.iter().map(|y| x[0] * y).sum();
        let _v4 = x.iter().sum::<f64>() + x.iter().product::<f64>();
        v1 + v2 * v5 + v7
    }

    // --- vec2num_3(x) = norm(x' .* x): Frobenius norm of the outer product
    #[differentiable]
    fn dt_vec2num_3(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for a in x {
            for b in x {
                s += (a * b).powi(2);
            }
        }
        s.sqrt()
    }

    // --- rosenbrock_2: a = x[1], b = 100a captured by the mapped closure
    #[differentiable]
    fn dt_rosenbrock_2(x: &[f64]) -> f64 {
        let a = x[0];
        let b = 100.0 * a;
        let n = x.len();
        x[1..]
            .iter()
            .zip(&x[..n - 1])
            .map(|(i, j)| (a - j).powi(2) + b * (i - j * j).powi(2))
            .sum()
    }

    // --- rosenbrock_4: broadcasts over shifted views, abs then square
    #[differentiable]
    fn dt_rosenbrock_4(x: &[f64]) -> f64 {
        let n = x.len();
        let t1: Vec<f64> = x[..n - 1].iter().map(|v| (1.0 + v).powi(2)).collect();
        let t2: Vec<f64> = x[1..]
            .iter()
            .zip(&x[..n - 1])
            .map(|(a, b)| a + b * b)
            .collect();
        t1.iter()
            .zip(&t2)
            .map(|(a, b)| a + 100.0 * b.abs().powi(2))
            .sum()
    }

    // --- nested_array_mul(x) = sum(sum(x[1] * [[x[2], x[3]]]))
    #[differentiable]
    fn dt_nested_array_mul(x: &[f64]) -> f64 {
        let inner = vec![vec![x[1], x[2]]];
        let scaled: Vec<Vec<f64>> = inner
            .iter()
            .map(|r| r.iter().map(|v| x[0] * v).collect())
            .collect();
        scaled.iter().map(|r| r.iter().sum::<f64>()).sum::<f64>() * x[1]
    }

    // --- mat2num_1(x) = det(first(x) * inv(x * x) + x), 2×2 row-major, helpers
    //     returning fixed-size arrays
    #[differentiable]
    fn mul2(a: &[f64], b: &[f64]) -> [f64; 4] {
        [
            a[0] * b[0] + a[1] * b[2],
            a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2],
            a[2] * b[1] + a[3] * b[3],
        ]
    }
    #[differentiable]
    fn inv2(a: &[f64]) -> [f64; 4] {
        let det = a[0] * a[3] - a[1] * a[2];
        [a[3] / det, -a[1] / det, -a[2] / det, a[0] / det]
    }
    #[differentiable]
    fn dt_mat2num_1(x: &[f64]) -> f64 {
        let xx = mul2(x, x);
        let inv = inv2(&xx);
        let m: Vec<f64> = inv.iter().zip(x).map(|(i, v)| x[0] * i + v).collect();
        m[0] * m[3] - m[1] * m[2]
    }

    // --- mat2num_2(x) = tr(log.((1 .+ a*b) .+ a .- b)): the whole matrix is built,
    //     only its diagonal is used; several off-diagonal entries are log of a negative
    //     number (NaN), computed and never read.
    #[differentiable]
    fn dt_mat2num_2(x: &[f64]) -> f64 {
        let n = x.len();
        let mut m = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                m[i][j] = (1.0 + x[i] * x[j] + x[i] - x[j]).ln();
            }
        }
        (0..n).map(|i| m[i][i]).sum()
    }

    // --- mat2num_3(x) = sum(map(n -> sqrt(abs(n) + n^2) * 0.5, A))
    #[differentiable]
    fn dt_mat2num_3(x: &[f64]) -> f64 {
        x.iter().map(|n| (n.abs() + n * n).sqrt() * 0.5).sum()
    }

    // --- softmax(x) = sum(exp.(x) ./ sum(exp.(x), dims=2)) on a 2×3 matrix, weighted
    //     (the unweighted sum is the constant 2)
    const SM_W: [f64; 6] = [1.0, -0.5, 2.0, 0.3, 1.5, -1.0];
    #[differentiable]
    fn dt_softmax(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (r, row) in x.chunks(3).enumerate() {
            let z: f64 = row.iter().map(|v| v.exp()).sum();
            for (j, v) in row.iter().enumerate() {
                s += SM_W[r * 3 + j] * v.exp() / z;
            }
        }
        s
    }

    // --- neural_step(x1, w1, w2) = sigmoid(dot(w2[1:k], relu(w1 * x1[1:k]))), relu = softplus
    #[differentiable]
    fn softplus_vec(v: &[f64]) -> Vec<f64> {
        v.iter().map(|t| (1.0 + t.exp()).ln()).collect()
    }
    #[differentiable]
    fn dt_neural_step(x1: &[f64], w1: &[Vec<f64>], w2: &[f64]) -> f64 {
        let k = w1[0].len();
        let h: Vec<f64> = w1
            .iter()
            .map(|row| row.iter().zip(&x1[..k]).map(|(a, b)| a * b).sum::<f64>())
            .collect();
        let r = softplus_vec(&h);
        let z: f64 = w2[..k].iter().zip(&r).map(|(a, b)| a * b).sum();
        1.0 / (1.0 + (-z).exp())
    }

    // --- chebyquad!(y, x): y[i] += temp2 inside nested loops, scalar recurrences,
    //     then y[k] *= tk and a float flag toggled every trip
    #[differentiable]
    fn chebyquad_into(y: &mut [f64], x: &[f64]) {
        let tk = 1.0 / x.len() as f64;
        for j in 0..x.len() {
            let mut temp1 = 1.0;
            let mut temp2 = 2.0 * x[j] - 1.0;
            let temp = 2.0 * temp2;
            for i in 0..y.len() {
                y[i] += temp2;
                let ti = temp * temp2 - temp1;
                temp1 = temp2;
                temp2 = ti;
            }
        }
        let mut iev = -1.0;
        for k in 0..y.len() {
            y[k] *= tk;
            if iev > 0.0 {
                y[k] += 1.0 / (((k + 1) * (k + 1)) as f64 - 1.0);
            }
            iev = -iev;
        }
    }
    #[differentiable]
    fn dt_chebyquad(x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; x.len()];
        chebyquad_into(&mut y, x);
        y
    }
    #[differentiable]
    fn dt_chebyquad_sq(x: &[f64]) -> f64 {
        let y = dt_chebyquad(x);
        y.iter().map(|v| v * v).sum()
    }

    // --- brown_almost_linear!(y, x): y[j] += x[i] + c over i, j; y[end] = prod(x) - 1
    #[differentiable]
    fn brown_into(y: &mut [f64], x: &[f64]) {
        let n = x.len();
        let m = y.len();
        let c = x.iter().sum::<f64>() - (n as f64 + 1.0);
        for i in 0..n - 1 {
            for j in 0..m - 1 {
                y[j] += x[i] + c;
            }
        }
        y[m - 1] = x.iter().product::<f64>() - 1.0;
    }
    #[differentiable]
    fn dt_brown(x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; x.len()];
        brown_into(&mut y, x);
        y
    }
    #[differentiable]
    fn dt_brown_sq(x: &[f64]) -> f64 {
        let y = dt_brown(x);
        y.iter().map(|v| v * v).sum()
    }

    // --- trigonometric!(y, x): y overwritten on every trip of the outer loop (only
    //     the last x counts), c = sum(y), then y[j] = sin(x_i) * y[j] + n - c
    #[differentiable]
    fn trig_into(y: &mut [f64], x: &[f64]) {
        for &xi in x {
            for j in 0..y.len() {
                y[j] = xi.cos();
            }
        }
        let c: f64 = y.iter().sum();
        let n = x.len() as f64;
        for &xi in x {
            for yj in y.iter_mut() {
                *yj = xi.sin() * *yj + n - c;
            }
        }
    }
    #[differentiable]
    fn dt_trigonometric(x: &[f64]) -> Vec<f64> {
        let mut y = vec![1.0; x.len()];
        trig_into(&mut y, x);
        y
    }
    #[differentiable]
    fn dt_trig_sq(x: &[f64]) -> f64 {
        let y = dt_trigonometric(x);
        y.iter()
            .enumerate()
            .map(|(j, v)| (j as f64 + 1.0) * v * v)
            .sum()
    }

    // --- mutation_test_1!, mutation_test_2!: element writes that read themselves,
    //     y[3] = sum(y) including its own old value
    #[differentiable]
    fn mutation_into_1(y: &mut [f64], x: &[f64]) {
        y[0] = x[0];
        y[0] = y[0] * x[1];
        y[1] = y[1] * x[2];
        y[2] = y.iter().sum::<f64>();
    }
    #[differentiable]
    fn dt_mutation_1(x: &[f64]) -> Vec<f64> {
        let mut y: Vec<f64> = x.iter().map(|v| 0.5 * v).collect();
        mutation_into_1(&mut y, x);
        y
    }
    #[differentiable]
    fn mutation_into_2(y: &mut [f64], x: &[f64]) {
        y[0] *= x[0];
        y[1] *= x[0];
        y[0] *= x[1];
        y[1] *= x[1];
    }
    #[differentiable]
    fn dt_mutation_2(x: &[f64]) -> Vec<f64> {
        let mut y = vec![1.0; x.len()];
        mutation_into_2(&mut y, x);
        y
    }
    #[differentiable]
    fn dt_mutations(x: &[f64]) -> f64 {
        let a = dt_mutation_1(x);
        let b = dt_mutation_2(x);
        a.iter().zip(&b).map(|(p, q)| p * q + p.sin()).sum()
    }

    // --- ltriag_ldiv / utriag_ldiv with the Lehmer matrix (min(i,j)/max(i,j)):
    //     forward substitution, and back substitution in place over a reversed range
    #[differentiable]
    fn dt_ltriag_ldiv(b: &[f64]) -> Vec<f64> {
        let n = b.len();
        let mut out = vec![0.0; n];
        for i in 0..n {
            let mut s = b[i];
            for j in 0..i {
                let l = (j + 1) as f64 / (i + 1) as f64;
                s -= l * out[j];
            }
            out[i] = s;
        }
        out
    }
    #[differentiable]
    fn dt_utriag_ldiv(b: &[f64]) -> Vec<f64> {
        let n = b.len();
        let mut out = b.to_vec();
        for i in (0..n).rev() {
            for j in i + 1..n {
                let u = (i + 1) as f64 / (j + 1) as f64;
                out[i] -= u * out[j];
            }
        }
        out
    }
    #[differentiable]
    fn dt_tri_solves(x: &[f64]) -> f64 {
        let l = dt_ltriag_ldiv(x);
        let u = dt_utriag_ldiv(&l);
        u.iter().zip(x).map(|(p, q)| p * q.sin()).sum::<f64>() + u[0] * l[l.len() - 1]
    }

    // --- dense_ldiv: Lehmer(n) \ b by Gaussian elimination on copies
    #[differentiable]
    fn dt_dense_ldiv(b: &[f64]) -> Vec<f64> {
        let n = b.len();
        let mut a: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (i.min(j) + 1) as f64 / (i.max(j) + 1) as f64)
                    .collect()
            })
            .collect();
        let mut z = b.to_vec();
        for k in 0..n {
            for i in k + 1..n {
                let f = a[i][k] / a[k][k];
                for j in k..n {
                    a[i][j] -= f * a[k][j];
                }
                z[i] -= f * z[k];
            }
        }
        for i in (0..n).rev() {
            for j in i + 1..n {
                z[i] -= a[i][j] * z[j];
            }
            z[i] /= a[i][i];
        }
        z
    }
    // --- the same elimination with an active matrix (Lehmer + diag(x²)), b = 1
    #[differentiable]
    fn dt_dense_solve_active(x: &[f64]) -> f64 {
        let n = x.len();
        let mut a = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                a[i][j] = (i.min(j) + 1) as f64 / (i.max(j) + 1) as f64;
            }
            a[i][i] += x[i] * x[i];
        }
        let mut z = vec![1.0; n];
        for k in 0..n {
            for i in k + 1..n {
                let f = a[i][k] / a[k][k];
                for j in k..n {
                    a[i][j] -= f * a[k][j];
                }
                z[i] -= f * z[k];
            }
        }
        for i in (0..n).rev() {
            for j in i + 1..n {
                z[i] -= a[i][j] * z[j];
            }
            z[i] /= a[i][i];
        }
        z.iter()
            .enumerate()
            .map(|(i, v)| v * (i as f64 + 1.0))
            .sum()
    }

    mod t {
        use crate::all_orders;
        all_orders!(dt_num2num, [0.4, 1.3, 0.7]);
        all_orders!(dt_num2arr, [0.3, 1.3]);
        all_orders!(dt_vec2num, [0.4, 1.3, 0.7, -0.5, 1.1]);
        all_orders!(dt_vec2num_3, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(dt_rosenbrock_2, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(dt_rosenbrock_4, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(dt_nested_array_mul, [0.4, 1.3, -0.7]);
        all_orders!(dt_mat2num_1, [1.2, 0.3, -0.4, 0.9]);
        all_orders!(dt_mat2num_2, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(dt_mat2num_3, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(dt_softmax, [0.4, 1.3, -0.7, 0.2, 0.9, 1.1]);
        all_orders!(dt_chebyquad_sq, [0.3, 0.6, 0.8, 0.15]);
        all_orders!(dt_brown_sq, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(dt_trig_sq, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(dt_mutations, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(dt_tri_solves, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(dt_dense_solve_active, [0.4, 1.3, -0.7, 0.2]);
    }

    #[test]
    fn inplace_array_to_array_jacobians() {
        type F = fn(&[f64]) -> Vec<f64>;
        let cases: Vec<(&str, Vec<f64>)> = vec![
            ("chebyquad", vec![0.3, 0.6, 0.8, 0.15]),
            ("brown", vec![0.4, 1.3, -0.7, 0.2]),
            ("trigonometric", vec![0.4, 1.3, -0.7, 0.2]),
            ("mutation_1", vec![0.4, 1.3, -0.7, 0.2]),
            ("mutation_2", vec![0.4, 1.3, -0.7, 0.2]),
            ("ltriag_ldiv", vec![0.4, 1.3, -0.7, 0.2, 0.9]),
            ("utriag_ldiv", vec![0.4, 1.3, -0.7, 0.2, 0.9]),
            ("dense_ldiv", vec![0.4, 1.3, -0.7, 0.2, 0.9]),
        ];
        for (name, x) in cases {
            let v: Vec<f64> = (0..x.len()).map(|i| 0.3 - 0.2 * i as f64).collect();
            let (f, (val, j), (jy, jv)): (F, _, _) = match name {
                "chebyquad" => (
                    dt_chebyquad as F,
                    dt_chebyquad::jacobian(&x),
                    dt_chebyquad::jvp(&x, &v),
                ),
                "brown" => (dt_brown as F, dt_brown::jacobian(&x), dt_brown::jvp(&x, &v)),
                "trigonometric" => (
                    dt_trigonometric as F,
                    dt_trigonometric::jacobian(&x),
                    dt_trigonometric::jvp(&x, &v),
                ),
                "mutation_1" => (
                    dt_mutation_1 as F,
                    dt_mutation_1::jacobian(&x),
                    dt_mutation_1::jvp(&x, &v),
                ),
                "mutation_2" => (
                    dt_mutation_2 as F,
                    dt_mutation_2::jacobian(&x),
                    dt_mutation_2::jvp(&x, &v),
                ),
                "ltriag_ldiv" => (
                    dt_ltriag_ldiv as F,
                    dt_ltriag_ldiv::jacobian(&x),
                    dt_ltriag_ldiv::jvp(&x, &v),
                ),
                "utriag_ldiv" => (
                    dt_utriag_ldiv as F,
                    dt_utriag_ldiv::jacobian(&x),
                    dt_utriag_ldiv::jvp(&x, &v),
                ),
                _ => (
                    dt_dense_ldiv as F,
                    dt_dense_ldiv::jacobian(&x),
                    dt_dense_ldiv::jvp(&x, &v),
                ),
            };
            close(&format!("{name} value"), &val, &f(&x));
            close(&format!("{name} jvp value"), &jy, &f(&x));
            check_jac(name, &j, &|z| f(z), &x);
            check_jvp(name, &j, &jv, &v);
        }
    }

    #[test]
    fn dense_ldiv_is_the_inverse() {
        // Lehmer(n) · (Lehmer(n) \ b) = b, so the Jacobian times Lehmer is the identity.
        let x = vec![0.4, 1.3, -0.7, 0.2, 0.9];
        let n = x.len();
        let (_, j) = dt_dense_ldiv::jacobian(&x);
        for r in 0..n {
            for c in 0..n {
                let t: f64 = (0..n)
                    .map(|k| ((r.min(k) + 1) as f64 / (r.max(k) + 1) as f64) * j[[k, c]])
                    .sum();
                let want = if r == c { 1.0 } else { 0.0 };
                assert!((t - want).abs() < 1e-9, "A·J [{r},{c}] = {t}");
            }
        }
    }

    #[test]
    fn neural_step_three_arguments() {
        let x1 = vec![0.5, -0.3, 0.8];
        let w1 = vec![
            vec![0.2, -0.4, 0.7],
            vec![1.1, 0.3, -0.2],
            vec![-0.5, 0.9, 0.4],
        ];
        let w2 = vec![0.6, -1.2, 0.8];
        let (gx1, gw1, gw2) = dt_neural_step::gradient(&x1, &w1, &w2);
        close(
            "neural_step dx1",
            &gx1,
            &fd(&|z| dt_neural_step(z, &w1, &w2), &x1),
        );
        close(
            "neural_step dw2",
            &gw2,
            &fd(&|z| dt_neural_step(&x1, &w1, z), &w2),
        );
        let flat_w1: Vec<f64> = w1.concat();
        let gflat: Vec<f64> = gw1.concat();
        let rebuild = |z: &[f64]| -> Vec<Vec<f64>> { z.chunks(3).map(|c| c.to_vec()).collect() };
        close(
            "neural_step dw1",
            &gflat,
            &fd(&|z| dt_neural_step(&x1, &rebuild(z), &w2), &flat_w1),
        );
    }
}

/// Cases from JAX's, Enzyme's and Mooncake.jl's test suites (cumulative sums and products, `where` with discarded NaNs, softmax, log-add-exp, Enzyme's loops with breaks and in-place sorts, Mooncake's phi nodes and self-referencing recursion) and everyday Rust idioms.
mod jax_enzyme_mooncake {
    use super::common::*;
    use mochi::prelude::*;

    // --- JAX cumsum(reverse=True) via rev + scan + collect
    #[differentiable]
    fn jax_cumsum_rev(x: &[f64]) -> f64 {
        let c: Vec<f64> = x
            .iter()
            .rev()
            .scan(0.0, |s, &v| {
                *s += v;
                Some(*s)
            })
            .collect();
        c.iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v.sin())
            .sum()
    }

    // --- JAX cumprod: running product pushed into a Vec, last element reused
    #[differentiable]
    fn jax_cumprod(x: &[f64]) -> f64 {
        let mut p = 1.0;
        let mut out = Vec::with_capacity(x.len());
        for &v in x {
            p *= v;
            out.push(p);
        }
        out.iter().sum::<f64>() + out[out.len() - 1] * x[0]
    }

    // --- JAX cummax (lax.cummax): running max from −∞
    #[differentiable]
    fn jax_cummax(x: &[f64]) -> f64 {
        let mut m = f64::NEG_INFINITY;
        let mut out = Vec::with_capacity(x.len());
        for &v in x {
            m = m.max(v);
            out.push(m);
        }
        out.iter()
            .enumerate()
            .map(|(i, v)| v * v * (i as f64 + 1.0))
            .sum()
    }

    // --- JAX `where` NaN trap: sqrt/ln of negatives computed on the branch not taken
    #[differentiable]
    fn jax_where_nan(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x {
            let r = v.sqrt();
            let l = v.ln();
            s += if v > 0.0 { r * l } else { v * v };
        }
        s
    }

    // --- JAX softmax (max-shifted) as a Vec, then its entropy
    #[differentiable]
    fn jax_softmax(x: &[f64]) -> Vec<f64> {
        let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        e.iter().map(|v| v / s).collect()
    }
    #[differentiable]
    fn jax_softmax_entropy(x: &[f64]) -> f64 {
        let p = jax_softmax(x);
        -p.iter().map(|q| q * q.ln()).sum::<f64>()
    }

    // --- JAX linalg.norm with ord = 3, a hypot fold (starting at 0), ord = 1
    #[differentiable]
    fn jax_norms(x: &[f64]) -> f64 {
        let l3 = x.iter().map(|v| v.abs().powi(3)).sum::<f64>().cbrt();
        let l2 = x.iter().fold(0.0, |acc: f64, &b| acc.hypot(b));
        let l1: f64 = x.iter().map(|v| v.abs()).sum();
        l3 * l2 + l1 * x[0]
    }

    // --- JAX logaddexp reduction from −∞ (a known NaN trap in JAX itself)
    #[differentiable]
    fn jax_logaddexp_fold(x: &[f64]) -> f64 {
        let r = x.iter().fold(f64::NEG_INFINITY, |a, &b| {
            let m = a.max(b);
            m + ((a - m).exp() + (b - m).exp()).ln()
        });
        r * x[0] + r
    }

    // --- Enzyme sumtil.c: read, break on the running value, read again, zero the element
    #[differentiable]
    fn enzyme_sumtil(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let mut ret = 0.0;
        for i in 0..v.len() {
            ret += v[i] * v[i];
            if ret > 3.0 {
                break;
            }
            ret += v[i] * v[i];
            v[i] = 0.0;
        }
        ret + v.iter().sum::<f64>()
    }

    // --- Enzyme insertsort_sum.c: insertion sort (descending) by swaps in a
    //     data-dependent while loop, then the first half
    #[differentiable]
    fn enzyme_insertsort_sum(x: &[f64]) -> f64 {
        let mut a = x.to_vec();
        let n = a.len();
        for i in 1..n {
            let mut j = i;
            while j > 0 && a[j - 1] < a[j] {
                a.swap(j - 1, j);
                j -= 1;
            }
        }
        a[..n / 2].iter().map(|v| v * v).sum::<f64>() + a[n - 1].exp()
    }

    // --- Enzyme manymax.c (alldiv): start overwritten by whichever element beats it
    #[differentiable]
    fn enzyme_manymax(x: &[f64]) -> f64 {
        let mut start = 0.5 * x[0];
        for i in 0..x.len() {
            if x[i] > start {
                start = x[i];
            }
        }
        start * start + x[0]
    }

    // --- Enzyme fwdsolve.c: forward substitution with its odd bound `j < i - 1`;
    //     the matrix is a vec! mixing constants and active entries
    #[differentiable]
    fn forward_sub(n: usize, l: &[f64], b: &[f64], out: &mut [f64]) {
        for i in 0..n {
            let mut tmp = b[i];
            if i > 1 {
                for j in 0..i - 1 {
                    tmp -= l[i * n + j] * out[j];
                }
            }
            out[i] = tmp;
        }
    }
    #[differentiable]
    fn enzyme_fwdsolve(p: &[f64]) -> f64 {
        let n = 3;
        let l = vec![1.0, 0.0, 0.0, p[0], 1.0, 0.0, p[1], p[2], 1.0];
        let b = &p[3..6];
        let mut out = vec![0.0; n];
        forward_sub(n, &l, b, &mut out);
        out.iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v * v)
            .sum::<f64>()
            + out[2] * p[1]
    }

    // --- Enzyme rwrloop.c: read-write-read; the helper zeroes what it read, and the
    //     caller reads the zeroed buffer afterwards (sin(0) has derivative 1)
    #[differentiable]
    fn rwr_sum(a: &mut [f64], n: usize) -> f64 {
        let mut sum = 0.0;
        for i in 0..3 {
            for j in 0..n {
                sum += a[3 * i + j] * a[3 * i + j];
                a[3 * i + j] = 0.0;
            }
        }
        sum
    }
    #[differentiable]
    fn enzyme_rwrloop(x: &[f64]) -> f64 {
        let mut a = x.to_vec();
        let s = rwr_sum(&mut a, 2);
        s + a.iter().map(|v| v.sin()).sum::<f64>() * 2.0
    }

    // --- Mooncake test_self_reference(a, b) = a < b ? a*b : f(b, a) + a
    #[differentiable]
    fn self_ref(a: f64, b: f64) -> f64 {
        if a < b {
            a * b
        } else {
            self_ref(b, a) + a
        }
    }
    #[differentiable]
    fn mooncake_self_ref(x: &[f64]) -> f64 {
        self_ref(x[0], x[1]) + self_ref(x[1], x[2]) * x[0]
    }

    // --- Mooncake test_multiple_phinode_block: temp = a; a = b; b = 2temp
    #[differentiable]
    fn mooncake_phi(x: &[f64]) -> f64 {
        let mut a = 1.0;
        let mut b = x[0];
        let mut i = 1;
        while i < 4 {
            let temp = a;
            a = b;
            b = 2.0 * temp * x[1];
            i += 1;
        }
        a * b + a
    }

    // --- Mooncake phi_node_with_undefined_value, as Rust writes it: an Option held
    #[differentiable]
    fn mooncake_option_phi(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            let y = x[i];
            let flag = i % 2 == 0;
            let v = if flag { Some(y.sin()) } else { None };
            let mut z = y.cos();
            if let Some(v) = v {
                z += v * x[0];
            }
            total += z * z;
        }
        total
    }

    // --- Mooncake test_naive_mat_mul!(C, A, A): the same matrix as both factors,
    //     C arriving with active garbage that `C[p,q] = 0` must discard
    #[differentiable]
    fn naive_matmul_flat(c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
        for p in 0..n {
            for q in 0..n {
                c[p * n + q] = 0.0;
                for r in 0..n {
                    c[p * n + q] += a[p * n + r] * b[r * n + q];
                }
            }
        }
    }
    #[differentiable]
    fn mooncake_matmul(x: &[f64]) -> f64 {
        let mut c = vec![x[0]; 4];
        naive_matmul_flat(&mut c, x, x, 2);
        c.iter().map(|v| v.sin()).sum::<f64>() + c[1] * c[2]
    }
    // the same with rows, `&mut [Vec<f64>]` (no Hessian expected: plain test below)
    #[differentiable]
    fn naive_matmul_rows(c: &mut [Vec<f64>], a: &[Vec<f64>], b: &[Vec<f64>]) {
        for p in 0..c.len() {
            for q in 0..c[p].len() {
                c[p][q] = 0.0;
                for r in 0..a[p].len() {
                    c[p][q] += a[p][r] * b[r][q];
                }
            }
        }
    }
    #[differentiable]
    fn mooncake_matmul_rows(x: &[f64]) -> f64 {
        let a: Vec<Vec<f64>> = x.chunks(2).map(|r| r.to_vec()).collect();
        let mut c = vec![vec![x[0]; 2]; 2];
        naive_matmul_rows(&mut c, &a, &a);
        c.iter().flatten().map(|v| v.sin()).sum::<f64>() + c[0][1] * c[1][0]
    }

    // --- a `move` closure made inside the loop from loop-carried values, which
    //     change after it is made
    #[differentiable]
    fn closure_in_loop(x: &[f64]) -> f64 {
        let mut acc = 0.0;
        let mut scale = x[0];
        for i in 1..x.len() {
            let f = move |t: f64| t * scale + acc * 0.1;
            acc += f(x[i]).sin();
            scale *= 1.1 + x[i] * 0.05;
        }
        acc + scale
    }

    // --- a valued labelled loop left from inside two nested `for`s
    #[differentiable]
    fn first_pair_over(x: &[f64]) -> f64 {
        let n = x.len();
        let found = 'outer: loop {
            for i in 0..n {
                for j in i + 1..n {
                    if x[i] * x[j] > 0.5 {
                        break 'outer x[i] * x[j] + x[i].sin();
                    }
                }
            }
            break 0.0;
        };
        found * x[0] + x.iter().sum::<f64>()
    }

    // --- a generic helper over num_traits::Float, called with constants and actives mixed
    #[differentiable]
    fn softclip<T: num_traits::Float>(v: T, lo: T, hi: T) -> T {
        let two = T::from(2.0).unwrap();
        let s = T::one() / (T::one() + (-(v * two)).exp());
        lo + (hi - lo) * s + T::epsilon()
    }
    #[differentiable]
    fn generic_softclip(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 1..x.len() {
            s += softclip(x[i], -1.0, x[0]) * x[i];
        }
        s
    }

    // --- Armijo backtracking line search: a local closure over slices called on the
    //     parameter and on a Vec reassigned by `collect()` inside a `loop`
    #[differentiable]
    fn armijo(x: &[f64]) -> f64 {
        let f = |p: &[f64]| -> f64 { p.iter().map(|v| (v - 1.0).powi(2) * (1.0 + v * v)).sum() };
        let g: Vec<f64> = x
            .iter()
            .map(|v| 2.0 * (v - 1.0) * (1.0 + v * v) + (v - 1.0).powi(2) * 2.0 * v)
            .collect();
        let gg: f64 = g.iter().map(|t| t * t).sum();
        let f0 = f(x);
        let mut alpha = 1.0;
        let mut trial: Vec<f64> = x.iter().zip(&g).map(|(a, b)| a - alpha * b).collect();
        loop {
            if f(&trial) <= f0 - 1e-4 * alpha * gg {
                break;
            }
            alpha *= 0.5;
            trial = x.iter().zip(&g).map(|(a, b)| a - alpha * b).collect();
        }
        f(&trial) + alpha
    }

    // --- jax.nn activations: gelu (tanh form), silu, softplus, elu, mish, log_sigmoid, selu
    #[differentiable]
    fn activations(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x {
            let gelu = 0.5
                * v
                * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v.powi(3))).tanh());
            let silu = v / (1.0 + (-v).exp());
            let softplus = v.exp().ln_1p();
            let elu = if v > 0.0 { v } else { v.exp_m1() };
            let mish = v * softplus.tanh();
            let log_sigmoid = -(-v).exp().ln_1p();
            let selu_in = if v > 0.0 { v } else { 1.67326 * v.exp_m1() };
            let selu = 1.0507 * selu_in;
            s += gelu * silu + softplus + elu * mish + log_sigmoid + selu;
        }
        s
    }

    // --- jnp.interp with active values and active query points; the bracket is found
    //     by partition_point on a constant grid, then clamped
    const XP: [f64; 5] = [0.0, 0.5, 1.0, 1.5, 2.0];
    #[differentiable]
    fn jax_interp(x: &[f64]) -> f64 {
        let fp = &x[..5];
        let qs = &x[5..];
        let mut s = 0.0;
        for &q in qs {
            let k = XP.partition_point(|&v| v <= q).clamp(1, XP.len() - 1);
            let t = (q - XP[k - 1]) / (XP[k] - XP[k - 1]);
            let y = fp[k - 1] * (1.0 - t) + fp[k] * t;
            s += y * y + q;
        }
        s
    }

    // --- clamp / max-min / signum with active bounds (values clamped to both bounds)
    #[differentiable]
    fn clamp_active(x: &[f64]) -> f64 {
        let (lo, hi) = (x[0], x[1]);
        let mut s = 0.0;
        for i in 2..x.len() {
            let c = x[i].clamp(lo, hi);
            let d = x[i].max(lo).min(hi);
            s += c * c * (1.0 + x[i]) + d.exp() * x[i].signum();
        }
        s
    }

    // --- binary float methods with both operands active
    #[differentiable]
    fn binary_rules(x: &[f64]) -> f64 {
        let (a, b, c) = (x[0], x[1], x[2]);
        a.powf(b)
            + b.atan2(c) * a
            + a.hypot(c)
            + b.log(a + 1.5)
            + (c % a) * b
            + a.copysign(c) * b
            + (a / b).ln_1p() * c
    }

    // --- float rem_euclid with an active divisor (no generic form: plain test below)
    #[differentiable]
    fn rem_euclid_active(x: &[f64]) -> f64 {
        let (a, b) = (x[0], x[1]);
        (a * 3.0).rem_euclid(b) * a + (-a).rem_euclid(b + 0.25).powi(2) + a.div_euclid(b) * b
    }

    mod t {
        use crate::all_orders;
        all_orders!(jax_cumsum_rev, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(jax_cumprod, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(jax_cummax, [0.3, 1.2, 0.7, 1.9, 1.5]);
        all_orders!(jax_where_nan, [0.4, -1.3, 0.7, -0.2]);
        all_orders!(jax_softmax_entropy, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(jax_norms, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(jax_logaddexp_fold, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(enzyme_sumtil, [0.5, 0.7, 0.9, 1.1, 0.3]);
        all_orders!(enzyme_insertsort_sum, [0.3, 1.2, -0.5, 0.8, 2.0, 0.1]);
        all_orders!(enzyme_manymax, [0.4, 1.3, 0.7, 1.9, -0.2]);
        all_orders!(enzyme_fwdsolve, [0.5, -0.3, 0.8, 0.2, 0.7, -0.4]);
        all_orders!(
            enzyme_rwrloop,
            [0.4, 1.3, -0.7, 0.2, 0.9, 1.1, -0.3, 0.5, 0.8]
        );
        all_orders!(mooncake_self_ref, [1.5, 1.1, 0.4]);
        all_orders!(mooncake_phi, [0.4, 1.3]);
        all_orders!(mooncake_option_phi, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(mooncake_matmul, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(closure_in_loop, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(first_pair_over, [0.3, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(generic_softclip, [0.8, 1.3, -0.7, 0.2]);
        all_orders!(armijo, [0.3, 1.8, -0.4]);
        all_orders!(activations, [0.4, -1.3, 0.7, -0.2, 1.5]);
        all_orders!(jax_interp, [0.2, 0.9, 1.4, 1.1, 0.6, 0.3, 1.2]);
        all_orders!(clamp_active, [-0.5, 0.8, 1.3, -0.9, 0.2]);
        all_orders!(binary_rules, [0.7, 1.3, 2.3]);
    }

    #[test]
    fn softmax_jacobian() {
        let x = [0.4, 1.3, -0.7, 0.2];
        let (val, j) = jax_softmax::jacobian(&x);
        close("softmax value", &val, &jax_softmax(&x));
        check_jac("softmax", &j, &|z| jax_softmax(z), &x);
        // rows sum to one, so every column of J sums to zero
        for c in 0..x.len() {
            let s: f64 = (0..x.len()).map(|r| j[[r, c]]).sum();
            assert!(
                s.abs() < 1e-12,
                "column {c} of the softmax Jacobian sums to {s}"
            );
        }
        let v = [0.3, -0.2, 0.5, 0.1];
        let (_, jv) = jax_softmax::jvp(&x, &v);
        check_jvp("softmax", &j, &jv, &v);
    }

    #[test]
    fn matmul_rows_gradient() {
        let x = [0.4, 1.3, -0.7, 0.2];
        let g = mooncake_matmul_rows::gradient(&x);
        close("matmul_rows", &g, &fd(&|z| mooncake_matmul_rows(z), &x));
        // the flat and the row forms are the same function
        assert!((mooncake_matmul_rows(&x) - mooncake_matmul(&x)).abs() < 1e-12);
        close("matmul_rows vs flat", &g, &mooncake_matmul::gradient(&x));
    }

    #[test]
    fn enzyme_reference_values() {
        // sumtil.c's shape at vec = [1, 2, 3, 4, 5] with our threshold 3: trip 0 reads
        // v0 twice (4·v0 = 4) and zeroes it, trip 1 reads v1 once (2·v1 = 4) and breaks;
        // the Σ v afterwards adds 1 for every element not zeroed: [4, 5, 1, 1, 1]
        let g = enzyme_sumtil::gradient(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        close("sumtil reference", &g, &[4.0, 5.0, 1.0, 1.0, 1.0]);
        // manymax.c: the derivative goes to the largest element only (plus the x[0] term)
        let g = enzyme_manymax::gradient(&[1.0, 2.0, 3.0, 102.0, 5.0]);
        close("manymax reference", &g, &[1.0, 0.0, 0.0, 204.0, 0.0]);
    }

    #[test]
    fn rem_euclid_gradient() {
        // (3a) mod b and (−a) mod (b + ¼): ∂/∂b = −⌊·/·⌋, which is −1 and +1 here
        let x = [0.7, 1.3];
        let g = rem_euclid_active::gradient(&x);
        close("rem_euclid", &g, &fd(&|z| rem_euclid_active(z), &x));
    }
}

/// Nested derivatives (GradBench's `particle` and `saddle`), a user struct updated by
/// `&mut self`, float-to-index casts, helpers returning nested containers, `&mut [f64; 2]`,
/// `try_into`, argsort, plain integer helpers and constant branches used as values.
mod nested_and_idioms {
    use super::common::*;
    use mochi::prelude::*;
    use ndarray::{Array2, Axis};

    // Gradient against central differences only, for functions whose Hessian is not
    // expected to exist (no generic form): the gradient must still be right.
    macro_rules! first_order {
        ($name:ident, $x:expr) => {
            #[test]
            fn $name() {
                let x: Vec<f64> = $x.to_vec();
                let g = super::$name::gradient(&x);
                let (y, g2) = super::$name::value_and_gradient(&x);
                let f0 = super::$name(&x);
                assert!(
                    (y - f0).abs() <= 1e-12 * (1.0 + f0.abs()),
                    "value {y} against {f0}"
                );
                assert_eq!(g, g2);
                crate::common::assert_gradient_matches(super::$name, &g, &x);
            }
        };
    }

    // --- GradBench `particle` (evals/particle, Pearlmutter & Siskind): Euler steps
    //     with the force −∇ₓp from a nested `gradient`, until the particle would
    //     cross the x-axis, then linear interpolation. Outer derivative d/dw.
    #[differentiable]
    fn potential(x: &[f64], w: f64) -> f64 {
        let d1 = ((x[0] - 10.0).powi(2) + (x[1] - (10.0 - w)).powi(2)).sqrt();
        let d2 = ((x[0] - 10.0).powi(2) + x[1].powi(2)).sqrt();
        1.0 / d1 + 1.0 / d2
    }
    #[differentiable]
    fn naive_euler(p: &[f64]) -> f64 {
        let w = p[0];
        let mut x = vec![0.0, 8.0];
        let mut xdot = vec![0.75, 0.0];
        let dt = 0.1;
        let mut go = true;
        while go {
            let (g, _gw) = potential::gradient(&x, w);
            let xddot: Vec<f64> = g.iter().map(|v| -v).collect();
            let x_new: Vec<f64> = x.iter().zip(&xdot).map(|(a, b)| a + dt * b).collect();
            if x_new[1] > 0.0 {
                x = x_new;
                xdot = xdot.iter().zip(&xddot).map(|(a, b)| a + dt * b).collect();
            } else {
                go = false;
            }
        }
        let dt_f = -x[1] / xdot[1];
        let x_t_f = x[0] + dt_f * xdot[0];
        x_t_f * x_t_f
    }
    // the `rf` flavour: the force by two forward-mode directional derivatives
    #[differentiable]
    fn naive_euler_jvp(p: &[f64]) -> f64 {
        let w = p[0];
        let mut x = vec![0.0, 8.0];
        let mut xdot = vec![0.75, 0.0];
        let dt = 0.1;
        let e0 = vec![1.0, 0.0];
        let e1 = vec![0.0, 1.0];
        let mut go = true;
        while go {
            let (_, f0) = potential::jvp(&x, w, (e0.as_slice(), 0.0));
            let (_, f1) = potential::jvp(&x, w, (e1.as_slice(), 0.0));
            let xddot = vec![-f0, -f1];
            let x_new: Vec<f64> = x.iter().zip(&xdot).map(|(a, b)| a + dt * b).collect();
            if x_new[1] > 0.0 {
                x = x_new;
                xdot = xdot.iter().zip(&xddot).map(|(a, b)| a + dt * b).collect();
            } else {
                go = false;
            }
        }
        let dt_f = -x[1] / xdot[1];
        let x_t_f = x[0] + dt_f * xdot[0];
        x_t_f * x_t_f
    }

    // --- GradBench `saddle`, its inner half: gradient ascent in p2 (nested gradient),
    //     the value at the end differentiated in p1. Coupled objective so that the
    //     mixed second derivatives matter.
    #[differentiable]
    fn saddle_f(p1: &[f64], p2: &[f64]) -> f64 {
        (p1[0] * p1[0] + p1[1] * p1[1]) - (p2[0] * p2[0] + p2[1] * p2[1])
            + 0.3 * p1[0] * p2[1]
            + 0.1 * (p1[1] * p2[0]).sin()
    }
    #[differentiable]
    fn saddle_inner_max(p1: &[f64]) -> f64 {
        let mut p2 = vec![0.5, -0.3];
        for _ in 0..20 {
            let (_, g2) = saddle_f::gradient(p1, &p2);
            for j in 0..2 {
                p2[j] += 0.2 * g2[j];
            }
        }
        saddle_f(p1, &p2)
    }

    // --- Welford's running mean/variance, a user struct updated by `&mut self`
    #[derive(Clone, Debug, mochi::Tangent)]
    struct Welford {
        n: f64,
        mean: f64,
        m2: f64,
    }
    impl Welford {
        #[differentiable]
        fn push(&mut self, v: f64) {
            self.n += 1.0;
            let delta = v - self.mean;
            self.mean += delta / self.n;
            let delta2 = v - self.mean;
            self.m2 += delta * delta2;
        }
        #[differentiable]
        fn variance(&self) -> f64 {
            self.m2 / (self.n - 1.0)
        }
    }
    #[differentiable]
    fn welford_stats(x: &[f64]) -> f64 {
        let mut w = Welford {
            n: 0.0,
            mean: 0.0,
            m2: 0.0,
        };
        for &v in x {
            w.push(v);
        }
        w.variance() * w.mean + w.mean
    }

    // --- table lookup with linear interpolation: the index is a cast of an active value
    const TABLE: [f64; 6] = [0.0, 0.8, 1.5, 1.9, 2.1, 2.2];
    #[differentiable]
    fn table_lookup(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x {
            let pos = v * 2.0;
            let i = (pos.floor() as usize).min(TABLE.len() - 2);
            let t = pos - i as f64;
            s += TABLE[i] * (1.0 - t) + TABLE[i + 1] * t;
        }
        s * x[0]
    }

    // --- quantile by sort + linear interpolation (float-to-index cast of a constant)
    #[differentiable]
    fn quantile_30(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let q = 0.3;
        let pos = q * (v.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let frac = pos - lo as f64;
        (v[lo] + frac * (v[lo + 1] - v[lo])) * x[0]
    }

    // --- GradBench `llsq` with the C++ `s(t)` written as a Rust user would: a helper
    //     whose every branch is a constant, used as a value (also with active t)
    #[differentiable]
    fn sgn(t: f64) -> f64 {
        if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        }
    }
    #[differentiable]
    fn gb_llsq_sgn(x: &[f64]) -> f64 {
        let n = 9;
        let mut sum = 0.0;
        for i in 0..n {
            let ti = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
            let mut inner = sgn(ti);
            let mut mul = 1.0;
            for j in 0..x.len() {
                inner -= x[j] * mul;
                mul *= ti;
            }
            sum += inner * inner;
        }
        sum / 2.0 + x.iter().map(|&v| sgn(v) * v * v).sum::<f64>()
    }

    // --- Enzyme mycos.c (my_sin): Taylor series with a plain integer helper,
    //     `continue`, and a constant-valued `if` as the sign
    fn factorial(n: u64) -> u64 {
        if n == 0 {
            1
        } else {
            n * factorial(n - 1)
        }
    }
    #[differentiable]
    fn my_sin(x: &[f64]) -> f64 {
        let mut result = 0.0;
        let n = 12u64;
        for i in 0..=n {
            if i % 2 == 0 {
                continue;
            }
            let sign = if i % 4 == 1 { 1.0 } else { -1.0 };
            result += x[0].powi(i as i32) / factorial(i) as f64 * sign;
        }
        result * x[1]
    }

    // --- Enzyme rwrloop.c faithfully: the trip count comes through `&mut usize`,
    //     which the helper also overwrites (`*N = 7`)
    #[differentiable]
    fn rwr_sum_n(a: &mut [f64], n: &mut usize) -> f64 {
        let mut sum = 0.0;
        for i in 0..3 {
            for j in 0..*n {
                sum += a[3 * i + j] * a[3 * i + j];
                a[3 * i + j] = 0.0;
            }
        }
        *n = 7;
        sum
    }
    #[differentiable]
    fn enzyme_rwrloop_n(x: &[f64]) -> f64 {
        let mut a = x.to_vec();
        let mut n = 2;
        let s = rwr_sum_n(&mut a, &mut n);
        s + a.iter().map(|v| v.sin()).sum::<f64>() * n as f64
    }

    // --- argsort: an index Vec sorted by a comparator that reads the active values
    #[differentiable]
    fn argsort_weighted(x: &[f64]) -> f64 {
        let mut idx: Vec<usize> = (0..x.len()).collect();
        idx.sort_by(|&i, &j| x[i].partial_cmp(&x[j]).unwrap());
        idx.iter()
            .enumerate()
            .map(|(r, &i)| (r as f64 + 1.0) * x[i] * x[i])
            .sum()
    }

    // --- sort a Vec of pairs by its first field
    #[differentiable]
    fn sort_pairs(x: &[f64]) -> f64 {
        let mut pairs: Vec<(f64, f64)> = x.chunks(2).map(|c| (c[0], c[1])).collect();
        pairs.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        pairs
            .iter()
            .enumerate()
            .map(|(i, p)| (i as f64 + 1.0) * p.0 * p.1.exp())
            .sum()
    }

    // --- slice to array by `try_into`
    #[differentiable]
    fn try_into_array(x: &[f64]) -> f64 {
        let [a, b, c]: [f64; 3] = x[..3].try_into().unwrap();
        a * b.sin() + c * c * a
    }

    // --- a generic RK4 taking a closure that returns a Vec (Lotka–Volterra)
    #[differentiable]
    fn rk4<F: Fn(f64, &[f64]) -> Vec<f64>>(f: F, y0: &[f64], t1: f64, n: usize) -> Vec<f64> {
        let h = t1 / n as f64;
        let mut y = y0.to_vec();
        let mut t = 0.0;
        for _ in 0..n {
            let k1 = f(t, &y);
            let y2: Vec<f64> = y.iter().zip(&k1).map(|(a, k)| a + 0.5 * h * k).collect();
            let k2 = f(t + 0.5 * h, &y2);
            let y3: Vec<f64> = y.iter().zip(&k2).map(|(a, k)| a + 0.5 * h * k).collect();
            let k3 = f(t + 0.5 * h, &y3);
            let y4: Vec<f64> = y.iter().zip(&k3).map(|(a, k)| a + h * k).collect();
            let k4 = f(t + h, &y4);
            for i in 0..y.len() {
                y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
            t += h;
        }
        y
    }
    #[differentiable]
    fn lotka_volterra(p: &[f64]) -> f64 {
        let (a, b, c, d) = (p[0], p[1], p[2], p[3]);
        let y = rk4(
            |_t: f64, u: &[f64]| vec![a * u[0] - b * u[0] * u[1], c * u[0] * u[1] - d * u[1]],
            &[1.0, 0.5],
            1.0,
            10,
        );
        y[0] * y[0] + y[1]
    }

    // --- a helper returning Vec<Vec<f64>> (outer product), read by two indices
    #[differentiable]
    fn outer(a: &[f64], b: &[f64]) -> Vec<Vec<f64>> {
        let mut m = Vec::new();
        for u in a {
            m.push(b.iter().map(|v| u * v).collect());
        }
        m
    }
    #[differentiable]
    fn uses_outer(x: &[f64]) -> f64 {
        let m = outer(x, &x[1..]);
        let mut s = 0.0;
        for i in 0..m.len() {
            for j in 0..m[i].len() {
                s += m[i][j].sin() * (i + 2 * j + 1) as f64;
            }
        }
        s
    }

    // --- a helper returning [[f64; 3]; 3] (a rotation), multiplied by hand
    #[differentiable]
    fn rot_z(t: f64) -> [[f64; 3]; 3] {
        let (s, c) = t.sin_cos();
        [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    }
    #[differentiable]
    fn uses_rot_z(x: &[f64]) -> f64 {
        let r = rot_z(x[0]);
        let v = [x[1], x[2], 1.0];
        let mut w = [0.0; 3];
        for i in 0..3 {
            for k in 0..3 {
                w[i] += r[i][k] * v[k];
            }
        }
        w[0] * w[1] + w[2] * x[0]
    }

    // --- ADBench radial_distort with `proj: &mut [f64; 2]`
    #[differentiable]
    fn distort_arr(rad: &[f64], proj: &mut [f64; 2]) {
        let rsq = proj[0] * proj[0] + proj[1] * proj[1];
        let l = 1.0 + rad[0] * rsq + rad[1] * rsq * rsq;
        proj[0] *= l;
        proj[1] *= l;
    }
    #[differentiable]
    fn uses_distort_arr(x: &[f64]) -> f64 {
        let mut p = [x[0], x[1]];
        distort_arr(&x[2..4], &mut p);
        p[0] * p[1] + p[0]
    }

    // --- ADBench `ht` as Rust users write matrices: Vec<Vec<f64>>, a `&mut [Vec<f64>]`
    //     output passed on to another helper (gradient only: no Hessian for these)
    #[differentiable]
    fn mat_mult_rows(a: &[Vec<f64>], b: &[Vec<f64>], out: &mut [Vec<f64>]) {
        for i in 0..a.len() {
            for j in 0..b[0].len() {
                let mut s = 0.0;
                for k in 0..b.len() {
                    s += a[i][k] * b[k][j];
                }
                out[i][j] = s;
            }
        }
    }
    #[differentiable]
    fn euler_rows(xzy: &[f64], r: &mut [Vec<f64>]) {
        let (tx, ty, tz) = (xzy[0], xzy[2], xzy[1]);
        let mut rx = vec![vec![0.0; 3]; 3];
        let mut ry = vec![vec![0.0; 3]; 3];
        let mut rz = vec![vec![0.0; 3]; 3];
        for i in 0..3 {
            rx[i][i] = 1.0;
            ry[i][i] = 1.0;
            rz[i][i] = 1.0;
        }
        rx[1][1] = tx.cos();
        rx[2][1] = tx.sin();
        rx[1][2] = -rx[2][1];
        rx[2][2] = rx[1][1];
        ry[0][0] = ty.cos();
        ry[0][2] = ty.sin();
        ry[2][0] = -ry[0][2];
        ry[2][2] = ry[0][0];
        rz[0][0] = tz.cos();
        rz[1][0] = tz.sin();
        rz[0][1] = -rz[1][0];
        rz[1][1] = rz[0][0];
        let mut tmp = vec![vec![0.0; 3]; 3];
        mat_mult_rows(&rz, &ry, &mut tmp);
        mat_mult_rows(&tmp, &rx, r);
    }
    #[differentiable]
    fn ht_rows(theta: &[f64]) -> f64 {
        let mut r0 = vec![vec![0.0; 3]; 3];
        let mut r1 = vec![vec![0.0; 3]; 3];
        euler_rows(&theta[0..3], &mut r0);
        euler_rows(&theta[3..6], &mut r1);
        let mut abs1 = vec![vec![0.0; 3]; 3];
        mat_mult_rows(&r0, &r1, &mut abs1);
        let mut s = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                s += abs1[i][j] * (1.0 + i as f64 - 0.5 * j as f64) + r0[i][j] * r0[j][i];
            }
        }
        s
    }

    // --- DiffTests mat2num_4(x) = mean(sum(sin.(x) * x, dims=2)) with ndarray
    #[differentiable]
    fn dt_mat2num_4(x: &[f64]) -> f64 {
        let a = Array2::from_shape_vec((2, 2), x.to_vec()).unwrap();
        let p = a.mapv(f64::sin).dot(&a);
        p.sum_axis(Axis(1)).mean().unwrap()
    }

    // --- DiffTests num2num_4(x) = 1 and arr2arr_1(x) = (sum(x .* x); zeros): outputs
    //     that do not depend on the input
    #[differentiable]
    fn num2num_4(_x: f64) -> f64 {
        1.0
    }
    #[differentiable]
    fn uses_num2num_4(x: &[f64]) -> f64 {
        num2num_4(x[0]) * x[1] + num2num_4(x[1])
    }
    #[differentiable]
    fn dt_arr2arr_1(x: &[f64]) -> Vec<f64> {
        let _s: f64 = x.iter().map(|v| v * v).sum();
        vec![0.0; x.len()]
    }

    mod t {
        use crate::all_orders;
        all_orders!(gb_llsq_sgn, [0.4, 1.3, -0.7]);
        all_orders!(my_sin, [1.23, 0.7]);
        all_orders!(
            enzyme_rwrloop_n,
            [0.4, 1.3, -0.7, 0.2, 0.9, 1.1, -0.3, 0.5, 0.8]
        );
        all_orders!(argsort_weighted, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(sort_pairs, [0.4, 1.3, -0.7, 0.2, 0.9, 1.1]);
        all_orders!(lotka_volterra, [1.1, 0.4, 0.3, 0.8]);
        all_orders!(uses_distort_arr, [0.4, 1.3, 0.05, -0.01]);
        all_orders!(dt_mat2num_4, [1.2, 0.3, -0.4, 0.9]);
        all_orders!(uses_num2num_4, [0.4, 1.3]);
    }
    mod t1 {
        use crate::all_orders;
        // no generic form (the function builds a struct; a helper takes `&mut [Vec<f64>]`):
        // gradients only
        all_orders!(try_into_array, [0.4, 1.3, -0.7]);
        all_orders!(uses_outer, [0.4, 1.3, -0.7, 0.2]);
        all_orders!(uses_rot_z, [0.4, 1.3, -0.7]);
        first_order!(welford_stats, [0.4, 1.3, -0.7, 0.2, 0.9]);
        all_orders!(table_lookup, [0.3, 1.1, 2.2, 0.9]);
        all_orders!(quantile_30, [0.4, 1.3, -0.7, 0.2, 0.9, 1.1]);
        first_order!(ht_rows, [0.3, -0.2, 0.5, 0.1, 0.4, -0.3]);
    }

    #[test]
    fn particle_nested_gradient() {
        // w = 0 is GradBench's starting point
        for w in [0.0, 0.15] {
            let p = [w];
            let g = naive_euler::gradient(&p);
            close(
                &format!("particle rr at {w}"),
                &g,
                &fd(&|z| naive_euler(z), &p),
            );
            let g = naive_euler_jvp::gradient(&p);
            close(
                &format!("particle rf at {w}"),
                &g,
                &fd(&|z| naive_euler_jvp(z), &p),
            );
            assert!((naive_euler(&p) - naive_euler_jvp(&p)).abs() < 1e-10);
        }
    }

    #[test]
    fn saddle_nested_gradient() {
        let p1 = [0.7, -0.4];
        let g = saddle_inner_max::gradient(&p1);
        close("saddle inner max", &g, &fd(&|z| saddle_inner_max(z), &p1));
    }

    #[test]
    fn welford_struct_method() {
        let x = [0.4, 1.3, -0.7, 0.2, 0.9];
        let g = welford_stats::gradient(&x);
        close("welford", &g, &fd(&|z| welford_stats(z), &x));
        // and the value is the sample variance times the mean, plus the mean
        let m = x.iter().sum::<f64>() / 5.0;
        let var = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / 4.0;
        assert!((welford_stats(&x) - (var * m + m)).abs() < 1e-12);
    }

    #[test]
    fn float_to_index_casts() {
        let x = [0.3, 1.1, 2.2, 0.9];
        close(
            "table_lookup",
            &table_lookup::gradient(&x),
            &fd(&|z| table_lookup(z), &x),
        );
        let x = [0.4, 1.3, -0.7, 0.2, 0.9, 1.1];
        close(
            "quantile_30",
            &quantile_30::gradient(&x),
            &fd(&|z| quantile_30(z), &x),
        );
    }

    #[test]
    fn nested_containers_gradient() {
        let theta = [0.3, -0.2, 0.5, 0.1, 0.4, -0.3];
        close(
            "ht_rows",
            &ht_rows::gradient(&theta),
            &fd(&|z| ht_rows(z), &theta),
        );
    }

    #[test]
    fn constant_outputs() {
        let x = [0.4, 1.3, -0.7];
        let (val, j) = dt_arr2arr_1::jacobian(&x);
        close("arr2arr_1 value", &val, &[0.0, 0.0, 0.0]);
        check_jac("arr2arr_1", &j, &|z| dt_arr2arr_1(z), &x);
        let g = uses_num2num_4::gradient(&[0.4, 1.3]);
        close("num2num_4", &g, &[0.0, 1.0]);
    }
}
