//! Reductions to a scalar: `a.sum()`, `a.mean()`, `a.trace()`, `a.norm()` (Euclidean,
//! Frobenius for matrices), `a.norm_squared()` (also by nalgebra's other names,
//! `magnitude` and `magnitude_squared`), the extrema `a.max()`, `a.min()`,
//! `a.amax()`, `a.amin()` (`ā` at the element chosen: `ȳ`, or `ȳ` times its sign for the
//! absolute ones); and `a.normalize()`.
//!
//! `y = Σ aᵢ`: `ā += ȳ`; `y = ‖a‖`: `ā += ȳ a / ‖a‖` (at `a = 0`, where the norm has a
//! kink, the subgradient `0`); `y = ‖a‖²`: `ā += 2 ȳ a`; the mean: `ā += ȳ/n`; the
//! trace: `āᵢᵢ += ȳ`; `u = a/‖a‖`: `ā += (ū − u⟨u, ū⟩)/‖a‖`.

use crate::dense::{add_scaled, dense, view};
use crate::impls::matrix_rule;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Matrix, OMatrix, Storage};
use std::marker::PhantomData;

rule_trait! {
    /// `a.sum()`: `Call((&a,)).sum()`.
    NaSum::sum
}
rule_trait! {
    /// `a.norm()`: `Call((&a,)).norm()`.
    NaNorm::norm
}
rule_trait! {
    /// `a.norm_squared()`: `Call((&a,)).norm_squared()`.
    NaNormSquared::norm_squared
}

matrix_rule! {
    NaSum for (&Matrix) {
        type Output = T;
        type Pullback = SpreadPullback<T, R, C>;
        #[inline]
        fn sum(self) -> (T, Self::Pullback) {
            let a = self.0 .0;
            (a.sum(), SpreadPullback::new(a.shape(), Spread::Every))
        }
    }
}

/// Pullback of `a.norm()` and `a.norm_squared()`: a copy of `a` and the factor of `ȳ a`
/// in `ā` (`1/‖a‖`, or `2`).
pub struct NormPullback<T: Elem, R: Dim, C: Dim>
where
    DefaultAllocator: Allocator<R, C>,
{
    a: OMatrix<T, R, C>,
    factor: T,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for NormPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: T, (da,): (&mut OMatrix<T, R, C>,)) {
        add_scaled(da, dy * self.factor, view(&self.a));
    }
}

matrix_rule! {
    NaNorm for (&Matrix) {
        type Output = T;
        type Pullback = NormPullback<T, R, C>;
        #[inline]
        fn norm(self) -> (T, Self::Pullback) {
            let a = self.0 .0;
            let y = a.norm();
            // The kink at 0: subgradient 0.
            let factor = if y > T::ZERO { T::ONE / y } else { T::ZERO };
            (
                y,
                NormPullback {
                    a: a.clone_owned(),
                    factor,
                },
            )
        }
    }
}

matrix_rule! {
    NaNormSquared for (&Matrix) {
        type Output = T;
        type Pullback = NormPullback<T, R, C>;
        #[inline]
        fn norm_squared(self) -> (T, Self::Pullback) {
            let a = self.0 .0;
            (
                a.norm_squared(),
                NormPullback {
                    a: a.clone_owned(),
                    factor: T::ONE + T::ONE,
                },
            )
        }
    }
}

rule_trait! {
    /// `a.magnitude()`, nalgebra's other name for `a.norm()`: `Call((&a,)).magnitude()`.
    NaMagnitude::magnitude
}
rule_trait! {
    /// `a.magnitude_squared()`, nalgebra's other name for `a.norm_squared()`:
    /// `Call((&a,)).magnitude_squared()`.
    NaMagnitudeSquared::magnitude_squared
}

matrix_rule! {
    NaMagnitude for (&Matrix) {
        type Output = T;
        type Pullback = NormPullback<T, R, C>;
        #[inline]
        fn magnitude(self) -> (T, Self::Pullback) {
            NaNorm::norm(self)
        }
    }
}

matrix_rule! {
    NaMagnitudeSquared for (&Matrix) {
        type Output = T;
        type Pullback = NormPullback<T, R, C>;
        #[inline]
        fn magnitude_squared(self) -> (T, Self::Pullback) {
            NaNormSquared::norm_squared(self)
        }
    }
}

rule_trait! {
    /// `a.trace()`: `Call((&a,)).trace()`.
    NaTrace::trace
}
rule_trait! {
    /// `a.mean()`: `Call((&a,)).mean()`.
    NaMean::mean
}
rule_trait! {
    /// `a.normalize()`: `Call((&a,)).normalize()`.
    NaNormalize::normalize
}

