//! The macros that write the rules: one trait per method, one pullback struct per
//! rule, implemented for `f64` and `f32`.
//!
//! A rule is stated once as its forward expression and its partial derivatives; the
//! macros add the trait, the struct that carries `x` and `y` into the reverse sweep
//! and the `#[inline(always)]` impls, so that a derived rule optimises like
//! hand-written code.

/// Declares the trait of one rule method: `fn $method(self) -> (Output, Pullback)`.
macro_rules! rule_trait {
    ($(#[$doc:meta])* $Trait:ident :: $method:ident) => {
        $(#[$doc])*
        pub trait $Trait {
            /// The primal value's type.
            type Output;
            /// The reverse half of the rule.
            type Pullback: mochi_core::Pullback;
            /// Runs the primal; returns its value and the pullback.
            fn $method(self) -> (Self::Output, Self::Pullback);
        }
    };
}

/// Rules of one float argument: `Trait::method, Pullback: |x| forward, |x, y| dy/dx;`.
///
/// The pullback stores `x` and `y` and adds `ȳ · dy/dx` into `x̄`.
macro_rules! unary_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident, $Pullback:ident:
            |$x:ident| $forward:expr, |$px:ident, $py:ident| $derivative:expr;
    )*) => {$(
        rule_trait!($(#[$doc])* $Trait::$method);

        #[doc = concat!("The pullback of [`", stringify!($Trait), "`]: holds `x` and `y`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $Pullback<T> {
            x: T,
            y: T,
        }

        unary_rules!(@float f64, $Trait $method $Pullback |$x| $forward, |$px, $py| $derivative);
        unary_rules!(@float f32, $Trait $method $Pullback |$x| $forward, |$px, $py| $derivative);
    )*};
    (@float $t:ident, $Trait:ident $method:ident $Pullback:ident
        |$x:ident| $forward:expr, |$px:ident, $py:ident| $derivative:expr) => {
        impl $Trait for mochi_core::Call<(&$t,)> {
            type Output = $t;
            type Pullback = $Pullback<$t>;
            #[inline(always)]
            fn $method(self) -> ($t, $Pullback<$t>) {
                let $x: $t = *self.0 .0;
                let y: $t = $forward;
                (y, $Pullback { x: $x, y })
            }
        }

        impl mochi_core::Pullback for $Pullback<$t> {
            type Output = $t;
            type Args = ($t,);
            #[inline(always)]
            // The derivative may be a constant such as −1 (`op_neg`).
            #[allow(clippy::neg_multiply)]
            fn pullback(self, dy: $t, (dx,): (&mut $t,)) {
                #[allow(dead_code)]
                type T = $t;
                let ($px, $py): ($t, $t) = (self.x, self.y);
                *dx += dy * $derivative;
            }
        }
    };
}

/// Rules of two float arguments of one type:
/// `Trait::method, Pullback: |a, b| forward, |a, b, y| (∂y/∂a, ∂y/∂b);`.
///
/// The pullback stores `a`, `b` and `y` and adds `ȳ · ∂y/∂a` into `ā` and
/// `ȳ · ∂y/∂b` into `b̄`.
macro_rules! binary_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident, $Pullback:ident:
            |$a:ident, $b:ident| $forward:expr,
            |$pa:ident, $pb:ident, $py:ident| $partials:expr;
    )*) => {$(
        rule_trait!($(#[$doc])* $Trait::$method);

        #[doc = concat!("The pullback of [`", stringify!($Trait), "`]: holds both arguments and `y`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $Pullback<T> {
            a: T,
            b: T,
            y: T,
        }

        binary_rules!(@float f64, $Trait $method $Pullback
            |$a, $b| $forward, |$pa, $pb, $py| $partials);
        binary_rules!(@float f32, $Trait $method $Pullback
            |$a, $b| $forward, |$pa, $pb, $py| $partials);
    )*};
    (@float $t:ident, $Trait:ident $method:ident $Pullback:ident
        |$a:ident, $b:ident| $forward:expr, |$pa:ident, $pb:ident, $py:ident| $partials:expr) => {
        impl $Trait for mochi_core::Call<(&$t, &$t)> {
            type Output = $t;
            type Pullback = $Pullback<$t>;
            #[inline(always)]
            fn $method(self) -> ($t, $Pullback<$t>) {
                let ($a, $b): ($t, $t) = (*self.0 .0, *self.0 .1);
                let y: $t = $forward;
                (y, $Pullback { a: $a, b: $b, y })
            }
        }

        impl mochi_core::Pullback for $Pullback<$t> {
            type Output = $t;
            type Args = ($t, $t);
            #[inline(always)]
            fn pullback(self, dy: $t, (da, db): (&mut $t, &mut $t)) {
                #[allow(dead_code)]
                type T = $t;
                let ($pa, $pb, $py): ($t, $t, $t) = (self.a, self.b, self.y);
                let (dyda, dydb): ($t, $t) = $partials;
                *da += dy * dyda;
                *db += dy * dydb;
            }
        }
    };
}

/// Rules of integer arguments, which have no tangent: `Trait::method: |a, b| forward
/// for [types];`. The pullback is [`InactivePullback`](crate::integer::InactivePullback).
macro_rules! inactive_rules {
    ($(
        $Trait:ident :: $method:ident: |$($arg:ident),+| $forward:expr, for [$($t:ident),* $(,)?];
    )*) => {$(
        inactive_rules!(@each $Trait $method ($($arg),+) ($forward) [$($t),*]);
    )*};
    (@each $Trait:ident $method:ident $args:tt $forward:tt [$($t:ident),*]) => {$(
        inactive_rules!(@one $Trait $method $args $forward $t);
    )*};
    (@one $Trait:ident $method:ident ($($arg:ident),+) ($forward:expr) $t:ident) => {
        impl $Trait for mochi_core::Call<($(inactive_rules!(@ref $arg $t),)+)> {
            type Output = $t;
            type Pullback = $crate::integer::InactivePullback<($(inactive_rules!(@no $arg),)+)>;
            #[inline(always)]
            fn $method(self) -> ($t, Self::Pullback) {
                let ($($arg,)+) = self.0;
                let ($($arg,)+): ($(inactive_rules!(@val $arg $t),)+) = ($(*$arg,)+);
                ($forward, $crate::integer::InactivePullback::new())
            }
        }
    };
    (@ref $arg:ident $t:ident) => { &$t };
    (@val $arg:ident $t:ident) => { $t };
    (@no $arg:ident) => { mochi_core::NoTangent };
}
