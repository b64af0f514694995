//! The rule contract.
//!
//! A *rule* for an operation `y = f(a, b, …)` is a forward function that returns the
//! primal value `y` together with a *pullback*: a value that, given the cotangent
//! `ȳ`, adds `∂f/∂a ᵀ ȳ` into the cotangent accumulator of `a`, `∂f/∂b ᵀ ȳ` into that
//! of `b`, and so on. Every rule — hand-written in a rule crate or derived by
//! `#[differentiable]` — has this one shape, so derived rules can call any rule.
//!
//! Rules are found statically:
//! - an operator or method call `a.op(b, …)` in differentiable code becomes
//!   `Call((&a, &b, …)).op()`: a method on [`Call`], provided by a trait of a rule crate
//!   that is in scope. A rule crate adds a rule for a new method by implementing its
//!   own trait for `Call<(&T, …)>` (a local trait, so no orphan rule stands in the way);
//! - a call to a free function `f(a, b)` becomes `f::rrule(a, b)`: the rule lives in a
//!   module named like the function (what `#[differentiable]` generates, and what a rule
//!   author writes by hand for a primitive).
//!
//! See `design-docs/rule-system.md`.

/// The argument list of a rule call: `Call((&a, &b))` for the operation on `a` and `b`.
///
/// Rule crates implement their rule traits for `Call<(&A, &B, …)>`. A missing rule is a
/// compile error naming the method and this type, e.g. ``no method named `lgamma` found
/// for struct `Call<(&f64,)>` ``.
///
/// ```
/// use mochi_core::{Call, NoTangent, Pullback};
///
/// // A rule crate's own trait: the rule for `x.cube()` on f64.
/// pub trait CubeRule {
///     type Pullback: Pullback<Output = f64, Args = (f64,)>;
///     fn cube(self) -> (f64, Self::Pullback);
/// }
/// pub struct CubePullback(f64);
/// impl Pullback for CubePullback {
///     type Output = f64;
///     type Args = (f64,);
///     fn pullback(self, dy: f64, (dx,): (&mut f64,)) {
///         *dx += 3.0 * self.0 * self.0 * dy; // d(x³)/dx = 3x²
///     }
/// }
/// impl CubeRule for Call<(&f64,)> {
///     type Pullback = CubePullback;
///     fn cube(self) -> (f64, CubePullback) {
///         let x = *self.0 .0;
///         (x * x * x, CubePullback(x))
///     }
/// }
///
/// let (y, pb) = Call((&2.0_f64,)).cube();
/// let mut dx = 0.0;
/// pb.pullback(1.0, (&mut dx,));
/// assert_eq!((y, dx), (8.0, 12.0));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Call<A>(pub A);

/// `x[a..b].try_into()` of a slice into an array (`let [p, q]: [f64; 2] =
/// x[..2].try_into().unwrap();`): the array, or the error of a length that is not `N`.
///
/// An inherent method, not a rule crate's trait: std's blanket `TryInto` (in the
/// prelude) would otherwise answer for `Call` itself. The pullback adds the array's
/// cotangent into the slice's, element by element.
impl<T: Copy + crate::Tangent> Call<(&[T],)> {
    /// The rule of `<[T; N]>::try_from(slice)`.
    #[inline]
    #[allow(clippy::should_implement_trait, clippy::type_complexity)]
    pub fn try_into<const N: usize>(
        self,
    ) -> (
        Result<[T; N], core::array::TryFromSliceError>,
        SliceToArrayPullback<T::Tangent, N>,
    ) {
        (
            <[T; N]>::try_from(self.0 .0),
            SliceToArrayPullback(std::marker::PhantomData),
        )
    }
}

