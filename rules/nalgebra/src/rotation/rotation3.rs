//! Rules of `Rotation3` values: those every rotation has (`r * v`, `r * p`,
//! `r.transform_vector(&v)`, `r.transform_point(&p)`, their inverses, `r1 * r2`,
//! `r.inverse()`, from [`apply`](super::apply)), and `r.transpose()`, `r.matrix()` and
//! `r.into_inner()`. A rotation's cotangent is the `Matrix3` of its entries.

use super::apply::{apply_rules, same_rule, Linear, LinearPullback};
use crate::shape::NaTranspose;
use crate::Elem;
use mochi_core::kit::rule_trait;
use nalgebra::{Matrix3, Rotation3};

rule_trait! {
    /// `r.matrix()`: `Call((&r,)).matrix()`, the rotation's matrix (owned).
    NaMatrix::matrix
}
rule_trait! {
    /// `r.into_inner()`: `Call((&r,)).into_inner()`, the rotation's matrix.
    NaIntoInner::into_inner
}

apply_rules!(Rotation3);

/// `r.matrix()` with its pullback, the identity.
#[inline]
fn matrix<T: Elem>(r: &Rotation3<T>) -> (Matrix3<T>, LinearPullback<T, Matrix3<T>>) {
    (*r.matrix(), LinearPullback::new(Linear::Identity))
}

same_rule!(Rotation3 => matrix, Matrix3<T>, LinearPullback<T, Matrix3<T>>:
    NaMatrix => matrix,
    NaIntoInner => into_inner,
);
same_rule!(Rotation3 => super::apply::invert, Rotation3<T>, LinearPullback<T, Matrix3<T>>:
    NaTranspose => transpose,
);

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::check_rule;
    use crate::Elem;
    use mochi_core::Call;
    use nalgebra::{Rotation3, Vector3};

    fn rules<T: Elem>() {
        // The rules every rotation has are checked in `apply`.
        let r = Rotation3::from_scaled_axis(Vector3::new(0.5, -0.5, 0.16).map(T::of_f64));
        check_rule!(T; (r,), |a| a.0.transpose(), Call((&a.0,)).transpose());
        check_rule!(T; (r,), |a| *a.0.matrix(), Call((&a.0,)).matrix());
        check_rule!(T; (r,), |a| a.0.into_inner(), Call((&a.0,)).into_inner());
    }

    #[test]
    fn rotation3_rules_f64_and_f32() {
        rules::<f64>();
        rules::<f32>();
    }
}
