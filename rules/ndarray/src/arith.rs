//! `+ − × ÷` between arrays (with ndarray's broadcasting), arrays and scalars, and
//! negation.
//!
//! For `y = a ∘ b` with broadcasting, the cotangent of each operand is the
//! elementwise partial derivative times `ȳ`, summed over the copies broadcasting
//! made ([`add_unbroadcast`](crate::cotangent::add_unbroadcast)).

use crate::cotangent::{
    add_owned, add_unbroadcast, add_unbroadcast_owned, add_unbroadcast_zip, add_unbroadcast_zip2,
    expand, form, output, total, view, Form,
};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, KeepCall, Kept, Pullback};
use ndarray::{Array, ArrayBase, Data, DimMax, Dimension, Zip};

rule_trait! {
    /// `a + b` on arrays and scalars: `Call((&a, &b)).op_add()`.
    NdAdd::op_add
}
rule_trait! {
    /// `a − b` on arrays and scalars: `Call((&a, &b)).op_sub()`.
    NdSub::op_sub
}
rule_trait! {
    /// `a · b` elementwise on arrays and scalars: `Call((&a, &b)).op_mul()`.
    NdMul::op_mul
}
rule_trait! {
    /// `a / b` elementwise on arrays and scalars: `Call((&a, &b)).op_div()`.
    NdDiv::op_div
}
rule_trait! {
    /// `−a` on an array: `Call((&a,)).op_neg()`.
    NdNeg::op_neg
}

type Out<D1, D2> = <D1 as DimMax<D2>>::Output;

/// Which of the four operators a pullback stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `a + b`
    Add,
    /// `a − b`
    Sub,
    /// `a · b`
    Mul,
    /// `a / b`
    Div,
}

impl BinaryOp {
    fn needs_operands(self) -> bool {
        matches!(self, BinaryOp::Mul | BinaryOp::Div)
    }
}

// ------------------------------------------------------------ array ∘ array

/// Pullback of `a ∘ b` for two arrays: the shapes, and for `·` and `/` owned copies
/// of the operands the partials read. `a · a` (the same array twice, `&e * &e`) keeps
/// one copy; an operand the macro knows to be constant ([`KeepCall`]) is not copied for
/// its own partial, which is not computed.
pub struct ArrayArrayPullback<T, D1: Dimension + DimMax<D2>, D2: Dimension> {
    op: BinaryOp,
    a_dim: D1,
    b_dim: D2,
    out: Out<D1, D2>,
    a: Option<Array<T, D1>>,
    /// `None` where `b`'s partial is read from `a` (the same array) or not computed.
    b: Option<Array<T, D2>>,
    /// The partials to compute (`false` for a constant operand's).
    wants: (bool, bool),
}

impl<T: Elem, D1, D2> ArrayArrayPullback<T, D1, D2>
where
    D1: Dimension + DimMax<D2>,
    D2: Dimension,
{
    /// The pullback of `a ∘ b`, copying what the partials in `wants` read.
    #[track_caller]
    fn new<S1: Data<Elem = T>, S2: Data<Elem = T>>(
        op: BinaryOp,
        a: &ArrayBase<S1, D1>,
        b: &ArrayBase<S2, D2>,
        out: Out<D1, D2>,
        wants: (bool, bool),
    ) -> Self {
        // ∂(a·b)/∂a = b, ∂(a·b)/∂b = a; ∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = −a/b².
        let (need_a, need_b) = match op {
            BinaryOp::Mul => (wants.1, wants.0),
            BinaryOp::Div => (wants.1, wants.0 || wants.1),
            BinaryOp::Add | BinaryOp::Sub => (false, false),
        };
        let same = need_a
            && need_b
            && a.as_ptr() == b.as_ptr()
            && a.shape() == b.shape()
            && a.strides() == b.strides();
        ArrayArrayPullback {
            op,
            a_dim: a.raw_dim(),
            b_dim: b.raw_dim(),
            out,
            a: (need_a || same).then(|| a.to_owned()),
            b: (need_b && !same).then(|| b.to_owned()),
            wants,
        }
    }

    /// The kept copy of `b` (`a`'s, when they are the same array: a partial that reads
    /// `b` was asked for and no copy of it kept).
    fn b_view(&self) -> ndarray::ArrayView<'_, T, D2> {
        match (&self.b, &self.a) {
            (Some(b), _) => b.view(),
            (None, Some(a)) => a
                .view()
                .into_dimensionality::<D2>()
                .expect("mochi: `a · a` keeps one copy of the same shape"),
            _ => unreachable!("mochi: `·` and `/` pullbacks keep the operands their partials read"),
        }
    }
}

