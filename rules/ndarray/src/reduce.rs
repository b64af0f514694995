//! Reductions: `sum`, `sum_axis`, `mean`, `mean_axis`, `var`, `var_axis`, `std`,
//! `std_axis`, `product`, `product_axis`, and the Euclidean norm [`norm_l2`].
//!
//! The cotangent of a reduction is the output cotangent spread back over the
//! reduced elements: a fill for `sum`, a broadcast along the axis for `sum_axis`.
//! The axis forms of `var`, `std` and `product` do per lane along the axis what the
//! whole-array rules do for the array.

use crate::cotangent::{add_fill, add_owned, add_scaled, dense, form, view, Form};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, NoTangent, Pullback};
use ndarray::{Array, ArrayBase, Axis, Data, Dimension, RemoveAxis, Zip};

rule_trait! {
    /// `x.sum()`: `Call((&x,)).sum()`.
    NdSum::sum
}
rule_trait! {
    /// `x.sum_axis(axis)`: `Call((&x, &axis)).sum_axis()`.
    NdSumAxis::sum_axis
}
rule_trait! {
    /// `x.mean()` (`None` for an empty array): `Call((&x,)).mean()`.
    NdMean::mean
}
rule_trait! {
    /// `x.mean_axis(axis)` (`None` when the axis is empty): `Call((&x, &axis)).mean_axis()`.
    NdMeanAxis::mean_axis
}
rule_trait! {
    /// `x.var(ddof)`: `Call((&x, &ddof)).var()`.
    NdVar::var
}
rule_trait! {
    /// `x.std(ddof)`: `Call((&x, &ddof)).std()`.
    NdStd::std
}
rule_trait! {
    /// `x.var_axis(axis, ddof)`: `Call((&x, &axis, &ddof)).var_axis()`.
    NdVarAxis::var_axis
}
rule_trait! {
    /// `x.std_axis(axis, ddof)`: `Call((&x, &axis, &ddof)).std_axis()`.
    NdStdAxis::std_axis
}
rule_trait! {
    /// `x.product()`: `Call((&x,)).product()`.
    NdProduct::product
}
rule_trait! {
    /// `x.product_axis(axis)`: `Call((&x, &axis)).product_axis()`.
    NdProductAxis::product_axis
}
rule_trait! {
    /// `norm_l2(&x)` as a method: `Call((&x,)).norm_l2()`.
    NdNormL2::norm_l2
}

/// Pullback of `sum` and `mean`: `x̄ += scale · ȳ` in every element.
pub struct FillPullback<T, D> {
    dim: D,
    scale: T,
}

