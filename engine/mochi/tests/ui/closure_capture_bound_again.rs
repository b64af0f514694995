use mochi::prelude::*;

// A local closure that writes a captured variable is inlined at its calls; where a
// `let` before a call binds that name again, the inlined call would write the new
// binding while Rust's closure writes the one it captured (before, a wrong value).
#[differentiable]
fn hidden(x: &[f64]) -> f64 {
    let mut acc = 0.0;
    let mut add = |v: f64| acc += v * v;
    add(x[0]);
    let inner = {
        let mut acc = x[1];
        add(x[2]);
        acc *= x[0];
        acc
    };
    add(x[0]);
    acc + inner
}

fn main() {}
