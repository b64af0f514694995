//! [`Tangent`] and [`TangentVector`] for tuples of up to eight elements, component by
//! component.

use super::{Tangent, TangentVector};

macro_rules! tuple_tangent {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: TangentVector),+> TangentVector for ($($T,)+) {
            #[inline(always)]
            fn zero() -> Self {
                ($($T::zero(),)+)
            }
            #[inline(always)]
            fn accumulate(&mut self, other: Self) {
                $(self.$i.accumulate(other.$i);)+
            }
            #[inline(always)]
            fn accumulate_ref(&mut self, other: &Self) {
                $(self.$i.accumulate_ref(&other.$i);)+
            }
            fn scale(&mut self, factor: f64) {
                $(self.$i.scale(factor);)+
            }
            fn inner(&self, other: &Self) -> f64 {
                0.0 $(+ self.$i.inner(&other.$i))+
            }
        }
        impl<$($T: Tangent),+> Tangent for ($($T,)+) {
            type Tangent = ($($T::Tangent,)+);
            fn zero_tangent(&self) -> Self::Tangent {
                ($(self.$i.zero_tangent(),)+)
            }
            fn densify(&self, t: &mut Self::Tangent) {
                $(self.$i.densify(&mut t.$i);)+
            }
        }
    )*};
}
super::for_tuples!(tuple_tangent);
