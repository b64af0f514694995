use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> (f64, f64) {
    (x, x * x)
}

fn main() {
    let _ = f::gradient(1.0);
}
