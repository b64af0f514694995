//! Tangent types: for every primal type, the type of its tangents and cotangents.
//!
//! A primal type `P` implements [`Tangent`]; `P::Tangent` is the vector space its
//! tangents and cotangents live in and implements [`TangentVector`]. Reverse mode
//! only ever needs the cotangent side, but the forward-mode checks of the testing
//! harness use the same type, so there is one type for both.
//!
//! Every tangent vector has a *structural zero* ([`TangentVector::zero`]) that needs
//! no shape: `0.0` for a float, an empty `Vec` for a vector, an empty array for an
//! ndarray. Accumulating into a structural zero adopts the shape of what is
//! accumulated, so a cotangent that is never touched costs nothing. See
//! `design-docs/tangents.md`.

use ndarray::{Array, ArrayBase, ArrayView, Data, DataMut, Dimension, Zip};
use rand::Rng;
use rand_distr::StandardNormal;

/// The operations reverse mode needs on tangents and cotangents.
///
/// # Contract
/// - [`zero`](Self::zero) is the structural zero: an additive identity for every shape.
/// - [`accumulate`](Self::accumulate) adds in place; accumulating into a structural zero
///   takes the other value as it is (no allocation for owned values).
/// - [`inner`](Self::inner) is the Euclidean inner product of the flattened values, in `f64`.
///
/// ```
/// use mochi_core::TangentVector;
/// let mut a = vec![1.0, 2.0];
/// a.accumulate(vec![0.5, 0.5]);
/// assert_eq!(a, vec![1.5, 2.5]);
/// let mut z: Vec<f64> = TangentVector::zero();
/// z.accumulate(vec![3.0]);
/// assert_eq!(z, vec![3.0]);
/// assert_eq!(a.inner(&a), 1.5 * 1.5 + 2.5 * 2.5);
/// ```
pub trait TangentVector: Sized + Clone + std::fmt::Debug {
    /// The structural zero: an additive identity of any shape.
    fn zero() -> Self;
    /// `self += other`.
    fn accumulate(&mut self, other: Self);
    /// `self += other`, by reference.
    fn accumulate_ref(&mut self, other: &Self);
    /// `self *= factor`.
    fn scale(&mut self, factor: f64);
    /// `⟨self, other⟩`, summed in `f64`.
    fn inner(&self, other: &Self) -> f64;
    /// Appends the components, in a fixed order, as `f64`s (used by the testing harness
    /// to report and compare values).
    fn flatten_into(&self, out: &mut Vec<f64>);
}

/// A primal type and its tangent type.
///
/// Floats have themselves as tangent; integers, `bool`, `char` and `()` have
/// [`NoTangent`]; containers have the container of their elements' tangents;
/// references have the tangent of what they point to (a `&[f64]` has a `Vec<f64>`).
/// User structs get an impl from `#[derive(Tangent)]`.
///
/// ```
/// use mochi_core::Tangent;
/// let x = [1.0_f64, 2.0, 3.0];
/// let z: Vec<f64> = x[..].zero_tangent();
/// assert_eq!(z, vec![0.0; 3]);
/// ```
pub trait Tangent {
    /// The type of tangents and cotangents of `Self`.
    type Tangent: TangentVector;
    /// A dense zero tangent of the same shape as `self`.
    fn zero_tangent(&self) -> Self::Tangent;
    /// A random tangent of the same shape as `self` (standard normal components),
    /// for testing.
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent;

    /// Writes the cotangent `t` of `self` out in dense form: a structural zero becomes
    /// [`zero_tangent`](Self::zero_tangent) and a structured cotangent (an array in
    /// broadcast form, see [`TangentVector`]) its expansion to `self`'s shape.
    ///
    /// The derived gradient functions hand out dense cotangents only; rules and raw
    /// pullbacks may leave structured ones, and this is how to read them. The default
    /// does nothing, which is right for types whose tangents have one form (floats,
    /// [`NoTangent`]); containers recurse into their elements, except where the
    /// element tangent has no drop glue: such a tangent owns no heap memory, so it
    /// has no structural zero or structured form to write out.
    ///
    /// # Panics
    /// If `t` does not fit `self` (a dense cotangent of another shape).
    ///
    /// ```
    /// use mochi_core::{Tangent, TangentVector};
    /// use ndarray::{array, Array2};
    /// let x = Array2::<f64>::zeros((2, 3));
    /// let mut t = array![[0.5]]; // every component 0.5
    /// x.densify(&mut t);
    /// assert_eq!(t, Array2::from_elem((2, 3), 0.5));
    /// let mut z: Array2<f64> = TangentVector::zero();
    /// x.densify(&mut z);
    /// assert_eq!(z, Array2::zeros((2, 3)));
    /// ```
    #[inline]
    fn densify(&self, t: &mut Self::Tangent) {
        let _ = t;
    }

    /// A random cotangent of `self` in a structured (compressed) form, when the type has
    /// one: for an array, a broadcast form. Used by the testing harness to check that
    /// rules read and accumulate structured cotangents correctly; `None` (the default)
    /// when there is no such form.
    fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Tangent> {
        let _ = rng;
        None
    }
}

