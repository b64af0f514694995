// A marked method named like a standard length query whose result carries a
// derivative: every `.len()` call is read as a length (no derivative), so the method's
// derivative would be lost at its calls. Until 2026-12-09 it was, silently:
// `w.len() * x[0]` differentiated as a constant times x[0].
use mochi::prelude::*;

#[derive(Clone, Copy, Debug, Tangent)]
pub struct Seg {
    pub a: f64,
    pub b: f64,
}

#[differentiable]
impl Seg {
    pub fn len(&self) -> f64 {
        (self.b - self.a).abs()
    }
}

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let s = Seg { a: x[0], b: x[1] };
    s.len() * x[2]
}

fn main() {
    let _ = f::gradient(&[0.0, 1.0, 2.0]);
}
