use mochi::prelude::*;

#[derive(Clone, Copy, Tangent)]
enum Act {
    Tanh,
    Leaky(f64),
}

#[differentiable(higher_order)]
impl Act {
    fn apply(&self, v: f64) -> f64 {
        match self {
            Act::Tanh => v.tanh(),
            Act::Leaky(a) => {
                if v > 0.0 {
                    v
                } else {
                    a * v
                }
            }
        }
    }
}

const ACTS: [Act; 2] = [Act::Tanh, Act::Leaky(0.1)];

// Its gradient is there; its Hessian needs `higher_order` on the function, which the
// error says.
#[differentiable]
fn layer(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, &v) in x.iter().enumerate() {
        s += ACTS[i % 2].apply(v * x[0]);
    }
    s
}

fn main() {
    let _ = layer::gradient(&[1.0, 2.0]);
    let _ = layer::hessian(&[1.0, 2.0]);
}