impl<T: Elem, D1, D2> Pullback for ArrayArrayPullback<T, D1, D2>
where
    D1: Dimension + DimMax<D2>,
    D2: Dimension,
{
    type Output = Array<T, Out<D1, D2>>;
    type Args = (Array<T, D1>, Array<T, D2>);
    #[track_caller]
    fn pullback(self, dy: Self::Output, (da, db): (&mut Array<T, D1>, &mut Array<T, D2>)) {
        let Some(mut dy) = output(dy, &self.out) else {
            return;
        };
        let (want_a, want_b) = self.wants;
        match self.op {
            BinaryOp::Add => {
                add_unbroadcast(da, &self.a_dim, dy.view());
                add_unbroadcast_owned(db, &self.b_dim, dy);
            }
            BinaryOp::Sub => {
                add_unbroadcast(da, &self.a_dim, dy.view());
                dy.map_inplace(|v| *v = -*v);
                add_unbroadcast_owned(db, &self.b_dim, dy);
            }
            BinaryOp::Mul => {
                // ∂(a·b)/∂a = b, ∂(a·b)/∂b = a
                if want_a {
                    add_unbroadcast_zip(da, &self.a_dim, dy.view(), self.b_view(), |y, b| y * b);
                }
                if want_b {
                    let a = self
                        .a
                        .as_ref()
                        .expect("mochi: `·` keeps `a` for `b`'s partial");
                    add_unbroadcast_zip(db, &self.b_dim, dy.view(), a.view(), |y, a| y * a);
                }
            }
            BinaryOp::Div => {
                // ∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = −a/b²
                let b = self.b_view();
                if want_a {
                    add_unbroadcast_zip(da, &self.a_dim, dy.view(), b.view(), |y, b| y / b);
                }
                if want_b {
                    let a = self
                        .a
                        .as_ref()
                        .expect("mochi: `/` keeps `a` for `b`'s partial");
                    add_unbroadcast_zip2(db, &self.b_dim, dy.view(), a.view(), b, |y, a, b| {
                        -y * a / (b * b)
                    });
                }
            }
        }
    }
}

macro_rules! array_array {
    ($Trait:ident, $method:ident, $op:tt, $Op:expr) => {
        impl<'a, 'b, T, S1, S2, D1, D2> $Trait for Call<(&'a ArrayBase<S1, D1>, &'b ArrayBase<S2, D2>)>
        where
            T: Elem,
            S1: Data<Elem = T>,
            S2: Data<Elem = T>,
            D1: Dimension + DimMax<D2>,
            D2: Dimension,
        {
            type Output = Array<T, Out<D1, D2>>;
            type Pullback = ArrayArrayPullback<T, D1, D2>;
            #[track_caller]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (a, b) = self.0;
                let y = a $op b;
                let out = y.raw_dim();
                (y, ArrayArrayPullback::new($Op, a, b, out, (true, true)))
            }
        }
    };
}
array_array!(NdAdd, op_add, +, BinaryOp::Add);
array_array!(NdSub, op_sub, -, BinaryOp::Sub);
array_array!(NdMul, op_mul, *, BinaryOp::Mul);
array_array!(NdDiv, op_div, /, BinaryOp::Div);

// ------------------------------------------------------------ array ∘ scalar

/// Pullback of `a ∘ s` or `s ∘ a` for an array `a` and a scalar `s`: the array's
/// shape, the scalar, and for `·` and `/` a copy of the array.
pub struct ArrayScalarPullback<T, D> {
    op: BinaryOp,
    scalar_first: bool,
    scalar: T,
    dim: D,
    array: Option<Array<T, D>>,
}

