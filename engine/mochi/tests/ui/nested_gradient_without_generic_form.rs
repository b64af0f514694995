// A function with no generic form (a struct argument) called through its `gradient`
// inside a differentiable function: the nested rule's derivative is a Hessian-vector
// product, which needs the generic form; the error says so at the caller.
use mochi::prelude::*;

#[derive(Clone, Debug, Tangent)]
pub struct Model {
    w: Vec<f64>,
    b: f64,
}

#[differentiable]
fn loss(m: &Model, x: &[f64]) -> f64 {
    let mut s = m.b;
    for i in 0..x.len() {
        s += m.w[i] * x[i];
    }
    s * s
}

#[differentiable]
fn outer(m: &Model, x: &[f64]) -> f64 {
    let (_, gx) = loss::gradient(m, x);
    gx[0] * x[0]
}

fn main() {
    let m = Model { w: vec![1.0], b: 0.5 };
    let _ = outer::gradient(&m, &[2.0]);
}
