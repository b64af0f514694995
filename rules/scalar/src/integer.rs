//! Integer operands. `#[differentiable]` cannot see types, so it routes every
//! operator through a rule; for integers the rule is the plain operator with a
//! zero-sized pullback that does nothing. Overflow behaves exactly as the plain
//! operator does in the same build (a panic with overflow checks, wrapping without).
//!
//! The integer rules have traits of their own (`IntAddRule::op_add` beside the float
//! `AddRule::op_add`): the float rules are one blanket impl over every
//! [`Scalar`](mochi_core::Scalar), and a blanket impl over a trait of another crate
//! cannot share a trait with impls for `i32` (the other crate might make `i32` a
//! `Scalar`). Both are in scope in generated code; a call resolves to the one whose
//! impl fits its operand types.

/// The pullback of the rules of this module: a no-op (it lives in the rule kit, which
/// [`inactive_rules!`](mochi_core::kit::inactive_rules) writes rules with).
pub use mochi_core::kit::InactivePullback;
use mochi_core::kit::{inactive_rules, rule_trait};

rule_trait!(
    /// `a + b` of integers: no tangent.
    IntAddRule::op_add
);
rule_trait!(
    /// `a - b` of integers: no tangent.
    IntSubRule::op_sub
);
rule_trait!(
    /// `a * b` of integers: no tangent.
    IntMulRule::op_mul
);
rule_trait!(
    /// `a / b` of integers: no tangent.
    IntDivRule::op_div
);
rule_trait!(
    /// `a % b` of integers: no tangent.
    IntRemRule::op_rem
);
rule_trait!(
    /// `-a` of a signed integer: no tangent.
    IntNegRule::op_neg
);
rule_trait!(
    /// `a.min(b)` of integers: no tangent.
    IntMinRule::min
);
rule_trait!(
    /// `a.max(b)` of integers: no tangent.
    IntMaxRule::max
);
rule_trait!(
    /// `x.clamp(lo, hi)` of integers: no tangent.
    IntClampRule::clamp
);
rule_trait!(
    /// `a.abs()` of a signed integer: no tangent.
    IntAbsRule::abs
);
rule_trait!(
    /// `a.signum()` of a signed integer: no tangent.
    IntSignumRule::signum
);

inactive_rules! {
    IntAddRule::op_add: |a, b| a + b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntSubRule::op_sub: |a, b| a - b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntMulRule::op_mul: |a, b| a * b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntDivRule::op_div: |a, b| a / b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntRemRule::op_rem: |a, b| a % b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntNegRule::op_neg: |a| -a, for [i8, i16, i32, i64, i128, isize];
    IntMinRule::min: |a, b| Ord::min(a, b), for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntMaxRule::max: |a, b| Ord::max(a, b), for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntClampRule::clamp: |x, lo, hi| Ord::clamp(x, lo, hi), for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    IntAbsRule::abs: |a| a.abs(), for [i8, i16, i32, i64, i128, isize];
    IntSignumRule::signum: |a| a.signum(), for [i8, i16, i32, i64, i128, isize];
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use mochi_core::testing::test_rule;
    use mochi_core::{Call, NoTangent, Pullback};

    #[test]
    fn integer_operators_are_the_plain_operators() {
        assert_eq!(Call((&7_i32, &-3)).op_add().0, 4);
        assert_eq!(Call((&7_u8, &3)).op_sub().0, 4);
        assert_eq!(Call((&7_i64, &-3)).op_mul().0, -21);
        assert_eq!(Call((&-7_i32, &2)).op_div().0, -3);
        assert_eq!(Call((&-7_i32, &2)).op_rem().0, -1);
        assert_eq!(Call((&5_isize,)).op_neg().0, -5);
        assert_eq!(Call((&5_usize, &9)).min().0, 5);
        assert_eq!(Call((&5_u128, &9)).max().0, 9);
        assert_eq!(Call((&12_i16, &0, &10)).clamp().0, 10);
        assert_eq!(Call((&-4_i8,)).abs().0, 4);
        assert_eq!(Call((&-4_i8,)).signum().0, -1);
        let (_, pb) = Call((&1_usize, &2_usize)).op_add();
        assert_eq!(std::mem::size_of_val(&pb), 0);
        pb.pullback(NoTangent, (&mut NoTangent, &mut NoTangent));
    }

    #[test]
    fn integer_rules_pass_the_harness() {
        test_rule(
            (7_i32, 3_i32),
            |a| a.0 * a.1,
            |a| Call((&a.0, &a.1)).op_mul(),
        );
        test_rule(
            (7_u64, 3_u64),
            |a| a.0 % a.1,
            |a| Call((&a.0, &a.1)).op_rem(),
        );
        test_rule((-7_i8,), |a| -a.0, |a| Call((&a.0,)).op_neg());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "overflow")]
    fn overflow_panics_where_the_plain_operator_does() {
        let _ = Call((&u8::MAX, &1_u8)).op_add();
    }
}
