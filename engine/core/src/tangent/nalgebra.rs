//! [`Tangent`] and [`TangentVector`] for nalgebra: the cotangent of a `Matrix<T, R, C, S>`
//! (any storage: owned, views; dynamic or static sizes) is the owned
//! `OMatrix<T::Tangent, R, C>`; the cotangent of a [`Cholesky`] or [`LU`] factorisation
//! is the cotangent of the matrix it factors, an `OMatrix<T, D, D>`.
//!
//! A rotation, a unit quaternion and a point have the cotangent of the coordinates they
//! store: a [`Rotation`] (`Rotation3`) the `SMatrix` of its entries, a [`UnitQuaternion`]
//! the [`Quaternion`] of its four components, an [`OPoint`] (`Point3`) a point of the
//! same type (its coordinates, kept in a point so that `p.x` and `p.coords` name the
//! same field of the value and of its cotangent). These are the ambient spaces the
//! constrained values live in: a rule's pullback is the derivative of the formula the
//! primal evaluates, extended to every matrix or quaternion, and the chain rule through
//! a value built on the manifold (from a rotation vector) gives the exact gradient.
//!
//! A cotangent has two forms: dense (the primal's shape) and, for a dimension that is
//! dynamic, the structural zero with no element (a `0 × 0` `DMatrix`, a `0 × 1`
//! `DVector`), which accumulating adopts the shape of. A matrix of static size has no
//! empty form: its structural zero is the dense zero, which costs no allocation.
//!
//! Also here, because nalgebra's types and these traits are both foreign to a rule crate:
//! the indexing support generated code calls (`v[i]`, `m[(i, j)]`), see
//! [`private`](crate::private).

use super::{Tangent, TangentVector};
use crate::private::{AccumulateFrom, IndexShape, IndexTangent, SeqLen};
use nalgebra::allocator::Allocator;
use nalgebra::{
    Cholesky, DefaultAllocator, Dim, DimMin, DimName, Matrix, OMatrix, OPoint, Quaternion,
    RawStorage, RealField, Rotation, SMatrix, Scalar as NaScalar, UnitQuaternion, LU,
};

/// The size of a dimension's structural zero: its length when static, `0` when dynamic.
#[inline(always)]
fn zero_dim<D: Dim>() -> D {
    D::from_usize(D::try_to_usize().unwrap_or(0))
}

/// The structural zero of an owned matrix type.
#[inline(always)]
fn structural_zero<T: TangentVector + NaScalar, R: Dim, C: Dim>() -> OMatrix<T, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    OMatrix::from_fn_generic(zero_dim::<R>(), zero_dim::<C>(), |_, _| T::zero())
}

/// `dst += src` element by element; both have the same shape.
#[track_caller]
fn add_dense<T: TangentVector + NaScalar, R: Dim, C: Dim>(
    dst: &mut OMatrix<T, R, C>,
    src: &OMatrix<T, R, C>,
) where
    DefaultAllocator: Allocator<R, C>,
{
    assert_eq!(
        dst.shape(),
        src.shape(),
        "mochi: cotangent shape mismatch: {:?} and {:?}",
        dst.shape(),
        src.shape()
    );
    dst.iter_mut()
        .zip(src.iter())
        .for_each(|(d, s)| d.accumulate_ref(s));
}

impl<T, R, C> TangentVector for OMatrix<T, R, C>
where
    T: TangentVector + NaScalar,
    R: Dim,
    C: Dim,
    DefaultAllocator: Allocator<R, C>,
{
    #[inline]
    fn zero() -> Self {
        structural_zero()
    }
    #[track_caller]
    fn accumulate(&mut self, other: Self) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other;
        } else {
            add_dense(self, &other);
        }
    }
    #[track_caller]
    fn accumulate_ref(&mut self, other: &Self) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
        } else {
            add_dense(self, other);
        }
    }
    fn scale(&mut self, factor: f64) {
        self.iter_mut().for_each(|v| v.scale(factor));
    }
    #[track_caller]
    fn inner(&self, other: &Self) -> f64 {
        if self.is_empty() || other.is_empty() {
            return 0.0;
        }
        assert_eq!(
            self.shape(),
            other.shape(),
            "mochi: cotangent shape mismatch in an inner product"
        );
        self.iter().zip(other.iter()).map(|(a, b)| a.inner(b)).sum()
    }
}

