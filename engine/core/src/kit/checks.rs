//! Tests of one-line float rules: [`check_unary!`](super::check_unary) and
//! [`check_binary!`](super::check_binary).

/// `check_unary!(method, |x| expression, points)`: the rule `Call((&x,)).method()`
/// against `expression` at every point, in `f64` and in `f32` (with
/// [`F32_RTOL`](crate::kit::F32_RTOL)), each with its forward rule: the JVP of
/// `expression` on `Dual` numbers, by the adjoint identity with the pullback.
///
/// `expression` must compute exactly what the rule's value is (the harness compares
/// values bit for bit) and must also run on `Dual<1>` (through [`Real`](crate::Real)).
/// When the primal method does not run on duals, give the JVP's formula separately:
/// `check_unary!(method, |x| x.method(), jvp: |x| textbook formula, points)`. The rule
/// traits must be in scope.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_check_unary {
    ($method:ident, |$x:ident| $f:expr, jvp: |$jx:ident| $g:expr, $points:expr) => {
        for p in $points {
            let p: f64 = p;
            $crate::testing::RuleTest::new(
                (p,),
                |a: &mut (f64,)| {
                    let $x = a.0;
                    $f
                },
                |a: &mut (f64,)| $crate::Call((&a.0,)).$method(),
            )
            .jvp(|a: &(f64,), t: &(f64,)| {
                #[allow(unused_imports)]
                use $crate::Real;
                let $jx = $crate::Dual::<1>::new(a.0, [t.0]);
                ($g).partials[0]
            })
            .run();
            $crate::testing::RuleTest::new(
                (p as f32,),
                |a: &mut (f32,)| {
                    let $x = a.0;
                    $f
                },
                |a: &mut (f32,)| $crate::Call((&a.0,)).$method(),
            )
            .forward(|a: &($crate::Dual<1>,)| {
                #[allow(unused_imports)]
                use $crate::Real;
                let $jx = a.0;
                $g
            })
            .tolerance($crate::kit::F32_RTOL, 0.0)
            .run();
        }
    };
    ($method:ident, |$x:ident| $f:expr, $points:expr) => {
        $crate::kit::check_unary!($method, |$x| $f, jvp: |$x| $f, $points)
    };
}

/// `check_binary!(method, |a, b| expression, pairs)`: like
/// [`check_unary!`](crate::kit::check_unary) for `Call((&a, &b)).method()`.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_check_binary {
    ($method:ident, |$a:ident, $b:ident| $f:expr, $pairs:expr) => {
        for (p, q) in $pairs {
            let (p, q): (f64, f64) = (p, q);
            $crate::testing::RuleTest::new(
                (p, q),
                |a: &mut (f64, f64)| {
                    let ($a, $b) = (a.0, a.1);
                    $f
                },
                |a: &mut (f64, f64)| $crate::Call((&a.0, &a.1)).$method(),
            )
            .jvp(|a: &(f64, f64), t: &(f64, f64)| {
                #[allow(unused_imports)]
                use $crate::Real;
                let ($a, $b) = (
                    $crate::Dual::<1>::new(a.0, [t.0]),
                    $crate::Dual::<1>::new(a.1, [t.1]),
                );
                ($f).partials[0]
            })
            .run();
            $crate::testing::RuleTest::new(
                (p as f32, q as f32),
                |a: &mut (f32, f32)| {
                    let ($a, $b) = (a.0, a.1);
                    $f
                },
                |a: &mut (f32, f32)| $crate::Call((&a.0, &a.1)).$method(),
            )
            .forward(|a: &($crate::Dual<1>, $crate::Dual<1>)| {
                #[allow(unused_imports)]
                use $crate::Real;
                let ($a, $b) = (a.0, a.1);
                $f
            })
            .tolerance($crate::kit::F32_RTOL, 0.0)
            .run();
        }
    };
}
