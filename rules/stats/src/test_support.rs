//! Tolerances per element type for the rule tests of this crate.

use mochi_rules_ndarray::Elem;

/// Element types under test, with the tolerances their finite differences allow.
pub(crate) trait TestElem: Elem + mochi_rules_linalg::LinalgElem {
    const RTOL: f64;
    const ATOL: f64;
}
impl TestElem for f64 {
    const RTOL: f64 = 1e-6;
    const ATOL: f64 = 1e-9;
}
impl TestElem for f32 {
    const RTOL: f64 = 5e-2;
    const ATOL: f64 = 5e-3;
}

#[global_allocator]
static ALLOCATOR: mochi_core::testing::CountingAllocator = mochi_core::testing::CountingAllocator;
