use mochi::prelude::*;

#[derive(Clone, Debug, Tangent)]
pub struct Bag {
    pub s: f64,
    pub t: f64,
}

// A `&mut self` method that changes `self` and returns a reference (a chaining
// builder) is refused: a method returning a reference is read as an accessor, and the
// change it makes would be lost (before, `b.put(x);` ran as nothing: a wrong value).
#[differentiable]
impl Bag {
    pub fn new(s: f64) -> Bag {
        Bag { s, t: 0.0 }
    }

    fn put(&mut self, v: f64) -> &mut Self {
        self.t += self.s * v;
        self.s += v;
        self
    }

    // An accessor that changes nothing stays as it is.
    fn s_mut(&mut self) -> &mut f64 {
        &mut self.s
    }
}

fn main() {}
