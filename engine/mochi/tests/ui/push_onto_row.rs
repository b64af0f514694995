use mochi::prelude::*;

// A value pushed onto a row of a `Vec<Vec<f64>>`: refused at the method, naming what to
// write instead (the message said "grow it with `push(..)`" before).
#[differentiable]
fn rows(x: &[f64]) -> f64 {
    let mut m: Vec<Vec<f64>> = vec![Vec::new(), Vec::new()];
    for &e in x {
        m[0].push(e * e);
    }
    m[0].iter().sum()
}

fn main() {}
