use mochi::{prelude::*, Real};

#[differentiable]
fn f<T: Real>(x: &[T], s: f64) -> T {
    x[0] * T::from_f64(s)
}

fn main() {}
