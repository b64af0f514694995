//! Cholesky and LU factorisations and what is computed from them: `m.cholesky()` (an
//! `Option`: `None` for a matrix that is not positive definite, never a panic),
//! `chol.solve(&b)`, `chol.l()`, `chol.determinant()`, `chol.ln_determinant()`,
//! `chol.inverse()`; `m.lu()`, `lu.solve(&b)` (an `Option`), `lu.determinant()`,
//! `lu.try_inverse()`.
//!
//! The cotangent of a factorisation is `Ā`, the cotangent of the matrix `A` it
//! factors. For a Cholesky factorisation `A = L Lᵀ` is symmetric and `Ā` is kept
//! symmetric; `m.cholesky()` reads only the lower triangle of `m`, so its pullback
//! folds `Ā` onto it: `m̄ᵢⱼ += Āᵢⱼ + Āⱼᵢ` below the diagonal, `m̄ᵢᵢ += Āᵢᵢ` on it. For
//! an LU factorisation `m.lu()` passes `Ā` to `m̄` unchanged.
//!
//! With `X = A⁻¹ B`: `B̄ += A⁻ᵀ X̄`, `Ā −= (A⁻ᵀ X̄) Xᵀ`. With `L = chol(A)` (Murray,
//! "Differentiation of the Cholesky decomposition", 2016): `Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹)`,
//! `Φ` taking the lower triangle and halving the diagonal. `det A`: `Ā += ȳ det A · A⁻ᵀ`;
//! `ln det A`: `Ā += ȳ A⁻ᵀ`; `Y = A⁻¹`: `Ā −= Yᵀ Ȳ Yᵀ`.

use crate::dense::{dense, output, view};
use crate::inverse::{DeterminantPullback, NaDeterminant, NaTryInverse, TryInversePullback};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::constraint::{SameNumberOfRows, ShapeConstraint};
use nalgebra::{
    Cholesky, DMatrix, DMatrixView, DMatrixViewMut, DefaultAllocator, Dim, DimMin, Matrix, OMatrix,
    Storage, LU,
};

rule_trait! {
    /// `m.cholesky()`: `Call((&m,)).cholesky()`.
    NaCholesky::cholesky
}
rule_trait! {
    /// `m.lu()`: `Call((&m,)).lu()`.
    NaLu::lu
}
rule_trait! {
    /// `chol.solve(&b)`, `lu.solve(&b)`: `Call((&chol, &b)).solve()`.
    NaSolve::solve
}
rule_trait! {
    /// `chol.l()`: `Call((&chol,)).l()`.
    NaL::l
}
rule_trait! {
    /// `chol.ln_determinant()`: `Call((&chol,)).ln_determinant()`.
    NaLnDeterminant::ln_determinant
}
rule_trait! {
    /// `chol.inverse()`: `Call((&chol,)).inverse()`.
    NaInverse::inverse
}

/// `acc += α (G Xᵀ + X Gᵀ)/2`, the symmetric part of a rank-`k` product.
fn add_sym_product<T: Elem>(
    acc: &mut DMatrixViewMut<'_, T>,
    alpha: T,
    g: DMatrixView<'_, T>,
    x: DMatrixView<'_, T>,
) {
    let half = alpha * T::of_f64(0.5);
    for k in 0..g.ncols() {
        acc.ger(half, &g.column(k), &x.column(k), T::ONE);
        acc.ger(half, &x.column(k), &g.column(k), T::ONE);
    }
}

/// `acc += α (M + Mᵀ)/2`.
fn add_sym<T: Elem>(acc: &mut DMatrixViewMut<'_, T>, alpha: T, m: DMatrixView<'_, T>) {
    let half = alpha * T::of_f64(0.5);
    let n = m.nrows();
    for j in 0..n {
        for i in 0..n {
            acc[(i, j)] += half * (m[(i, j)] + m[(j, i)]);
        }
    }
}

// ---- Cholesky ----

