//! [`Perturb`] and [`Flatten`] for the types of `std`.

use super::{max_scale, Flatten, Perturb};
use crate::NoTangent;
use rand::Rng;
use rand_distr::StandardNormal;

impl Flatten for NoTangent {
    fn flatten_into(&self, _out: &mut Vec<f64>) {}
}

macro_rules! float_perturb {
    ($($t:ty),*) => {$(
        impl Flatten for $t {
            fn flatten_into(&self, out: &mut Vec<f64>) {
                out.push(*self as f64);
            }
        }
        impl Perturb for $t {
            fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> $t {
                let v: f64 = rng.sample(StandardNormal);
                v as $t
            }
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
float_perturb!(f64, f32);

macro_rules! no_tangent_perturb {
    ($($t:ty),*) => {$(
        impl Perturb for $t {
            fn random_tangent<R: Rng + ?Sized>(&self, _rng: &mut R) -> NoTangent {
                NoTangent
            }
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
crate::tangent::for_no_tangent_types!(no_tangent_perturb);

/// `Perturb` of a pointer: the pointee's.
macro_rules! perturb_through_pointer {
    ($($P:ty),*) => {$(
        impl<T: Perturb + ?Sized> Perturb for $P {
            fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> T::Tangent {
                (**self).random_tangent(rng)
            }
            fn random_structured_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<T::Tangent> {
                (**self).random_structured_tangent(rng)
            }
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
    )*};
}
perturb_through_pointer!(&mut T, Box<T>);

impl<T: Flatten> Flatten for Vec<T> {
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|v| v.flatten_into(out));
    }
}

impl<T: Perturb> Perturb for [T] {
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self.iter().map(|v| v.random_tangent(rng)).collect()
    }
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

impl<T: Perturb> Perturb for Vec<T> {
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self[..].random_tangent(rng)
    }
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

impl<T: Flatten, const N: usize> Flatten for [T; N] {
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|v| v.flatten_into(out));
    }
}

impl<T: Perturb, const N: usize> Perturb for [T; N] {
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        std::array::from_fn(|i| self[i].random_tangent(rng))
    }
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

impl<T: Flatten> Flatten for Option<T> {
    fn flatten_into(&self, out: &mut Vec<f64>) {
        if let Some(v) = self {
            v.flatten_into(out)
        }
    }
}

impl<T: Perturb> Perturb for Option<T> {
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self.as_ref().map(|v| v.random_tangent(rng))
    }
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

/// A `Result` moves in its `Ok` value; an error has the zero tangent. Two errors are
/// equal primals (the harness compares where a rule and its function fail, not why).
impl<T: Perturb, E> Perturb for Result<T, E> {
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        match self {
            Ok(v) => v.random_tangent(rng),
            Err(_) => crate::TangentVector::zero(),
        }
    }
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        if let Ok(v) = self {
            v.perturb(direction, step)
        }
    }
    fn difference(&self, from: &Self) -> Self::Tangent {
        match (self, from) {
            (Ok(a), Ok(b)) => a.difference(b),
            _ => crate::TangentVector::zero(),
        }
    }
    fn primal_eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Ok(a), Ok(b)) => a.primal_eq(b),
            (Err(_), Err(_)) => true,
            _ => false,
        }
    }
    fn primal_scale(&self) -> Option<f64> {
        self.as_ref().map_or(Some(0.0), Perturb::primal_scale)
    }
}

/// A dual's components: its value, then its partials.
impl<const N: usize> Flatten for crate::Dual<N> {
    fn flatten_into(&self, out: &mut Vec<f64>) {
        out.push(self.value);
        out.extend_from_slice(&self.partials);
    }
}

/// A dual moves in its value and in each partial.
impl<const N: usize> Perturb for crate::Dual<N> {
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self {
        let mut d = crate::Dual::constant(rng.sample(StandardNormal));
        for p in &mut d.partials {
            *p = rng.sample(StandardNormal);
        }
        d
    }
    fn perturb(&mut self, direction: &Self, step: f64) {
        self.value += step * direction.value;
        for (p, d) in self.partials.iter_mut().zip(&direction.partials) {
            *p += step * d;
        }
    }
    fn difference(&self, from: &Self) -> Self {
        *self - *from
    }
    fn primal_eq(&self, other: &Self) -> bool {
        let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        same(self.value, other.value)
            && self
                .partials
                .iter()
                .zip(&other.partials)
                .all(|(a, b)| same(*a, *b))
    }
    fn primal_scale(&self) -> Option<f64> {
        Some(self.value.abs())
    }
}
