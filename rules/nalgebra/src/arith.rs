//! Elementwise arithmetic: `a + b`, `a - b`, `-a`, `a * s`, `s * a`, `a / s` and
//! `a.component_mul(&b)`, for matrices and vectors of any storage and of dynamic or
//! static size (both operands of one size type, as nalgebra's own operators require
//! in practice).
//!
//! For `y = a ± b`: `ā += ȳ`, `b̄ ±= ȳ`; `y = s·a`: `ā += s ȳ`, `s̄ += ⟨ȳ, a⟩`;
//! `y = a / s`: `ā += ȳ / s`, `s̄ −= ⟨ȳ, a⟩ / s²`; `y = a ∘ b`: `ā += ȳ ∘ b`,
//! `b̄ += ȳ ∘ a`. The matrix product `a * b` is in [`product`](crate::product).

use crate::dense::{add_scaled, dense, inner, output, view};
use crate::impls::matrix_rule;
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use mochi_core::TangentVector;
use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, Matrix, OMatrix, Storage};
use std::marker::PhantomData;

rule_trait! {
    /// `a + b`: `Call((&a, &b)).op_add()`.
    NaAdd::op_add
}
rule_trait! {
    /// `a - b`: `Call((&a, &b)).op_sub()`.
    NaSub::op_sub
}
rule_trait! {
    /// `-a`: `Call((&a,)).op_neg()`.
    NaNeg::op_neg
}
rule_trait! {
    /// `a * s`, `s * a` (scalar) and `a * b` (matrix product): `Call((&a, &b)).op_mul()`.
    NaMul::op_mul
}
rule_trait! {
    /// `a / s` (scalar): `Call((&a, &s)).op_div()`.
    NaDiv::op_div
}
rule_trait! {
    /// `a.component_mul(&b)`: `Call((&a, &b)).component_mul()`.
    NaComponentMul::component_mul
}

/// `a ∘ b` elementwise with `op`, in nalgebra's (column-major) order.
#[track_caller]
fn zip_with<T, R, C, S1, S2>(
    a: &Matrix<T, R, C, S1>,
    b: &Matrix<T, R, C, S2>,
    what: &str,
    op: impl Fn(T, T) -> T,
) -> OMatrix<T, R, C>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S1: Storage<T, R, C>,
    S2: Storage<T, R, C>,
    DefaultAllocator: Allocator<R, C>,
{
    assert_eq!(
        a.shape(),
        b.shape(),
        "mochi: {what} of matrices of shapes {:?} and {:?}",
        a.shape(),
        b.shape()
    );
    let mut y = a.clone_owned();
    y.iter_mut()
        .zip(b.iter())
        .for_each(|(y, &b)| *y = op(*y, b));
    y
}

macro_rules! linear_pullbacks {
    ($($(#[$doc:meta])* $Name:ident;)*) => {$(
        $(#[$doc])*
        pub struct $Name<T: Elem, R, C> {
            _types: crate::dense::Marker<T, R, C>,
        }
        impl<T: Elem, R, C> $Name<T, R, C> {
            fn new() -> Self {
                $Name {
                    _types: PhantomData,
                }
            }
        }
    )*};
}
linear_pullbacks! {
    /// Pullback of `a + b`: needs nothing (`ā += ȳ`, `b̄ += ȳ`).
    AddPullback;
    /// Pullback of `a - b`: needs nothing (`ā += ȳ`, `b̄ −= ȳ`).
    SubPullback;
    /// Pullback of `-a`: needs nothing (`ā −= ȳ`).
    NegPullback;
}

/// `acc −= ȳ` (a structural zero takes `−ȳ`).
#[track_caller]
fn subtract<T: Elem, R: Dim, C: Dim>(acc: &mut OMatrix<T, R, C>, dy: &OMatrix<T, R, C>)
where
    DefaultAllocator: Allocator<R, C>,
{
    if let Some(dy) = output(dy, dy.shape()) {
        add_scaled(acc, -T::ONE, dy);
    }
}

/// The cotangents of two matrices of one type.
type Pair<'a, T, R, C> = (&'a mut OMatrix<T, R, C>, &'a mut OMatrix<T, R, C>);

impl<T: Elem, R: Dim, C: Dim> Pullback for AddPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, OMatrix<T, R, C>);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da, db): Pair<'_, T, R, C>) {
        da.accumulate_ref(&dy);
        db.accumulate(dy);
    }
}