impl<T: Elem, D: Dimension> ArrayScalarPullback<T, D> {
    #[track_caller]
    fn run(self, mut dy: Array<T, D>, dx: &mut Array<T, D>, ds: &mut T) {
        // `ȳ` may be a broadcast form: `+`, `−` and scaling keep it one (the argument's
        // cotangent is then a broadcast form too); the rest read its expansion.
        let Some(dy_full) = view(&dy, &self.dim) else {
            return;
        };
        let s = self.scalar;
        match (self.op, self.scalar_first, &self.array) {
            (BinaryOp::Add, _, _) => {
                *ds += total(&dy, &self.dim);
                add_owned(dx, &self.dim, dy);
            }
            (BinaryOp::Sub, false, _) => {
                // y = x − s
                *ds -= total(&dy, &self.dim);
                add_owned(dx, &self.dim, dy);
            }
            (BinaryOp::Sub, true, _) => {
                // y = s − x
                *ds += total(&dy, &self.dim);
                dy.map_inplace(|v| *v = -*v);
                add_owned(dx, &self.dim, dy);
            }
            (BinaryOp::Mul, _, Some(x)) => {
                // y = x·s: ∂y/∂x = s, ∂y/∂s = x
                *ds += Zip::from(&dy_full)
                    .and(x)
                    .fold(T::ZERO, |acc, &y, &x| acc + y * x);
                dy.map_inplace(|v| *v *= s);
                add_owned(dx, &self.dim, dy);
            }
            (BinaryOp::Div, false, Some(x)) => {
                // y = x/s: ∂y/∂x = 1/s, ∂y/∂s = −x/s²
                let dot = Zip::from(&dy_full)
                    .and(x)
                    .fold(T::ZERO, |acc, &y, &x| acc + y * x);
                *ds -= dot / (s * s);
                dy.map_inplace(|v| *v /= s);
                add_owned(dx, &self.dim, dy);
            }
            (BinaryOp::Div, true, Some(x)) => {
                // y = s/x: ∂y/∂s = 1/x, ∂y/∂x = −s/x²
                *ds += Zip::from(&dy_full)
                    .and(x)
                    .fold(T::ZERO, |acc, &y, &x| acc + y / x);
                let mut dy = expand(dy, &self.dim);
                Zip::from(&mut dy)
                    .and(x)
                    .for_each(|y, &x| *y = -*y * s / (x * x));
                add_owned(dx, &self.dim, dy);
            }
            // The scalar is constant (`KeepCall`): its partial, which reads the array, is
            // not computed.
            (BinaryOp::Mul, _, None) => {
                dy.map_inplace(|v| *v *= s);
                add_owned(dx, &self.dim, dy);
            }
            (BinaryOp::Div, false, None) => {
                dy.map_inplace(|v| *v /= s);
                add_owned(dx, &self.dim, dy);
            }
            (BinaryOp::Div, true, None) => {
                unreachable!("mochi: `s / x` keeps its array operand")
            }
        }
    }
}

/// [`ArrayScalarPullback`] for `array ∘ scalar` (argument order: array, scalar).
pub struct ArrayThenScalar<T, D>(ArrayScalarPullback<T, D>);
/// [`ArrayScalarPullback`] for `scalar ∘ array` (argument order: scalar, array).
pub struct ScalarThenArray<T, D>(ArrayScalarPullback<T, D>);

impl<T: Elem, D: Dimension> Pullback for ArrayThenScalar<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>, T);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (dx, ds): (&mut Array<T, D>, &mut T)) {
        self.0.run(dy, dx, ds)
    }
}

impl<T: Elem, D: Dimension> Pullback for ScalarThenArray<T, D> {
    type Output = Array<T, D>;
    type Args = (T, Array<T, D>);
    #[track_caller]
    fn pullback(self, dy: Array<T, D>, (ds, dx): (&mut T, &mut Array<T, D>)) {
        self.0.run(dy, dx, ds)
    }
}

/// The pullback of `x ∘ s` (`s ∘ x`); `constant_scalar`: `s` has no derivative
/// (`KeepCall`), so the array its partial reads is not copied.
fn scalar_pb<T: Elem, S: Data<Elem = T>, D: Dimension>(
    op: BinaryOp,
    scalar_first: bool,
    scalar: T,
    x: &ArrayBase<S, D>,
    constant_scalar: bool,
) -> ArrayScalarPullback<T, D> {
    let needs_array = op.needs_operands() && !constant_scalar;
    ArrayScalarPullback {
        op,
        scalar_first,
        scalar,
        dim: x.raw_dim(),
        array: needs_array.then(|| x.to_owned()),
    }
}

