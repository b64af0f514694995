use mochi::prelude::*;

#[differentiable]
fn f(x: f64) -> f64 {
    x.erf_of_something()
}

trait Erf {
    fn erf_of_something(self) -> f64;
}
impl Erf for f64 {
    fn erf_of_something(self) -> f64 {
        self
    }
}

fn main() {}