impl<T: Elem, R: Dim, C: Dim> Pullback for SubPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, OMatrix<T, R, C>);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da, db): Pair<'_, T, R, C>) {
        subtract(db, &dy);
        da.accumulate(dy);
    }
}

impl<T: Elem, R: Dim, C: Dim> Pullback for NegPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>,);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da,): (&mut OMatrix<T, R, C>,)) {
        subtract(da, &dy);
    }
}

matrix_rule! {
    NaAdd for (&Matrix, &Matrix) {
        type Output = OMatrix<T, R, C>;
        type Pullback = AddPullback<T, R, C>;
        #[inline]
        #[track_caller]
        fn op_add(self) -> (Self::Output, Self::Pullback) {
            let (a, b) = self.0;
            (zip_with(a, b, "sum", |x, y| x + y), AddPullback::new())
        }
    }
}

matrix_rule! {
    NaSub for (&Matrix, &Matrix) {
        type Output = OMatrix<T, R, C>;
        type Pullback = SubPullback<T, R, C>;
        #[inline]
        #[track_caller]
        fn op_sub(self) -> (Self::Output, Self::Pullback) {
            let (a, b) = self.0;
            (
                zip_with(a, b, "difference", |x, y| x - y),
                SubPullback::new(),
            )
        }
    }
}

matrix_rule! {
    NaNeg for (&Matrix) {
        type Output = OMatrix<T, R, C>;
        type Pullback = NegPullback<T, R, C>;
        #[inline]
        fn op_neg(self) -> (Self::Output, Self::Pullback) {
            (-self.0 .0, NegPullback::new())
        }
    }
}

/// Pullback of `a * s` and `s * a`: a copy of `a` and `s`.
pub struct ScalePullback<T: Elem, R: Dim, C: Dim>
where
    DefaultAllocator: Allocator<R, C>,
{
    a: OMatrix<T, R, C>,
    s: T,
}

impl<T: Elem, R: Dim, C: Dim> ScalePullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    /// `ā += s ȳ`, `s̄ += ⟨ȳ, a⟩`.
    #[track_caller]
    fn add(self, dy: OMatrix<T, R, C>, da: &mut OMatrix<T, R, C>, ds: &mut T) {
        let Some(dy) = output(&dy, self.a.shape()) else {
            return;
        };
        add_scaled(da, self.s, dy);
        *ds += inner(dy, view(&self.a));
    }
}

impl<T: Elem, R: Dim, C: Dim> Pullback for ScalePullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, T);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da, ds): (&mut OMatrix<T, R, C>, &mut T)) {
        self.add(dy, da, ds);
    }
}

/// Pullback of `s * a` (the scalar on the left): [`ScalePullback`] with the arguments
/// swapped.
pub struct LeftScalePullback<T: Elem, R: Dim, C: Dim>(ScalePullback<T, R, C>)
where
    DefaultAllocator: Allocator<R, C>;

impl<T: Elem, R: Dim, C: Dim> Pullback for LeftScalePullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (T, OMatrix<T, R, C>);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (ds, da): (&mut T, &mut OMatrix<T, R, C>)) {
        self.0.add(dy, da, ds);
    }
}

matrix_rule! {
    NaMul for (&Matrix, &T) {
        type Output = OMatrix<T, R, C>;
        type Pullback = ScalePullback<T, R, C>;
        #[inline]
        fn op_mul(self) -> (Self::Output, Self::Pullback) {
            let (a, &s) = self.0;
            let a = a.clone_owned();
            (&a * s, ScalePullback { a, s })
        }
    }
}