macro_rules! with_scalar {
    ($Trait:ident, $method:ident, $op:tt, $Op:expr) => {
        impl<'a, 'b, T: Elem, S: Data<Elem = T>, D: Dimension> $Trait for Call<(&'a ArrayBase<S, D>, &'b T)> {
            type Output = Array<T, D>;
            type Pullback = ArrayThenScalar<T, D>;
            #[track_caller]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (x, &s) = self.0;
                let y = x.mapv(|v| v $op s);
                (y, ArrayThenScalar(scalar_pb($Op, false, s, x, false)))
            }
        }
        impl<'a, 'b, T: Elem, S: Data<Elem = T>, D: Dimension> $Trait for Call<(&'a T, &'b ArrayBase<S, D>)> {
            type Output = Array<T, D>;
            type Pullback = ScalarThenArray<T, D>;
            #[track_caller]
            fn $method(self) -> (Self::Output, Self::Pullback) {
                let (&s, x) = self.0;
                let y = x.mapv(|v| s $op v);
                (y, ScalarThenArray(scalar_pb($Op, true, s, x, false)))
            }
        }
    };
}
with_scalar!(NdAdd, op_add, +, BinaryOp::Add);
with_scalar!(NdSub, op_sub, -, BinaryOp::Sub);
with_scalar!(NdMul, op_mul, *, BinaryOp::Mul);
with_scalar!(NdDiv, op_div, /, BinaryOp::Div);

// ------------------------------------------------------------ a constant operand

/// `x * c`, `c * x`, `x / c` and their array forms with the operand `c` constant
/// (`mochi_core::kit::KeepCall`): the forward copies only what the other operand's
/// partial reads (nothing for an array and a constant scalar, the constant factor for
/// two arrays).
pub trait NdKeepMul {
    /// The value and pullback, wrapped.
    type Out;
    /// `a · b` with the argument `K` constant.
    fn keep_op_mul(self) -> Self::Out;
}

/// [`NdKeepMul`] for `/` with a constant divisor.
pub trait NdKeepDiv {
    /// The value and pullback, wrapped.
    type Out;
    /// `a / b` with `b` constant.
    fn keep_op_div(self) -> Self::Out;
}

macro_rules! keep_with_scalar {
    ($Trait:ident, $method:ident, $op:tt, $Op:expr) => {
        impl<T: Elem, S: Data<Elem = T>, D: Dimension> $Trait
            for KeepCall<Call<(&ArrayBase<S, D>, &T)>, 1>
        {
            type Out = Kept<(Array<T, D>, ArrayThenScalar<T, D>)>;
            #[track_caller]
            #[inline]
            fn $method(self) -> Self::Out {
                let (x, &s) = self.into_inner().0;
                let y = x.mapv(|v| v $op s);
                Kept((y, ArrayThenScalar(scalar_pb($Op, false, s, x, true))))
            }
        }
    };
}
keep_with_scalar!(NdKeepMul, keep_op_mul, *, BinaryOp::Mul);
keep_with_scalar!(NdKeepDiv, keep_op_div, /, BinaryOp::Div);

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdKeepMul
    for KeepCall<Call<(&T, &ArrayBase<S, D>)>, 0>
{
    type Out = Kept<(Array<T, D>, ScalarThenArray<T, D>)>;
    #[track_caller]
    #[inline]
    fn keep_op_mul(self) -> Self::Out {
        let (&s, x) = self.into_inner().0;
        let y = x.mapv(|v| s * v);
        Kept((
            y,
            ScalarThenArray(scalar_pb(BinaryOp::Mul, true, s, x, true)),
        ))
    }
}

macro_rules! keep_array_array {
    ($Trait:ident, $method:ident, $op:tt, $Op:expr, $K:literal, $wants:expr) => {
        impl<T, S1, S2, D1, D2> $Trait
            for KeepCall<Call<(&ArrayBase<S1, D1>, &ArrayBase<S2, D2>)>, $K>
        where
            T: Elem,
            S1: Data<Elem = T>,
            S2: Data<Elem = T>,
            D1: Dimension + DimMax<D2>,
            D2: Dimension,
        {
            type Out = Kept<(Array<T, Out<D1, D2>>, ArrayArrayPullback<T, D1, D2>)>;
            #[track_caller]
            #[inline]
            fn $method(self) -> Self::Out {
                let (a, b) = self.into_inner().0;
                let y = a $op b;
                let out = y.raw_dim();
                Kept((y, ArrayArrayPullback::new($Op, a, b, out, $wants)))
            }
        }
    };
}
keep_array_array!(NdKeepMul, keep_op_mul, *, BinaryOp::Mul, 0, (false, true));
keep_array_array!(NdKeepMul, keep_op_mul, *, BinaryOp::Mul, 1, (true, false));
keep_array_array!(NdKeepDiv, keep_op_div, /, BinaryOp::Div, 1, (true, false));

