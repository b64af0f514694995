use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> f64 {
    unsafe { std::arch::asm!("nop") };
    x
}

fn main() {}
