use mochi::prelude::*;

#[derive(Clone, Copy, Debug, Tangent)]
pub struct V3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl std::ops::Index<usize> for V3 {
    type Output = f64;
    fn index(&self, i: usize) -> &f64 {
        match i {
            0 => &self.x,
            1 => &self.y,
            _ => &self.z,
        }
    }
}

// `v[i]` of a type of the user's with an `Index` impl: the message says to read the
// fields or call a marked method that answers the element.
#[differentiable]
fn weighted(x: &[f64]) -> f64 {
    let v = V3 { x: x[0], y: x[1] * 2.0, z: x[2] };
    let mut s = 0.0;
    for i in 0..3 {
        s += v[i] * x[i];
    }
    s
}

fn main() {}
