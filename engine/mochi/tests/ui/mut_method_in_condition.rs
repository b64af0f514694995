use mochi::prelude::*;

#[derive(Clone, Tangent)]
struct S {
    x: f64,
}

impl S {
    fn bump(&mut self) -> bool {
        self.x *= 3.0;
        true
    }
}

#[differentiable]
fn bumped(s0: &S) -> f64 {
    let mut s = s0.clone();
    if s.bump() {
        s.x * s.x
    } else {
        0.0
    }
}

fn main() {}
