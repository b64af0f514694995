use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> Option<f64> {
    let y: f64 = "1.0".parse::<f64>().ok()?;
    Some(x * y)
}

fn main() {}
