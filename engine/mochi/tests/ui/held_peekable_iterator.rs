use mochi::prelude::*;

// An iterator held in a variable and peeked at: the desugaring writes `it.next()` as a
// position, not `it.peek()`; the message says to read by index.
#[differentiable]
fn runs(x: &[f64]) -> f64 {
    let mut it = x.iter().peekable();
    let mut s = 0.0;
    while let Some(v) = it.next() {
        if let Some(w) = it.peek() {
            s += v * **w;
        }
    }
    s
}

fn main() {
    let _ = runs(&[1.0, 2.0]);
}