rule_trait! {
    /// `Unit::new_normalize(a)`, the unit vector `a.normalize()` as a `Unit` (an axis of
    /// `Rotation3::from_axis_angle`), its cotangent in the ambient space:
    /// `Call((&a,)).unit_new_normalize()`.
    NaUnitNewNormalize::unit_new_normalize
}

/// Where a reduction to a scalar spreads its cotangent back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Spread {
    /// `a.sum()`: `ā += ȳ`.
    Every,
    /// `a.mean()`: `ā += ȳ/n`.
    Mean,
    /// `a.trace()`: `āᵢᵢ += ȳ`.
    Diagonal,
}

/// Pullback of `a.sum()`, `a.mean()` and `a.trace()`: the shape of `a`.
pub struct SpreadPullback<T: Elem, R, C> {
    shape: (usize, usize),
    spread: Spread,
    _types: crate::dense::Marker<T, R, C>,
}

impl<T: Elem, R, C> SpreadPullback<T, R, C> {
    #[inline]
    fn new(shape: (usize, usize), spread: Spread) -> Self {
        SpreadPullback {
            shape,
            spread,
            _types: PhantomData,
        }
    }
}

impl<T: Elem, R: Dim, C: Dim> Pullback for SpreadPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: T, (da,): (&mut OMatrix<T, R, C>,)) {
        let (rows, cols) = self.shape;
        let mut da = dense(da, self.shape);
        match self.spread {
            Spread::Every => da.add_scalar_mut(dy),
            Spread::Mean if rows * cols > 0 => {
                da.add_scalar_mut(dy / T::of_f64((rows * cols) as f64))
            }
            Spread::Mean => {}
            Spread::Diagonal => {
                for i in 0..rows.min(cols) {
                    da[(i, i)] += dy;
                }
            }
        }
    }
}

impl<T, D, S> NaTrace for Call<(&Matrix<T, D, D, S>,)>
where
    T: Elem,
    D: Dim,
    S: Storage<T, D, D>,
    DefaultAllocator: Allocator<D, D>,
{
    type Output = T;
    type Pullback = SpreadPullback<T, D, D>;
    #[inline]
    #[track_caller]
    fn trace(self) -> (T, Self::Pullback) {
        let a = self.0 .0;
        (a.trace(), SpreadPullback::new(a.shape(), Spread::Diagonal))
    }
}

matrix_rule! {
    NaMean for (&Matrix) {
        type Output = T;
        type Pullback = SpreadPullback<T, R, C>;
        #[inline]
        fn mean(self) -> (T, Self::Pullback) {
            let a = self.0 .0;
            (a.mean(), SpreadPullback::new(a.shape(), Spread::Mean))
        }
    }
}

rule_trait! {
    /// `a.max()`: `Call((&a,)).max()`.
    NaMax::max
}
rule_trait! {
    /// `a.min()`: `Call((&a,)).min()`.
    NaMin::min
}
rule_trait! {
    /// `a.amax()` (the largest absolute value): `Call((&a,)).amax()`.
    NaAmax::amax
}
rule_trait! {
    /// `a.amin()` (the smallest absolute value): `Call((&a,)).amin()`.
    NaAmin::amin
}

/// Pullback of `a.max()`, `a.min()`, `a.amax()` and `a.amin()`: the element chosen (the
/// first of equal ones, in nalgebra's column-major order) and the factor of `ȳ` in its
/// cotangent (`1`, or its sign for the absolute value; `0` at `0`, the kink's
/// subgradient); none for an empty matrix, whose value nalgebra gives as `0`.
pub struct PickPullback<T: Elem, R, C> {
    shape: (usize, usize),
    pick: Option<(usize, T)>,
    _types: crate::dense::Marker<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for PickPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = T;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: T, (da,): (&mut OMatrix<T, R, C>,)) {
        let mut da = dense(da, self.shape);
        if let Some((k, factor)) = self.pick {
            da[k] += dy * factor;
        }
    }
}

