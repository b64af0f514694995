//! `ht`: ADBench's hand tracking. A skinned hand model (bones with parents, base
//! transforms, vertices with bone weights) is posed by 26 parameters `θ` (global
//! rotation and translation, then per finger three flexions and one abduction); the
//! residuals are, per correspondence `i`, the data point minus the posed vertex
//! (the "simple" variant) or minus the point `u₀v₀ + u₁v₁ + (1 − u₀ − u₁)v₂` of a posed
//! triangle (the "complicated" variant, `us` not empty). The `jacobian` is dense,
//! `3·npts` rows, and has 26 columns (simple) or 28 (complicated: first the two
//! directions along which every `uᵢ₀`, respectively every `uᵢ₁`, moves, since
//! residual `i` depends on `uᵢ` only; then `θ`), as GradBench's `manual` writes it.
//!
//! The objective is written once, generic over its scalar ([`objective`], following
//! GradBench's `ht.hpp`), and the Jacobian is mochi's forward mode: the objective run
//! on `Dual<4>`, four of the columns' directions per run (seven runs for 26 or 28).
//! Not the `jacobian` companion: that one exists for `#[differentiable]` functions, and
//! the objective's helpers are not (their 3×3 and 4×4 products assign `out[i][j]`,
//! which the macro refuses), and with `us` among its `T`-typed arguments it would give
//! every `uᵢ` its own columns, where here one direction moves every `uᵢ₀`. So the
//! seeding is written here with `Dual::new`, four columns per run as the companion's.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::num_traits::Float;
use mochi::Dual;
use serde::Deserialize;
use serde_json::Value;
use std::ops::Mul;

/// The hand model as the eval sends it.
#[derive(Debug, Deserialize)]
pub struct ModelInput {
    /// The bones' names (one per bone).
    pub bone_names: Vec<String>,
    /// Each bone's parent, `-1` for the root; parents come before their children.
    pub parents: Vec<i64>,
    /// Per bone, its transform relative to its parent (4 × 4, rows).
    pub base_relatives: Vec<Vec<Vec<f64>>>,
    /// Per bone, the inverse of its absolute base transform (4 × 4, rows).
    pub inverse_base_absolutes: Vec<Vec<Vec<f64>>>,
    /// Per vertex, its homogeneous base position (4).
    pub base_positions: Vec<Vec<f64>>,
    /// Per vertex, its weight for each bone.
    pub weights: Vec<Vec<f64>>,
    /// The mesh's triangles (three vertices each).
    pub triangles: Vec<Vec<usize>>,
    /// Whether the model is mirrored in x.
    pub is_mirrored: bool,
}

/// The data as the eval sends it.
#[derive(Debug, Deserialize)]
pub struct DataInput {
    /// The model.
    pub model: ModelInput,
    /// Per data point, its vertex (simple) or triangle (complicated).
    pub correspondences: Vec<usize>,
    /// The data points (3 each).
    pub points: Vec<Vec<f64>>,
}

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The 26 pose parameters.
    pub theta: Vec<f64>,
    /// The model and the data points.
    pub data: DataInput,
    /// Per data point, its barycentric coordinates `(u₀, u₁)` on its triangle; empty for
    /// the simple variant.
    pub us: Vec<Vec<f64>>,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

type M4 = [[f64; 4]; 4];
type M3<T> = [[T; 3]; 3];

/// The model and the data, in the shapes the objective reads.
#[derive(Debug, Clone)]
pub struct Data {
    /// Each bone's parent, `None` for the root.
    pub parents: Vec<Option<usize>>,
    /// Per bone, its transform relative to its parent.
    pub base_relatives: Vec<M4>,
    /// Per bone, the inverse of its absolute base transform.
    pub inverse_base_absolutes: Vec<M4>,
    /// Per vertex, its homogeneous base position.
    pub base_positions: Vec<[f64; 4]>,
    /// `weights[bone][vertex]`.
    pub weights: Vec<Vec<f64>>,
    /// The mesh's triangles.
    pub triangles: Vec<[usize; 3]>,
    /// Whether the model is mirrored in x.
    pub is_mirrored: bool,
    /// Per data point, its vertex (simple) or triangle (complicated).
    pub correspondences: Vec<usize>,
    /// The data points.
    pub points: Vec<[f64; 3]>,
}

fn matrix4(rows: &[Vec<f64>], what: &str) -> Result<M4, EvalError> {
    let mut m = [[0.0; 4]; 4];
    if rows.len() != 4 || rows.iter().any(|r| r.len() != 4) {
        return Err(EvalError::BadInput(format!("each of {what} must be 4 × 4")));
    }
    for (r, row) in rows.iter().enumerate() {
        m[r].copy_from_slice(row);
    }
    Ok(m)
}

