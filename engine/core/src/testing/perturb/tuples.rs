//! [`Perturb`] and [`Flatten`] for tuples of up to eight elements.

use super::{max_scale, Flatten, Perturb};
use rand::Rng;

macro_rules! tuple_perturb {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: Flatten),+> Flatten for ($($T,)+) {
            fn flatten_into(&self, out: &mut Vec<f64>) {
                $(self.$i.flatten_into(out);)+
            }
        }
        impl<$($T: Perturb),+> Perturb for ($($T,)+) {
            fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
                ($(self.$i.random_tangent(rng),)+)
            }
            /// Some when any element has a structured form; the others are random dense.
            fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Tangent> {
                let mut any = false;
                let t = ($(
                    match self.$i.random_structured_tangent(rng) {
                        Some(t) => { any = true; t }
                        None => self.$i.random_tangent(rng),
                    },
                )+);
                any.then_some(t)
            }
            fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
                $(self.$i.perturb(&direction.$i, step);)+
            }
            fn difference(&self, from: &Self) -> Self::Tangent {
                ($(self.$i.difference(&from.$i),)+)
            }
            fn primal_eq(&self, other: &Self) -> bool {
                true $(&& self.$i.primal_eq(&other.$i))+
            }
            fn primal_scale(&self) -> Option<f64> {
                Some(0.0) $(.and_then(|s| max_scale(Some(s), self.$i.primal_scale())))+
            }
        }
    )*};
}
crate::tangent::for_tuples!(tuple_perturb);
