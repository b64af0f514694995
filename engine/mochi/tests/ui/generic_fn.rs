use mochi::num_traits::Float;
use mochi::prelude::*;

// A generic function is differentiable (`fn f<T: Float>(x: T) -> T`); an argument
// typed `impl Trait` is not, because its companions need to name the type.
#[differentiable]
fn half<T: Float>(x: T, scale: impl Float) -> T {
    x * T::from(scale).unwrap()
}

fn main() {}
