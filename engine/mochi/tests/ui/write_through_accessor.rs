use mochi::prelude::*;

#[derive(Clone, Tangent)]
struct Ring {
    buf: Vec<f64>,
}

#[differentiable]
impl Ring {
    #[differentiable]
    fn sum(&self) -> f64 {
        self.buf.iter().sum()
    }
    // A slot, for writing in place: a reference, left as written.
    fn slot(&mut self, i: usize) -> &mut f64 {
        &mut self.buf[i]
    }
}

// A write through the reference an accessor returned: refused at the binding (a type
// error at the attribute before).
#[differentiable]
fn written(x: &[f64]) -> f64 {
    let mut r = Ring { buf: x.to_vec() };
    let s = r.slot(1);
    *s *= x[0];
    r.sum()
}

fn main() {}