/// Writes a structural-zero cotangent of a `rows × cols` primal out densely.
#[track_caller]
fn densify_matrix<T: TangentVector + NaScalar, R: Dim, C: Dim>(
    t: &mut OMatrix<T, R, C>,
    rows: usize,
    cols: usize,
) where
    DefaultAllocator: Allocator<R, C>,
{
    if t.shape() == (rows, cols) {
        return;
    }
    assert!(
        t.is_empty(),
        "mochi: a cotangent of shape {:?} does not fit a primal of shape {:?}",
        t.shape(),
        (rows, cols)
    );
    *t = OMatrix::from_fn_generic(R::from_usize(rows), C::from_usize(cols), |_, _| T::zero());
}

impl<T, R, C, S> Tangent for Matrix<T, R, C, S>
where
    T: Tangent + NaScalar,
    T::Tangent: NaScalar,
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C>,
    DefaultAllocator: Allocator<R, C>,
{
    type Tangent = OMatrix<T::Tangent, R, C>;
    fn zero_tangent(&self) -> Self::Tangent {
        let (r, c) = self.shape_generic();
        OMatrix::from_fn_generic(r, c, |i, j| self[(i, j)].zero_tangent())
    }
    #[track_caller]
    fn densify(&self, t: &mut Self::Tangent) {
        if t.shape() != self.shape() {
            *t = self.zero_tangent();
        }
    }
}

/// The cotangent of a unit vector (`Vector3::z_axis()`, an axis of `from_axis_angle`)
/// is the cotangent of its vector, in the ambient space (as a unit quaternion's).
impl<T, R, C, S> Tangent for nalgebra::Unit<Matrix<T, R, C, S>>
where
    T: Tangent + NaScalar,
    T::Tangent: NaScalar,
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C>,
    DefaultAllocator: Allocator<R, C>,
{
    type Tangent = OMatrix<T::Tangent, R, C>;
    fn zero_tangent(&self) -> Self::Tangent {
        self.as_ref().zero_tangent()
    }
}

/// The cotangent of a Cholesky factorisation of `A` is `Ā`, the cotangent of the
/// symmetric matrix `A = L Lᵀ` it stands for.
impl<T, D> Tangent for Cholesky<T, D>
where
    T: RealField + Tangent<Tangent = T> + TangentVector,
    D: Dim,
    DefaultAllocator: Allocator<D, D>,
{
    type Tangent = OMatrix<T, D, D>;
    fn zero_tangent(&self) -> OMatrix<T, D, D> {
        let (n, _) = self.l_dirty().shape_generic();
        OMatrix::from_fn_generic(n, n, |_, _| <T as TangentVector>::zero())
    }
    #[track_caller]
    fn densify(&self, t: &mut OMatrix<T, D, D>) {
        let n = self.l_dirty().nrows();
        densify_matrix(t, n, n);
    }
}

/// The cotangent of an LU factorisation of a square `A` is `Ā`, the cotangent of `A`.
impl<T, D> Tangent for LU<T, D, D>
where
    T: RealField + Tangent<Tangent = T> + TangentVector,
    D: DimMin<D, Output = D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    type Tangent = OMatrix<T, D, D>;
    fn zero_tangent(&self) -> OMatrix<T, D, D> {
        let (n, _) = self.l().shape_generic();
        OMatrix::from_fn_generic(n, n, |_, _| <T as TangentVector>::zero())
    }
    #[track_caller]
    fn densify(&self, t: &mut OMatrix<T, D, D>) {
        let n = self.l().nrows();
        densify_matrix(t, n, n);
    }
}

/// The cotangent of a rotation is the cotangent of its matrix (the ambient `D × D`
/// matrices; see the module docs).
impl<T, const D: usize> Tangent for Rotation<T, D>
where
    T: Tangent + NaScalar,
    T::Tangent: NaScalar,
{
    type Tangent = SMatrix<T::Tangent, D, D>;
    fn zero_tangent(&self) -> Self::Tangent {
        self.matrix().zero_tangent()
    }
}

/// A quaternion is a vector of four components: the cotangent of a unit quaternion.
impl<T> TangentVector for Quaternion<T>
where
    T: TangentVector + NaScalar,
{
    #[inline]
    fn zero() -> Self {
        Quaternion::from(<nalgebra::Vector4<T> as TangentVector>::zero())
    }
    #[inline]
    fn accumulate(&mut self, other: Self) {
        self.coords.accumulate_ref(&other.coords);
    }
    #[inline]
    fn accumulate_ref(&mut self, other: &Self) {
        self.coords.accumulate_ref(&other.coords);
    }
    fn scale(&mut self, factor: f64) {
        self.coords.scale(factor);
    }
    fn inner(&self, other: &Self) -> f64 {
        self.coords.inner(&other.coords)
    }
}

