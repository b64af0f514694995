//! A pullback with a constant argument: `2.0 * x`, `h * k[i]`, `x / 6.0`.
//!
//! `#[differentiable]` knows which operand of a binary operator carries no derivative (a
//! literal, a value computed from integers and literals). The pullback of `a * b` keeps
//! both factors, but when `a` is constant only `a` is needed (for `b̄ += ȳ·a`); in a loop
//! the pullback is what the gradient stores per trip, so the other factor is memory
//! traffic for nothing. The macro saves `Keep::<_, K>::new(pullback).prune()` instead of
//! the pullback, `K` the constant argument's position: a rule crate implements
//! [`Prune`]-like traits of its own for `Keep<TheirPullback, K>` (method `prune`, taking
//! `self`), which method lookup prefers, and [`KeepWhole`] (for `&Keep`, reached only
//! when no crate's trait applies) returns the pullback unchanged. The pruned pullback
//! has the same `Output` and `Args`; the constant's slot receives nothing.

use std::cell::Cell;

/// A pullback whose argument `K` is constant, to be pruned (see the module).
pub struct Keep<P, const K: usize>(Cell<Option<P>>);

impl<P, const K: usize> Keep<P, K> {
    /// Wraps the pullback.
    #[inline(always)]
    pub fn new(p: P) -> Self {
        Keep(Cell::new(Some(p)))
    }

    /// The pullback (for a rule crate's `prune`).
    #[inline(always)]
    pub fn into_inner(self) -> P {
        self.0.into_inner().expect("a Keep holds its pullback")
    }
}

/// The fallback of `Keep::new(p).prune()`: the pullback itself, whole.
pub trait KeepWhole {
    /// The pullback's type.
    type Out;
    /// The pullback.
    fn prune(self) -> Self::Out;
}

impl<P, const K: usize> KeepWhole for &Keep<P, K> {
    type Out = P;
    #[inline(always)]
    fn prune(self) -> P {
        self.0.take().expect("a Keep holds its pullback")
    }
}
