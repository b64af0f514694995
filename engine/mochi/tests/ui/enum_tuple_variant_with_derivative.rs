use mochi::prelude::*;

// A tuple variant built from a differentiable value is refused where it is built, as a
// struct variant is (enum_variant_with_derivative.rs).
#[derive(Clone, Copy, Debug, Tangent)]
pub enum Piece {
    Low(f64),
    High(f64),
}

#[differentiable]
fn pieces(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x {
        let p = if v < 0.5 { Piece::Low(v) } else { Piece::High(v) };
        s += match p {
            Piece::Low(t) => t * t,
            Piece::High(t) => t.ln(),
        };
    }
    s
}

fn main() {}
