//! [`LinalgElem`] for dual numbers: the textbook unblocked algorithms as plain loops.
//!
//! Dual arithmetic is exact forward mode, so running the algorithm itself on duals
//! gives the exact derivative of its result (up to the rounding of the partials),
//! with no separate derivative formula to get wrong. Every decision (a pivot's
//! sign, the largest pivot of a column) is taken on the value, as the float kernels
//! take it, so a dual input fails where its value fails. Division by a zero pivot
//! gives infinities or NaNs, never a panic; the callers check the pivots.

use crate::elem::TriangularProduct;
use crate::error::NotPositiveDefinite;
use crate::work::Triangle;
use crate::LinalgElem;
use mochi_core::Dual;
use mochi_core::Real;
use ndarray::{ArrayView2, ArrayViewMut2};

#[track_caller]
fn assert_square<T>(what: &str, a: &ArrayView2<'_, T>) {
    assert!(
        a.nrows() == a.ncols(),
        "LinalgElem::{what}: the matrix must be square, got {}×{}",
        a.nrows(),
        a.ncols()
    );
}

#[track_caller]
fn assert_rows<T>(what: &str, n: usize, x: &ArrayViewMut2<'_, T>) {
    assert!(
        x.nrows() == n,
        "LinalgElem::{what}: the right-hand side has {} rows, the matrix is {n}×{n}",
        x.nrows()
    );
}

/// The range of `k` over which `lhs[i, k] · rhs[k, j]` can be nonzero, given the
/// triangles the factors are read as; `inner` is the shared dimension.
fn inner_range(
    i: usize,
    j: usize,
    inner: usize,
    lhs: Option<Triangle>,
    rhs: Option<Triangle>,
) -> std::ops::Range<usize> {
    let mut lo = 0;
    let mut hi = inner;
    match lhs {
        Some(Triangle::Lower) => hi = hi.min(i + 1),
        Some(Triangle::Upper) => lo = lo.max(i),
        None => {}
    }
    match rhs {
        Some(Triangle::Lower) => lo = lo.max(j),
        Some(Triangle::Upper) => hi = hi.min(j + 1),
        None => {}
    }
    lo..hi.max(lo)
}

impl<const N: usize> LinalgElem for Dual<N> {
    /// Left-looking, column by column: `Lⱼⱼ = √(Kⱼⱼ − Σₖ Lⱼₖ²)`, then
    /// `Lᵢⱼ = (Kᵢⱼ − Σₖ Lᵢₖ Lⱼₖ) / Lⱼⱼ` below it.
    #[track_caller]
    fn cholesky_in_place(mut a: ArrayViewMut2<'_, Self>) -> Result<(), NotPositiveDefinite> {
        assert_square("cholesky_in_place", &a.view());
        let n = a.nrows();
        for j in 0..n {
            let mut d = a[[j, j]];
            for k in 0..j {
                d -= a[[j, k]] * a[[j, k]];
            }
            // The float kernel's test: `!(d > 0)` catches NaN too, and `√d` must be finite.
            if !(d.value > 0.0 && d.value.is_finite()) {
                return Err(NotPositiveDefinite { pivot: j });
            }
            let ljj = Real::sqrt(d);
            a[[j, j]] = ljj;
            for i in j + 1..n {
                let mut s = a[[i, j]];
                for k in 0..j {
                    s -= a[[i, k]] * a[[j, k]];
                }
                a[[i, j]] = s / ljj;
            }
        }
        Ok(())
    }

