//! The element types of the rule tests of this crate, and the counting allocator.

use mochi_core::kit::ArrayTolerance;
use mochi_rules_linalg::LinalgElem;

/// Element types under test, with the tolerances their finite differences allow
/// (`T::RTOL`, `T::ATOL`, from the rule kit's table).
pub(crate) trait TestElem: LinalgElem + ArrayTolerance {}
impl<T: LinalgElem + ArrayTolerance> TestElem for T {}

#[global_allocator]
static ALLOCATOR: mochi_core::testing::CountingAllocator = mochi_core::testing::CountingAllocator;
