// A method of the user's named like a length query, in a block that is not marked,
// returning a float, in arithmetic with a derivative: every `.len()` call is read as a
// length (no derivative). Until 2026-12-09 the derivative was lost silently.
use mochi::prelude::*;

#[derive(Clone, Copy, Debug, Tangent)]
pub struct Seg {
    pub a: f64,
    pub b: f64,
}

impl Seg {
    pub fn len(&self) -> f64 {
        (self.b - self.a).abs()
    }
}

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let s = Seg { a: x[0], b: x[1] };
    s.len() * x[2] + x.len() as f64 * x[0]
}

// The same call held by a name first.
#[differentiable]
fn g(x: &[f64]) -> f64 {
    let s = Seg { a: x[0], b: x[1] };
    let l = s.len();
    let n = x.len();
    l * x[2] + (n - 1) as f64 * x[0]
}

fn main() {
    let _ = f::gradient(&[0.0, 1.0, 2.0]);
    let _ = g::gradient(&[0.0, 1.0, 2.0]);
}
