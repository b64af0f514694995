// A constructor of the crate's own type called through a renamed import (`use … as V`):
// the attribute does not see the `use`, so the rule of `V::new` is not found; the
// error names the renamed import and the type's own name as the way out.
pub mod geom {
    use mochi::prelude::*;

    #[derive(Clone, Copy, Debug, Tangent)]
    pub struct Vec3 {
        pub x: f64,
        pub y: f64,
        pub z: f64,
    }

    #[differentiable]
    impl Vec3 {
        pub fn new(x: f64, y: f64, z: f64) -> Vec3 {
            Vec3 { x, y, z }
        }
        pub fn dot(&self, o: &Vec3) -> f64 {
            self.x * o.x + self.y * o.y + self.z * o.z
        }
    }
}

pub mod user {
    use crate::geom::Vec3 as V;
    use mochi::prelude::*;

    #[differentiable]
    pub fn renamed(x: &[f64]) -> f64 {
        let a = V::new(x[0], x[1], x[2]);
        a.x * a.y
    }
}

fn main() {}
