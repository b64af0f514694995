//! Every rule trait of this crate, and nothing else: differentiable code does
//! `use mochi_rules_nalgebra::rules::*;` (the `mochi` facade does it for generated code)
//! to make `Call((&a, &b)).op_mul()` resolve.

pub use crate::arith::{
    NaAdd, NaAddScalar, NaComponentDiv, NaComponentMul, NaDiv, NaMul, NaNeg, NaScale, NaSub,
};
pub use crate::build::{
    NaDMatrixFromColumnSlice, NaDMatrixFromRowSlice, NaDMatrixFromVec, NaDMatrixZeros,
    NaDVectorFromColumnSlice, NaDVectorFromRowSlice, NaDVectorFromVec, NaDVectorZeros,
    NaMatrix2FromColumnSlice, NaMatrix2FromColumns, NaMatrix2FromRowSlice, NaMatrix2New,
    NaMatrix3FromColumnSlice, NaMatrix3FromColumns, NaMatrix3FromRowSlice, NaMatrix3New,
    NaMatrix4FromColumnSlice, NaMatrix4FromColumns, NaMatrix4FromRowSlice, NaPush, NaVector2From,
    NaVector2FromColumnSlice, NaVector2FromRowSlice, NaVector2New, NaVector3From,
    NaVector3FromColumnSlice, NaVector3FromRowSlice, NaVector3New, NaVector4From,
    NaVector4FromColumnSlice, NaVector4FromRowSlice, NaVector4New,
};
pub use crate::closure::{NaMap, NaZipMap};
pub use crate::cross::{NaCross, NaCrossMatrix};
pub use crate::diagonal::{
    NaDMatrixFromDiagonal, NaDiagonal, NaMatrix2FromDiagonal, NaMatrix2FromDiagonalElement,
    NaMatrix3FromDiagonal, NaMatrix3FromDiagonalElement, NaMatrix4FromDiagonal,
    NaMatrix4FromDiagonalElement,
};
pub use crate::factor::{NaCholesky, NaInverse, NaL, NaLnDeterminant, NaLu, NaSolve};
pub use crate::inverse::{NaDeterminant, NaTryInverse};
pub use crate::point::{NaPoint3From, NaPoint3New};
pub use crate::product::{NaAngle, NaDot, NaTrMul};
pub use crate::reduce::{
    NaAmax, NaAmin, NaMagnitude, NaMagnitudeSquared, NaMax, NaMean, NaMin, NaNorm, NaNormSquared,
    NaNormalize, NaSum, NaTrace, NaUnitNewNormalize,
};
pub use crate::rotation::apply::{
    NaInverseTransformPoint, NaInverseTransformVector, NaTransformPoint, NaTransformVector,
};
pub use crate::rotation::euler::{NaRotation3FromEulerAngles, NaUnitQuaternionFromEulerAngles};
pub use crate::rotation::exp::{
    NaRotation3FromAxisAngle, NaRotation3FromScaledAxis, NaRotation3New,
    NaUnitQuaternionFromAxisAngle, NaUnitQuaternionFromScaledAxis, NaUnitQuaternionNew,
};
pub use crate::rotation::quaternion::{
    NaConjugate, NaImag, NaQuaternionScalar, NaRotation3From, NaToRotationMatrix,
};
pub use crate::rotation::rotation3::{NaIntoInner, NaMatrix};
pub use crate::shape::{
    NaColumn, NaColumns, NaIsSquare, NaNcols, NaNrows, NaRow, NaRows, NaShapeOf, NaTranspose,
};
