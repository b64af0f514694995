use mochi::prelude::*;

#[derive(Clone, Tangent)]
struct Model {
    w: f64,
}

impl Model {
    fn predict(&self, x: f64) -> f64 {
        self.w * x
    }
}

#[differentiable]
fn loss(m: &Model, x: f64) -> f64 {
    let y = m.predict(x);
    y * y
}

fn main() {}