    /// `M = L⁻¹` by forward substitution into the lower triangle of `inv`, then
    /// `(K⁻¹)ᵢⱼ = Σₖ₌ᵢ Mₖᵢ Mₖⱼ` (`i ≥ j`) over it in place: entry `(i, j)` is
    /// overwritten only once nothing later needs it (columns ascending, rows
    /// ascending), so no workspace is needed.
    #[track_caller]
    fn cholesky_inverse(l: ArrayView2<'_, Self>, mut inv: ArrayViewMut2<'_, Self>) {
        assert_square("cholesky_inverse", &l);
        let n = l.nrows();
        assert!(
            inv.dim() == (n, n),
            "LinalgElem::cholesky_inverse: the output is {:?}, the factor {n}×{n}",
            inv.dim()
        );
        for j in 0..n {
            inv[[j, j]] = Self::constant(1.0) / l[[j, j]];
            for i in j + 1..n {
                let mut s = Self::constant(0.0);
                for k in j..i {
                    s += l[[i, k]] * inv[[k, j]];
                }
                inv[[i, j]] = -s / l[[i, i]];
            }
        }
        for j in 0..n {
            for i in j..n {
                let mut s = Self::constant(0.0);
                for k in i..n {
                    s += inv[[k, i]] * inv[[k, j]];
                }
                inv[[i, j]] = s;
            }
        }
    }

    /// Forward substitution for a lower triangle, back substitution for an upper one,
    /// one right-hand-side column at a time.
    #[track_caller]
    fn solve_triangular_in_place(
        t: ArrayView2<'_, Self>,
        triangle: Triangle,
        mut x: ArrayViewMut2<'_, Self>,
    ) {
        assert_square("solve_triangular_in_place", &t);
        let n = t.nrows();
        assert_rows("solve_triangular_in_place", n, &x);
        for mut column in x.columns_mut() {
            match triangle {
                Triangle::Lower => {
                    for i in 0..n {
                        let mut s = column[i];
                        for j in 0..i {
                            s -= t[[i, j]] * column[j];
                        }
                        column[i] = s / t[[i, i]];
                    }
                }
                Triangle::Upper => {
                    for i in (0..n).rev() {
                        let mut s = column[i];
                        for j in i + 1..n {
                            s -= t[[i, j]] * column[j];
                        }
                        column[i] = s / t[[i, i]];
                    }
                }
            }
        }
    }

    #[track_caller]
    fn triangular_matmul_add(
        mut dst: ArrayViewMut2<'_, Self>,
        product: TriangularProduct<'_, '_, Self>,
    ) {
        let TriangularProduct {
            dst_triangle,
            alpha,
            lhs,
            lhs_structure,
            rhs,
            rhs_structure,
        } = product;
        let (m, n) = dst.dim();
        let inner = lhs.ncols();
        assert!(
            m == n && lhs.nrows() == m && rhs.dim() == (inner, n),
            "LinalgElem::triangular_matmul_add: {m}×{n} += {:?} · {:?} does not fit",
            lhs.dim(),
            rhs.dim()
        );
        for j in 0..n {
            let rows = match dst_triangle {
                Triangle::Lower => j..n,
                Triangle::Upper => 0..j + 1,
            };
            for i in rows {
                let mut s = Self::constant(0.0);
                for k in inner_range(i, j, inner, lhs_structure, rhs_structure) {
                    s += lhs[[i, k]] * rhs[[k, j]];
                }
                dst[[i, j]] += alpha * s;
            }
        }
    }

