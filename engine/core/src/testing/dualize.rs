//! Primal values run on dual numbers: what [`RuleTest::forward`](super::RuleTest::forward)
//! seeds a rule's primal with, and reads its tangent back from.

use crate::{Dual, NoTangent, Tangent};

/// A value that forward mode carries along one direction: its dual form (floats become
/// [`Dual<1>`], containers hold duals, integers stay as they are), seeded with a
/// tangent, and the tangent read back from a dual result.
///
/// This is how a rule's forward rule is checked: the rule's primal, written once and
/// generic over its element, runs on the dual form of its arguments, and the partials
/// of its result are `J·ẋ`.
///
/// ```
/// use mochi_core::testing::Dualize;
/// let x = vec![1.0_f64, 2.0];
/// let d = x.dual_along(&vec![0.5, -1.0]);
/// let y: Vec<_> = d.iter().map(|v| *v * *v).collect(); // x², elementwise
/// assert_eq!(Vec::<f64>::tangent_of(&y), vec![1.0, -4.0]); // 2x·ẋ
/// ```
pub trait Dualize: Tangent {
    /// The same value with every float a [`Dual<1>`].
    type Dual;
    /// `self` seeded along `tangent`: each float's partial is its tangent component.
    fn dual_along(&self, tangent: &Self::Tangent) -> Self::Dual;
    /// The tangent carried by the partials of `dual`.
    fn tangent_of(dual: &Self::Dual) -> Self::Tangent;
}

impl Dualize for f64 {
    type Dual = Dual<1>;
    fn dual_along(&self, tangent: &f64) -> Dual<1> {
        Dual::new(*self, [*tangent])
    }
    fn tangent_of(dual: &Dual<1>) -> f64 {
        dual.partials[0]
    }
}

/// An `f32` runs on the same `f64` duals as twins of `f32` functions do.
impl Dualize for f32 {
    type Dual = Dual<1>;
    fn dual_along(&self, tangent: &f32) -> Dual<1> {
        Dual::new(f64::from(*self), [f64::from(*tangent)])
    }
    fn tangent_of(dual: &Dual<1>) -> f32 {
        dual.partials[0] as f32
    }
}

macro_rules! constant_dualize {
    ($($t:ty),*) => {$(
        /// No derivative: the value runs as it is.
        impl Dualize for $t {
            type Dual = $t;
            #[allow(clippy::clone_on_copy, clippy::unit_arg)]
            fn dual_along(&self, _: &NoTangent) -> $t {
                self.clone()
            }
            fn tangent_of(_: &$t) -> NoTangent {
                NoTangent
            }
        }
    )*};
}
crate::tangent::for_sized_no_tangent_types!(constant_dualize);

impl<T: Dualize> Dualize for Vec<T> {
    type Dual = Vec<T::Dual>;
    fn dual_along(&self, tangent: &Self::Tangent) -> Self::Dual {
        self.iter()
            .zip(tangent)
            .map(|(x, t)| x.dual_along(t))
            .collect()
    }
    fn tangent_of(dual: &Self::Dual) -> Self::Tangent {
        dual.iter().map(T::tangent_of).collect()
    }
}

impl<T: Dualize> Dualize for Option<T> {
    type Dual = Option<T::Dual>;
    fn dual_along(&self, tangent: &Self::Tangent) -> Self::Dual {
        match (self, tangent) {
            (Some(x), Some(t)) => Some(x.dual_along(t)),
            _ => None,
        }
    }
    fn tangent_of(dual: &Self::Dual) -> Self::Tangent {
        dual.as_ref().map(T::tangent_of)
    }
}

/// A fallible result: the tangent of the `Ok` value, as [`Tangent`] for `Result` says.
///
/// # Panics
/// Reading the tangent of an `Err` panics: the forward run failed at a point where the
/// primal (which the harness ran first) succeeded, which is the rule's bug to report.
impl<T: Dualize, E: std::fmt::Debug> Dualize for Result<T, E> {
    type Dual = Result<T::Dual, E>;
    fn dual_along(&self, tangent: &Self::Tangent) -> Self::Dual {
        match self {
            Ok(x) => Ok(x.dual_along(tangent)),
            Err(_) => panic!("Dualize: an `Err` argument has no dual form"),
        }
    }
    fn tangent_of(dual: &Self::Dual) -> Self::Tangent {
        match dual {
            Ok(d) => T::tangent_of(d),
            Err(e) => panic!("the forward run failed where the primal succeeded: {e:?}"),
        }
    }
}

#[cfg(feature = "ndarray")]
impl<S, D> Dualize for ndarray::ArrayBase<S, D>
where
    S: ndarray::Data,
    S::Elem: Dualize + Clone,
    D: ndarray::Dimension,
{
    type Dual = ndarray::Array<<S::Elem as Dualize>::Dual, D>;
    fn dual_along(&self, tangent: &Self::Tangent) -> Self::Dual {
        ndarray::Zip::from(self)
            .and(tangent)
            .map_collect(|x, t| x.dual_along(t))
    }
    fn tangent_of(dual: &Self::Dual) -> Self::Tangent {
        dual.map(<S::Elem as Dualize>::tangent_of)
    }
}

macro_rules! tuple_dualize {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: Dualize),+> Dualize for ($($T,)+) {
            type Dual = ($($T::Dual,)+);
            fn dual_along(&self, tangent: &Self::Tangent) -> Self::Dual {
                ($(self.$i.dual_along(&tangent.$i),)+)
            }
            fn tangent_of(dual: &Self::Dual) -> Self::Tangent {
                ($($T::tangent_of(&dual.$i),)+)
            }
        }
    )*};
}
crate::tangent::for_tuples!(tuple_dualize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_carries_the_product_rule() {
        let args = (3.0_f64, vec![1.0_f64, -2.0], 4_usize);
        let t = (0.5, vec![2.0, 1.0], NoTangent);
        let (a, v, n) = args.dual_along(&t);
        assert_eq!(n, 4);
        let y: Vec<Dual<1>> = v.iter().map(|x| a * *x).collect();
        // d(a·v) = ȧ·v + a·v̇
        assert_eq!(
            Vec::<f64>::tangent_of(&y),
            vec![0.5 * 1.0 + 3.0 * 2.0, 0.5 * -2.0 + 3.0 * 1.0]
        );
    }

    #[test]
    fn f32_runs_on_f64_duals() {
        let d = 2.0_f32.dual_along(&0.25);
        assert_eq!((d.value, d.partials), (2.0, [0.25]));
        assert_eq!(f32::tangent_of(&(d * d)), 1.0);
    }

    #[cfg(feature = "ndarray")]
    #[test]
    fn arrays_keep_their_shape() {
        let x = ndarray::array![[1.0_f64, 2.0], [3.0, 4.0]];
        let t = ndarray::array![[1.0, 0.0], [0.0, -1.0]];
        let d = x.dual_along(&t);
        let y = d.mapv(|v| v * v);
        assert_eq!(
            ndarray::Array2::<f64>::tangent_of(&y),
            ndarray::array![[2.0, 0.0], [0.0, -8.0]]
        );
    }
}
