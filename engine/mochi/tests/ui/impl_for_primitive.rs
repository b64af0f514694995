use mochi::prelude::*;
use std::ops::Mul;


#[derive(Clone, Copy, Debug, Tangent)]
pub struct V2 {
    pub x: f64,
    pub y: f64,
}

pub trait Scale {
    fn scale(self, v: V2) -> V2;
}

// The derivatives of a marked `impl` go into an inherent `impl` of its type, which
// `f64` cannot have (an operator with the struct on its right is derived as the
// struct's method; a trait of the user's is not).
#[differentiable]
impl Scale for f64 {
    fn scale(self, v: V2) -> V2 {
        V2 { x: self * v.x, y: self * v.y }
    }
}

// The operator is.
#[differentiable]
impl Mul<V2> for f64 {
    type Output = V2;
    fn mul(self, v: V2) -> V2 {
        v.scaled(self)
    }
}

#[differentiable]
impl V2 {
    fn scaled(&self, k: f64) -> V2 {
        V2 { x: self.x * k, y: self.y * k }
    }
}

fn main() {}