impl<T, R, C, S> NaMul for Call<(&T, &Matrix<T, R, C, S>)>
where
    T: Elem,
    R: Dim,
    C: Dim,
    S: Storage<T, R, C>,
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Pullback = LeftScalePullback<T, R, C>;
    #[inline]
    fn op_mul(self) -> (Self::Output, Self::Pullback) {
        let (&s, a) = self.0;
        let a = a.clone_owned();
        // `s * a` computes `aᵢ * s` for every element, as `a * s` does.
        (&a * s, LeftScalePullback(ScalePullback { a, s }))
    }
}

/// Pullback of `a / s`: a copy of `a` and `s`.
pub struct DivPullback<T: Elem, R: Dim, C: Dim>
where
    DefaultAllocator: Allocator<R, C>,
{
    a: OMatrix<T, R, C>,
    s: T,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for DivPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, T);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da, ds): (&mut OMatrix<T, R, C>, &mut T)) {
        let Some(dy) = output(&dy, self.a.shape()) else {
            return;
        };
        // y = a / s: ā += ȳ / s, s̄ −= ⟨ȳ, a⟩ / s²
        add_scaled(da, T::ONE / self.s, dy);
        *ds -= inner(dy, view(&self.a)) / (self.s * self.s);
    }
}

matrix_rule! {
    NaDiv for (&Matrix, &T) {
        type Output = OMatrix<T, R, C>;
        type Pullback = DivPullback<T, R, C>;
        #[inline]
        fn op_div(self) -> (Self::Output, Self::Pullback) {
            let (a, &s) = self.0;
            let a = a.clone_owned();
            (&a / s, DivPullback { a, s })
        }
    }
}

/// The partial derivatives of an elementwise binary operation `yᵢ = f(aᵢ, bᵢ)` from the
/// two matrices its pullback keeps, element by element: `(∂y/∂a, ∂y/∂b)`.
pub trait ElementwisePartials {
    /// `(∂yᵢ/∂aᵢ, ∂yᵢ/∂bᵢ)` from the kept elements `xᵢ` and `zᵢ`.
    fn partials<T: Elem>(x: T, z: T) -> (T, T);
}

/// `y = a ∘ b` keeps `a` and `b`: `∂y/∂a = b`, `∂y/∂b = a`.
pub struct Product;

impl ElementwisePartials for Product {
    #[inline(always)]
    fn partials<T: Elem>(a: T, b: T) -> (T, T) {
        (b, a)
    }
}

/// `y = a ⊘ b` keeps `b` and `y`: `∂y/∂a = 1/b`, `∂y/∂b = −y/b`.
pub struct Quotient;

impl ElementwisePartials for Quotient {
    #[inline(always)]
    fn partials<T: Elem>(b: T, y: T) -> (T, T) {
        (T::ONE / b, -y / b)
    }
}

/// Pullback of `a.component_mul(&b)` and `a.component_div(&b)`: the two matrices `P`'s
/// partial derivatives are read from (`ā += ȳ ∘ ∂y/∂a`, `b̄ += ȳ ∘ ∂y/∂b`).
pub struct ElementwisePullback<T: Elem, R: Dim, C: Dim, P>
where
    DefaultAllocator: Allocator<R, C>,
{
    x: OMatrix<T, R, C>,
    z: OMatrix<T, R, C>,
    _partials: PhantomData<fn() -> P>,
}

impl<T: Elem, R: Dim, C: Dim, P> ElementwisePullback<T, R, C, P>
where
    DefaultAllocator: Allocator<R, C>,
{
    #[inline]
    fn new(x: OMatrix<T, R, C>, z: OMatrix<T, R, C>) -> Self {
        ElementwisePullback {
            x,
            z,
            _partials: PhantomData,
        }
    }
}

impl<T: Elem, R: Dim, C: Dim, P: ElementwisePartials> Pullback for ElementwisePullback<T, R, C, P>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, OMatrix<T, R, C>);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da, db): Pair<'_, T, R, C>) {
        let shape = self.x.shape();
        let Some(dy) = output(&dy, shape) else {
            return;
        };
        let (mut da, mut db) = (dense(da, shape), dense(db, shape));
        let kept = self.x.iter().zip(self.z.iter());
        let accumulators = da.iter_mut().zip(db.iter_mut());
        for ((&g, (&x, &z)), (a, b)) in dy.iter().zip(kept).zip(accumulators) {
            let (pa, pb) = P::partials(x, z);
            *a += g * pa;
            *b += g * pb;
        }
    }
}

