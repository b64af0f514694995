//! [`Perturb`] and [`Flatten`] for nalgebra: owned matrices of any size, the Cholesky
//! and LU factorisations, which move with the matrix they factor, and rotations, unit
//! quaternions, unit vectors and points, which move in the ambient space of their coordinates (a
//! perturbed rotation matrix is no longer orthogonal, a perturbed unit quaternion no
//! longer of norm one: the rules' pullbacks are derivatives of the primal formulas on
//! that whole space, and this is how finite differences check them).

use super::{max_scale, Flatten, Perturb};
use crate::{Tangent, TangentVector};
use nalgebra::allocator::Allocator;
use nalgebra::{
    Cholesky, DefaultAllocator, Dim, DimMin, DimName, OMatrix, OPoint, Quaternion, RealField,
    Rotation, Scalar as NaScalar, LU,
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

impl<T> Flatten for Quaternion<T>
where
    T: Flatten + NaScalar,
{
    /// `i, j, k, w`, nalgebra's storage order.
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.coords.flatten_into(out);
    }
}

impl<T, D> Flatten for OPoint<T, D>
where
    T: Flatten + NaScalar,
    D: DimName,
    DefaultAllocator: Allocator<D>,
{
    fn flatten_into(&self, out: &mut Vec<f64>) {
        self.coords.flatten_into(out);
    }
}

/// A rotation moves as its matrix: `R + h·Ṙ`, orthogonal or not.
impl<T, const D: usize> Perturb for Rotation<T, D>
where
    T: Perturb + NaScalar,
    T::Tangent: NaScalar,
{
    fn random_tangent<G: Rng + ?Sized>(&self, rng: &mut G) -> Self::Tangent {
        self.matrix().random_tangent(rng)
    }
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        // `matrix_mut_unchecked` waives orthogonality, which an ambient perturbation
        // gives up on purpose.
        self.matrix_mut_unchecked().perturb(direction, step);
    }
    fn difference(&self, from: &Self) -> Self::Tangent {
        self.matrix().difference(from.matrix())
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.matrix().primal_eq(other.matrix())
    }
    fn primal_scale(&self) -> Option<f64> {
        self.matrix().primal_scale()
    }
}

/// A quaternion moves as its four components.
impl<T> Perturb for Quaternion<T>
where
    T: Perturb + NaScalar,
    T::Tangent: NaScalar,
{
    fn random_tangent<G: Rng + ?Sized>(&self, rng: &mut G) -> Self::Tangent {
        Quaternion::from(self.coords.random_tangent(rng))
    }
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        self.coords.perturb(&direction.coords, step);
    }
    fn difference(&self, from: &Self) -> Self::Tangent {
        Quaternion::from(self.coords.difference(&from.coords))
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.coords.primal_eq(&other.coords)
    }
    fn primal_scale(&self) -> Option<f64> {
        self.coords.primal_scale()
    }
}

/// A unit value (a unit quaternion, a unit vector such as an axis of
/// `Unit::new_normalize(v)`) moves as its components, off the unit sphere: the inner
/// value's perturbation, which is its tangent's.
impl<X> Perturb for nalgebra::Unit<X>
where
    X: Perturb,
    nalgebra::Unit<X>: Tangent<Tangent = X::Tangent>,
{
    fn random_tangent<G: Rng + ?Sized>(&self, rng: &mut G) -> Self::Tangent {
        (**self).random_tangent(rng)
    }
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        self.as_mut_unchecked().perturb(direction, step);
    }
    fn difference(&self, from: &Self) -> Self::Tangent {
        (**self).difference(&**from)
    }
    fn primal_eq(&self, other: &Self) -> bool {
        (**self).primal_eq(&**other)
    }
    fn primal_scale(&self) -> Option<f64> {
        (**self).primal_scale()
    }
}

/// A point moves as its coordinates.
impl<T, D> Perturb for OPoint<T, D>
where
    T: Perturb + NaScalar,
    T::Tangent: NaScalar,
    D: DimName,
    DefaultAllocator: Allocator<D>,
{
    fn random_tangent<G: Rng + ?Sized>(&self, rng: &mut G) -> Self::Tangent {
        OPoint::from(self.coords.random_tangent(rng))
    }
    fn perturb(&mut self, direction: &Self::Tangent, step: f64) {
        self.coords.perturb(&direction.coords, step);
    }
    fn difference(&self, from: &Self) -> Self::Tangent {
        OPoint::from(self.coords.difference(&from.coords))
    }
    fn primal_eq(&self, other: &Self) -> bool {
        self.coords.primal_eq(&other.coords)
    }
    fn primal_scale(&self) -> Option<f64> {
        self.coords.primal_scale()
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
    fn rotations_quaternions_and_points_move_in_their_ambient_space() {
        use nalgebra::{Matrix3, Point3, Rotation3, UnitQuaternion, Vector3};
        let r = Rotation3::from_scaled_axis(Vector3::new(0.3_f64, -0.1, 0.2));
        let mut moved = r;
        let dir = Matrix3::from_element(1.0);
        moved.perturb(&dir, 0.25);
        assert!((moved.difference(&r) - dir * 0.25).norm() < 1e-15);
        let q = UnitQuaternion::from_scaled_axis(Vector3::new(0.3_f64, -0.1, 0.2));
        let mut mq = q;
        mq.perturb(&Quaternion::new(1.0, 0.0, 0.0, 0.0), 0.5);
        assert!((mq.w - q.w - 0.5).abs() < 1e-15 && mq.i == q.i);
        let mut out = Vec::new();
        Quaternion::new(4.0_f64, 1.0, 2.0, 3.0).flatten_into(&mut out);
        assert_eq!(out, vec![1.0, 2.0, 3.0, 4.0]);
        let p = Point3::new(1.0_f64, -2.0, 0.5);
        assert_eq!(p.primal_scale(), Some(2.0));
        assert!(p.difference(&Point3::origin()).coords == p.coords);
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
