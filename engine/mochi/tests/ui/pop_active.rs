use mochi::prelude::*;

// A `pop` whose `Option` is held (a stack drained by `while let Some(v) = s.pop()`,
// `s.pop();`, `let last = s.pop().unwrap();` and `if let Some(last) = s.pop()` are
// written as reads and a rebuilt `Vec`, and supported).
#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut s = x.to_vec();
    let last = s.pop();
    last.unwrap_or(0.0) * s[0]
}

fn main() {}