/// Owned primal values that can be moved along a tangent: `self += step · direction`.
///
/// Used by the testing harness (`mochi_core::testing`) for finite differences and to
/// compare what a rule computes with what the plain function computes. Integer-like
/// values do not move and their differences are [`NoTangent`].
///
/// ```
/// use mochi_core::Perturb;
/// let mut x = vec![1.0_f64, 2.0];
/// x.perturb(&vec![1.0, -1.0], 0.5);
/// assert_eq!(x, vec![1.5, 1.5]);
/// assert_eq!(x.difference(&vec![1.0, 1.0]), vec![0.5, 0.5]);
/// assert!(vec![f64::NAN, 0.0].primal_eq(&vec![f64::NAN, -0.0]));
/// assert_eq!(x.primal_scale(), Some(1.5));
/// ```
pub trait Perturb: Tangent {
    /// `self += step · direction`.
    fn perturb(&mut self, direction: &Self::Tangent, step: f64);

    /// `self − from`, as a tangent. Both values must have the same shape.
    fn difference(&self, from: &Self) -> Self::Tangent;

    /// Exact equality of primal values that treats `NaN` as equal to `NaN` (and `0.0` as
    /// equal to `-0.0`, as `==` does); shapes must match too.
    ///
    /// The default compares the [`difference`](Self::difference) with zero, which sees
    /// neither `NaN`s as equal nor components without a tangent (integers); the
    /// implementations in this crate override it.
    fn primal_eq(&self, other: &Self) -> bool {
        let mut components = Vec::new();
        self.difference(other).flatten_into(&mut components);
        components.iter().all(|d| *d == 0.0)
    }

    /// The largest absolute value among the float components (`0.0` when there are none),
    /// or `None` when the type does not say. The testing harness scales its
    /// finite-difference steps with it.
    fn primal_scale(&self) -> Option<f64> {
        None
    }
}

/// The larger of two optional scales; unknown (`None`) wins. `f64::max` ignores `NaN`.
fn max_scale(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a?.max(b?))
}

/// The tangent of a value that has none (integers, `bool`, `char`, `()`): zero-sized,
/// every operation a no-op.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NoTangent;

impl TangentVector for NoTangent {
    #[inline(always)]
    fn zero() -> Self {
        NoTangent
    }
    #[inline(always)]
    fn accumulate(&mut self, _other: Self) {}
    #[inline(always)]
    fn accumulate_ref(&mut self, _other: &Self) {}
    #[inline(always)]
    fn scale(&mut self, _factor: f64) {}
    #[inline(always)]
    fn inner(&self, _other: &Self) -> f64 {
        0.0
    }
    fn flatten_into(&self, _out: &mut Vec<f64>) {}
}

macro_rules! float_tangent {
    ($($t:ty),*) => {$(
        impl TangentVector for $t {
            /// `-0.0`: the additive identity that is exact for every float
            /// (`-0.0 + x == x` bit for bit, also for `x = ±0`), so the compiler folds
            /// accumulation into a fresh cotangent away without fast-math.
            #[inline(always)]
            fn zero() -> Self {
                -0.0
            }
            #[inline(always)]
            fn accumulate(&mut self, other: Self) {
                *self += other;
            }
            #[inline(always)]
            fn accumulate_ref(&mut self, other: &Self) {
                *self += *other;
            }
            #[inline(always)]
            fn scale(&mut self, factor: f64) {
                *self = (*self as f64 * factor) as $t;
            }
            #[inline(always)]
            fn inner(&self, other: &Self) -> f64 {
                *self as f64 * *other as f64
            }
            fn flatten_into(&self, out: &mut Vec<f64>) {
                out.push(*self as f64);
            }
        }
        impl Tangent for $t {
            type Tangent = $t;
            #[inline(always)]
            fn zero_tangent(&self) -> $t {
                0.0
            }
            fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> $t {
                let v: f64 = rng.sample(StandardNormal);
                v as $t
            }
        }
        impl Perturb for $t {
            fn perturb(&mut self, direction: &$t, step: f64) {
                *self = (*self as f64 + step * *direction as f64) as $t;
            }
            fn difference(&self, from: &$t) -> $t {
                *self - *from
            }
            fn primal_eq(&self, other: &$t) -> bool {
                *self == *other || (self.is_nan() && other.is_nan())
            }
            fn primal_scale(&self) -> Option<f64> {
                Some((*self as f64).abs())
            }
        }
    )*};
}
float_tangent!(f64, f32);

macro_rules! no_tangent {
    ($($t:ty),*) => {$(
        impl Tangent for $t {
            type Tangent = NoTangent;
            #[inline(always)]
            fn zero_tangent(&self) -> NoTangent {
                NoTangent
            }
            fn random_tangent<R: Rng + ?Sized>(&self, _rng: &mut R) -> NoTangent {
                NoTangent
            }
        }
        impl Perturb for $t {
            #[inline(always)]
            fn perturb(&mut self, _direction: &NoTangent, _step: f64) {}
            fn difference(&self, _from: &Self) -> NoTangent {
                NoTangent
            }
            fn primal_eq(&self, other: &Self) -> bool {
                self == other
            }
            fn primal_scale(&self) -> Option<f64> {
                Some(0.0)
            }
        }
    )*};
}
no_tangent!(
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    bool,
    char,
    (),
    String,
    str,
    NoTangent
);

