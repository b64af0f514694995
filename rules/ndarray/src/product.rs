//! Products: `dot` for vector·vector, matrix·vector, vector·matrix and
//! matrix·matrix, and the outer product [`outer`](fn@outer).
//!
//! For `C = A·B`, `Ā += C̄·Bᵀ` and `B̄ += Aᵀ·C̄`; the products accumulate straight
//! into dense accumulators with `general_mat_mul(…, β = 1, …)`, so a pullback
//! creates no temporary matrix. (The matrix–matrix kernel itself, `matrixmultiply`,
//! allocates its packing buffers on every call, in the primal product as in the
//! pullback; every other product here allocates nothing on dense accumulators.)

use crate::cotangent::{add_owned, add_scaled, dense, form, is_structural_zero, output, Form};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use ndarray::linalg::{general_mat_mul, general_mat_vec_mul};
use ndarray::{Array, Array1, Array2, ArrayBase, ArrayView1, Axis, Data, Ix1, Ix2};

rule_trait! {
    /// `a.dot(&b)` for 1-d and 2-d operands: `Call((&a, &b)).dot()`.
    NdDot::dot
}
rule_trait! {
    /// `outer(&a, &b)` as a method: `Call((&a, &b)).outer()`.
    NdOuter::outer
}

/// `acc += α · u vᵀ` (materialising a structural zero).
#[track_caller]
fn add_outer<T: Elem>(acc: &mut Array2<T>, alpha: T, u: ArrayView1<'_, T>, v: ArrayView1<'_, T>) {
    let dim = ndarray::Ix2(u.len(), v.len());
    let acc = dense(acc, &dim);
    // Row by row rather than a rank-1 `general_mat_mul`: the matrix kernel allocates
    // packing buffers, this allocates nothing.
    for (mut row, &ui) in acc.rows_mut().into_iter().zip(u.iter()) {
        row.scaled_add(alpha * ui, &v);
    }
}

/// Pullback of `a·b` for two vectors: copies of both.
pub struct DotVecVecPullback<T> {
    a: Array1<T>,
    b: Array1<T>,
}

impl<T: Elem> Pullback for DotVecVecPullback<T> {
    type Output = T;
    type Args = (Array1<T>, Array1<T>);
    #[track_caller]
    fn pullback(self, dy: T, (da, db): (&mut Array1<T>, &mut Array1<T>)) {
        // ∂(a·b)/∂a = b, ∂(a·b)/∂b = a
        add_scaled(da, &self.a.raw_dim(), dy, self.b.view());
        add_scaled(db, &self.b.raw_dim(), dy, self.a.view());
    }
}

impl<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>> NdDot
    for Call<(&ArrayBase<S1, Ix1>, &ArrayBase<S2, Ix1>)>
{
    type Output = T;
    type Pullback = DotVecVecPullback<T>;
    #[track_caller]
    fn dot(self) -> (T, Self::Pullback) {
        let (a, b) = self.0;
        (
            a.dot(b),
            DotVecVecPullback {
                a: a.to_owned(),
                b: b.to_owned(),
            },
        )
    }
}

/// Pullback of `A·x` (matrix·vector): copies of both.
pub struct DotMatVecPullback<T> {
    a: Array2<T>,
    x: Array1<T>,
}

impl<T: Elem> Pullback for DotMatVecPullback<T> {
    type Output = Array1<T>;
    type Args = (Array2<T>, Array1<T>);
    #[track_caller]
    fn pullback(self, dy: Array1<T>, (da, dx): (&mut Array2<T>, &mut Array1<T>)) {
        let Some(dy) = output(dy, &ndarray::Ix1(self.a.nrows())) else {
            return;
        };
        // y = A x: Ā += ȳ xᵀ, x̄ += Aᵀ ȳ
        add_outer(da, T::one(), dy.view(), self.x.view());
        let dx = dense(dx, &self.x.raw_dim());
        general_mat_vec_mul(T::one(), &self.a.t(), &dy, T::one(), dx);
    }
}

