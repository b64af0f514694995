use mochi::prelude::*;

#[derive(Clone, Tangent)]
struct Counter {
    n: usize,
}

// No method marked, and none whose result carries a derivative.
#[differentiable]
impl Counter {
    fn count(&self) -> usize {
        self.n
    }
    fn name(&self) -> &str {
        "counter"
    }
}

fn main() {}
