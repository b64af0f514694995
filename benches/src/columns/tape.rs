//! The cases as generic scalar code, for the peers that record a tape of scalar
//! operations (easy-ml's `Record`, echidna's `Reverse` and `BReverse`): the way those
//! crates' documentation writes numeric code. Instantiated at `f64` it is a plain
//! function, which the tests compare with the primal.

use crate::cases::inputs::Inputs;
use crate::cases::Case;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// The scalar operations the cases need, implemented by each tape crate's scalar type.
pub trait TapeScalar:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A constant (no derivative is recorded for it).
    fn constant(v: f64) -> Self;
    /// The primal value.
    fn value(self) -> f64;
    /// `sin`
    fn sin(self) -> Self;
    /// `cos`
    fn cos(self) -> Self;
    /// `exp`
    fn exp(self) -> Self;
    /// natural logarithm
    fn ln(self) -> Self;
    /// square root
    fn sqrt(self) -> Self;
    /// `max(v, 0)`, in the crate's own primitive where it has one.
    fn relu(self) -> Self;
}

impl TapeScalar for f64 {
    fn constant(v: f64) -> Self {
        v
    }
    fn value(self) -> f64 {
        self
    }
    fn sin(self) -> Self {
        f64::sin(self)
    }
    fn cos(self) -> Self {
        f64::cos(self)
    }
    fn exp(self) -> Self {
        f64::exp(self)
    }
    fn ln(self) -> Self {
        f64::ln(self)
    }
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    fn relu(self) -> Self {
        if self >= 0.0 {
            self
        } else {
            0.0
        }
    }
}

/// One case's inputs, flattened in the case's gradient layout, plus its shapes and
/// constant data: everything a scalar tape needs to evaluate it.
#[derive(Debug, Clone)]
pub struct TapeProblem {
    /// The case.
    pub case: Case,
    /// The differentiated inputs, flattened as [`Case::gradient_layout`] says.
    pub params: Vec<f64>,
    /// Matrix shapes `(rows, cols)` in argument order (empty for vectors and scalars).
    pub shapes: Vec<(usize, usize)>,
    /// Constant data (the observations of `turing_broadcast_benchmark`).
    pub data: Vec<f64>,
}

impl TapeProblem {
    /// The flattened problem of `case` on `inputs`.
    pub fn new(case: Case, inputs: &Inputs) -> Self {
        let mat = |a: &ndarray::Array2<f64>| (a.iter().copied().collect::<Vec<_>>(), a.dim());
        let (params, shapes): (Vec<f64>, Vec<(usize, usize)>) = match case {
            Case::Sum1000 | Case::SumLoop1000 | Case::SumSin1000 | Case::SumSinLoop1000 => {
                (inputs.x1000_vec.clone(), vec![])
            }
            Case::KronSum | Case::KronViewSum => {
                let (a, b) = if case == Case::KronSum {
                    &inputs.kron
                } else {
                    &inputs.kron_view
                };
                let ((fa, sa), (fb, sb)) = (mat(a), mat(b));
                ([fa, fb].concat(), vec![sa, sb])
            }
            Case::NaiveMapSinCosExp | Case::MapSinCosExp | Case::BroadcastSinCosExp => {
                let (f, s) = mat(&inputs.x10);
                (f, vec![s])
            }
            Case::SimpleMlp => {
                let m = &inputs.mlp;
                let parts = [&m.w2, &m.w1, &m.y, &m.x].map(mat);
                let shapes = parts.iter().map(|p| p.1).collect();
                (parts.into_iter().flat_map(|p| p.0).collect(), shapes)
            }
            Case::GpLml => {
                let g = &inputs.gp;
                ([g.x.to_vec(), g.y.to_vec(), vec![g.s]].concat(), vec![])
            }
            Case::TuringBroadcast => (inputs.turing.theta.clone(), vec![]),
            Case::LargeSingleBlock => (vec![inputs.block.0, inputs.block.1], vec![]),
        };
        let data = if case == Case::TuringBroadcast {
            inputs.turing.data.clone()
        } else {
            vec![]
        };
        TapeProblem {
            case,
            params,
            shapes,
            data,
        }
    }

