use mochi::prelude::*;

trait Model {
    fn eval(&self, x: f64) -> f64;
}

#[differentiable]
fn f(m: &dyn Model, x: f64) -> f64 {
    m.eval(x)
}

fn main() {}