/// Pullback of `m.cholesky()`: the size (`None` when `m` was not positive definite).
pub struct CholeskyPullback<T: Elem, D> {
    n: Option<usize>,
    _types: std::marker::PhantomData<fn() -> (T, D)>,
}

impl<T: Elem, D: Dim> Pullback for CholeskyPullback<T, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = Option<OMatrix<T, D, D>>;
    type Args = (OMatrix<T, D, D>,);
    #[track_caller]
    fn pullback(self, dc: Option<OMatrix<T, D, D>>, (dm,): (&mut OMatrix<T, D, D>,)) {
        let (Some(n), Some(dc)) = (self.n, &dc) else {
            return;
        };
        let Some(dc) = output(dc, (n, n)) else {
            return;
        };
        // Only the lower triangle of m is read: fold Ā onto it.
        let mut dm = dense(dm, (n, n));
        for j in 0..n {
            dm[(j, j)] += dc[(j, j)];
            for i in j + 1..n {
                dm[(i, j)] += dc[(i, j)] + dc[(j, i)];
            }
        }
    }
}

impl<T, D, S> NaCholesky for Call<(&Matrix<T, D, D, S>,)>
where
    T: Elem,
    D: Dim,
    S: Storage<T, D, D>,
    DefaultAllocator: Allocator<D, D>,
{
    type Output = Option<Cholesky<T, D>>;
    type Pullback = CholeskyPullback<T, D>;
    #[inline]
    fn cholesky(self) -> (Self::Output, Self::Pullback) {
        let m = self.0 .0;
        let chol = m.clone_owned().cholesky();
        let n = chol.as_ref().map(|_| m.nrows());
        (
            chol,
            CholeskyPullback {
                n,
                _types: std::marker::PhantomData,
            },
        )
    }
}

/// Pullback of `chol.solve(&b)`: the factorisation and the solution `X`.
pub struct CholeskySolvePullback<T: Elem, D: Dim, R2: Dim, C2: Dim>
where
    DefaultAllocator: Allocator<D, D> + Allocator<R2, C2>,
{
    chol: Cholesky<T, D>,
    x: OMatrix<T, R2, C2>,
}

impl<T: Elem, D: Dim, R2: Dim, C2: Dim> Pullback for CholeskySolvePullback<T, D, R2, C2>
where
    DefaultAllocator: Allocator<D, D> + Allocator<R2, C2>,
    ShapeConstraint: SameNumberOfRows<R2, D>,
{
    type Output = OMatrix<T, R2, C2>;
    type Args = (OMatrix<T, D, D>, OMatrix<T, R2, C2>);
    #[track_caller]
    fn pullback(
        self,
        dx: OMatrix<T, R2, C2>,
        (da, db): (&mut OMatrix<T, D, D>, &mut OMatrix<T, R2, C2>),
    ) {
        if output(&dx, self.x.shape()).is_none() {
            return;
        }
        // X = A⁻¹ B: G = A⁻¹ X̄ (A symmetric), B̄ += G, Ā −= sym(G Xᵀ)
        let g = self.chol.solve(&dx);
        let n = self.x.nrows();
        add_sym_product(&mut dense(da, (n, n)), -T::ONE, view(&g), view(&self.x));
        let mut db = dense(db, g.shape());
        db.iter_mut().zip(g.iter()).for_each(|(d, &v)| *d += v);
    }
}

impl<T, D, R2, C2, S2> NaSolve for Call<(&Cholesky<T, D>, &Matrix<T, R2, C2, S2>)>
where
    T: Elem,
    D: Dim,
    R2: Dim,
    C2: Dim,
    S2: Storage<T, R2, C2>,
    DefaultAllocator: Allocator<D, D> + Allocator<R2, C2>,
    ShapeConstraint: SameNumberOfRows<R2, D>,
{
    type Output = OMatrix<T, R2, C2>;
    type Pullback = CholeskySolvePullback<T, D, R2, C2>;
    #[inline]
    #[track_caller]
    fn solve(self) -> (Self::Output, Self::Pullback) {
        let (chol, b) = self.0;
        let x = chol.solve(b);
        (
            x.clone(),
            CholeskySolvePullback {
                chol: chol.clone(),
                x,
            },
        )
    }
}

