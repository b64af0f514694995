// A method of the user's named like a length query and returning a float, whose value
// is handed on before any arithmetic (to a helper, into a buffer): every `.len()` call is
// read as a length, without a derivative, so its derivative would be lost. The result
// of each such call on a value with a derivative is checked to be an integer.
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
fn twice(v: f64) -> f64 {
    2.0 * v
}

#[differentiable]
fn handed_on(x: &[f64]) -> f64 {
    let s = Seg { a: x[0], b: x[1] };
    let l = s.len();
    twice(l) + x[2]
}

#[differentiable]
fn pushed(x: &[f64]) -> f64 {
    let s = Seg { a: x[0], b: x[1] };
    let mut v = Vec::new();
    v.push(s.len());
    v.push(x[2] * x.len() as f64);
    v[0] + v[1]
}

fn main() {
    let _ = handed_on::gradient(&[0.0, 1.0, 2.0]);
    let _ = pushed::gradient(&[0.0, 1.0, 2.0]);
}
