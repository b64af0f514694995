//! Arrays made from a shape: `Array2::zeros(x.dim())`, `Array1::ones(n)`; and arrays
//! made from a `Vec` of differentiable values: `Array1::from(v)`, `Array1::from_vec(v)`,
//! `Array2::from_shape_vec((r, c), v)` (see [`NdArray1From`]).
//!
//! A shape query (`x.dim()`, `x.nrows()`, `x.raw_dim()`) is a rule call whose result the
//! macro counts active, so a constructor given one is lowered as the rule
//! `Call((&shape,)).array2_zeros()` (the type's name in snake case and the function's).
//! These rules make the array as the primal does and pass no derivative on: their
//! pullbacks are zero-sized. The element type is inferred from the array's use, as in
//! the primal.

use crate::Elem;
use mochi_core::kit::{Call, InactivePullback};
use mochi_core::Tangent;
use ndarray::{Array, Ix1, Ix2, Ix3, ShapeBuilder};
use num_traits::{One, Zero};

macro_rules! shape_constructors {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident = $ctor:ident, elem $Elem:ident, shape [$($shape:tt)*];
    )*) => {$(
        $(#[$doc])*
        pub trait $Trait<A> {
            /// The (zero-sized) pullback: no derivative.
            type Pullback: mochi_core::Pullback;
            /// The array and its pullback.
            #[allow(clippy::type_complexity)]
            fn $method(self) -> (Array<A, Self::Dim>, Self::Pullback);
            /// The array's dimension type.
            type Dim: ndarray::Dimension;
        }

        impl<A, Sh> $Trait<A> for Call<(&Sh,)>
        where
            A: Clone + $Elem,
            Sh: $($shape)* + Clone + Tangent,
            Array<A, Sh::Dim>: Tangent,
        {
            type Pullback = InactivePullback<(Sh::Tangent,), <Array<A, Sh::Dim> as Tangent>::Tangent>;
            type Dim = Sh::Dim;
            #[inline(always)]
            fn $method(self) -> (Array<A, Sh::Dim>, Self::Pullback) {
                (Array::$ctor(self.0 .0.clone()), InactivePullback::new())
            }
        }
    )*};
}

shape_constructors! {
    /// `Array::zeros(shape)`.
    NdArrayZeros::array_zeros = zeros, elem Zero, shape [ShapeBuilder];
    /// `Array1::zeros(n)`.
    NdArray1Zeros::array1_zeros = zeros, elem Zero, shape [ShapeBuilder<Dim = Ix1>];
    /// `Array2::zeros(shape)`.
    NdArray2Zeros::array2_zeros = zeros, elem Zero, shape [ShapeBuilder<Dim = Ix2>];
    /// `Array3::zeros(shape)`.
    NdArray3Zeros::array3_zeros = zeros, elem Zero, shape [ShapeBuilder<Dim = Ix3>];
    /// `Array::ones(shape)`.
    NdArrayOnes::array_ones = ones, elem One, shape [ShapeBuilder];
    /// `Array1::ones(n)`.
    NdArray1Ones::array1_ones = ones, elem One, shape [ShapeBuilder<Dim = Ix1>];
    /// `Array2::ones(shape)`.
    NdArray2Ones::array2_ones = ones, elem One, shape [ShapeBuilder<Dim = Ix2>];
    /// `Array3::ones(shape)`.
    NdArray3Ones::array3_ones = ones, elem One, shape [ShapeBuilder<Dim = Ix3>];
}

/// Pullback of an array made from a `Vec`: the array's cotangent, in logical order,
/// added into the `Vec`'s.
pub struct FromVecPullback<T, D> {
    dim: D,
    _t: std::marker::PhantomData<T>,
}