/// Pullback of `chol.l()`: the factor `L`.
pub struct CholeskyLPullback<T: Elem, D: Dim>
where
    DefaultAllocator: Allocator<D, D>,
{
    l: OMatrix<T, D, D>,
}

impl<T: Elem, D: Dim> Pullback for CholeskyLPullback<T, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = OMatrix<T, D, D>;
    type Args = (OMatrix<T, D, D>,);
    #[track_caller]
    fn pullback(self, dl: OMatrix<T, D, D>, (da,): (&mut OMatrix<T, D, D>,)) {
        let n = self.l.nrows();
        let Some(dl) = output(&dl, (n, n)) else {
            return;
        };
        let s = cholesky_factor_adjoint(view(&self.l), dl);
        add_sym(&mut dense(da, (n, n)), T::ONE, s.as_view());
    }
}

/// `L⁻ᵀ Φ(Lᵀ L̄) L⁻¹`, `Φ` taking the lower triangle and halving the diagonal, with `L̄`
/// restricted to the lower triangle (the upper one of `l()` is 0). Outside the
/// pullback's generic environment, whose `Allocator<D, D>` bound would pin the sizes of
/// the dynamic solves below to `D`.
fn cholesky_factor_adjoint<T: Elem>(l: DMatrixView<'_, T>, dl: DMatrixView<'_, T>) -> DMatrix<T> {
    let n = l.nrows();
    let mut p: DMatrix<T> = l.transpose() * dl.lower_triangle();
    p.fill_upper_triangle(T::ZERO, 1);
    for i in 0..n {
        p[(i, i)] *= T::of_f64(0.5);
    }
    // S = L⁻ᵀ P L⁻¹: Z = L⁻ᵀ P, then S = (L⁻ᵀ Zᵀ)ᵀ.
    let z = l
        .tr_solve_lower_triangular(&p)
        .expect("a Cholesky factor has a positive diagonal");
    l.tr_solve_lower_triangular(&z.transpose())
        .expect("a Cholesky factor has a positive diagonal")
        .transpose()
}

impl<T: Elem, D: Dim> NaL for Call<(&Cholesky<T, D>,)>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = OMatrix<T, D, D>;
    type Pullback = CholeskyLPullback<T, D>;
    #[inline]
    fn l(self) -> (Self::Output, Self::Pullback) {
        let l = self.0 .0.l();
        (l.clone(), CholeskyLPullback { l })
    }
}

impl<T: Elem, D: Dim> NaDeterminant for Call<(&Cholesky<T, D>,)>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = T;
    type Pullback = DeterminantPullback<T, D>;
    #[inline]
    fn determinant(self) -> (T, Self::Pullback) {
        let chol = self.0 .0;
        let det = chol.determinant();
        (det, DeterminantPullback::new(det, Some(chol.inverse())))
    }
}

impl<T: Elem, D: Dim> NaLnDeterminant for Call<(&Cholesky<T, D>,)>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = T;
    type Pullback = DeterminantPullback<T, D>;
    #[inline]
    fn ln_determinant(self) -> (T, Self::Pullback) {
        let chol = self.0 .0;
        (
            chol.ln_determinant(),
            DeterminantPullback::new(T::ONE, Some(chol.inverse())),
        )
    }
}

/// Pullback of `chol.inverse()`: the inverse.
pub struct CholeskyInversePullback<T: Elem, D: Dim>
where
    DefaultAllocator: Allocator<D, D>,
{
    inverse: OMatrix<T, D, D>,
}