impl<T: Tangent + ?Sized> Tangent for &T {
    type Tangent = T::Tangent;
    #[inline(always)]
    fn zero_tangent(&self) -> T::Tangent {
        (**self).zero_tangent()
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> T::Tangent {
        (**self).random_tangent(rng)
    }
    fn densify(&self, t: &mut T::Tangent) {
        (**self).densify(t)
    }
    fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<T::Tangent> {
        (**self).random_structured_tangent(rng)
    }
}

impl<T: Tangent + ?Sized> Tangent for &mut T {
    type Tangent = T::Tangent;
    #[inline(always)]
    fn zero_tangent(&self) -> T::Tangent {
        (**self).zero_tangent()
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> T::Tangent {
        (**self).random_tangent(rng)
    }
    fn densify(&self, t: &mut T::Tangent) {
        (**self).densify(t)
    }
    fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<T::Tangent> {
        (**self).random_structured_tangent(rng)
    }
}

impl<T: Perturb + ?Sized> Perturb for &mut T {
    fn perturb(&mut self, direction: &T::Tangent, step: f64) {
        (**self).perturb(direction, step)
    }
    fn difference(&self, from: &Self) -> T::Tangent {
        (**self).difference(&**from)
    }
    fn primal_eq(&self, other: &Self) -> bool {
        (**self).primal_eq(&**other)
    }
    fn primal_scale(&self) -> Option<f64> {
        (**self).primal_scale()
    }
}

impl<T: Perturb + ?Sized> Perturb for Box<T> {
    fn perturb(&mut self, direction: &T::Tangent, step: f64) {
        (**self).perturb(direction, step)
    }
    fn difference(&self, from: &Self) -> T::Tangent {
        (**self).difference(&**from)
    }
    fn primal_eq(&self, other: &Self) -> bool {
        (**self).primal_eq(&**other)
    }
    fn primal_scale(&self) -> Option<f64> {
        (**self).primal_scale()
    }
}

impl<T: Tangent + ?Sized> Tangent for Box<T> {
    type Tangent = T::Tangent;
    fn zero_tangent(&self) -> T::Tangent {
        (**self).zero_tangent()
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> T::Tangent {
        (**self).random_tangent(rng)
    }
    fn densify(&self, t: &mut T::Tangent) {
        (**self).densify(t)
    }
    fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<T::Tangent> {
        (**self).random_structured_tangent(rng)
    }
}

// ---------------------------------------------------------------- sequences

/// Adds `other` into `dst` elementwise; a structural zero (empty) `dst` adopts `other`.
#[track_caller]
fn accumulate_slices<T: TangentVector>(dst: &mut Vec<T>, other: Vec<T>) {
    if dst.is_empty() {
        *dst = other;
    } else if !other.is_empty() {
        assert_eq!(
            dst.len(),
            other.len(),
            "mochi: cotangent length mismatch: accumulating {} elements into {}",
            other.len(),
            dst.len()
        );
        for (d, o) in dst.iter_mut().zip(other) {
            d.accumulate(o);
        }
    }
}

impl<T: TangentVector> TangentVector for Vec<T> {
    #[inline(always)]
    fn zero() -> Self {
        Vec::new()
    }
    #[track_caller]
    fn accumulate(&mut self, other: Self) {
        accumulate_slices(self, other)
    }
    #[track_caller]
    fn accumulate_ref(&mut self, other: &Self) {
        if self.is_empty() {
            self.clone_from(other);
        } else if !other.is_empty() {
            assert_eq!(
                self.len(),
                other.len(),
                "mochi: cotangent length mismatch: accumulating {} elements into {}",
                other.len(),
                self.len()
            );
            for (d, o) in self.iter_mut().zip(other) {
                d.accumulate_ref(o);
            }
        }
    }
    fn scale(&mut self, factor: f64) {
        self.iter_mut().for_each(|v| v.scale(factor));
    }
    fn inner(&self, other: &Self) -> f64 {
        // A structural zero (empty) against anything is 0.
        self.iter().zip(other).map(|(a, b)| a.inner(b)).sum()
    }
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|v| v.flatten_into(out));
    }
}

impl<T: Tangent> Tangent for [T] {
    type Tangent = Vec<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        self.iter().map(Tangent::zero_tangent).collect()
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self.iter().map(|v| v.random_tangent(rng)).collect()
    }
    #[track_caller]
    fn densify(&self, t: &mut Self::Tangent) {
        if t.is_empty() {
            *t = self.zero_tangent();
            return;
        }
        assert!(
            t.len() == self.len(),
            "mochi: a cotangent of {} elements for a sequence of {}",
            t.len(),
            self.len()
        );
        if std::mem::needs_drop::<T::Tangent>() {
            self.iter()
                .zip(t.iter_mut())
                .for_each(|(v, t)| v.densify(t));
        }
    }
}

