//! [`matrix_rule!`]: the header every rule on a matrix of any element type, shape and
//! storage shares, written once.

/// `matrix_rule! { NaTrait for (&Matrix, &T) { type Output = …; … } }` implements
/// `NaTrait` for `Call<(&Matrix<T, R, C, S>, &T)>` with `T: Elem`, any dimensions `R`,
/// `C` and storage `S`; `(&Matrix, &Matrix)` is two matrices of the same shape (storages
/// `S1`, `S2`), `(&Matrix)` one matrix, `(&Matrix, &usize, …)` a matrix and inactive
/// arguments. `also [Allocator<C, R>, …]` adds allocator bounds the output needs.
macro_rules! matrix_rule {
    ($Trait:ident for (&Matrix, &Matrix) { $($items:tt)* }) => {
        impl<T, R, C, S1, S2> $Trait
            for ::mochi_core::Call<(&::nalgebra::Matrix<T, R, C, S1>, &::nalgebra::Matrix<T, R, C, S2>)>
        where
            T: $crate::Elem,
            R: ::nalgebra::Dim,
            C: ::nalgebra::Dim,
            S1: ::nalgebra::Storage<T, R, C>,
            S2: ::nalgebra::Storage<T, R, C>,
            ::nalgebra::DefaultAllocator: ::nalgebra::allocator::Allocator<R, C>,
        {
            $($items)*
        }
    };
    ($Trait:ident for (&Matrix $(, $extra:ty)*) $(also [$($bound:path),*])? { $($items:tt)* }) => {
        impl<T, R, C, S> $Trait for ::mochi_core::Call<(&::nalgebra::Matrix<T, R, C, S>, $($extra,)*)>
        where
            T: $crate::Elem,
            R: ::nalgebra::Dim,
            C: ::nalgebra::Dim,
            S: ::nalgebra::Storage<T, R, C>,
            ::nalgebra::DefaultAllocator: ::nalgebra::allocator::Allocator<R, C> $($(+ $bound)*)?,
        {
            $($items)*
        }
    };
}
pub(crate) use matrix_rule;
