//! The entry points: [`test_rule`] and the [`RuleTest`] builder.

use super::arguments::Arguments;
use super::checks::{run_checks, Options};
use super::jvp::{MaybeJvp, NoJvp, WithJvp};
use super::perturb::Perturb;
use super::report::{RuleTestFailure, RuleTestReport};
use crate::{Accumulators, Pullback};
use std::fmt::Debug;
use std::marker::PhantomData;

/// Checks a rule against its primal; panics with a readable report on failure.
///
/// `args` is the tuple of owned arguments; `primal` and `rule` borrow out of it
/// (`|a| f(&a.0, a.1)`, or `&mut a.0` for an argument the function mutates). See
/// [`RuleTest`] for what is checked and for options.
///
/// ```
/// use mochi_core::{testing::test_rule, Call, Pullback};
///
/// pub trait SquareRule {
///     fn square(self) -> (f64, SquarePullback);
/// }
/// pub struct SquarePullback(f64);
/// impl Pullback for SquarePullback {
///     type Output = f64;
///     type Args = (f64,);
///     fn pullback(self, dy: f64, (dx,): (&mut f64,)) {
///         *dx += 2.0 * self.0 * dy; // d(x²)/dx = 2x
///     }
/// }
/// impl SquareRule for Call<(&f64,)> {
///     fn square(self) -> (f64, SquarePullback) {
///         let x = *self.0 .0;
///         (x * x, SquarePullback(x))
///     }
/// }
///
/// test_rule((3.0_f64,), |a| a.0 * a.0, |a| Call((&a.0,)).square());
/// ```
#[track_caller]
pub fn test_rule<A, Y, P>(args: A, primal: impl Fn(&mut A) -> Y, rule: impl Fn(&mut A) -> (Y, P))
where
    A: Arguments + Clone + Debug,
    A::Tangent: Accumulators,
    Y: Perturb + Clone + Debug,
    P: Pullback<Output = Y::Tangent, Args = A::Tangent>,
{
    RuleTest::new(args, primal, rule).run()
}

/// A rule test with options.
///
/// Checks, each failure naming the check, the argument and the numbers:
/// - [`Primal`](super::Check::Primal): the rule's value equals the plain function's,
///   exactly (`NaN` equals `NaN`, `0.0` equals `-0.0`);
/// - [`Inputs`](super::Check::Inputs): after forward and pullback the arguments equal
///   what the plain function leaves them as;
/// - [`Shapes`](super::Check::Shapes): every argument cotangent has its primal's shape
///   (a structural zero left untouched passes only where the gradient is zero);
/// - [`FiniteDifferences`](super::Check::FiniteDifferences): for random `ẋ` and `ȳ`,
///   `⟨ȳ, (f(x+hẋ) − f(x−hẋ))/2h⟩ ≈ ⟨x̄, ẋ⟩`, one argument at a time;
/// - [`Accumulation`](super::Check::Accumulation): on accumulators seeded with random
///   cotangents, the pullback adds its gradient to the seed;
/// - [`Jvp`](super::Check::Jvp), when [`jvp`](Self::jvp) is given:
///   `⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩`;
/// - [`NoAllocation`](super::Check::NoAllocation), when
///   [`expect_no_alloc`](Self::expect_no_alloc) is set: the pullback allocates nothing;
/// - [`Structured`](super::Check::Structured), when the output or an argument has a
///   structured cotangent form (an array's broadcast form, see
///   [`broadcast`](crate::broadcast)): a broadcast-form `ȳ` gives the cotangents its
///   dense expansion gives, and broadcast-form accumulators collect what dense ones do.
///
/// ```
/// use mochi_core::testing::{Check, RuleTest};
/// use mochi_core::FnPullback;
///
/// // A wrong rule for sin: the derivative has the wrong sign.
/// let failure = RuleTest::new(
///     (0.4_f64,),
///     |a| a.0.sin(),
///     |a| {
///         let x = a.0;
///         (x.sin(), FnPullback::<_, f64, (f64,)>::new(move |dy: f64, (dx,): (&mut f64,)| {
///             *dx -= x.cos() * dy;
///         }))
///     },
/// )
/// .check()
/// .unwrap_err();
/// assert_eq!(failure.checks(), vec![Check::FiniteDifferences]);
/// ```
pub struct RuleTest<A, Y, P, F, R, J = NoJvp> {
    args: A,
    primal: F,
    rule: R,
    jvp: J,
    options: Options,
    _types: PhantomData<fn() -> (Y, P)>,
}