matrix_rule! {
    NaComponentMul for (&Matrix, &Matrix) {
        type Output = OMatrix<T, R, C>;
        type Pullback = ElementwisePullback<T, R, C, Product>;
        #[inline]
        #[track_caller]
        fn component_mul(self) -> (Self::Output, Self::Pullback) {
            let (a, b) = self.0;
            (
                a.component_mul(b),
                ElementwisePullback::new(a.clone_owned(), b.clone_owned()),
            )
        }
    }
}

rule_trait! {
    /// `a.scale(s)`, `a * s` by name: `Call((&a, &s)).scale()`.
    NaScale::scale
}

matrix_rule! {
    NaScale for (&Matrix, &T) {
        type Output = OMatrix<T, R, C>;
        type Pullback = ScalePullback<T, R, C>;
        #[inline]
        fn scale(self) -> (Self::Output, Self::Pullback) {
            let (a, &s) = self.0;
            let a = a.clone_owned();
            (a.scale(s), ScalePullback { a, s })
        }
    }
}

rule_trait! {
    /// `a.add_scalar(s)`: `Call((&a, &s)).add_scalar()`.
    NaAddScalar::add_scalar
}
rule_trait! {
    /// `a.component_div(&b)`: `Call((&a, &b)).component_div()`.
    NaComponentDiv::component_div
}

/// Pullback of `a.add_scalar(s)`: the shape (`ā += ȳ`, `s̄ += Σ ȳ`).
pub struct AddScalarPullback<T: Elem, R, C> {
    shape: (usize, usize),
    _types: crate::dense::Marker<T, R, C>,
}

impl<T: Elem, R: Dim, C: Dim> Pullback for AddScalarPullback<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    type Output = OMatrix<T, R, C>;
    type Args = (OMatrix<T, R, C>, T);
    #[track_caller]
    fn pullback(self, dy: OMatrix<T, R, C>, (da, ds): (&mut OMatrix<T, R, C>, &mut T)) {
        if output(&dy, self.shape).is_none() {
            return;
        }
        *ds += dy.sum();
        da.accumulate(dy);
    }
}

matrix_rule! {
    NaAddScalar for (&Matrix, &T) {
        type Output = OMatrix<T, R, C>;
        type Pullback = AddScalarPullback<T, R, C>;
        #[inline]
        fn add_scalar(self) -> (Self::Output, Self::Pullback) {
            let (a, &s) = self.0;
            (
                a.add_scalar(s),
                AddScalarPullback {
                    shape: a.shape(),
                    _types: PhantomData,
                },
            )
        }
    }
}

