//! A differential test of `#[differentiable]`: random programs from a grammar
//! ([`generator`]), each checked at random points against forward mode ([`Dual`]) and
//! central finite differences.
//!
//! The fixed-seed batch runs in `cargo test --workspace` (`tests/generated.rs`); deeper
//! runs are `cargo xtask gradcheck --seed S --count N`. A disagreement prints the
//! program and the numbers; the seed and the program's name reproduce it.

pub mod generator;

use mochi::prelude::*;
use std::fmt::Write;

/// The forward-mode scalar of the oracle programs.
pub type D = Dual<1>;

/// A constant of the oracle programs.
pub fn c(v: f64) -> D {
    D::from(v)
}

/// The struct that generated programs build and step through `&mut` helpers.
#[derive(Clone, Debug, PartialEq, Tangent)]
pub struct St {
    /// A position-like field.
    pub p: f64,
    /// A velocity-like field.
    pub q: f64,
}

/// [`St`] over duals, for the oracle programs.
#[derive(Clone, Copy, Debug)]
pub struct StD {
    /// As [`St::p`].
    pub p: D,
    /// As [`St::q`].
    pub q: D,
}

/// `value_and_gradient` flattened: `(y, dx, da, db)`.
pub type Gradient = fn(&[f64], f64, f64) -> (f64, Vec<f64>, f64, f64);

/// One generated program: the function, its gradient and its forward-mode twin.
pub struct Program {
    /// `pK`: its index in the batch.
    pub name: &'static str,
    /// The batch's seed.
    pub seed: u64,
    /// The `#[differentiable]` source, helpers included.
    pub source: &'static str,
    /// The function itself.
    pub primal: fn(&[f64], f64, f64) -> f64,
    /// `value_and_gradient` flattened: `(y, dx, da, db)`.
    pub gradient: Gradient,
    /// The same program over duals.
    pub dual: fn(&[D], D, D) -> D,
}

/// One disagreement.
pub struct Failure {
    /// The program's name.
    pub name: &'static str,
    /// The batch's seed.
    pub seed: u64,
    /// The program's source.
    pub source: &'static str,
    /// What disagreed, with the numbers.
    pub what: String,
}

/// The outcome of a batch.
#[derive(Default)]
pub struct Report {
    /// Programs checked.
    pub programs: usize,
    /// Points checked.
    pub points: usize,
    /// Points skipped: a kink or a discontinuity within the finite-difference step, or a
    /// non-finite value.
    pub skipped: usize,
    /// The disagreements.
    pub failures: Vec<Failure>,
}

impl Report {
    /// One line: programs, points, skipped, disagreements.
    pub fn summary(&self) -> String {
        format!(
            "gradcheck: {} programs, {} points, {} skipped near kinks, {} disagreements",
            self.programs,
            self.points,
            self.skipped,
            self.failures.len()
        )
    }

    /// Every failure with its program.
    pub fn details(&self) -> String {
        let mut s = self.summary();
        for f in &self.failures {
            let _ = write!(
                s,
                "\n\n== {} (seed {}): {}\n{}",
                f.name, f.seed, f.what, f.source
            );
        }
        s
    }
}

/// A small deterministic generator for the points (SplitMix64).
fn points_rng(seed: u64, name: &str) -> generator::Rng {
    let mut h = seed;
    for b in name.bytes() {
        h = h.wrapping_mul(31).wrapping_add(b as u64);
    }
    generator::Rng::new(h)
}

fn close(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    (a - b).abs() <= abs + rel * a.abs().max(b.abs())
}

/// The directional derivative along `v` by central differences with step `h`.
fn central(p: &Program, x: &[f64], a: f64, b: f64, v: &[f64], h: f64) -> f64 {
    let shift = |s: f64| {
        let xs: Vec<f64> = x.iter().zip(v).map(|(xi, vi)| xi + s * vi).collect();
        (p.primal)(&xs, a + s * v[x.len()], b + s * v[x.len() + 1])
    };
    (shift(h) - shift(-h)) / (2.0 * h)
}

/// Checks one program at one point; `Ok(false)` when the point is skipped.
pub fn check_point(p: &Program, x: &[f64], a: f64, b: f64, v: &[f64]) -> Result<bool, String> {
    let y = (p.primal)(x, a, b);
    if !y.is_finite() {
        return Ok(false);
    }
    let (yg, dx, da, db) = (p.gradient)(x, a, b);
    if !close(y, yg, 1e-12, 1e-12) {
        return Err(format!(
            "value_and_gradient's value {yg:e} is not the function's {y:e} at x = {x:?}, a = {a}, b = {b}"
        ));
    }
    let n = x.len();
    let reverse: f64 =
        dx.iter().zip(v).map(|(g, vi)| g * vi).sum::<f64>() + da * v[n] + db * v[n + 1];
    let xd: Vec<D> = x.iter().zip(v).map(|(&xi, &vi)| D::new(xi, [vi])).collect();
    let yd = (p.dual)(&xd, D::new(a, [v[n]]), D::new(b, [v[n + 1]]));
    let forward = yd.partials[0];
    if !reverse.is_finite() || !forward.is_finite() {
        return Ok(false);
    }
    let fd = central(p, x, a, b, v, 1e-6);
    let fd_fine = central(p, x, a, b, v, 1e-7);
    // A branch switching within the step makes the two differences disagree.
    let smooth = close(fd, fd_fine, 1e-4, 1e-6);
    if !close(yd.value, y, 1e-12, 1e-12) {
        return Err(format!(
            "the forward-mode program's value {:e} is not the function's {y:e} (generator bug) at x = {x:?}, a = {a}, b = {b}",
            yd.value
        ));
    }
    if !close(reverse, forward, 1e-9, 1e-10) {
        return Err(format!(
            "reverse ⟨∇f, v⟩ = {reverse:e} but forward mode gives {forward:e} (finite differences {fd:e}) at x = {x:?}, a = {a}, b = {b}, v = {v:?}; gradient dx = {dx:?}, da = {da:e}, db = {db:e}"
        ));
    }
    if !smooth {
        return Ok(false);
    }
    if !close(reverse, fd, 1e-5, 1e-6) {
        return Err(format!(
            "reverse and forward mode agree on {reverse:e} but central finite differences give {fd:e} at x = {x:?}, a = {a}, b = {b}, v = {v:?}"
        ));
    }
    Ok(true)
}

/// Checks every program at `points` random points each.
pub fn check_all(programs: &[Program], points: usize) -> Report {
    let mut report = Report::default();
    for p in programs {
        report.programs += 1;
        let mut rng = points_rng(p.seed, p.name);
        for _ in 0..points {
            let x: Vec<f64> = (0..generator::N).map(|_| rng.uniform(-1.5, 1.5)).collect();
            let a = rng.uniform(-1.5, 1.5);
            let b = rng.uniform(-1.5, 1.5);
            let v: Vec<f64> = (0..generator::N + 2)
                .map(|_| rng.uniform(-1.0, 1.0))
                .collect();
            report.points += 1;
            match check_point(p, &x, a, b, &v) {
                Ok(true) => {}
                Ok(false) => report.skipped += 1,
                Err(what) => {
                    report.failures.push(Failure {
                        name: p.name,
                        seed: p.seed,
                        source: p.source,
                        what,
                    });
                    break;
                }
            }
        }
    }
    report
}
