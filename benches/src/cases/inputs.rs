//! Fixed-seed inputs for every case, at the benchmark's sizes or at small test sizes.

use ndarray::{Array1, Array2};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal, StandardNormal};

/// The seed every input is drawn from.
pub const SEED: u64 = 0x006d_6f63_6869;

/// Benchmark sizes, or small sizes for tests (finite differences need few inputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// The sizes of `shared/bench-cases.md`.
    Full,
    /// A few elements per input, same shapes of computation.
    Small,
}

/// `simple_mlp`'s inputs.
#[derive(Debug, Clone)]
pub struct MlpInputs {
    /// Output weights, 128×256.
    pub w2: Array2<f64>,
    /// Hidden weights, 256×128.
    pub w1: Array2<f64>,
    /// Targets, 128×70.
    pub y: Array2<f64>,
    /// Inputs, 128×70.
    pub x: Array2<f64>,
}

/// `gp_lml`'s inputs.
#[derive(Debug, Clone)]
pub struct GpInputs {
    /// Points 0, 0.2, …, 25.4.
    pub x: Array1<f64>,
    /// Observations drawn from the GP.
    pub y: Array1<f64>,
    /// Noise variance.
    pub s: f64,
}

/// `turing_broadcast_benchmark`'s inputs.
#[derive(Debug, Clone)]
pub struct TuringInputs {
    /// Unconstrained parameters `θ ∈ ℝ²`.
    pub theta: Vec<f64>,
    /// Observations from LogNormal(1.5, 0.5).
    pub data: Vec<f64>,
}

/// The inputs of all 13 cases.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The scale they were drawn at.
    pub scale: Scale,
    /// 1000 standard normals (as an array, for `sum_1000` and `sum_sin_1000`).
    pub x1000: Array1<f64>,
    /// The same numbers as a `Vec`, for the hand-written loops.
    pub x1000_vec: Vec<f64>,
    /// `kron_sum`'s A (20×20) and B (40×40).
    pub kron: (Array2<f64>, Array2<f64>),
    /// `kron_view_sum`'s A (40×30) and B (40×40).
    pub kron_view: (Array2<f64>, Array2<f64>),
    /// The 10×10 input of the three sin-cos-exp cases.
    pub x10: Array2<f64>,
    /// `simple_mlp`.
    pub mlp: MlpInputs,
    /// `gp_lml`.
    pub gp: GpInputs,
    /// `turing_broadcast_benchmark`.
    pub turing: TuringInputs,
    /// `large_single_block`'s `(x₀, a)`.
    pub block: (f64, f64),
}

fn normals(rng: &mut StdRng, n: usize) -> Vec<f64> {
    (0..n).map(|_| StandardNormal.sample(rng)).collect()
}

fn matrix(rng: &mut StdRng, rows: usize, cols: usize) -> Array2<f64> {
    Array2::from_shape_vec((rows, cols), normals(rng, rows * cols)).expect("rows × cols values")
}

impl Inputs {
    /// Draws every input from [`SEED`]; the same scale always gives the same numbers.
    pub fn new(scale: Scale) -> Self {
        let mut rng = StdRng::seed_from_u64(SEED);
        let full = scale == Scale::Full;
        let pick = |big: usize, small: usize| if full { big } else { small };
        let x1000_vec = normals(&mut rng, pick(1000, 12));
        let kron = (
            matrix(&mut rng, pick(20, 3), pick(20, 2)),
            matrix(&mut rng, pick(40, 4), pick(40, 3)),
        );
        let kron_view = (
            matrix(&mut rng, pick(40, 5), pick(30, 4)),
            matrix(&mut rng, pick(40, 4), pick(40, 4)),
        );
        let x10 = matrix(&mut rng, pick(10, 3), pick(10, 3));
        // The MLP's inputs are scaled so its activations stay of order one.
        let (o, h, i, b) = (pick(128, 3), pick(256, 5), pick(128, 4), pick(70, 2));
        let mlp = MlpInputs {
            w2: matrix(&mut rng, o, h) / (h as f64).sqrt(),
            w1: matrix(&mut rng, h, i) / (i as f64).sqrt(),
            y: matrix(&mut rng, o, b),
            x: matrix(&mut rng, i, b),
        };
        let gp = gp_inputs(&mut rng, pick(128, 6));
        let turing = TuringInputs {
            theta: normals(&mut rng, 2),
            data: {
                let lognormal = LogNormal::new(1.5, 0.5).expect("a valid LogNormal");
                (0..pick(100_000, 40))
                    .map(|_| lognormal.sample(&mut rng))
                    .collect()
            },
        };
        Inputs {
            scale,
            x1000: Array1::from(x1000_vec.clone()),
            x1000_vec,
            kron,
            kron_view,
            x10,
            mlp,
            gp,
            turing,
            block: (0.9, 0.99),
        }
    }
}

/// `x = 0, 0.2, …` (n points) and `y = L z` with `L L' = K`, the GP's kernel matrix.
fn gp_inputs(rng: &mut StdRng, n: usize) -> GpInputs {
    let s = 1.0;
    let x = Array1::from_iter((0..n).map(|i| 0.2 * i as f64));
    let k = Array2::from_shape_fn((n, n), |(i, j)| {
        let d = x[i] - x[j];
        (-0.5 * d * d).exp() + if i == j { s } else { 0.0 }
    });
    let l = mochi_rules_linalg::cholesky(&k).expect("the kernel matrix is positive definite");
    let z = Array1::from(normals(rng, n));
    // `l` holds the factor in its lower triangle only.
    let y = Array1::from_shape_fn(n, |i| (0..=i).map(|j| l[[i, j]] * z[j]).sum());
    GpInputs { x, y, s }
}
