//! The dual number type [`Dual`] and its arithmetic operators.
//!
//! Every operator follows one convention for tangents: a partial that is exactly zero
//! is a *structural zero* (the value does not move in that direction), and multiplying
//! it by any derivative, even an infinite or NaN one, gives zero (see `scale`). So a
//! constant stays a constant whatever it meets, and a singular derivative poisons only
//! the directions that really move the input. Where the primal of a nonlinear operation
//! is NaN, every moving direction is NaN too (`+`, `−` and negation pass partials
//! through unchanged).

use std::cmp::Ordering;
use std::iter::{Product, Sum};
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

use num_traits::{One, Zero};

/// A dual number: a primal `value` and its `N` partial derivatives.
///
/// `Dual<N>` is `value + Σᵢ partials[i]·εᵢ` with `εᵢ·εⱼ = 0`, so evaluating a function
/// on it carries `N` directional derivatives along with the value. Comparisons
/// (`==`, `<`, …) look at the value only, so control flow on duals takes the same branch
/// as on `f64`.
///
/// The elementary functions (`sin`, `sqrt`, `powf`, …) come from the [`Real`] trait.
///
/// ```
/// use mochi_core::{Dual, Real};
/// let x = Dual::<2>::variable(3.0, 0); // ∂/∂x
/// let y = Dual::<2>::variable(2.0, 1); // ∂/∂y
/// let z = x * y + x.sin();
/// assert_eq!(z.value, 6.0 + 3.0_f64.sin());
/// assert_eq!(z.partials, [2.0 + 3.0_f64.cos(), 3.0]); // ∂z/∂x = y + cos x, ∂z/∂y = x
/// ```
///
/// [`Real`]: crate::Real
#[derive(Clone, Copy, Debug)]
pub struct Dual<const N: usize> {
    /// The primal value.
    pub value: f64,
    /// The partial derivatives of `value`, one per seeded direction.
    pub partials: [f64; N],
}

/// The value, formatted as an `f64` is (precision and width included): a function's
/// generic form prints what the function prints.
///
/// ```
/// use mochi_core::Dual;
/// assert_eq!(format!("{:.2}", Dual::new(1.5, [1.0])), "1.50");
/// ```
impl<const N: usize> core::fmt::Display for Dual<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.value, f)
    }
}

impl<const N: usize> Dual<N> {
    /// A dual with the given value and partials.
    ///
    /// ```
    /// use mochi_core::Dual;
    /// let d = Dual::new(1.5, [1.0, -2.0]);
    /// assert_eq!((d.value, d.partials), (1.5, [1.0, -2.0]));
    /// ```
    #[inline]
    pub const fn new(value: f64, partials: [f64; N]) -> Self {
        Self { value, partials }
    }

    /// A constant: every partial is zero.
    ///
    /// ```
    /// use mochi_core::Dual;
    /// let c = Dual::<3>::constant(2.0);
    /// assert_eq!((c.value, c.partials), (2.0, [0.0; 3]));
    /// ```
    #[inline]
    pub const fn constant(value: f64) -> Self {
        Self {
            value,
            partials: [0.0; N],
        }
    }

    /// The `index`-th input variable: partial `index` is one, the others zero.
    ///
    /// # Panics
    /// If `index >= N` (there is no such direction).
    ///
    /// ```
    /// use mochi_core::Dual;
    /// let x = Dual::<3>::variable(0.5, 1);
    /// assert_eq!((x.value, x.partials), (0.5, [0.0, 1.0, 0.0]));
    /// ```
    #[inline]
    #[track_caller]
    pub fn variable(value: f64, index: usize) -> Self {
        assert!(
            index < N,
            "Dual::<{N}>::variable: direction {index} does not exist (a Dual<{N}> has directions 0..{N}); \
             use a wider Dual or a smaller index"
        );
        let mut partials = [0.0; N];
        partials[index] = 1.0;
        Self { value, partials }
    }

    /// `value` with partials `self.partials · derivative` (the chain rule for a function of
    /// one argument whose derivative at `self.value` is `derivative`).
    ///
    /// Where the primal `value` is NaN (outside the domain) the derivative is NaN too.
    #[inline]
    pub(crate) fn chain(self, value: f64, derivative: f64) -> Self {
        let derivative = if value.is_nan() { f64::NAN } else { derivative };
        Self {
            value,
            partials: self.partials.map(|p| scale(p, derivative)),
        }
    }