impl<T: Elem, D: Dim> Pullback for CholeskyInversePullback<T, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = OMatrix<T, D, D>;
    type Args = (OMatrix<T, D, D>,);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, D, D>, (da,): (&mut OMatrix<T, D, D>,)) {
        let n = self.inverse.nrows();
        let Some(dy) = output(&dy, (n, n)) else {
            return;
        };
        // Ā −= Y Ȳ Y, kept symmetric: Y sym(Ȳ) Y.
        let y = view(&self.inverse);
        let g: DMatrix<T> = y * dy * y;
        add_sym(&mut dense(da, (n, n)), -T::ONE, g.as_view());
    }
}

impl<T: Elem, D: Dim> NaInverse for Call<(&Cholesky<T, D>,)>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = OMatrix<T, D, D>;
    type Pullback = CholeskyInversePullback<T, D>;
    #[inline]
    fn inverse(self) -> (Self::Output, Self::Pullback) {
        let inverse = self.0 .0.inverse();
        (inverse.clone(), CholeskyInversePullback { inverse })
    }
}

// ---- LU ----

/// Pullback of `m.lu()`: the shape (`Ā` passes to `m̄` unchanged).
pub struct LuPullback<T: Elem, D> {
    n: usize,
    _types: std::marker::PhantomData<fn() -> (T, D)>,
}

impl<T: Elem, D: Dim> Pullback for LuPullback<T, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    type Output = OMatrix<T, D, D>;
    type Args = (OMatrix<T, D, D>,);
    #[track_caller]
    fn pullback(self, dlu: OMatrix<T, D, D>, (dm,): (&mut OMatrix<T, D, D>,)) {
        if output(&dlu, (self.n, self.n)).is_some() {
            use mochi_core::TangentVector;
            dm.accumulate(dlu);
        }
    }
}

impl<T, D, S> NaLu for Call<(&Matrix<T, D, D, S>,)>
where
    T: Elem,
    D: DimMin<D, Output = D>,
    S: Storage<T, D, D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    type Output = LU<T, D, D>;
    type Pullback = LuPullback<T, D>;
    #[inline]
    fn lu(self) -> (Self::Output, Self::Pullback) {
        let m = self.0 .0;
        (
            m.clone_owned().lu(),
            LuPullback {
                n: m.nrows(),
                _types: std::marker::PhantomData,
            },
        )
    }
}

/// `A⁻ᵀ x̄` from `P A = L U`: `Aᵀ = Uᵀ Lᵀ P`, so solve with `Uᵀ`, then `Lᵀ`, then
/// undo the permutation.
fn lu_solve_transposed<T: Elem, D: DimMin<D, Output = D>, R2: Dim, C2: Dim>(
    lu: &LU<T, D, D>,
    dx: &OMatrix<T, R2, C2>,
) -> Option<DMatrix<T>>
where
    DefaultAllocator: Allocator<D, D> + Allocator<D> + Allocator<R2, C2>,
{
    let (l, u) = (lu.l(), lu.u());
    let mut w: DMatrix<T> = view(dx).clone_owned();
    if !view(&u).tr_solve_upper_triangular_mut(&mut w) {
        return None;
    }
    if !view(&l).tr_solve_lower_triangular_mut(&mut w) {
        return None;
    }
    lu.p().inv_permute_rows(&mut w);
    Some(w)
}

/// Pullback of `lu.solve(&b)`: the factorisation and the solution `X` (`None` when `A`
/// is singular).
pub struct LuSolvePullback<T: Elem, D: DimMin<D, Output = D>, R2: Dim, C2: Dim>
where
    DefaultAllocator: Allocator<D, D> + Allocator<D> + Allocator<R2, C2>,
{
    lu: LU<T, D, D>,
    x: Option<OMatrix<T, R2, C2>>,
}

