// A method without a rule, whose value later code computes with: the missing rule is
// the one error (its value has the receiver's type, so what follows type-checks).
use mochi::prelude::*;

trait Erfish {
    fn erfish(self) -> f64;
}
impl Erfish for f64 {
    fn erfish(self) -> f64 {
        self
    }
}

#[differentiable]
fn f(x: &[f64]) -> f64 {
    let e = x[0].erfish();
    let y = e * 2.0 + x[1];
    (y * y).sin() + e.exp()
}

fn main() {}
