use mochi::prelude::*;
use std::ops::Add;

#[derive(Clone, Copy, Debug, Default, Tangent)]
pub struct V2 {
    pub x: f64,
    pub y: f64,
}

#[differentiable]
impl Add for V2 {
    type Output = V2;
    fn add(self, o: V2) -> V2 {
        V2 { x: self.x + o.x, y: self.y + o.y }
    }
}

// A `Sum` that is not a fold of `+` (it averages): the callers' `.sum()` would not be
// what the derivation reads it as, so the block says how to write it.
#[differentiable]
impl std::iter::Sum for V2 {
    fn sum<I: Iterator<Item = V2>>(iter: I) -> V2 {
        let v: Vec<V2> = iter.collect();
        let n = v.len() as f64;
        let s = v.iter().fold(V2::default(), |a, b| a + *b);
        V2 { x: s.x / n, y: s.y / n }
    }
}

fn main() {}
