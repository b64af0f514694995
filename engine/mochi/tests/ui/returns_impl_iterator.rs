use mochi::prelude::*;

#[differentiable]
fn discount_factors<'a>(y: f64, times: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
    times.iter().map(move |t| (-y * t).exp())
}

fn main() {}
