//! Elementwise maths on float arrays — ndarray's `exp`, `ln`, `sin`, `sqrt`,
//! `pow2`, `powi`, `powf`, `log`, `clamp`, the rounding functions, … — and
//! `scaled_add` in value form.
//!
//! Each unary rule keeps one array for its pullback: the input when the derivative
//! is a cheap function of the input (`ln`: `1/x`), the output when it is a function of
//! the output (`exp`: `y`; `sqrt`: `1/(2y)`), and the derivative itself, computed in
//! the same pass as the value, when it costs as much as the value (`sin`: `cos x`).
//! Rules whose derivative is a constant keep nothing but the shape (`to_degrees`) or
//! nothing at all (`floor`, `signum`: 0; `fract`: 1); their kinks take the scalar
//! rules' subgradients (`rules/scalar/README.md`).

use crate::cotangent::{
    add_owned, add_unbroadcast, add_unbroadcast_zip, add_unbroadcast_zip2, dense, form,
    is_structural_zero, output, Form,
};
use crate::Elem;
use mochi_core::kit::{rule_trait, IdentityPullback, InactivePullback};
use mochi_core::{Call, NoTangent, Pullback};
use ndarray::{Array, ArrayBase, Data, Dimension, Zip};
use std::marker::PhantomData;

/// One elementwise function: its value and its derivative in terms of the saved
/// array (input or output).
pub trait UnaryKernel<T> {
    /// Whether the pullback keeps the output (`true`) or another array (`false`): the
    /// input, or for `sin` and `cos` the derivative itself.
    const SAVES_OUTPUT: bool;
    /// The derivative at an element, from the saved value there.
    fn derivative(saved: T) -> T;
}

/// Pullback of an elementwise function `K`: the saved input or output.
pub struct UnaryPullback<T, D, K> {
    saved: Array<T, D>,
    _k: PhantomData<K>,
}

impl<T: Elem, D: Dimension, K: UnaryKernel<T>> Pullback for UnaryPullback<T, D, K> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx,): (&mut Array<T, D>,)) {
        let dim = self.saved.raw_dim();
        let Some(mut dy) = output(dy, &dim) else {
            return;
        };
        if is_structural_zero(dx, &dim) {
            // Reuse ȳ's buffer: no allocation.
            dy.zip_mut_with(&self.saved, |y, &s| *y *= K::derivative(s));
            add_owned(dx, &dim, dy);
        } else {
            Zip::from(&mut *dx)
                .and(&dy)
                .and(&self.saved)
                .for_each(|d, &y, &s| *d += y * K::derivative(s));
        }
    }
}