impl<T> Tangent for Quaternion<T>
where
    T: Tangent + NaScalar,
    T::Tangent: NaScalar,
{
    type Tangent = Quaternion<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        Quaternion::from(self.coords.zero_tangent())
    }
}

/// The cotangent of a unit quaternion is a [`Quaternion`] (the ambient space; see the
/// module docs). `q.w`, `q.i`, `q.coords` read the same field of both.
impl<T> Tangent for UnitQuaternion<T>
where
    T: Tangent + NaScalar,
    T::Tangent: NaScalar,
{
    type Tangent = Quaternion<T::Tangent>;
    fn zero_tangent(&self) -> Self::Tangent {
        (**self).zero_tangent()
    }
}

/// A point's cotangent is a point of the same type: its coordinates' cotangent.
impl<T, D> TangentVector for OPoint<T, D>
where
    T: TangentVector + NaScalar,
    D: DimName,
    DefaultAllocator: Allocator<D>,
{
    #[inline]
    fn zero() -> Self {
        OPoint::from(<OMatrix<T, D, nalgebra::U1> as TangentVector>::zero())
    }
    #[inline]
    fn accumulate(&mut self, other: Self) {
        self.coords.accumulate_ref(&other.coords);
    }
    #[inline]
    fn accumulate_ref(&mut self, other: &Self) {
        self.coords.accumulate_ref(&other.coords);
    }
    fn scale(&mut self, factor: f64) {
        self.coords.scale(factor);
    }
    fn inner(&self, other: &Self) -> f64 {
        self.coords.inner(&other.coords)
    }
}

impl<T, D> Tangent for OPoint<T, D>
where
    T: Tangent + NaScalar,
    T::Tangent: NaScalar,
    D: DimName,
    DefaultAllocator: Allocator<D>,
{
    type Tangent = OPoint<T::Tangent, D>;
    fn zero_tangent(&self) -> Self::Tangent {
        OPoint::from(self.coords.zero_tangent())
    }
}

impl<T, R, C, S> IndexShape for Matrix<T, R, C, S>
where
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C>,
{
    /// `(rows, columns)`.
    type Shape = (usize, usize);
    #[inline(always)]
    fn index_shape(&self) -> (usize, usize) {
        self.shape()
    }
}

/// `v.as_slice()`, `v.iter().copied().collect::<Vec<_>>()` of a vector: the `Vec`
/// cotangent of the result goes back into the vector's.
impl<T, R> AccumulateFrom<Vec<T>> for OMatrix<T, R, nalgebra::U1>
where
    T: TangentVector + NaScalar,
    R: Dim,
    DefaultAllocator: Allocator<R, nalgebra::U1>,
    OMatrix<T, R, nalgebra::U1>: TangentVector,
{
    #[track_caller]
    fn accumulate_from(&mut self, src: Vec<T>) {
        if src.is_empty() {
            return;
        }
        let v = OMatrix::<T, R, nalgebra::U1>::from_iterator_generic(
            R::from_usize(src.len()),
            nalgebra::U1,
            src,
        );
        self.accumulate(v);
    }
}

/// `r[(i, j)]` of a rotation: an entry of its matrix, whose cotangent is a matrix.
impl<T, const D: usize> IndexShape for Rotation<T, D> {
    /// `(D, D)`.
    type Shape = (usize, usize);
    #[inline(always)]
    fn index_shape(&self) -> (usize, usize) {
        (D, D)
    }
}

/// A matrix or vector walked element by element (`for v in x.iter()`, a chain): its
/// elements in nalgebra's order, column by column, as its linear index reads them.
impl<T, R, C, S> SeqLen for Matrix<T, R, C, S>
where
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C>,
{
    #[inline(always)]
    fn seq_len(&self) -> usize {
        self.len()
    }
}

/// `dst[i] += v` for a linear (column-major) index or a `(row, column)` pair, writing a
/// structural zero out with `shape` first.
macro_rules! index_tangent {
    ($($I:ty),*) => {$(
        impl<T, R, C> IndexTangent<$I> for OMatrix<T, R, C>
        where
            T: TangentVector + NaScalar,
            R: Dim,
            C: Dim,
            DefaultAllocator: Allocator<R, C>,
        {
            type Elem = T;
            type Shape = (usize, usize);
            #[inline(always)]
            #[track_caller]
            fn index_acc(&mut self, shape: &(usize, usize), i: $I, v: T) {
                if self.shape() != *shape {
                    densify_matrix(self, shape.0, shape.1);
                }
                self[i].accumulate(v);
            }
            #[inline(always)]
            fn index_take(&mut self, _shape: &(usize, usize), i: $I) -> T {
                match self.get_mut(i) {
                    Some(e) => std::mem::replace(e, T::zero()),
                    None => T::zero(),
                }
            }
        }
    )*};
}
index_tangent!(usize, (usize, usize));

