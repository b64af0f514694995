//! Vectors and matrices built from differentiable scalars or slices: [`vector2()`],
//! [`vector3()`], [`dvector()`] and [`dmatrix()`], each with its rule module (`vector3::rrule`)
//! that `#[differentiable]` calls.
//!
//! `#[differentiable]` turns an associated function of differentiable arguments into the
//! rule method named after the type (`Vector3::new(x, y, z)` →
//! `Call((&x, &y, &z)).vector3_new()`): `Vector2::new`, `Vector3::new`,
//! `DVector::from_vec` and `DVector::from_column_slice` have rules here, sharing the
//! builders' pullbacks, which hand each element's cotangent back to the scalar or slice
//! element it came from.

use crate::dense::output;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, InactivePullback, Pullback};
use mochi_core::NoTangent;
use nalgebra::{DMatrix, DVector, Matrix2, Matrix3, Matrix4, Vector2, Vector3, Vector4};

/// `Vector2::new(x, y)`.
#[inline]
pub fn vector2<T: Elem>(x: T, y: T) -> Vector2<T> {
    Vector2::new(x, y)
}

/// `Vector3::new(x, y, z)`.
#[inline]
pub fn vector3<T: Elem>(x: T, y: T, z: T) -> Vector3<T> {
    Vector3::new(x, y, z)
}

/// `DVector::from_column_slice(xs)`: a vector holding a copy of `xs`.
#[inline]
pub fn dvector<T: Elem>(xs: &[T]) -> DVector<T> {
    DVector::from_column_slice(xs)
}

/// `DMatrix::from_row_slice(rows, cols, xs)`: a matrix filled row by row from `xs`.
///
/// # Panics
/// If `xs` does not have `rows · cols` elements.
#[inline]
#[track_caller]
pub fn dmatrix<T: Elem>(rows: usize, cols: usize, xs: &[T]) -> DMatrix<T> {
    DMatrix::from_row_slice(rows, cols, xs)
}

/// The rule of [`vector2`](fn@vector2): `x̄ += ȳ₀`, `ȳ += ȳ₁`.
pub mod vector2 {
    use super::*;

    /// Pullback of `vector2`: needs nothing.
    pub struct Vector2Pullback<T>(std::marker::PhantomData<fn() -> T>);

    impl<T: Elem> Pullback for Vector2Pullback<T> {
        type Output = Vector2<T>;
        type Args = (T, T);
        #[inline]
        fn pullback(self, dv: Vector2<T>, (dx, dy): (&mut T, &mut T)) {
            *dx += dv.x;
            *dy += dv.y;
        }
    }

    /// `vector2(x, y)` with its pullback.
    #[inline]
    pub fn rrule<T: Elem>(x: T, y: T) -> (Vector2<T>, Vector2Pullback<T>) {
        (
            super::vector2(x, y),
            Vector2Pullback(std::marker::PhantomData),
        )
    }
}

/// The rule of [`vector3`](fn@vector3): each scalar gets its component's cotangent.
pub mod vector3 {
    use super::*;

    use crate::coords::Coords3;

    /// Pullback of `vector3` (and of `Point3::new`, with `V` a `Point3`): needs nothing.
    pub struct Vector3Pullback<T, V = Vector3<T>>(
        pub(crate) std::marker::PhantomData<fn() -> (T, V)>,
    );

    impl<T: Elem, V: Coords3<T>> Pullback for Vector3Pullback<T, V> {
        type Output = V;
        type Args = (T, T, T);
        #[inline]
        fn pullback(self, dv: V, (dx, dy, dz): (&mut T, &mut T, &mut T)) {
            let dv = dv.coords3();
            *dx += dv.x;
            *dy += dv.y;
            *dz += dv.z;
        }
    }

    /// `vector3(x, y, z)` with its pullback.
    #[inline]
    pub fn rrule<T: Elem>(x: T, y: T, z: T) -> (Vector3<T>, Vector3Pullback<T>) {
        (
            super::vector3(x, y, z),
            Vector3Pullback(std::marker::PhantomData),
        )
    }
}

