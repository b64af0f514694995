use mochi::prelude::*;

// A `fn` over floats inside the body is differentiated as a closure would be; one that
// calls itself cannot be, and has no derived rule.
#[differentiable]
fn with_inner_helper(x: f64) -> f64 {
    fn helper(v: f64, n: usize) -> f64 {
        if n == 0 {
            v
        } else {
            helper(v * v + 1.0, n - 1)
        }
    }
    helper(x, 2) * x
}

fn main() {}
