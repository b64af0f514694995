//! Reverse rules for [ndarray]: reductions, broadcasting arithmetic, products, views
//! and slices, closures in adapters, structured matrices and joins — for `f64` and
//! `f32` arrays of any storage (owned, views) and any layout (contiguous,
//! transposed, strided).
//!
//! Every rule is a method on [`mochi_core::Call`] from one of the traits re-exported
//! by [`rules`], which `#[differentiable]` glob-imports into generated code:
//! `x.sum_axis(Axis(0))` becomes `Call((&x, &Axis(0))).sum_axis()`, returning the
//! value and a pullback. The cotangent of an `ArrayBase<S, D>` of `T` is an
//! `Array<T, D>`; see [`cotangent`] for how pullbacks accumulate into it and
//! `design-docs/array-rules.md` for the model.
//!
//! Free functions of this crate that differentiable code calls ([`outer`],
//! [`trace`], [`norm_l2`]) each have a rule module beside them (`outer::rrule`).

mod elem;

pub mod arith;
pub mod closure;
pub mod constructors;
pub mod cotangent;
pub mod elementwise;
pub mod join;
pub mod kron;
pub mod product;
pub mod reduce;
pub mod shape;
pub mod structure;

pub use elem::Elem;
pub use product::outer;
pub use reduce::norm_l2;
pub use structure::trace;

/// The free functions with rules, as the modules `#[differentiable]` calls: a call
/// `f(..)` in differentiable code is lowered to `f::rrule(..)`, the same contract as a
/// user's own `#[differentiable]` helper. `mochi::prelude` glob-imports this module, so
/// `kron(&a, &b)` (with `ndarray::linalg::kron` imported) finds `kron::rrule` in the type
/// namespace while the imported function stays in the value namespace; a function of
/// the user's own with one of these names shadows the glob import.
pub mod functions {
    /// `ndarray::concatenate`.
    pub mod concatenate {
        pub use crate::join::concatenate::rrule;
        /// The generic form through which the generic twins of `#[differentiable]`
        /// functions call it (ndarray's own function, and this rule).
        #[doc(hidden)]
        pub use ndarray::concatenate as __twin;
        #[doc(hidden)]
        pub mod __twin {
            pub use crate::join::concatenate::rrule;
        }
    }
    /// `ndarray::stack`.
    pub mod stack {
        pub use crate::join::stack::rrule;
        /// The generic form through which the generic twins of `#[differentiable]`
        /// functions call it (ndarray's own function, and this rule).
        #[doc(hidden)]
        pub use ndarray::stack as __twin;
        #[doc(hidden)]
        pub mod __twin {
            pub use crate::join::stack::rrule;
        }
    }
    /// `ndarray::linalg::kron`.
    pub mod kron {
        pub use crate::kron::rrule;
        /// The generic form through which the generic twins of `#[differentiable]`
        /// functions call it (ndarray's own function, and this rule).
        #[doc(hidden)]
        pub use ndarray::linalg::kron as __twin;
        #[doc(hidden)]
        pub mod __twin {
            pub use crate::kron::rrule;
        }
    }
    /// [`outer`](fn@crate::outer).
    pub mod outer {
        #[doc(hidden)]
        pub use crate::product::outer as __twin;
        pub use crate::product::outer::rrule;
    }
}

/// The crate's paths of the functions in [`functions`], for calls written with a path
/// (`ndarray::concatenate(..)`, `ndarray::linalg::kron(..)`): `#[differentiable]` names
/// `path::rrule` inside a block that glob-imports the facade's union of these modules,
/// where `ndarray` is this mirror rather than the crate.
pub mod paths {
    /// Mirrors `ndarray`'s paths of the functions with rules.
    pub mod ndarray {
        pub use crate::functions::{concatenate, stack};
        /// Mirrors `ndarray::linalg`.
        pub mod linalg {
            pub use crate::functions::kron;
        }
    }
}

/// Every rule trait of this crate, for a glob import next to the other rule crates'.
pub mod rules {
    pub use crate::arith::{NdAdd, NdDiv, NdKeepDiv, NdKeepMul, NdMul, NdNeg, NdSub};
    pub use crate::closure::{NdFold, NdMap, NdMapCollect, NdMapv, NdZipAnd, NdZipFrom, NdZipMap};
    pub use crate::constructors::{
        NdArray1From, NdArray1FromShapeVec, NdArray1FromVec, NdArray2FromShapeVec,
        NdArray3FromShapeVec, NdArrayFrom, NdArrayFromShapeVec, NdArrayFromVec, NdArrayView1From,
        NdArrayViewFrom,
    };
    pub use crate::constructors::{
        NdArray1Ones, NdArray1Zeros, NdArray2Ones, NdArray2Zeros, NdArray3Ones, NdArray3Zeros,
        NdArrayOnes, NdArrayZeros,
    };
    pub use crate::elementwise::{
        NdAbs, NdCbrt, NdCeil, NdClamp, NdCos, NdExp, NdExp2, NdFloor, NdFract, NdLn, NdLog,
        NdLog10, NdLog2, NdPow2, NdPowf, NdPowi, NdRecip, NdRound, NdScaledAddValue, NdSignum,
        NdSin, NdSqrt, NdTan, NdToDegrees, NdToRadians, NdTrunc,
    };
    pub use crate::join::{NdConcatenate, NdStack};
    pub use crate::kron::NdKron;
    pub use crate::product::{NdDot, NdOuter};
    pub use crate::reduce::{
        NdMean, NdMeanAxis, NdNormL2, NdProduct, NdProductAxis, NdStd, NdStdAxis, NdSum, NdSumAxis,
        NdVar, NdVarAxis,
    };
    pub use crate::shape::{
        NdBroadcast, NdClone, NdColumn, NdDim, NdFlatten, NdIndexAxis, NdInsertAxis, NdIntoShape,
        NdIntoShapeWithOrder, NdIsSquare, NdIsStandardLayout, NdLenOf, NdNcols, NdNdim, NdNrows,
        NdPermutedAxes, NdRawDim, NdReversedAxes, NdRow, NdSelect, NdShapeOf, NdSlice, NdSliceAxis,
        NdStrides, NdSwappedAxes, NdT, NdToOwned, NdToShape, NdView,
    };
    pub use crate::structure::{
        NdArray2FromDiag, NdArrayFromDiag, NdDiag, NdTrace, NdTril, NdTriu,
    };
}

#[cfg(test)]
mod test_support;
