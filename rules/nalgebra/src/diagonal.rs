//! Diagonal matrices and diagonals: `Matrix3::from_diagonal(&v)` (also `Matrix2`,
//! `Matrix4`, `DMatrix`), `Matrix3::from_diagonal_element(s)` (`s·I`) and `m.diagonal()`.
//!
//! `from_diagonal`: `v̄ᵢ += Ȳᵢᵢ`; `from_diagonal_element`: `s̄ += tr Ȳ`; `diagonal`:
//! `M̄ᵢᵢ += ȳᵢ`. The off-diagonal entries of a built matrix are constants.

use crate::dense::{dense, output};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::Storage;
use nalgebra::{
    DMatrix, DVector, DefaultAllocator, Dim, Matrix, Matrix2, Matrix3, Matrix4, OMatrix,
};
use nalgebra::{Vector2, Vector3, Vector4, U1};
use std::marker::PhantomData;

/// The types a pullback of this module is for.
type Types<T, V, M> = PhantomData<fn() -> (T, V, M)>;

/// Pullback of `from_diagonal(&v)`: `v̄ᵢ += Ȳᵢᵢ`, for `n` diagonal entries.
pub struct FromDiagonalPullback<T, V, M> {
    n: usize,
    _types: Types<T, V, M>,
}

/// Pullback of `from_diagonal_element(s)`: `s̄ += tr Ȳ`, for an `n × n` matrix.
pub struct FromDiagonalElementPullback<T, M> {
    n: usize,
    _types: Types<T, T, M>,
}

macro_rules! static_diagonal {
    ($mat:ident, $vec:ident, $n:expr, $t1:ident :: $m1:ident, $t2:ident :: $m2:ident) => {
        rule_trait! {
            #[doc = concat!("`", stringify!($mat), "::from_diagonal(&v)`: `Call((&v,)).", stringify!($m1), "()`.")]
            $t1::$m1
        }
        rule_trait! {
            #[doc = concat!("`", stringify!($mat), "::from_diagonal_element(s)`: `Call((&s,)).", stringify!($m2), "()`.")]
            $t2::$m2
        }

        impl<T: Elem> Pullback for FromDiagonalPullback<T, $vec<T>, $mat<T>> {
            type Output = $mat<T>;
            type Args = ($vec<T>,);
            #[inline]
            fn pullback(self, dm: $mat<T>, (dv,): (&mut $vec<T>,)) {
                for i in 0..self.n {
                    dv[i] += dm[(i, i)];
                }
            }
        }

        impl<T: Elem> Pullback for FromDiagonalElementPullback<T, $mat<T>> {
            type Output = $mat<T>;
            type Args = (T,);
            #[inline]
            fn pullback(self, dm: $mat<T>, (ds,): (&mut T,)) {
                for i in 0..self.n {
                    *ds += dm[(i, i)];
                }
            }
        }

        impl<T: Elem> $t1 for Call<(&$vec<T>,)> {
            type Output = $mat<T>;
            type Pullback = FromDiagonalPullback<T, $vec<T>, $mat<T>>;
            #[inline]
            fn $m1(self) -> (Self::Output, Self::Pullback) {
                (
                    $mat::from_diagonal(self.0 .0),
                    FromDiagonalPullback {
                        n: $n,
                        _types: PhantomData,
                    },
                )
            }
        }

        impl<T: Elem> $t2 for Call<(&T,)> {
            type Output = $mat<T>;
            type Pullback = FromDiagonalElementPullback<T, $mat<T>>;
            #[inline]
            fn $m2(self) -> (Self::Output, Self::Pullback) {
                (
                    $mat::from_diagonal_element(*self.0 .0),
                    FromDiagonalElementPullback {
                        n: $n,
                        _types: PhantomData,
                    },
                )
            }
        }
    };
}

static_diagonal!(
    Matrix2,
    Vector2,
    2,
    NaMatrix2FromDiagonal::matrix2_from_diagonal,
    NaMatrix2FromDiagonalElement::matrix2_from_diagonal_element
);
static_diagonal!(
    Matrix3,
    Vector3,
    3,
    NaMatrix3FromDiagonal::matrix3_from_diagonal,
    NaMatrix3FromDiagonalElement::matrix3_from_diagonal_element
);
static_diagonal!(
    Matrix4,
    Vector4,
    4,
    NaMatrix4FromDiagonal::matrix4_from_diagonal,
    NaMatrix4FromDiagonalElement::matrix4_from_diagonal_element
);

rule_trait! {
    /// `DMatrix::from_diagonal(&v)`: `Call((&v,)).dmatrix_from_diagonal()`.
    NaDMatrixFromDiagonal::dmatrix_from_diagonal
}

impl<T: Elem> Pullback for FromDiagonalPullback<T, DVector<T>, DMatrix<T>> {
    type Output = DMatrix<T>;
    type Args = (DVector<T>,);
    #[track_caller]
    fn pullback(self, dm: DMatrix<T>, (dv,): (&mut DVector<T>,)) {
        let n = self.n;
        let Some(dm) = output(&dm, (n, n)) else {
            return;
        };
        let mut dv = dense(dv, (n, 1));
        for i in 0..n {
            dv[(i, 0)] += dm[(i, i)];
        }
    }
}

