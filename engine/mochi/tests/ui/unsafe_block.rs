use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> f64 {
    let y = unsafe { std::ptr::read(&x) };
    y * x
}

fn main() {}
