use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> f64 {
    match x {
        v if v > 0.0 => v * 2.0,
        v => v,
    }
}

fn main() {}
