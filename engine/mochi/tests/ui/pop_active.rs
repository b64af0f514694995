use mochi::prelude::*;

// A `pop` whose `Option` is matched (a stack drained by `while let Some(v) = s.pop()`,
// `s.pop();` and `let last = s.pop().unwrap();` are written as reads and a rebuilt
// `Vec`, and supported).
#[differentiable]
fn f(x: &[f64]) -> f64 {
    let mut s = x.to_vec();
    if let Some(last) = s.pop() {
        last * s[0]
    } else {
        0.0
    }
}

fn main() {}