impl<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>> NdDot
    for Call<(&ArrayBase<S1, Ix2>, &ArrayBase<S2, Ix1>)>
{
    type Output = Array1<T>;
    type Pullback = DotMatVecPullback<T>;
    #[track_caller]
    fn dot(self) -> (Array1<T>, Self::Pullback) {
        let (a, x) = self.0;
        (
            a.dot(x),
            DotMatVecPullback {
                a: a.to_owned(),
                x: x.to_owned(),
            },
        )
    }
}

/// Pullback of `xᵀ·A` (vector·matrix): copies of both.
pub struct DotVecMatPullback<T> {
    x: Array1<T>,
    a: Array2<T>,
}

impl<T: Elem> Pullback for DotVecMatPullback<T> {
    type Output = Array1<T>;
    type Args = (Array1<T>, Array2<T>);
    #[track_caller]
    fn pullback(self, dy: Array1<T>, (dx, da): (&mut Array1<T>, &mut Array2<T>)) {
        let Some(dy) = output(dy, &ndarray::Ix1(self.a.ncols())) else {
            return;
        };
        // y = xᵀ A: x̄ += A ȳ, Ā += x ȳᵀ
        let dxd = dense(dx, &self.x.raw_dim());
        general_mat_vec_mul(T::one(), &self.a, &dy, T::one(), dxd);
        add_outer(da, T::one(), self.x.view(), dy.view());
    }
}

impl<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>> NdDot
    for Call<(&ArrayBase<S1, Ix1>, &ArrayBase<S2, Ix2>)>
{
    type Output = Array1<T>;
    type Pullback = DotVecMatPullback<T>;
    #[track_caller]
    fn dot(self) -> (Array1<T>, Self::Pullback) {
        let (x, a) = self.0;
        (
            x.dot(a),
            DotVecMatPullback {
                x: x.to_owned(),
                a: a.to_owned(),
            },
        )
    }
}

/// Pullback of `A·B` (matrix·matrix): copies of both.
pub struct DotMatMatPullback<T> {
    a: Array2<T>,
    b: Array2<T>,
}

impl<T: Elem> Pullback for DotMatMatPullback<T> {
    type Output = Array2<T>;
    type Args = (Array2<T>, Array2<T>);
    #[track_caller]
    fn pullback(self, dc: Array2<T>, (da, db): (&mut Array2<T>, &mut Array2<T>)) {
        let out = ndarray::Ix2(self.a.nrows(), self.b.ncols());
        if form(&dc, &out) == Form::Broadcast {
            self.pullback_broadcast(dc, da, db);
            return;
        }
        let Some(dc) = output(dc, &out) else {
            return;
        };
        // C = A B: Ā += C̄ Bᵀ, B̄ += Aᵀ C̄
        if is_structural_zero(da, &self.a.raw_dim()) {
            *da = dc.dot(&self.b.t());
        } else {
            general_mat_mul(T::one(), &dc, &self.b.t(), T::one(), da);
        }
        if is_structural_zero(db, &self.b.raw_dim()) {
            *db = self.a.t().dot(&dc);
        } else {
            general_mat_mul(T::one(), &self.a.t(), &dc, T::one(), db);
        }
    }
}

impl<T: Elem> DotMatMatPullback<T> {
    /// `C̄` in broadcast form: a row `r` repeated (`1 × n`), a column `u` repeated
    /// (`m × 1`) or one value `c` (`1 × 1`, what `sum(A·B)` gives). Then `C̄ Bᵀ` and
    /// `Aᵀ C̄` are outer products of vectors, so no matrix product is needed, and
    /// the factor that repeats stays a broadcast form in `Ā` or `B̄`:
    /// - row: `Ā = 1·(B r)ᵀ` (form `1 × k`), `B̄ = (Aᵀ1) rᵀ`;
    /// - column: `Ā = u (B 1)ᵀ`, `B̄ = (Aᵀu) 1ᵀ` (form `k × 1`);
    /// - value: both forms, `Ā = c·1(B 1)ᵀ`, `B̄ = c·(Aᵀ1)1ᵀ`.
    #[track_caller]
    fn pullback_broadcast(self, dc: Array2<T>, da: &mut Array2<T>, db: &mut Array2<T>) {
        let (a_dim, b_dim) = (self.a.raw_dim(), self.b.raw_dim());
        let (rows, cols) = dc.dim();
        let one = T::one();
        match (rows == 1, cols == 1) {
            (true, true) => {
                let c = dc[[0, 0]];
                let row_sums_b = self.b.sum_axis(Axis(1)).mapv(|v| c * v);
                let col_sums_a = self.a.sum_axis(Axis(0)).mapv(|v| c * v);
                add_owned(da, &a_dim, row_sums_b.insert_axis(Axis(0)));
                add_owned(db, &b_dim, col_sums_a.insert_axis(Axis(1)));
            }
            (true, false) => {
                let r = dc.row(0);
                add_owned(da, &a_dim, self.b.dot(&r).insert_axis(Axis(0)));
                add_outer(db, one, self.a.sum_axis(Axis(0)).view(), r);
            }
            (false, true) => {
                let u = dc.column(0);
                add_outer(da, one, u, self.b.sum_axis(Axis(1)).view());
                add_owned(db, &b_dim, self.a.t().dot(&u).insert_axis(Axis(1)));
            }
            (false, false) => unreachable!("a broadcast form has an axis of length 1"),
        }
    }
}

