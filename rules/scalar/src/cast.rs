//! `x as f64` and `x as f32`, from floats and from every integer type; and `x as T`
//! for a type the macro cannot read as a float or an integer (an alias, `type Real =
//! f64;`, or a path, `std::primitive::f64`), whose rule is chosen by the type.

use mochi_core::kit::rule_trait;
use mochi_core::{Call, NoTangent, Pullback};

rule_trait! {
    /// `x as f64`. From a float: d/dx = 1 (the cotangent is cast back); from an integer:
    /// no tangent.
    AsF64Rule::op_as_f64
}

rule_trait! {
    /// `x as f32`. From a float: d/dx = 1 (the cotangent is cast back, so an `f64`
    /// argument receives the `f32` cotangent widened); from an integer: no tangent.
    AsF32Rule::op_as_f32
}

/// The pullback of a cast between float types: adds `ȳ` cast back to the source type.
#[derive(Clone, Copy, Debug, Default)]
pub struct CastPullback<From, To>(std::marker::PhantomData<fn(To) -> From>);

macro_rules! float_casts {
    ($($Trait:ident :: $method:ident: $from:ident => $to:ident;)*) => {$(
        impl $Trait for Call<(&$from,)> {
            type Output = $to;
            type Pullback = CastPullback<$from, $to>;
            #[inline(always)]
            fn $method(self) -> ($to, Self::Pullback) {
                (*self.0 .0 as $to, CastPullback(std::marker::PhantomData))
            }
        }
        impl Pullback for CastPullback<$from, $to> {
            type Output = $to;
            type Args = ($from,);
            #[inline(always)]
            fn pullback(self, dy: $to, (dx,): (&mut $from,)) {
                *dx += dy as $from;
            }
        }
    )*};
}

float_casts! {
    AsF64Rule::op_as_f64: f64 => f64;
    AsF64Rule::op_as_f64: f32 => f64;
    AsF32Rule::op_as_f32: f64 => f32;
    AsF32Rule::op_as_f32: f32 => f32;
}

macro_rules! integer_casts {
    ($($from:ident),*) => {$(
        impl AsF64Rule for Call<(&$from,)> {
            type Output = f64;
            type Pullback = InactiveCastPullback<f64>;
            #[inline(always)]
            fn op_as_f64(self) -> (f64, Self::Pullback) {
                (*self.0 .0 as f64, InactiveCastPullback(std::marker::PhantomData))
            }
        }
        impl AsF32Rule for Call<(&$from,)> {
            type Output = f32;
            type Pullback = InactiveCastPullback<f32>;
            #[inline(always)]
            fn op_as_f32(self) -> (f32, Self::Pullback) {
                (*self.0 .0 as f32, InactiveCastPullback(std::marker::PhantomData))
            }
        }
    )*};
}

integer_casts!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

/// `x as T` with `T` named by an alias or a path: `Call((&x,)).op_as(PhantomData::<T>)`,
/// the rule of the cast between the types the alias stands for (`f64`/`f32` from a
/// float: d/dx = 1; from an integer, or to an integer: no tangent).
pub trait AsTypeRule<To> {
    /// The cast value.
    type Output;
    /// Its pullback.
    type Pullback;
    /// The cast and its pullback.
    fn op_as(self, to: std::marker::PhantomData<To>) -> (Self::Output, Self::Pullback);
}

macro_rules! typed_float_casts {
    ($($from:ident => $to:ident;)*) => {$(
        impl AsTypeRule<$to> for Call<(&$from,)> {
            type Output = $to;
            type Pullback = CastPullback<$from, $to>;
            #[inline(always)]
            fn op_as(self, _: std::marker::PhantomData<$to>) -> ($to, Self::Pullback) {
                (*self.0 .0 as $to, CastPullback(std::marker::PhantomData))
            }
        }
    )*};
}

typed_float_casts! {
    f64 => f64;
    f32 => f64;
    f64 => f32;
    f32 => f32;
}

macro_rules! typed_integer_casts {
    ($($int:ident),*) => {$(
        impl AsTypeRule<f64> for Call<(&$int,)> {
            type Output = f64;
            type Pullback = InactiveCastPullback<f64>;
            #[inline(always)]
            fn op_as(self, _: std::marker::PhantomData<f64>) -> (f64, Self::Pullback) {
                (*self.0 .0 as f64, InactiveCastPullback(std::marker::PhantomData))
            }
        }
        impl AsTypeRule<f32> for Call<(&$int,)> {
            type Output = f32;
            type Pullback = InactiveCastPullback<f32>;
            #[inline(always)]
            fn op_as(self, _: std::marker::PhantomData<f32>) -> (f32, Self::Pullback) {
                (*self.0 .0 as f32, InactiveCastPullback(std::marker::PhantomData))
            }
        }
        impl AsTypeRule<$int> for Call<(&f64,)> {
            type Output = $int;
            type Pullback = ToIntegerPullback<f64>;
            #[inline(always)]
            fn op_as(self, _: std::marker::PhantomData<$int>) -> ($int, Self::Pullback) {
                (*self.0 .0 as $int, ToIntegerPullback(std::marker::PhantomData))
            }
        }
        impl AsTypeRule<$int> for Call<(&f32,)> {
            type Output = $int;
            type Pullback = ToIntegerPullback<f32>;
            #[inline(always)]
            fn op_as(self, _: std::marker::PhantomData<$int>) -> ($int, Self::Pullback) {
                (*self.0 .0 as $int, ToIntegerPullback(std::marker::PhantomData))
            }
        }
    )*};
}

