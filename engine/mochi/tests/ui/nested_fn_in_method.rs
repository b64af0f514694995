use mochi::prelude::*;

#[derive(Clone, Tangent)]
struct Scale {
    k: f64,
}

impl Scale {
    #[differentiable]
    fn apply(&self, x: f64) -> f64 {
        #[differentiable]
        fn sq(t: f64) -> f64 {
            t * t
        }
        self.k * sq(x)
    }
}

fn main() {}
