use mochi::prelude::*;

// `?` in a `while` condition is evaluated once per test, not once per statement: not
// supported (a `?` inside a closure is, since 2026-12-03: it returns from the closure).
#[differentiable]
fn f(x: &[f64]) -> Option<f64> {
    let mut i = 0;
    let mut s = 0.0;
    while *x.get(i)? > 0.0 {
        s += x[i];
        i += 1;
    }
    Some(s)
}

fn main() {}