impl<T: Perturb> Perturb for [T] {
    #[track_caller]
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        assert_eq!(
            self.len(),
            direction.len(),
            "mochi: perturbation length mismatch"
        );
        self.iter_mut()
            .zip(direction)
            .for_each(|(v, d)| v.perturb(d, step));
    }
    #[track_caller]
    fn difference(&self, from: &Self) -> Self::Tangent {
        assert_eq!(
            self.len(),
            from.len(),
            "mochi: difference of sequences of different lengths"
        );
        self.iter()
            .zip(from)
            .map(|(a, b)| a.difference(b))
            .collect()
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a.primal_eq(b))
    }
    fn primal_scale(&self) -> Option<f64> {
        self.iter()
            .map(Perturb::primal_scale)
            .fold(Some(0.0), max_scale)
    }
}

impl<T: Tangent> Tangent for Vec<T> {
    type Tangent = Vec<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        self[..].zero_tangent()
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self[..].random_tangent(rng)
    }
    fn densify(&self, t: &mut Self::Tangent) {
        self[..].densify(t)
    }
}

impl<T: Perturb> Perturb for Vec<T> {
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        self[..].perturb(direction, step)
    }
    fn difference(&self, from: &Self) -> Self::Tangent {
        self[..].difference(&from[..])
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self[..].primal_eq(&other[..])
    }
    fn primal_scale(&self) -> Option<f64> {
        self[..].primal_scale()
    }
}

impl<T: TangentVector, const N: usize> TangentVector for [T; N] {
    fn zero() -> Self {
        std::array::from_fn(|_| T::zero())
    }
    fn accumulate(&mut self, other: Self) {
        for (d, o) in self.iter_mut().zip(other) {
            d.accumulate(o);
        }
    }
    fn accumulate_ref(&mut self, other: &Self) {
        for (d, o) in self.iter_mut().zip(other) {
            d.accumulate_ref(o);
        }
    }
    fn scale(&mut self, factor: f64) {
        self.iter_mut().for_each(|v| v.scale(factor));
    }
    fn inner(&self, other: &Self) -> f64 {
        self.iter().zip(other).map(|(a, b)| a.inner(b)).sum()
    }
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|v| v.flatten_into(out));
    }
}

impl<T: Tangent, const N: usize> Tangent for [T; N] {
    type Tangent = [T::Tangent; N];
    fn zero_tangent(&self) -> Self::Tangent {
        std::array::from_fn(|i| self[i].zero_tangent())
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        std::array::from_fn(|i| self[i].random_tangent(rng))
    }
    fn densify(&self, t: &mut Self::Tangent) {
        if std::mem::needs_drop::<T::Tangent>() {
            self.iter()
                .zip(t.iter_mut())
                .for_each(|(v, t)| v.densify(t));
        }
    }
}

impl<T: Perturb, const N: usize> Perturb for [T; N] {
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        self.iter_mut()
            .zip(direction)
            .for_each(|(v, d)| v.perturb(d, step));
    }
    fn difference(&self, from: &Self) -> Self::Tangent {
        std::array::from_fn(|i| self[i].difference(&from[i]))
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self[..].primal_eq(&other[..])
    }
    fn primal_scale(&self) -> Option<f64> {
        self[..].primal_scale()
    }
}

impl<T: TangentVector> TangentVector for Option<T> {
    fn zero() -> Self {
        None
    }
    fn accumulate(&mut self, other: Self) {
        match (self.as_mut(), other) {
            (Some(d), Some(o)) => d.accumulate(o),
            (None, o) => *self = o,
            (Some(_), None) => {}
        }
    }
    fn accumulate_ref(&mut self, other: &Self) {
        match (self.as_mut(), other) {
            (Some(d), Some(o)) => d.accumulate_ref(o),
            (None, o) => self.clone_from(o),
            (Some(_), None) => {}
        }
    }
    fn scale(&mut self, factor: f64) {
        if let Some(v) = self {
            v.scale(factor)
        }
    }
    fn inner(&self, other: &Self) -> f64 {
        match (self, other) {
            (Some(a), Some(b)) => a.inner(b),
            _ => 0.0,
        }
    }
    fn flatten_into(&self, out: &mut Vec<f64>) {
        if let Some(v) = self {
            v.flatten_into(out)
        }
    }
}

impl<T: Tangent> Tangent for Option<T> {
    type Tangent = Option<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        self.as_ref().map(Tangent::zero_tangent)
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self.as_ref().map(|v| v.random_tangent(rng))
    }
    fn densify(&self, t: &mut Self::Tangent) {
        if let Some(v) = self {
            match t {
                Some(t) => v.densify(t),
                None => *t = Some(v.zero_tangent()),
            }
        }
    }
}

impl<T: Perturb> Perturb for Option<T> {
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        if let (Some(v), Some(d)) = (self.as_mut(), direction) {
            v.perturb(d, step)
        }
    }
    /// `None` unless both are `Some`: a value that appears or vanishes has no
    /// difference to speak of.
    fn difference(&self, from: &Self) -> Self::Tangent {
        match (self, from) {
            (Some(a), Some(b)) => Some(a.difference(b)),
            _ => None,
        }
    }
    fn primal_eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Some(a), Some(b)) => a.primal_eq(b),
            (None, None) => true,
            _ => false,
        }
    }
    fn primal_scale(&self) -> Option<f64> {
        self.as_ref().map_or(Some(0.0), Perturb::primal_scale)
    }
}

