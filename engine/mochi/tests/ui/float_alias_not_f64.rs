use mochi::prelude::*;

type Real = f32;

#[differentiable]
fn square(x: Real) -> Real {
    x * x
}

fn main() {
    let _ = square(2.0);
}