    /// `value` with partials `a.partials · da + b.partials · db` (the chain rule for a
    /// function of two arguments).
    #[inline]
    pub(crate) fn chain2(a: Self, b: Self, value: f64, da: f64, db: f64) -> Self {
        let (da, db) = if value.is_nan() {
            (f64::NAN, f64::NAN)
        } else {
            (da, db)
        };
        Self {
            value,
            partials: std::array::from_fn(|i| scale(a.partials[i], da) + scale(b.partials[i], db)),
        }
    }

    /// A value with every partial zero, for piecewise-constant functions (`floor`,
    /// `signum`, …): the output does not move whatever the input partials are.
    #[inline]
    pub(crate) fn flat(value: f64) -> Self {
        Self::constant(value)
    }
}

/// `partial · derivative`, where a zero partial is a structural zero: it stays zero even
/// when the derivative is infinite or NaN.
#[inline]
pub(crate) fn scale(partial: f64, derivative: f64) -> f64 {
    if partial == 0.0 {
        0.0
    } else {
        partial * derivative
    }
}

impl<const N: usize> Default for Dual<N> {
    /// The constant zero.
    #[inline]
    fn default() -> Self {
        Self::constant(0.0)
    }
}

impl<const N: usize> From<f64> for Dual<N> {
    /// The constant `value`.
    #[inline]
    fn from(value: f64) -> Self {
        Self::constant(value)
    }
}

impl<const N: usize> PartialEq for Dual<N> {
    /// Compares values only.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<const N: usize> PartialOrd for Dual<N> {
    /// Orders by value only.
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl<const N: usize> PartialEq<f64> for Dual<N> {
    #[inline]
    fn eq(&self, other: &f64) -> bool {
        self.value == *other
    }
}

impl<const N: usize> PartialOrd<f64> for Dual<N> {
    #[inline]
    fn partial_cmp(&self, other: &f64) -> Option<Ordering> {
        self.value.partial_cmp(other)
    }
}

impl<const N: usize> Neg for Dual<N> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self {
            value: -self.value,
            partials: self.partials.map(|p| -p),
        }
    }
}

impl<const N: usize> Neg for &Dual<N> {
    type Output = Dual<N>;
    #[inline]
    fn neg(self) -> Dual<N> {
        -*self
    }
}

impl<const N: usize> Add for Dual<N> {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        Self {
            value: self.value + rhs.value,
            partials: std::array::from_fn(|i| self.partials[i] + rhs.partials[i]),
        }
    }
}

impl<const N: usize> Sub for Dual<N> {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        Self {
            value: self.value - rhs.value,
            partials: std::array::from_fn(|i| self.partials[i] - rhs.partials[i]),
        }
    }
}

impl<const N: usize> Mul for Dual<N> {
    type Output = Self;
    /// `d(ab) = b·da + a·db`.
    #[inline]
    fn mul(self, rhs: Self) -> Self {
        Self::chain2(self, rhs, self.value * rhs.value, rhs.value, self.value)
    }
}

impl<const N: usize> Div for Dual<N> {
    type Output = Self;
    /// `d(a/b) = da/b − (a/b)·db/b`.
    #[inline]
    fn div(self, rhs: Self) -> Self {
        let quotient = self.value / rhs.value;
        let inverse = 1.0 / rhs.value;
        Self::chain2(self, rhs, quotient, inverse, -quotient * inverse)
    }
}

impl<const N: usize> Rem for Dual<N> {
    type Output = Self;
    /// `a % b = a − b·trunc(a/b)`, so `d(a % b) = da − trunc(a/b)·db` (the jumps of
    /// `trunc` have measure zero).
    #[inline]
    fn rem(self, rhs: Self) -> Self {
        let quotient = (self.value / rhs.value).trunc();
        Self::chain2(self, rhs, self.value % rhs.value, 1.0, -quotient)
    }
}

