//! Every rule trait of this crate, and nothing else: differentiable code does
//! `use mochi_rules_nalgebra::rules::*;` (the `mochi` facade does it for generated code)
//! to make `Call((&a, &b)).op_mul()` resolve.

pub use crate::arith::{
    NaAdd, NaAddScalar, NaComponentDiv, NaComponentMul, NaDiv, NaMul, NaNeg, NaSub,
};
pub use crate::build::{
    NaDMatrixZeros, NaDVectorFromColumnSlice, NaDVectorFromVec, NaDVectorZeros, NaVector2New,
    NaVector3New,
};
pub use crate::closure::{NaMap, NaZipMap};
pub use crate::cross::NaCross;
pub use crate::factor::{NaCholesky, NaInverse, NaL, NaLnDeterminant, NaLu, NaSolve};
pub use crate::inverse::{NaDeterminant, NaTryInverse};
pub use crate::product::{NaDot, NaTrMul};
pub use crate::reduce::{NaMean, NaNorm, NaNormSquared, NaNormalize, NaSum, NaTrace};
pub use crate::shape::{
    NaColumn, NaColumns, NaIsSquare, NaNcols, NaNrows, NaRow, NaRows, NaShapeOf, NaTranspose,
};
