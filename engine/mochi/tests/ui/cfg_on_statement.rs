use mochi::prelude::*;

// A `#[cfg(..)]` on a statement: the derivation cannot see whether the statement is
// compiled, so it is refused at the attribute (before 2026-12-07 the statement ran in
// the derivative either way: a wrong value and gradient).
#[differentiable]
fn configured(x: &[f64]) -> f64 {
    let mut s = x[0] * x[1];
    #[cfg(any())]
    {
        s += 100.0 * x[2];
    }
    s
}

fn main() {}