/// Which element an extremum picks: `better(candidate, best)` on the keys `key(aᵢ)`.
#[inline]
fn pick<T: Elem, R: Dim, C: Dim, S: Storage<T, R, C>>(
    a: &Matrix<T, R, C, S>,
    key: impl Fn(T) -> T,
    better: impl Fn(T, T) -> bool,
    absolute: bool,
) -> (T, PickPullback<T, R, C>) {
    let mut best: Option<(usize, T)> = None;
    for (k, &v) in a.iter().enumerate() {
        let kv = key(v);
        if best.is_none_or(|(_, b)| better(kv, b)) {
            best = Some((k, kv));
        }
    }
    let value = best.map_or(T::ZERO, |(_, b)| b);
    let pick = best.map(|(k, _)| {
        let v = linear(a, k);
        let factor = if !absolute || v > T::ZERO {
            T::ONE
        } else if v < T::ZERO {
            -T::ONE
        } else {
            T::ZERO
        };
        (k, factor)
    });
    (
        value,
        PickPullback {
            shape: a.shape(),
            pick,
            _types: PhantomData,
        },
    )
}

/// The `k`-th element of `a` in column-major order (any storage, strided views too).
#[inline]
fn linear<T: Elem, R: Dim, C: Dim, S: Storage<T, R, C>>(a: &Matrix<T, R, C, S>, k: usize) -> T {
    let rows = a.nrows();
    a[(k % rows, k / rows)]
}

/// The four extrema: each a [`pick`] by its key and its order.
macro_rules! extremum_rules {
    ($($Trait:ident :: $method:ident => $key:expr, $better:expr, $absolute:expr;)*) => {$(
        matrix_rule! {
            $Trait for (&Matrix) {
                type Output = T;
                type Pullback = PickPullback<T, R, C>;
                #[inline]
                fn $method(self) -> (T, Self::Pullback) {
                    pick(self.0 .0, $key, $better, $absolute)
                }
            }
        }
    )*};
}

extremum_rules! {
    NaMax::max => |v: T| v, |c: T, b: T| c > b, false;
    NaMin::min => |v: T| v, |c: T, b: T| c < b, false;
    NaAmax::amax => |v: T| v.abs(), |c: T, b: T| c > b, true;
    NaAmin::amin => |v: T| v.abs(), |c: T, b: T| c < b, true;
}

/// Pullback of `a.normalize()`: the unit vector `u = a/‖a‖` and `‖a‖`
/// (`ā += (ȳ − u ⟨u, ȳ⟩) / ‖a‖`).
pub struct NormalizePullback<T: Elem, R: Dim, C: Dim>
where
    DefaultAllocator: Allocator<R, C>,
{
    u: OMatrix<T, R, C>,
    norm: T,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for NormalizePullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da,): (&mut OMatrix<T, R, C>,)) {
        let Some(dy) = crate::dense::output(&dy, self.u.shape()) else {
            return;
        };
        let u = view(&self.u);
        let along = crate::dense::inner(u, dy);
        let scale = T::ONE / self.norm;
        let mut da = dense(da, self.u.shape());
        for ((d, &g), &ui) in da.iter_mut().zip(dy.iter()).zip(u.iter()) {
            *d += (g - ui * along) * scale;
        }
    }
}

matrix_rule! {
    NaNormalize for (&Matrix) {
        type Output = OMatrix<T, R, C>;
        type Pullback = NormalizePullback<T, R, C>;
        #[inline]
        fn normalize(self) -> (Self::Output, Self::Pullback) {
            let a = self.0 .0;
            let u = a.normalize();
            (u.clone(), NormalizePullback { u, norm: a.norm() })
        }
    }
}

