use mochi::prelude::*;
use ndarray::{Array3, Axis};

#[differentiable]
fn f(a: &Array3<f64>) -> f64 {
    a.map_axis(Axis(1), |lane| lane.sum()).sum()
}

fn main() {}
