//! `a.transpose()` (`ā += ȳᵀ`) and blocks of a matrix: `m.column(j)`, `m.row(i)`,
//! `m.rows(i, n)`, `m.columns(j, n)` (`m̄[block] += ȳ`). In differentiable code a block
//! is an owned copy (the primal's is a view): its cotangent is added back into the
//! matrix's by the pullback.

use crate::dense::{dense, output};
use crate::impls::matrix_rule;
use crate::Elem;
use mochi_core::kit::{inactive_methods, rule_trait, Pullback};
use mochi_core::NoTangent;
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Dyn, Matrix, OMatrix, U1};
use std::marker::PhantomData;

inactive_methods! {
    /// `a.nrows()`: no derivative.
    NaNrows::nrows() -> usize, impl['a, T, R: Dim, C: Dim, S: nalgebra::RawStorage<T, R, C>] for &'a Matrix<T, R, C, S>;
    /// `a.ncols()`: no derivative.
    NaNcols::ncols() -> usize, impl['a, T, R: Dim, C: Dim, S: nalgebra::RawStorage<T, R, C>] for &'a Matrix<T, R, C, S>;
    /// `a.shape()`: `(rows, columns)`, no derivative.
    NaShapeOf::shape() -> (usize, usize), impl['a, T, R: Dim, C: Dim, S: nalgebra::RawStorage<T, R, C>] for &'a Matrix<T, R, C, S>;
    /// `a.is_square()`: no derivative.
    NaIsSquare::is_square() -> bool, impl['a, T, R: Dim, C: Dim, S: nalgebra::RawStorage<T, R, C>] for &'a Matrix<T, R, C, S>;
}

rule_trait! {
    /// `a.transpose()`: `Call((&a,)).transpose()`.
    NaTranspose::transpose
}

/// Pullback of `a.transpose()`: the shape of `a`.
pub struct TransposePullback<T: Elem, R, C> {
    shape: (usize, usize),
    _types: crate::dense::Marker<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for TransposePullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C> + Allocator<C, R>,
{
    type Output = OMatrix<T, C, R>;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, C, R>, (da,): (&mut OMatrix<T, R, C>,)) {
        let (rows, cols) = self.shape;
        let Some(dy) = output(&dy, (cols, rows)) else {
            return;
        };
        let mut da = dense(da, self.shape);
        for j in 0..cols {
            for i in 0..rows {
                da[(i, j)] += dy[(j, i)];
            }
        }
    }
}

matrix_rule! {
    NaTranspose for (&Matrix) also [Allocator<C, R>] {
        type Output = OMatrix<T, C, R>;
        type Pullback = TransposePullback<T, R, C>;
        #[inline]
        fn transpose(self) -> (Self::Output, Self::Pullback) {
            let a = self.0 .0;
            (
                a.transpose(),
                TransposePullback {
                    shape: a.shape(),
                    _types: PhantomData,
                },
            )
        }
    }
}

rule_trait! {
    /// `m.column(j)`: `Call((&m, &j)).column()`.
    NaColumn::column
}
rule_trait! {
    /// `m.row(i)`: `Call((&m, &i)).row()`.
    NaRow::row
}
rule_trait! {
    /// `m.rows(i, n)`: `Call((&m, &i, &n)).rows()`.
    NaRows::rows
}
rule_trait! {
    /// `m.columns(j, n)`: `Call((&m, &j, &n)).columns()`.
    NaColumns::columns
}

/// Pullback of a block of `m` (a column, a row, consecutive rows or columns): the block
/// of `m̄` at `at` gets `ȳ`. `I` is the tuple of the index arguments' cotangents.
pub struct BlockPullback<T: Elem, R, C, R2, C2, I> {
    shape: (usize, usize),
    at: (usize, usize),
    _types: crate::dense::Marker<T, (R, C, I), (R2, C2)>,
}

impl<T: Elem, R: Dim, C: Dim, R2: Dim, C2: Dim, I> BlockPullback<T, R, C, R2, C2, I>
where
    DefaultAllocator: Allocator<R, C> + Allocator<R2, C2>,
{
    fn new(shape: (usize, usize), at: (usize, usize)) -> Self {
        BlockPullback {
            shape,
            at,
            _types: PhantomData,
        }
    }

    /// `m̄[block] += ȳ`.
    #[track_caller]
    fn add(self, dy: &OMatrix<T, R2, C2>, dm: &mut OMatrix<T, R, C>) {
        let Some(dy) = output(dy, dy.shape()) else {
            return;
        };
        let mut dm = dense(dm, self.shape);
        let (r0, c0) = self.at;
        let mut block = dm.view_mut((r0, c0), dy.shape());
        block += dy;
    }
}

impl<T: Elem, R: Dim, C: Dim, R2: Dim, C2: Dim> Pullback
    for BlockPullback<T, R, C, R2, C2, (NoTangent,)>
where
    DefaultAllocator: Allocator<R, C> + Allocator<R2, C2>,
{
    type Output = OMatrix<T, R2, C2>;
    type Args = (OMatrix<T, R, C>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R2, C2>, (dm, _): (&mut OMatrix<T, R, C>, &mut NoTangent)) {
        self.add(&dy, dm);
    }
}

impl<T: Elem, R: Dim, C: Dim, R2: Dim, C2: Dim> Pullback
    for BlockPullback<T, R, C, R2, C2, (NoTangent, NoTangent)>
where
    DefaultAllocator: Allocator<R, C> + Allocator<R2, C2>,
{
    type Output = OMatrix<T, R2, C2>;
    type Args = (OMatrix<T, R, C>, NoTangent, NoTangent);
    #[track_caller]
    fn pullback(
        self,
        dy: OMatrix<T, R2, C2>,
        (dm, _, _): (&mut OMatrix<T, R, C>, &mut NoTangent, &mut NoTangent),
    ) {
        self.add(&dy, dm);
    }
}

matrix_rule! {
    NaColumn for (&Matrix, &usize) also [Allocator<R, U1>] {
        type Output = OMatrix<T, R, U1>;
        type Pullback = BlockPullback<T, R, C, R, U1, (NoTangent,)>;
        #[inline]
        #[track_caller]
        fn column(self) -> (Self::Output, Self::Pullback) {
            let (m, &j) = self.0;
            (
                m.column(j).into_owned(),
                BlockPullback::new(m.shape(), (0, j)),
            )
        }
    }
}

matrix_rule! {
    NaRow for (&Matrix, &usize) also [Allocator<U1, C>] {
        type Output = OMatrix<T, U1, C>;
        type Pullback = BlockPullback<T, R, C, U1, C, (NoTangent,)>;
        #[inline]
        #[track_caller]
        fn row(self) -> (Self::Output, Self::Pullback) {
            let (m, &i) = self.0;
            (m.row(i).into_owned(), BlockPullback::new(m.shape(), (i, 0)))
        }
    }
}

matrix_rule! {
    NaRows for (&Matrix, &usize, &usize) also [Allocator<Dyn, C>] {
        type Output = OMatrix<T, Dyn, C>;
        type Pullback = BlockPullback<T, R, C, Dyn, C, (NoTangent, NoTangent)>;
        #[inline]
        #[track_caller]
        fn rows(self) -> (Self::Output, Self::Pullback) {
            let (m, &i, &n) = self.0;
            (
                m.rows(i, n).into_owned(),
                BlockPullback::new(m.shape(), (i, 0)),
            )
        }
    }
}

matrix_rule! {
    NaColumns for (&Matrix, &usize, &usize) also [Allocator<R, Dyn>] {
        type Output = OMatrix<T, R, Dyn>;
        type Pullback = BlockPullback<T, R, C, R, Dyn, (NoTangent, NoTangent)>;
        #[inline]
        #[track_caller]
        fn columns(self) -> (Self::Output, Self::Pullback) {
            let (m, &j, &n) = self.0;
            (
                m.columns(j, n).into_owned(),
                BlockPullback::new(m.shape(), (0, j)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{dmatrix, matrix};
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use nalgebra::{U2, U3};

    fn transposes<T: Elem>() {
        RuleTest::new(
            (dmatrix::<T>(2, 3, 0.3),),
            |x| x.0.transpose(),
            |x| Call((&x.0,)).transpose(),
        )
        .jvp(|_, t| t.0.transpose())
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    fn blocks<T: Elem>() {
        let m = dmatrix::<T>(3, 4, 0.2);
        RuleTest::new(
            (m.clone(), 2_usize),
            |x| x.0.column(x.1).into_owned(),
            |x| Call((&x.0, &x.1)).column(),
        )
        .jvp(|x, t| t.0.column(x.1).into_owned())
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (m.clone(), 1_usize),
            |x| x.0.row(x.1).into_owned(),
            |x| Call((&x.0, &x.1)).row(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (m.clone(), 1_usize, 2_usize),
            |x| x.0.rows(x.1, x.2).into_owned(),
            |x| Call((&x.0, &x.1, &x.2)).rows(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (m, 1_usize, 3_usize),
            |x| x.0.columns(x.1, x.2).into_owned(),
            |x| Call((&x.0, &x.1, &x.2)).columns(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn blocks_f64_and_f32() {
        blocks::<f64>();
        blocks::<f32>();
    }

    #[test]
    fn transpose_f64_and_f32() {
        transposes::<f64>();
        transposes::<f32>();
    }

    #[test]
    fn static_transpose_allocates_nothing_in_the_pullback() {
        RuleTest::new(
            (matrix::<f64, _, _>(U2, U3, 0.3),),
            |x| x.0.transpose(),
            |x| Call((&x.0,)).transpose(),
        )
        .expect_no_alloc()
        .run();
    }
}
