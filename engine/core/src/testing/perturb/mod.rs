//! What the testing harness needs of a type beyond the tangent contract: random
//! tangents, moving a primal along a tangent, exact comparison of primals
//! ([`Perturb`]), and the components of a tangent as `f64`s ([`Flatten`]).
//!
//! Reverse mode never calls these; they live here so that [`Tangent`] and
//! [`TangentVector`] hold only what rules and derived code use.
//! `#[derive(Tangent)]` implements both traits for a user struct.

#[cfg(feature = "ndarray")]
mod array;
#[cfg(feature = "nalgebra")]
mod nalgebra;
mod std_types;
mod tuples;

use crate::{Tangent, TangentVector};
use rand::Rng;

/// Tangent vectors whose components the harness can list, to report and compare them.
///
/// ```
/// use mochi_core::testing::Flatten;
/// let mut out = Vec::new();
/// (1.0_f64, vec![2.0_f32, 3.0]).flatten_into(&mut out);
/// assert_eq!(out, vec![1.0, 2.0, 3.0]);
/// ```
pub trait Flatten: TangentVector {
    /// Appends the components, in a fixed order, as `f64`s.
    fn flatten_into(&self, out: &mut Vec<f64>);
}

/// Owned primal values that can be moved along a tangent: `self += step · direction`.
///
/// Used by the testing harness for finite differences and to compare what a rule
/// computes with what the plain function computes. Integer-like values do not move
/// and their differences are [`NoTangent`](crate::NoTangent).
///
/// ```
/// use mochi_core::testing::Perturb;
/// let mut x = vec![1.0_f64, 2.0];
/// x.perturb(&vec![1.0, -1.0], 0.5);
/// assert_eq!(x, vec![1.5, 1.5]);
/// assert_eq!(x.difference(&vec![1.0, 1.0]), vec![0.5, 0.5]);
/// assert!(vec![f64::NAN, 0.0].primal_eq(&vec![f64::NAN, -0.0]));
/// assert_eq!(x.primal_scale(), Some(1.5));
/// ```
pub trait Perturb: Tangent<Tangent: Flatten> {
    /// A random tangent of the same shape as `self` (standard normal components).
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent;

    /// A random cotangent of `self` in a structured (compressed) form, when the type has
    /// one: for an array, a broadcast form. Used to check that rules read and accumulate
    /// structured cotangents correctly; `None` (the default) when there is no such form.
    fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Tangent> {
        let _ = rng;
        None
    }

    /// `self += step · direction`.
    fn perturb(&mut self, direction: &Self::Tangent, step: f64);

    /// `self − from`, as a tangent. Both values must have the same shape.
    fn difference(&self, from: &Self) -> Self::Tangent;

    /// Exact equality of primal values that treats `NaN` as equal to `NaN` (and `0.0` as
    /// equal to `-0.0`, as `==` does); shapes must match too.
    ///
    /// The default compares the [`difference`](Self::difference) with zero, which sees
    /// neither `NaN`s as equal nor components without a tangent (integers); the
    /// implementations in this crate override it.
    fn primal_eq(&self, other: &Self) -> bool {
        let mut components = Vec::new();
        self.difference(other).flatten_into(&mut components);
        components.iter().all(|d| *d == 0.0)
    }

    /// The largest absolute value among the float components (`0.0` when there are none),
    /// or `None` when the type does not say. The harness scales its finite-difference
    /// steps with it.
    fn primal_scale(&self) -> Option<f64> {
        None
    }
}

/// The larger of two optional scales; unknown (`None`) wins. `f64::max` ignores `NaN`.
fn max_scale(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a?.max(b?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoTangent;

    #[test]
    fn perturb_moves_floats_and_leaves_integers() {
        let mut p = (1.0_f64, 7_i32, vec![1.0_f32, 2.0]);
        p.perturb(&(1.0, NoTangent, vec![2.0, -2.0]), 0.5);
        assert_eq!(p, (1.5, 7, vec![2.0, 1.0]));
    }

    #[test]
    fn difference_is_the_step_between_two_primals() {
        let a = (2.5_f64, 3_usize, vec![1.0_f32, 4.0]);
        let b = (0.5_f64, 9_usize, vec![0.5_f32, 5.0]);
        let d = a.difference(&b);
        assert_eq!(d, (2.0, NoTangent, vec![0.5, -1.0]));
        let mut moved = b.clone();
        moved.perturb(&d, 1.0);
        assert!(moved.primal_eq(&(a.0, b.1, a.2.clone())));
        assert_eq!(Some(1.0_f64).difference(&None), None);
    }

    #[test]
    fn primal_eq_sees_nans_as_equal_and_everything_else_exactly() {
        assert!(f64::NAN.primal_eq(&f64::NAN));
        assert!(0.0_f32.primal_eq(&-0.0));
        assert!(!1.0_f64.primal_eq(&(1.0 + f64::EPSILON)));
        assert!(!f64::NAN.primal_eq(&1.0));
        assert!(!(1.0_f64, 2_i32).primal_eq(&(1.0, 3)));
        assert!(!vec![1.0_f64].primal_eq(&vec![1.0, 1.0]));
        assert!(!Some(1.0_f64).primal_eq(&None));
        assert!(String::from("a").primal_eq(&String::from("a")));
    }

    #[test]
    fn primal_scale_is_the_largest_float_magnitude() {
        assert_eq!(
            (-3.0_f64, 7_u8, vec![1.0_f32, -5.0]).primal_scale(),
            Some(5.0)
        );
        assert_eq!((4_usize,).primal_scale(), Some(0.0));
        assert_eq!(None::<f64>.primal_scale(), Some(0.0));
    }
}