/// `Dual ∘ f64`, `f64 ∘ Dual` and the compound assignments, by lifting the `f64` to a
/// constant dual (exact: a constant's partials are structural zeros).
macro_rules! mixed_and_assign {
    ($($op:ident $method:ident $rev:ident $assign:ident $assign_method:ident),* $(,)?) => {$(
        impl<const N: usize> $op<f64> for Dual<N> {
            type Output = Self;
            #[inline]
            fn $method(self, rhs: f64) -> Self {
                mixed::$method(self, rhs)
            }
        }

        impl<const N: usize> $op<Dual<N>> for f64 {
            type Output = Dual<N>;
            #[inline]
            fn $method(self, rhs: Dual<N>) -> Dual<N> {
                mixed::$rev(self, rhs)
            }
        }

        impl<const N: usize> $assign for Dual<N> {
            #[inline]
            fn $assign_method(&mut self, rhs: Self) {
                *self = $op::$method(*self, rhs);
            }
        }

        impl<const N: usize> $assign<f64> for Dual<N> {
            #[inline]
            fn $assign_method(&mut self, rhs: f64) {
                *self = $op::$method(*self, Self::constant(rhs));
            }
        }

        // Through references, as `f64` has them (`a * &b`, `&a + &b`, `s += &x`), so
        // that code written for `f64` runs on duals.
        impl<'a, const N: usize> $op<&'a Dual<N>> for Dual<N> {
            type Output = Self;
            #[inline]
            fn $method(self, rhs: &'a Dual<N>) -> Self {
                $op::$method(self, *rhs)
            }
        }

        impl<'a, const N: usize> $op<Dual<N>> for &'a Dual<N> {
            type Output = Dual<N>;
            #[inline]
            fn $method(self, rhs: Dual<N>) -> Dual<N> {
                $op::$method(*self, rhs)
            }
        }

        impl<'a, 'b, const N: usize> $op<&'b Dual<N>> for &'a Dual<N> {
            type Output = Dual<N>;
            #[inline]
            fn $method(self, rhs: &'b Dual<N>) -> Dual<N> {
                $op::$method(*self, *rhs)
            }
        }

        impl<'a, const N: usize> $assign<&'a Dual<N>> for Dual<N> {
            #[inline]
            fn $assign_method(&mut self, rhs: &'a Dual<N>) {
                *self = $op::$method(*self, *rhs);
            }
        }
    )*};
}

mixed_and_assign! {
    Add add add_rev AddAssign add_assign,
    Sub sub sub_rev SubAssign sub_assign,
    Mul mul mul_rev MulAssign mul_assign,
    Div div div_rev DivAssign div_assign,
    Rem rem rem_rev RemAssign rem_assign,
}

/// `Dual ∘ f64` and `f64 ∘ Dual` as one-argument chain rules: one scaling per partial
/// instead of the two a product of duals (with a constant's zero partials) takes. The
/// results equal those of lifting the `f64` to a constant dual, structural zeros and
/// `NaN`s included.
mod mixed {
    use super::Dual;

    #[inline]
    pub fn add<const N: usize>(a: Dual<N>, c: f64) -> Dual<N> {
        a.chain(a.value + c, 1.0)
    }
    #[inline]
    pub fn sub<const N: usize>(a: Dual<N>, c: f64) -> Dual<N> {
        a.chain(a.value - c, 1.0)
    }
    #[inline]
    pub fn mul<const N: usize>(a: Dual<N>, c: f64) -> Dual<N> {
        a.chain(a.value * c, c)
    }
    #[inline]
    pub fn div<const N: usize>(a: Dual<N>, c: f64) -> Dual<N> {
        a.chain(a.value / c, 1.0 / c)
    }
    #[inline]
    pub fn rem<const N: usize>(a: Dual<N>, c: f64) -> Dual<N> {
        a.chain(a.value % c, 1.0)
    }
    #[inline]
    pub fn add_rev<const N: usize>(c: f64, b: Dual<N>) -> Dual<N> {
        b.chain(c + b.value, 1.0)
    }
    #[inline]
    pub fn sub_rev<const N: usize>(c: f64, b: Dual<N>) -> Dual<N> {
        b.chain(c - b.value, -1.0)
    }
    #[inline]
    pub fn mul_rev<const N: usize>(c: f64, b: Dual<N>) -> Dual<N> {
        b.chain(c * b.value, c)
    }
    #[inline]
    pub fn div_rev<const N: usize>(c: f64, b: Dual<N>) -> Dual<N> {
        let quotient = c / b.value;
        b.chain(quotient, -quotient * (1.0 / b.value))
    }
    #[inline]
    pub fn rem_rev<const N: usize>(c: f64, b: Dual<N>) -> Dual<N> {
        b.chain(c % b.value, -(c / b.value).trunc())
    }
}

