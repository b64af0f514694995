//! `ba`: ADBench's bundle adjustment. Each observation `i` of camera `cᵢ` seeing point
//! `Xᵢ` has a reprojection error `wᵢ · (project(cam, X) − featᵢ)` (two rows) and a weight
//! error `1 − wᵢ²` (one row). The `jacobian` function returns the sparse Jacobian of all
//! `3p` residuals in the `11n + 3m + p` parameters (cameras, points, weights), in the
//! compressed-row layout of ADBench's `SparseMat`, of which the eval receives the first
//! 30 and the last entry of each list.
//!
//! The derivatives are mochi's: an observation's two reprojection residuals are a
//! function generic over its scalar of one packed slice of parameters
//! `[cam (11), X (3), w]` and of the feature (`&[f64]`, data: passed through, no
//! column), whose `jacobian` companion runs it on `Dual<4>` (forward mode, four runs
//! for 15 columns); the weight error's derivative is the `gradient` of
//! `weight_error`.
//!
//! The input is GradBench's: one camera, point, weight and feature, which the tool
//! repeats `n`, `m`, `p` and `p` times, observation `i` seeing camera `i mod n` and
//! point `i mod m` (outside the timed calls, as GradBench's C++ tools do).

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::num_traits::Float;
use mochi::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Camera parameters: rotation (Rodrigues, 3), centre (3), focal length, principal
/// point (2), radial distortion (2).
pub const N_CAM_PARAMS: usize = 11;
/// Where the camera centre starts in a camera's parameters.
const C_IDX: usize = 3;
/// The focal length's index.
const F_IDX: usize = 6;
/// Where the principal point starts.
const X0_IDX: usize = 7;
/// Where the radial distortion parameters start.
const RAD_IDX: usize = 9;
/// One observation's packed parameters: camera, point, weight; the columns of one
/// reprojection row that depend on the parameters.
pub const PACKED: usize = N_CAM_PARAMS + 3 + 1;
/// The nonzeros of one reprojection row.
const ROW_NONZEROS: usize = PACKED;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The number of cameras.
    pub n: usize,
    /// The number of points.
    pub m: usize,
    /// The number of observations.
    pub p: usize,
    /// The camera, repeated `n` times.
    pub cam: Vec<f64>,
    /// The point, repeated `m` times.
    pub x: Vec<f64>,
    /// The weight, repeated `p` times.
    pub w: f64,
    /// The feature, repeated `p` times.
    pub feat: Vec<f64>,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// The problem with its repetitions spelled out.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The number of cameras.
    pub n: usize,
    /// The number of points.
    pub m: usize,
    /// The number of observations.
    pub p: usize,
    /// `n × 11` cameras, row-major.
    pub cams: Vec<f64>,
    /// `m × 3` points, row-major.
    pub points: Vec<f64>,
    /// `p` weights.
    pub weights: Vec<f64>,
    /// Per observation, its camera and point.
    pub obs: Vec<(usize, usize)>,
    /// `p × 2` features, row-major.
    pub feats: Vec<f64>,
}

impl Problem {
    /// GradBench's repetition of one camera, point, weight and feature.
    pub fn from_input(input: &Input) -> Result<Self, EvalError> {
        if input.cam.len() != N_CAM_PARAMS || input.x.len() != 3 || input.feat.len() != 2 {
            return Err(EvalError::BadInput(format!(
                "needs cam of 11, x of 3 and feat of 2 numbers, got {}, {} and {}",
                input.cam.len(),
                input.x.len(),
                input.feat.len()
            )));
        }
        if input.n == 0 || input.m == 0 || input.p == 0 {
            return Err(EvalError::BadInput("n, m and p must be positive".into()));
        }
        let (n, m, p) = (input.n, input.m, input.p);
        Ok(Problem {
            n,
            m,
            p,
            cams: input.cam.repeat(n),
            points: input.x.repeat(m),
            weights: vec![input.w; p],
            obs: (0..p).map(|i| (i % n, i % m)).collect(),
            feats: input.feat.repeat(p),
        })
    }

    /// Observation `i`'s packed parameters `[cam, X, w]`.
    fn pack(&self, i: usize, packed: &mut [f64; PACKED]) {
        let (cam, pt) = self.obs[i];
        packed[..N_CAM_PARAMS]
            .copy_from_slice(&self.cams[cam * N_CAM_PARAMS..(cam + 1) * N_CAM_PARAMS]);
        packed[N_CAM_PARAMS..N_CAM_PARAMS + 3].copy_from_slice(&self.points[pt * 3..pt * 3 + 3]);
        packed[N_CAM_PARAMS + 3] = self.weights[i];
    }

