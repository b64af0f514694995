use mochi::prelude::*;

// A marked function declared inside another function's body: its companions cannot
// reach it; the first error names the way out.
fn main() {
    #[differentiable]
    fn square(x: f64) -> f64 {
        x * x
    }
    let _ = square(2.0);
}
