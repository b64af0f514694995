//! The Kronecker product `kron(A, B)` (`ndarray::linalg::kron`).
//!
//! `K[i·p + k, j·q + l] = A[i, j] · B[k, l]` for `B` of shape `p × q`, so
//! `Ā[i, j] += Σ_kl K̄[i·p + k, j·q + l] · B[k, l]` (block `(i, j)` of `K̄` against `B`)
//! and `B̄ += Σ_ij A[i, j] · K̄_block(i, j)`.
//!
//! When `K̄` is uniform (every entry the same value `c`, as it is when `kron` feeds a
//! `sum`), both sums collapse: `Ā += c · ΣB` and `B̄ += c · ΣA`. The pullback checks
//! for that in one read of `K̄` that stops at the first differing entry, so the
//! dense path pays at most a few comparisons for it.

use crate::cotangent::{dense, is_structural_zero};
use crate::rule_trait::rule_trait;
use crate::{zero, Elem};
use mochi_core::{Call, Pullback};
use ndarray::{s, Array2, ArrayBase, Data, Ix2, Zip};

rule_trait! {
    /// `ndarray::linalg::kron(&a, &b)`: `Call((&a, &b)).kron()`.
    NdKron => kron
}

/// Pullback of `kron(A, B)`: copies of both factors.
pub struct KronPullback<T> {
    a: Array2<T>,
    b: Array2<T>,
}

/// `Some(c)` if every element of `x` equals `c` (and `x` is non-empty).
fn uniform_value<T: Elem>(x: &Array2<T>) -> Option<T> {
    let first = *x.iter().next()?;
    let all = match x.as_slice_memory_order() {
        Some(s) => s.iter().all(|&v| v == first),
        None => x.iter().all(|&v| v == first),
    };
    all.then_some(first)
}

impl<T: Elem> Pullback for KronPullback<T> {
    type Output = Array2<T>;
    type Args = (Array2<T>, Array2<T>);
    #[track_caller]
    fn pullback(self, dk: Array2<T>, (da, db): (&mut Array2<T>, &mut Array2<T>)) {
        let (m, n) = self.a.dim();
        let (p, q) = self.b.dim();
        if is_structural_zero(&dk, &Ix2(m * p, n * q)) {
            return;
        }
        let da = dense(da, &self.a.raw_dim());
        let db = dense(db, &self.b.raw_dim());
        if let Some(c) = uniform_value(&dk) {
            let (sum_a, sum_b) = (self.a.sum(), self.b.sum());
            da.map_inplace(|v| *v += c * sum_b);
            db.map_inplace(|v| *v += c * sum_a);
            return;
        }
        for i in 0..m {
            for j in 0..n {
                let block = dk.slice(s![i * p..(i + 1) * p, j * q..(j + 1) * q]);
                let dot = Zip::from(&block)
                    .and(&self.b)
                    .fold(zero::<T>(), |acc, &k, &b| acc + k * b);
                da[[i, j]] += dot;
                db.scaled_add(self.a[[i, j]], &block);
            }
        }
    }
}

impl<'a, 'b, T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>> NdKron
    for Call<(&'a ArrayBase<S1, Ix2>, &'b ArrayBase<S2, Ix2>)>
{
    type Output = Array2<T>;
    type Pullback = KronPullback<T>;
    #[track_caller]
    fn kron(self) -> (Array2<T>, Self::Pullback) {
        let (a, b) = self.0;
        (ndarray::linalg::kron(a, b), KronPullback { a: a.to_owned(), b: b.to_owned() })
    }
}
