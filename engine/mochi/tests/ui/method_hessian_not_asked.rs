use mochi::prelude::*;

#[derive(Clone, Tangent)]
struct Linear {
    w: Vec<f64>,
}

impl Linear {
    // Methods have higher-order companions when asked: `#[differentiable(higher_order)]`.
    #[differentiable]
    fn loss(&self, x: &[f64]) -> f64 {
        self.w.iter().zip(x).map(|(w, v)| w * v).sum()
    }
}

fn main() {
    let m = Linear { w: vec![1.0, 2.0] };
    let _ = m.loss_gradient(&[1.0, 2.0]);
    let _ = m.loss_hessian(&[1.0, 2.0]);
}
