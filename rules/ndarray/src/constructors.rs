//! Arrays made from a shape: `Array2::zeros(x.dim())`, `Array1::ones(n)`.
//!
//! A shape query (`x.dim()`, `x.nrows()`, `x.raw_dim()`) is a rule call whose result the
//! macro counts active, so a constructor given one is lowered as the rule
//! `Call((&shape,)).array2_zeros()` (the type's name in snake case and the function's).
//! These rules make the array as the primal does and pass no derivative on: their
//! pullbacks are zero-sized. The element type is inferred from the array's use, as in
//! the primal.

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
}