impl<T: Elem, D: Dimension> Pullback for FillPullback<T, D> {
    type Output = T;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: T, (dx,): (&mut Array<T, D>,)) {
        add_fill(dx, &self.dim, dy * self.scale);
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdSum for Call<(&ArrayBase<S, D>,)> {
    type Output = T;
    type Pullback = FillPullback<T, D>;
    #[inline]
    fn sum(self) -> (T, Self::Pullback) {
        let (x,) = self.0;
        (
            x.sum(),
            FillPullback {
                dim: x.raw_dim(),
                scale: T::one(),
            },
        )
    }
}

/// Pullback of `mean`: like `sum`'s, scaled by `1/n`; nothing when the mean was `None`.
pub struct MeanPullback<T, D>(FillPullback<T, D>);

impl<T: Elem, D: Dimension> Pullback for MeanPullback<T, D> {
    type Output = Option<T>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: Option<T>, args: (&mut Array<T, D>,)) {
        if let Some(dy) = dy {
            self.0.pullback(dy, args);
        }
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdMean for Call<(&ArrayBase<S, D>,)> {
    type Output = Option<T>;
    type Pullback = MeanPullback<T, D>;
    fn mean(self) -> (Option<T>, Self::Pullback) {
        let (x,) = self.0;
        let n = T::of_usize(x.len());
        (
            x.mean(),
            MeanPullback(FillPullback {
                dim: x.raw_dim(),
                scale: T::one() / n,
            }),
        )
    }
}

/// Pullback of `var` and `std`: `x̄ += scale · ȳ · (x − mean)`, and `ddof̄ += ȳ · ∂y/∂ddof`.
pub struct SpreadPullback<T, D> {
    centered: Array<T, D>,
    scale: T,
    by_ddof: T,
}

impl<T: Elem, D: Dimension> Pullback for SpreadPullback<T, D> {
    type Output = T;
    type Args = (Array<T, D>, T);
    #[track_caller]
    fn pullback(self, dy: T, (dx, dddof): (&mut Array<T, D>, &mut T)) {
        let dim = self.centered.raw_dim();
        add_scaled(dx, &dim, dy * self.scale, self.centered.view());
        *dddof += dy * self.by_ddof;
    }
}

/// The deviations from the mean and the divisor `n − ddof` (ndarray's conditions on
/// `ddof`, with its messages).
#[track_caller]
fn spread<T: Elem, S: Data<Elem = T>, D: Dimension>(
    x: &ArrayBase<S, D>,
    ddof: T,
) -> (Array<T, D>, T) {
    let n = T::of_usize(x.len());
    assert!(ddof >= T::ZERO, "`ddof` must not be negative, got {ddof:?}");
    assert!(
        ddof <= n,
        "`ddof` must not be greater than the number of elements ({n:?}), got {ddof:?}"
    );
    let mean = if x.is_empty() { T::ZERO } else { x.sum() / n };
    (x.mapv(|v| v - mean), n - ddof)
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdVar for Call<(&ArrayBase<S, D>, &T)> {
    type Output = T;
    type Pullback = SpreadPullback<T, D>;
    /// `∂var/∂xᵢ = 2 (xᵢ − mean) / (n − ddof)` (the mean's own derivative cancels:
    /// the deviations sum to zero).
    #[track_caller]
    fn var(self) -> (T, Self::Pullback) {
        let (x, &ddof) = self.0;
        let (centered, dof) = spread(x, ddof);
        let two = T::one() + T::one();
        // The value as ndarray computes it (bit for bit the primal's).
        let var = x.var(ddof);
        let by_ddof = var / dof;
        (
            var,
            SpreadPullback {
                centered,
                scale: two / dof,
                by_ddof,
            },
        )
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdStd for Call<(&ArrayBase<S, D>, &T)> {
    type Output = T;
    type Pullback = SpreadPullback<T, D>;
    /// `∂std/∂xᵢ = (xᵢ − mean) / ((n − ddof) · std)`; where every element is equal
    /// (`std = 0`, not differentiable) the derivative taken is 0, as for `norm_l2` at 0.
    #[track_caller]
    fn std(self) -> (T, Self::Pullback) {
        let (x, &ddof) = self.0;
        let (centered, dof) = spread(x, ddof);
        let std = x.std(ddof);
        let scale = if std > T::ZERO {
            T::one() / (dof * std)
        } else {
            T::ZERO
        };
        let by_ddof = std / (dof + dof);
        (
            std,
            SpreadPullback {
                centered,
                scale,
                by_ddof,
            },
        )
    }
}

/// Pullback of `var_axis` and `std_axis`: per lane along the axis, what
/// [`SpreadPullback`] does for the whole array — `x̄ += scale · ȳ · (x − mean)` and
/// `ddof̄ += ȳ · ∂y/∂ddof`.
pub struct SpreadAxisPullback<T, D: Dimension> {
    centered: Array<T, D>,
    axis: Axis,
    /// Per lane: the factor `scale` of the deviations and `∂y/∂ddof`.
    lanes: Array<(T, T), D::Smaller>,
}

impl<T: Elem, D: RemoveAxis> Pullback for SpreadAxisPullback<T, D> {
    type Output = Array<T, D::Smaller>;
    type Args = (Array<T, D>, NoTangent, T);
    #[track_caller]
    fn pullback(
        self,
        dy: Self::Output,
        (dx, _, dddof): (&mut Array<T, D>, &mut NoTangent, &mut T),
    ) {
        let SpreadAxisPullback {
            mut centered,
            axis,
            lanes,
        } = self;
        // A broadcast-form `ȳ` is read through a view (no expansion).
        let Some(dy) = view(&dy, &lanes.raw_dim()) else {
            return;
        };
        *dddof += Zip::from(&dy)
            .and(&lanes)
            .fold(T::ZERO, |acc, &g, &(_, by_ddof)| acc + g * by_ddof);
        // The deviations, scaled in place, are `x̄`'s contribution: adopted or added.
        Zip::from(centered.lanes_mut(axis))
            .and(&dy)
            .and(&lanes)
            .for_each(|mut lane, &g, &(scale, _)| {
                let f = g * scale;
                lane.map_inplace(|c| *c *= f);
            });
        let dim = centered.raw_dim();
        add_owned(dx, &dim, centered);
    }
}

/// The deviations from the mean along `axis` and the divisor `n − ddof` (`ddof` was
/// checked by ndarray's own method, which computed the value).
fn spread_axis<T: Elem, S: Data<Elem = T>, D: RemoveAxis>(
    x: &ArrayBase<S, D>,
    axis: Axis,
    ddof: T,
) -> (Array<T, D>, T) {
    let n = T::of_usize(x.len_of(axis));
    let mut centered = x.to_owned();
    if let Some(mean) = x.mean_axis(axis) {
        centered.zip_mut_with(&mean.insert_axis(axis), |c, &m| *c -= m);
    }
    (centered, n - ddof)
}

impl<T: Elem, S: Data<Elem = T>, D: RemoveAxis> NdVarAxis for Call<(&ArrayBase<S, D>, &Axis, &T)> {
    type Output = Array<T, D::Smaller>;
    type Pullback = SpreadAxisPullback<T, D>;
    /// `∂varⱼ/∂xᵢⱼ = 2 (xᵢⱼ − meanⱼ) / (n − ddof)`, `∂varⱼ/∂ddof = varⱼ / (n − ddof)`.
    #[track_caller]
    fn var_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis, &ddof) = self.0;
        // The value as ndarray computes it (and its panics).
        let y = x.var_axis(axis, ddof);
        let (centered, dof) = spread_axis(x, axis, ddof);
        let scale = (T::one() + T::one()) / dof;
        let lanes = y.mapv(|var| (scale, var / dof));
        (
            y,
            SpreadAxisPullback {
                centered,
                axis,
                lanes,
            },
        )
    }
}

impl<T: Elem, S: Data<Elem = T>, D: RemoveAxis> NdStdAxis for Call<(&ArrayBase<S, D>, &Axis, &T)> {
    type Output = Array<T, D::Smaller>;
    type Pullback = SpreadAxisPullback<T, D>;
    /// `∂stdⱼ/∂xᵢⱼ = (xᵢⱼ − meanⱼ) / ((n − ddof) · stdⱼ)` (0 in a lane whose elements
    /// are all equal, as for `std`), `∂stdⱼ/∂ddof = stdⱼ / (2 (n − ddof))`.
    #[track_caller]
    fn std_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis, &ddof) = self.0;
        let y = x.std_axis(axis, ddof);
        let (centered, dof) = spread_axis(x, axis, ddof);
        let lanes = y.mapv(|std| {
            let scale = if std > T::ZERO {
                T::one() / (dof * std)
            } else {
                T::ZERO
            };
            (scale, std / (dof + dof))
        });
        (
            y,
            SpreadAxisPullback {
                centered,
                axis,
                lanes,
            },
        )
    }
}

/// Pullback of `sum_axis` and `mean_axis`: `x̄ += scale · ȳ` broadcast along the axis.
pub struct AxisPullback<T, D> {
    dim: D,
    axis: Axis,
    scale: T,
}

impl<T: Elem, D: RemoveAxis> AxisPullback<T, D> {
    #[track_caller]
    fn run(self, dy: Array<T, D::Smaller>, dx: &mut Array<T, D>) {
        let out = self.dim.remove_axis(self.axis);
        if form(&dy, &out) == Form::Zero {
            return;
        }
        // `ȳ` with the reduced axis put back as length 1 is the broadcast form of
        // `x̄` (also when `ȳ` is itself a broadcast form): no copies along the axis.
        let mut spread = dy
            .insert_axis(self.axis)
            .into_dimensionality::<D>()
            .expect("inserting the reduced axis restores the rank");
        if self.scale != T::one() {
            let scale = self.scale;
            spread.map_inplace(|v| *v *= scale);
        }
        add_owned(dx, &self.dim, spread);
    }
}

/// [`AxisPullback`] for `sum_axis` (argument cotangents: the array, the axis).
pub struct SumAxisPullback<T, D>(AxisPullback<T, D>);

impl<T: Elem, D: RemoveAxis> Pullback for SumAxisPullback<T, D> {
    type Output = Array<T, D::Smaller>;
    type Args = (Array<T, D>, mochi_core::NoTangent);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (dx, _): (&mut Array<T, D>, &mut mochi_core::NoTangent)) {
        self.0.run(dy, dx)
    }
}

