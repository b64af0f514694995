use mochi::prelude::*;

// `find`, `next`, `last` and `nth` of a chain are walks the derivation writes (`if let`,
// `let … else`, `unwrap`, `unwrap_or`); `rfind` and `find_map` are not.
#[differentiable]
fn last_large(x: &[f64]) -> f64 {
    if let Some(v) = x.iter().rfind(|v| **v > 1.0) {
        v * v
    } else {
        0.0
    }
}

fn main() {}