macro_rules! unary {
    // One rule: its trait, its kernel, and the forward pass `|x| (value, saved)`.
    (@rule $(#[$doc:meta])* $Trait:ident, $Kernel:ident, $method:ident, $saves_output:expr,
        |$s:ident| $deriv:expr, |$x:ident| $forward:expr) => {
        rule_trait! {
            $(#[$doc])*
            $Trait::$method
        }

        #[doc = concat!("The kernel of `", stringify!($method), "`.")]
        pub struct $Kernel;

        impl<T: Elem> UnaryKernel<T> for $Kernel {
            const SAVES_OUTPUT: bool = $saves_output;
            #[inline(always)]
            fn derivative($s: T) -> T {
                $deriv
            }
        }

        impl<'a, T: Elem, S: Data<Elem = T>, D: Dimension> $Trait for Call<(&'a ArrayBase<S, D>,)> {
            type Output = Array<T, D>;
            type Pullback = UnaryPullback<T, D, $Kernel>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let ($x,) = self.0;
                let (y, saved) = $forward;
                (y, UnaryPullback { saved, _k: PhantomData })
            }
        }
    };
    // Rules that keep the input or the output.
    ($($(#[$doc:meta])* $Trait:ident, $Kernel:ident, $method:ident, $saves_output:expr, |$s:ident| $deriv:expr;)*) => {$(
        unary!(@rule $(#[$doc])* $Trait, $Kernel, $method, $saves_output, |$s| $deriv, |x| {
            let y = x.$method();
            let saved = if $saves_output { y.clone() } else { x.to_owned() };
            (y, saved)
        });
    )*};
}

fn c<T: Elem>(v: f64) -> T {
    T::of_f64(v)
}

unary! {
    /// `x.exp()` elementwise: `Call((&x,)).exp()`.
    NdExp, ExpKernel, exp, true, |y| y;
    /// `x.exp2()` elementwise.
    NdExp2, Exp2Kernel, exp2, true, |y| y * c::<T>(std::f64::consts::LN_2);
    /// `x.ln()` elementwise.
    NdLn, LnKernel, ln, false, |x| x.recip();
    /// `x.log2()` elementwise.
    NdLog2, Log2Kernel, log2, false, |x| (x * c::<T>(std::f64::consts::LN_2)).recip();
    /// `x.log10()` elementwise.
    NdLog10, Log10Kernel, log10, false, |x| (x * c::<T>(std::f64::consts::LN_10)).recip();
    /// `x.sqrt()` elementwise.
    NdSqrt, SqrtKernel, sqrt, true, |y| (y + y).recip();
    /// `x.cbrt()` elementwise.
    NdCbrt, CbrtKernel, cbrt, true, |y| (c::<T>(3.0) * y * y).recip();
    /// `x.tan()` elementwise.
    NdTan, TanKernel, tan, true, |y| T::one() + y * y;
    /// `x.recip()` elementwise.
    NdRecip, RecipKernel, recip, true, |y| -(y * y);
    /// `x.abs()` elementwise (derivative `sign x`, `0` at `0`).
    NdAbs, AbsKernel, abs, false, |x| if x > T::ZERO { T::one() } else if x < T::ZERO { -T::one() } else { T::ZERO };
    /// `x.pow2()` (squares) elementwise.
    NdPow2, Pow2Kernel, pow2, false, |x| x + x;
}

/// Elementwise functions whose derivative costs as much as the value (`sin`: `cos x`):
/// both come from one pass (`sin_cos`, one call where the two share their argument
/// reduction), and the pullback keeps the derivative, so the reverse sweep only
/// multiplies. Keeping the input instead cost a second transcendental per element in
/// the reverse sweep.
macro_rules! unary_beside {
    ($($(#[$doc:meta])* $Trait:ident, $Kernel:ident, $method:ident, |$v:ident| $both:expr;)*) => {$(
        // The saved array is the derivative, which `derivative` returns as it is.
        unary!(@rule $(#[$doc])* $Trait, $Kernel, $method, false, |d| d, |x| {
            let mut y = x.to_owned();
            let mut d = Array::from_elem(x.raw_dim(), T::ZERO);
            Zip::from(&mut y).and(&mut d).for_each(|y, d| {
                let $v = *y;
                let (value, derivative) = $both;
                *y = value;
                *d = derivative;
            });
            (y, d)
        });
    )*};
}

unary_beside! {
    /// `x.sin()` elementwise.
    NdSin, SinKernel, sin, |x| x.sin_cos();
    /// `x.cos()` elementwise.
    NdCos, CosKernel, cos, |x| { let (s, c) = x.sin_cos(); (c, -s) };
}

/// Piecewise-constant elementwise functions: the derivative is 0 everywhere, the jumps
/// included (the scalar rules' convention), so the pullback is zero-sized and adds
/// nothing (an untouched accumulator stays the structural zero).
macro_rules! piecewise_constant {
    ($($(#[$doc:meta])* $Trait:ident, $method:ident;)*) => {$(
        rule_trait! {
            $(#[$doc])*
            $Trait::$method
        }

        impl<T: Elem, S: Data<Elem = T>, D: Dimension> $Trait for Call<(&ArrayBase<S, D>,)> {
            type Output = Array<T, D>;
            type Pullback = InactivePullback<(Array<T, D>,), Array<T, D>>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (x,) = self.0;
                (x.$method(), InactivePullback::new())
            }
        }
    )*};
}

piecewise_constant! {
    /// `x.signum()` elementwise: derivative 0, also at the jump at 0.
    NdSignum, signum;
    /// `x.floor()` elementwise: derivative 0, also at the jumps (integers).
    NdFloor, floor;
    /// `x.ceil()` elementwise: derivative 0, also at the jumps (integers).
    NdCeil, ceil;
    /// `x.round()` elementwise: derivative 0, also at the jumps (half-integers).
    NdRound, round;
    /// `x.trunc()` elementwise: derivative 0, also at the jumps (nonzero integers).
    NdTrunc, trunc;
}

rule_trait! {
    /// `x.fract()` elementwise (`x − trunc x`): derivative 1, also at the jumps
    /// (integers), as for the continuous part it is; `x̄ += ȳ` (a zero-sized pullback).
    NdFract::fract
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdFract for Call<(&ArrayBase<S, D>,)> {
    type Output = Array<T, D>;
    type Pullback = IdentityPullback<Array<T, D>>;
    #[inline]
    fn fract(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (x.fract(), IdentityPullback::new())
    }
}

/// Pullback of a linear elementwise map `x ↦ c·x` (`to_degrees`, `to_radians`):
/// `x̄ += c·ȳ`; a broadcast-form `ȳ` stays one.
pub struct ScalePullback<T, D> {
    dim: D,
    scale: T,
}

impl<T: Elem, D: Dimension> Pullback for ScalePullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, mut dy: Array<T, D>, (dx,): (&mut Array<T, D>,)) {
        if form(&dy, &self.dim) == Form::Zero {
            return;
        }
        let scale = self.scale;
        dy.map_inplace(|v| *v *= scale);
        add_owned(dx, &self.dim, dy);
    }
}

macro_rules! linear {
    ($($(#[$doc:meta])* $Trait:ident, $method:ident;)*) => {$(
        rule_trait! {
            $(#[$doc])*
            $Trait::$method
        }

        impl<T: Elem, S: Data<Elem = T>, D: Dimension> $Trait for Call<(&ArrayBase<S, D>,)> {
            type Output = Array<T, D>;
            type Pullback = ScalePullback<T, D>;
            #[inline]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (x,) = self.0;
                // The factor as the element type computes it: `c·1`.
                let scale = T::one().$method();
                (x.$method(), ScalePullback { dim: x.raw_dim(), scale })
            }
        }
    )*};
}

linear! {
    /// `x.to_degrees()` elementwise: derivative `180/π`.
    NdToDegrees, to_degrees;
    /// `x.to_radians()` elementwise: derivative `π/180`.
    NdToRadians, to_radians;
}

rule_trait! {
    /// `x.powi(n)` elementwise: `Call((&x, &n)).powi()`.
    NdPowi::powi
}
rule_trait! {
    /// `x.powf(p)` elementwise with a scalar exponent: `Call((&x, &p)).powf()`.
    NdPowf::powf
}

/// Pullback of `powi(n)`: a copy of the input and `n`.
pub struct PowiPullback<T, D> {
    x: Array<T, D>,
    n: i32,
}

impl<T: Elem, D: Dimension> Pullback for PowiPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, NoTangent);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx, _): (&mut Array<T, D>, &mut NoTangent)) {
        let dim = self.x.raw_dim();
        let Some(dy) = output(dy, &dim) else {
            return;
        };
        // d(xⁿ)/dx = n xⁿ⁻¹
        let n = self.n;
        let nt = T::of_f64(f64::from(n));
        add_unbroadcast_zip(dx, &dim, dy.view(), self.x.view(), |y, x| {
            if n == 0 {
                T::ZERO
            } else {
                y * nt * x.powi(n - 1)
            }
        });
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdPowi for Call<(&ArrayBase<S, D>, &i32)> {
    type Output = Array<T, D>;
    type Pullback = PowiPullback<T, D>;
    fn powi(self) -> (Self::Output, Self::Pullback) {
        let (x, &n) = self.0;
        (x.powi(n), PowiPullback { x: x.to_owned(), n })
    }
}

/// Pullback of `powf(p)`: copies of the input and output, and `p`.
pub struct PowfPullback<T, D> {
    x: Array<T, D>,
    y: Array<T, D>,
    p: T,
}

impl<T: Elem, D: Dimension> Pullback for PowfPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, T);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx, dp): (&mut Array<T, D>, &mut T)) {
        let dim = self.x.raw_dim();
        let Some(dy) = output(dy, &dim) else {
            return;
        };
        let p = self.p;
        // d(xᵖ)/dp = xᵖ ln x (taken as 0 where xᵖ = 0)
        *dp += Zip::from(&dy)
            .and(&self.y)
            .and(&self.x)
            .fold(T::ZERO, |acc, &g, &y, &x| {
                if y == T::ZERO {
                    acc
                } else {
                    acc + g * y * x.ln()
                }
            });
        // d(xᵖ)/dx = p xᵖ⁻¹
        add_unbroadcast_zip(dx, &dim, dy.view(), self.x.view(), |g, x| {
            if p == T::ZERO {
                T::ZERO
            } else {
                g * p * x.powf(p - T::one())
            }
        });
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdPowf for Call<(&ArrayBase<S, D>, &T)> {
    type Output = Array<T, D>;
    type Pullback = PowfPullback<T, D>;
    fn powf(self) -> (Self::Output, Self::Pullback) {
        let (x, &p) = self.0;
        let y = x.powf(p);
        (
            y.clone(),
            PowfPullback {
                x: x.to_owned(),
                y,
                p,
            },
        )
    }
}

rule_trait! {
    /// `x.log(base)` elementwise with a scalar base: `Call((&x, &base)).log()`;
    /// `∂/∂x = 1/(x·ln base)`, `∂/∂base = −ln x/(base·ln² base) = −y/(base·ln base)`
    /// (`NaN` where the primal is, as the scalar rule).
    NdLog::log
}

/// Pullback of `log(base)`: copies of the input and output, and `base`.
pub struct LogPullback<T, D> {
    x: Array<T, D>,
    y: Array<T, D>,
    base: T,
}

impl<T: Elem, D: Dimension> Pullback for LogPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, T);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx, dbase): (&mut Array<T, D>, &mut T)) {
        let dim = self.x.raw_dim();
        let Some(dy) = output(dy, &dim) else {
            return;
        };
        let base = self.base;
        let ln_base = base.ln();
        // ∂y/∂base = −y/(base·ln base)
        let by_base = -(base * ln_base).recip();
        *dbase += Zip::from(&dy)
            .and(&self.y)
            .fold(T::ZERO, |acc, &g, &y| acc + g * y * by_base);
        // ∂y/∂x = 1/(x·ln base)
        add_unbroadcast_zip2(
            dx,
            &dim,
            dy.view(),
            self.x.view(),
            self.y.view(),
            |g, x, y| {
                if y.is_nan() {
                    T::nan()
                } else {
                    g / (x * ln_base)
                }
            },
        );
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdLog for Call<(&ArrayBase<S, D>, &T)> {
    type Output = Array<T, D>;
    type Pullback = LogPullback<T, D>;
    fn log(self) -> (Self::Output, Self::Pullback) {
        let (x, &base) = self.0;
        let y = x.log(base);
        (
            y.clone(),
            LogPullback {
                x: x.to_owned(),
                y,
                base,
            },
        )
    }
}

rule_trait! {
    /// `x.clamp(min, max)` elementwise with scalar bounds: `Call((&x, &min, &max)).clamp()`.
    /// `∂/∂x = 1` where `min ≤ x ≤ max` (**bounds included**, as the scalar rule), 0
    /// outside; the cotangent of the elements below `min` goes to `min`, of those above
    /// `max` to `max`. Panics where the primal does (`!(min <= max)`).
    NdClamp::clamp
}

/// Pullback of `clamp(min, max)`: a copy of the input and the bounds.
pub struct ClampPullback<T, D> {
    x: Array<T, D>,
    min: T,
    max: T,
}

impl<T: Elem, D: Dimension> Pullback for ClampPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, T, T);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx, dmin, dmax): (&mut Array<T, D>, &mut T, &mut T)) {
        let dim = self.x.raw_dim();
        let Some(dy) = output(dy, &dim) else {
            return;
        };
        let (lo, hi) = (self.min, self.max);
        let (below, above) =
            Zip::from(&dy)
                .and(&self.x)
                .fold((T::ZERO, T::ZERO), |(below, above), &g, &x| {
                    if x < lo {
                        (below + g, above)
                    } else if x > hi {
                        (below, above + g)
                    } else {
                        (below, above)
                    }
                });
        *dmin += below;
        *dmax += above;
        add_unbroadcast_zip(dx, &dim, dy.view(), self.x.view(), |g, x| {
            if x < lo || x > hi {
                T::ZERO
            } else {
                g
            }
        });
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdClamp for Call<(&ArrayBase<S, D>, &T, &T)> {
    type Output = Array<T, D>;
    type Pullback = ClampPullback<T, D>;
    #[track_caller]
    fn clamp(self) -> (Self::Output, Self::Pullback) {
        let (x, &min, &max) = self.0;
        (
            x.clamp(min, max),
            ClampPullback {
                x: x.to_owned(),
                min,
                max,
            },
        )
    }
}

rule_trait! {
    /// `y.scaled_add(a, &x)` in value form (`y + a·x`, `x` broadcast to `y`'s shape):
    /// `y = Call((&y, &a, &x)).scaled_add_value()`.
    NdScaledAddValue::scaled_add_value
}

/// Pullback of `scaled_add_value`: `a`, a copy of `x`, and `y`'s shape.
pub struct ScaledAddPullback<T, D, E> {
    dim: D,
    alpha: T,
    x: Array<T, E>,
}

impl<T: Elem, D: Dimension, E: Dimension> Pullback for ScaledAddPullback<T, D, E> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, T, Array<T, E>);
    #[track_caller]
    fn pullback(self, dz: Array<T, D>, (dy, da, dx): (&mut Array<T, D>, &mut T, &mut Array<T, E>)) {
        let Some(dz) = output(dz, &self.dim) else {
            return;
        };
        // z = y + a·x: ȳ += z̄, ā += ⟨z̄, x⟩, x̄ += unbroadcast(a·z̄)
        *da += Zip::from(&dz)
            .and_broadcast(&self.x)
            .fold(T::ZERO, |acc, &g, &x| acc + g * x);
        let alpha = self.alpha;
        let x_dim = self.x.raw_dim();
        if dz.shape() == x_dim.slice() {
            let dxd = dense(dx, &x_dim);
            Zip::from(dxd)
                .and_broadcast(&dz)
                .for_each(|d, &g| *d += alpha * g);
        } else {
            let scaled = dz.mapv(|g| alpha * g);
            add_unbroadcast(dx, &x_dim, scaled.view());
        }
        add_owned(dy, &self.dim, dz);
    }
}

