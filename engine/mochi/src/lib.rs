//! # mochi
//!
//! Reverse-mode automatic differentiation for stable Rust, by source transformation.
//!
//! Mark a plain function `#[differentiable]` and call its companion functions:
//!
//! ```
//! use mochi::prelude::*;
//!
//! #[differentiable]
//! fn f(x: &[f64], a: f64) -> f64 {
//!     let mut y = 0.0;
//!     for i in 0..x.len() {
//!         y += a * x[i].sin();
//!     }
//!     y
//! }
//!
//! fn main() {
//!     let x = [0.5, 1.0, 2.0];
//!     let (y, (dx, da)) = f::value_and_gradient(&x, 3.0);
//!     assert!((da - x.iter().map(|v| v.sin()).sum::<f64>()).abs() < 1e-12); // ∂f/∂a = Σ sin xᵢ
//!     assert!((dx[1] - 3.0 * 1.0_f64.cos()).abs() < 1e-12); // ∂f/∂xᵢ = a cos xᵢ
//!     assert!((y - 3.0 * x.iter().map(|v| v.sin()).sum::<f64>()).abs() < 1e-12);
//! }
//! ```
//!
//! A `#[differentiable]` function must be an item of a module (not declared inside
//! another function's body), because its companions live in a module beside it.
//!
//! The companions of `#[differentiable] fn f` live in a module `f` beside it:
//! `f::value_and_gradient`, `f::gradient`, `f::pullback`, the allocation-free
//! `f::value_and_gradient_into` / `f::gradient_into` (accumulate into shadow buffers the
//! caller owns), and `f::rrule`, the derived rule other differentiable functions call.
//!
//! Generic functions over the scalar type work as numeric Rust writes them, bounded by
//! `num_traits::Float` (re-exported as [`num_traits`]) or [`Real`]; the companions are
//! generic too, and such a function of one sequence also gets `f::jvp`, `f::hvp` and
//! `f::hessian` (forward over reverse, on [`Dual`] numbers):
//!
//! ```
//! use mochi::num_traits::Float;
//! use mochi::prelude::*;
//!
//! #[differentiable]
//! fn rosenbrock<T: Float>(x: &[T]) -> T {
//!     let mut s = T::zero();
//!     for i in 0..x.len() - 1 {
//!         let (a, b) = (x[i + 1] - x[i] * x[i], T::one() - x[i]);
//!         s = s + T::from(100.0).unwrap() * a * a + b * b;
//!     }
//!     s
//! }
//!
//! fn main() {
//!     let g = rosenbrock::gradient(&[1.0_f64, 1.0]); // the minimum: ∇f = 0
//!     assert_eq!(g, vec![0.0, 0.0]);
//!     let g32: Vec<f32> = rosenbrock::gradient(&[0.0_f32, 0.0]);
//!     assert_eq!(g32, vec![-2.0, 0.0]); // ∂f/∂x₀ = −2(1 − x₀) at 0
//!     let h = rosenbrock::hessian(&[1.0, 1.0]);
//!     assert_eq!(h, ndarray::arr2(&[[802.0, -400.0], [-400.0, 200.0]]));
//! }
//! ```
//!
//! Rules for primitives come from rule crates (`mochi-rules-*`); the standard ones are
//! re-exported here. See [`testing::test_rule`] for the harness every rule is checked by.
//!
//! This facade is the one crate above the rule crates. Dependencies run one way: this
//! crate → the rule crates (`rules/*`) → `mochi-core` (`engine/core`), and this crate
//! alone also depends on `mochi-macros` (`engine/macros`). Nothing below depends on the
//! facade: the core, the macros and the rule crates never list it as a dependency (the
//! code `#[differentiable]` writes names `::mochi` in the user's crate).

pub use mochi_core::*;
pub use mochi_macros::{differentiable, Tangent};

/// The standard rule crates.
pub mod rules {
    #[cfg(feature = "linalg")]
    pub use mochi_rules_linalg as linalg;
    #[cfg(feature = "nalgebra")]
    pub use mochi_rules_nalgebra as nalgebra;
    #[cfg(feature = "ndarray")]
    pub use mochi_rules_ndarray as ndarray;
    pub use mochi_rules_scalar as scalar;
    #[cfg(feature = "stats")]
    pub use mochi_rules_stats as stats;
}

/// Log-densities and bijections with rules: `mochi::stats::normal_logpdf(..)` and friends.
#[cfg(feature = "stats")]
pub use mochi_rules_stats as stats;

/// Linear algebra with rules: `mochi::linalg::cholesky(&k)` and friends.
#[cfg(feature = "linalg")]
pub use mochi_rules_linalg as linalg;

/// nalgebra values built from differentiable scalars, with rules:
/// `mochi::nalgebra::vector3(x, y, z)`, `mochi::nalgebra::dvector(&xs)` and friends
/// (`#[differentiable]` does not differentiate associated functions such as
/// `Vector3::new`). The rules of nalgebra's own methods and operators need no import.
#[cfg(feature = "nalgebra")]
pub use mochi_rules_nalgebra as nalgebra;

#[cfg(feature = "argmin")]
pub mod argmin;

/// Marks an expression as a constant for differentiation: no cotangent flows through it.
///
/// ```
/// use mochi::prelude::*;
///
/// #[differentiable]
/// fn f(x: f64) -> f64 {
///     x * no_grad(x) // d/dx = no_grad(x) = x, not 2x
/// }
///
/// fn main() {
///     assert_eq!(f::gradient(3.0), 3.0);
/// }
/// ```
#[inline(always)]
pub fn no_grad<T>(value: T) -> T {
    value
}

