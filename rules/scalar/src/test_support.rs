//! Helpers of this crate's tests: derivatives read off a pullback. The checks of whole
//! rules (`check_unary!`, `check_binary!`) are in `mochi_core::kit`.

// The `no allocation` checks count allocations.
#[global_allocator]
static A: mochi_core::testing::CountingAllocator = mochi_core::testing::CountingAllocator;

/// Runs a pullback of one argument with `ȳ = 1` into a zero accumulator: `dy/dx`.
pub(crate) fn derivative<T: mochi_core::TangentVector + From<i8>, P>(pullback: P) -> T
where
    P: mochi_core::Pullback<Output = T, Args = (T,)>,
{
    let mut dx = T::from(0);
    pullback.pullback(T::from(1), (&mut dx,));
    dx
}

/// Runs a pullback of two arguments with `ȳ = 1`: `(∂y/∂a, ∂y/∂b)`.
pub(crate) fn partials<T: mochi_core::TangentVector + From<i8>, P>(pullback: P) -> (T, T)
where
    P: mochi_core::Pullback<Output = T, Args = (T, T)>,
{
    let (mut da, mut db) = (T::from(0), T::from(0));
    pullback.pullback(T::from(1), (&mut da, &mut db));
    (da, db)
}
