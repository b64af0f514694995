//! A timed routine: one primal or one gradient call of one case in one column.

use std::hint::black_box;

/// Something the timer can call repeatedly.
pub trait Cell {
    /// Runs the routine `n` times in a tight loop and returns the last value.
    fn run(&mut self, n: u64) -> f64;
    /// The gradient computed by the last run, flattened as
    /// [`Case::gradient_layout`](crate::cases::Case::gradient_layout) says; empty for a primal.
    fn gradient(&self) -> Vec<f64>;
}

/// A [`Cell`] made of a state, a call on it, and a way to read the gradient back.
struct FnCell<S, F, G> {
    state: S,
    call: F,
    read: G,
}

impl<S, F, G> Cell for FnCell<S, F, G>
where
    F: FnMut(&mut S) -> f64,
    G: Fn(&S) -> Vec<f64>,
{
    fn run(&mut self, n: u64) -> f64 {
        let mut value = 0.0;
        for _ in 0..n {
            // The loop is monomorphised for each call; `black_box` keeps the optimiser
            // from hoisting or dropping the work.
            value = black_box((self.call)(black_box(&mut self.state)));
        }
        value
    }

    fn gradient(&self) -> Vec<f64> {
        (self.read)(&self.state)
    }
}

/// A gradient cell: `call` runs one full gradient on `state` (whatever the column
/// pays per call happens inside it) and returns the value; `read` flattens the gradient.
pub fn gradient_cell<S: 'static>(
    state: S,
    call: impl FnMut(&mut S) -> f64 + 'static,
    read: impl Fn(&S) -> Vec<f64> + 'static,
) -> Box<dyn Cell> {
    Box::new(FnCell { state, call, read })
}

/// A primal cell: `call` evaluates the function once.
pub fn primal_cell<S: 'static>(
    state: S,
    call: impl FnMut(&mut S) -> f64 + 'static,
) -> Box<dyn Cell> {
    Box::new(FnCell {
        state,
        call,
        read: |_: &S| Vec::new(),
    })
}
