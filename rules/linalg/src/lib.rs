//! Reverse rules for dense linear algebra on ndarray matrices, with numerics by
//! [faer] (by plain loops on dual numbers): the Cholesky factor, triangular solves
//! (lower and upper, vector and matrix right-hand sides), Cholesky solves,
//! log-determinants, and the general solve by LU with partial pivoting.
//!
//! Each operation is a primal free function (`cholesky(&k)`), a rule module beside
//! it (`cholesky::rrule(&k)`, which `#[differentiable]` calls for the free
//! function), and a method form on [`mochi_core::Call`] (`Call((&k,)).cholesky()`)
//! from the traits in [`rules`].
//!
//! Functions of a positive-definite matrix read only its **lower triangle** (as
//! LAPACK's `'L'` does) and return their cotangent in the lower triangle. A matrix
//! that is not positive definite is an `Err(`[`NotPositiveDefinite`]`)` naming the
//! failing pivot, never a panic or a NaN gradient; the rule forms return the same
//! `Result`, and their pullback's output cotangent is that of the `Ok` value.
//!
//! # Element types and dual numbers
//!
//! Everything is generic over [`LinalgElem`]: `f64` and `f32`, whose kernels are
//! faer's, and forward-mode dual numbers [`Dual<N>`](mochi_core::Dual) for any `N`,
//! whose kernels are the plain unblocked algorithms run in dual arithmetic (exact
//! forward-mode derivatives, no derivative formulas of their own). So a generic
//! function that calls [`cholesky`](fn@cholesky), [`logdet`](fn@logdet) or
//! [`solve`](fn@solve) runs in forward mode as it is, and the rules' pullbacks run
//! on duals too, which is how forward-over-reverse Hessians differentiate through
//! them. Decisions are taken on the value: a dual matrix is
//! [`NotPositiveDefinite`] or [`SingularMatrix`] at the same pivot as its value.
//!
//! ```
//! use mochi_core::Dual;
//! use ndarray::array;
//! // d log det K along V is tr(K⁻¹ V): here V = I, K⁻¹ = [[5, −2], [−2, 4]] / 16
//! let k = array![[4.0, 2.0], [2.0, 5.0]].mapv(Dual::<1>::constant)
//!     + array![[1.0, 0.0], [0.0, 1.0]].mapv(|v| Dual::new(0.0, [v]));
//! let y = mochi_rules_linalg::logdet(&k).unwrap();
//! assert!((y.partials[0] - 9.0 / 16.0).abs() < 1e-14);
//! ```

mod bridge;
mod determinant;
mod elem;
mod error;
mod factor;
mod general;
mod inverse;
mod kernels;
mod triangular;
mod work;

// Each function comes with its rule module of the same name (`cholesky::rrule`).
pub use determinant::{inverse_from_cholesky, logdet, logdet_cholesky};
pub use elem::{LinalgElem, TriangularProduct};
pub use error::NotPositiveDefinite;
pub use factor::cholesky;
pub use general::{solve, SingularMatrix};
pub use triangular::{cholesky_solve, solve_lower_triangular, solve_upper_triangular};
pub use work::{Rhs, Triangle};

/// Every rule trait of this crate, for a glob import next to the other rule crates'.
pub mod rules {
    pub use crate::determinant::{LinalgLogdet, LinalgLogdetCholesky};
    pub use crate::factor::LinalgCholesky;
    pub use crate::general::LinalgSolve;
    pub use crate::triangular::{
        LinalgCholeskySolve, LinalgSolveLowerTriangular, LinalgSolveUpperTriangular,
    };
}

#[cfg(test)]
mod test_support;
