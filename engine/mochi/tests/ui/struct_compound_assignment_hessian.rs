// `s += e` of a struct in a function asking for `higher_order`: the gradient compiles,
// and the Hessian says why the function has no generic form.
use mochi::prelude::*;
use std::ops::{Add, AddAssign};

#[derive(Clone, Copy, Debug, Tangent)]
pub struct V2 {
    x: f64,
    y: f64,
}

#[differentiable(higher_order)]
impl Add for V2 {
    type Output = V2;
    fn add(self, o: V2) -> V2 {
        V2 { x: self.x + o.x, y: self.y + o.y }
    }
}

#[differentiable(higher_order)]
impl AddAssign for V2 {
    fn add_assign(&mut self, o: V2) {
        self.x += o.x;
        self.y += o.y;
    }
}

#[differentiable(higher_order)]
fn total(x: &[f64]) -> f64 {
    let mut s = V2 { x: 0.0, y: 0.0 };
    for c in x.chunks(2) {
        s += V2 { x: c[0], y: c[1] * c[0] };
    }
    s.x * s.y
}

fn main() {
    let x = [0.5, 1.0, 2.0, 3.0];
    let _ = total::gradient(&x);
    let _ = total::hessian(&x);
}