    /// Observation `i`'s feature.
    fn feat(&self, i: usize) -> &[f64] {
        &self.feats[2 * i..2 * i + 2]
    }
}

/// `Σ xᵢ²`.
#[allow(clippy::needless_range_loop)]
#[differentiable]
pub fn sqsum<T: Float>(x: &[T]) -> T {
    let mut res = T::zero();
    for i in 0..x.len() {
        res = res + x[i] * x[i];
    }
    res
}

/// `pt` rotated by the angle-axis vector `rot` (Rodrigues' formula, as Ceres evaluates
/// it; to first order, `pt + rot × pt`, at `rot = 0`).
#[differentiable]
pub fn rodrigues_rotate_point<T: Float>(rot: &[T], pt: &[T]) -> [T; 3] {
    let sqtheta = sqsum(rot);
    let mut rotated = [T::zero(); 3];
    if sqtheta != T::zero() {
        let theta = sqtheta.sqrt();
        let costheta = theta.cos();
        let sintheta = theta.sin();
        let theta_inverse = T::one() / theta;
        let w0 = rot[0] * theta_inverse;
        let w1 = rot[1] * theta_inverse;
        let w2 = rot[2] * theta_inverse;
        let cross0 = w1 * pt[2] - w2 * pt[1];
        let cross1 = w2 * pt[0] - w0 * pt[2];
        let cross2 = w0 * pt[1] - w1 * pt[0];
        let tmp = (w0 * pt[0] + w1 * pt[1] + w2 * pt[2]) * (T::one() - costheta);
        rotated[0] = pt[0] * costheta + cross0 * sintheta + w0 * tmp;
        rotated[1] = pt[1] * costheta + cross1 * sintheta + w1 * tmp;
        rotated[2] = pt[2] * costheta + cross2 * sintheta + w2 * tmp;
    } else {
        rotated[0] = pt[0] + (rot[1] * pt[2] - rot[2] * pt[1]);
        rotated[1] = pt[1] + (rot[2] * pt[0] - rot[0] * pt[2]);
        rotated[2] = pt[2] + (rot[0] * pt[1] - rot[1] * pt[0]);
    }
    rotated
}

/// The camera's projection of the point `x`: rotation about the centre, perspective
/// division, radial distortion `1 + k₁r² + k₂r⁴`, focal length and principal point.
#[differentiable]
pub fn project<T: Float>(cam: &[T], x: &[T]) -> [T; 2] {
    let mut xo = [T::zero(); 3];
    for i in 0..3 {
        xo[i] = x[i] - cam[C_IDX + i];
    }
    let xcam = rodrigues_rotate_point(&cam[0..3], &xo);
    let p0 = xcam[0] / xcam[2];
    let p1 = xcam[1] / xcam[2];
    let rsq = p0 * p0 + p1 * p1;
    let distortion = T::one() + cam[RAD_IDX] * rsq + cam[RAD_IDX + 1] * rsq * rsq;
    let mut proj = [T::zero(); 2];
    proj[0] = p0 * distortion * cam[F_IDX] + cam[X0_IDX];
    proj[1] = p1 * distortion * cam[F_IDX] + cam[X0_IDX + 1];
    proj
}

/// One observation's reprojection error `w · (project(cam, X) − feat)` of its packed
/// parameters `[cam (11), X (3), w]` and its feature (data).
#[differentiable]
pub fn reprojection_error<T: Float>(packed: &[T], feat: &[f64]) -> Vec<T> {
    let proj = project(&packed[0..11], &packed[11..14]);
    let w = packed[14];
    let mut err = vec![T::zero(); 2];
    err[0] = w * (proj[0] - no_grad(T::from(feat[0]).unwrap()));
    err[1] = w * (proj[1] - no_grad(T::from(feat[1]).unwrap()));
    err
}

/// The weight error `1 − w²`.
#[differentiable]
pub fn weight_error(w: f64) -> f64 {
    1.0 - w * w
}

/// The residuals: `2p` reprojection errors and `p` weight errors.
pub fn objective(problem: &Problem) -> (Vec<f64>, Vec<f64>) {
    let mut reproj = Vec::with_capacity(2 * problem.p);
    let mut packed = [0.0; PACKED];
    for i in 0..problem.p {
        problem.pack(i, &mut packed);
        reproj.extend(reprojection_error(&packed, problem.feat(i)));
    }
    let w_err = problem.weights.iter().map(|&w| weight_error(w)).collect();
    (reproj, w_err)
}

