//! A value and its gradient: `cargo run --release -p mochi-ad --example quickstart`.

use mochi::prelude::*;

/// A small least-squares loss with a smooth penalty, written as ordinary Rust.
#[differentiable]
fn loss(w: &[f64], x: &[f64], y: &[f64], lambda: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        let pred = w[0] + w[1] * x[i] + w[2] * (x[i] * x[i]).sin();
        let r = pred - y[i];
        total += r * r;
    }
    let mut penalty = 0.0;
    for v in w.iter() {
        penalty += (1.0 + v * v).ln();
    }
    total / x.len() as f64 + lambda * penalty
}

fn main() {
    let w = [0.5, -1.0, 2.0];
    let x: Vec<f64> = (0..8).map(|i| i as f64 * 0.25).collect();
    let y: Vec<f64> = x.iter().map(|v| 1.0 - 0.5 * v).collect();
    let (value, (dw, _dx, _dy, dlambda)) = loss::value_and_gradient(&w, &x, &y, 0.1);
    println!("loss        = {value:.6}");
    println!("∂loss/∂w    = {dw:.6?}");
    println!("∂loss/∂λ    = {dlambda:.6}");
}
