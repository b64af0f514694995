// A `higher_order` block in another module than its struct, which it imports by name:
// the block gives the struct's generic mirror its methods, and the mirror is not in
// scope. The first error names the way out (a glob import of the struct's module).
pub mod geom {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct V2 {
        pub x: f64,
        pub y: f64,
    }
}

pub mod ops {
    use crate::geom::V2;
    use mochi::prelude::*;

    #[differentiable(higher_order)]
    impl V2 {
        pub fn norm(&self) -> f64 {
            (self.x * self.x + self.y * self.y).sqrt()
        }
    }
}

fn main() {}