impl<T: Elem> NaDMatrixFromDiagonal for Call<(&DVector<T>,)> {
    type Output = DMatrix<T>;
    type Pullback = FromDiagonalPullback<T, DVector<T>, DMatrix<T>>;
    #[inline]
    fn dmatrix_from_diagonal(self) -> (Self::Output, Self::Pullback) {
        let v = self.0 .0;
        (
            DMatrix::from_diagonal(v),
            FromDiagonalPullback {
                n: v.len(),
                _types: PhantomData,
            },
        )
    }
}

rule_trait! {
    /// `m.diagonal()` of a square matrix: `Call((&m,)).diagonal()`.
    NaDiagonal::diagonal
}

/// Pullback of `m.diagonal()`: `M̄ᵢᵢ += ȳᵢ`, for `m` of `shape`.
pub struct DiagonalPullback<T: Elem, R, C> {
    shape: (usize, usize),
    _types: crate::dense::Marker<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for DiagonalPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C> + Allocator<R, U1>,
{
    type Output = OMatrix<T, R, U1>;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, U1>, (dm,): (&mut OMatrix<T, R, C>,)) {
        let n = self.shape.0.min(self.shape.1);
        let Some(dy) = output(&dy, (n, 1)) else {
            return;
        };
        let mut dm = dense(dm, self.shape);
        for i in 0..n {
            dm[(i, i)] += dy[(i, 0)];
        }
    }
}

impl<T, D, S> NaDiagonal for Call<(&Matrix<T, D, D, S>,)>
where
    T: Elem,
    D: Dim,
    S: Storage<T, D, D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D, U1>,
{
    type Output = OMatrix<T, D, U1>;
    type Pullback = DiagonalPullback<T, D, D>;
    #[inline]
    #[track_caller]
    fn diagonal(self) -> (Self::Output, Self::Pullback) {
        let m = self.0 .0;
        assert!(
            m.is_square(),
            "mochi: `diagonal()` of a {}×{} matrix: the diagonal is taken of square matrices",
            m.nrows(),
            m.ncols()
        );
        (
            m.diagonal(),
            DiagonalPullback {
                shape: m.shape(),
                _types: PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mochi_core::testing::RuleTest;

    fn diagonals<T: Elem>() {
        let v = |x: f64| T::of_f64(x);
        RuleTest::new(
            (Vector3::new(v(0.5), v(-1.5), v(2.0)),),
            |a| Matrix3::from_diagonal(&a.0),
            |a| Call((&a.0,)).matrix3_from_diagonal(),
        )
        .jvp(|_, t| Matrix3::from_diagonal(&t.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (Vector2::new(v(0.5), v(-1.5)),),
            |a| Matrix2::from_diagonal(&a.0),
            |a| Call((&a.0,)).matrix2_from_diagonal(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (Vector4::new(v(0.5), v(-1.5), v(2.0), v(0.25)),),
            |a| Matrix4::from_diagonal(&a.0),
            |a| Call((&a.0,)).matrix4_from_diagonal(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (DVector::from_vec(vec![
                v(0.5),
                v(-1.5),
                v(2.0),
                v(0.75),
                v(-0.25),
            ]),),
            |a| DMatrix::from_diagonal(&a.0),
            |a| Call((&a.0,)).dmatrix_from_diagonal(),
        )
        .jvp(|_, t| DMatrix::from_diagonal(&t.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (v(1.25),),
            |a| Matrix3::from_diagonal_element(a.0),
            |a| Call((&a.0,)).matrix3_from_diagonal_element(),
        )
        .jvp(|_, t| Matrix3::from_diagonal_element(t.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (v(-0.5),),
            |a| Matrix2::from_diagonal_element(a.0),
            |a| Call((&a.0,)).matrix2_from_diagonal_element(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (v(0.5),),
            |a| Matrix4::from_diagonal_element(a.0),
            |a| Call((&a.0,)).matrix4_from_diagonal_element(),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let m = Matrix3::new(
            v(0.5),
            v(-1.5),
            v(2.0),
            v(0.25),
            v(1.0),
            v(-0.75),
            v(0.1),
            v(0.2),
            v(-0.3),
        );
        RuleTest::new((m,), |a| a.0.diagonal(), |a| Call((&a.0,)).diagonal())
            .jvp(|_, t| t.0.diagonal())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        let d = DMatrix::from_fn(4, 4, |i, j| v(0.3 * i as f64 - 0.2 * j as f64 + 0.1));
        RuleTest::new((d,), |a| a.0.diagonal(), |a| Call((&a.0,)).diagonal())
            .jvp(|_, t| t.0.diagonal())
            .tolerance(T::RTOL, T::ATOL)
            .run();
    }

    #[test]
    fn diagonals_f64_and_f32() {
        diagonals::<f64>();
        diagonals::<f32>();
    }

    #[test]
    fn the_diagonal_of_a_matrix_that_is_not_square_is_refused() {
        let m = DMatrix::<f64>::from_element(2, 3, 1.0);
        let r = std::panic::catch_unwind(|| Call((&m,)).diagonal().0);
        let err = r.expect_err("a 2×3 diagonal is refused");
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("2×3"), "{msg}");
    }
}