/// `v.try_into()` of a `Vec` into an array (the `Vec`'s cotangent is a `Vec` as a
/// slice's is): as [`Call::try_into`] of its slice, the `Vec` given back on a wrong length.
impl<T: Copy + crate::Tangent> Call<(&Vec<T>,)> {
    /// The rule of `<[T; N]>::try_from(vec)`.
    #[inline]
    #[allow(clippy::should_implement_trait, clippy::type_complexity)]
    pub fn try_into<const N: usize>(
        self,
    ) -> (Result<[T; N], Vec<T>>, SliceToArrayPullback<T::Tangent, N>) {
        (
            <[T; N]>::try_from(self.0 .0.clone()),
            SliceToArrayPullback(std::marker::PhantomData),
        )
    }
}

/// The pullback of [`Call::try_into`]: the array's cotangent is the slice's.
#[derive(Clone, Copy, Debug)]
pub struct SliceToArrayPullback<D, const N: usize>(std::marker::PhantomData<D>);

impl<D: crate::TangentVector, const N: usize> Pullback for SliceToArrayPullback<D, N> {
    type Output = [D; N];
    type Args = (Vec<D>,);
    #[inline]
    fn pullback(self, dy: [D; N], (dx,): (&mut Vec<D>,)) {
        if dx.is_empty() {
            *dx = dy.into();
            return;
        }
        for (d, y) in dx.iter_mut().zip(dy) {
            d.accumulate(y);
        }
    }
}

/// Tuples of cotangent accumulators, and how to borrow each of them mutably.
///
/// `(Vec<f64>, f64)` borrows as `(&mut Vec<f64>, &mut f64)`: the form a pullback takes.
pub trait Accumulators {
    /// The tuple of mutable borrows.
    type Mut<'a>
    where
        Self: 'a;
    /// Borrows every component mutably.
    fn as_mut(&mut self) -> Self::Mut<'_>;
}

macro_rules! tuple_accumulators {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: crate::TangentVector),+> Accumulators for ($($T,)+) {
            type Mut<'a> = ($(&'a mut $T,)+) where Self: 'a;
            #[inline(always)]
            fn as_mut(&mut self) -> Self::Mut<'_> {
                ($(&mut self.$i,)+)
            }
        }
    )*};
}
tuple_accumulators! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// The reverse half of a rule.
///
/// `pullback(ȳ, (ā, b̄, …))` **adds** the cotangent contribution of this operation to
/// every argument accumulator (never overwrites: an argument used twice collects
/// both contributions). An accumulator may hold the structural zero
/// ([`TangentVector::zero`](crate::TangentVector::zero)); accumulating into it must
/// work (the helpers of [`TangentVector`](crate::TangentVector) do).
///
/// A pullback owns what it needs (copies of scalars, owned arrays, shapes); it does not
/// borrow the primal arguments, so a derived rule can keep it past the forward sweep.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a pullback",
    label = "a rule must return (value, pullback) where the pullback implements `mochi::Pullback`"
)]
pub trait Pullback {
    /// The cotangent type of the operation's output.
    type Output;
    /// The tuple of the arguments' cotangent types, in argument order.
    type Args: Accumulators;
    /// Adds the arguments' cotangents given the output's.
    fn pullback(self, output: Self::Output, args: <Self::Args as Accumulators>::Mut<'_>);
}

/// A pullback made from a closure; what `#[differentiable]` wraps its reverse sweep in.
pub struct FnPullback<F, O, A> {
    f: F,
    _types: std::marker::PhantomData<fn(O, A)>,
}

impl<F, O, A> FnPullback<F, O, A>
where
    A: Accumulators,
    F: for<'a> FnOnce(O, <A as Accumulators>::Mut<'a>),
{
    /// Wraps `f` as a pullback with output cotangent `O` and argument cotangents `A`.
    #[inline(always)]
    pub fn new(f: F) -> Self {
        FnPullback {
            f,
            _types: std::marker::PhantomData,
        }
    }
}

impl<F, O, A> Pullback for FnPullback<F, O, A>
where
    A: Accumulators,
    F: for<'a> FnOnce(O, <A as Accumulators>::Mut<'a>),
{
    type Output = O;
    type Args = A;
    #[inline(always)]
    fn pullback(self, output: O, args: <A as Accumulators>::Mut<'_>) {
        (self.f)(output, args)
    }
}