/// A `Result` carries the tangent of its `Ok` value; an `Err` has a zero tangent. This
/// lets differentiable code call a fallible rule and `unwrap`/`expect` it.
impl<T: Tangent, E> Tangent for Result<T, E> {
    type Tangent = T::Tangent;
    fn zero_tangent(&self) -> Self::Tangent {
        match self {
            Ok(v) => v.zero_tangent(),
            Err(_) => T::Tangent::zero(),
        }
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        match self {
            Ok(v) => v.random_tangent(rng),
            Err(_) => T::Tangent::zero(),
        }
    }
    fn densify(&self, t: &mut Self::Tangent) {
        if let Ok(v) = self {
            v.densify(t)
        }
    }
}

// ---------------------------------------------------------------- tuples

macro_rules! tuple_tangent {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: TangentVector),+> TangentVector for ($($T,)+) {
            #[inline(always)]
            fn zero() -> Self {
                ($($T::zero(),)+)
            }
            #[inline(always)]
            fn accumulate(&mut self, other: Self) {
                $(self.$i.accumulate(other.$i);)+
            }
            #[inline(always)]
            fn accumulate_ref(&mut self, other: &Self) {
                $(self.$i.accumulate_ref(&other.$i);)+
            }
            fn scale(&mut self, factor: f64) {
                $(self.$i.scale(factor);)+
            }
            fn inner(&self, other: &Self) -> f64 {
                0.0 $(+ self.$i.inner(&other.$i))+
            }
            fn flatten_into(&self, out: &mut Vec<f64>) {
                $(self.$i.flatten_into(out);)+
            }
        }
        impl<$($T: Tangent),+> Tangent for ($($T,)+) {
            type Tangent = ($($T::Tangent,)+);
            fn zero_tangent(&self) -> Self::Tangent {
                ($(self.$i.zero_tangent(),)+)
            }
            fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
                ($(self.$i.random_tangent(rng),)+)
            }
            fn densify(&self, t: &mut Self::Tangent) {
                $(self.$i.densify(&mut t.$i);)+
            }
            /// Some when any element has a structured form; the others are random dense.
            fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Tangent> {
                let mut any = false;
                let t = ($(
                    match self.$i.random_structured_tangent(rng) {
                        Some(t) => { any = true; t }
                        None => self.$i.random_tangent(rng),
                    },
                )+);
                any.then_some(t)
            }
        }
        impl<$($T: Perturb),+> Perturb for ($($T,)+) {
            fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
                $(self.$i.perturb(&direction.$i, step);)+
            }
            fn difference(&self, from: &Self) -> Self::Tangent {
                ($(self.$i.difference(&from.$i),)+)
            }
            fn primal_eq(&self, other: &Self) -> bool {
                true $(&& self.$i.primal_eq(&other.$i))+
            }
            fn primal_scale(&self) -> Option<f64> {
                Some(0.0) $(.and_then(|s| max_scale(Some(s), self.$i.primal_scale())))+
            }
        }
    )*};
}
tuple_tangent! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}

// ---------------------------------------------------------------- ndarray

/// The structural zero of an n-dimensional cotangent: an empty array of the right rank.
fn empty_array<T, D: Dimension>() -> Array<T, D> {
    let dim = D::zeros(D::NDIM.unwrap_or(1));
    Array::from_shape_vec(dim, Vec::new()).expect("an all-zero shape holds no elements")
}

impl<T, D> TangentVector for Array<T, D>
where
    T: TangentVector,
    D: Dimension,
{
    fn zero() -> Self {
        empty_array()
    }
    #[track_caller]
    fn accumulate(&mut self, other: Self) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other;
        } else if self.shape() == other.shape() {
            self.zip_mut_with(&other, |d, o| d.accumulate_ref(o));
        } else {
            accumulate_forms(self, other.view());
        }
    }
    #[track_caller]
    fn accumulate_ref(&mut self, other: &Self) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
        } else if self.shape() == other.shape() {
            self.zip_mut_with(other, |d, o| d.accumulate_ref(o));
        } else {
            accumulate_forms(self, other.view());
        }
    }
    fn scale(&mut self, factor: f64) {
        // Scaling a broadcast form scales what it stands for.
        self.iter_mut().for_each(|v| v.scale(factor));
    }
    fn inner(&self, other: &Self) -> f64 {
        if self.is_empty() || other.is_empty() {
            return 0.0;
        }
        if self.shape() == other.shape() {
            return self.iter().zip(other.iter()).map(|(a, b)| a.inner(b)).sum();
        }
        let shape = co_broadcast(self.shape(), other.shape());
        let a = self.broadcast(shape.clone()).expect("co-broadcast shape");
        let b = other.broadcast(shape).expect("co-broadcast shape");
        a.iter().zip(b.iter()).map(|(a, b)| a.inner(b)).sum()
    }
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|v| v.flatten_into(out));
    }
}