impl<A, Y, P, F, R> RuleTest<A, Y, P, F, R, NoJvp>
where
    A: Arguments + Clone + Debug,
    A::Tangent: Accumulators,
    Y: Perturb + Clone + Debug,
    P: Pullback<Output = Y::Tangent, Args = A::Tangent>,
    F: Fn(&mut A) -> Y,
    R: Fn(&mut A) -> (Y, P),
{
    /// A test of `rule` against `primal` at `args`, with default options.
    pub fn new(args: A, primal: F, rule: R) -> Self {
        RuleTest {
            args,
            primal,
            rule,
            jvp: NoJvp,
            options: Options::default(),
            _types: PhantomData,
        }
    }
}

impl<A, Y, P, F, R, J> RuleTest<A, Y, P, F, R, J>
where
    A: Arguments + Clone + Debug,
    A::Tangent: Accumulators,
    Y: Perturb + Clone + Debug,
    P: Pullback<Output = Y::Tangent, Args = A::Tangent>,
    F: Fn(&mut A) -> Y,
    R: Fn(&mut A) -> (Y, P),
    J: MaybeJvp<A, Y>,
{
    /// Also checks the adjoint identity `⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩` against a forward-mode
    /// JVP `(x, ẋ) ↦ J·ẋ` (for instance built with [`Dual`](crate::Dual) numbers).
    pub fn jvp<K>(self, jvp: K) -> RuleTest<A, Y, P, F, R, WithJvp<K>>
    where
        K: Fn(&A, &A::Tangent) -> Y::Tangent,
    {
        RuleTest {
            args: self.args,
            primal: self.primal,
            rule: self.rule,
            jvp: WithJvp(jvp),
            options: self.options,
            _types: PhantomData,
        }
    }

    /// Checks the forward rule: `forward` is the rule's primal written over the
    /// [dual form](super::Dualize) of the arguments (the same generic code on
    /// [`Dual<1>`](crate::Dual) elements, which is what forward mode and the
    /// higher-order companions run). Its partials along `ẋ` must satisfy the adjoint
    /// identity `⟨ȳ, J·ẋ⟩ = ⟨Jᵀ·ȳ, ẋ⟩` with the rule's pullback.
    ///
    /// ```
    /// use mochi_core::testing::RuleTest;
    /// use mochi_core::{Pullback, Scalar};
    ///
    /// struct CubePullback(f64);
    /// impl Pullback for CubePullback {
    ///     type Output = f64;
    ///     type Args = (f64,);
    ///     fn pullback(self, dy: f64, (dx,): (&mut f64,)) {
    ///         *dx += 3.0 * self.0 * self.0 * dy;
    ///     }
    /// }
    /// fn cube<T: Scalar>(x: T) -> T { x * x * x }
    ///
    /// RuleTest::new((1.3,), |a| cube(a.0), |a| (cube(a.0), CubePullback(a.0)))
    ///     .forward(|a| cube(a.0)) // the same primal, on a `Dual<1>`
    ///     .run();
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn forward<K>(
        self,
        forward: K,
    ) -> RuleTest<A, Y, P, F, R, WithJvp<impl Fn(&A, &A::Tangent) -> Y::Tangent>>
    where
        A: super::Dualize,
        Y: super::Dualize,
        K: Fn(&A::Dual) -> Y::Dual,
    {
        self.jvp(move |args: &A, tangent: &A::Tangent| {
            Y::tangent_of(&forward(&args.dual_along(tangent)))
        })
    }

    /// Relative and absolute tolerance of the comparisons. Every comparison is relative
    /// to the magnitude of its terms (products of input and output sizes), so the
    /// defaults (`rtol = 1e-6`, `atol = 0`) suit most `f64` rules; `f32` rules and rules
    /// near singularities need a looser `rtol`.
    pub fn tolerance(mut self, rtol: f64, atol: f64) -> Self {
        self.options.rtol = rtol;
        self.options.atol = atol;
        self
    }

    /// The seed of the random tangents (fixed by default, so failures reproduce).
    pub fn seed(mut self, seed: u64) -> Self {
        self.options.seed = seed;
        self
    }

    /// How many random draws of `ẋ`, `ȳ` and accumulator seeds to check (default 3).
    pub fn samples(mut self, samples: usize) -> Self {
        self.options.samples = samples.max(1);
        self
    }

    /// Also checks that the pullback makes no allocation. The test binary must install
    /// [`CountingAllocator`](super::CountingAllocator) as its global allocator.
    pub fn expect_no_alloc(mut self) -> Self {
        self.options.no_alloc = true;
        self
    }

    /// Runs every check: the report when all pass, every failed comparison otherwise.
    pub fn check(&self) -> Result<RuleTestReport, RuleTestFailure> {
        run_checks(
            &self.args,
            &self.primal,
            &self.rule,
            &self.jvp,
            &self.options,
        )
    }

    /// Runs every check; panics with the report on failure.
    #[track_caller]
    pub fn run(&self) {
        if let Err(failure) = self.check() {
            panic!("{failure}");
        }
    }
}
