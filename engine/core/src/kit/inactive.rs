//! The pullback of an operation whose arguments have no tangent.

use crate::{Accumulators, NoTangent, Pullback};
use std::marker::PhantomData;

/// The pullback of an operation whose arguments have no tangent: a no-op. `A` is the
/// tuple of the arguments' cotangents (`(NoTangent, NoTangent)` for a binary operator).
pub struct InactivePullback<A>(PhantomData<fn() -> A>);

impl<A> InactivePullback<A> {
    /// The (only) value.
    #[inline(always)]
    pub fn new() -> Self {
        InactivePullback(PhantomData)
    }
}

impl<A> Default for InactivePullback<A> {
    #[inline(always)]
    fn default() -> Self {
        Self::new()
    }
}

impl<A> std::fmt::Debug for InactivePullback<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InactivePullback")
    }
}

impl<A: Accumulators> Pullback for InactivePullback<A> {
    type Output = NoTangent;
    type Args = A;
    #[inline(always)]
    fn pullback(self, _output: NoTangent, _args: A::Mut<'_>) {}
}