// ------------------------------------------------------------ negation

/// Pullback of `−a`: the shape only.
pub struct NegPullback<T, D> {
    dim: D,
    _t: std::marker::PhantomData<T>,
}

impl<T: Elem, D: Dimension> Pullback for NegPullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array<T, D>,);
    #[track_caller]
    fn pullback(self, mut dy: Array<T, D>, (dx,): (&mut Array<T, D>,)) {
        // A broadcast form stays one.
        if form(&dy, &self.dim) == Form::Zero {
            return;
        }
        dy.map_inplace(|v| *v = -*v);
        add_owned(dx, &self.dim, dy);
    }
}

impl<T: Elem, S: Data<Elem = T>, D: Dimension> NdNeg for Call<(&ArrayBase<S, D>,)> {
    type Output = Array<T, D>;
    type Pullback = NegPullback<T, D>;
    #[track_caller]
    fn op_neg(self) -> (Self::Output, Self::Pullback) {
        let (x,) = self.0;
        (
            x.mapv(|v| -v),
            NegPullback {
                dim: x.raw_dim(),
                _t: std::marker::PhantomData,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, random, TestElem};
    use mochi_core::kit::ArrayTolerance;
    use mochi_core::testing::RuleTest;
    use ndarray::{Array1, Array2, Ix1, Ix2};

    /// Operands of a division stay away from zero.
    fn away_from_zero<T: Elem, D: Dimension>(mut x: Array<T, D>) -> Array<T, D> {
        x.mapv_inplace(|v| v.abs() + T::of_f64(0.5));
        x
    }

    fn same_shape<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 3), Ix2(3, 4)] {
            for ((_, a), (_, b)) in layouts::<T, _>(shape, 1)
                .into_iter()
                .zip(layouts::<T, _>(shape, 2))
            {
                let b = away_from_zero(b);
                let args = (a, b);
                // ∂(a ± b) = ±1: shapes only, no allocation on dense accumulators
                RuleTest::new(
                    args.clone(),
                    |a| &a.0 + &a.1,
                    |a| Call((&a.0, &a.1)).op_add(),
                )
                .forward(|a| &a.0 + &a.1)
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    args.clone(),
                    |a| &a.0 - &a.1,
                    |a| Call((&a.0, &a.1)).op_sub(),
                )
                .forward(|a| &a.0 - &a.1)
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    args.clone(),
                    |a| &a.0 * &a.1,
                    |a| Call((&a.0, &a.1)).op_mul(),
                )
                .forward(|a| &a.0 * &a.1)
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    args.clone(),
                    |a| &a.0 / &a.1,
                    |a| Call((&a.0, &a.1)).op_div(),
                )
                .forward(|a| &a.0 / &a.1)
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
            }
        }
    }

    #[test]
    fn array_array_same_shape() {
        same_shape::<f64>();
        same_shape::<f32>();
    }

    fn broadcasting<T: TestElem>() {
        // a row vector against a matrix: the vector's cotangent sums over rows
        let m: Array2<T> = random(Ix2(3, 4), 3);
        let v: Array1<T> = away_from_zero(random(Ix1(4), 4));
        let args = (m.clone(), v.clone());
        RuleTest::new(
            args.clone(),
            |a| &a.0 + &a.1,
            |a| Call((&a.0, &a.1)).op_add(),
        )
        .forward(|a| &a.0 + &a.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            args.clone(),
            |a| &a.0 - &a.1,
            |a| Call((&a.0, &a.1)).op_sub(),
        )
        .forward(|a| &a.0 - &a.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(
            args.clone(),
            |a| &a.0 * &a.1,
            |a| Call((&a.0, &a.1)).op_mul(),
        )
        .forward(|a| &a.0 * &a.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        RuleTest::new(args, |a| &a.0 / &a.1, |a| Call((&a.0, &a.1)).op_div())
            .forward(|a| &a.0 / &a.1)
            .tolerance(T::RTOL, T::ATOL)
            .run();
        // vector first, and a column against a row: both operands are stretched
        RuleTest::new(
            (v.clone(), m),
            |a| &a.0 * &a.1,
            |a| Call((&a.0, &a.1)).op_mul(),
        )
        .forward(|a| &a.0 * &a.1)
        .tolerance(T::RTOL, T::ATOL)
        .run();
        let col: Array2<T> = random(Ix2(3, 1), 5);
        let row: Array2<T> = away_from_zero(random(Ix2(1, 4), 6));
        RuleTest::new((col, row), |a| &a.0 / &a.1, |a| Call((&a.0, &a.1)).op_div())
            .forward(|a| &a.0 / &a.1)
            .tolerance(T::RTOL, T::ATOL)
            .run();
    }

    #[test]
    fn array_array_broadcasting() {
        broadcasting::<f64>();
        broadcasting::<f32>();
    }

    fn with_scalar<T: TestElem>() {
        for shape in [Ix2(1, 1), Ix2(0, 2), Ix2(2, 3)] {
            for (_, x) in layouts::<T, _>(shape, 7) {
                let x = away_from_zero(x);
                let s = T::of_f64(1.7);
                let args = (x, s);
                macro_rules! both_orders {
                    ($op:tt, $method:ident) => {
                        RuleTest::new(args.clone(), |a| a.0.mapv(|v| v $op a.1), |a| Call((&a.0, &a.1)).$method())
.forward(|a| a.0.mapv(|v| v $op a.1))
                            .tolerance(T::RTOL, T::ATOL)
                            .expect_no_alloc()
                            .run();
                        RuleTest::new((args.1, args.0.clone()), |a| a.1.mapv(|v| a.0 $op v), |a| Call((&a.0, &a.1)).$method())
.forward(|a| a.1.mapv(|v| a.0 $op v))
                            .tolerance(T::RTOL, T::ATOL)
                            .expect_no_alloc()
                            .run();
                    };
                }
                both_orders!(+, op_add);
                both_orders!(-, op_sub);
                both_orders!(*, op_mul);
                both_orders!(/, op_div);
            }
        }
    }

    #[test]
    fn array_scalar_both_orders() {
        with_scalar::<f64>();
        with_scalar::<f32>();
    }

    #[test]
    fn negation() {
        for (_, x) in layouts::<f64, _>(Ix2(3, 2), 8) {
            RuleTest::new((x,), |a| -&a.0, |a| Call((&a.0,)).op_neg())
                .forward(|a| -&a.0)
                .expect_no_alloc()
                .run();
        }
        RuleTest::new(
            (random::<f32, _>(Ix1(5), 9),),
            |a| -&a.0,
            |a| Call((&a.0,)).op_neg(),
        )
        .forward(|a| -&a.0)
        .tolerance(f32::RTOL, f32::ATOL)
        .run();
    }

    #[test]
    fn views_are_operands_too() {
        // A transposed view against an owned matrix: the rule sees a view.
        let a: Array2<f64> = random(Ix2(4, 3), 10);
        let b: Array2<f64> = random(Ix2(3, 4), 11);
        let (y, _) = Call((&a.t(), &b)).op_mul();
        assert_eq!(y, &a.t() * &b);
    }

    #[test]
    #[should_panic(expected = "incompatible shapes")]
    fn mismatched_shapes_panic_like_the_primal() {
        let a: Array2<f64> = random(Ix2(2, 3), 12);
        let b: Array2<f64> = random(Ix2(3, 2), 13);
        let _ = Call((&a, &b)).op_add();
    }

    /// The cotangents a pullback of `a ∘ b` adds into zeroed accumulators.
    fn pulled<P>(
        pb: P,
        dy: Array2<f64>,
        da: Array2<f64>,
        db: Array2<f64>,
    ) -> (Array2<f64>, Array2<f64>)
    where
        P: Pullback<Output = Array2<f64>, Args = (Array2<f64>, Array2<f64>)>,
    {
        let (mut da, mut db) = (da, db);
        pb.pullback(dy, (&mut da, &mut db));
        (da, db)
    }

    #[test]
    fn a_constant_operand_is_not_copied_and_gets_nothing() {
        let x: Array2<f64> = random(Ix2(3, 4), 20);
        let k = away_from_zero(random::<f64, _>(Ix2(3, 4), 21));
        let dy: Array2<f64> = random(Ix2(3, 4), 22);
        let zero = || Array2::<f64>::zeros((3, 4));
        // array · constant scalar, constant scalar · array, array / constant scalar
        let (y, pb) = KeepCall::<_, 1>::new(Call((&x, &0.5)))
            .keep_op_mul()
            .op_mul();
        assert_eq!(y, &x * 0.5);
        assert!(
            pb.0.array.is_none(),
            "no copy of the array for the constant's partial"
        );
        let (mut dx, mut ds) = (zero(), 0.0);
        pb.pullback(dy.clone(), (&mut dx, &mut ds));
        assert_eq!((dx, ds), (&dy * 0.5, 0.0));
        let (y, pb) = KeepCall::<_, 0>::new(Call((&2.0, &x)))
            .keep_op_mul()
            .op_mul();
        assert_eq!(y, &x * 2.0);
        assert!(pb.0.array.is_none());
        let (mut ds, mut dx) = (0.0, zero());
        pb.pullback(dy.clone(), (&mut ds, &mut dx));
        assert_eq!((dx, ds), (&dy * 2.0, 0.0));
        let (y, pb) = KeepCall::<_, 1>::new(Call((&x, &4.0)))
            .keep_op_div()
            .op_div();
        assert_eq!(y, &x / 4.0);
        assert!(pb.0.array.is_none());
        let (mut dx, mut ds) = (zero(), 0.0);
        pb.pullback(dy.clone(), (&mut dx, &mut ds));
        assert_eq!((dx, ds), (&dy / 4.0, 0.0));
        // Two arrays, one constant: only the constant is copied, for the other's partial.
        let (y, pb) = KeepCall::<_, 0>::new(Call((&k, &x))).keep_op_mul().op_mul();
        assert_eq!(y, &k * &x);
        assert!(pb.a.is_some() && pb.b.is_none());
        assert_eq!(pulled(pb, dy.clone(), zero(), zero()), (zero(), &dy * &k));
        let (y, pb) = KeepCall::<_, 1>::new(Call((&x, &k))).keep_op_mul().op_mul();
        assert_eq!(y, &x * &k);
        assert!(pb.a.is_none() && pb.b.is_some());
        assert_eq!(pulled(pb, dy.clone(), zero(), zero()), (&dy * &k, zero()));
        let (y, pb) = KeepCall::<_, 1>::new(Call((&x, &k))).keep_op_div().op_div();
        assert_eq!(y, &x / &k);
        assert!(pb.a.is_none() && pb.b.is_some());
        assert_eq!(pulled(pb, dy.clone(), zero(), zero()), (&dy / &k, zero()));
        // The active operand's cotangent is the whole rule's.
        let (_, whole) = Call((&x, &k)).op_div();
        assert_eq!(pulled(whole, dy.clone(), zero(), zero()).0, &dy / &k);
    }

    #[test]
    fn the_same_array_twice_is_copied_once() {
        let e: Array2<f64> = random(Ix2(4, 4), 23);
        let dy: Array2<f64> = random(Ix2(4, 4), 24);
        let zero = || Array2::<f64>::zeros((4, 4));
        let (y, pb) = Call((&e, &e)).op_mul();
        assert_eq!(y, &e * &e);
        assert!(pb.a.is_some() && pb.b.is_none(), "one copy");
        let (da, db) = pulled(pb, dy.clone(), zero(), zero());
        assert_eq!((&da, &db), (&(&dy * &e), &(&dy * &e)));
        let (_, pb) = Call((&e, &e)).op_div();
        let (da, db) = pulled(pb, dy.clone(), zero(), zero());
        assert_eq!(da, &dy / &e);
        assert_eq!(db, -(&dy * &e) / (&e * &e));
        // The same buffer read another way (its transpose) is another operand.
        let (y, pb) = Call((&e, &e.t())).op_mul();
        assert_eq!(y, &e * &e.t());
        assert!(pb.a.is_some() && pb.b.is_some());
        let (da, db) = pulled(pb, dy.clone(), zero(), zero());
        assert_eq!(da, &dy * &e.t());
        assert_eq!(db, &dy * &e);
    }
}
