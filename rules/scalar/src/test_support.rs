//! Helpers of this crate's tests: each checks a rule with `test_rule` at several points,
//! in `f64` (also against a forward-mode JVP with `Dual` numbers) and in `f32`.

// The `no allocation` checks count allocations.
#[global_allocator]
static A: mochi_core::testing::CountingAllocator = mochi_core::testing::CountingAllocator;

/// The relative tolerance of `f32` rules: finite differences and rounding in `f32`
/// are about `ε₃₂^{2/3} ≈ 2.4e-5` accurate at best.
pub(crate) const F32_RTOL: f64 = 1e-4;

/// `check_unary!(method, |x| expression, points)`: the rule `Call((&x,)).method()`
/// against `expression` at every point, in `f64` with the JVP of `expression` on
/// duals, and in `f32`.
macro_rules! check_unary {
    ($method:ident, |$x:ident| $f:expr, $points:expr) => {
        for p in $points {
            let p: f64 = p;
            mochi_core::testing::RuleTest::new(
                (p,),
                |a: &mut (f64,)| {
                    let $x = a.0;
                    $f
                },
                |a: &mut (f64,)| mochi_core::Call((&a.0,)).$method(),
            )
            .jvp(|a: &(f64,), t: &(f64,)| {
                #[allow(unused_imports)]
                use mochi_core::Real;
                let $x = mochi_core::Dual::<1>::new(a.0, [t.0]);
                ($f).partials[0]
            })
            .run();
            mochi_core::testing::RuleTest::new(
                (p as f32,),
                |a: &mut (f32,)| {
                    let $x = a.0;
                    $f
                },
                |a: &mut (f32,)| mochi_core::Call((&a.0,)).$method(),
            )
            .tolerance($crate::test_support::F32_RTOL, 0.0)
            .run();
        }
    };
}

/// `check_binary!(method, |a, b| expression, pairs)`: like [`check_unary!`] for
/// `Call((&a, &b)).method()`.
macro_rules! check_binary {
    ($method:ident, |$a:ident, $b:ident| $f:expr, $pairs:expr) => {
        for (p, q) in $pairs {
            let (p, q): (f64, f64) = (p, q);
            mochi_core::testing::RuleTest::new(
                (p, q),
                |a: &mut (f64, f64)| {
                    let ($a, $b) = (a.0, a.1);
                    $f
                },
                |a: &mut (f64, f64)| mochi_core::Call((&a.0, &a.1)).$method(),
            )
            .jvp(|a: &(f64, f64), t: &(f64, f64)| {
                #[allow(unused_imports)]
                use mochi_core::Real;
                let ($a, $b) = (
                    mochi_core::Dual::<1>::new(a.0, [t.0]),
                    mochi_core::Dual::<1>::new(a.1, [t.1]),
                );
                ($f).partials[0]
            })
            .run();
            mochi_core::testing::RuleTest::new(
                (p as f32, q as f32),
                |a: &mut (f32, f32)| {
                    let ($a, $b) = (a.0, a.1);
                    $f
                },
                |a: &mut (f32, f32)| mochi_core::Call((&a.0, &a.1)).$method(),
            )
            .tolerance($crate::test_support::F32_RTOL, 0.0)
            .run();
        }
    };
}

pub(crate) use check_binary;
pub(crate) use check_unary;

/// Runs a pullback of one argument with `ȳ = 1` into a zero accumulator: `dy/dx`.
pub(crate) fn derivative<T: mochi_core::TangentVector + From<i8>, P>(pullback: P) -> T
where
    P: mochi_core::Pullback<Output = T, Args = (T,)>,
{
    let mut dx = T::from(0);
    pullback.pullback(T::from(1), (&mut dx,));
    dx
}

/// Runs a pullback of two arguments with `ȳ = 1`: `(∂y/∂a, ∂y/∂b)`.
pub(crate) fn partials<T: mochi_core::TangentVector + From<i8>, P>(pullback: P) -> (T, T)
where
    P: mochi_core::Pullback<Output = T, Args = (T, T)>,
{
    let (mut da, mut db) = (T::from(0), T::from(0));
    pullback.pullback(T::from(1), (&mut da, &mut db));
    (da, db)
}