    /// The case's function of the flattened inputs `p`.
    pub fn eval<T: TapeScalar>(&self, p: &[T]) -> T {
        match self.case {
            Case::Sum1000 | Case::SumLoop1000 => sum(p),
            Case::SumSin1000 | Case::SumSinLoop1000 => sum_sin(p),
            Case::KronSum => {
                let ((m, n), (r, c)) = (self.shapes[0], self.shapes[1]);
                let (a, b) = p.split_at(m * n);
                sum(&kron(a, (m, n), b, (r, c)))
            }
            Case::KronViewSum => {
                let ((_, n), (r, c)) = (self.shapes[0], self.shapes[1]);
                let (a, b) = p.split_at(self.shapes[0].0 * n);
                let (bm, bn) = (r / 2, c / 2);
                let block: Vec<T> = (0..bm)
                    .flat_map(|i| (0..bn).map(move |j| a[i * n + j]))
                    .collect();
                let upper: Vec<T> = (0..r * c)
                    .map(|k| {
                        if k % c >= k / c {
                            b[k]
                        } else {
                            T::constant(0.0)
                        }
                    })
                    .collect();
                sum(&kron(&block, (bm, bn), &upper, (r, c)))
            }
            Case::NaiveMapSinCosExp => {
                let mut y = vec![T::constant(0.0); p.len()];
                for (yi, &xi) in y.iter_mut().zip(p) {
                    *yi = xi.exp().cos().sin();
                }
                sum(&y)
            }
            Case::MapSinCosExp => {
                let y: Vec<T> = p.iter().map(|&v| v.exp().cos().sin()).collect();
                sum(&y)
            }
            Case::BroadcastSinCosExp => {
                let e: Vec<T> = p.iter().map(|&v| v.exp()).collect();
                let c: Vec<T> = e.iter().map(|&v| v.cos()).collect();
                let s: Vec<T> = c.iter().map(|&v| v.sin()).collect();
                sum(&s)
            }
            Case::SimpleMlp => {
                let [w2s, w1s, ys, xs] = [0, 1, 2, 3].map(|k| self.shapes[k]);
                let mut rest = p;
                let mut take = |(r, c): (usize, usize)| {
                    let (head, tail) = rest.split_at(r * c);
                    rest = tail;
                    head
                };
                let (w2, w1, y, x) = (take(w2s), take(w1s), take(ys), take(xs));
                let h = matmul(w1, w1s, x, xs);
                let r: Vec<T> = h.iter().map(|&v| v.relu()).collect();
                let z = matmul(w2, w2s, &r, (w1s.0, xs.1));
                let mut total = T::constant(0.0);
                for (&yi, &zi) in y.iter().zip(&z) {
                    let e = yi - zi;
                    total = total + e * e;
                }
                total
            }
            Case::GpLml => gp_lml(p),
            Case::TuringBroadcast => turing(p, &self.data),
            Case::LargeSingleBlock => {
                let (mut x, a) = (p[0], p[1]);
                for _ in 0..400 {
                    x = x * a;
                }
                x
            }
        }
    }
}

fn sum<T: TapeScalar>(x: &[T]) -> T {
    let mut y = T::constant(0.0);
    for &v in x {
        y = y + v;
    }
    y
}

fn sum_sin<T: TapeScalar>(x: &[T]) -> T {
    let mut y = T::constant(0.0);
    for &v in x {
        y = y + v.sin();
    }
    y
}

