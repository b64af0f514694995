//! The Kronecker product `kron(A, B)` (`ndarray::linalg::kron`).
//!
//! `K[i·p + k, j·q + l] = A[i, j] · B[k, l]` for `B` of shape `p × q`, so
//! `Ā[i, j] += Σ_kl K̄[i·p + k, j·q + l] · B[k, l]` (block `(i, j)` of `K̄` against `B`)
//! and `B̄ += Σ_ij A[i, j] · K̄_block(i, j)`.
//!
//! When `K̄` is uniform (every entry the same value `c`), both sums collapse:
//! `Ā += c · ΣB` and `B̄ += c · ΣA`. When `kron` feeds a `sum`, `K̄` arrives as the
//! `1 × 1` broadcast form holding `c` and the pullback never touches `|K|` entries; a
//! dense `K̄` is checked for uniformity in one read that stops at the first
//! differing entry, so the dense path pays at most a few comparisons for it.

use crate::cotangent::{dense, uniform, view};
use crate::Elem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use ndarray::{s, Array2, ArrayBase, ArrayView2, Data, Ix2, Zip};

rule_trait! {
    /// `ndarray::linalg::kron(&a, &b)`: `Call((&a, &b)).kron()`.
    NdKron::kron
}

/// Pullback of `kron(A, B)`: copies of both factors.
pub struct KronPullback<T> {
    a: Array2<T>,
    b: Array2<T>,
}

/// `Some(c)` if every element of `x` equals `c` (and `x` is non-empty).
fn uniform_value<T: Elem>(x: &ArrayView2<'_, T>) -> Option<T> {
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
        let out = Ix2(m * p, n * q);
        // `K̄ = c·1` (what `sum` leaves, in broadcast form): `Ā += c·ΣB`, `B̄ += c·ΣA`
        // without reading `|K|` entries.
        let uniform = uniform(&dk, &out);
        let Some(dk) = view(&dk, &out) else {
            return;
        };
        let da = dense(da, &self.a.raw_dim());
        let db = dense(db, &self.b.raw_dim());
        if let Some(c) = uniform.or_else(|| uniform_value(&dk)) {
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
                    .fold(T::ZERO, |acc, &k, &b| acc + k * b);
                da[[i, j]] += dot;
                db.scaled_add(self.a[[i, j]], &block);
            }
        }
    }
}

impl<T: Elem, S1: Data<Elem = T>, S2: Data<Elem = T>> NdKron
    for Call<(&ArrayBase<S1, Ix2>, &ArrayBase<S2, Ix2>)>
{
    type Output = Array2<T>;
    type Pullback = KronPullback<T>;
    #[track_caller]
    fn kron(self) -> (Array2<T>, Self::Pullback) {
        let (a, b) = self.0;
        (
            ndarray::linalg::kron(a, b),
            KronPullback {
                a: a.to_owned(),
                b: b.to_owned(),
            },
        )
    }
}

/// `kron(&a, &b)` in differentiable code (`ndarray::linalg::kron` imported, or the full
/// path): the value and its pullback. `#[differentiable]` lowers a call of a free
/// function `f(..)` to `f::rrule(..)`; this module is that `f` for `kron`.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub fn rrule<A, B>(
    a: A,
    b: B,
) -> (
    <Call<(A, B)> as NdKron>::Output,
    <Call<(A, B)> as NdKron>::Pullback,
)
where
    Call<(A, B)>: NdKron,
{
    Call((a, b)).kron()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{layouts, random, TestElem};
    use mochi_core::testing::RuleTest;
    use ndarray::linalg::kron;
    use ndarray::Array;

    fn products<T: TestElem>() {
        for (sa, sb) in [
            ((1, 1), (1, 1)),
            ((2, 3), (3, 2)),
            ((0, 2), (2, 2)),
            ((2, 2), (1, 3)),
        ] {
            for ((_, a), (_, b)) in layouts::<T, _>(Ix2(sa.0, sa.1), 60)
                .into_iter()
                .zip(layouts::<T, _>(Ix2(sb.0, sb.1), 61))
            {
                RuleTest::new((a, b), |a| kron(&a.0, &a.1), |a| Call((&a.0, &a.1)).kron())
                    .forward(|a| kron(&a.0, &a.1))
                    .tolerance(T::RTOL, T::ATOL)
                    .expect_no_alloc()
                    .run();
            }
        }
    }

    #[test]
    fn kronecker_product() {
        products::<f64>();
        products::<f32>();
    }

    #[test]
    fn a_uniform_cotangent_takes_the_short_path_with_the_same_result() {
        let a: Array2<f64> = random(Ix2(3, 2), 62);
        let b: Array2<f64> = random(Ix2(2, 4), 63);
        let (_, pb) = Call((&a, &b)).kron();
        let (mut da, mut db) = (Array::zeros((0, 0)), Array::zeros((0, 0)));
        pb.pullback(Array::from_elem((6, 8), 0.5), (&mut da, &mut db));
        // Ā_ij = Σ_kl 0.5·B_kl, B̄_kl = Σ_ij 0.5·A_ij
        let (sa, sb) = (a.sum(), b.sum());
        assert!(da.iter().all(|&v| (v - 0.5 * sb).abs() < 1e-12));
        assert!(db.iter().all(|&v| (v - 0.5 * sa).abs() < 1e-12));
        // one differing entry takes the dense path
        let mut dk = Array::from_elem((6, 8), 0.5);
        dk[[5, 7]] = 1.5;
        let (_, pb) = Call((&a, &b)).kron();
        let (mut da2, mut db2) = (Array::zeros((0, 0)), Array::zeros((0, 0)));
        pb.pullback(dk, (&mut da2, &mut db2));
        // only block (2, 1) and entry (1, 3) of B see the extra 1.0
        assert!((da2[[2, 1]] - (0.5 * sb + b[[1, 3]])).abs() < 1e-12);
        assert!((db2[[1, 3]] - (0.5 * sa + a[[2, 1]])).abs() < 1e-12);
        assert!((da2[[0, 0]] - da[[0, 0]]).abs() < 1e-12);
    }
}
