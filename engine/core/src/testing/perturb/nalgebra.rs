//! [`Perturb`] and [`Flatten`] for nalgebra: owned matrices of any size, and the
//! Cholesky and LU factorisations, which move with the matrix they factor.

use super::{max_scale, Flatten, Perturb};
use crate::{Tangent, TangentVector};
use nalgebra::allocator::Allocator;
use nalgebra::{
    Cholesky, DefaultAllocator, Dim, DimMin, OMatrix, RealField, Scalar as NaScalar, LU,
};
use rand::Rng;

impl<T, R, C> Flatten for OMatrix<T, R, C>
where
    T: Flatten + NaScalar,
    R: Dim,
    C: Dim,
    DefaultAllocator: Allocator<R, C>,
{
    /// Column-major, nalgebra's storage order.
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|v| v.flatten_into(out));
    }
}

impl<T, R, C> Perturb for OMatrix<T, R, C>
where
    T: Perturb + NaScalar,
    T::Tangent: NaScalar,
    R: Dim,
    C: Dim,
    DefaultAllocator: Allocator<R, C>,
{
    fn random_tangent<G: Rng + ?Sized>(&self, rng: &mut G) -> Self::Tangent {
        let (r, c) = self.shape_generic();
        OMatrix::from_fn_generic(r, c, |i, j| self[(i, j)].random_tangent(rng))
    }
    #[track_caller]
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        assert_eq!(
            self.shape(),
            direction.shape(),
            "mochi: perturbation shape mismatch"
        );
        self.iter_mut()
            .zip(direction.iter())
            .for_each(|(v, d)| v.perturb(d, step));
    }
    #[track_caller]
    fn difference(&self, from: &Self) -> Self::Tangent {
        assert_eq!(
            self.shape(),
            from.shape(),
            "mochi: difference of matrices of different shapes"
        );
        let (r, c) = self.shape_generic();
        OMatrix::from_fn_generic(r, c, |i, j| self[(i, j)].difference(&from[(i, j)]))
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.iter().zip(other.iter()).all(|(a, b)| a.primal_eq(b))
    }
    fn primal_scale(&self) -> Option<f64> {
        self.iter()
            .map(Perturb::primal_scale)
            .fold(Some(0.0), max_scale)
    }
}

/// `(M + Mᵀ)/2`: a factorisation of a symmetric matrix moves along symmetric directions.
fn symmetric_part<T: RealField + Copy, D: Dim>(m: &OMatrix<T, D, D>) -> OMatrix<T, D, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    let half = T::from_subset(&0.5);
    (m + m.transpose()) * half
}

/// `A = L Lᵀ`.
fn cholesky_matrix<T: RealField + Copy, D: Dim>(c: &Cholesky<T, D>) -> OMatrix<T, D, D>
where
    DefaultAllocator: Allocator<D, D>,
{
    let l = c.l();
    &l * l.transpose()
}

/// A Cholesky factorisation moves with `A = L Lᵀ`: `A + h·Ȧ` (`Ȧ` symmetric) is factored
/// anew, and the difference of two factorisations is the difference of their matrices.
impl<T, D> Perturb for Cholesky<T, D>
where
    T: RealField + Copy + Perturb + Flatten + Tangent<Tangent = T> + TangentVector,
    D: Dim,
    DefaultAllocator: Allocator<D, D>,
{
    fn random_tangent<G: Rng + ?Sized>(&self, rng: &mut G) -> OMatrix<T, D, D> {
        symmetric_part(&cholesky_matrix(self).random_tangent(rng))
    }
    #[track_caller]
    fn perturb(&mut self, direction: &OMatrix<T, D, D>, step: f64) {
        let mut a = cholesky_matrix(self);
        a.perturb(direction, step);
        *self = a
            .cholesky()
            .expect("mochi: a perturbed Cholesky factorisation is no longer positive definite");
    }
    fn difference(&self, from: &Self) -> OMatrix<T, D, D> {
        cholesky_matrix(self) - cholesky_matrix(from)
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.l().primal_eq(&other.l())
    }
    fn primal_scale(&self) -> Option<f64> {
        cholesky_matrix(self).primal_scale()
    }
}

/// `A = P⁻¹ L U`.
fn lu_matrix<T: RealField + Copy, D: DimMin<D, Output = D>>(lu: &LU<T, D, D>) -> OMatrix<T, D, D>
where
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    let mut a = lu.l() * lu.u();
    lu.p().inv_permute_rows(&mut a);
    a
}

/// An LU factorisation moves with the matrix it factors: `A + h·Ȧ` is factored anew.
impl<T, D> Perturb for LU<T, D, D>
where
    T: RealField + Copy + Perturb + Flatten + Tangent<Tangent = T> + TangentVector,
    D: DimMin<D, Output = D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    fn random_tangent<G: Rng + ?Sized>(&self, rng: &mut G) -> OMatrix<T, D, D> {
        lu_matrix(self).random_tangent(rng)
    }
    fn perturb(&mut self, direction: &OMatrix<T, D, D>, step: f64) {
        let mut a = lu_matrix(self);
        a.perturb(direction, step);
        *self = a.lu();
    }
    fn difference(&self, from: &Self) -> OMatrix<T, D, D> {
        lu_matrix(self) - lu_matrix(from)
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.l().primal_eq(&other.l()) && self.u().primal_eq(&other.u())
    }
    fn primal_scale(&self) -> Option<f64> {
        lu_matrix(self).primal_scale()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, Vector2};
    use rand::SeedableRng;

    #[test]
    fn random_tangents_difference_and_primal_eq() {
        let m = DMatrix::from_row_slice(2, 3, &[1.0_f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let r = m.random_tangent(&mut rng);
        assert_eq!(r.shape(), (2, 3));
        let mut moved = m.clone();
        moved.perturb(&r, 0.5);
        let d = moved.difference(&m);
        assert!((d - r * 0.5).norm() < 1e-12);
        assert!(!m.primal_eq(&moved));
        assert_eq!(Vector2::new(0.5_f64, -3.0).primal_scale(), Some(3.0));
    }

    #[test]
    fn factorisations_move_with_their_matrix() {
        let a = DMatrix::from_row_slice(2, 2, &[2.0_f64, 0.5, 0.5, 1.0]);
        let c = a.clone().cholesky().expect("positive definite");
        assert!((cholesky_matrix(&c) - &a).norm() < 1e-12);
        let mut moved = c.clone();
        let dir = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, 1.0]);
        moved.perturb(&dir, 0.1);
        assert!((moved.difference(&c) - dir * 0.1).norm() < 1e-12);
        let lu = a.clone().lu();
        assert!((lu_matrix(&lu) - &a).norm() < 1e-12);
        assert!(lu.primal_eq(&a.lu()));
    }
}
