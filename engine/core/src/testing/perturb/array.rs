//! [`Perturb`] and [`Flatten`] for ndarray.

use super::{max_scale, Flatten, Perturb};
use ndarray::{Array, ArrayBase, DataMut, Dimension, Zip};
use rand::Rng;

impl<T: Flatten, D: Dimension> Flatten for Array<T, D> {
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|v| v.flatten_into(out));
    }
}

impl<S, D> Perturb for ArrayBase<S, D>
where
    S: DataMut,
    S::Elem: Perturb,
    D: Dimension,
{
    fn random_tangent<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Tangent {
        self.map(|v| v.random_tangent(rng))
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
    use ndarray::array;
    use rand::SeedableRng;

    #[test]
    fn random_tangents_have_the_primal_shape() {
        let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let r = m.random_tangent(&mut rng);
        assert_eq!(r.shape(), &[2, 3]);
        assert!(r.iter().any(|v| *v != 0.0));
    }

    #[test]
    fn difference_and_primal_eq_of_arrays() {
        let a = (2.5_f64, array![[1.0_f64, 2.0]]);
        let b = (0.5_f64, array![[0.0_f64, 4.0]]);
        let d = a.difference(&b);
        assert_eq!(d, (2.0, array![[1.0, -2.0]]));
        let mut moved = b.clone();
        moved.perturb(&d, 1.0);
        assert!(moved.primal_eq(&a));
        assert!(!array![[1.0_f64, 2.0]].primal_eq(&array![[1.0], [2.0]]));
        assert_eq!(array![[0.5_f64, -0.25]].primal_scale(), Some(0.5));
    }
}
