use mochi::prelude::*;

// A function taking a closure is inlined where a marked function calls it: the
// closure must be visible at the call, and the function marked.
#[differentiable]
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    0.5 * (b - a) * (f(a) + f(b))
}

fn make(k: f64) -> impl Fn(f64) -> f64 {
    move |t| k * t
}

#[differentiable]
fn held_elsewhere(x: &[f64]) -> f64 {
    let f = make(2.0);
    integrate(f, 0.0, x[0])
}

fn plain(f: impl Fn(f64) -> f64, a: f64) -> f64 {
    f(a)
}

#[differentiable]
fn to_an_unmarked_function(x: &[f64]) -> f64 {
    plain(|t| x[0] * t, 1.0)
}

// Its other arguments' types are written concretely.
#[differentiable]
fn generic_scalar<T: num_traits::Float, F: Fn(T) -> T>(f: F, a: T) -> T {
    f(a)
}

fn main() {}