impl<T: Elem, S: Data<Elem = T>, D: RemoveAxis> NdSumAxis for Call<(&ArrayBase<S, D>, &Axis)> {
    type Output = Array<T, D::Smaller>;
    type Pullback = SumAxisPullback<T, D>;
    #[track_caller]
    fn sum_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis) = self.0;
        let y = x.sum_axis(axis);
        (
            y,
            SumAxisPullback(AxisPullback {
                dim: x.raw_dim(),
                axis,
                scale: T::one(),
            }),
        )
    }
}

/// [`AxisPullback`] for `mean_axis`; nothing when the mean was `None`.
pub struct MeanAxisPullback<T, D>(AxisPullback<T, D>);

impl<T: Elem, D: RemoveAxis> Pullback for MeanAxisPullback<T, D> {
    type Output = Option<Array<T, D::Smaller>>;
    type Args = (Array<T, D>, mochi_core::NoTangent);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (dx, _): (&mut Array<T, D>, &mut mochi_core::NoTangent)) {
        if let Some(dy) = dy {
            self.0.run(dy, dx)
        }
    }
}

impl<T: Elem, S: Data<Elem = T>, D: RemoveAxis> NdMeanAxis for Call<(&ArrayBase<S, D>, &Axis)> {
    type Output = Option<Array<T, D::Smaller>>;
    type Pullback = MeanAxisPullback<T, D>;
    #[track_caller]
    fn mean_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis) = self.0;
        let y = x.mean_axis(axis);
        let n = T::of_usize(x.len_of(axis));
        (
            y,
            MeanAxisPullback(AxisPullback {
                dim: x.raw_dim(),
                axis,
                scale: T::one() / n,
            }),
        )
    }
}

