//! A 2×2 matrix type and its rules, written with the rule kit (`mochi::kit`) alone, as
//! a crate outside the workspace's rule crates would write them. Its tests
//! differentiate `#[differentiable]` functions on these types: products, transposes,
//! traces, element reads, a free function (`outer`), an identity method (`view`, to a
//! type with a lifetime) and shape queries without a derivative (`rows`, `shape`), with
//! no change to the macro for any of them.

use mochi::kit::{
    inactive_methods, rule_trait, Call, IdentityPullback, IndexShape, IndexTangent, Pullback,
};
use mochi::Tangent;

/// A 2×2 matrix of `f64`, row-major.
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct Mat2 {
    /// The entries, `m[i][j]` in row `i` and column `j`.
    pub m: [[f64; 2]; 2],
}

/// A vector of two `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
pub struct Vec2 {
    /// The entries.
    pub v: [f64; 2],
}

/// A borrowed view of a [`Mat2`]: a type with a lifetime, whose tangent is the
/// matrix's.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a> {
    mat: &'a Mat2,
}

/// A view type written the way array crates write theirs, hiding the lifetime:
/// `View` in a signature is `MatRef<'_>`.
pub type View<'a> = MatRef<'a>;

impl Mat2 {
    /// The matrix with rows `[a, b]` and `[c, d]`.
    pub fn new(a: f64, b: f64, c: f64, d: f64) -> Self {
        Mat2 {
            m: [[a, b], [c, d]],
        }
    }
    /// The matrix product `self · other`.
    pub fn matmul(&self, other: &Mat2) -> Mat2 {
        let mut c = [[0.0; 2]; 2];
        for (i, row) in c.iter_mut().enumerate() {
            for (j, cij) in row.iter_mut().enumerate() {
                *cij = self.m[i][0] * other.m[0][j] + self.m[i][1] * other.m[1][j];
            }
        }
        Mat2 { m: c }
    }
    /// The transpose.
    pub fn transpose(&self) -> Mat2 {
        Mat2::new(self.m[0][0], self.m[1][0], self.m[0][1], self.m[1][1])
    }
    /// The sum of the diagonal.
    pub fn trace(&self) -> f64 {
        self.m[0][0] + self.m[1][1]
    }
    /// The number of rows.
    pub fn rows(&self) -> usize {
        2
    }
    /// `(rows, columns)`.
    pub fn shape(&self) -> (usize, usize) {
        (2, 2)
    }
    /// A borrowed view of the same entries.
    pub fn view(&self) -> MatRef<'_> {
        MatRef { mat: self }
    }
}

impl MatRef<'_> {
    /// The sum of the diagonal.
    pub fn trace(&self) -> f64 {
        self.mat.trace()
    }
}

impl std::ops::Mul for &Mat2 {
    type Output = Mat2;
    fn mul(self, other: &Mat2) -> Mat2 {
        self.matmul(other)
    }
}

impl std::ops::Mul for Mat2 {
    type Output = Mat2;
    fn mul(self, other: Mat2) -> Mat2 {
        self.matmul(&other)
    }
}

impl std::ops::Index<(usize, usize)> for Mat2 {
    type Output = f64;
    fn index(&self, (i, j): (usize, usize)) -> &f64 {
        &self.m[i][j]
    }
}

impl std::ops::Index<(usize, usize)> for MatRef<'_> {
    type Output = f64;
    fn index(&self, (i, j): (usize, usize)) -> &f64 {
        &self.mat.m[i][j]
    }
}

impl Tangent for MatRef<'_> {
    type Tangent = Mat2Tangent;
    fn zero_tangent(&self) -> Mat2Tangent {
        self.mat.zero_tangent()
    }
}

/// The outer product `u vᵀ`.
pub fn outer(u: &Vec2, v: &Vec2) -> Mat2 {
    Mat2::new(
        u.v[0] * v.v[0],
        u.v[0] * v.v[1],
        u.v[1] * v.v[0],
        u.v[1] * v.v[1],
    )
}

/// The rule of [`outer`](fn@outer): `ū += C̄ v`, `v̄ += C̄ᵀ u`. `#[differentiable]` lowers
/// `outer(&u, &v)` to `outer::rrule(&u, &v)`; importing `mochi_kit_check::outer` brings
/// the function and this module at once.
pub mod outer {
    use super::*;

    /// Pullback of `outer`: copies of both vectors.
    pub struct OuterPullback {
        u: Vec2,
        v: Vec2,
    }

    impl Pullback for OuterPullback {
        type Output = Mat2Tangent;
        type Args = (Vec2Tangent, Vec2Tangent);
        fn pullback(self, dc: Mat2Tangent, (du, dv): (&mut Vec2Tangent, &mut Vec2Tangent)) {
            for i in 0..2 {
                for j in 0..2 {
                    du.v[i] += dc.m[i][j] * self.v.v[j];
                    dv.v[j] += dc.m[i][j] * self.u.v[i];
                }
            }
        }
    }

    /// `outer(u, v)` with its pullback.
    pub fn rrule(u: &Vec2, v: &Vec2) -> (Mat2, OuterPullback) {
        (super::outer(u, v), OuterPullback { u: *u, v: *v })
    }
}