impl<T: Elem, D: ndarray::Dimension> mochi_core::Pullback for FromVecPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Vec<T>,);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dv,): (&mut Vec<T>,)) {
        let n = self.dim.size();
        if dv.len() != n {
            assert!(
                dv.is_empty(),
                "mochi: cotangent has {} elements, primal {n}",
                dv.len()
            );
            dv.resize(n, T::ZERO);
        }
        // A structural-zero or broadcast cotangent is written out first.
        let mut dy = dy;
        let dense = crate::cotangent::dense(&mut dy, &self.dim);
        for (d, g) in dv.iter_mut().zip(dense.iter()) {
            *d += *g;
        }
    }
}

macro_rules! from_vec_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident, dim $D:ty;
    )*) => {$(
        mochi_core::kit::rule_trait!($(#[$doc])* $Trait::$method);

        impl<T: Elem> $Trait for Call<(&Vec<T>,)> {
            type Output = Array<T, $D>;
            type Pullback = FromVecPullback<T, $D>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let y = Array::from_vec(self.0 .0.clone());
                let dim = y.raw_dim();
                (y, FromVecPullback { dim, _t: std::marker::PhantomData })
            }
        }
    )*};
}

from_vec_rules! {
    /// `Array1::from(v)` of a `Vec`: `Call((&v,)).array1_from()`.
    NdArray1From::array1_from, dim Ix1;
    /// `Array1::from_vec(v)`: `Call((&v,)).array1_from_vec()`.
    NdArray1FromVec::array1_from_vec, dim Ix1;
    /// `Array::from(v)` of a `Vec`: `Call((&v,)).array_from()`.
    NdArrayFrom::array_from, dim Ix1;
    /// `Array::from_vec(v)`: `Call((&v,)).array_from_vec()`.
    NdArrayFromVec::array_from_vec, dim Ix1;
}

macro_rules! view_from_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident;
    )*) => {$(
        mochi_core::kit::rule_trait!($(#[$doc])* $Trait::$method);

        impl<'a, T: Elem> $Trait for Call<(&'a [T],)> {
            type Output = ndarray::ArrayView1<'a, T>;
            type Pullback = FromVecPullback<T, Ix1>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let y = ndarray::ArrayView1::from(self.0 .0);
                let dim = y.raw_dim();
                (y, FromVecPullback { dim, _t: std::marker::PhantomData })
            }
        }

        impl<'a, T: Elem> $Trait for Call<(&'a Vec<T>,)> {
            type Output = ndarray::ArrayView1<'a, T>;
            type Pullback = FromVecPullback<T, Ix1>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                Call((&self.0 .0[..],)).$method()
            }
        }
    )*};
}

view_from_rules! {
    /// `ArrayView1::from(s)` of a slice or a `Vec` (`ArrayView1::from(&x[a..b])`): a
    /// view of its elements, whose cotangent is added into the sequence's.
    NdArrayView1From::array_view1_from;
    /// `ArrayView::from(s)` of a slice or a `Vec`: as `ArrayView1::from`.
    NdArrayViewFrom::array_view_from;
}