/// Pullback of `product`: a copy of the input, the product, and how many zeros it
/// holds — `∂(∏x)/∂xᵢ = ∏_{j≠i} xⱼ` without dividing by zero.
pub struct ProductPullback<T, D> {
    x: Array<T, D>,
    /// The product of the non-zero elements.
    nonzero_product: T,
    zeros: usize,
}

impl<T: Elem, D: Dimension> Pullback for ProductPullback<T, D> {
    type Output = T;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: T, (dx,): (&mut Array<T, D>,)) {
        let dim = self.x.raw_dim();
        let p = self.nonzero_product;
        match self.zeros {
            // ∂/∂xᵢ = p / xᵢ
            0 => {
                let dx = dense(dx, &dim);
                dx.zip_mut_with(&self.x, |d, &x| *d += dy * p / x);
            }
            // only the zero element has a non-zero partial: the product of the others
            1 => {
                let dx = dense(dx, &dim);
                dx.zip_mut_with(&self.x, |d, &x| {
                    if x == T::ZERO {
                        *d += dy * p
                    }
                });
            }
            // two or more zeros: every partial derivative is zero
            _ => {
                dense(dx, &dim);
            }
        }
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdProduct for Call<(&ArrayBase<S, D>,)> {
    type Output = T;
    type Pullback = ProductPullback<T, D>;
    fn product(self) -> (T, Self::Pullback) {
        let (x,) = self.0;
        let (mut nonzero_product, mut zeros) = (T::one(), 0usize);
        for &v in x.iter() {
            if v == T::ZERO {
                zeros += 1;
            } else {
                nonzero_product *= v;
            }
        }
        let y = if zeros > 0 { T::ZERO } else { x.product() };
        (
            y,
            ProductPullback {
                x: x.to_owned(),
                nonzero_product,
                zeros,
            },
        )
    }
}

/// Pullback of `product_axis`: a copy of the input and, per lane along the axis, the
/// product of its non-zero elements and how many zeros it holds — for each lane what
/// [`ProductPullback`] does, without dividing by zero.
pub struct ProductAxisPullback<T, D: Dimension> {
    x: Array<T, D>,
    axis: Axis,
    lanes: Array<(T, usize), D::Smaller>,
}

impl<T: Elem, D: RemoveAxis> Pullback for ProductAxisPullback<T, D> {
    type Output = Array<T, D::Smaller>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        let dim = self.x.raw_dim();
        // A broadcast-form `ȳ` is read through a view (no expansion).
        let Some(dy) = view(&dy, &self.lanes.raw_dim()) else {
            return;
        };
        let dx = dense(dx, &dim);
        Zip::from(dx.lanes_mut(self.axis))
            .and(self.x.lanes(self.axis))
            .and(&dy)
            .and(&self.lanes)
            .for_each(|mut d, x, &g, &(p, zeros)| match zeros {
                // ∂/∂xᵢ = p / xᵢ
                0 => d.zip_mut_with(&x, |d, &x| *d += g * p / x),
                // only the zero element has a non-zero partial: the product of the others
                1 => d.zip_mut_with(&x, |d, &x| {
                    if x == T::ZERO {
                        *d += g * p
                    }
                }),
                // two or more zeros: every partial derivative is zero
                _ => {}
            });
    }
}