impl<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>> NdDot
    for Call<(&ArrayBase<S1, Ix2>, &ArrayBase<S2, Ix2>)>
{
    type Output = Array2<T>;
    type Pullback = DotMatMatPullback<T>;
    #[track_caller]
    fn dot(self) -> (Array2<T>, Self::Pullback) {
        let (a, b) = self.0;
        (
            a.dot(b),
            DotMatMatPullback {
                a: a.to_owned(),
                b: b.to_owned(),
            },
        )
    }
}

/// The outer product `a bᵀ` of two vectors: `c[[i, j]] = a[i] · b[j]`.
///
/// ```
/// use ndarray::array;
/// let c = mochi_rules_ndarray::outer(&array![1.0, 2.0], &array![3.0, 4.0, 5.0]);
/// assert_eq!(c, array![[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]);
/// ```
pub fn outer<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>>(
    a: &ArrayBase<S1, Ix1>,
    b: &ArrayBase<S2, Ix1>,
) -> Array2<T> {
    let mut c = Array::zeros((a.len(), b.len()));
    add_outer(&mut c, T::one(), a.view(), b.view());
    c
}

/// The rule of [`outer`](fn@outer): `ā += C̄ b`, `b̄ += C̄ᵀ a`.
pub mod outer {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::outer as __twin;
    use super::*;

    /// Pullback of `outer`: copies of both vectors.
    pub struct OuterPullback<T> {
        a: Array1<T>,
        b: Array1<T>,
    }

    impl<T: Elem> Pullback for OuterPullback<T> {
        type Output = Array2<T>;
        type Args = (Array1<T>, Array1<T>);
        #[track_caller]
        fn pullback(self, dc: Array2<T>, (da, db): (&mut Array1<T>, &mut Array1<T>)) {
            let Some(dc) = output(dc, &ndarray::Ix2(self.a.len(), self.b.len())) else {
                return;
            };
            let da = dense(da, &self.a.raw_dim());
            general_mat_vec_mul(T::one(), &dc, &self.b, T::one(), da);
            let db = dense(db, &self.b.raw_dim());
            general_mat_vec_mul(T::one(), &dc.t(), &self.a, T::one(), db);
        }
    }

    /// `outer(a, b)` with its pullback.
    pub fn rrule<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>>(
        a: &ArrayBase<S1, Ix1>,
        b: &ArrayBase<S2, Ix1>,
    ) -> (Array2<T>, OuterPullback<T>) {
        (
            super::outer(a, b),
            OuterPullback {
                a: a.to_owned(),
                b: b.to_owned(),
            },
        )
    }
}

