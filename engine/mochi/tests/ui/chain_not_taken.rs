use mochi::prelude::*;

// A `scan` whose closure ends the walk by `None`: a chain the derivation does not write
// as a loop, refused at the chain with the chains it takes.
#[differentiable]
fn until_large(x: &[f64]) -> f64 {
    x.iter()
        .scan(0.0, |s, &v| {
            if *s > 2.0 {
                None
            } else {
                *s += v * v;
                Some(*s)
            }
        })
        .sum::<f64>()
}

fn main() {}