impl<T: Elem, D: DimMin<D, Output = D>, R2: Dim, C2: Dim> Pullback for LuSolvePullback<T, D, R2, C2>
where
    DefaultAllocator: Allocator<D, D> + Allocator<D> + Allocator<R2, C2>,
{
    type Output = Option<OMatrix<T, R2, C2>>;
    type Args = (OMatrix<T, D, D>, OMatrix<T, R2, C2>);
    #[track_caller]
    fn pullback(
        self,
        dx: Option<OMatrix<T, R2, C2>>,
        (da, db): (&mut OMatrix<T, D, D>, &mut OMatrix<T, R2, C2>),
    ) {
        let (Some(x), Some(dx)) = (&self.x, &dx) else {
            return;
        };
        if output(dx, x.shape()).is_none() {
            return;
        }
        // X = A⁻¹ B: G = A⁻ᵀ X̄, B̄ += G, Ā −= G Xᵀ
        let Some(g) = lu_solve_transposed(&self.lu, dx) else {
            return;
        };
        let n = x.nrows();
        let mut da = dense(da, (n, n));
        let xv = view(x);
        for k in 0..g.ncols() {
            da.ger(-T::ONE, &g.column(k), &xv.column(k), T::ONE);
        }
        let mut db = dense(db, g.shape());
        db.iter_mut().zip(g.iter()).for_each(|(d, &v)| *d += v);
    }
}

impl<T, D, R2, C2, S2> NaSolve for Call<(&LU<T, D, D>, &Matrix<T, R2, C2, S2>)>
where
    T: Elem,
    D: DimMin<D, Output = D>,
    R2: Dim,
    C2: Dim,
    S2: Storage<T, R2, C2>,
    DefaultAllocator: Allocator<D, D> + Allocator<D> + Allocator<R2, C2>,
    ShapeConstraint: SameNumberOfRows<R2, D>,
{
    type Output = Option<OMatrix<T, R2, C2>>;
    type Pullback = LuSolvePullback<T, D, R2, C2>;
    #[inline]
    #[track_caller]
    fn solve(self) -> (Self::Output, Self::Pullback) {
        let (lu, b) = self.0;
        let x = lu.solve(b);
        (x.clone(), LuSolvePullback { lu: lu.clone(), x })
    }
}

impl<T, D> NaDeterminant for Call<(&LU<T, D, D>,)>
where
    T: Elem,
    D: DimMin<D, Output = D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    type Output = T;
    type Pullback = DeterminantPullback<T, D>;
    #[inline]
    fn determinant(self) -> (T, Self::Pullback) {
        let lu = self.0 .0;
        let det = lu.determinant();
        (det, DeterminantPullback::new(det, lu.try_inverse()))
    }
}

