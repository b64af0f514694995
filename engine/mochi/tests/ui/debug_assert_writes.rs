use mochi::prelude::*;

#[differentiable]
fn bump(s: &mut f64) -> f64 {
    *s *= 3.0;
    *s
}

// A `debug_assert!` runs its arguments only where debug assertions are on, so a write
// inside it is refused; so is one inside `format!`, whose text carries no derivative.
#[differentiable]
fn checked(x: &[f64]) -> f64 {
    let mut s = x[0];
    debug_assert!(bump(&mut s) > 0.0);
    let label = format!("{}", bump(&mut s));
    s * label.len() as f64
}

fn main() {}
