use mochi::prelude::*;

#[derive(Clone, Tangent)]
struct Layer {
    w: f64,
}

trait Gelu {
    fn gelu(self) -> f64;
}
impl Gelu for f64 {
    fn gelu(self) -> f64 {
        self * 0.5
    }
}

impl Layer {
    #[differentiable]
    fn forward(&self, x: f64) -> f64 {
        (self.w * x).gelu()
    }
}

fn main() {}
