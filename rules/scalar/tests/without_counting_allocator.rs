//! A test binary without the counting allocator: `expect_no_alloc` must fail and say
//! how to install it, rather than pass for want of a count.

use mochi_core::testing::{counting_allocator_installed, Check, RuleTest};
use mochi_core::Call;
use mochi_rules_scalar::rules::*;

#[test]
fn expect_no_alloc_explains_how_to_install_the_counting_allocator() {
    assert!(!counting_allocator_installed());
    let failure = RuleTest::new((0.3_f64,), |a| a.0.sin(), |a| Call((&a.0,)).sin())
        .expect_no_alloc()
        .check()
        .expect_err("allocations cannot be counted here");
    assert_eq!(failure.checks(), vec![Check::NoAllocation]);
    assert!(
        failure.to_string().contains("#[global_allocator]"),
        "{failure}"
    );
}
