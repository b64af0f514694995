use mochi::prelude::*;

macro_rules! twice {
    ($e:expr) => {
        $e * 2.0
    };
}

#[differentiable]
fn f(x: f64) -> f64 {
    let y = twice!(x);
    y
}

fn main() {}