/// Small static vectors and matrices built from scalars, as nalgebra's `new` takes them
/// (a matrix's entries row by row): the builder, its rule module (`matrix2::rrule`), the
/// rule trait and its impl for `Call` of that many scalars. Entry `k` gets the
/// cotangent of the element at `(k / cols, k % cols)`.
macro_rules! static_builder {
    ($(#[$doc:meta])* $f:ident, $m:ident, $ty:ident, $trait:ident :: $method:ident, $pb:ident, $cols:expr, [$($x:ident),+]) => {
        $(#[$doc])*
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub fn $f<T: Elem>($($x: T),+) -> $ty<T> {
            $ty::new($($x),+)
        }

        #[doc = concat!("The rule of [`", stringify!($f), "`](fn@", stringify!($f), "): each scalar gets its entry's cotangent.")]
        pub mod $m {
            use super::*;

            #[doc = concat!("Pullback of `", stringify!($f), "`: needs nothing.")]
            pub struct $pb<T>(std::marker::PhantomData<fn() -> T>);

            impl<T: Elem> Pullback for $pb<T> {
                type Output = $ty<T>;
                type Args = ($(static_builder!(@t $x T),)+);
                #[inline]
                #[allow(clippy::modulo_one, clippy::identity_op, clippy::erasing_op)]
                fn pullback(self, dv: $ty<T>, ($($x,)+): <Self::Args as mochi_core::Accumulators>::Mut<'_>) {
                    let mut k = 0_usize;
                    $(
                        *$x += dv[(k / $cols, k % $cols)];
                        k += 1;
                    )+
                    let _ = k;
                }
            }

            #[doc = concat!("`", stringify!($f), "` with its pullback.")]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub fn rrule<T: Elem>($($x: T),+) -> ($ty<T>, $pb<T>) {
                (super::$f($($x),+), $pb(std::marker::PhantomData))
            }
        }

        rule_trait! {
            #[doc = concat!("`", stringify!($ty), "::new(..)`: `Call((&a, &b, …)).", stringify!($method), "()`.")]
            $trait::$method
        }

        impl<T: Elem> $trait for Call<($(static_builder!(@r $x T),)+)> {
            type Output = $ty<T>;
            type Pullback = $m::$pb<T>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let ($($x,)+) = self.0;
                $m::rrule($(*$x),+)
            }
        }
    };
    (@t $x:ident $t:ident) => { $t };
    (@r $x:ident $t:ident) => { &'_ $t };
}

static_builder!(
    /// `Vector4::new(x, y, z, w)`.
    vector4, vector4, Vector4, NaVector4New::vector4_new, Vector4Pullback, 1, [x, y, z, w]
);
static_builder!(
    /// `Matrix2::new(m11, m12, m21, m22)`, row by row.
    matrix2, matrix2, Matrix2, NaMatrix2New::matrix2_new, Matrix2Pullback, 2, [a, b, c, d]
);
static_builder!(
    /// `Matrix3::new(m11, m12, m13, m21, …, m33)`, row by row.
    matrix3, matrix3, Matrix3, NaMatrix3New::matrix3_new, Matrix3Pullback, 3,
    [a, b, c, d, e, f, g, h, i]
);

/// Small static vectors and matrices built from a slice, `Matrix3::from_row_slice(&x[..9])`
/// and `from_column_slice`: the rule trait and its impl for `Call((&xs,))`, whose
/// pullback adds each entry's cotangent into the slice element it came from (row by row,
/// or column by column). A slice of another length panics, as nalgebra does.
macro_rules! static_from_slice {
    (@impls $ty:ident, $pb:ident, $row_trait:ident :: $row_method:ident,
     $col_trait:ident :: $col_method:ident, $xs:ty) => {
        impl<T: Elem> $row_trait for Call<(&$xs,)> {
            type Output = $ty<T>;
            type Pullback = $pb<T, true>;
            #[inline]
            #[track_caller]
            fn $row_method(self) -> (Self::Output, Self::Pullback) {
                ($ty::from_row_slice(self.0 .0), $pb(std::marker::PhantomData))
            }
        }

        impl<T: Elem> $col_trait for Call<(&$xs,)> {
            type Output = $ty<T>;
            type Pullback = $pb<T, false>;
            #[inline]
            #[track_caller]
            fn $col_method(self) -> (Self::Output, Self::Pullback) {
                ($ty::from_column_slice(self.0 .0), $pb(std::marker::PhantomData))
            }
        }
    };
    ($ty:ident, $rows:expr, $cols:expr, $pb:ident,
     $row_trait:ident :: $row_method:ident, $col_trait:ident :: $col_method:ident) => {
        #[doc = concat!("Pullback of `", stringify!($ty), "::from_row_slice` (`ROW_MAJOR`) and `from_column_slice`.")]
        pub struct $pb<T, const ROW_MAJOR: bool>(std::marker::PhantomData<fn() -> T>);

        impl<T: Elem, const ROW_MAJOR: bool> Pullback for $pb<T, ROW_MAJOR> {
            type Output = $ty<T>;
            type Args = (Vec<T>,);
            #[track_caller]
            fn pullback(self, dm: $ty<T>, (dxs,): (&mut Vec<T>,)) {
                let (rows, cols): (usize, usize) = ($rows, $cols);
                let at = |k: usize| if ROW_MAJOR { (k / cols, k % cols) } else { (k % rows, k / rows) };
                add_into_slice(dxs, rows * cols, (0..rows * cols).map(|k| (k, dm[at(k)])));
            }
        }

        rule_trait! {
            #[doc = concat!("`", stringify!($ty), "::from_row_slice(xs)`: `Call((&xs,)).", stringify!($row_method), "()`.")]
            $row_trait::$row_method
        }
        rule_trait! {
            #[doc = concat!("`", stringify!($ty), "::from_column_slice(xs)`: `Call((&xs,)).", stringify!($col_method), "()`.")]
            $col_trait::$col_method
        }

        // (Also the entries in a `Vec`: `Matrix2::from_row_slice(&[a, b, c, d])` as
        // written, with the literal's values taken from differentiable code.)
        static_from_slice!(@impls $ty, $pb, $row_trait::$row_method, $col_trait::$col_method, [T]);
        static_from_slice!(@impls $ty, $pb, $row_trait::$row_method, $col_trait::$col_method, Vec<T>);
    };
}

static_from_slice!(
    Vector2,
    2,
    1,
    Vector2SlicePullback,
    NaVector2FromRowSlice::vector2_from_row_slice,
    NaVector2FromColumnSlice::vector2_from_column_slice
);
static_from_slice!(
    Vector3,
    3,
    1,
    Vector3SlicePullback,
    NaVector3FromRowSlice::vector3_from_row_slice,
    NaVector3FromColumnSlice::vector3_from_column_slice
);
static_from_slice!(
    Vector4,
    4,
    1,
    Vector4SlicePullback,
    NaVector4FromRowSlice::vector4_from_row_slice,
    NaVector4FromColumnSlice::vector4_from_column_slice
);
static_from_slice!(
    Matrix2,
    2,
    2,
    Matrix2SlicePullback,
    NaMatrix2FromRowSlice::matrix2_from_row_slice,
    NaMatrix2FromColumnSlice::matrix2_from_column_slice
);
static_from_slice!(
    Matrix3,
    3,
    3,
    Matrix3SlicePullback,
    NaMatrix3FromRowSlice::matrix3_from_row_slice,
    NaMatrix3FromColumnSlice::matrix3_from_column_slice
);
static_from_slice!(
    Matrix4,
    4,
    4,
    Matrix4SlicePullback,
    NaMatrix4FromRowSlice::matrix4_from_row_slice,
    NaMatrix4FromColumnSlice::matrix4_from_column_slice
);

/// Small static vectors built from an array, `Vector3::from([a, b, c])`: the rule trait
/// and its impl for `Call((&[a, b, c],))`, whose pullback gives each array element its
/// entry's cotangent.
macro_rules! static_from_array {
    ($ty:ident, $n:expr, $pb:ident, $trait:ident :: $method:ident) => {
        #[doc = concat!("Pullback of `", stringify!($ty), "::from([..])`: needs nothing.")]
        pub struct $pb<T>(std::marker::PhantomData<fn() -> T>);

        impl<T: Elem> Pullback for $pb<T> {
            type Output = $ty<T>;
            type Args = ([T; $n],);
            #[inline]
            fn pullback(self, dv: $ty<T>, (dxs,): (&mut [T; $n],)) {
                for (k, d) in dxs.iter_mut().enumerate() {
                    *d += dv[k];
                }
            }
        }

        rule_trait! {
            #[doc = concat!("`", stringify!($ty), "::from([..])`: `Call((&xs,)).", stringify!($method), "()`.")]
            $trait::$method
        }

        impl<T: Elem> $trait for Call<(&[T; $n],)> {
            type Output = $ty<T>;
            type Pullback = $pb<T>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                ($ty::from(*self.0 .0), $pb(std::marker::PhantomData))
            }
        }
    };
}

