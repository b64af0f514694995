//! [`Tangent`] and [`TangentVector`] for the types of `std`: floats, the types without
//! a tangent, references and boxes, sequences, fixed-size arrays, `Option`, `Result`.

use super::{NoTangent, Tangent, TangentVector};

// The `TangentVector` impls of `f64` and `f32` are the blanket impl over `Scalar`
// (`crate::scalar`), which `Dual` shares.
macro_rules! float_tangent {
    ($($t:ty),*) => {$(
        impl Tangent for $t {
            type Tangent = $t;
            #[inline(always)]
            fn zero_tangent(&self) -> $t {
                0.0
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
        }
    )*};
}
super::for_no_tangent_types!(no_tangent);

impl<T: Tangent + ?Sized> Tangent for &T {
    type Tangent = T::Tangent;
    #[inline(always)]
    fn zero_tangent(&self) -> T::Tangent {
        (**self).zero_tangent()
    }
    fn densify(&self, t: &mut T::Tangent) {
        (**self).densify(t)
    }
}

impl<T: Tangent + ?Sized> Tangent for &mut T {
    type Tangent = T::Tangent;
    #[inline(always)]
    fn zero_tangent(&self) -> T::Tangent {
        (**self).zero_tangent()
    }
    fn densify(&self, t: &mut T::Tangent) {
        (**self).densify(t)
    }
}

impl<T: Tangent + ?Sized> Tangent for Box<T> {
    type Tangent = T::Tangent;
    fn zero_tangent(&self) -> T::Tangent {
        (**self).zero_tangent()
    }
    fn densify(&self, t: &mut T::Tangent) {
        (**self).densify(t)
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
    #[inline(always)]
    fn reset_zero(&mut self) {
        // Empty is the structural zero; the buffer goes to the next materialisation
        // (of this cotangent in the next trip of a loop, or of another).
        if self.capacity() != 0 {
            crate::kit::recycle::give(std::mem::take(self));
        }
    }
}

impl<T: Tangent> Tangent for [T] {
    type Tangent = Vec<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        self.iter().map(Tangent::zero_tangent).collect()
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

impl<T: Tangent> Tangent for Vec<T> {
    type Tangent = Vec<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        self[..].zero_tangent()
    }
    fn densify(&self, t: &mut Self::Tangent) {
        self[..].densify(t)
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
}

impl<T: Tangent, const N: usize> Tangent for [T; N] {
    type Tangent = [T::Tangent; N];
    fn zero_tangent(&self) -> Self::Tangent {
        std::array::from_fn(|i| self[i].zero_tangent())
    }
    fn densify(&self, t: &mut Self::Tangent) {
        if std::mem::needs_drop::<T::Tangent>() {
            self.iter()
                .zip(t.iter_mut())
                .for_each(|(v, t)| v.densify(t));
        }
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
}

impl<T: Tangent> Tangent for Option<T> {
    type Tangent = Option<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        self.as_ref().map(Tangent::zero_tangent)
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
    fn densify(&self, t: &mut Self::Tangent) {
        if let Ok(v) = self {
            v.densify(t)
        }
    }
}
