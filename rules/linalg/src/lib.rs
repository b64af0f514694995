//! Reverse rules for dense linear algebra on ndarray matrices, with numerics by
//! [faer]: the Cholesky factor, triangular solves (lower and upper, vector and
//! matrix right-hand sides), Cholesky solves, log-determinants, and the general
//! solve by LU with partial pivoting.
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

mod bridge;
mod determinant;
mod elem;
mod error;
mod factor;
mod general;
mod inverse;
mod triangular;
mod work;

// Each function comes with its rule module of the same name (`cholesky::rrule`).
pub use determinant::{inverse_from_cholesky, logdet, logdet_cholesky};
pub use elem::LinalgElem;
pub use error::NotPositiveDefinite;
pub use factor::cholesky;
pub use general::{solve, SingularMatrix};
pub use triangular::{cholesky_solve, solve_lower_triangular, solve_upper_triangular};
pub use work::Rhs;

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