/// Small static matrices built from their columns, `Matrix3::from_columns(&[a, b, c])`:
/// the rule trait and its impl for `Call((&[a, b, c],))` of static vectors, whose
/// pullback gives each column its block of the cotangent.
macro_rules! static_from_columns {
    ($ty:ident, $n:literal, $pb:ident, $trait:ident :: $method:ident) => {
        #[doc = concat!("Pullback of `", stringify!($ty), "::from_columns(&[..])`: needs nothing.")]
        pub struct $pb<T>(std::marker::PhantomData<fn() -> T>);

        impl<T: Elem> Pullback for $pb<T> {
            type Output = $ty<T>;
            type Args = ([nalgebra::SVector<T, $n>; $n],);
            #[inline]
            fn pullback(self, dm: $ty<T>, (dcs,): (&mut [nalgebra::SVector<T, $n>; $n],)) {
                for (j, d) in dcs.iter_mut().enumerate() {
                    *d += dm.column(j);
                }
            }
        }

        rule_trait! {
            #[doc = concat!("`", stringify!($ty), "::from_columns(&[..])`: `Call((&cols,)).", stringify!($method), "()`.")]
            $trait::$method
        }

        impl<T: Elem> $trait for Call<(&[nalgebra::SVector<T, $n>; $n],)> {
            type Output = $ty<T>;
            type Pullback = $pb<T>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                ($ty::from_columns(self.0 .0), $pb(std::marker::PhantomData))
            }
        }
    };
}

