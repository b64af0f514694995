use mochi::prelude::*;

// One method of a marked block that cannot be derived: its error alone, and the block's
// other methods keep their derived items (no "not `#[differentiable]`" at their calls).
#[derive(Clone, Tangent)]
struct Lin {
    w: Vec<f64>,
}

#[differentiable]
impl Lin {
    fn out(&self, x: &[f64]) -> f64 {
        self.w.iter().zip(x).map(|(w, v)| w * v).sum()
    }
    fn raw(&self) -> f64 {
        unsafe { *self.w.as_ptr() }
    }
}

#[differentiable]
fn loss(w: &[f64], x: &[f64]) -> f64 {
    let m = Lin { w: w.to_vec() };
    m.out(x).powi(2)
}

fn main() {}
