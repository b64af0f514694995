use mochi::prelude::*;
use std::collections::BTreeMap;

// A map cannot hold differentiable values; the error says what to write instead.
#[differentiable]
fn by_position(x: &[f64]) -> f64 {
    let m: BTreeMap<usize, f64> = x.iter().copied().enumerate().collect();
    m.values().sum()
}

fn main() {
    let _ = by_position::gradient(&[1.0, 2.0]);
}
