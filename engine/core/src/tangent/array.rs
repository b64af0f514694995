//! [`Tangent`] and [`TangentVector`] for ndarray: the cotangent of an `ArrayBase<S, D>`
//! of `T` is an owned `Array<T::Tangent, D>`, in one of the three forms of
//! [`broadcast`](super::broadcast) (structural zero, broadcast, dense).

use super::broadcast;
use super::{Tangent, TangentVector};
use ndarray::{Array, ArrayBase, ArrayView, Data, Dimension, Zip};

/// The structural zero of an n-dimensional cotangent: an empty array of the right rank;
/// for a 0-dimensional array (one element, no axis: `a.sum_axis(Axis(0))` of a vector),
/// which cannot be empty, the dense zero.
fn empty_array<T: TangentVector, D: Dimension>() -> Array<T, D> {
    let dim = D::zeros(D::NDIM.unwrap_or(1));
    if D::NDIM == Some(0) {
        return Array::from_shape_fn(dim, |_| T::zero());
    }
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
    #[track_caller]
    fn densify(&self, t: &mut Self::Tangent) {
        broadcast::densify(t, &self.raw_dim(), || self.zero_tangent());
        if std::mem::needs_drop::<<S::Elem as Tangent>::Tangent>() {
            Zip::from(self).and(t).for_each(|v, t| v.densify(t));
        }
    }
}

/// An axis index carries no derivative: an `Axis` parameter of a differentiable
/// function gets a zero-sized cotangent.
impl Tangent for ndarray::Axis {
    type Tangent = super::NoTangent;
    #[inline(always)]
    fn zero_tangent(&self) -> super::NoTangent {
        super::NoTangent
    }
}

/// A shape (`x.raw_dim()`) carries no derivative.
impl<I> Tangent for ndarray::Dim<I> {
    type Tangent = super::NoTangent;
    #[inline(always)]
    fn zero_tangent(&self) -> super::NoTangent {
        super::NoTangent
    }
}

#[cfg(test)]
mod tests {
    use crate::{Tangent, TangentVector};
    use ndarray::{array, Array2};

    #[test]
    fn structural_zero_adopts_the_shape_of_what_is_accumulated() {
        let mut z: Array2<f64> = TangentVector::zero();
        z.accumulate(array![[1.0, 2.0], [3.0, 4.0]]);
        z.accumulate_ref(&array![[1.0, 1.0], [1.0, 1.0]]);
        assert_eq!(z, array![[2.0, 3.0], [4.0, 5.0]]);
    }

    #[test]
    fn tangents_of_views_have_the_primal_shape() {
        let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let t = m.t();
        assert_eq!(t.zero_tangent().shape(), &[3, 2]);
    }
}