macro_rules! from_shape_vec_rules {
    ($(
        $(#[$doc:meta])*
        $Trait:ident :: $method:ident, dim $D:ty;
    )*) => {$(
        mochi_core::kit::rule_trait!($(#[$doc])* $Trait::$method);

        impl<T: Elem, Sh: ShapeBuilder<Dim = $D> + Clone + Tangent> $Trait
            for Call<(&Sh, &Vec<T>)>
        {
            type Output = Result<Array<T, $D>, ndarray::ShapeError>;
            type Pullback = FromShapeVecPullback<T, $D, Sh>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (shape, v) = self.0;
                let y = Array::from_shape_vec(shape.clone(), v.clone());
                let dim = y.as_ref().map(|a| a.raw_dim()).ok();
                (y, FromShapeVecPullback { dim, _t: std::marker::PhantomData })
            }
        }
    )*};
}

mochi_core::kit::rule_trait!(
    /// `Array::from_shape_vec(shape, v)`, of any dimension (the shape's):
    /// `Call((&shape, &v)).array_from_shape_vec()`.
    NdArrayFromShapeVec::array_from_shape_vec
);

impl<T: Elem, Sh: ShapeBuilder + Clone + Tangent> NdArrayFromShapeVec for Call<(&Sh, &Vec<T>)> {
    type Output = Result<Array<T, Sh::Dim>, ndarray::ShapeError>;
    type Pullback = FromShapeVecPullback<T, Sh::Dim, Sh>;
    #[inline]
    fn array_from_shape_vec(self) -> (Self::Output, Self::Pullback) {
        let (shape, v) = self.0;
        let y = Array::from_shape_vec(shape.clone(), v.clone());
        let dim = y.as_ref().map(|a| a.raw_dim()).ok();
        (
            y,
            FromShapeVecPullback {
                dim,
                _t: std::marker::PhantomData,
            },
        )
    }
}

/// Pullback of `from_shape_vec`: like [`FromVecPullback`] (the elements in logical
/// order, the shape given in standard order); nothing when the shape did not fit.
pub struct FromShapeVecPullback<T, D, Sh> {
    dim: Option<D>,
    _t: std::marker::PhantomData<fn(T, Sh)>,
}

impl<T: Elem, D: ndarray::Dimension, Sh: Tangent> mochi_core::Pullback
    for FromShapeVecPullback<T, D, Sh>
{
    type Output = Array<T, D>;
    type Args = (Sh::Tangent, Vec<T>);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (_, dv): (&mut Sh::Tangent, &mut Vec<T>)) {
        if let Some(dim) = self.dim {
            FromVecPullback::<T, D> {
                dim,
                _t: std::marker::PhantomData,
            }
            .pullback(dy, (dv,));
        }
    }
}

from_shape_vec_rules! {
    /// `Array2::from_shape_vec((r, c), v)` (standard order):
    /// `Call((&shape, &v)).array2_from_shape_vec()`.
    NdArray2FromShapeVec::array2_from_shape_vec, dim Ix2;
    /// `Array1::from_shape_vec(n, v)`: `Call((&n, &v)).array1_from_shape_vec()`.
    NdArray1FromShapeVec::array1_from_shape_vec, dim Ix1;
    /// `Array3::from_shape_vec((a, b, c), v)`: `Call((&shape, &v)).array3_from_shape_vec()`.
    NdArray3FromShapeVec::array3_from_shape_vec, dim Ix3;
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn zeros_of_a_shape() {
        let (a, pb) = Call((&(2usize, 3usize),)).array2_zeros();
        let a: Array2<f64> = a;
        assert_eq!(a.dim(), (2, 3));
        assert_eq!(std::mem::size_of_val(&pb), 0);
        let (b, _) = Call((&4usize,)).array1_ones();
        let b: ndarray::Array1<f64> = b;
        assert_eq!(b.sum(), 4.0);
    }

    #[test]
    fn views_of_a_slice() {
        use mochi_core::testing::RuleTest;
        let v = vec![0.5_f64, -1.25, 2.0, 0.75];
        RuleTest::new(
            (v,),
            |a| ndarray::ArrayView1::from(&a.0).to_owned(),
            |a| {
                let (y, pb) = Call((&a.0,)).array_view1_from();
                (y.to_owned(), pb)
            },
        )
        .run();
    }

    #[test]
    fn arrays_from_a_vec() {
        use mochi_core::testing::RuleTest;
        let v = vec![0.5_f64, -1.25, 2.0, 0.75];
        RuleTest::new(
            (v.clone(),),
            |a| ndarray::Array1::from(a.0.clone()),
            |a| Call((&a.0,)).array1_from(),
        )
        .forward(|a| ndarray::Array1::from(a.0.clone()))
        .run();
        RuleTest::new(
            (v,),
            |a| ndarray::Array::from_vec(a.0.clone()),
            |a| Call((&a.0,)).array_from_vec(),
        )
        .forward(|a| ndarray::Array::from_vec(a.0.clone()))
        .run();
        // `from_shape_vec` (a `Result`) is checked from derived code, in the facade's
        // `corpus_everyday`.
    }
}