/// A boxed pullback, for rules whose pullback type would otherwise be infinite
/// (recursive functions).
#[allow(clippy::type_complexity)]
pub struct BoxedPullback<O, A: Accumulators> {
    f: Box<dyn for<'a> FnOnce(O, <A as Accumulators>::Mut<'a>)>,
}

impl<O, A: Accumulators> BoxedPullback<O, A> {
    /// Boxes any pullback with the same output and argument cotangents.
    pub fn new<P>(pb: P) -> Self
    where
        P: Pullback<Output = O, Args = A> + 'static,
    {
        BoxedPullback {
            f: Box::new(move |o, a| pb.pullback(o, a)),
        }
    }
}

impl<O, A: Accumulators> Pullback for BoxedPullback<O, A> {
    type Output = O;
    type Args = A;
    fn pullback(self, output: O, args: <A as Accumulators>::Mut<'_>) {
        (self.f)(output, args)
    }
}

macro_rules! pullback_constructors {
    ($($name:ident ($($A:ident $a:ident),+);)*) => {$(
        /// Makes a pullback of a closure taking the output cotangent and a tuple of
        /// `&mut` argument accumulators (what `#[differentiable]` generates).
        #[inline(always)]
        pub fn $name<F, O, $($A: crate::TangentVector),+>(f: F) -> FnPullback<F, O, ($($A,)+)>
        where
            F: FnOnce(O, ($(&mut $A,)+)),
        {
            FnPullback {
                f,
                _types: std::marker::PhantomData,
            }
        }
    )*};
}
pullback_constructors! {
    pullback1(A a);
    pullback2(A a, B b);
    pullback3(A a, B b, C c);
    pullback4(A a, B b, C c, D d);
    pullback5(A a, B b, C c, D d, E e);
    pullback6(A a, B b, C c, D d, E e, G g);
    pullback7(A a, B b, C c, D d, E e, G g, H h);
    pullback8(A a, B b, C c, D d, E e, G g, H h, I i);
    pullback9(A a, B b, C c, D d, E e, G g, H h, I i, J j);
    pullback10(A a, B b, C c, D d, E e, G g, H h, I i, J j, K k);
    pullback11(A a, B b, C c, D d, E e, G g, H h, I i, J j, K k, L l);
    pullback12(A a, B b, C c, D d, E e, G g, H h, I i, J j, K k, L l, M m);
}

/// The value a missing rule's fallback gives (`#[differentiable]`'s missing-rule error,
/// `lower/norule.rs` in the macros): the type of the call's first argument, the
/// receiver of the method the user wrote (`x.erf()` of an `f64` gives an `f64`). With
/// it, the code after the call type-checks as written, so the missing rule is the one
/// error, instead of a cascade of "multiple applicable items" and mismatched types
/// about a value whose type nothing fixes. Implemented for the argument tuples rule
/// calls pass: references, the first one first.
pub trait FirstArg {
    /// The first argument's type, behind its reference.
    type Value;
}

macro_rules! first_arg {
    ($($rest:ident)*) => {
        impl<'a, T, $($rest),*> FirstArg for (&'a T, $($rest,)*) {
            type Value = T;
        }
        impl<'a, T, $($rest),*> FirstArg for (&'a mut T, $($rest,)*) {
            type Value = T;
        }
    };
}
first_arg!();
first_arg!(B);
first_arg!(B C);
first_arg!(B C D);
first_arg!(B C D E);
first_arg!(B C D E F);
first_arg!(B C D E F G);
first_arg!(B C D E F G H);
first_arg!(B C D E F G H I);
first_arg!(B C D E F G H I J);
first_arg!(B C D E F G H I J K);
first_arg!(B C D E F G H I J K L);
first_arg!(B C D E F G H I J K L M);
first_arg!(B C D E F G H I J K L M N);
first_arg!(B C D E F G H I J K L M N O);
first_arg!(B C D E F G H I J K L M N O P);
