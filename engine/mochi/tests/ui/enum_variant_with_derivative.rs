use mochi::prelude::*;

// An enum deriving `Tangent` is a choice: its settings carry no derivative, so a
// variant built from differentiable values is refused where it is built.
#[derive(Clone, Copy, Debug, Tangent)]
pub enum Shape {
    Circle { r: f64 },
    Square { a: f64 },
}

#[differentiable]
fn area(s: &Shape) -> f64 {
    match s {
        Shape::Circle { r } => 3.0 * r * r,
        Shape::Square { a } => a * a,
    }
}

#[differentiable]
fn total(x: &[f64]) -> f64 {
    let s = Shape::Circle { r: x[0] };
    area(&s) + x[1]
}

fn main() {}