/// The shape both `a` and `b` broadcast to, axis by axis (equal lengths, or a 1
/// against any length).
///
/// # Panics
/// If some axis has two different lengths neither of which is 1.
#[track_caller]
fn co_broadcast(a: &[usize], b: &[usize]) -> Vec<usize> {
    assert_eq!(
        a.len(),
        b.len(),
        "mochi: cotangent shape mismatch: {a:?} and {b:?} have different ranks"
    );
    a.iter()
        .zip(b)
        .map(|(&m, &n)| match (m, n) {
            _ if m == n => m,
            (1, n) => n,
            (m, 1) => m,
            _ => panic!("mochi: cotangent shape mismatch: {a:?} and {b:?}"),
        })
        .collect()
}

/// `dst += src` where the two are forms of different shapes of one cotangent (a dense
/// array and a broadcast form, or two broadcast forms): the result takes the shape both
/// broadcast to. No allocation when `src` broadcasts to `dst`.
#[track_caller]
fn accumulate_forms<T: TangentVector, D: Dimension>(
    dst: &mut Array<T, D>,
    src: ArrayView<'_, T, D>,
) {
    if !broadcast::fits(src.shape(), dst.shape()) {
        let shape = co_broadcast(dst.shape(), src.shape());
        let mut dim = dst.raw_dim();
        dim.slice_mut().copy_from_slice(&shape);
        *dst = broadcast::expansion(dst, &dim);
    }
    // `zip_mut_with` broadcasts its right-hand side.
    dst.zip_mut_with(&src, |d, o| d.accumulate_ref(o));
}

/// Reading array cotangents that may be in broadcast form.
///
/// An array cotangent is in one of three forms: the *structural zero* (an empty array),
/// *dense* (the primal's shape), or *broadcast*: a non-empty array of the primal's rank
/// whose every axis has length 1 or the primal's length, standing for its broadcast to
/// the primal's shape. `sum` leaves the cotangent `c` of its input as a `1 × … × 1`
/// array instead of filling `|x|` copies of `c`; a rule that can use the structure
/// (kron's pullback: `Ā = c·ΣB`) reads it with [`uniform`](broadcast::uniform), and
/// every other rule reads a view of the expansion with [`view`](broadcast::view), which
/// costs nothing (zero strides). See `design-docs/tangents.md`.
pub mod broadcast {
    use ndarray::{Array, ArrayView, Dimension};