matrix_rule! {
    NaComponentDiv for (&Matrix, &Matrix) {
        type Output = OMatrix<T, R, C>;
        type Pullback = ElementwisePullback<T, R, C, Quotient>;
        #[inline]
        #[track_caller]
        fn component_div(self) -> (Self::Output, Self::Pullback) {
            let (a, b) = self.0;
            let y = a.component_div(b);
            (
                y.clone(),
                ElementwisePullback::new(b.clone_owned(), y),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use crate::test_support::{dmatrix, matrix};
    use crate::Elem;
    use mochi_core::kit::ArrayTolerance;
    use mochi_core::testing::RuleTest;
    use mochi_core::Call;
    use nalgebra::{DMatrix, Matrix2x3, Vector3, U1, U3};

    fn dynamic<T: Elem>() {
        let (a, b) = (dmatrix::<T>(2, 3, 0.1), dmatrix::<T>(2, 3, 0.7));
        let s = T::of_f64(-1.7);
        RuleTest::new(
            (a.clone(), b.clone()),
            |x| &x.0 + &x.1,
            |x| Call((&x.0, &x.1)).op_add(),
        )
        .jvp(|_, t| &t.0 + &t.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (a.clone(), b.clone()),
            |x| &x.0 - &x.1,
            |x| Call((&x.0, &x.1)).op_sub(),
        )
        .jvp(|_, t| &t.0 - &t.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new((a.clone(),), |x| -&x.0, |x| Call((&x.0,)).op_neg())
            .jvp(|_, t| -&t.0)
            .tolerance(T::RTOL, T::ATOL)
            .run();
        RuleTest::new(
            (a.clone(), s),
            |x| &x.0 * x.1,
            |x| Call((&x.0, &x.1)).op_mul(),
        )
        // d(a s) = ȧ s + a ṡ
        .jvp(|x, t| &t.0 * x.1 + &x.0 * t.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (a.clone(), s),
            |x| x.0.scale(x.1),
            |x| Call((&x.0, &x.1)).scale(),
        )
        .jvp(|x, t| t.0.scale(x.1) + x.0.scale(t.1))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (s, a.clone()),
            |x| &x.1 * x.0,
            |x| Call((&x.0, &x.1)).op_mul(),
        )
        .jvp(|x, t| &t.1 * x.0 + &x.1 * t.0)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (a.clone(), s),
            |x| &x.0 / x.1,
            |x| Call((&x.0, &x.1)).op_div(),
        )
        // d(a / s) = ȧ / s − a ṡ / s²
        .jvp(|x, t| &t.0 / x.1 - &x.0 * (t.1 / (x.1 * x.1)))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (a.clone(), b.clone()),
            |x| x.0.component_mul(&x.1),
            |x| Call((&x.0, &x.1)).component_mul(),
        )
        .jvp(|x, t| t.0.component_mul(&x.1) + x.0.component_mul(&t.1))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            (a.clone(), s),
            |x| x.0.add_scalar(x.1),
            |x| Call((&x.0, &x.1)).add_scalar(),
        )
        .jvp(|_, t| t.0.add_scalar(t.1))
        .tolerance(T::RTOL, T::ATOL)
        .run();
        // b away from 0
        let b = b.map(|v| v + T::of_f64(2.0));
        RuleTest::new(
            (a, b),
            |x| x.0.component_div(&x.1),
            |x| Call((&x.0, &x.1)).component_div(),
        )
        // d(a ⊘ b) = ȧ ⊘ b − a ∘ ḃ ⊘ b²
        .jvp(|x, t| {
            t.0.component_div(&x.1)
                - x.0
                    .component_mul(&t.1)
                    .component_div(&x.1.component_mul(&x.1))
        })
        .tolerance(T::RTOL, T::ATOL)
        .run();
    }

    #[test]
    fn dynamic_sizes_f64_and_f32() {
        dynamic::<f64>();
        dynamic::<f32>();
    }

    #[test]
    fn static_sizes_allocate_nothing_in_the_pullback() {
        let a = matrix::<f64, _, _>(U3, U1, 0.2);
        let b = matrix::<f64, _, _>(U3, U1, 0.9);
        RuleTest::new((a, b), |x| x.0 + x.1, |x| Call((&x.0, &x.1)).op_add())
            .jvp(|_, t| t.0 + t.1)
            .expect_no_alloc()
            .run();
        RuleTest::new(
            (a, b),
            |x| x.0.component_mul(&x.1),
            |x| Call((&x.0, &x.1)).component_mul(),
        )
        .expect_no_alloc()
        .run();
        let m = Matrix2x3::new(1.0_f32, -2.0, 0.5, 0.3, 0.7, -1.1);
        RuleTest::new((m, 2.5_f32), |x| x.0 * x.1, |x| Call((&x.0, &x.1)).op_mul())
            .expect_no_alloc()
            .tolerance(f32::RTOL, f32::ATOL)
            .run();
        let v: Vector3<f64> = a;
        RuleTest::new((v,), |x| -x.0, |x| Call((&x.0,)).op_neg())
            .expect_no_alloc()
            .run();
    }

    #[test]
    #[should_panic(expected = "sum of matrices of shapes (2, 3) and (3, 2)")]
    fn shape_mismatch_is_reported() {
        let (a, b): (DMatrix<f64>, DMatrix<f64>) = (dmatrix(2, 3, 0.1), dmatrix(3, 2, 0.1));
        let _ = Call((&a, &b)).op_add();
    }
}
