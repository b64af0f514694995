//! The optional forward-mode JVP of a [`RuleTest`](super::RuleTest): what the builder
//! stores and the checks call.

use crate::Tangent;

/// No forward-mode JVP given to a [`RuleTest`](super::RuleTest).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoJvp;

/// A forward-mode JVP given to a [`RuleTest`](super::RuleTest) with [`RuleTest::jvp`](super::RuleTest::jvp).
#[derive(Clone, Copy, Debug)]
pub struct WithJvp<J>(pub J);

/// An optional JVP `(x, ẋ) ↦ J·ẋ`; implemented by [`NoJvp`] and [`WithJvp`].
pub trait MaybeJvp<A: Tangent, Y: Tangent> {
    /// `J·ẋ` at `args`, or `None` without a JVP.
    fn jvp(&self, args: &A, tangent: &A::Tangent) -> Option<Y::Tangent>;
}

impl<A: Tangent, Y: Tangent> MaybeJvp<A, Y> for NoJvp {
    fn jvp(&self, _args: &A, _tangent: &A::Tangent) -> Option<Y::Tangent> {
        None
    }
}

impl<A: Tangent, Y: Tangent, J> MaybeJvp<A, Y> for WithJvp<J>
where
    J: Fn(&A, &A::Tangent) -> Y::Tangent,
{
    fn jvp(&self, args: &A, tangent: &A::Tangent) -> Option<Y::Tangent> {
        Some((self.0)(args, tangent))
    }
}