impl<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>> NdOuter
    for Call<(&ArrayBase<S1, Ix1>, &ArrayBase<S2, Ix1>)>
{
    type Output = Array2<T>;
    type Pullback = outer::OuterPullback<T>;
    fn outer(self) -> (Array2<T>, Self::Pullback) {
        let (a, b) = self.0;
        outer::rrule(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, TestElem};
    use mochi_core::testing::RuleTest;

    #[test]
    fn broadcast_form_cotangents_of_a_matrix_product_match_their_expansions() {
        use crate::test_support::random;
        use mochi_core::Tangent;
        let a: Array2<f64> = random(Ix2(3, 4), 36);
        let b: Array2<f64> = random(Ix2(4, 5), 37);
        let out = Ix2(3, 5);
        for shape in [(1, 1), (1, 5), (3, 1)] {
            let form_dc: Array2<f64> = random(Ix2(shape.0, shape.1), 38);
            let dense_dc = mochi_core::broadcast::expand(form_dc.clone(), &out);
            let run = |dc: Array2<f64>| {
                let (_, pb) = Call((&a, &b)).dot();
                let (mut da, mut db) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
                pb.pullback(dc, (&mut da, &mut db));
                a.densify(&mut da);
                b.densify(&mut db);
                (da, db)
            };
            let (da, db) = run(form_dc);
            let (da_want, db_want) = run(dense_dc);
            assert!((da - da_want).iter().all(|d| d.abs() < 1e-12), "{shape:?}");
            assert!((db - db_want).iter().all(|d| d.abs() < 1e-12), "{shape:?}");
        }
    }

    fn dots<T: TestElem>() {
        for (m, k, n) in [(1, 1, 1), (3, 4, 2), (2, 0, 3)] {
            let mats_a = layouts::<T, _>(Ix2(m, k), 30);
            let mats_b = layouts::<T, _>(Ix2(k, n), 31);
            let vecs_k = layouts::<T, _>(Ix1(k), 32);
            let vecs_m = layouts::<T, _>(Ix1(m), 33);
            for i in 0..4 {
                let (a, b) = (mats_a[i].1.clone(), mats_b[i].1.clone());
                // C = AB: Ā = C̄Bᵀ, B̄ = AᵀC̄ (the matrix kernel allocates packing buffers)
                RuleTest::new(
                    (a.clone(), b),
                    |a| a.0.dot(&a.1),
                    |a| Call((&a.0, &a.1)).dot(),
                )
                .forward(|a| a.0.dot(&a.1))
                .tolerance(T::RTOL, T::ATOL)
                .run();
                let x = vecs_k[i].1.clone();
                RuleTest::new(
                    (a.clone(), x.clone()),
                    |a| a.0.dot(&a.1),
                    |a| Call((&a.0, &a.1)).dot(),
                )
                .forward(|a| a.0.dot(&a.1))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                let u = vecs_m[i].1.clone();
                RuleTest::new((u, a), |a| a.0.dot(&a.1), |a| Call((&a.0, &a.1)).dot())
                    .forward(|a| a.0.dot(&a.1))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
                RuleTest::new(
                    (x.clone(), x.mapv(|v| v + T::one())),
                    |a| a.0.dot(&a.1),
                    |a| Call((&a.0, &a.1)).dot(),
                )
                .forward(|a| a.0.dot(&a.1))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
            }
        }
    }

    #[test]
    fn dot_in_all_four_ranks() {
        dots::<f64>();
        dots::<f32>();
    }

    fn outers<T: TestElem>() {
        for (m, n) in [(1, 1), (3, 2), (0, 2)] {
            for ((_, a), (_, b)) in layouts::<T, _>(Ix1(m), 34)
                .into_iter()
                .zip(layouts::<T, _>(Ix1(n), 35))
            {
                RuleTest::new(
                    (a.clone(), b.clone()),
                    |a| outer(&a.0, &a.1),
                    |a| outer::rrule(&a.0, &a.1),
                )
                .forward(|a| outer(&a.0, &a.1))
                .tolerance(T::RTOL, T::ATOL)
                .expect_no_alloc()
                .run();
                RuleTest::new(
                    (a, b),
                    |a| outer(&a.0, &a.1),
                    |a| Call((&a.0, &a.1)).outer(),
                )
                .forward(|a| outer(&a.0, &a.1))
                .tolerance(T::RTOL, T::ATOL)
                .run();
            }
        }
    }

    #[test]
    fn outer_product() {
        outers::<f64>();
        outers::<f32>();
    }

    #[test]
    #[should_panic(expected = "not compatible for matrix multiplication")]
    fn mismatched_product_panics_like_the_primal() {
        let a = Array2::<f64>::zeros((2, 3));
        let b = Array2::<f64>::zeros((2, 3));
        let _ = Call((&a, &b)).dot();
    }
}