    /// How an array cotangent stores itself, relative to its primal's shape.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Form {
        /// The structural zero: nothing was accumulated.
        Zero,
        /// A broadcast form: stands for its expansion to the primal's shape.
        Broadcast,
        /// The primal's shape.
        Dense,
    }

    /// The form of `t`, a cotangent of a primal of shape `dim`.
    ///
    /// # Panics
    /// If `t` is neither empty nor broadcastable to `dim`: a pullback received a
    /// cotangent that does not belong to its argument.
    ///
    /// ```
    /// use mochi_core::broadcast::{form, Form};
    /// use ndarray::{array, Array2, Ix2};
    /// let dim = Ix2(2, 3);
    /// assert_eq!(form(&Array2::<f64>::zeros((0, 0)), &dim), Form::Zero);
    /// assert_eq!(form(&array![[1.0]], &dim), Form::Broadcast);
    /// assert_eq!(form(&array![[1.0, 2.0, 3.0]], &dim), Form::Broadcast);
    /// assert_eq!(form(&Array2::<f64>::ones((2, 3)), &dim), Form::Dense);
    /// ```
    #[inline]
    #[track_caller]
    pub fn form<T, D: Dimension>(t: &Array<T, D>, dim: &D) -> Form {
        if t.shape() == dim.slice() {
            return Form::Dense;
        }
        if t.is_empty() {
            return Form::Zero;
        }
        assert!(
            fits(t.shape(), dim.slice()),
            "mochi: cotangent shape mismatch: a cotangent of shape {:?} for a primal of shape {:?}",
            t.shape(),
            dim.slice()
        );
        Form::Broadcast
    }

    /// Whether an array of shape `from` broadcasts to `to` without adding axes: the
    /// same rank, and every axis of length 1 or `to`'s length.
    #[inline]
    pub(crate) fn fits(from: &[usize], to: &[usize]) -> bool {
        from.len() == to.len() && from.iter().zip(to).all(|(&m, &n)| m == n || m == 1)
    }

    /// A view of the expansion of `t` to `dim` (zero strides along broadcast axes, no
    /// copy), or `None` for the structural zero.
    ///
    /// # Panics
    /// As [`form`].
    #[inline]
    #[track_caller]
    pub fn view<'a, T, D: Dimension>(t: &'a Array<T, D>, dim: &D) -> Option<ArrayView<'a, T, D>> {
        match form(t, dim) {
            Form::Zero => None,
            Form::Dense => Some(t.view()),
            Form::Broadcast => Some(t.broadcast(dim.clone()).expect("checked by `form`")),
        }
    }

    /// The value `c` when `t` stands for `c` in every component (a broadcast form with
    /// one element, or a dense array of one element); `None` otherwise.
    ///
    /// ```
    /// use mochi_core::broadcast::uniform;
    /// use ndarray::{array, Ix2};
    /// assert_eq!(uniform(&array![[2.5]], &Ix2(40, 40)), Some(2.5));
    /// assert_eq!(uniform(&array![[2.5, 1.0]], &Ix2(40, 2)), None);
    /// ```
    #[inline]
    #[track_caller]
    pub fn uniform<T: Clone, D: Dimension>(t: &Array<T, D>, dim: &D) -> Option<T> {
        match form(t, dim) {
            Form::Zero => None,
            _ if t.len() == 1 => t.iter().next().cloned(),
            _ => None,
        }
    }

    /// `t` expanded to `dim` if it is in broadcast form (one allocation); a dense
    /// cotangent or the structural zero is returned as it is.
    ///
    /// # Panics
    /// As [`form`].
    #[inline]
    #[track_caller]
    pub fn expand<T: Clone, D: Dimension>(t: Array<T, D>, dim: &D) -> Array<T, D> {
        match form(&t, dim) {
            Form::Broadcast => {
                let mut t = t;
                expansion(&mut t, dim)
            }
            _ => t,
        }
    }

    /// The expansion of a broadcast form `t` to `dim`: a fill for a one-element form
    /// (one pass of stores), an elementwise copy of the zero-strided view otherwise.
    /// `t` is left empty; a one-element form is freed before the expansion is
    /// allocated, which keeps the allocator from splitting its heap around it.
    pub(crate) fn expansion<T: Clone, D: Dimension>(t: &mut Array<T, D>, dim: &D) -> Array<T, D> {
        let empty = Array::from_shape_vec(D::zeros(dim.ndim()), Vec::new())
            .expect("an all-zero shape holds no elements");
        let t = std::mem::replace(t, empty);
        if t.len() == 1 {
            let value = t.iter().next().cloned().expect("one element");
            drop(t);
            Array::from_elem(dim.clone(), value)
        } else {
            t.broadcast(dim.clone())
                .expect("checked by `form`")
                .to_owned()
        }
    }

    /// The broadcast form holding `value` for a primal of shape `dim`: an array of
    /// `dim`'s rank with every axis of length 1 (or the primal's own shape when that
    /// has one element).
    #[inline]
    pub fn fill<T: Clone, D: Dimension>(dim: &D, value: T) -> Array<T, D> {
        let mut shape = dim.clone();
        shape.slice_mut().iter_mut().for_each(|n| *n = 1);
        Array::from_elem(shape, value)
    }

    /// `shape` with axis `k` replaced by 1.
    #[inline]
    pub fn squeeze_axis<D: Dimension>(dim: &D, k: usize) -> D {
        let mut d = dim.clone();
        d.slice_mut()[k] = 1;
        d
    }

    use super::TangentVector;
    /// Used by [`Tangent::densify`](super::Tangent::densify) for arrays.
    pub(crate) fn densify<T: TangentVector + Clone, D: Dimension>(
        t: &mut Array<T, D>,
        dim: &D,
        zero: impl FnOnce() -> Array<T, D>,
    ) {
        match form(t, dim) {
            Form::Dense => {}
            Form::Zero => *t = zero(),
            Form::Broadcast => *t = expansion(t, dim),
        }
    }
}

impl<S, D> Tangent for ArrayBase<S, D>
where
    S: Data,
    S::Elem: Tangent,
    D: Dimension,
{
    type Tangent = Array<<S::Elem as Tangent>::Tangent, D>;
    fn zero_tangent(&self) -> Self::Tangent {
        self.map(Tangent::zero_tangent)
    }
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self.map(|v| v.random_tangent(rng))
    }
    #[track_caller]
    fn densify(&self, t: &mut Self::Tangent) {
        broadcast::densify(t, &self.raw_dim(), || self.zero_tangent());
        if std::mem::needs_drop::<<S::Elem as Tangent>::Tangent>() {
            Zip::from(self).and(t).for_each(|v, t| v.densify(t));
        }
    }
    /// A broadcast form: each axis of length > 1 is kept or squeezed to 1 at random, at
    /// least one squeezed; `None` when every axis has length ≤ 1 (no broadcast form).
    fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Tangent> {
        let long: Vec<usize> = (0..self.ndim()).filter(|&k| self.shape()[k] > 1).collect();
        if long.is_empty() {
            return None;
        }
        let forced = long[rng.gen_range(0..long.len())];
        let mut dim = self.raw_dim();
        for &k in &long {
            if k == forced || rng.gen_bool(0.5) {
                dim.slice_mut()[k] = 1;
            }
        }
        let first = self.iter().next()?;
        Some(Array::from_shape_simple_fn(dim, || {
            first.random_tangent(rng)
        }))
    }
}

