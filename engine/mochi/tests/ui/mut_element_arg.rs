use mochi::prelude::*;

#[differentiable]
fn scale(v: &mut [f64], a: f64) {
    for i in 0..v.len() {
        v[i] *= a;
    }
}

struct Rows {
    rows: Vec<Vec<f64>>,
}

impl Rows {
    fn empty() -> Rows {
        Rows { rows: Vec::new() }
    }
    fn scale_with(&self, v: &mut [f64], a: f64) {
        scale(v, a * self.rows.len() as f64);
    }
}

#[differentiable]
fn f(rows: &mut [Vec<f64>], a: f64) -> f64 {
    let r = Rows::empty();
    // A method's `&mut` element argument is not copied and assigned back.
    r.scale_with(&mut rows[0], a);
    rows[0][0]
}

fn main() {}
