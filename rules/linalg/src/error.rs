//! Numerical failure as data: a matrix that is not positive definite.

/// The matrix handed to a Cholesky-based function is not (numerically) positive
/// definite: the factorisation met a pivot that is not positive.
///
/// The pivot index says where: the leading `pivot × pivot` block is positive
/// definite, the leading `(pivot + 1) × (pivot + 1)` block is not. Typical remedies:
/// symmetrise the matrix, add a small multiple of the identity ("jitter") to its
/// diagonal, or check the kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NotPositiveDefinite {
    /// The index of the first pivot that was not positive.
    pub pivot: usize,
}

impl std::fmt::Display for NotPositiveDefinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "matrix is not positive definite: the Cholesky pivot at index {} is not positive \
             (add jitter to the diagonal or check that the matrix is symmetric)",
            self.pivot
        )
    }
}

impl std::error::Error for NotPositiveDefinite {}
