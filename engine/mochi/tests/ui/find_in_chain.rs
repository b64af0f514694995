use mochi::prelude::*;

// `find`, `rfind` and `find_map` of a slice, and `find`, `next`, `last` and `nth` of a
// chain, are walks the derivation writes (`if let`, `let … else`, `unwrap`,
// `unwrap_or`); `find_map` of a chain is not.
#[differentiable]
fn first_large(x: &[f64]) -> f64 {
    if let Some(v) = x
        .iter()
        .map(|v| v * 2.0)
        .find_map(|v| if v > 1.0 { Some(v * v) } else { None })
    {
        v
    } else {
        0.0
    }
}

fn main() {}
