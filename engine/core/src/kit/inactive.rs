//! The pullbacks of operations that pass no derivative on (integer arithmetic, shape
//! queries) and of identities (a view of an array).

use crate::{Accumulators, NoTangent, Pullback, TangentVector};
use std::marker::PhantomData;

/// The pullback of an operation whose result carries no derivative: a no-op. `A` is
/// the tuple of the arguments' cotangents (`(NoTangent, NoTangent)` for a binary
/// operator on integers, `(Array<f64, Ix2>,)` for `x.nrows()`), `O` the result's
/// cotangent (`NoTangent` for an integer, `(NoTangent, NoTangent)` for a pair of them).
/// Zero-sized, so a rule that returns it compiles to the primal operation.
pub struct InactivePullback<A, O = NoTangent>(PhantomData<fn() -> (A, O)>);

impl<A, O> InactivePullback<A, O> {
    /// The (only) value.
    #[inline(always)]
    pub fn new() -> Self {
        InactivePullback(PhantomData)
    }
}

impl<A, O> Default for InactivePullback<A, O> {
    #[inline(always)]
    fn default() -> Self {
        Self::new()
    }
}

impl<A, O> std::fmt::Debug for InactivePullback<A, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InactivePullback")
    }
}

impl<A: Accumulators, O> Pullback for InactivePullback<A, O> {
    type Output = O;
    type Args = A;
    #[inline(always)]
    fn pullback(self, _output: O, _args: A::Mut<'_>) {}
}

/// The pullback of an identity (`x.view()` of an array: the same values under another
/// type): the result's cotangent is added into the argument's, `x̄ += ȳ`. `T` is the
/// cotangent type both share. Zero-sized.
pub struct IdentityPullback<T>(PhantomData<fn() -> T>);

impl<T> IdentityPullback<T> {
    /// The (only) value.
    #[inline(always)]
    pub fn new() -> Self {
        IdentityPullback(PhantomData)
    }
}

impl<T> Default for IdentityPullback<T> {
    #[inline(always)]
    fn default() -> Self {
        Self::new()
    }
}

impl<T> std::fmt::Debug for IdentityPullback<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdentityPullback")
    }
}

impl<T: TangentVector> Pullback for IdentityPullback<T> {
    type Output = T;
    type Args = (T,);
    #[inline(always)]
    #[track_caller]
    fn pullback(self, output: T, (dx,): (&mut T,)) {
        dx.accumulate(output)
    }
}