impl<T, S1, S2, D, E> NdScaledAddValue for Call<(&ArrayBase<S1, D>, &T, &ArrayBase<S2, E>)>
where
    T: Elem,
    S1: Data<Elem = T>,
    S2: Data<Elem = T>,
    D: Dimension,
    E: Dimension,
{
    type Output = Array<T, D>;
    type Pullback = ScaledAddPullback<T, D, E>;
    #[track_caller]
    fn scaled_add_value(self) -> (Self::Output, Self::Pullback) {
        let (y, &alpha, x) = self.0;
        let mut z = y.to_owned();
        z.scaled_add(alpha, x);
        (
            z,
            ScaledAddPullback {
                dim: y.raw_dim(),
                alpha,
                x: x.to_owned(),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, random, TestElem};
    use mochi_core::testing::RuleTest;
    use ndarray::{Ix1, Ix2};

    macro_rules! check_unary {
        ($T:ty, $x:expr, $($method:ident),*) => {$(
            RuleTest::new(($x.clone(),), |a| a.0.$method(), |a| Call((&a.0,)).$method())
.forward(|a| a.0.$method())
                .tolerance(<$T>::RTOL, <$T>::ATOL)
                .expect_no_alloc()
                .run();
        )*};
    }

    fn unaries<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 2), Ix2(2, 3)] {
            for (_, x) in layouts::<T, _>(shape, 90) {
                // everywhere-defined functions at standard-normal points
                check_unary!(T, x, exp, exp2, sin, cos, pow2, cbrt);
                // tan, away from its poles
                let small = x.mapv(|v| v * T::of_f64(0.3));
                check_unary!(T, small, tan);
                // functions of positive arguments
                let pos = x.mapv(|v| v.abs() + T::of_f64(0.5));
                check_unary!(T, pos, ln, log2, log10, sqrt, recip);
                // abs away from its kink
                let off = x.mapv(|v| {
                    if v.abs() < T::of_f64(0.1) {
                        v + T::of_f64(0.3)
                    } else {
                        v
                    }
                });
                check_unary!(T, off, abs);
                RuleTest::new(
                    (pos.clone(), 3i32),
                    |a| a.0.powi(a.1),
                    |a| Call((&a.0, &a.1)).powi(),
                )
                .forward(|a| a.0.powi(a.1))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    (pos.clone(), T::of_f64(1.3)),
                    |a| a.0.powf(a.1),
                    |a| Call((&a.0, &a.1)).powf(),
                )
                .forward(|a| a.0.powf(a.1))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                // the finite differences move the base too; a base below 1 as well
                for base in [2.5, 0.6] {
                    RuleTest::new(
                        (pos.clone(), T::of_f64(base)),
                        |a| a.0.log(a.1),
                        |a| Call((&a.0, &a.1)).log(),
                    )
                    .forward(|a| a.0.log(a.1))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                }
                // piecewise-constant functions, `fract` and the angle conversions, away
                // from the jumps (multiples of ½)
                let off_jumps = x.mapv(|v| {
                    let t = v + v;
                    if (t - t.round()).abs() < T::of_f64(0.1) {
                        v + T::of_f64(0.1)
                    } else {
                        v
                    }
                });
                check_unary!(
                    T, off_jumps, signum, floor, ceil, round, trunc, fract, to_degrees, to_radians
                );
                // clamp, away from the bounds: elements below, inside and above, and
                // the finite differences move the bounds too
                let (lo, hi) = (T::of_f64(-0.4), T::of_f64(0.6));
                let off_bounds = x.mapv(|v| {
                    if (v - lo).abs() < T::of_f64(0.05) || (v - hi).abs() < T::of_f64(0.05) {
                        v + T::of_f64(0.1)
                    } else {
                        v
                    }
                });
                RuleTest::new(
                    (off_bounds, lo, hi),
                    |a| a.0.clamp(a.1, a.2),
                    |a| Call((&a.0, &a.1, &a.2)).clamp(),
                )
                .forward(|a| a.0.clamp(a.1, a.2))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
            }
        }
    }

    #[test]
    fn elementwise_functions() {
        unaries::<f64>();
        unaries::<f32>();
    }

    #[test]
    fn clamp_routes_the_cotangent_to_the_active_bound() {
        // below, at the lower bound, inside, at the upper bound, above
        let x = ndarray::array![-2.0, -1.0, 0.5, 1.0, 3.0];
        let (y, pb) = Call((&x, &-1.0, &1.0)).clamp();
        assert_eq!(y, x.clamp(-1.0, 1.0));
        let (mut dx, mut dmin, mut dmax) = (Array::zeros(0), 0.0, 0.0);
        pb.pullback(
            ndarray::array![1.0, 2.0, 4.0, 8.0, 16.0],
            (&mut dx, &mut dmin, &mut dmax),
        );
        // at a bound the derivative is the inside one (bounds included)
        assert_eq!(dx, ndarray::array![0.0, 2.0, 4.0, 8.0, 0.0]);
        assert_eq!((dmin, dmax), (1.0, 16.0));
    }

    #[test]
    fn piecewise_constant_rules_leave_the_structural_zero() {
        let x = ndarray::array![[-1.5, 0.25], [2.75, 3.0]];
        let (y, pb) = Call((&x.t(),)).floor();
        assert_eq!(y, x.t().floor());
        assert_eq!(std::mem::size_of_val(&pb), 0);
        let mut dx = Array::zeros((0, 0));
        pb.pullback(Array::ones((2, 2)), (&mut dx,));
        assert!(dx.is_empty());
        // fract passes the cotangent on as it is, a broadcast form included
        let (_, pb) = Call((&x,)).fract();
        let mut dx = Array::zeros((0, 0));
        pb.pullback(ndarray::array![[2.0]], (&mut dx,));
        assert_eq!(
            crate::cotangent::expand(dx, &x.raw_dim()),
            Array::from_elem((2, 2), 2.0)
        );
    }

    #[test]
    fn log_is_nan_where_the_primal_is() {
        let x = ndarray::array![-1.0_f64, 8.0];
        let (y, pb) = Call((&x, &2.0)).log();
        assert!(y[0].is_nan() && y[1] == 3.0);
        let (mut dx, mut db): (Array<f64, _>, f64) = (Array::zeros(0), 0.0);
        pb.pullback(ndarray::array![0.0, 1.0], (&mut dx, &mut db));
        assert!(dx[0].is_nan());
        assert!((dx[1] - 1.0 / (8.0 * 2f64.ln())).abs() < 1e-15);
    }

    fn scaled_adds<T: TestElem>() {
        for ((_, y), (_, x)) in layouts::<T, _>(Ix2(3, 2), 91)
            .into_iter()
            .zip(layouts::<T, _>(Ix2(3, 2), 92))
        {
            // z = y + a·x: ȳ = z̄, ā = ⟨z̄, x⟩, x̄ = a·z̄
            RuleTest::new(
                (y, T::of_f64(-0.8), x),
                |a| {
                    let mut z = a.0.clone();
                    z.scaled_add(a.1, &a.2);
                    z
                },
                |a| Call((&a.0, &a.1, &a.2)).scaled_add_value(),
            )
            .forward(|a| {
                let mut z = a.0.clone();
                z.scaled_add(a.1, &a.2);
                z
            })
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
        // x broadcast along rows
        let y = random::<T, _>(Ix2(3, 2), 93);
        let x = random::<T, _>(Ix1(2), 94);
        RuleTest::new(
            (y, T::of_f64(1.5), x),
            |a| {
                let mut z = a.0.clone();
                z.scaled_add(a.1, &a.2);
                z
            },
            |a| Call((&a.0, &a.1, &a.2)).scaled_add_value(),
        )
        .forward(|a| {
            let mut z = a.0.clone();
            z.scaled_add(a.1, &a.2);
            z
        })
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn scaled_add_in_value_form() {
        scaled_adds::<f64>();
        scaled_adds::<f32>();
    }
}
