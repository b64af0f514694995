// Under `higher_order`, `P2::from(t)` of a type with two marked `From` implementations,
// on a variable: the generic form tells which one a call takes by its argument's shape
// (an array or a tuple literal), and this one shows neither. The error names the way
// out where the Hessian is asked for.
use mochi::prelude::*;

#[derive(Clone, Copy, Debug, Tangent)]
pub struct P2 {
    pub x: f64,
    pub y: f64,
}

#[differentiable(higher_order)]
impl From<[f64; 2]> for P2 {
    fn from(a: [f64; 2]) -> Self {
        P2 { x: a[0], y: a[1] }
    }
}

#[differentiable(higher_order)]
impl From<(f64, f64)> for P2 {
    fn from(t: (f64, f64)) -> Self {
        P2 { x: t.0, y: t.1 }
    }
}

#[differentiable(higher_order)]
pub fn of_a_variable(x: &[f64]) -> f64 {
    let t = (x[0], x[1] * x[0]);
    let p = P2::from(t);
    p.x * p.y
}

fn main() {
    let _ = of_a_variable::hessian(&[1.0, 2.0]);
}