/// num-traits, whose `Float` bound generic `#[differentiable]` functions may use
/// (`use mochi::num_traits::Float;` then `fn f<T: Float>(x: &[T]) -> T`). `Float` is
/// not in the [`prelude`]: [`Dual`] implements both `Float` and [`Real`], so with
/// both traits in scope a method call on a concrete `Dual` would be ambiguous.
pub use num_traits;

/// Everything a user of mochi imports: `use mochi::prelude::*;`.
///
/// [`Scalar`](crate::Scalar) is not in it: generated code names it by path, and
/// nalgebra has a trait of the same name that `use nalgebra::*` brings in. Neither is
/// [`Real`](crate::Real) (import it as `mochi::Real` to bound a generic function by it,
/// or to call its methods on a `Dual`): its methods (`sqrt`, `max`, …) would be a second
/// candidate beside nalgebra's `RealField` or num-traits' `Float` for a method call on an
/// unsuffixed float literal (`let w = 3.0; w.max(y)`), which rustc rejects as E0034
/// "multiple applicable items" in code that compiles without mochi.
pub mod prelude {
    pub use crate::{differentiable, no_grad, Dual, NoTangent, Pullback, Tangent, TangentVector};
    /// The rule modules of the standard rule crates' free functions (`kron`,
    /// `concatenate`, …): type-namespace names beside the functions a user imports.
    #[cfg(feature = "ndarray")]
    pub use mochi_rules_ndarray::functions::*;
}

#[doc(hidden)]
#[doc(hidden)]
pub mod __private {
    pub use mochi_core::private::*;
    /// The standard rule crates' mirrors of crate paths (`ndarray::concatenate`), which
    /// generated code glob-imports in a block around a call written with a path.
    pub mod paths {
        #[cfg(feature = "ndarray")]
        pub use mochi_rules_ndarray::paths::*;
    }
    /// What the scalar of a generic twin meets beyond `Float + Scalar`: the constants of
    /// `num_traits::FloatConst` (so that it may call a generic helper asking for
    /// `T: Float + FloatConst`, `T::PI()`), and, with the ndarray rules, their element
    /// trait (so that a twin may call the rule crates' generic functions,
    /// `normal_logpdf::<T>`, and hold arrays of its scalar). `f64`, `f32` and `Dual` meet
    /// it.
    #[cfg(all(feature = "ndarray", not(feature = "linalg")))]
    pub trait TwinScalar:
        mochi_rules_ndarray::Elem + num_traits::FloatConst + FloatMethods
    {
    }
    #[cfg(all(feature = "ndarray", not(feature = "linalg")))]
    impl<T: mochi_rules_ndarray::Elem + num_traits::FloatConst + FloatMethods> TwinScalar for T {}
    /// With the linear-algebra rules too, their element trait (`Dual` has kernels of
    /// its own), so that a twin may call `cholesky`, `logdet`, `solve`, ….
    #[cfg(feature = "linalg")]
    pub trait TwinScalar:
        mochi_rules_ndarray::Elem
        + mochi_rules_linalg::LinalgElem
        + num_traits::FloatConst
        + FloatMethods
    {
    }
    #[cfg(feature = "linalg")]
    impl<T> TwinScalar for T where
        T: mochi_rules_ndarray::Elem
            + mochi_rules_linalg::LinalgElem
            + num_traits::FloatConst
            + FloatMethods
    {
    }
    /// What the scalar of a generic twin meets beyond `Float + Scalar` without the
    /// ndarray rules: the constants of `num_traits::FloatConst`.
    #[cfg(not(feature = "ndarray"))]
    pub trait TwinScalar: num_traits::FloatConst + FloatMethods {}
    #[cfg(not(feature = "ndarray"))]
    impl<T: num_traits::FloatConst + FloatMethods> TwinScalar for T {}
    /// The methods of `f64` that `num_traits::Float` does not have, on a generic twin's
    /// scalar: `round_ties_even` (derivative zero everywhere), and `rem_euclid` and
    /// `div_euclid` (derivatives as [`Real`](mochi_core::Real) gives them).
    pub trait FloatMethods {
        /// The value rounded to the nearest integer, ties to even.
        fn round_ties_even(self) -> Self;
        /// The least non-negative remainder of `self / rhs`.
        fn rem_euclid(self, rhs: Self) -> Self;
        /// The Euclidean quotient of `self / rhs`, an integer.
        fn div_euclid(self, rhs: Self) -> Self;
    }
    impl<S: mochi_core::Scalar> FloatMethods for S {
        #[inline]
        fn round_ties_even(self) -> Self {
            S::of_real(mochi_core::Real::round_ties_even(self.as_real()))
        }
        #[inline]
        fn rem_euclid(self, rhs: Self) -> Self {
            S::of_real(mochi_core::Real::rem_euclid(self.as_real(), rhs.as_real()))
        }
        #[inline]
        fn div_euclid(self, rhs: Self) -> Self {
            S::of_real(mochi_core::Real::div_euclid(self.as_real(), rhs.as_real()))
        }
    }
    /// The rule traits of the standard rule crates, glob-imported by generated code.
    pub mod rules {
        pub use mochi_core::private::CastFloatRule;
        #[cfg(feature = "linalg")]
        pub use mochi_rules_linalg::rules::*;
        #[cfg(feature = "nalgebra")]
        pub use mochi_rules_nalgebra::rules::*;
        #[cfg(feature = "ndarray")]
        pub use mochi_rules_ndarray::rules::*;
        pub use mochi_rules_scalar::rules::*;
    }
}