static_from_columns!(
    Matrix2,
    2,
    Matrix2ColumnsPullback,
    NaMatrix2FromColumns::matrix2_from_columns
);
static_from_columns!(
    Matrix3,
    3,
    Matrix3ColumnsPullback,
    NaMatrix3FromColumns::matrix3_from_columns
);
static_from_columns!(
    Matrix4,
    4,
    Matrix4ColumnsPullback,
    NaMatrix4FromColumns::matrix4_from_columns
);

static_from_array!(
    Vector2,
    2,
    Vector2ArrayPullback,
    NaVector2From::vector2_from
);
static_from_array!(
    Vector3,
    3,
    Vector3ArrayPullback,
    NaVector3From::vector3_from
);
static_from_array!(
    Vector4,
    4,
    Vector4ArrayPullback,
    NaVector4From::vector4_from
);

rule_trait! {
    /// `DMatrix::from_column_slice(rows, cols, xs)`: `Call((&rows, &cols, &xs)).dmatrix_from_column_slice()`.
    NaDMatrixFromColumnSlice::dmatrix_from_column_slice
}
rule_trait! {
    /// `DMatrix::from_vec(rows, cols, v)` (column by column): `Call((&rows, &cols, &v)).dmatrix_from_vec()`.
    NaDMatrixFromVec::dmatrix_from_vec
}

impl<T: Elem> NaDMatrixFromColumnSlice for Call<(&usize, &usize, &[T])> {
    type Output = DMatrix<T>;
    type Pullback = dmatrix::DMatrixPullback<T, false>;
    #[inline]
    #[track_caller]
    fn dmatrix_from_column_slice(self) -> (Self::Output, Self::Pullback) {
        let (rows, cols, xs) = self.0;
        dmatrix::by_columns(*rows, *cols, xs)
    }
}

impl<T: Elem> NaDMatrixFromVec for Call<(&usize, &usize, &Vec<T>)> {
    type Output = DMatrix<T>;
    type Pullback = dmatrix::DMatrixPullback<T, false>;
    #[inline]
    #[track_caller]
    fn dmatrix_from_vec(self) -> (Self::Output, Self::Pullback) {
        let (rows, cols, v) = self.0;
        dmatrix::by_columns(*rows, *cols, v)
    }
}

/// Adds `src` (in `order`'s element order) into the cotangent `acc` of a slice of `len`
/// elements, writing a structural zero (an empty `Vec`) out first.
#[track_caller]
fn add_into_slice<T: Elem>(acc: &mut Vec<T>, len: usize, src: impl Iterator<Item = (usize, T)>) {
    if acc.is_empty() {
        acc.resize(len, T::ZERO);
    }
    assert_eq!(
        acc.len(),
        len,
        "mochi: a slice cotangent of {} elements for a slice of {len}",
        acc.len()
    );
    for (k, v) in src {
        acc[k] += v;
    }
}

/// The rule of [`dvector`](fn@dvector): `x̄ᵢ += ȳᵢ`.
pub mod dvector {
    use super::*;

    /// Pullback of `dvector`: the length.
    pub struct DVectorPullback<T> {
        len: usize,
        _types: std::marker::PhantomData<fn() -> T>,
    }

    impl<T: Elem> Pullback for DVectorPullback<T> {
        type Output = DVector<T>;
        type Args = (Vec<T>,);
        #[track_caller]
        fn pullback(self, dv: DVector<T>, (dxs,): (&mut Vec<T>,)) {
            let Some(dv) = output(&dv, (self.len, 1)) else {
                return;
            };
            add_into_slice(dxs, self.len, dv.iter().copied().enumerate());
        }
    }

    /// `dvector(xs)` with its pullback.
    #[inline]
    pub fn rrule<T: Elem>(xs: &[T]) -> (DVector<T>, DVectorPullback<T>) {
        (
            super::dvector(xs),
            DVectorPullback {
                len: xs.len(),
                _types: std::marker::PhantomData,
            },
        )
    }
}

/// The rule of [`dmatrix`](fn@dmatrix): `x̄[i·cols + j] += Ȳᵢⱼ`; of
/// `DMatrix::from_column_slice` and `DMatrix::from_vec` (column by column, `ROW_MAJOR`
/// false): `x̄[j·rows + i] += Ȳᵢⱼ`.
pub mod dmatrix {
    use super::*;
    use mochi_core::NoTangent;

