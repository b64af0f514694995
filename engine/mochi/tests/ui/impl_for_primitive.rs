use mochi::prelude::*;
use std::ops::Mul;

#[derive(Clone, Copy, Debug, Tangent)]
pub struct V2 {
    pub x: f64,
    pub y: f64,
}

// The derivatives of a marked `impl` go into an inherent `impl` of its type, which
// `f64` cannot have.
#[differentiable]
impl Mul<V2> for f64 {
    type Output = V2;
    fn mul(self, v: V2) -> V2 {
        V2 { x: self * v.x, y: self * v.y }
    }
}

fn main() {}