impl<const N: usize> Sum for Dual<N> {
    #[inline]
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::constant(0.0), Add::add)
    }
}

impl<'a, const N: usize> Sum<&'a Dual<N>> for Dual<N> {
    #[inline]
    fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
        iter.copied().sum()
    }
}

impl<const N: usize> Product for Dual<N> {
    #[inline]
    fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::constant(1.0), Mul::mul)
    }
}

impl<'a, const N: usize> Product<&'a Dual<N>> for Dual<N> {
    #[inline]
    fn product<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
        iter.copied().product()
    }
}

impl<const N: usize> Zero for Dual<N> {
    #[inline]
    fn zero() -> Self {
        Self::constant(0.0)
    }

    /// True for the additive identity only: value *and* partials zero (unlike `==`, which
    /// compares values), so code that skips zero terms never drops a tangent.
    #[inline]
    fn is_zero(&self) -> bool {
        self.value == 0.0 && self.partials.iter().all(|&p| p == 0.0)
    }
}

impl<const N: usize> One for Dual<N> {
    #[inline]
    fn one() -> Self {
        Self::constant(1.0)
    }

    /// True for the multiplicative identity only: value one and partials zero.
    #[inline]
    fn is_one(&self) -> bool {
        self.value == 1.0 && self.partials.iter().all(|&p| p == 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::finite_difference::scalar::{assert_close, check_partials};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    type Binary = fn(Dual<2>, Dual<2>) -> Dual<2>;

    const OPERATORS: [(&str, Binary); 5] = [
        ("+", |a, b| a + b),
        ("-", |a, b| a - b),
        ("*", |a, b| a * b),
        ("/", |a, b| a / b),
        ("%", |a, b| a % b),
    ];

    fn random_pair(rng: &mut StdRng) -> (f64, f64) {
        let a: f64 = rng.gen_range(-5.0..5.0);
        // Keep `b` away from zero so `/` and `%` are smooth around the point.
        let b: f64 = rng.gen_range(0.5..4.0) * if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
        (a, b)
    }

    fn is_near_rem_jump(a: f64, b: f64) -> bool {
        let q = a / b;
        (q - q.round()).abs() < 1e-3
    }

    #[test]
    fn operators_match_finite_differences() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0001);
        for (name, op) in OPERATORS {
            let mut checked = 0;
            while checked < 20 {
                let (a, b) = random_pair(&mut rng);
                if name == "%" && is_near_rem_jump(a, b) {
                    continue;
                }
                check_partials(name, |x: [Dual<2>; 2]| op(x[0], x[1]), [a, b]);
                checked += 1;
            }
        }
    }

    /// Checks `x OP c`, `c OP x`, `x OP= c` and `x OP= c.value` against the all-dual forms.
    macro_rules! check_mixed {
        ($x:expr, $c:expr, $op:tt, $assign:tt) => {{
            let (x, c): (Dual<2>, Dual<2>) = ($x, $c);
            let expected = x $op c;
            let mut assigned = x;
            assigned $assign c;
            let mut assigned_f64 = x;
            assigned_f64 $assign c.value;
            let forms = [("dual op f64", x $op c.value), ("op=", assigned), ("op= f64", assigned_f64)];
            for (form, got) in forms {
                assert_eq!(got.value.to_bits(), expected.value.to_bits(), "{} {form}", stringify!($op));
                assert_eq!(got.partials, expected.partials, "{} {form}", stringify!($op));
            }
            let (swapped, expected) = (c.value $op x, c $op x);
            assert_eq!(swapped.value.to_bits(), expected.value.to_bits(), "f64 {} dual", stringify!($op));
            assert_eq!(swapped.partials, expected.partials, "f64 {} dual", stringify!($op));
        }};
    }

