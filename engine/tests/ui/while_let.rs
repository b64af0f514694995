use mochi::prelude::*;

#[differentiable]
fn f(x: f64, mut v: Vec<usize>) -> f64 {
    let mut y = x;
    while let Some(_) = v.pop() {
        y = y * x;
    }
    y
}

fn main() {}