    /// Pullback of `dmatrix` (`ROW_MAJOR`) and of the column-major builders: the shape.
    pub struct DMatrixPullback<T, const ROW_MAJOR: bool = true> {
        rows: usize,
        cols: usize,
        _types: std::marker::PhantomData<fn() -> T>,
    }

    impl<T: Elem, const ROW_MAJOR: bool> Pullback for DMatrixPullback<T, ROW_MAJOR> {
        type Output = DMatrix<T>;
        type Args = (NoTangent, NoTangent, Vec<T>);
        #[track_caller]
        fn pullback(
            self,
            dm: DMatrix<T>,
            (_, _, dxs): (&mut NoTangent, &mut NoTangent, &mut Vec<T>),
        ) {
            let (rows, cols) = (self.rows, self.cols);
            let Some(dm) = output(&dm, (rows, cols)) else {
                return;
            };
            // Column-major storage; the slice row by row or column by column.
            let entries = (0..cols).flat_map(|j| (0..rows).map(move |i| (i, j)));
            let at = |i: usize, j: usize| {
                if ROW_MAJOR {
                    i * cols + j
                } else {
                    j * rows + i
                }
            };
            add_into_slice(
                dxs,
                rows * cols,
                entries.map(|(i, j)| (at(i, j), dm[(i, j)])),
            );
        }
    }

    /// `dmatrix(rows, cols, xs)` with its pullback.
    #[inline]
    #[track_caller]
    pub fn rrule<T: Elem>(rows: usize, cols: usize, xs: &[T]) -> (DMatrix<T>, DMatrixPullback<T>) {
        (
            super::dmatrix(rows, cols, xs),
            DMatrixPullback {
                rows,
                cols,
                _types: std::marker::PhantomData,
            },
        )
    }

    /// `DMatrix::from_column_slice(rows, cols, xs)` with its pullback (of `from_vec` too).
    #[inline]
    #[track_caller]
    pub fn by_columns<T: Elem>(
        rows: usize,
        cols: usize,
        xs: &[T],
    ) -> (DMatrix<T>, DMatrixPullback<T, false>) {
        (
            DMatrix::from_column_slice(rows, cols, xs),
            DMatrixPullback {
                rows,
                cols,
                _types: std::marker::PhantomData,
            },
        )
    }
}

/// `DVector::zeros(n)` of a length the analysis counted active (`x.nrows()` is a rule
/// call): the vector, and no derivative. The element type is inferred from the vector's
/// use, as in the primal.
pub trait NaDVectorZeros<T> {
    /// The (zero-sized) pullback.
    type Pullback: Pullback;
    /// The vector and its pullback.
    fn dvector_zeros(self) -> (DVector<T>, Self::Pullback);
}

impl<T: Elem> NaDVectorZeros<T> for Call<(&usize,)> {
    type Pullback = InactivePullback<(NoTangent,), DVector<T>>;
    #[inline(always)]
    fn dvector_zeros(self) -> (DVector<T>, Self::Pullback) {
        (DVector::zeros(*self.0 .0), InactivePullback::new())
    }
}

/// `DMatrix::zeros(rows, columns)` of a shape the analysis counted active: the matrix,
/// and no derivative.
pub trait NaDMatrixZeros<T> {
    /// The (zero-sized) pullback.
    type Pullback: Pullback;
    /// The matrix and its pullback.
    fn dmatrix_zeros(self) -> (DMatrix<T>, Self::Pullback);
}

impl<T: Elem> NaDMatrixZeros<T> for Call<(&usize, &usize)> {
    type Pullback = InactivePullback<(NoTangent, NoTangent), DMatrix<T>>;
    #[inline(always)]
    fn dmatrix_zeros(self) -> (DMatrix<T>, Self::Pullback) {
        let (r, c) = self.0;
        (DMatrix::zeros(*r, *c), InactivePullback::new())
    }
}

rule_trait! {
    /// `v.push(e)` of a vector: the vector one element longer, `e` last (a point in
    /// homogeneous coordinates, `p.push(1.0)`): `Call((&v, &e)).push()`.
    NaPush::push
}

/// Pullback of `v.push(e)`: `v̄ += ȳ[..n]`, `ē += ȳ[n]`.
pub struct PushPullback<T, D: nalgebra::Dim>
where
    nalgebra::DefaultAllocator: nalgebra::allocator::Allocator<D>,
{
    n: usize,
    _of: std::marker::PhantomData<fn() -> (T, D)>,
}

