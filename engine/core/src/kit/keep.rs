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
//!
//! `K = 2` says that both operands are one value: a product written as a square
//! (`x[i] * x[i]`, `e * e`, the same expression without calls on both sides). The
//! pruned pullback keeps that value once and gives each operand's slot its partial.

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

/// A rule call one of whose arguments (`K`) is constant, before it runs: `x * 0.5` of an
/// array, `a / h`. [`Keep`] prunes the pullback after the call, but a rule whose forward
/// copies its operands (an array's `·` keeps both factors) has by then made the copy
/// the constant's partial never reads. The macro writes
/// `KeepCall::<_, K>::new(Call((&a, &b))).keep_op_mul().op_mul()`: a rule crate
/// implements a trait of its own with the method `keep_op_mul` (or `keep_op_div`),
/// taking `self`, for `KeepCall<Call<(..)>, K>`, which method lookup prefers, and
/// returns the value and a pullback wrapped in [`Kept`]; otherwise [`KeepCallWhole`]
/// (for `&KeepCall`) hands the call back unchanged and `.op_mul()` is the rule's. Either
/// way the result is the rule's `(value, pullback)`, the pullback taking the same
/// arguments (the constant's slot receives nothing).
///
/// ```
/// use mochi_core::kit::{KeepCall, KeepCallWhole as _};
/// use mochi_core::Call;
/// // No rule crate prunes `f64 · f64` before the call: the call comes back whole.
/// let c: Call<(&f64, &f64)> = KeepCall::<_, 1>::new(Call((&3.0, &2.0))).keep_op_mul();
/// assert_eq!(*c.0 .0 * *c.0 .1, 6.0);
/// ```
pub struct KeepCall<C, const K: usize>(Cell<Option<C>>);

impl<C, const K: usize> KeepCall<C, K> {
    /// Wraps the call.
    #[inline(always)]
    pub fn new(c: C) -> Self {
        KeepCall(Cell::new(Some(c)))
    }

    /// The call (for a rule crate's `keep_op_mul`).
    #[inline(always)]
    pub fn into_inner(self) -> C {
        self.0.into_inner().expect("a KeepCall holds its call")
    }
}

/// A rule's `(value, pullback)` from a constant-aware `keep_op_mul`/`keep_op_div`
/// ([`KeepCall`]); `.op_mul()` (`.op_div()`) unwraps it, as it calls the rule of a
/// call handed back whole.
pub struct Kept<R>(pub R);

impl<R> Kept<R> {
    /// The value and the pullback.
    #[inline(always)]
    pub fn op_mul(self) -> R {
        self.0
    }

    /// The value and the pullback.
    #[inline(always)]
    pub fn op_div(self) -> R {
        self.0
    }
}

/// The fallback of [`KeepCall`]: the call itself, whose rule then runs as written.
pub trait KeepCallWhole {
    /// The call's type.
    type Call;
    /// The call, for its `op_mul` rule.
    fn keep_op_mul(self) -> Self::Call;
    /// The call, for its `op_div` rule.
    fn keep_op_div(self) -> Self::Call;
}

impl<C, const K: usize> KeepCallWhole for &KeepCall<C, K> {
    type Call = C;
    #[inline(always)]
    fn keep_op_mul(self) -> C {
        self.0.take().expect("a KeepCall holds its call")
    }
    #[inline(always)]
    fn keep_op_div(self) -> C {
        self.0.take().expect("a KeepCall holds its call")
    }
}