#[cfg(test)]
mod tests {
    use crate::private::{index_acc, index_shape};
    use crate::{Tangent, TangentVector};
    use nalgebra::{DMatrix, DVector, Matrix2, Vector3};

    #[test]
    fn structural_zero_adopts_the_shape_of_what_is_accumulated() {
        let mut z: DMatrix<f64> = TangentVector::zero();
        assert!(z.is_empty());
        z.accumulate(DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]));
        z.accumulate_ref(&DMatrix::from_element(2, 2, 1.0));
        assert_eq!(z, DMatrix::from_row_slice(2, 2, &[2.0, 3.0, 4.0, 5.0]));
        z.accumulate(TangentVector::zero());
        assert_eq!(z[(1, 1)], 5.0);
    }

    #[test]
    fn static_sizes_have_a_dense_structural_zero() {
        let mut z: Vector3<f64> = TangentVector::zero();
        assert_eq!(z, Vector3::zeros());
        z.accumulate(Vector3::new(1.0, 2.0, 3.0));
        assert_eq!(z.inner(&Vector3::new(1.0, 1.0, 1.0)), 6.0);
        let m = Matrix2::new(1.0_f32, 2.0, 3.0, 4.0);
        assert_eq!(m.zero_tangent(), Matrix2::zeros());
    }

    #[test]
    fn densify_and_indexing_write_a_structural_zero_out() {
        let v = DVector::from_vec(vec![1.0_f64, 2.0, 3.0]);
        let mut t: DVector<f64> = TangentVector::zero();
        v.densify(&mut t);
        assert_eq!(t, DVector::zeros(3));
        let m = DMatrix::<f64>::zeros(2, 3);
        let mut dm: DMatrix<f64> = TangentVector::zero();
        index_acc(&mut dm, &index_shape(&m), (1, 2), 4.0);
        index_acc(&mut dm, &index_shape(&m), 0, 1.0);
        assert_eq!(dm.shape(), (2, 3));
        assert_eq!((dm[(1, 2)], dm[(0, 0)]), (4.0, 1.0));
    }

    #[test]
    fn rotations_quaternions_and_points_have_the_cotangent_of_their_coordinates() {
        use nalgebra::{Matrix3, Point3, Quaternion, Rotation3, UnitQuaternion};
        let r = Rotation3::from_scaled_axis(Vector3::new(0.1_f64, 0.2, 0.3));
        let dr: Matrix3<f64> = r.zero_tangent();
        assert_eq!(dr, Matrix3::zeros());
        let q = UnitQuaternion::from_scaled_axis(Vector3::new(0.1_f64, 0.2, 0.3));
        let mut dq: Quaternion<f64> = q.zero_tangent();
        dq.accumulate(Quaternion::new(1.0, 2.0, 3.0, 4.0));
        dq.accumulate_ref(&Quaternion::new(1.0, 0.0, 0.0, 0.0));
        assert_eq!((dq.w, dq.i, dq.k), (2.0, 2.0, 4.0));
        assert_eq!(
            TangentVector::inner(&dq, &Quaternion::new(1.0, 1.0, 1.0, 1.0)),
            11.0
        );
        let mut dp: Point3<f32> = TangentVector::zero();
        dp.accumulate(Point3::new(1.0, 2.0, 3.0));
        assert_eq!(dp.coords, Vector3::new(1.0, 2.0, 3.0));
        assert_eq!(
            Point3::new(1.0_f64, 2.0, 3.0).zero_tangent(),
            Point3::origin()
        );
    }

    #[test]
    fn factorisations_have_the_cotangent_of_their_matrix() {
        let a = DMatrix::from_row_slice(2, 2, &[2.0_f64, 0.5, 0.5, 1.0]);
        let chol = a.clone().cholesky().expect("positive definite");
        assert_eq!(chol.zero_tangent().shape(), (2, 2));
        let lu = a.lu();
        let mut t: DMatrix<f64> = TangentVector::zero();
        lu.densify(&mut t);
        assert_eq!(t, DMatrix::zeros(2, 2));
    }
}
