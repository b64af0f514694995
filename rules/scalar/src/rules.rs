//! Every rule trait of this crate (and the kit's fallbacks of pruning a constant
//! operand's pullback, `KeepWhole` and `KeepCallWhole`), and nothing else: generated code does
//! `use mochi_rules_scalar::rules::*;` to make `Call((&a, &b)).op_mul()` resolve.

pub use crate::cast::{AsF32Rule, AsF64Rule, AsTypeRule};
pub use crate::exp_log::{
    Exp2Rule, ExpM1Rule, ExpRule, Ln1pRule, LnRule, Log10Rule, Log2Rule, LogRule,
};
pub use crate::hyperbolic::{AcoshRule, AsinhRule, AtanhRule, CoshRule, SinhRule, TanhRule};
pub use crate::integer::{
    IntAbsRule, IntAddRule, IntClampRule, IntDivRule, IntMaxRule, IntMinRule, IntMulRule,
    IntNegRule, IntRemRule, IntSignumRule, IntSubRule,
};
pub use crate::operators::{AddRule, DivRule, MulRule, NegRule, PruneOperator, RemRule, SubRule};
pub use crate::piecewise::{
    AbsRule, CeilRule, ClampRule, CopysignRule, DivEuclidRule, FloorRule, FractRule, MaxRule,
    MinRule, RemEuclidRule, RoundRule, RoundTiesEvenRule, SignumRule, TruncRule,
};
pub use crate::power::{CbrtRule, HypotRule, MulAddRule, PowfRule, PowiRule, RecipRule, SqrtRule};
pub use crate::rows::{IterRowPairsMapSumRule, IterRowsMapSumRule, IterRowsZipMapSumRule};
pub use crate::seq::{IterFoldRule, IterMapSumRule, IterReduceRule, IterZipMapSumRule};
pub use crate::trig::{
    AcosRule, AsinRule, Atan2Rule, AtanRule, CosRule, SinCosRule, SinRule, TanRule, ToDegreesRule,
    ToRadiansRule,
};
/// The fallback of a constant argument's pruning (`mochi_core::kit::keep`).
pub use mochi_core::kit::{KeepCallWhole, KeepWhole};
