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

/// Rules of one scalar argument: `Trait::method, Pullback: |x| forward, |x, y| dy/dx;`.
///
/// Declares the trait (as [`rule_trait!`](crate::kit::rule_trait)), a pullback struct
/// `Pullback<S>`, and implements both once for every [`Scalar`](crate::Scalar) `S`
/// (`f64`, `f32`, [`Dual`](crate::Dual)), so that generic code bounded by `Scalar` has
/// the rule; the pullback adds `ȳ · dy/dx` into `x̄`. Inside the expressions `x` and
/// `y` are of type `T`, a [`Real`](crate::Real) (the scalar itself): write constants as
/// `T::ONE`, `T::TWO`, `T::from_f64(0.5)`.
///
/// Where `dy/dx` is computed is the rule's choice:
/// - by default, **beside the value** in the forward sweep, and the pullback stores it
///   (one float). Right where the derivative is cheap or shares work with the value:
///   `sin x` and `cos x` of one `x` become one `sincos` call; `exp`'s is `y` itself.
/// - with `lazy` before the derivative (`|x| x.ln(), lazy |x, y| x.recip();`), **in the
///   reverse sweep**: the pullback stores `x` and `y` and computes it there. Right where
///   the derivative is dear (a division, a square root): computed in the forward sweep
///   it would lengthen the primal's chain of dependent operations.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_unary_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident, $Pullback:ident:
            |$x:ident| $forward:expr, $($mode:ident)? |$px:ident, $py:ident| $derivative:expr;
    )*) => {$(
        $crate::kit::unary_rules!(
            @one [$($mode)?] [$(#[$doc])*] $Trait $method $Pullback $x ($forward) $px $py ($derivative)
        );
    )*};
    (@one [] [$(#[$doc:meta])*] $Trait:ident $method:ident $Pullback:ident $x:ident ($forward:expr)
        $px:ident $py:ident ($derivative:expr)) => {
        $crate::kit::rule_trait!($(#[$doc])* $Trait::$method);

        #[doc = concat!("The pullback of [`", stringify!($Trait), "`]: holds `dy/dx`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $Pullback<S> {
            derivative: S,
        }

        impl<S, T> $Trait for $crate::Call<(&S,)>
        where
            S: $crate::Scalar<Real = T>,
            T: $crate::Real,
        {
            type Output = S;
            type Pullback = $Pullback<S>;
            #[inline(always)]
            fn $method(self) -> (S, $Pullback<S>) {
                let x: S = *self.0 .0;
                let $x: T = $crate::Scalar::as_real(x);
                let y: T = $forward;
                let ($px, $py): (T, T) = ($x, y);
                let derivative = S::of_real($derivative);
                (S::of_real(y), $Pullback { derivative })
            }
        }

        impl<S, T> $crate::Pullback for $Pullback<S>
        where
            S: $crate::Scalar<Real = T>,
            T: $crate::Real,
        {
            type Output = S;
            type Args = (S,);
            #[inline(always)]
            // The derivative may be a constant such as −1 (`op_neg`).
            #[allow(clippy::neg_multiply)]
            fn pullback(self, dy: S, (dx,): (&mut S,)) {
                *dx += dy * self.derivative;
            }
        }
    };
    (@one [lazy] [$(#[$doc:meta])*] $Trait:ident $method:ident $Pullback:ident $x:ident
        ($forward:expr) $px:ident $py:ident ($derivative:expr)) => {
        $crate::kit::rule_trait!($(#[$doc])* $Trait::$method);

        #[doc = concat!("The pullback of [`", stringify!($Trait), "`]: holds `x` and `y`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $Pullback<S> {
            x: S,
            y: S,
        }

        impl<S, T> $Trait for $crate::Call<(&S,)>
        where
            S: $crate::Scalar<Real = T>,
            T: $crate::Real,
        {
            type Output = S;
            type Pullback = $Pullback<S>;
            #[inline(always)]
            fn $method(self) -> (S, $Pullback<S>) {
                let x: S = *self.0 .0;
                let $x: T = $crate::Scalar::as_real(x);
                let y = S::of_real($forward);
                (y, $Pullback { x, y })
            }
        }

        impl<S, T> $crate::Pullback for $Pullback<S>
        where
            S: $crate::Scalar<Real = T>,
            T: $crate::Real,
        {
            type Output = S;
            type Args = (S,);
            #[inline(always)]
            fn pullback(self, dy: S, (dx,): (&mut S,)) {
                // A zero cotangent passes nothing back, also where the derivative is
                // infinite (`sqrt`, `ln` at 0 of a value computed but not used).
                if $crate::Scalar::is_zero_cotangent(dy) {
                    return;
                }
                let ($px, $py): (T, T) = (
                    $crate::Scalar::as_real(self.x),
                    $crate::Scalar::as_real(self.y),
                );
                *dx += dy * S::of_real($derivative);
            }
        }
    };
}

/// Rules of two scalar arguments of one type:
/// `Trait::method, Pullback: |a, b| forward, |a, b, y| (∂y/∂a, ∂y/∂b);`.
///
/// Like [`unary_rules!`](crate::kit::unary_rules): one blanket impl over
/// [`Scalar`](crate::Scalar); the pullback stores the partials (computed beside the
/// value) and adds `ȳ · ∂y/∂a`
/// into `ā` and `ȳ · ∂y/∂b` into `b̄`. The expressions see `T`, a
/// [`Real`](crate::Real).
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

        #[doc = concat!("The pullback of [`", stringify!($Trait), "`]: holds `∂y/∂a` and `∂y/∂b`.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $Pullback<S> {
            dyda: S,
            dydb: S,
        }

        impl<S, T> $Trait for $crate::Call<(&S, &S)>
        where
            S: $crate::Scalar<Real = T>,
            T: $crate::Real,
        {
            type Output = S;
            type Pullback = $Pullback<S>;
            #[inline(always)]
            fn $method(self) -> (S, $Pullback<S>) {
                let (a, b): (S, S) = (*self.0 .0, *self.0 .1);
                let ($a, $b): (T, T) = (a.as_real(), b.as_real());
                let y: T = $forward;
                // The partials are computed here, beside the value (two floats saved
                // instead of three; see `unary_rules!`).
                let ($pa, $pb, $py): (T, T, T) = ($a, $b, y);
                let (dyda, dydb): (T, T) = $partials;
                (
                    S::of_real(y),
                    $Pullback {
                        dyda: S::of_real(dyda),
                        dydb: S::of_real(dydb),
                    },
                )
            }
        }

        impl<S, T> $crate::Pullback for $Pullback<S>
        where
            S: $crate::Scalar<Real = T>,
            T: $crate::Real,
        {
            type Output = S;
            type Args = (S, S);
            #[inline(always)]
            fn pullback(self, dy: S, (da, db): (&mut S, &mut S)) {
                *da += $crate::Scalar::strong_mul(dy, self.dyda);
                *db += $crate::Scalar::strong_mul(dy, self.dydb);
            }
        }
    )*};
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

/// Methods whose result carries no derivative, on receiver types a rule crate declares:
///
/// ```text
/// inactive_methods! {
///     /// `x.nrows()`.
///     MatRows::rows() -> usize, impl['a] for &'a Mat;
///     /// `x.len_of(axis)`.
///     NdLenOf::len_of(axis: Axis) -> usize, impl['a, S: Data, D: Dimension] for &'a ArrayBase<S, D>;
/// }
/// ```
///
/// Each line declares the rule trait (as [`rule_trait!`](crate::kit::rule_trait)) and
/// implements it for `Call<(receiver, &arg, …)>`: the primal method, and an
/// [`InactivePullback`](crate::kit::InactivePullback) whose output cotangent is the
/// result's tangent (`NoTangent` for a `usize`). The receiver is written as the
/// reference type the rule receives, with its generics in `impl[..]`; an optional
/// `where [..]` adds bounds. `#[differentiable]` treats every method it does not know as
/// a rule call, so a shape query declared here keeps its call and costs nothing: the
/// pullback is zero-sized and the value is the primal's.
#[doc(hidden)]
#[macro_export]
macro_rules! __kit_inactive_methods {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident ( $($arg:ident : $argty:ty),* $(,)? ) -> $out:ty,
            impl [$($gen:tt)*] for $Recv:ty $(where [$($w:tt)*])?;
    )*) => {$(
        $crate::kit::rule_trait!($(#[$doc])* $Trait::$method);

        impl<$($gen)*> $Trait for $crate::Call<($Recv, $(&$argty,)*)>
        where
            $Recv: $crate::Tangent,
            $($argty: $crate::Tangent + ::core::marker::Copy,)*
            $out: $crate::Tangent,
            $($($w)*)?
        {
            type Output = $out;
            type Pullback = $crate::kit::InactivePullback<
                (<$Recv as $crate::Tangent>::Tangent, $(<$argty as $crate::Tangent>::Tangent,)*),
                <$out as $crate::Tangent>::Tangent,
            >;
            #[inline(always)]
            fn $method(self) -> ($out, Self::Pullback) {
                let (receiver, $($arg,)*) = self.0;
                (receiver.$method($(*$arg),*), $crate::kit::InactivePullback::new())
            }
        }
    )*};
}