typed_integer_casts!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

/// The pullback of a float-to-integer cast: the integer has no cotangent, so the float
/// gets nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToIntegerPullback<From>(std::marker::PhantomData<fn(From)>);

impl<From: mochi_core::TangentVector> Pullback for ToIntegerPullback<From> {
    type Output = NoTangent;
    type Args = (From,);
    #[inline(always)]
    fn pullback(self, _dy: NoTangent, _args: (&mut From,)) {}
}

/// The pullback of an integer-to-float cast: the float output has a cotangent, the
/// integer argument has none, so there is nothing to add.
#[derive(Clone, Copy, Debug, Default)]
pub struct InactiveCastPullback<To>(std::marker::PhantomData<fn(To)>);

impl<To: mochi_core::TangentVector> Pullback for InactiveCastPullback<To> {
    type Output = To;
    type Args = (NoTangent,);
    #[inline(always)]
    fn pullback(self, _dy: To, _args: (&mut NoTangent,)) {}
}

#[cfg(test)]
mod tests {
    use crate::rules::*;
    use mochi_core::testing::{test_rule, RuleTest};
    use mochi_core::{Call, NoTangent, Pullback};

    #[test]
    fn float_casts() {
        for x in [-2.5_f64, 0.0, 1.0 / 3.0, 1e30] {
            test_rule((x,), |a| a.0, |a| Call((&a.0,)).op_as_f64());
            // f64 → f32 rounds: compared with finite differences of the rounded value.
            RuleTest::new((x,), |a| a.0 as f32, |a| Call((&a.0,)).op_as_f32())
                .tolerance(1e-3, 0.0)
                .run();
            test_rule((x as f32,), |a| a.0 as f64, |a| Call((&a.0,)).op_as_f64());
            test_rule((x as f32,), |a| a.0, |a| Call((&a.0,)).op_as_f32());
        }
    }

    #[test]
    fn integer_casts_have_no_tangent_on_the_integer() {
        test_rule((7_i32,), |a| a.0 as f64, |a| Call((&a.0,)).op_as_f64());
        test_rule((u64::MAX,), |a| a.0 as f32, |a| Call((&a.0,)).op_as_f32());
        let (y, pb) = Call((&-3_i8,)).op_as_f64();
        assert_eq!(y, -3.0);
        pb.pullback(1.0, (&mut NoTangent,));
        let (y, _) = Call((&300_usize,)).op_as_f32();
        assert_eq!(y, 300.0);
    }

    /// `x as Real` with `type Real = f64`: the same rule as `x as f64`, chosen by the
    /// type the alias stands for.
    #[test]
    fn casts_to_an_alias() {
        type Real = f64;
        type Single = f32;
        type Index = usize;
        use std::marker::PhantomData;
        for x in [-2.5_f64, 1.0 / 3.0] {
            test_rule(
                (x,),
                |a| a.0 as Real,
                |a| Call((&a.0,)).op_as(PhantomData::<Real>),
            );
            RuleTest::new(
                (x,),
                |a| a.0 as Single,
                |a| Call((&a.0,)).op_as(PhantomData::<Single>),
            )
            .tolerance(1e-3, 0.0)
            .run();
        }
        let (k, pb) = Call((&3.7_f64,)).op_as(PhantomData::<Index>);
        assert_eq!(k, 3);
        let mut dx = 0.0;
        pb.pullback(NoTangent, (&mut dx,));
        assert_eq!(dx, 0.0);
        let (y, _) = Call((&5_u32,)).op_as(PhantomData::<Real>);
        assert_eq!(y, 5.0);
    }

    #[test]
    fn narrowing_sends_the_cotangent_back_widened() {
        let (y, pb) = Call((&0.1_f64,)).op_as_f32();
        let mut dx = 1.0_f64;
        pb.pullback(0.5_f32, (&mut dx,));
        assert_eq!(y, 0.1_f32);
        assert_eq!(dx, 1.5); // 1 + 0.5·d(x as f32)/dx, d/dx = 1
    }
}
