use mochi::prelude::*;

// A `pop` whose buffer is read afterwards (a stack drained by `while let Some(v) =
// s.pop()` and not read after is written as an index loop, and supported).
#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut s = x.to_vec();
    let last = s.pop().unwrap();
    last * s[0]
}

fn main() {}
