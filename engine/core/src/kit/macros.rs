//! The macros that write rules: [`rule_trait!`](super::rule_trait) for any rule, and
//! whole float rules in one line ([`unary_rules!`](super::unary_rules),
//! [`binary_rules!`](super::binary_rules)) or integer rules
//! ([`inactive_rules!`](super::inactive_rules)).
//!
//! A rule is stated once as its forward expression and its partial derivatives; the
//! macros add the trait, the struct that carries what the reverse sweep needs and the
//! `#[inline(always)]` impls, so that a derived rule optimises like hand-written code.
//! They are exported at the crate root under hidden names and re-exported by
//! [`kit`](super); use them as `mochi_core::kit::rule_trait!`.

/// Declares a rule trait: `rule_trait!(/// doc  Trait::method);` gives
/// `pub trait Trait { type Output; type Pullback: Pullback; fn method(self) -> (Output,
/// Pullback); }`.
///
/// The trait is local to the rule crate, so the crate can implement it for
/// `Call<(&A, …)>` whatever `A` is (no orphan rule in the way). The pullback is an
/// associated *named* type, never `impl Pullback`, so derived rules stay `'static`.
///
/// ```
/// mochi_core::kit::rule_trait! {
///     /// `x.cube()`: `Call((&x,)).cube()`.
///     CubeRule::cube
/// }
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_rule_trait {
    ($(#[$doc:meta])* $Trait:ident :: $method:ident) => {
        $(#[$doc])*
        pub trait $Trait {
            /// The primal value's type.
            type Output;
            /// The reverse half of the rule.
            type Pullback: $crate::Pullback;
            /// Runs the primal; returns its value and the pullback.
            fn $method(self) -> (Self::Output, Self::Pullback);
        }
    };
}

/// Rules of one float argument: `Trait::method, Pullback: |x| forward, |x, y| dy/dx;`.
///
/// Declares the trait (as [`rule_trait!`](crate::kit::rule_trait)), a pullback struct
/// `Pullback<T>` that stores `x` and `y`, and implements both for `f64` and `f32`; the
/// pullback adds `ȳ · dy/dx` into `x̄`. Inside the expressions, `T` names the float type.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_unary_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident, $Pullback:ident:
            |$x:ident| $forward:expr, |$px:ident, $py:ident| $derivative:expr;
    )*) => {$(
        $crate::kit::rule_trait!($(#[$doc])* $Trait::$method);

        #[doc = concat!("The pullback of [`", stringify!($Trait), "`]: holds `x` and `y`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $Pullback<T> {
            x: T,
            y: T,
        }

        $crate::kit::unary_rules!(@float f64, $Trait $method $Pullback |$x| $forward, |$px, $py| $derivative);
        $crate::kit::unary_rules!(@float f32, $Trait $method $Pullback |$x| $forward, |$px, $py| $derivative);
    )*};
    (@float $t:ident, $Trait:ident $method:ident $Pullback:ident
        |$x:ident| $forward:expr, |$px:ident, $py:ident| $derivative:expr) => {
        impl $Trait for $crate::Call<(&$t,)> {
            type Output = $t;
            type Pullback = $Pullback<$t>;
            #[inline(always)]
            fn $method(self) -> ($t, $Pullback<$t>) {
                let $x: $t = *self.0 .0;
                let y: $t = $forward;
                (y, $Pullback { x: $x, y })
            }
        }

        impl $crate::Pullback for $Pullback<$t> {
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
/// Like [`unary_rules!`](crate::kit::unary_rules): the pullback stores `a`, `b` and `y`
/// and adds `ȳ · ∂y/∂a` into `ā` and `ȳ · ∂y/∂b` into `b̄`.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_binary_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident, $Pullback:ident:
            |$a:ident, $b:ident| $forward:expr,
            |$pa:ident, $pb:ident, $py:ident| $partials:expr;
    )*) => {$(
        $crate::kit::rule_trait!($(#[$doc])* $Trait::$method);

        #[doc = concat!("The pullback of [`", stringify!($Trait), "`]: holds both arguments and `y`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $Pullback<T> {
            a: T,
            b: T,
            y: T,
        }

        $crate::kit::binary_rules!(@float f64, $Trait $method $Pullback
            |$a, $b| $forward, |$pa, $pb, $py| $partials);
        $crate::kit::binary_rules!(@float f32, $Trait $method $Pullback
            |$a, $b| $forward, |$pa, $pb, $py| $partials);
    )*};
    (@float $t:ident, $Trait:ident $method:ident $Pullback:ident
        |$a:ident, $b:ident| $forward:expr, |$pa:ident, $pb:ident, $py:ident| $partials:expr) => {
        impl $Trait for $crate::Call<(&$t, &$t)> {
            type Output = $t;
            type Pullback = $Pullback<$t>;
            #[inline(always)]
            fn $method(self) -> ($t, $Pullback<$t>) {
                let ($a, $b): ($t, $t) = (*self.0 .0, *self.0 .1);
                let y: $t = $forward;
                (y, $Pullback { a: $a, b: $b, y })
            }
        }

        impl $crate::Pullback for $Pullback<$t> {
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

/// Rules of arguments without a tangent (integers): `Trait::method: |a, b| forward for
/// [types];` implements an existing rule trait for `Call<(&t, &t)>` of each listed type,
/// with [`InactivePullback`](crate::kit::InactivePullback) as the pullback.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_inactive_rules {
    ($(
        $Trait:ident :: $method:ident: |$($arg:ident),+| $forward:expr, for [$($t:ident),* $(,)?];
    )*) => {$(
        $crate::kit::inactive_rules!(@each $Trait $method ($($arg),+) ($forward) [$($t),*]);
    )*};
    (@each $Trait:ident $method:ident $args:tt $forward:tt [$($t:ident),*]) => {$(
        $crate::kit::inactive_rules!(@one $Trait $method $args $forward $t);
    )*};
    (@one $Trait:ident $method:ident ($($arg:ident),+) ($forward:expr) $t:ident) => {
        impl $Trait for $crate::Call<($($crate::kit::inactive_rules!(@ref $arg $t),)+)> {
            type Output = $t;
            type Pullback = $crate::kit::InactivePullback<($($crate::kit::inactive_rules!(@no $arg),)+)>;
            #[inline(always)]
            fn $method(self) -> ($t, Self::Pullback) {
                let ($($arg,)+) = self.0;
                let ($($arg,)+): ($($crate::kit::inactive_rules!(@val $arg $t),)+) = ($(*$arg,)+);
                ($forward, $crate::kit::InactivePullback::new())
            }
        }
    };
    (@ref $arg:ident $t:ident) => { &$t };
    (@val $arg:ident $t:ident) => { $t };
    (@no $arg:ident) => { $crate::NoTangent };
}
