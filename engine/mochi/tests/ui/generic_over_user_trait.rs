use mochi::prelude::*;

pub trait Act {
    fn act(&self, v: f64) -> f64;
}

// Generic over the types implementing a trait of the user's: not a float type, so the
// attribute says what to write instead.
#[differentiable]
fn apply<A: Act>(a: &A, x: &[f64]) -> f64 {
    a.act(x[0]) * x[1]
}

fn main() {}