    #[test]
    fn mixed_operators_and_assignments_agree_with_dual_operators() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0002);
        for _ in 0..20 {
            let (a, b) = random_pair(&mut rng);
            let x = Dual::new(a, [rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)]);
            let c = Dual::constant(b);
            check_mixed!(x, c, +, +=);
            check_mixed!(x, c, -, -=);
            check_mixed!(x, c, *, *=);
            check_mixed!(x, c, /, /=);
            check_mixed!(x, c, %, %=);
        }
    }

    #[test]
    fn negation_flips_value_and_partials() {
        let x = Dual::new(2.5, [1.0, -3.0]);
        let y = -x;
        assert_eq!((y.value, y.partials), (-2.5, [-1.0, 3.0]));
    }

    #[test]
    fn sum_and_product_follow_the_sum_and_product_rules() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0003);
        let xs: Vec<f64> = (0..6).map(|_| rng.gen_range(0.5..2.0)).collect();
        let sum = |d: [Dual<6>; 6]| d.iter().sum::<Dual<6>>();
        let product = |d: [Dual<6>; 6]| d.into_iter().product::<Dual<6>>();
        let x: [f64; 6] = xs.clone().try_into().unwrap();
        check_partials("sum", sum, x);
        check_partials("product", product, x);
        // ∂(Π xⱼ)/∂xᵢ = Π xⱼ / xᵢ
        let vars: [Dual<6>; 6] = std::array::from_fn(|i| Dual::variable(xs[i], i));
        let p: Dual<6> = vars.iter().product();
        let total: f64 = xs.iter().product();
        for (i, &xi) in xs.iter().enumerate() {
            assert_close(
                p.partials[i],
                total / xi,
                4.0 * f64::EPSILON * (total / xi).abs(),
                "∂Π/∂xᵢ",
            );
        }
        let empty: [Dual<2>; 0] = [];
        assert!(empty.iter().sum::<Dual<2>>().is_zero());
        assert!(empty.into_iter().product::<Dual<2>>().is_one());
    }

    #[test]
    fn comparisons_look_at_values_only() {
        let a = Dual::new(1.0, [5.0]);
        let b = Dual::new(1.0, [-5.0]);
        let c = Dual::new(2.0, [0.0]);
        assert_eq!(a, b);
        assert!(a < c && c > b && a <= b && a >= b);
        assert!(a == 1.0 && a < 2.0 && c > 1.5);
        let nan = Dual::<1>::constant(f64::NAN);
        assert_ne!(nan, nan);
        assert_eq!(nan.partial_cmp(&a), None);
    }

    #[test]
    fn zero_and_one_require_zero_partials() {
        assert!(Dual::<2>::zero().is_zero());
        assert!(Dual::<2>::one().is_one());
        assert!(!Dual::<2>::variable(0.0, 0).is_zero());
        assert!(!Dual::<2>::variable(1.0, 1).is_one());
        assert_eq!(Dual::<2>::default().partials, [0.0; 2]);
        let from: Dual<2> = 3.0.into();
        assert_eq!((from.value, from.partials), (3.0, [0.0; 2]));
    }

    #[test]
    fn constants_stay_constant_through_singular_operations() {
        let zero = Dual::<2>::constant(0.0);
        let x = Dual::<2>::variable(1.0, 0);
        // d(x/0) = dx/0 = ±inf in direction 0; direction 1 does not move.
        let q = x / zero;
        assert_eq!(q.value, f64::INFINITY);
        assert_eq!(q.partials, [f64::INFINITY, 0.0]);
        let r = zero / zero;
        assert!(r.value.is_nan());
        assert_eq!(r.partials, [0.0, 0.0]);
    }

    #[test]
    fn nan_and_infinity_propagate() {
        let x = Dual::<1>::variable(2.0, 0);
        let nan = x * f64::NAN;
        assert!(nan.value.is_nan() && nan.partials[0].is_nan());
        let inf = x * f64::INFINITY;
        assert_eq!((inf.value, inf.partials[0]), (f64::INFINITY, f64::INFINITY));
        let poisoned = Dual::<1>::new(1.0, [f64::NAN]) + x;
        assert!(poisoned.partials[0].is_nan());
    }

    #[test]
    #[should_panic(expected = "direction 2 does not exist")]
    fn variable_rejects_a_missing_direction() {
        let _ = Dual::<2>::variable(1.0, 2);
    }
}
