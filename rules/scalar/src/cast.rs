//! `x as f64` and `x as f32`, from floats and from every integer type.

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

    #[test]
    fn narrowing_sends_the_cotangent_back_widened() {
        let (y, pb) = Call((&0.1_f64,)).op_as_f32();
        let mut dx = 1.0_f64;
        pb.pullback(0.5_f32, (&mut dx,));
        assert_eq!(y, 0.1_f32);
        assert_eq!(dx, 1.5); // 1 + 0.5·d(x as f32)/dx, d/dx = 1
    }
}