fn fixed<const K: usize>(v: &[f64], what: &str) -> Result<[f64; K], EvalError> {
    v.try_into()
        .map_err(|_| EvalError::BadInput(format!("each of {what} must have {K} numbers")))
}

impl Data {
    /// Checks the input's shapes and rearranges it.
    pub fn from_input(input: &Input) -> Result<Self, EvalError> {
        let model = &input.data.model;
        let bones = model.bone_names.len();
        if model.parents.len() != bones
            || model.base_relatives.len() != bones
            || model.inverse_base_absolutes.len() != bones
        {
            return Err(EvalError::BadInput(
                "parents, base_relatives and inverse_base_absolutes need one entry per bone".into(),
            ));
        }
        let verts = model.base_positions.len();
        if model.weights.len() != verts || model.weights.iter().any(|w| w.len() != bones) {
            return Err(EvalError::BadInput(
                "weights need one row per vertex and one column per bone".into(),
            ));
        }
        let mut parents = Vec::with_capacity(bones);
        for (i, &p) in model.parents.iter().enumerate() {
            parents.push(match usize::try_from(p) {
                Ok(p) if p < i => Some(p),
                Err(_) if p == -1 => None,
                _ => {
                    return Err(EvalError::BadInput(format!(
                        "bone {i}'s parent {p} is neither -1 nor an earlier bone"
                    )))
                }
            });
        }
        let triangles = model
            .triangles
            .iter()
            .map(|t| {
                <[usize; 3]>::try_from(t.as_slice())
                    .ok()
                    .filter(|t| t.iter().all(|&v| v < verts))
                    .ok_or_else(|| EvalError::BadInput("a triangle is not 3 vertices".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let complicated = !input.us.is_empty();
        let targets = if complicated { triangles.len() } else { verts };
        if input.data.correspondences.iter().any(|&c| c >= targets) {
            return Err(EvalError::BadInput(
                "a correspondence is out of range".into(),
            ));
        }
        if input.theta.len() != 26 {
            return Err(EvalError::BadInput("theta must have 26 numbers".into()));
        }
        let npts = input.data.correspondences.len();
        if input.data.points.len() != npts || (complicated && input.us.len() != npts) {
            return Err(EvalError::BadInput(
                "points (and us, when given) need one entry per correspondence".into(),
            ));
        }
        if input.us.iter().any(|u| u.len() != 2) {
            return Err(EvalError::BadInput("each of us must have 2 numbers".into()));
        }
        Ok(Data {
            parents,
            base_relatives: model
                .base_relatives
                .iter()
                .map(|m| matrix4(m, "base_relatives"))
                .collect::<Result<_, _>>()?,
            inverse_base_absolutes: model
                .inverse_base_absolutes
                .iter()
                .map(|m| matrix4(m, "inverse_base_absolutes"))
                .collect::<Result<_, _>>()?,
            base_positions: model
                .base_positions
                .iter()
                .map(|p| fixed(p, "base_positions"))
                .collect::<Result<_, _>>()?,
            weights: (0..bones)
                .map(|b| model.weights.iter().map(|w| w[b]).collect())
                .collect(),
            triangles,
            is_mirrored: model.is_mirrored,
            correspondences: input.data.correspondences.clone(),
            points: input
                .data
                .points
                .iter()
                .map(|p| fixed(p, "points"))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// The scalar the objective runs on: `f64`, or a dual number for the Jacobian. Model
/// constants multiply it as `f64`.
pub trait HandScalar: Float + Mul<f64, Output = Self> {}
impl<T: Float + Mul<f64, Output = T>> HandScalar for T {}

fn c<T: Float>(v: f64) -> T {
    T::from(v).unwrap()
}

/// The rotation by the angle-axis vector `aa` (the identity when `‖aa‖ < 10⁻⁴`).
pub fn angle_axis_to_rotation_matrix<T: HandScalar>(aa: [T; 3]) -> M3<T> {
    let norm = (aa[0] * aa[0] + aa[1] * aa[1] + aa[2] * aa[2]).sqrt();
    let (zero, one) = (T::zero(), T::one());
    if norm < c(1e-4) {
        return [[one, zero, zero], [zero, one, zero], [zero, zero, one]];
    }
    let x = aa[0] / norm;
    let y = aa[1] / norm;
    let z = aa[2] / norm;
    let s = norm.sin();
    let co = norm.cos();
    [
        [
            x * x + (one - x * x) * co,
            x * y * (one - co) - z * s,
            x * z * (one - co) + y * s,
        ],
        [
            x * y * (one - co) + z * s,
            y * y + (one - y * y) * co,
            y * z * (one - co) - x * s,
        ],
        [
            x * z * (one - co) - y * s,
            z * y * (one - co) + x * s,
            z * z + (one - z * z) * co,
        ],
    ]
}

/// `a · b` of square matrices of side `N`.
fn mat_mul<T: Float, const N: usize>(a: &[[T; N]; N], b: &[[T; N]; N]) -> [[T; N]; N] {
    let mut out = [[T::zero(); N]; N];
    for i in 0..N {
        for j in 0..N {
            let mut s = T::zero();
            for k in 0..N {
                s = s + a[i][k] * b[k][j];
            }
            out[i][j] = s;
        }
    }
    out
}

/// `R_z · R_y · R_x` for the angles `xzy = (x, z, y)`.
pub fn euler_angles_to_rotation_matrix<T: HandScalar>(xzy: [T; 3]) -> M3<T> {
    let (tx, ty, tz) = (xzy[0], xzy[2], xzy[1]);
    let (zero, one) = (T::zero(), T::one());
    let rx = [
        [one, zero, zero],
        [zero, tx.cos(), -tx.sin()],
        [zero, tx.sin(), tx.cos()],
    ];
    let ry = [
        [ty.cos(), zero, ty.sin()],
        [zero, one, zero],
        [-ty.sin(), zero, ty.cos()],
    ];
    let rz = [
        [tz.cos(), -tz.sin(), zero],
        [tz.sin(), tz.cos(), zero],
        [zero, zero, one],
    ];
    mat_mul(&mat_mul(&rz, &ry), &rx)
}

/// The pose parameters, one column of 3 per entry: global rotation, scale (ones),
/// global translation, then per bone its Euler angles (the wrist and each finger's
/// base bone stay zero; per finger, its first joint has a flexion and an abduction, the
/// two others a flexion).
pub fn to_pose_params<T: HandScalar>(theta: &[T], bones: usize) -> Vec<[T; 3]> {
    let mut pose = vec![[T::zero(); 3]; bones + 3];
    pose[0] = [theta[0], theta[1], theta[2]];
    pose[1] = [T::one(); 3];
    pose[2] = [theta[3], theta[4], theta[5]];
    let mut i_theta = 6;
    let mut i_pose = 5;
    for _finger in 0..5 {
        for i in 2..=4 {
            pose[i_pose][0] = theta[i_theta];
            i_theta += 1;
            if i == 2 {
                pose[i_pose][1] = theta[i_theta];
                i_theta += 1;
            }
            i_pose += 1;
        }
        i_pose += 1;
    }
    pose
}

/// `a · b` for a constant `a` and the transform `[[r, 0], [0, 1]]` of the rotation `r`.
fn relative_times_rotation<T: HandScalar>(a: &M4, r: &M3<T>) -> [[T; 4]; 4] {
    let mut out = [[T::zero(); 4]; 4];
    for i in 0..4 {
        for j in 0..3 {
            let mut s = T::zero();
            for k in 0..3 {
                s = s + r[k][j] * a[i][k];
            }
            out[i][j] = s;
        }
        out[i][3] = c(a[i][3]);
    }
    out
}

fn mat4_mul_const<T: HandScalar>(a: &[[T; 4]; 4], b: &M4) -> [[T; 4]; 4] {
    let mut out = [[T::zero(); 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            let mut s = T::zero();
            for k in 0..4 {
                s = s + a[i][k] * b[k][j];
            }
            out[i][j] = s;
        }
    }
    out
}

/// Every vertex posed: each bone's transform (its posed relatives chained from the
/// root, times its inverse base transform) applied to the base positions and blended
/// by the weights, mirrored if the model is, then the global rotation and translation.
pub fn skinned_vertex_positions<T: HandScalar>(data: &Data, pose: &[[T; 3]]) -> Vec<[T; 3]> {
    let bones = data.parents.len();
    let mut absolutes: Vec<[[T; 4]; 4]> = Vec::with_capacity(bones);
    for i in 0..bones {
        let r = euler_angles_to_rotation_matrix(pose[i + 3]);
        let relative = relative_times_rotation(&data.base_relatives[i], &r);
        let absolute = match data.parents[i] {
            None => relative,
            Some(p) => mat_mul(&absolutes[p], &relative),
        };
        absolutes.push(absolute);
    }
    let mut positions = vec![[T::zero(); 3]; data.base_positions.len()];
    for (bone, absolute) in absolutes.iter().enumerate() {
        let transform = mat4_mul_const(absolute, &data.inverse_base_absolutes[bone]);
        let weights = &data.weights[bone];
        for (v, (position, base)) in positions.iter_mut().zip(&data.base_positions).enumerate() {
            for i in 0..3 {
                let row = &transform[i];
                let curr =
                    row[0] * base[0] + row[1] * base[1] + row[2] * base[2] + row[3] * base[3];
                position[i] = position[i] + curr * weights[v];
            }
        }
    }
    if data.is_mirrored {
        for p in &mut positions {
            p[0] = -p[0];
        }
    }
    // The global transform: rotation with its columns scaled by pose[1], translation.
    let mut r = angle_axis_to_rotation_matrix(pose[0]);
    for row in &mut r {
        for (j, entry) in row.iter_mut().enumerate() {
            *entry = *entry * pose[1][j];
        }
    }
    for p in &mut positions {
        let q = *p;
        for i in 0..3 {
            p[i] = r[i][0] * q[0] + r[i][1] * q[1] + r[i][2] * q[2] + pose[2][i];
        }
    }
    positions
}

/// The residuals `3·npts`: per data point, the point minus its posed vertex (`us`
/// empty) or minus its point on its posed triangle (`us` of `2·npts`).
pub fn objective<T: HandScalar>(theta: &[T], us: &[T], data: &Data) -> Vec<T> {
    let pose = to_pose_params(theta, data.parents.len());
    let positions = skinned_vertex_positions(data, &pose);
    let mut err = Vec::with_capacity(3 * data.correspondences.len());
    for (i, (&corr, point)) in data.correspondences.iter().zip(&data.points).enumerate() {
        if us.is_empty() {
            for j in 0..3 {
                err.push(c::<T>(point[j]) - positions[corr][j]);
            }
        } else {
            let verts = data.triangles[corr];
            let (u0, u1) = (us[2 * i], us[2 * i + 1]);
            for j in 0..3 {
                let hand_point = u0 * positions[verts[0]][j]
                    + u1 * positions[verts[1]][j]
                    + (T::one() - u0 - u1) * positions[verts[2]][j];
                err.push(c::<T>(point[j]) - hand_point);
            }
        }
    }
    err
}

/// The Jacobian, row-major, `3·npts` rows of `ncols` (see the module's documentation
/// for the columns), and `ncols`: the objective on `Dual<4>`, four directions per run.
pub fn jacobian(theta: &[f64], us: &[f64], data: &Data) -> (Vec<f64>, usize) {
    jacobian_by::<4>(theta, us, data)
}

/// [`jacobian`] with `B` directions per run of the objective on `Dual<B>`.
pub fn jacobian_by<const B: usize>(theta: &[f64], us: &[f64], data: &Data) -> (Vec<f64>, usize) {
    let u_dirs = if us.is_empty() { 0 } else { 2 };
    let ncols = u_dirs + theta.len();
    let nrows = 3 * data.correspondences.len();
    let mut jac = vec![0.0; nrows * ncols];
    for start in (0..ncols).step_by(B) {
        // Column `col`'s direction is partial `col − start` of this run.
        let seed = |col: usize| {
            let mut partials = [0.0; B];
            if (start..start + B).contains(&col) {
                partials[col - start] = 1.0;
            }
            partials
        };
        let theta_d: Vec<Dual<B>> = theta
            .iter()
            .enumerate()
            .map(|(k, &t)| Dual::new(t, seed(u_dirs + k)))
            .collect();
        let us_d: Vec<Dual<B>> = us
            .iter()
            .enumerate()
            .map(|(k, &u)| Dual::new(u, seed(k % 2)))
            .collect();
        let err = objective(&theta_d, &us_d, data);
        let width = B.min(ncols - start);
        for (r, e) in err.iter().enumerate() {
            jac[r * ncols + start..r * ncols + start + width].copy_from_slice(&e.partials[..width]);
        }
    }
    (jac, ncols)
}

/// Answers `objective` and `jacobian`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    let data = Data::from_input(&input)?;
    let us = input.us.concat();
    match function {
        "objective" => {
            let (err, timings) = repeat(input.runs, || objective(&input.theta, &us, &data));
            Evaluation::new(err, timings)
        }
        "jacobian" => {
            let ((jac, ncols), timings) = repeat(input.runs, || jacobian(&input.theta, &us, &data));
            let rows: Vec<&[f64]> = jac.chunks(ncols).collect();
            Evaluation::new(rows, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "ht",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::test_support::seeded;

    /// A small random hand: `bones` bones in a chain-and-fan tree, `verts` vertices
    /// with random weights, `npts` data points.
    fn hand(
        bones: usize,
        verts: usize,
        npts: usize,
        complicated: bool,
    ) -> (Data, Vec<f64>, Vec<f64>) {
        let mut random = {
            let mut seed = 100;
            move |n: usize, lo: f64, hi: f64| {
                seed += 1;
                seeded(n, seed, lo, hi)
            }
        };
        let mut matrices = |n: usize| -> Vec<M4> {
            (0..n)
                .map(|_| {
                    let v = random(12, -1.0, 1.0);
                    [
                        [v[0], v[1], v[2], v[3]],
                        [v[4], v[5], v[6], v[7]],
                        [v[8], v[9], v[10], v[11]],
                        [0.0, 0.0, 0.0, 1.0],
                    ]
                })
                .collect()
        };
        let base_relatives = matrices(bones);
        let inverse_base_absolutes = matrices(bones);
        let positions = seeded(3 * verts, 7, -1.0, 1.0);
        let weights = seeded(bones * verts, 8, 0.0, 1.0);
        let triangles: Vec<[usize; 3]> = (0..verts)
            .map(|v| [v, (v + 1) % verts, (v + 2) % verts])
            .collect();
        let points = seeded(3 * npts, 9, -1.0, 1.0);
        let data = Data {
            parents: (0..bones)
                .map(|i| if i == 0 { None } else { Some((i - 1) / 2) })
                .collect(),
            base_relatives,
            inverse_base_absolutes,
            base_positions: positions
                .chunks(3)
                .map(|p| [p[0], p[1], p[2], 1.0])
                .collect(),
            weights: weights.chunks(verts).map(<[f64]>::to_vec).collect(),
            triangles,
            is_mirrored: true,
            correspondences: (0..npts).map(|i| (5 * i + 3) % verts).collect(),
            points: points.chunks(3).map(|p| [p[0], p[1], p[2]]).collect(),
        };
        let theta = seeded(26, 10, -0.5, 0.5);
        let us = if complicated {
            seeded(2 * npts, 11, 0.0, 0.5)
        } else {
            Vec::new()
        };
        (data, theta, us)
    }

    #[test]
    fn the_jacobian_matches_central_differences() {
        for complicated in [false, true] {
            // 25 bones: the pose parameters reach bone index 22 (column 25).
            let (data, theta, us) = hand(25, 12, 6, complicated);
            let (jac, ncols) = jacobian(&theta, &us, &data);
            let u_dirs = if complicated { 2 } else { 0 };
            assert_eq!(ncols, 26 + u_dirs);
            let nrows = 3 * data.correspondences.len();
            assert_eq!(jac.len(), nrows * ncols);
            let h = 1e-6;
            for col in 0..ncols {
                // Move θ, or every uᵢ₀ (uᵢ₁) at once.
                let moved = |sign: f64| {
                    let mut t = theta.clone();
                    let mut u = us.clone();
                    if col < u_dirs {
                        for k in (col..u.len()).step_by(2) {
                            u[k] += sign * h;
                        }
                    } else {
                        t[col - u_dirs] += sign * h;
                    }
                    objective(&t, &u, &data)
                };
                let (up, down) = (moved(1.0), moved(-1.0));
                for r in 0..nrows {
                    let fd = (up[r] - down[r]) / (2.0 * h);
                    let d = jac[r * ncols + col];
                    assert!(
                        (d - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                        "complicated {complicated}, row {r}, column {col}: {d} against {fd}"
                    );
                }
            }
        }
    }

    #[test]
    fn at_zero_pose_the_hand_is_its_base_pose() {
        // One root bone with identity transforms, θ = 0: every vertex stays put.
        let id = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let bones = 23;
        let data = Data {
            parents: (0..bones)
                .map(|i| if i == 0 { None } else { Some(0) })
                .collect(),
            base_relatives: vec![id; bones],
            inverse_base_absolutes: vec![id; bones],
            base_positions: vec![[1.0, 2.0, 3.0, 1.0]],
            weights: (0..bones)
                .map(|b| vec![if b == 0 { 1.0 } else { 0.0 }])
                .collect(),
            triangles: vec![[0, 0, 0]],
            is_mirrored: false,
            correspondences: vec![0],
            points: vec![[1.5, 2.0, 2.0]],
        };
        let err = objective(&[0.0; 26], &[], &data);
        assert_eq!(err, vec![0.5, 0.0, -1.0]);
    }
}
