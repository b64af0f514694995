use mochi::prelude::*;

#[derive(Clone, Debug, Tangent)]
pub struct Model {
    pub w: f64,
    pub b: f64,
}

impl Model {
    pub fn w_mut(&mut self) -> &mut f64 {
        &mut self.w
    }
}

// A factor written through a reference the user's accessor returns would be lost: refused.
#[differentiable]
fn scaled_through_accessor(w: f64, b: f64) -> f64 {
    let mut m = Model { w, b };
    *m.w_mut() *= 3.0;
    m.w * m.w + m.b
}

fn main() {}