/// The Kronecker product of row-major `a` (m×n) and `b` (r×c), row-major (mr×nc).
fn kron<T: TapeScalar>(a: &[T], (m, n): (usize, usize), b: &[T], (r, c): (usize, usize)) -> Vec<T> {
    let mut k = Vec::with_capacity(m * n * r * c);
    for i in 0..m {
        for p in 0..r {
            for j in 0..n {
                for q in 0..c {
                    k.push(a[i * n + j] * b[p * c + q]);
                }
            }
        }
    }
    k
}

/// Row-major `a` (m×k) times `b` (k×n).
fn matmul<T: TapeScalar>(
    a: &[T],
    (m, k): (usize, usize),
    b: &[T],
    (k2, n): (usize, usize),
) -> Vec<T> {
    assert_eq!(k, k2, "inner dimensions");
    let mut c = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let mut acc = T::constant(0.0);
            for l in 0..k {
                acc = acc + a[i * k + l] * b[l * n + j];
            }
            c.push(acc);
        }
    }
    c
}

/// `p = [x (n), y (n), s]`: the GP log marginal likelihood by a scalar Cholesky.
fn gp_lml<T: TapeScalar>(p: &[T]) -> T {
    let n = (p.len() - 1) / 2;
    let (x, rest) = p.split_at(n);
    let (y, s) = (&rest[..n], rest[n]);
    let mut l = vec![T::constant(0.0); n * n];
    for i in 0..n {
        for j in 0..=i {
            let d = x[i] - x[j];
            let mut k = (T::constant(-0.5) * d * d).exp();
            if i == j {
                k = k + s;
            }
            l[i * n + j] = k;
        }
    }
    // In-place Cholesky of the lower triangle.
    for j in 0..n {
        let mut d = l[j * n + j];
        for k in 0..j {
            d = d - l[j * n + k] * l[j * n + k];
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut v = l[i * n + j];
            for k in 0..j {
                v = v - l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = v / d;
        }
    }
    // α = L⁻¹ y, so yᵀK⁻¹y = αᵀα; log det K = 2 Σ ln Lᵢᵢ.
    let mut alpha = Vec::with_capacity(n);
    let mut quad = T::constant(0.0);
    let mut logdet = T::constant(0.0);
    for i in 0..n {
        let mut v = y[i];
        for k in 0..i {
            v = v - l[i * n + k] * alpha[k];
        }
        let a = v / l[i * n + i];
        alpha.push(a);
        quad = quad + a * a;
        logdet = logdet + T::constant(2.0) * l[i * n + i].ln();
    }
    let c = n as f64 * (2.0 * std::f64::consts::PI).ln();
    T::constant(-0.5) * (quad + logdet + T::constant(c))
}

/// The log joint of `turing_broadcast_benchmark` at `θ = p`.
fn turing<T: TapeScalar>(p: &[T], data: &[f64]) -> T {
    use crate::cases::functions::{truncation_log_mass, HALF_LN_2PI};
    let (lo, hi) = (0.1, 10.0);
    let one = T::constant(1.0);
    let p_mu = one / (one + (-p[0]).exp());
    let p_sigma = one / (one + (-p[1]).exp());
    let mu = T::constant(lo) + T::constant(hi - lo) * p_mu;
    let sigma = T::constant(lo) + T::constant(hi - lo) * p_sigma;
    let log_jacobian = T::constant(2.0 * (hi - lo).ln())
        + p_mu.ln()
        + (one - p_mu).ln()
        + p_sigma.ln()
        + (one - p_sigma).ln();
    let prior = |v: T| {
        let z = (v - one) / T::constant(2.0);
        T::constant(-0.5) * z * z - T::constant(2.0_f64.ln() + HALF_LN_2PI + truncation_log_mass())
    };
    let mut log_likelihood = T::constant(0.0);
    for &xi in data {
        let lx = xi.ln();
        let z = (T::constant(lx) - mu) / sigma;
        log_likelihood = log_likelihood
            + (T::constant(-0.5) * z * z - sigma.ln() - T::constant(lx + HALF_LN_2PI));
    }
    prior(mu) + prior(sigma) + log_jacobian + log_likelihood
}
