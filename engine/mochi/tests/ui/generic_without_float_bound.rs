use mochi::prelude::*;
use std::ops::Mul;

// `T` carries the derivative but nothing says it is a float, so no rule exists for
// `x * x` on `T`.
#[differentiable]
fn square<T: Copy + Mul<Output = T>>(x: T) -> T {
    x * x
}

fn main() {}