impl<T: Elem, S: Data<Elem = T>, D: RemoveAxis> NdProductAxis for Call<(&ArrayBase<S, D>, &Axis)> {
    type Output = Array<T, D::Smaller>;
    type Pullback = ProductAxisPullback<T, D>;
    #[track_caller]
    fn product_axis(self) -> (Self::Output, Self::Pullback) {
        let (x, &axis) = self.0;
        // The value as ndarray computes it (bit for bit the primal's).
        let y = x.product_axis(axis);
        let lanes = Zip::from(x.lanes(axis)).map_collect(|lane| {
            lane.fold((T::one(), 0usize), |(p, zeros), &v| {
                if v == T::ZERO {
                    (p, zeros + 1)
                } else {
                    (p * v, zeros)
                }
            })
        });
        (
            y,
            ProductAxisPullback {
                x: x.to_owned(),
                axis,
                lanes,
            },
        )
    }
}

/// The Euclidean norm `‖x‖₂ = √(Σ xᵢ²)` of all elements.
///
/// ```
/// let x = ndarray::array![3.0, 4.0];
/// assert_eq!(mochi_rules_ndarray::norm_l2(&x), 5.0);
/// ```
pub fn norm_l2<T: Elem, S: Data<Elem = T>, D: Dimension>(x: &ArrayBase<S, D>) -> T {
    x.fold(T::ZERO, |acc, &v| acc + v * v).sqrt()
}

/// The rule of [`norm_l2`](fn@norm_l2): `x̄ += ȳ · x / ‖x‖` (zero at `x = 0`, the
/// minimum-norm subgradient).
pub mod norm_l2 {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::norm_l2 as __twin;
    use super::*;

    /// Pullback of `norm_l2`: a copy of the input and the norm.
    pub struct NormL2Pullback<T, D> {
        x: Array<T, D>,
        norm: T,
    }

    impl<T: Elem, D: Dimension> Pullback for NormL2Pullback<T, D> {
        type Output = T;
        type Args = (Array<T, D>,);
        #[track_caller]
        fn pullback(self, dy: T, (dx,): (&mut Array<T, D>,)) {
            let dim = self.x.raw_dim();
            let scale = if self.norm > T::ZERO {
                dy / self.norm
            } else {
                T::ZERO
            };
            add_scaled(dx, &dim, scale, self.x.view());
        }
    }

