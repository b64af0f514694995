use mochi::prelude::*;

// A `loop`'s value used inside an expression: bind it first.
#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut i = 0;
    2.0 * loop {
        i += 1;
        if i > 2 {
            break x[0] * x[1];
        }
    }
}

fn main() {}
