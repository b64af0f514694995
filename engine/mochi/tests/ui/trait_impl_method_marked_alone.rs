// A method of a trait's `impl` marked alone: its derived companions are not members of
// the trait. The first error names the way out (mark the `impl` block).
use mochi::prelude::*;

pub trait Model {
    fn nll(&self, x: &[f64]) -> f64;
}

#[derive(Clone, Debug, Tangent)]
pub struct Gauss {
    pub mu: f64,
    pub s: f64,
}

impl Model for Gauss {
    #[differentiable]
    fn nll(&self, x: &[f64]) -> f64 {
        x.iter().map(|v| ((v - self.mu) / self.s).powi(2)).sum::<f64>()
    }
}

fn main() {}