/// ADBench's `SparseMat`: rows in compressed form (`rows[r]..rows[r + 1]` index the
/// row's entries of `cols` and `vals`), `3p` rows and `11n + 3m + p` columns.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseJacobian {
    /// Row starts, `3p + 1` of them.
    pub rows: Vec<usize>,
    /// The column of each entry.
    pub cols: Vec<usize>,
    /// The value of each entry.
    pub vals: Vec<f64>,
}

/// The Jacobian of [`objective`]'s residuals in cameras, points and weights; rows
/// `2i`, `2i + 1` are observation `i`'s reprojection error (15 entries each: its
/// camera, its point, its weight), rows `2p + i` its weight error (one entry).
pub fn jacobian(problem: &Problem) -> SparseJacobian {
    let (n, m, p) = (problem.n, problem.m, problem.p);
    let nonzeros = 2 * ROW_NONZEROS * p + p;
    let mut jac = SparseJacobian {
        rows: Vec::with_capacity(3 * p + 1),
        cols: Vec::with_capacity(nonzeros),
        vals: Vec::with_capacity(nonzeros),
    };
    jac.rows.push(0);
    let mut packed = [0.0; PACKED];
    for i in 0..p {
        problem.pack(i, &mut packed);
        let (_err, block) = reprojection_error::jacobian(&packed, problem.feat(i));
        let (cam, pt) = problem.obs[i];
        for r in 0..2 {
            let start = jac.rows[jac.rows.len() - 1];
            jac.rows.push(start + ROW_NONZEROS);
            for k in 0..N_CAM_PARAMS {
                jac.cols.push(N_CAM_PARAMS * cam + k);
                jac.vals.push(block[[r, k]]);
            }
            for k in 0..3 {
                jac.cols.push(N_CAM_PARAMS * n + 3 * pt + k);
                jac.vals.push(block[[r, N_CAM_PARAMS + k]]);
            }
            jac.cols.push(N_CAM_PARAMS * n + 3 * m + i);
            jac.vals.push(block[[r, N_CAM_PARAMS + 3]]);
        }
    }
    for i in 0..p {
        let start = jac.rows[jac.rows.len() - 1];
        jac.rows.push(start + 1);
        jac.cols.push(N_CAM_PARAMS * n + 3 * m + i);
        jac.vals.push(weight_error::gradient(problem.weights[i]));
    }
    jac
}

/// The objective's output: one observation's errors, and how often they repeat.
#[derive(Debug, Serialize)]
struct ReprojOutput {
    elements: [f64; 2],
    repeated: usize,
}

#[derive(Debug, Serialize)]
struct WeightOutput {
    element: f64,
    repeated: usize,
}

#[derive(Debug, Serialize)]
struct ObjectiveOutput {
    reproj_error: ReprojOutput,
    w_err: WeightOutput,
}

/// The Jacobian's output: the first 30 and the last entry of each list.
#[derive(Debug, Serialize)]
struct JacobianOutput {
    rows: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<f64>,
}

fn first_30_and_last<T: Copy>(v: &[T]) -> Vec<T> {
    let mut out: Vec<T> = v.iter().take(2 * ROW_NONZEROS).copied().collect();
    out.extend(v.last());
    out
}