impl<T, D> NaTryInverse for Call<(&LU<T, D, D>,)>
where
    T: Elem,
    D: DimMin<D, Output = D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    type Output = Option<OMatrix<T, D, D>>;
    type Pullback = TryInversePullback<T, D>;
    #[inline]
    fn try_inverse(self) -> (Self::Output, Self::Pullback) {
        let inverse = self.0 .0.try_inverse();
        (inverse.clone(), TryInversePullback { inverse })
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{dmatrix, spd};
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::{Call, Pullback};
    use nalgebra::{DMatrix, Dyn, Matrix2, U1};

    fn choleskys<T: Elem>() {
        for n in [1, 3] {
            let a = spd::<T>(n, 0.4);
            let b = dmatrix::<T>(n, 2, 0.8);
            // the factorisation itself (its lower triangle read, Ā folded onto it)
            RuleTest::new(
                (a.clone(),),
                |x| x.0.clone().cholesky(),
                |x| Call((&x.0,)).cholesky(),
            )
            .tolerance(T::RTOL, T::ATOL)
            .run();
            let chol = a.clone().cholesky().expect("positive definite");
            // X = A⁻¹ B: dX = A⁻¹ (Ḃ − Ȧ X)
            RuleTest::new(
                (chol.clone(), b.clone()),
                |x| x.0.solve(&x.1),
                |x| Call((&x.0, &x.1)).solve(),
            )
            .jvp(|x, t| {
                let xs = x.0.solve(&x.1);
                x.0.solve(&(&t.1 - &t.0 * xs))
            })
            .tolerance(T::RTOL, T::ATOL)
            .run();
            let v = crate::test_support::matrix::<T, _, _>(Dyn(n), U1, 0.5);
            RuleTest::new(
                (chol.clone(), v),
                |x| x.0.solve(&x.1),
                |x| Call((&x.0, &x.1)).solve(),
            )
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new((chol.clone(),), |x| x.0.l(), |x| Call((&x.0,)).l())
                .tolerance(T::RTOL, T::ATOL)
                .run();
            RuleTest::new(
                (chol.clone(),),
                |x| x.0.determinant(),
                |x| Call((&x.0,)).determinant(),
            )
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new(
                (chol.clone(),),
                |x| x.0.ln_determinant(),
                |x| Call((&x.0,)).ln_determinant(),
            )
            // d ln det A = tr(A⁻¹ Ȧ)
            .jvp(|x, t| (x.0.inverse() * &t.0).trace())
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new((chol,), |x| x.0.inverse(), |x| Call((&x.0,)).inverse())
                .jvp(|x, t| {
                    let y = x.0.inverse();
                    -(&y * &t.0 * &y)
                })
                .tolerance(T::RTOL, T::ATOL)
                .run();
        }
    }

    fn lus<T: Elem>() {
        for n in [1, 3, 4] {
            let a = dmatrix::<T>(n, n, 0.2) + DMatrix::identity(n, n) * T::of_f64(1.5);
            let b = dmatrix::<T>(n, 2, 0.9);
            RuleTest::new((a.clone(),), |x| x.0.clone().lu(), |x| Call((&x.0,)).lu())
                .jvp(|_, t| t.0.clone())
                .tolerance(T::RTOL, T::ATOL)
                .run();
            let lu = a.clone().lu();
            RuleTest::new(
                (lu.clone(), b),
                |x| x.0.solve(&x.1),
                |x| Call((&x.0, &x.1)).solve(),
            )
            .jvp(|x, t| {
                let xs = x.0.solve(&x.1).expect("invertible");
                x.0.solve(&(&t.1 - &t.0 * xs))
            })
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new(
                (lu.clone(),),
                |x| x.0.determinant(),
                |x| Call((&x.0,)).determinant(),
            )
            .jvp(|x, t| {
                let inv = x.0.try_inverse().expect("invertible");
                x.0.determinant() * (inv * &t.0).trace()
            })
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new(
                (lu,),
                |x| x.0.try_inverse(),
                |x| Call((&x.0,)).try_inverse(),
            )
            .tolerance(T::RTOL, T::ATOL)
            .run();
        }
    }

    #[test]
    fn cholesky_and_what_it_computes_f64_and_f32() {
        choleskys::<f64>();
        choleskys::<f32>();
    }

    #[test]
    fn lu_and_what_it_computes_f64_and_f32() {
        lus::<f64>();
        lus::<f32>();
    }

    #[test]
    fn static_sizes() {
        let a = Matrix2::new(2.0, 0.3, 0.3, 1.0_f64);
        RuleTest::new((a,), |x| x.0.cholesky(), |x| Call((&x.0,)).cholesky()).run();
        let chol = a.cholesky().expect("positive definite");
        RuleTest::new(
            (chol, a * 0.5),
            |x| x.0.solve(&x.1),
            |x| Call((&x.0, &x.1)).solve(),
        )
        .run();
        RuleTest::new((a,), |x| x.0.lu(), |x| Call((&x.0,)).lu()).run();
    }

    #[test]
    fn a_matrix_that_is_not_positive_definite_gives_none_not_a_panic() {
        let a = DMatrix::from_row_slice(2, 2, &[1.0_f64, 2.0, 2.0, 1.0]);
        let (c, pb) = Call((&a,)).cholesky();
        assert!(c.is_none());
        let mut da = DMatrix::zeros(0, 0);
        pb.pullback(None, (&mut da,));
        assert!(da.is_empty());
    }
}
