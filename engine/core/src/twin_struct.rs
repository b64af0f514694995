//! Structs whose methods have generic twins: the field types a struct deriving
//! `Tangent` may hold, lifted to another scalar ([`LiftField`]), and the struct lifted
//! to one scalar, as the companions of its methods seed and read it ([`TwinOf`]).
//!
//! `#[derive(Tangent)]` on `struct Model { w: Vec<f64>, b: f64, n: usize }` also writes
//! a generic mirror `Model`'s twin, `{ w: Vec<T>, b: T, n: usize }`, with its own
//! tangent, and `impl LiftField for Model` (when every field's type is one this module
//! lifts). The twin of a `#[differentiable(higher_order)]` method takes the mirror in
//! place of `self`.

use crate::{NoTangent, Scalar, Tangent};

/// A type whose floats can be replaced by another scalar: `f64` → `T`, `Vec<f64>` →
/// `Vec<T>`, an array of `f64` → an array of `T`; integers and other values without
/// derivatives stay as they are. Implemented by `#[derive(Tangent)]` for structs whose
/// fields all implement it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no generic form, so `#[differentiable(higher_order)]` cannot give `jvp`, `hvp`, `hessian` or `jacobian` to the functions and methods that take or build it",
    label = "the generic form takes a copy of `{Self}` with dual numbers for floats",
    note = "derive `Tangent` on the struct (`#[derive(Clone, Tangent)]`), with fields that are `f64`, integers, `bool`, `String`, `Vec`s, arrays and `Option`s of these, ndarray arrays of `f64`, or structs and enums of the crate deriving `Tangent` declared before it (a `Box`, a map or a nalgebra type has none yet); or drop `higher_order`: the gradient does not need it"
)]
pub trait LiftField: Tangent {
    /// `Self` with its floats of type `T`.
    type Of<T: Scalar>: Tangent;
    /// `self` with every float `v`, in a fixed order, replaced by `f(v)`.
    fn lift<T: Scalar, F: FnMut(f64) -> T>(&self, f: &mut F) -> Self::Of<T>;
    /// Appends the floats of a (dense) tangent of `self`, in the order of [`lift`](Self::lift).
    fn flatten_tangent(t: &Self::Tangent, out: &mut Vec<f64>);
    /// The tangent of `self` whose floats, in order, come from `flat`.
    fn tangent_from_flat(&self, flat: &mut std::slice::Iter<'_, f64>) -> Self::Tangent;
    /// Appends the floats of a (dense) tangent of the lifted value.
    fn flatten_lifted_tangent<T: Scalar>(t: &<Self::Of<T> as Tangent>::Tangent, out: &mut Vec<T>);
}

/// Floats: the scalar itself.
impl LiftField for f64 {
    type Of<T: Scalar> = T;
    fn lift<T: Scalar, F: FnMut(f64) -> T>(&self, f: &mut F) -> T {
        f(*self)
    }
    fn flatten_tangent(t: &f64, out: &mut Vec<f64>) {
        out.push(*t);
    }
    fn tangent_from_flat(&self, flat: &mut std::slice::Iter<'_, f64>) -> f64 {
        *flat
            .next()
            .expect("a flat tangent as long as the value's floats")
    }
    fn flatten_lifted_tangent<T: Scalar>(t: &T, out: &mut Vec<T>) {
        out.push(*t);
    }
}

macro_rules! constant_fields {
    ($($t:ty),*) => {$(
        /// No derivative: the value stays as it is.
        impl LiftField for $t {
            type Of<T: Scalar> = $t;
            fn lift<T: Scalar, F: FnMut(f64) -> T>(&self, _: &mut F) -> $t {
                self.clone()
            }
            fn flatten_tangent(_: &NoTangent, _: &mut Vec<f64>) {}
            fn tangent_from_flat(&self, _: &mut std::slice::Iter<'_, f64>) -> NoTangent {
                NoTangent
            }
            fn flatten_lifted_tangent<T: Scalar>(_: &NoTangent, _: &mut Vec<T>) {}
        }
    )*};
}
crate::tangent::for_sized_no_tangent_types!(constant_fields);

impl<X: LiftField> LiftField for Vec<X> {
    type Of<T: Scalar> = Vec<X::Of<T>>;
    fn lift<T: Scalar, F: FnMut(f64) -> T>(&self, f: &mut F) -> Self::Of<T> {
        self.iter().map(|x| x.lift(f)).collect()
    }
    fn flatten_tangent(t: &Self::Tangent, out: &mut Vec<f64>) {
        for e in t {
            X::flatten_tangent(e, out);
        }
    }
    fn tangent_from_flat(&self, flat: &mut std::slice::Iter<'_, f64>) -> Self::Tangent {
        self.iter().map(|x| x.tangent_from_flat(flat)).collect()
    }
    fn flatten_lifted_tangent<T: Scalar>(t: &<Self::Of<T> as Tangent>::Tangent, out: &mut Vec<T>) {
        for e in t {
            X::flatten_lifted_tangent::<T>(e, out);
        }
    }
}

/// `Option`s (`l1: Option<f64>`, a setting that may be off): the value lifted when there
/// is one; `None` has no floats.
impl<X: LiftField> LiftField for Option<X> {
    type Of<T: Scalar> = Option<X::Of<T>>;
    fn lift<T: Scalar, F: FnMut(f64) -> T>(&self, f: &mut F) -> Self::Of<T> {
        self.as_ref().map(|x| x.lift(f))
    }
    fn flatten_tangent(t: &Self::Tangent, out: &mut Vec<f64>) {
        if let Some(e) = t {
            X::flatten_tangent(e, out);
        }
    }
    fn tangent_from_flat(&self, flat: &mut std::slice::Iter<'_, f64>) -> Self::Tangent {
        self.as_ref().map(|x| x.tangent_from_flat(flat))
    }
    fn flatten_lifted_tangent<T: Scalar>(t: &<Self::Of<T> as Tangent>::Tangent, out: &mut Vec<T>) {
        if let Some(e) = t {
            X::flatten_lifted_tangent::<T>(e, out);
        }
    }
}

/// Fixed-size arrays (`pos: [f64; 2]`, `rows: [[f64; 3]; 3]`): each element lifted.
impl<X: LiftField, const N: usize> LiftField for [X; N] {
    type Of<T: Scalar> = [X::Of<T>; N];
    fn lift<T: Scalar, F: FnMut(f64) -> T>(&self, f: &mut F) -> Self::Of<T> {
        // (In order: `from_fn` calls its closure for indices 0, 1, …)
        std::array::from_fn(|i| self[i].lift(f))
    }
    fn flatten_tangent(t: &Self::Tangent, out: &mut Vec<f64>) {
        for e in t {
            X::flatten_tangent(e, out);
        }
    }
    fn tangent_from_flat(&self, flat: &mut std::slice::Iter<'_, f64>) -> Self::Tangent {
        std::array::from_fn(|i| self[i].tangent_from_flat(flat))
    }
    fn flatten_lifted_tangent<T: Scalar>(t: &<Self::Of<T> as Tangent>::Tangent, out: &mut Vec<T>) {
        for e in t {
            X::flatten_lifted_tangent::<T>(e, out);
        }
    }
}

/// Arrays of `f64`, of any dimension.
#[cfg(feature = "ndarray")]
impl<D: ndarray::Dimension> LiftField for ndarray::Array<f64, D> {
    type Of<T: Scalar> = ndarray::Array<T, D>;
    fn lift<T: Scalar, F: FnMut(f64) -> T>(&self, f: &mut F) -> Self::Of<T> {
        self.map(|v| f(*v))
    }
    fn flatten_tangent(t: &Self::Tangent, out: &mut Vec<f64>) {
        out.extend(t.iter().copied());
    }
    fn tangent_from_flat(&self, flat: &mut std::slice::Iter<'_, f64>) -> Self::Tangent {
        self.map(|_| {
            *flat
                .next()
                .expect("a flat tangent as long as the value's floats")
        })
    }
    fn flatten_lifted_tangent<T: Scalar>(t: &<Self::Of<T> as Tangent>::Tangent, out: &mut Vec<T>) {
        out.extend(t.iter().copied());
    }
}

/// The struct `Self` lifted to the scalar `T` (the type inferred from the seeding
/// closure or from the tangent read): what a method's companions seed with duals and
/// read the twin's gradient from.
pub trait TwinOf<T: Scalar> {
    /// `Self` with its floats of type `T`.
    type Twin: Tangent;
    /// `self` with every float `v` replaced by `f(v)`, in the order of [`LiftField`].
    fn twin_with<F: FnMut(f64) -> T>(&self, f: &mut F) -> Self::Twin;
    /// The floats of a tangent of the twin, appended in the same order.
    fn flatten_twin_tangent(t: &<Self::Twin as Tangent>::Tangent, out: &mut Vec<T>);
}

impl<X: LiftField, T: Scalar> TwinOf<T> for X {
    type Twin = X::Of<T>;
    fn twin_with<F: FnMut(f64) -> T>(&self, f: &mut F) -> X::Of<T> {
        self.lift(f)
    }
    fn flatten_twin_tangent(t: &<X::Of<T> as Tangent>::Tangent, out: &mut Vec<T>) {
        X::flatten_lifted_tangent::<T>(t, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_lift_in_order_and_flatten_back() {
        let v = (vec![1.0_f64, 2.0], 7_usize);
        let mut k = 0.0;
        let lifted: Vec<crate::Dual<1>> = v.0.lift(&mut |x| {
            k += 1.0;
            crate::Dual::new(x, [k])
        });
        assert_eq!(lifted[1].partials, [2.0]);
        assert_eq!(v.1.lift::<f64, _>(&mut |x| x), 7);
        let t = v.0.tangent_from_flat(&mut [0.5, -0.5].iter());
        let mut flat = Vec::new();
        Vec::<f64>::flatten_tangent(&t, &mut flat);
        assert_eq!(flat, vec![0.5, -0.5]);
        let mut duals = Vec::new();
        Vec::<f64>::flatten_lifted_tangent::<crate::Dual<1>>(&lifted, &mut duals);
        assert_eq!(duals.len(), 2);
    }
}