impl<T, D> Pullback for PushPullback<T, D>
where
    T: Elem,
    D: nalgebra::DimAdd<nalgebra::U1>,
    nalgebra::DefaultAllocator: nalgebra::allocator::Allocator<D>
        + nalgebra::allocator::Allocator<nalgebra::DimSum<D, nalgebra::U1>>,
{
    type Output = nalgebra::OVector<T, nalgebra::DimSum<D, nalgebra::U1>>;
    type Args = (nalgebra::OVector<T, D>, T);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (dv, de): (&mut nalgebra::OVector<T, D>, &mut T)) {
        let Some(dy) = output(&dy, (self.n + 1, 1)) else {
            return;
        };
        let mut dv = crate::dense::dense(dv, (self.n, 1));
        for (d, g) in dv.iter_mut().zip(dy.iter()) {
            *d += *g;
        }
        *de += dy[(self.n, 0)];
    }
}

impl<T, D, S> NaPush for Call<(&nalgebra::Matrix<T, D, nalgebra::U1, S>, &T)>
where
    T: Elem,
    D: nalgebra::DimAdd<nalgebra::U1>,
    S: nalgebra::Storage<T, D>,
    nalgebra::DefaultAllocator: nalgebra::allocator::Allocator<D>
        + nalgebra::allocator::Allocator<nalgebra::DimSum<D, nalgebra::U1>>,
{
    type Output = nalgebra::OVector<T, nalgebra::DimSum<D, nalgebra::U1>>;
    type Pullback = PushPullback<T, D>;
    #[inline]
    fn push(self) -> (Self::Output, Self::Pullback) {
        let (v, e) = self.0;
        (
            v.push(*e),
            PushPullback {
                n: v.nrows(),
                _of: std::marker::PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::Elem;
    use mochi_core::testing::RuleTest;

    fn builders<T: Elem>() {
        let (x, y, z) = (T::of_f64(0.5), T::of_f64(-1.5), T::of_f64(2.0));
        RuleTest::new(
            (x, y),
            |a| super::vector2(a.0, a.1),
            |a| super::vector2::rrule(a.0, a.1),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (x, y, z),
            |a| super::vector3(a.0, a.1, a.2),
            |a| super::vector3::rrule(a.0, a.1, a.2),
        )
        .jvp(|_, t| nalgebra::Vector3::new(t.0, t.1, t.2))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let xs = vec![x, y, z, x * y, T::ONE, -z];
        RuleTest::new(
            (xs.clone(),),
            |a| super::dvector(&a.0),
            |a| super::dvector::rrule(&a.0),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (2_usize, 3_usize, xs),
            |a| super::dmatrix(a.0, a.1, &a.2),
            |a| super::dmatrix::rrule(a.0, a.1, &a.2),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    fn pushes<T: Elem>() {
        use super::*;
        let v = Vector3::new(T::of_f64(0.5), T::of_f64(-1.5), T::of_f64(2.0));
        RuleTest::new(
            (v, T::of_f64(0.75)),
            |a| a.0.push(a.1),
            |a| Call((&a.0, &a.1)).push(),
        )
        // linear: d(v.push(e)) = v̇.push(ė)
        .jvp(|_, t| t.0.push(t.1))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let d = DVector::from_vec(vec![T::of_f64(0.3), T::of_f64(1.1)]);
        RuleTest::new(
            (d, T::of_f64(-0.4)),
            |a| a.0.push(a.1),
            |a| Call((&a.0, &a.1)).push(),
        )
        .jvp(|_, t| t.0.push(t.1))
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn push_f64() {
        pushes::<f64>();
    }

    #[test]
    fn push_f32() {
        pushes::<f32>();
    }

    fn slice_builders<T: Elem>() {
        use super::*;
        let xs: Vec<T> = (0..16)
            .map(|k| T::of_f64(0.3 + 0.7 * k as f64 - 0.05 * (k * k) as f64))
            .collect();
        macro_rules! both {
            ($ty:ident, $n:expr, $row:ident, $col:ident) => {
                RuleTest::new(
                    (xs[..$n].to_vec(),),
                    |a| $ty::from_row_slice(&a.0),
                    |a| Call((a.0.as_slice(),)).$row(),
                )
                .jvp(|_, t| $ty::from_row_slice(&t.0))
                .tolerance(T::RTOL, T::ATOL)
                .run();
                RuleTest::new(
                    (xs[..$n].to_vec(),),
                    |a| $ty::from_column_slice(&a.0),
                    |a| Call((a.0.as_slice(),)).$col(),
                )
                .jvp(|_, t| $ty::from_column_slice(&t.0))
                .tolerance(T::RTOL, T::ATOL)
                .run();
            };
        }
        both!(
            Vector2,
            2,
            vector2_from_row_slice,
            vector2_from_column_slice
        );
        both!(
            Vector3,
            3,
            vector3_from_row_slice,
            vector3_from_column_slice
        );
        both!(
            Vector4,
            4,
            vector4_from_row_slice,
            vector4_from_column_slice
        );
        both!(
            Matrix2,
            4,
            matrix2_from_row_slice,
            matrix2_from_column_slice
        );
        both!(
            Matrix3,
            9,
            matrix3_from_row_slice,
            matrix3_from_column_slice
        );
        both!(
            Matrix4,
            16,
            matrix4_from_row_slice,
            matrix4_from_column_slice
        );
        let cols = [
            Vector3::new(xs[0], xs[1], xs[2]),
            Vector3::new(xs[3], xs[4], xs[5]),
            Vector3::new(xs[6], xs[7], xs[8]),
        ];
        RuleTest::new(
            (cols,),
            |a| Matrix3::from_columns(&a.0),
            |a| Call((&a.0,)).matrix3_from_columns(),
        )
        .jvp(|_, t| Matrix3::from_columns(&t.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let cols = [Vector2::new(xs[0], xs[1]), Vector2::new(xs[2], xs[3])];
        RuleTest::new(
            (cols,),
            |a| Matrix2::from_columns(&a.0),
            |a| Call((&a.0,)).matrix2_from_columns(),
        )
        .jvp(|_, t| Matrix2::from_columns(&t.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let arr3 = [xs[0], xs[1], xs[2]];
        RuleTest::new(
            (arr3,),
            |a| Vector3::from(a.0),
            |a| Call((&a.0,)).vector3_from(),
        )
        .jvp(|_, t| Vector3::from(t.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            ([xs[3], xs[4]],),
            |a| Vector2::from(a.0),
            |a| Call((&a.0,)).vector2_from(),
        )
        .jvp(|_, t| Vector2::from(t.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (2_usize, 3_usize, xs[..6].to_vec()),
            |a| DMatrix::from_column_slice(a.0, a.1, &a.2),
            |a| Call((&a.0, &a.1, a.2.as_slice())).dmatrix_from_column_slice(),
        )
        .jvp(|a, t| DMatrix::from_column_slice(a.0, a.1, &t.2))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (3_usize, 2_usize, xs[..6].to_vec()),
            |a| DMatrix::from_vec(a.0, a.1, a.2.clone()),
            |a| Call((&a.0, &a.1, &a.2)).dmatrix_from_vec(),
        )
        .jvp(|a, t| DMatrix::from_column_slice(a.0, a.1, &t.2))
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn slice_builders_f64_and_f32() {
        slice_builders::<f64>();
        slice_builders::<f32>();
    }

    fn static_builders<T: Elem>() {
        let v = |x: f64| T::of_f64(x);
        RuleTest::new(
            (v(0.5), v(-1.5), v(2.0), v(0.25)),
            |a| super::vector4(a.0, a.1, a.2, a.3),
            |a| super::vector4::rrule(a.0, a.1, a.2, a.3),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (v(0.5), v(-1.5), v(2.0), v(0.25)),
            |a| super::matrix2(a.0, a.1, a.2, a.3),
            |a| super::matrix2::rrule(a.0, a.1, a.2, a.3),
        )
        .tolerance(T::RTOL, T::ATOL)
        .run();
        // (`matrix3`'s nine arguments are more than a test tuple holds: it is checked
        // through a differentiable function in `engine/mochi/tests/corpus_nalgebra.rs`.)
        // Row by row: the second argument is the entry (0, 1).
        let (m, pb) = super::matrix2::rrule(v(1.0), v(2.0), v(3.0), v(4.0));
        assert_eq!(m[(0, 1)], v(2.0));
        let (mut d0, mut d1, mut d2, mut d3) = (T::ZERO, T::ZERO, T::ZERO, T::ZERO);
        mochi_core::Pullback::pullback(
            pb,
            nalgebra::Matrix2::new(v(0.0), v(1.0), v(0.0), v(0.0)),
            (&mut d0, &mut d1, &mut d2, &mut d3),
        );
        assert_eq!((d0, d1, d2, d3), (T::ZERO, T::ONE, T::ZERO, T::ZERO));
    }

    #[test]
    fn static_builders_f64_and_f32() {
        static_builders::<f64>();
        static_builders::<f32>();
    }

    #[test]
    fn builders_f64_and_f32() {
        builders::<f64>();
        builders::<f32>();
    }
}

rule_trait! {
    /// `Vector2::new(x, y)`: `Call((&x, &y)).vector2_new()`.
    NaVector2New::vector2_new
}
rule_trait! {
    /// `Vector3::new(x, y, z)`: `Call((&x, &y, &z)).vector3_new()`.
    NaVector3New::vector3_new
}
rule_trait! {
    /// `DVector::from_column_slice(xs)`: `Call((&xs,)).dvector_from_column_slice()`.
    NaDVectorFromColumnSlice::dvector_from_column_slice
}
rule_trait! {
    /// `DVector::from_vec(v)`: `Call((&v,)).dvector_from_vec()`.
    NaDVectorFromVec::dvector_from_vec
}

rule_trait! {
    /// `DVector::from_row_slice(xs)` (for a vector, the same as its column slice):
    /// `Call((&xs,)).dvector_from_row_slice()`.
    NaDVectorFromRowSlice::dvector_from_row_slice
}
rule_trait! {
    /// `DMatrix::from_row_slice(rows, cols, xs)` (`xs` row by row):
    /// `Call((&rows, &cols, &xs)).dmatrix_from_row_slice()`, the rule of
    /// [`dmatrix`](fn@dmatrix).
    NaDMatrixFromRowSlice::dmatrix_from_row_slice
}

impl<T: Elem> NaDVectorFromRowSlice for Call<(&[T],)> {
    type Output = DVector<T>;
    type Pullback = dvector::DVectorPullback<T>;
    #[inline]
    fn dvector_from_row_slice(self) -> (Self::Output, Self::Pullback) {
        dvector::rrule(self.0 .0)
    }
}

impl<T: Elem> NaDMatrixFromRowSlice for Call<(&usize, &usize, &[T])> {
    type Output = DMatrix<T>;
    type Pullback = dmatrix::DMatrixPullback<T>;
    #[inline]
    #[track_caller]
    fn dmatrix_from_row_slice(self) -> (Self::Output, Self::Pullback) {
        let (rows, cols, xs) = self.0;
        dmatrix::rrule(*rows, *cols, xs)
    }
}

impl<T: Elem> NaVector2New for Call<(&T, &T)> {
    type Output = Vector2<T>;
    type Pullback = vector2::Vector2Pullback<T>;
    #[inline]
    fn vector2_new(self) -> (Self::Output, Self::Pullback) {
        let (x, y) = self.0;
        vector2::rrule(*x, *y)
    }
}

impl<T: Elem> NaVector3New for Call<(&T, &T, &T)> {
    type Output = Vector3<T>;
    type Pullback = vector3::Vector3Pullback<T>;
    #[inline]
    fn vector3_new(self) -> (Self::Output, Self::Pullback) {
        let (x, y, z) = self.0;
        vector3::rrule(*x, *y, *z)
    }
}

impl<T: Elem> NaDVectorFromColumnSlice for Call<(&[T],)> {
    type Output = DVector<T>;
    type Pullback = dvector::DVectorPullback<T>;
    #[inline]
    fn dvector_from_column_slice(self) -> (Self::Output, Self::Pullback) {
        dvector::rrule(self.0 .0)
    }
}

// The slices given as a `Vec` a function built (`DMatrix::from_row_slice(n, 3, &rows)`
// of `rows: Vec<f64>`): the same rules, the cotangent a `Vec` either way.
impl<T: Elem> NaDVectorFromColumnSlice for Call<(&Vec<T>,)> {
    type Output = DVector<T>;
    type Pullback = dvector::DVectorPullback<T>;
    #[inline]
    fn dvector_from_column_slice(self) -> (Self::Output, Self::Pullback) {
        dvector::rrule(self.0 .0.as_slice())
    }
}

impl<T: Elem> NaDVectorFromRowSlice for Call<(&Vec<T>,)> {
    type Output = DVector<T>;
    type Pullback = dvector::DVectorPullback<T>;
    #[inline]
    fn dvector_from_row_slice(self) -> (Self::Output, Self::Pullback) {
        dvector::rrule(self.0 .0.as_slice())
    }
}

impl<T: Elem> NaDMatrixFromRowSlice for Call<(&usize, &usize, &Vec<T>)> {
    type Output = DMatrix<T>;
    type Pullback = dmatrix::DMatrixPullback<T>;
    #[inline]
    #[track_caller]
    fn dmatrix_from_row_slice(self) -> (Self::Output, Self::Pullback) {
        let (rows, cols, xs) = self.0;
        dmatrix::rrule(*rows, *cols, xs.as_slice())
    }
}

impl<T: Elem> NaDMatrixFromColumnSlice for Call<(&usize, &usize, &Vec<T>)> {
    type Output = DMatrix<T>;
    type Pullback = dmatrix::DMatrixPullback<T, false>;
    #[inline]
    #[track_caller]
    fn dmatrix_from_column_slice(self) -> (Self::Output, Self::Pullback) {
        let (rows, cols, xs) = self.0;
        dmatrix::by_columns(*rows, *cols, xs.as_slice())
    }
}

impl<T: Elem> NaDVectorFromVec for Call<(&Vec<T>,)> {
    type Output = DVector<T>;
    type Pullback = dvector::DVectorPullback<T>;
    #[inline]
    fn dvector_from_vec(self) -> (Self::Output, Self::Pullback) {
        dvector::rrule(self.0 .0)
    }
}
