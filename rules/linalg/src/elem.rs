//! The element types the linear-algebra rules are written for, and the few dense
//! kernels each of them provides.
//!
//! Every rule of this crate is written once, generic over `T: LinalgElem`, on top of
//! the kernels below. `f64` and `f32` run them by [faer] (blocked, vectorised); the
//! dual numbers [`Dual<N>`](mochi_core::Dual) run them as plain loops (unblocked
//! Cholesky, forward and back substitution, LU with partial pivoting), whose dual
//! arithmetic carries exact forward-mode derivatives through the factorisations.
//! That is what lets a generic function calling [`cholesky`](crate::cholesky()) or
//! [`logdet`](crate::logdet()) run in forward mode, and the rules' pullbacks run on
//! duals for forward-over-reverse Hessians.

use crate::error::NotPositiveDefinite;
use crate::work::Triangle;
use mochi_rules_ndarray::Elem;
use ndarray::{ArrayView2, ArrayViewMut2};

/// An array element the linear-algebra rules work with: `f64` and `f32` (numerics by
/// faer) and [`Dual<N>`](mochi_core::Dual) for any `N` (plain loops on duals, exact
/// forward-mode derivatives).
///
/// On duals every decision is taken on the value, as on floats: pivots are chosen by
/// the magnitude of their value, and a non-positive (or NaN) Cholesky pivot or a
/// zero LU pivot is an error at the same index as for the value alone.
///
/// The kernels take ndarray views of any layout. They are what the rules are made
/// of; calling them directly is rarely needed. Shapes are the caller's duty: a
/// mismatch panics.
pub trait LinalgElem: Elem {
    /// Factors the square `a` in place, `a = L Lᵀ`, reading only its lower triangle
    /// and writing `L` into it. The strict upper triangle is not read; its contents
    /// afterwards are unspecified.
    ///
    /// # Errors
    /// [`NotPositiveDefinite`] with the index of the first pivot that is not positive
    /// (or is NaN, or infinite); `a` then holds a partial factorisation.
    fn cholesky_in_place(a: ArrayViewMut2<'_, Self>) -> Result<(), NotPositiveDefinite>;

    /// Writes the lower triangle (with the diagonal) of `K⁻¹` into `inv`, from the
    /// Cholesky factor `l` of `K = L Lᵀ` (only its lower triangle is read). The strict
    /// upper triangle of `inv` is not written.
    fn cholesky_inverse(l: ArrayView2<'_, Self>, inv: ArrayViewMut2<'_, Self>);

    /// `x ← T⁻¹ x` for the `n × k` right-hand side `x`, `T` the `triangle` (with the
    /// diagonal) of the `n × n` matrix `t`; the other triangle of `t` is never read.
    /// Pass `t.t()` and `triangle.transposed()` for `x ← T⁻ᵀ x`.
    fn solve_triangular_in_place(
        t: ArrayView2<'_, Self>,
        triangle: Triangle,
        x: ArrayViewMut2<'_, Self>,
    );

    /// `dst += α · lhs · rhs` (see [`TriangularProduct`]) on the product's
    /// `dst_triangle` (with the diagonal) of the square `dst` only; the other triangle
    /// of `dst` is neither read nor written.
    fn triangular_matmul_add(
        dst: ArrayViewMut2<'_, Self>,
        product: TriangularProduct<'_, '_, Self>,
    );

    /// Factors the square `a` in place by LU with partial pivoting, `P A = L U`: `L`
    /// (unit diagonal, not stored) in the strict lower triangle, `U` in the upper one.
    /// Row `i` of `P A` is row `perm[i]` of `A`, and `perm_inv` is the inverse
    /// permutation. A zero pivot is not an error here: it shows as a zero (or
    /// non-finite) diagonal entry of `U`, which the caller checks.
    fn lu_in_place(a: ArrayViewMut2<'_, Self>, perm: &mut [usize], perm_inv: &mut [usize]);

    /// `x ← A⁻¹ x` (`transposed`: `x ← A⁻ᵀ x`) for the `n × k` right-hand side `x`,
    /// from the factors and permutation [`lu_in_place`](Self::lu_in_place) wrote.
    fn lu_solve_in_place(
        lu: ArrayView2<'_, Self>,
        perm: &[usize],
        perm_inv: &[usize],
        transposed: bool,
        x: ArrayViewMut2<'_, Self>,
    );

    /// Whether `a` equals `b` to within `ulps` units of rounding relative to `b`, in
    /// every component: the value, and for a dual each partial too (`==` on duals
    /// compares values only, which is not enough to take an algebraic short cut).
    fn nearly_equal(a: Self, b: Self, ulps: f64) -> bool {
        (a - b).abs() <= Self::of_f64(ulps) * Self::epsilon() * b.abs()
    }
}

/// The product `α · lhs · rhs` that [`LinalgElem::triangular_matmul_add`] adds into one
/// triangle of its destination. A factor with `Some(triangle)` as its structure is
/// square and read as that triangle (the other taken as zero, never read); `None`
/// reads all of it.
#[derive(Clone, Copy, Debug)]
pub struct TriangularProduct<'l, 'r, T> {
    /// The triangle of the destination that is written.
    pub dst_triangle: Triangle,
    /// The factor `α`.
    pub alpha: T,
    /// The left factor.
    pub lhs: ArrayView2<'l, T>,
    /// How the left factor is read.
    pub lhs_structure: Option<Triangle>,
    /// The right factor.
    pub rhs: ArrayView2<'r, T>,
    /// How the right factor is read.
    pub rhs_structure: Option<Triangle>,
}
