use mochi::prelude::*;

// A `fn` item inside the body has no derived rule.
#[differentiable]
fn with_inner_helper(x: f64) -> f64 {
    fn helper(v: f64) -> f64 {
        v * v + 1.0
    }
    helper(x) * x
}

fn main() {}
