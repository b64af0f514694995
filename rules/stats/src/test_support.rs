//! The element types of the rule tests of this crate, and the counting allocator.

use mochi_core::kit::ArrayTolerance;
use mochi_core::testing::Dualize;
use mochi_rules_linalg::LinalgElem;

/// Element types under test, with the tolerances their finite differences allow
/// (`T::RTOL`, `T::ATOL`, from the rule kit's table).
pub(crate) trait TestElem:
    LinalgElem + ArrayTolerance + Dualize<Dual = mochi_core::Dual<1>>
{
}
impl<T: LinalgElem + ArrayTolerance + Dualize<Dual = mochi_core::Dual<1>>> TestElem for T {}

#[global_allocator]
static ALLOCATOR: mochi_core::testing::CountingAllocator = mochi_core::testing::CountingAllocator;
