//! Integer operands. `#[differentiable]` cannot see types, so it routes every
//! operator through a rule; for integers the rule is the plain operator with a
//! zero-sized pullback that does nothing. Overflow behaves exactly as the plain
//! operator does in the same build (a panic with overflow checks, wrapping without).

use crate::operators::{AddRule, DivRule, MulRule, NegRule, RemRule, SubRule};
use crate::piecewise::{AbsRule, ClampRule, MaxRule, MinRule, SignumRule};
use mochi_core::kit::inactive_rules;
/// The pullback of the rules of this module: a no-op (it lives in the rule kit, which
/// [`inactive_rules!`](mochi_core::kit::inactive_rules) writes rules with).
pub use mochi_core::kit::InactivePullback;

inactive_rules! {
    AddRule::op_add: |a, b| a + b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    SubRule::op_sub: |a, b| a - b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    MulRule::op_mul: |a, b| a * b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    DivRule::op_div: |a, b| a / b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    RemRule::op_rem: |a, b| a % b, for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    NegRule::op_neg: |a| -a, for [i8, i16, i32, i64, i128, isize];
    MinRule::min: |a, b| Ord::min(a, b), for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    MaxRule::max: |a, b| Ord::max(a, b), for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    ClampRule::clamp: |x, lo, hi| Ord::clamp(x, lo, hi), for [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize];
    AbsRule::abs: |a| a.abs(), for [i8, i16, i32, i64, i128, isize];
    SignumRule::signum: |a| a.signum(), for [i8, i16, i32, i64, i128, isize];
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