matrix_rule! {
    NaUnitNewNormalize for (&Matrix) {
        type Output = nalgebra::Unit<OMatrix<T, R, C>>;
        type Pullback = NormalizePullback<T, R, C>;
        #[inline]
        fn unit_new_normalize(self) -> (Self::Output, Self::Pullback) {
            let a = self.0 .0;
            let u = a.normalize();
            (
                nalgebra::Unit::new_unchecked(u.clone()),
                NormalizePullback { u, norm: a.norm() },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{dmatrix, matrix};
    use crate::Elem;
    use mochi_core::testing::RuleTest;
    use mochi_core::{Call, Pullback};
    use nalgebra::{DMatrix, DVector, U1, U3};

    fn reductions<T: Elem>() {
        let a = dmatrix::<T>(3, 2, 0.4);
        RuleTest::new((a.clone(),), |x| x.0.sum(), |x| Call((&x.0,)).sum())
            .jvp(|_, t| t.0.sum())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        RuleTest::new((a.clone(),), |x| x.0.norm(), |x| Call((&x.0,)).norm())
            // d‖a‖ = ⟨a, ȧ⟩ / ‖a‖
            .jvp(|x, t| x.0.dot(&t.0) / x.0.norm())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        RuleTest::new(
            (a.clone(),),
            |x| x.0.norm_squared(),
            |x| Call((&x.0,)).norm_squared(),
        )
        .jvp(|x, t| x.0.dot(&t.0) * T::of_f64(2.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (a.clone(),),
            |x| x.0.magnitude(),
            |x| Call((&x.0,)).magnitude(),
        )
        .jvp(|x, t| x.0.dot(&t.0) / x.0.norm())
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (a.clone(),),
            |x| x.0.magnitude_squared(),
            |x| Call((&x.0,)).magnitude_squared(),
        )
        .jvp(|x, t| x.0.dot(&t.0) * T::of_f64(2.0))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new((a.clone(),), |x| x.0.mean(), |x| Call((&x.0,)).mean())
            .jvp(|_, t| t.0.mean())
            .tolerance(T::RTOL, T::ATOL)
            .run();
        RuleTest::new(
            (dmatrix::<T>(3, 3, 0.1),),
            |x| x.0.trace(),
            |x| Call((&x.0,)).trace(),
        )
        .jvp(|_, t| t.0.trace())
        .tolerance(T::RTOL, T::ATOL)
        .run();
        // Distinct elements away from ties and from zero: the extrema are smooth there.
        let e = DMatrix::<T>::from_fn(3, 2, |i, j| {
            T::of_f64(0.3 + 0.45 * (i + 3 * j) as f64 - 1.1)
        });
        for (absolute, largest) in [(false, true), (false, false), (true, true), (true, false)] {
            let better = move |a: T, b: T| if largest { a > b } else { a < b };
            let value = move |m: &DMatrix<T>| {
                let keys = m.iter().map(|v| if absolute { v.abs() } else { *v });
                keys.fold(None, |best: Option<T>, k| match best {
                    Some(b) if !better(k, b) => Some(b),
                    _ => Some(k),
                })
                .unwrap()
            };
            let rule = move |m: &DMatrix<T>| match (absolute, largest) {
                (false, true) => Call((m,)).max(),
                (false, false) => Call((m,)).min(),
                (true, true) => Call((m,)).amax(),
                _ => Call((m,)).amin(),
            };
            RuleTest::new((e.clone(),), move |x| value(&x.0), move |x| rule(&x.0))
                .jvp(move |x, t| pick_of(&x.0, &t.0, better, absolute))
                .tolerance(T::RTOL, T::ATOL)
                .run();
        }
        RuleTest::new(
            (a.clone(),),
            |x| nalgebra::Unit::new_normalize(x.0.clone()),
            |x| Call((&x.0,)).unit_new_normalize(),
        )
        .jvp(|x, t| {
            let u = x.0.normalize();
            (&t.0 - &u * u.dot(&t.0)) / x.0.norm()
        })
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new((a,), |x| x.0.normalize(), |x| Call((&x.0,)).normalize())
            // d(a/‖a‖) = (ȧ − u⟨u, ȧ⟩)/‖a‖
            .jvp(|x, t| {
                let u = x.0.normalize();
                (&t.0 - &u * u.dot(&t.0)) / x.0.norm()
            })
            .tolerance(T::RTOL, T::ATOL)
            .run();
    }

    /// `ṫ` at the element an extremum picks, times its sign for an absolute one.
    fn pick_of<T: Elem>(
        m: &DMatrix<T>,
        t: &DMatrix<T>,
        better: impl Fn(T, T) -> bool,
        absolute: bool,
    ) -> T {
        let key = |v: T| if absolute { v.abs() } else { v };
        let mut k = 0;
        for i in 1..m.len() {
            if better(key(m[i]), key(m[k])) {
                k = i;
            }
        }
        if absolute && m[k] < T::ZERO {
            -t[k]
        } else {
            t[k]
        }
    }

    #[test]
    fn reductions_f64_and_f32() {
        reductions::<f64>();
        reductions::<f32>();
    }

    #[test]
    fn static_reductions_allocate_nothing_in_the_pullback() {
        let v = matrix::<f64, _, _>(U3, U1, 0.2);
        RuleTest::new((v,), |x| x.0.norm(), |x| Call((&x.0,)).norm())
            .expect_no_alloc()
            .run();
        RuleTest::new((v,), |x| x.0.sum(), |x| Call((&x.0,)).sum())
            .expect_no_alloc()
            .run();
    }

    #[test]
    fn the_norm_at_zero_has_the_subgradient_zero() {
        let z = DVector::<f64>::zeros(3);
        let (y, pb) = Call((&z,)).norm();
        let mut dz = DVector::zeros(3);
        pb.pullback(1.0, (&mut dz,));
        assert_eq!((y, dz), (0.0, DVector::zeros(3)));
    }
}
