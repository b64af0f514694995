//! The tuple of a rule's owned arguments, seen one argument at a time.

use super::perturb::{Flatten, Perturb};
use crate::TangentVector;

/// A tuple of owned rule arguments, such as `(Vec<f64>, f64, usize)`.
///
/// The harness checks each argument on its own, so that a failure can name the
/// argument. Implemented for every tuple of up to eight [`Perturb`] values; rule
/// authors never implement it.
pub trait Arguments: Perturb {
    /// How many arguments the tuple holds.
    const COUNT: usize;

    /// Whether argument `i` of `self` and of `other` are equal
    /// ([`Perturb::primal_eq`]).
    fn argument_eq(&self, other: &Self, i: usize) -> bool;

    /// The `Debug` text of argument `i`.
    fn argument_debug(&self, i: usize) -> String;

    /// The scale of argument `i` ([`Perturb::primal_scale`]).
    fn argument_scale(&self, i: usize) -> Option<f64>;

    /// The components of the cotangent of argument `i`, flattened.
    fn flatten_argument(tangent: &Self::Tangent, i: usize) -> Vec<f64>;

    /// A tangent that is `tangent` in argument `i` and a dense zero (of the shape of
    /// `self`) in every other argument.
    fn only_argument(&self, tangent: &Self::Tangent, i: usize) -> Self::Tangent;

    /// Scales the tangent of argument `i` by `factor`.
    fn scale_argument(tangent: &mut Self::Tangent, i: usize, factor: f64);
}

/// Flattens one tangent.
pub(crate) fn flatten<T: Flatten>(t: &T) -> Vec<f64> {
    let mut out = Vec::new();
    t.flatten_into(&mut out);
    out
}

#[track_caller]
fn no_such_argument(i: usize, count: usize) -> ! {
    panic!("mochi: argument {i} asked of a tuple of {count}")
}

macro_rules! tuple_arguments {
    ($(($count:literal; $($T:ident $i:tt),+))*) => {$(
        impl<$($T: Perturb + std::fmt::Debug),+> Arguments for ($($T,)+) {
            const COUNT: usize = $count;
            fn argument_eq(&self, other: &Self, i: usize) -> bool {
                match i {
                    $($i => self.$i.primal_eq(&other.$i),)+
                    _ => no_such_argument(i, $count),
                }
            }
            fn argument_debug(&self, i: usize) -> String {
                match i {
                    $($i => format!("{:?}", self.$i),)+
                    _ => no_such_argument(i, $count),
                }
            }
            fn argument_scale(&self, i: usize) -> Option<f64> {
                match i {
                    $($i => self.$i.primal_scale(),)+
                    _ => no_such_argument(i, $count),
                }
            }
            fn flatten_argument(tangent: &Self::Tangent, i: usize) -> Vec<f64> {
                match i {
                    $($i => flatten(&tangent.$i),)+
                    _ => no_such_argument(i, $count),
                }
            }
            fn only_argument(&self, tangent: &Self::Tangent, i: usize) -> Self::Tangent {
                ($(
                    if i == $i { tangent.$i.clone() } else { self.$i.zero_tangent() },
                )+)
            }
            fn scale_argument(tangent: &mut Self::Tangent, i: usize, factor: f64) {
                match i {
                    $($i => tangent.$i.scale(factor),)+
                    _ => no_such_argument(i, $count),
                }
            }
        }
    )*};
}
tuple_arguments! {
    (1; A 0)
    (2; A 0, B 1)
    (3; A 0, B 1, C 2)
    (4; A 0, B 1, C 2, D 3)
    (5; A 0, B 1, C 2, D 3, E 4)
    (6; A 0, B 1, C 2, D 3, E 4, F 5)
    (7; A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NoTangent, Tangent};

    #[test]
    fn arguments_are_seen_one_at_a_time() {
        let a = (vec![1.0_f64, -4.0], 2.0_f32, 3_usize);
        assert_eq!(<(Vec<f64>, f32, usize)>::COUNT, 3);
        assert_eq!(a.argument_scale(0), Some(4.0));
        assert_eq!(a.argument_debug(2), "3");
        let mut b = a.clone();
        b.1 = 2.5;
        assert!(a.argument_eq(&b, 0) && !a.argument_eq(&b, 1) && a.argument_eq(&b, 2));
        let t = (vec![1.0, 2.0], 3.0_f32, NoTangent);
        let only = a.only_argument(&t, 1);
        assert_eq!(only, (vec![0.0, 0.0], 3.0, NoTangent));
        let mut scaled = t.clone();
        <(Vec<f64>, f32, usize)>::scale_argument(&mut scaled, 0, 2.0);
        assert_eq!(
            <(Vec<f64>, f32, usize)>::flatten_argument(&scaled, 0),
            vec![2.0, 4.0]
        );
        assert!(<(Vec<f64>, f32, usize)>::flatten_argument(&a.zero_tangent(), 2).is_empty());
    }
}