impl<S, D> Perturb for ArrayBase<S, D>
where
    S: DataMut,
    S::Elem: Perturb,
    D: Dimension,
{
    #[track_caller]
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        assert_eq!(
            self.shape(),
            direction.shape(),
            "mochi: perturbation shape mismatch"
        );
        self.zip_mut_with(direction, |v, d| v.perturb(d, step));
    }
    #[track_caller]
    fn difference(&self, from: &Self) -> Self::Tangent {
        assert_eq!(
            self.shape(),
            from.shape(),
            "mochi: difference of arrays of different shapes"
        );
        Zip::from(self)
            .and(from)
            .map_collect(|a, b| a.difference(b))
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && Zip::from(self).and(other).all(|a, b| a.primal_eq(b))
    }
    fn primal_scale(&self) -> Option<f64> {
        self.iter()
            .map(Perturb::primal_scale)
            .fold(Some(0.0), max_scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};
    use rand::SeedableRng;

    #[test]
    fn structural_zero_adopts_the_shape_of_what_is_accumulated() {
        let mut z: Array2<f64> = TangentVector::zero();
        z.accumulate(array![[1.0, 2.0], [3.0, 4.0]]);
        z.accumulate_ref(&array![[1.0, 1.0], [1.0, 1.0]]);
        assert_eq!(z, array![[2.0, 3.0], [4.0, 5.0]]);
        let mut v: Vec<f64> = TangentVector::zero();
        v.accumulate(Vec::new());
        assert!(v.is_empty());
        v.accumulate(vec![1.0]);
        v.accumulate(Vec::new()); // zero into dense leaves it alone
        assert_eq!(v, vec![1.0]);
    }

    #[test]
    fn tangents_of_references_views_and_tuples_have_the_primal_shape() {
        let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let t = m.t();
        assert_eq!(t.zero_tangent().shape(), &[3, 2]);
        let tuple = (1.0_f32, 3_usize, vec![1.0_f64; 4]);
        let z = tuple.zero_tangent();
        assert_eq!(z, (0.0_f32, NoTangent, vec![0.0; 4]));
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let r = m.view().random_tangent(&mut rng);
        assert_eq!(r.shape(), &[2, 3]);
        assert!(r.iter().any(|v| *v != 0.0));
    }

    #[test]
    fn inner_product_and_scale() {
        let mut a = (2.0_f64, [1.0_f64, -1.0]);
        let b = (3.0_f64, [0.5_f64, 2.0]);
        // ⟨a, b⟩ = 2·3 + 1·0.5 + (−1)·2 = 4.5
        assert_eq!(a.inner(&b), 4.5);
        a.scale(2.0);
        assert_eq!(a, (4.0, [2.0, -2.0]));
    }

    #[test]
    fn perturb_moves_floats_and_leaves_integers() {
        let mut p = (1.0_f64, 7_i32, vec![1.0_f32, 2.0]);
        p.perturb(&(1.0, NoTangent, vec![2.0, -2.0]), 0.5);
        assert_eq!(p, (1.5, 7, vec![2.0, 1.0]));
    }

    #[test]
    fn difference_is_the_step_between_two_primals() {
        let a = (2.5_f64, 3_usize, vec![1.0_f32, 4.0], array![[1.0_f64, 2.0]]);
        let b = (0.5_f64, 9_usize, vec![0.5_f32, 5.0], array![[0.0_f64, 4.0]]);
        let d = a.difference(&b);
        assert_eq!(d, (2.0, NoTangent, vec![0.5, -1.0], array![[1.0, -2.0]]));
        let mut moved = b.clone();
        moved.perturb(&d, 1.0);
        assert!(moved.primal_eq(&(a.0, b.1, a.2.clone(), a.3.clone())));
        assert_eq!(Some(1.0_f64).difference(&None), None);
    }

    #[test]
    fn primal_eq_sees_nans_as_equal_and_everything_else_exactly() {
        assert!(f64::NAN.primal_eq(&f64::NAN));
        assert!(0.0_f32.primal_eq(&-0.0));
        assert!(!1.0_f64.primal_eq(&(1.0 + f64::EPSILON)));
        assert!(!f64::NAN.primal_eq(&1.0));
        assert!(!(1.0_f64, 2_i32).primal_eq(&(1.0, 3)));
        assert!(!vec![1.0_f64].primal_eq(&vec![1.0, 1.0]));
        assert!(!array![[1.0_f64, 2.0]].primal_eq(&array![[1.0], [2.0]]));
        assert!(!Some(1.0_f64).primal_eq(&None));
        assert!(String::from("a").primal_eq(&String::from("a")));
    }

    #[test]
    fn primal_scale_is_the_largest_float_magnitude() {
        assert_eq!(
            (-3.0_f64, 7_u8, vec![1.0_f32, -5.0]).primal_scale(),
            Some(5.0)
        );
        assert_eq!(array![[0.5_f64, -0.25]].primal_scale(), Some(0.5));
        assert_eq!((4_usize,).primal_scale(), Some(0.0));
        assert_eq!(None::<f64>.primal_scale(), Some(0.0));
    }

    #[test]
    #[should_panic(expected = "cotangent length mismatch")]
    fn mismatched_accumulation_is_reported() {
        let mut a = vec![1.0_f64, 2.0];
        a.accumulate(vec![1.0]);
    }
}