    /// Right-looking elimination; the pivot of column `k` is the entry of largest
    /// `|value|` on or below the diagonal (the first such, so ties and NaNs leave the
    /// diagonal in place). Whole rows are swapped, as LAPACK's `getrf` does.
    #[track_caller]
    fn lu_in_place(mut a: ArrayViewMut2<'_, Self>, perm: &mut [usize], perm_inv: &mut [usize]) {
        assert_square("lu_in_place", &a.view());
        let n = a.nrows();
        assert!(
            perm.len() == n && perm_inv.len() == n,
            "LinalgElem::lu_in_place: the permutations must have length {n}"
        );
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i;
        }
        for k in 0..n {
            let mut pivot = k;
            for i in k + 1..n {
                if a[[i, k]].value.abs() > a[[pivot, k]].value.abs() {
                    pivot = i;
                }
            }
            if pivot != k {
                for j in 0..n {
                    a.swap([k, j], [pivot, j]);
                }
                perm.swap(k, pivot);
            }
            let ukk = a[[k, k]];
            for i in k + 1..n {
                let lik = a[[i, k]] / ukk;
                a[[i, k]] = lik;
                for j in k + 1..n {
                    let u = a[[k, j]];
                    a[[i, j]] -= lik * u;
                }
            }
        }
        for (i, &p) in perm.iter().enumerate() {
            perm_inv[p] = i;
        }
    }

    /// `A⁻¹ x = U⁻¹ L⁻¹ P x`; `A⁻ᵀ x = Pᵀ L⁻ᵀ U⁻ᵀ x` (with `L` unit lower).
    #[track_caller]
    fn lu_solve_in_place(
        lu: ArrayView2<'_, Self>,
        perm: &[usize],
        perm_inv: &[usize],
        transposed: bool,
        mut x: ArrayViewMut2<'_, Self>,
    ) {
        assert_square("lu_solve_in_place", &lu);
        let n = lu.nrows();
        assert_rows("lu_solve_in_place", n, &x);
        assert!(
            perm.len() == n && perm_inv.len() == n,
            "LinalgElem::lu_solve_in_place: the permutations must have length {n}"
        );
        let mut permuted = vec![Self::constant(0.0); n];
        for mut column in x.columns_mut() {
            if transposed {
                // Uᵀ z = x (forward), then Lᵀ w = z (back, unit diagonal).
                for i in 0..n {
                    let mut s = column[i];
                    for k in 0..i {
                        s -= lu[[k, i]] * column[k];
                    }
                    column[i] = s / lu[[i, i]];
                }
                for i in (0..n).rev() {
                    let mut s = column[i];
                    for k in i + 1..n {
                        s -= lu[[k, i]] * column[k];
                    }
                    column[i] = s;
                }
                // x = Pᵀ w: row perm[i] of x is row i of w.
                for (i, v) in permuted.iter_mut().enumerate() {
                    *v = column[perm_inv[i]];
                }
            } else {
                // y = P x: row i of y is row perm[i] of x; then L y' = y, U x = y'.
                for (i, v) in permuted.iter_mut().enumerate() {
                    *v = column[perm[i]];
                }
                for i in 0..n {
                    let mut s = permuted[i];
                    for k in 0..i {
                        s -= lu[[i, k]] * permuted[k];
                    }
                    permuted[i] = s;
                }
                for i in (0..n).rev() {
                    let mut s = permuted[i];
                    for k in i + 1..n {
                        s -= lu[[i, k]] * permuted[k];
                    }
                    permuted[i] = s / lu[[i, i]];
                }
            }
            for (c, &v) in column.iter_mut().zip(&permuted) {
                *c = v;
            }
        }
    }

    /// The value and every partial, each within `ulps` rounding units of `b`'s.
    fn nearly_equal(a: Self, b: Self, ulps: f64) -> bool {
        let close = |x: f64, y: f64| (x - y).abs() <= ulps * f64::EPSILON * y.abs();
        close(a.value, b.value)
            && a.partials
                .iter()
                .zip(&b.partials)
                .all(|(&x, &y)| close(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_close, random, spd, triangular, value};
    use ndarray::{Array2, ShapeBuilder};

    fn constant(x: &Array2<f64>) -> Array2<Dual<1>> {
        x.mapv(Dual::constant)
    }

    /// `eps · 8 · n`, the rounding the two algorithms may differ by (relative).
    fn rounding(n: usize) -> f64 {
        f64::EPSILON * 8.0 * (n.max(1) as f64) * 10.0
    }

    #[test]
    fn the_dual_kernels_compute_what_the_faer_kernels_compute() {
        for n in [0, 1, 3, 7] {
            let tol = rounding(n);
            let k = spd::<f64>(n, 60 + n as u64);
            let b = random::<f64>(n, 2, 61);

            let mut l = k.clone();
            f64::cholesky_in_place(l.view_mut()).unwrap();
            let mut ld = constant(&k);
            Dual::cholesky_in_place(ld.view_mut()).unwrap();
            assert_close("cholesky", &value(&ld).tril(0), &l.tril(0), tol);

            let mut inv = Array2::zeros((n, n).f());
            f64::cholesky_inverse(l.view(), inv.view_mut());
            let mut invd = constant(&Array2::zeros((n, n)));
            Dual::cholesky_inverse(constant(&l).view(), invd.view_mut());
            assert_close("cholesky_inverse", &value(&invd), &inv, tol * 100.0);

            for triangle in [Triangle::Lower, Triangle::Upper] {
                let t = triangular::<f64>(n, triangle == Triangle::Lower, 62);
                for (t, triangle) in [(t.view(), triangle), (t.t(), triangle.transposed())] {
                    let mut x = b.clone();
                    f64::solve_triangular_in_place(t, triangle, x.view_mut());
                    let mut xd = constant(&b);
                    Dual::solve_triangular_in_place(
                        constant(&t.to_owned()).view(),
                        triangle,
                        xd.view_mut(),
                    );
                    assert_close("solve_triangular_in_place", &value(&xd), &x, tol);
                }
            }

            let structures = [None, Some(Triangle::Lower), Some(Triangle::Upper)];
            let (u, v) = (random::<f64>(n, n, 63), random::<f64>(n, n, 64));
            for dst_triangle in [Triangle::Lower, Triangle::Upper] {
                for lhs_structure in structures {
                    for rhs_structure in structures {
                        let mut dst = random::<f64>(n, n, 65);
                        let mut dstd = constant(&dst);
                        let args = (dst_triangle, lhs_structure, rhs_structure);
                        f64::triangular_matmul_add(
                            dst.view_mut(),
                            TriangularProduct {
                                dst_triangle: args.0,
                                alpha: 0.5,
                                lhs: u.view(),
                                lhs_structure: args.1,
                                rhs: v.view(),
                                rhs_structure: args.2,
                            },
                        );
                        let (ud, vd) = (constant(&u), constant(&v));
                        Dual::triangular_matmul_add(
                            dstd.view_mut(),
                            TriangularProduct {
                                dst_triangle: args.0,
                                alpha: Dual::constant(0.5),
                                lhs: ud.view(),
                                lhs_structure: args.1,
                                rhs: vd.view(),
                                rhs_structure: args.2,
                            },
                        );
                        assert_close("triangular_matmul_add", &value(&dstd), &dst, tol);
                    }
                }
            }

            let mut a = random::<f64>(n, n, 66);
            let (mut perm, mut perm_inv) = (vec![0; n], vec![0; n]);
            let (mut permd, mut perm_invd) = (vec![0; n], vec![0; n]);
            let mut ad = constant(&a);
            f64::lu_in_place(a.view_mut(), &mut perm, &mut perm_inv);
            Dual::lu_in_place(ad.view_mut(), &mut permd, &mut perm_invd);
            for transposed in [false, true] {
                let mut x = b.clone();
                f64::lu_solve_in_place(a.view(), &perm, &perm_inv, transposed, x.view_mut());
                let mut xd = constant(&b);
                Dual::lu_solve_in_place(ad.view(), &permd, &perm_invd, transposed, xd.view_mut());
                assert_close("lu_solve_in_place", &value(&xd), &x, tol * 100.0);
            }
        }
    }

    #[test]
    fn nearly_equal_looks_at_every_partial() {
        let a = Dual::new(1.0, [2.0, 3.0]);
        assert!(Dual::nearly_equal(a, a, 4.0));
        assert!(Dual::nearly_equal(
            a,
            Dual::new(1.0 + f64::EPSILON, [2.0, 3.0]),
            4.0
        ));
        assert!(!Dual::nearly_equal(a, Dual::new(1.0, [2.0, 3.1]), 4.0));
        assert!(!Dual::nearly_equal(
            Dual::new(1.0, [0.0, 1e-300]),
            Dual::new(1.0, [0.0, 0.0]),
            4.0
        ));
        assert!(f64::nearly_equal(1.0, 1.0 + f64::EPSILON, 4.0));
        assert!(!f64::nearly_equal(1.0, 1.0 + 1e-10, 4.0));
    }
}
