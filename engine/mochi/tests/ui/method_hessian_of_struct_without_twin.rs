use mochi::prelude::*;

// A field of a type the derive cannot give a generic form: no mirror, no method twins.
#[derive(Clone, Tangent)]
struct Model {
    w: Vec<f64>,
    prior: Box<f64>,
}

impl Model {
    #[differentiable(higher_order)]
    fn loss(&self, x: &[f64]) -> f64 {
        self.w.iter().zip(x).map(|(w, v)| w * v).sum()
    }
}

fn main() {}
