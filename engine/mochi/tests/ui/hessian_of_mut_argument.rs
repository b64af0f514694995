use mochi::prelude::*;

/// A buffer lent `&mut` has no generic form's companions: the error names the argument.
#[differentiable]
fn smooth(x: &[f64], out: &mut [f64]) -> f64 {
    for i in 0..out.len() {
        out[i] = 0.5 * (x[i] + x[i + 1]);
    }
    out.iter().map(|v| v * v).sum()
}

fn main() {
    let mut buf = vec![0.0; 2];
    let _ = smooth::gradient(&[1.0, 2.0, 3.0], &mut buf);
    let _ = smooth::hessian(&[1.0, 2.0, 3.0], &mut buf);
}