    /// `norm_l2(x)` with its pullback.
    pub fn rrule<T: Elem, S: Data<Elem = T>, D: Dimension>(
        x: &ArrayBase<S, D>,
    ) -> (T, NormL2Pullback<T, D>) {
        let norm = super::norm_l2(x);
        (
            norm,
            NormL2Pullback {
                x: x.to_owned(),
                norm,
            },
        )
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdNormL2 for Call<(&ArrayBase<S, D>,)> {
    type Output = T;
    type Pullback = norm_l2::NormL2Pullback<T, D>;
    fn norm_l2(self) -> (T, Self::Pullback) {
        norm_l2::rrule(self.0 .0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, random, TestElem};
    use mochi_core::testing::RuleTest;
    use ndarray::{Ix1, Ix2, Ix3, IxDyn};

    fn sums<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 3), Ix2(3, 4)] {
            for (_, x) in layouts::<T, _>(shape, 20) {
                // d(Σx)/dxᵢ = 1
                RuleTest::new((x.clone(),), |a| a.0.sum(), |a| Call((&a.0,)).sum())
                    .forward(|a| a.0.sum())
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                RuleTest::new((x.clone(),), |a| a.0.mean(), |a| Call((&a.0,)).mean())
                    .forward(|a| a.0.mean())
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                if x.len() > 1 {
                    // Inside (0, n): the finite differences move `ddof` too.
                    for ddof in [0.5, 1.0] {
                        let ddof = T::of_f64(ddof);
                        RuleTest::new(
                            (x.clone(), ddof),
                            |a| a.0.var(a.1),
                            |a| Call((&a.0, &a.1)).var(),
                        )
                        .forward(|a| a.0.var(a.1))
                        .tolerance(T::RTOL, T::ATOL)
                        .run();
                        RuleTest::new(
                            (x.clone(), ddof),
                            |a| a.0.std(a.1),
                            |a| Call((&a.0, &a.1)).std(),
                        )
                        .forward(|a| a.0.std(a.1))
                        .tolerance(T::RTOL, T::ATOL)
                        .run();
                    }
                }
                for axis in 0..2 {
                    RuleTest::new(
                        (x.clone(), axis),
                        |a| a.0.sum_axis(Axis(a.1)),
                        |a| Call((&a.0, &Axis(a.1))).sum_axis(),
                    )
                    .forward(|a| a.0.sum_axis(Axis(a.1)))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                    RuleTest::new(
                        (x.clone(), axis),
                        |a| a.0.mean_axis(Axis(a.1)),
                        |a| Call((&a.0, &Axis(a.1))).mean_axis(),
                    )
                    .forward(|a| a.0.mean_axis(Axis(a.1)))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                }
            }
        }
    }

    #[test]
    fn sum_mean_and_their_axis_forms() {
        sums::<f64>();
        sums::<f32>();
    }

    #[test]
    fn reductions_of_dynamic_rank() {
        let x = random::<f64, _>(IxDyn(&[2, 3, 2]), 21);
        RuleTest::new((x.clone(),), |a| a.0.sum(), |a| Call((&a.0,)).sum())
            .forward(|a| a.0.sum())
            .run();
        RuleTest::new(
            (x, 1usize),
            |a| a.0.sum_axis(Axis(a.1)),
            |a| Call((&a.0, &Axis(a.1))).sum_axis(),
        )
        .forward(|a| a.0.sum_axis(Axis(a.1)))
        .run();
        let x3 = random::<f64, _>(Ix3(2, 1, 3), 22);
        RuleTest::new((x3,), |a| a.0.mean(), |a| Call((&a.0,)).mean())
            .forward(|a| a.0.mean())
            .run();
    }

