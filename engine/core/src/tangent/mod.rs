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
//!
//! The impls live one file per family: `std_types` (floats, integers, references,
//! sequences, `Option`, `Result`), `tuples`, `array` (ndarray, behind the `ndarray`
//! feature) and [`broadcast`] (the broadcast form of array cotangents). What only the
//! testing harness needs of a type (random tangents, moving a primal along a tangent)
//! is in [`testing`](crate::testing).

/// Calls `$m!(i8, …, NoTangent)` with every sized primal type whose tangent is
/// [`NoTangent`] (every one but `str`): the list the impls that hold or return a value
/// share.
macro_rules! for_sized_no_tangent_types {
    ($m:ident) => {
        $m!(
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
            NoTangent
        );
    };
}
pub(crate) use for_sized_no_tangent_types;

/// Calls `$m!(…)` with every primal type whose tangent is [`NoTangent`]: the sized
/// ones and `str`; the one list the [`Tangent`] impls and the testing impls share.
macro_rules! for_no_tangent_types {
    ($m:ident) => {
        $crate::tangent::for_sized_no_tangent_types!($m);
        $m!(str);
    };
}
pub(crate) use for_no_tangent_types;

/// Calls `$m! { (A 0) (A 0, B 1) … }` with the tuples of one to twelve elements that
/// have tangents (type parameter and field index of each element).
macro_rules! for_tuples {
    ($m:ident) => {
        $m! {
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
    };
}
pub(crate) use for_tuples;

#[cfg(feature = "ndarray")]
mod array;
#[cfg(feature = "ndarray")]
pub mod broadcast;
#[cfg(feature = "nalgebra")]
mod nalgebra;
mod std_types;
mod tuples;

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
    /// Makes `self` the structural zero, keeping its buffer where it has one (a `Vec`
    /// keeps its capacity), so that a cotangent made dense again reuses it.
    #[inline(always)]
    fn reset_zero(&mut self) {
        *self = Self::zero();
    }
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
#[diagnostic::on_unimplemented(
    message = "mochi: `{Self}` has no tangent type, so it cannot be an argument or a value of a `#[differentiable]` function",
    label = "`{Self}` needs a tangent",
    note = "for a struct or an enum of your own, add `#[derive(Tangent)]` (with `use mochi::prelude::*`); an enum is a choice, without a derivative",
    note = "a type of another crate needs a rule crate that gives it a tangent (see CONTRIBUTING.md); mochi's rule crates cover ndarray 0.16 and nalgebra 0.34: a type of another version of either crate is another type"
)]
pub trait Tangent {
    /// The type of tangents and cotangents of `Self`.
    type Tangent: TangentVector;
    /// A dense zero tangent of the same shape as `self`.
    fn zero_tangent(&self) -> Self::Tangent;

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
    /// # #[cfg(feature = "ndarray")] {
    /// use mochi_core::{Tangent, TangentVector};
    /// use ndarray::{array, Array2};
    /// let x = Array2::<f64>::zeros((2, 3));
    /// let mut t = array![[0.5]]; // every component 0.5
    /// x.densify(&mut t);
    /// assert_eq!(t, Array2::from_elem((2, 3), 0.5));
    /// let mut z: Array2<f64> = TangentVector::zero();
    /// x.densify(&mut z);
    /// assert_eq!(z, Array2::zeros((2, 3)));
    /// # }
    /// ```
    #[inline]
    fn densify(&self, t: &mut Self::Tangent) {
        let _ = t;
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structural_zero_adopts_the_shape_of_what_is_accumulated() {
        let mut v: Vec<f64> = TangentVector::zero();
        v.accumulate(Vec::new());
        assert!(v.is_empty());
        v.accumulate(vec![1.0]);
        v.accumulate(Vec::new()); // zero into dense leaves it alone
        assert_eq!(v, vec![1.0]);
    }

    #[test]
    fn tangents_of_tuples_have_the_primal_shape() {
        let tuple = (1.0_f32, 3_usize, vec![1.0_f64; 4]);
        let z = tuple.zero_tangent();
        assert_eq!(z, (0.0_f32, NoTangent, vec![0.0; 4]));
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
    #[should_panic(expected = "cotangent length mismatch")]
    fn mismatched_accumulation_is_reported() {
        let mut a = vec![1.0_f64, 2.0];
        a.accumulate(vec![1.0]);
    }
}
