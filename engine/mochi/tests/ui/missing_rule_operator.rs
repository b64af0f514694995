use mochi::prelude::*;

#[derive(Clone, Copy)]
struct Meters(f64);

impl std::ops::Mul<f64> for Meters {
    type Output = f64;
    fn mul(self, k: f64) -> f64 {
        self.0 * k
    }
}

#[differentiable]
fn f(x: f64) -> f64 {
    let m = Meters(2.0);
    m * x
}

fn main() {}