rule_trait! {
    /// `a * b` of matrices: `Call((&a, &b)).op_mul()`.
    MatMulRule::op_mul
}
rule_trait! {
    /// `a.transpose()`: `Call((&a,)).transpose()`.
    MatTransposeRule::transpose
}
rule_trait! {
    /// `a.trace()`: `Call((&a,)).trace()`.
    MatTraceRule::trace
}
rule_trait! {
    /// `a.view()`: `Call((&a,)).view()`, an identity.
    MatViewRule::view
}

inactive_methods! {
    /// `a.rows()`: no derivative.
    MatRowsRule::rows() -> usize, impl['a] for &'a Mat2;
    /// `a.shape()`: no derivative.
    MatShapeRule::shape() -> (usize, usize), impl['a] for &'a Mat2;
}

/// Pullback of `a * b`: `Ā += C̄ Bᵀ`, `B̄ += Aᵀ C̄`.
pub struct MatMulPullback {
    a: Mat2,
    b: Mat2,
}

impl Pullback for MatMulPullback {
    type Output = Mat2Tangent;
    type Args = (Mat2Tangent, Mat2Tangent);
    fn pullback(self, dc: Mat2Tangent, (da, db): (&mut Mat2Tangent, &mut Mat2Tangent)) {
        for i in 0..2 {
            for j in 0..2 {
                for k in 0..2 {
                    da.m[i][k] += dc.m[i][j] * self.b.m[k][j];
                    db.m[k][j] += self.a.m[i][k] * dc.m[i][j];
                }
            }
        }
    }
}

impl MatMulRule for Call<(&Mat2, &Mat2)> {
    type Output = Mat2;
    type Pullback = MatMulPullback;
    fn op_mul(self) -> (Mat2, MatMulPullback) {
        let (a, b) = self.0;
        (a.matmul(b), MatMulPullback { a: *a, b: *b })
    }
}

/// Pullback of `a.transpose()`: `Ā += C̄ᵀ`.
pub struct TransposePullback;

impl Pullback for TransposePullback {
    type Output = Mat2Tangent;
    type Args = (Mat2Tangent,);
    fn pullback(self, dc: Mat2Tangent, (da,): (&mut Mat2Tangent,)) {
        for i in 0..2 {
            for j in 0..2 {
                da.m[j][i] += dc.m[i][j];
            }
        }
    }
}

impl MatTransposeRule for Call<(&Mat2,)> {
    type Output = Mat2;
    type Pullback = TransposePullback;
    fn transpose(self) -> (Mat2, TransposePullback) {
        (self.0 .0.transpose(), TransposePullback)
    }
}

/// Pullback of `a.trace()`: `Ā += ȳ I`.
pub struct TracePullback;

impl Pullback for TracePullback {
    type Output = f64;
    type Args = (Mat2Tangent,);
    fn pullback(self, dy: f64, (da,): (&mut Mat2Tangent,)) {
        da.m[0][0] += dy;
        da.m[1][1] += dy;
    }
}

impl MatTraceRule for Call<(&Mat2,)> {
    type Output = f64;
    type Pullback = TracePullback;
    fn trace(self) -> (f64, TracePullback) {
        (self.0 .0.trace(), TracePullback)
    }
}

impl MatTraceRule for Call<(&MatRef<'_>,)> {
    type Output = f64;
    type Pullback = TracePullback;
    fn trace(self) -> (f64, TracePullback) {
        (self.0 .0.trace(), TracePullback)
    }
}

impl<'a> MatViewRule for Call<(&'a Mat2,)> {
    type Output = MatRef<'a>;
    type Pullback = IdentityPullback<Mat2Tangent>;
    fn view(self) -> (MatRef<'a>, Self::Pullback) {
        (self.0 .0.view(), IdentityPullback::new())
    }
}

/// Element reads `a[(i, j)]`: the shape the reverse sweep keeps (none: always 2×2).
impl IndexShape for Mat2 {
    type Shape = ();
    fn index_shape(&self) {}
}

impl IndexShape for MatRef<'_> {
    type Shape = ();
    fn index_shape(&self) {}
}

/// Element reads `a[(i, j)]`: the cotangent of one entry.
impl IndexTangent<(usize, usize)> for Mat2Tangent {
    type Elem = f64;
    type Shape = ();
    fn index_acc(&mut self, _shape: &(), (i, j): (usize, usize), v: f64) {
        self.m[i][j] += v;
    }
    fn index_take(&mut self, _shape: &(), (i, j): (usize, usize)) -> f64 {
        std::mem::replace(&mut self.m[i][j], 0.0)
    }
}

/// The rule traits of this crate, for `use mochi_kit_check::rules::*;` beside
/// `use mochi::prelude::*;`.
pub mod rules {
    pub use crate::{
        MatMulRule, MatRowsRule, MatShapeRule, MatTraceRule, MatTransposeRule, MatViewRule,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use mochi::TangentVector;

    #[test]
    fn tangent_vector_of_the_derived_type() {
        let mut t = Mat2Tangent::zero();
        t.accumulate(Mat2::new(1.0, 2.0, 3.0, 4.0).zero_tangent());
        assert_eq!(t.m, [[0.0; 2]; 2]);
    }
}