    fn spreads_along_an_axis<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 3), Ix2(3, 4)] {
            for (_, x) in layouts::<T, _>(shape, 27) {
                for axis in 0..2 {
                    if x.len_of(Axis(axis)) < 2 {
                        continue;
                    }
                    // Inside (0, n): the finite differences move `ddof` too.
                    for ddof in [0.5, 1.0] {
                        let ddof = T::of_f64(ddof);
                        RuleTest::new(
                            (x.clone(), axis, ddof),
                            |a| a.0.var_axis(Axis(a.1), a.2),
                            |a| Call((&a.0, &Axis(a.1), &a.2)).var_axis(),
                        )
                        .forward(|a| a.0.var_axis(Axis(a.1), a.2))
                        .tolerance(T::RTOL, T::ATOL)
                        .expect_no_alloc()
                        .run();
                        RuleTest::new(
                            (x.clone(), axis, ddof),
                            |a| a.0.std_axis(Axis(a.1), a.2),
                            |a| Call((&a.0, &Axis(a.1), &a.2)).std_axis(),
                        )
                        .forward(|a| a.0.std_axis(Axis(a.1), a.2))
                        .tolerance(T::RTOL, T::ATOL)
                        .expect_no_alloc()
                        .run();
                    }
                }
            }
        }
        // rank 3, every axis
        let x = random::<T, _>(Ix3(2, 3, 4), 28);
        for axis in 0..3 {
            RuleTest::new(
                (x.clone(), axis, T::of_f64(1.0)),
                |a| a.0.std_axis(Axis(a.1), a.2),
                |a| Call((&a.0, &Axis(a.1), &a.2)).std_axis(),
            )
            .forward(|a| a.0.std_axis(Axis(a.1), a.2))
            .tolerance(T::RTOL, T::ATOL)
            .run();
            RuleTest::new(
                (x.clone(), axis, T::of_f64(0.5)),
                |a| a.0.var_axis(Axis(a.1), a.2),
                |a| Call((&a.0, &Axis(a.1), &a.2)).var_axis(),
            )
            .forward(|a| a.0.var_axis(Axis(a.1), a.2))
            .tolerance(T::RTOL, T::ATOL)
            .run();
        }
    }

    #[test]
    fn var_and_std_along_an_axis() {
        spreads_along_an_axis::<f64>();
        spreads_along_an_axis::<f32>();
    }

    #[test]
    fn std_axis_of_a_constant_lane_has_a_zero_gradient() {
        let x = ndarray::array![[1.0, 2.0], [1.0, 5.0]];
        let (y, pb) = Call((&x, &Axis(0), &0.0)).std_axis();
        assert_eq!(y, x.std_axis(Axis(0), 0.0));
        let (mut dx, mut dddof) = (Array::zeros((0, 0)), 0.0);
        pb.pullback(
            ndarray::array![1.0, 1.0],
            (&mut dx, &mut NoTangent, &mut dddof),
        );
        // lane 0 is constant (std 0): no gradient; lane 1: (x − mean)/(n·std) = ∓½
        assert_eq!(dx, ndarray::array![[0.0, -0.5], [0.0, 0.5]]);
        // ∂std/∂ddof = std/(2 (n − ddof)) = 1.5/4 in lane 1, 0 in lane 0
        assert_eq!(dddof, 0.375);
    }

    fn products_along_an_axis<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 3), Ix2(3, 4)] {
            for (_, x) in layouts::<T, _>(shape, 29) {
                for axis in 0..2 {
                    // d(∏ⱼ xᵢⱼ)/dxᵢₖ = ∏_{j≠k} xᵢⱼ
                    RuleTest::new(
                        (x.clone(), axis),
                        |a| a.0.product_axis(Axis(a.1)),
                        |a| Call((&a.0, &Axis(a.1))).product_axis(),
                    )
                    .forward(|a| a.0.product_axis(Axis(a.1)))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                }
            }
        }
        // lanes with no zero, one zero and two zeros, in every layout, along both axes
        for (_, mut x) in layouts::<T, _>(Ix2(3, 4), 30) {
            x[[1, 2]] = T::ZERO;
            x[[2, 0]] = T::ZERO;
            x[[2, 3]] = T::ZERO;
            for axis in 0..2 {
                RuleTest::new(
                    (x.clone(), axis),
                    |a| a.0.product_axis(Axis(a.1)),
                    |a| Call((&a.0, &Axis(a.1))).product_axis(),
                )
                .forward(|a| a.0.product_axis(Axis(a.1)))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
            }
        }
        let x = random::<T, _>(Ix3(2, 3, 2), 31);
        for axis in 0..3 {
            RuleTest::new(
                (x.clone(), axis),
                |a| a.0.product_axis(Axis(a.1)),
                |a| Call((&a.0, &Axis(a.1))).product_axis(),
            )
            .forward(|a| a.0.product_axis(Axis(a.1)))
            .tolerance(T::RTOL, T::ATOL)
            .run();
        }
    }

    #[test]
    fn product_axis_with_and_without_zeros() {
        products_along_an_axis::<f64>();
        products_along_an_axis::<f32>();
    }

    #[test]
    fn product_axis_gradient_at_zeros() {
        // row 0: no zero; row 1: one zero; row 2: two zeros
        let x = ndarray::array![[2.0, 3.0, 4.0], [2.0, 0.0, 5.0], [0.0, 7.0, 0.0]];
        let (y, pb) = Call((&x.t(), &Axis(0))).product_axis();
        assert_eq!(y, ndarray::array![24.0, 0.0, 0.0]);
        let mut dx = Array::zeros((0, 0));
        pb.pullback(ndarray::array![1.0, 1.0, 1.0], (&mut dx, &mut NoTangent));
        // the cotangent of the transposed view: lane i is column i
        let expected = ndarray::array![[12.0, 8.0, 6.0], [0.0, 10.0, 0.0], [0.0, 0.0, 0.0]];
        assert_eq!(dx, expected.t());
    }

    fn products<T: TestElem>() {
        for (_, x) in layouts::<T, _>(Ix2(2, 3), 23) {
            // d(∏x)/dxᵢ = ∏_{j≠i} xⱼ
            RuleTest::new((x,), |a| a.0.product(), |a| Call((&a.0,)).product())
                .forward(|a| a.0.product())
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
        }
        let mut one_zero = random::<T, _>(Ix1(4), 24);
        one_zero[2] = T::ZERO;
        RuleTest::new(
            (one_zero.clone(),),
            |a| a.0.product(),
            |a| Call((&a.0,)).product(),
        )
        .forward(|a| a.0.product())
        .tolerance(T::RTOL, T::ATOL)
        .run();
        one_zero[0] = T::ZERO;
        RuleTest::new((one_zero,), |a| a.0.product(), |a| Call((&a.0,)).product())
            .forward(|a| a.0.product())
            .tolerance(T::RTOL, T::ATOL)
            .run();
    }

    #[test]
    fn product_with_and_without_zeros() {
        products::<f64>();
        products::<f32>();
    }

    #[test]
    fn product_gradient_at_a_single_zero_is_the_product_of_the_others() {
        let x = ndarray::array![2.0, 0.0, 3.0];
        let (y, pb) = Call((&x,)).product();
        let mut dx = Array::zeros(0);
        pb.pullback(1.0, (&mut dx,));
        // ∂/∂x₁ = 2·3, the others vanish with the zero factor
        assert_eq!((y, dx), (0.0, ndarray::array![0.0, 6.0, 0.0]));
    }

    fn norms<T: TestElem>() {
        for (_, x) in layouts::<T, _>(Ix2(3, 2), 25) {
            // d‖x‖/dx = x/‖x‖
            RuleTest::new((x,), |a| crate::norm_l2(&a.0), |a| norm_l2::rrule(&a.0))
                .forward(|a| crate::norm_l2(&a.0))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
        }
        let x = random::<T, _>(Ix1(1), 26);
        RuleTest::new((x,), |a| crate::norm_l2(&a.0), |a| Call((&a.0,)).norm_l2())
            .forward(|a| crate::norm_l2(&a.0))
            .tolerance(T::RTOL, T::ATOL)
            .run();
    }

    #[test]
    fn euclidean_norm() {
        norms::<f64>();
        norms::<f32>();
    }
}