/// Answers `objective` and `jacobian`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    let problem = Problem::from_input(&input)?;
    match function {
        "objective" => {
            let ((reproj, w_err), timings) = repeat(input.runs, || objective(&problem));
            let out = ObjectiveOutput {
                reproj_error: ReprojOutput {
                    elements: [reproj[0], reproj[1]],
                    repeated: reproj.len() / 2,
                },
                w_err: WeightOutput {
                    element: w_err[0],
                    repeated: w_err.len(),
                },
            };
            Evaluation::new(out, timings)
        }
        "jacobian" => {
            let (jac, timings) = repeat(input.runs, || jacobian(&problem));
            let out = JacobianOutput {
                rows: first_30_and_last(&jac.rows),
                cols: first_30_and_last(&jac.cols),
                vals: first_30_and_last(&jac.vals),
            };
            Evaluation::new(out, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "ba",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::test_support::seeded;

    fn problem(n: usize, m: usize, p: usize, seed: u64) -> Problem {
        let mut cams = seeded(N_CAM_PARAMS * n, seed, -0.5, 0.5);
        for c in 0..n {
            cams[N_CAM_PARAMS * c + F_IDX] += 2.0;
            // The centre behind the points, so that the projections are finite.
            cams[N_CAM_PARAMS * c + C_IDX + 2] -= 5.0;
        }
        Problem {
            n,
            m,
            p,
            cams,
            points: seeded(3 * m, seed + 1, -1.0, 1.0),
            weights: seeded(p, seed + 2, 0.5, 1.5),
            obs: (0..p).map(|i| (i % n, (3 * i + 1) % m)).collect(),
            feats: seeded(2 * p, seed + 3, -1.0, 1.0),
        }
    }

    /// The residuals as one vector of the parameters `[cams, points, weights]`.
    fn residuals(problem: &Problem, params: &[f64]) -> Vec<f64> {
        let (n, m) = (problem.n, problem.m);
        let moved = Problem {
            cams: params[..N_CAM_PARAMS * n].to_vec(),
            points: params[N_CAM_PARAMS * n..N_CAM_PARAMS * n + 3 * m].to_vec(),
            weights: params[N_CAM_PARAMS * n + 3 * m..].to_vec(),
            ..problem.clone()
        };
        let (mut r, w) = objective(&moved);
        r.extend(w);
        r
    }

    #[test]
    fn the_sparse_jacobian_matches_central_differences() {
        for rotation_zero in [false, true] {
            let mut pb = problem(3, 4, 7, 11);
            if rotation_zero {
                // The branch for a zero rotation.
                for c in 0..pb.n {
                    pb.cams[N_CAM_PARAMS * c..N_CAM_PARAMS * c + 3].fill(0.0);
                }
            }
            let params: Vec<f64> =
                [pb.cams.clone(), pb.points.clone(), pb.weights.clone()].concat();
            let jac = jacobian(&pb);
            let rows = 3 * pb.p;
            assert_eq!(jac.rows.len(), rows + 1);
            let mut dense = vec![vec![0.0; params.len()]; rows];
            for (r, row) in dense.iter_mut().enumerate() {
                for e in jac.rows[r]..jac.rows[r + 1] {
                    row[jac.cols[e]] += jac.vals[e];
                }
            }
            let mut probe = params.clone();
            for c in 0..params.len() {
                let h = 1e-6 * params[c].abs().max(1.0);
                probe[c] = params[c] + h;
                let up = residuals(&pb, &probe);
                probe[c] = params[c] - h;
                let down = residuals(&pb, &probe);
                probe[c] = params[c];
                for r in 0..rows {
                    let fd = (up[r] - down[r]) / (2.0 * h);
                    let d = dense[r][c];
                    // At a zero rotation the primal is the first-order formula, whose
                    // derivative in the rotation is exact; elsewhere differences.
                    assert!(
                        (d - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                        "row {r}, column {c}: jacobian {d}, central difference {fd}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_input_is_repeated_as_gradbench_does() {
        let input: Input = serde_json::from_value(serde_json::json!({
            "n": 2, "m": 3, "p": 5,
            "cam": [0.1, 0.2, 0.3, 0.0, 0.0, -5.0, 2.0, 0.1, 0.2, 0.01, 0.001],
            "x": [0.5, -0.5, 1.0], "w": 0.9, "feat": [0.3, -0.2],
        }))
        .unwrap();
        let pb = Problem::from_input(&input).unwrap();
        assert_eq!(pb.obs, vec![(0, 0), (1, 1), (0, 2), (1, 0), (0, 1)]);
        let jac = jacobian(&pb);
        assert_eq!(jac.rows.len(), 3 * 5 + 1);
        assert_eq!(*jac.rows.last().unwrap(), 2 * 15 * 5 + 5);
        // Row 0: camera 0, point 0 (after 2 cameras), weight 0 (after 3 points).
        assert_eq!(jac.cols[..3], [0, 1, 2]);
        assert_eq!(jac.cols[11..15], [22, 23, 24, 31]);
        assert_eq!(*jac.cols.last().unwrap(), 11 * 2 + 3 * 3 + 4);
        assert_eq!(*jac.vals.last().unwrap(), -2.0 * 0.9);
        let (r, w) = objective(&pb);
        assert_eq!(r.len(), 10);
        assert_eq!(w, vec![1.0 - 0.81; 5]);
    }
}
