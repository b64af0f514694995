//! Triangular solves ([`solve_lower_triangular`](fn@solve_lower_triangular),
//! [`solve_upper_triangular`](fn@solve_upper_triangular)) and the Cholesky solve
//! ([`cholesky_solve`](fn@cholesky_solve)), for vector and matrix right-hand sides.
//!
//! For `X = T⁻¹ B` with `T` triangular: `B̄ = T⁻ᵀ X̄` (one more triangular solve, in
//! the buffer of `X̄`) and `T̄ = −triangle(B̄ Xᵀ)`, the triangle that `T` is read from
//! (a triangular rank-k update straight into `T̄`).

use crate::factor::assert_square;
use crate::work::{
    add_triangle_of_product, contiguous, solve_transposed_with, solve_with, Rhs, Triangle,
};
use crate::LinalgElem;
use mochi_core::kit::{rule_trait, Call, Pullback};
use mochi_rules_ndarray::cotangent::{add_owned, dense, output};
use ndarray::{Array, Array2, ArrayBase, Axis, Data, Ix2};

rule_trait! {
    /// `solve_lower_triangular(&l, &b)` as a method: `Call((&l, &b)).solve_lower_triangular()`.
    LinalgSolveLowerTriangular::solve_lower_triangular
}
rule_trait! {
    /// `solve_upper_triangular(&u, &b)` as a method: `Call((&u, &b)).solve_upper_triangular()`.
    LinalgSolveUpperTriangular::solve_upper_triangular
}
rule_trait! {
    /// `cholesky_solve(&l, &b)` as a method: `Call((&l, &b)).cholesky_solve()`.
    LinalgCholeskySolve::cholesky_solve
}

#[track_caller]
fn assert_rhs<T, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
    what: &str,
    t: &ArrayBase<S1, Ix2>,
    b: &ArrayBase<S2, D>,
) {
    assert_square(what, t);
    assert_eq!(
        b.len_of(Axis(0)),
        t.nrows(),
        "mochi_rules_linalg::{what}: the right-hand side has {} rows, the matrix is {}×{}",
        b.len_of(Axis(0)),
        t.nrows(),
        t.ncols()
    );
}

/// The dense accumulator of `dim`'s shape, contiguous (so that faer writes into its
/// memory without a copy).
fn contiguous_accumulator<'c, T: LinalgElem>(
    acc: &'c mut Array2<T>,
    dim: &Ix2,
) -> &'c mut Array2<T> {
    let acc = dense(acc, dim);
    let owned = std::mem::replace(acc, Array2::zeros((0, 0)));
    *acc = contiguous(owned);
    acc
}

/// `X = T⁻¹ B` reading the `triangle` of `t`.
#[track_caller]
fn triangular_solve<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
    what: &str,
    t: &ArrayBase<S1, Ix2>,
    triangle: Triangle,
    b: &ArrayBase<S2, D>,
) -> Array<T, D> {
    assert_rhs(what, t, b);
    let mut x = b.to_owned();
    solve_with(t, triangle, &mut x);
    x
}

/// Pullback of a triangular solve: copies of the matrix and of the solution.
pub struct TriangularSolvePullback<T, D> {
    t: Array2<T>,
    x: Array<T, D>,
    triangle: Triangle,
}

impl<T: LinalgElem, D: Rhs> Pullback for TriangularSolvePullback<T, D> {
    type Output = Array<T, D>;
    type Args = (Array2<T>, Array<T, D>);
    #[track_caller]
    fn pullback(self, dx: Array<T, D>, (dt, db): (&mut Array2<T>, &mut Array<T, D>)) {
        let Some(dx) = output(dx, &self.x.raw_dim()) else {
            return;
        };
        // B̄ = T⁻ᵀ X̄, in X̄'s buffer
        let mut g = contiguous(dx);
        solve_transposed_with(&self.t, self.triangle, &mut g);
        // T̄ −= triangle(B̄ Xᵀ)
        let dt = contiguous_accumulator(dt, &self.t.raw_dim());
        add_triangle_of_product(
            dt,
            self.triangle,
            -T::one(),
            D::as_matrix(g.view()),
            D::as_matrix(self.x.view()),
        );
        add_owned(db, &self.x.raw_dim(), g);
    }
}

macro_rules! triangular_fn {
    ($name:ident, $Trait:ident, $triangle:expr, $which:literal, $example:literal) => {
        #[doc = concat!("Solves `T X = B` for `X`, `T` the ", $which, " triangle (with the diagonal) of `t`;")]
        /// the other triangle of `t` is never read. `b` is a vector or a matrix.
        ///
        /// # Panics
        /// If `t` is not square or `b` has not as many rows as `t`.
        ///
        /// ```
        #[doc = $example]
        /// ```
        #[track_caller]
        pub fn $name<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
            t: &ArrayBase<S1, Ix2>,
            b: &ArrayBase<S2, D>,
        ) -> Array<T, D> {
            triangular_solve(stringify!($name), t, $triangle, b)
        }

        #[doc = concat!("The rule of [`", stringify!($name), "`](fn@", stringify!($name), "): `B̄ = T⁻ᵀ X̄`, `T̄ = −triangle(B̄ Xᵀ)`.")]
        pub mod $name {
            /// The generic form through which the generic twins of `#[differentiable]`
            /// functions call it (it is generic already).
            #[doc(hidden)]
            pub use super::$name as __twin;
            use super::*;

            #[doc = concat!("`", stringify!($name), "(t, b)` with its pullback.")]
            #[track_caller]
            pub fn rrule<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
                t: &ArrayBase<S1, Ix2>,
                b: &ArrayBase<S2, D>,
            ) -> (Array<T, D>, TriangularSolvePullback<T, D>) {
                let x = super::$name(t, b);
                (x.clone(), TriangularSolvePullback { t: t.to_owned(), x, triangle: $triangle })
            }
        }

        impl<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs> $Trait
            for Call<(&ArrayBase<S1, Ix2>, &ArrayBase<S2, D>)>
        {
            type Output = Array<T, D>;
            type Pullback = TriangularSolvePullback<T, D>;
            #[track_caller]
            fn $name(self) -> (Self::Output, Self::Pullback) {
                let (t, b) = self.0;
                $name::rrule(t, b)
            }
        }
    };
}

triangular_fn!(
    solve_lower_triangular,
    LinalgSolveLowerTriangular,
    Triangle::Lower,
    "lower",
    "let x = mochi_rules_linalg::solve_lower_triangular(&ndarray::array![[2.0, 0.0], [1.0, 4.0]], &ndarray::array![2.0, 5.0]);\nassert_eq!(x, ndarray::array![1.0, 1.0]);"
);
triangular_fn!(
    solve_upper_triangular,
    LinalgSolveUpperTriangular,
    Triangle::Upper,
    "upper",
    "let x = mochi_rules_linalg::solve_upper_triangular(&ndarray::array![[2.0, 1.0], [0.0, 4.0]], &ndarray::array![3.0, 4.0]);\nassert_eq!(x, ndarray::array![1.0, 1.0]);"
);

/// Solves `L Lᵀ X = B` for `X` given the Cholesky factor `l` of `K = L Lᵀ` (only its
/// lower triangle is read): `X = K⁻¹ B` by two triangular solves.
///
/// # Panics
/// If `l` is not square or `b` has not as many rows as `l`.
///
/// ```
/// use ndarray::array;
/// let k = array![[4.0, 2.0], [2.0, 5.0]];
/// let l = mochi_rules_linalg::cholesky(&k).unwrap();
/// let x = mochi_rules_linalg::cholesky_solve(&l, &array![6.0, 7.0]);
/// assert!((&k.dot(&x) - &array![6.0, 7.0]).iter().all(|e: &f64| e.abs() < 1e-12));
/// ```
#[track_caller]
pub fn cholesky_solve<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
    l: &ArrayBase<S1, Ix2>,
    b: &ArrayBase<S2, D>,
) -> Array<T, D> {
    let mut x = triangular_solve("cholesky_solve", l, Triangle::Lower, b);
    solve_transposed_with(l, Triangle::Lower, &mut x);
    x
}

/// The rule of [`cholesky_solve`](fn@cholesky_solve).
///
/// With `Z = L⁻¹ B` and `X = L⁻ᵀ Z`: `Z̄ = L⁻¹ X̄`, `B̄ = L⁻ᵀ Z̄`, and
/// `L̄ = −tril(X Z̄ᵀ + B̄ Zᵀ)`.
pub mod cholesky_solve {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::cholesky_solve as __twin;
    use super::*;

    /// Pullback of `cholesky_solve`: copies of the factor, the intermediate `Z` and
    /// the solution.
    pub struct CholeskySolvePullback<T, D> {
        l: Array2<T>,
        z: Array<T, D>,
        x: Array<T, D>,
    }

    impl<T: LinalgElem, D: Rhs> Pullback for CholeskySolvePullback<T, D> {
        type Output = Array<T, D>;
        type Args = (Array2<T>, Array<T, D>);
        #[track_caller]
        fn pullback(self, dx: Array<T, D>, (dl, db): (&mut Array2<T>, &mut Array<T, D>)) {
            let Some(dx) = output(dx, &self.x.raw_dim()) else {
                return;
            };
            let mut g = contiguous(dx);
            solve_with(&self.l, Triangle::Lower, &mut g);
            let dz = g.clone();
            solve_transposed_with(&self.l, Triangle::Lower, &mut g);
            let dl = contiguous_accumulator(dl, &self.l.raw_dim());
            let minus_one = -T::one();
            add_triangle_of_product(
                dl,
                Triangle::Lower,
                minus_one,
                D::as_matrix(self.x.view()),
                D::as_matrix(dz.view()),
            );
            add_triangle_of_product(
                dl,
                Triangle::Lower,
                minus_one,
                D::as_matrix(g.view()),
                D::as_matrix(self.z.view()),
            );
            add_owned(db, &self.x.raw_dim(), g);
        }
    }

    /// `cholesky_solve(l, b)` with its pullback.
    #[track_caller]
    pub fn rrule<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs>(
        l: &ArrayBase<S1, Ix2>,
        b: &ArrayBase<S2, D>,
    ) -> (Array<T, D>, CholeskySolvePullback<T, D>) {
        let z = triangular_solve("cholesky_solve", l, Triangle::Lower, b);
        let mut x = z.clone();
        solve_transposed_with(l, Triangle::Lower, &mut x);
        (
            x.clone(),
            CholeskySolvePullback {
                l: l.to_owned(),
                z,
                x,
            },
        )
    }
}

impl<T: LinalgElem, S1: Data<Elem = T>, S2: Data<Elem = T>, D: Rhs> LinalgCholeskySolve
    for Call<(&ArrayBase<S1, Ix2>, &ArrayBase<S2, D>)>
{
    type Output = Array<T, D>;
    type Pullback = cholesky_solve::CholeskySolvePullback<T, D>;
    #[track_caller]
    fn cholesky_solve(self) -> (Self::Output, Self::Pullback) {
        let (l, b) = self.0;
        cholesky_solve::rrule(l, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        assert_dual_gradient_matches_finite_differences, layouts, random, spd, triangular, TestElem,
    };
    use mochi_core::testing::RuleTest;
    use ndarray::Array1;

    fn solves<T: TestElem>() {
        for n in [1, 4] {
            for lower in [true, false] {
                for t in layouts(&triangular::<T>(n, lower, 30 + n as u64)) {
                    let bm = random::<T>(n, 3, 31);
                    let bv: Array1<T> = random::<T>(n, 1, 32).column(0).to_owned();
                    if lower {
                        RuleTest::new(
                            (t.clone(), bm),
                            |a| solve_lower_triangular(&a.0, &a.1),
                            |a| solve_lower_triangular::rrule(&a.0, &a.1),
                        )
                        .forward(|a| solve_lower_triangular(&a.0, &a.1))
                        .tolerance(T::RTOL, T::ATOL)
                        .run();
                        RuleTest::new(
                            (t, bv),
                            |a| solve_lower_triangular(&a.0, &a.1),
                            |a| Call((&a.0, &a.1)).solve_lower_triangular(),
                        )
                        .forward(|a| solve_lower_triangular(&a.0, &a.1))
                        .tolerance(T::RTOL, T::ATOL)
                        .run();
                    } else {
                        RuleTest::new(
                            (t.clone(), bm),
                            |a| solve_upper_triangular(&a.0, &a.1),
                            |a| solve_upper_triangular::rrule(&a.0, &a.1),
                        )
                        .forward(|a| solve_upper_triangular(&a.0, &a.1))
                        .tolerance(T::RTOL, T::ATOL)
                        .run();
                        RuleTest::new(
                            (t, bv),
                            |a| solve_upper_triangular(&a.0, &a.1),
                            |a| Call((&a.0, &a.1)).solve_upper_triangular(),
                        )
                        .forward(|a| solve_upper_triangular(&a.0, &a.1))
                        .tolerance(T::RTOL, T::ATOL)
                        .run();
                    }
                }
            }
            let l = crate::cholesky(&spd::<T>(n, 33)).unwrap();
            for l in layouts(&l) {
                let bm = random::<T>(n, 2, 34);
                let bv: Array1<T> = random::<T>(n, 1, 35).column(0).to_owned();
                RuleTest::new(
                    (l.clone(), bm),
                    |a| cholesky_solve(&a.0, &a.1),
                    |a| cholesky_solve::rrule(&a.0, &a.1),
                )
                .forward(|a| cholesky_solve(&a.0, &a.1))
                .tolerance(T::RTOL, T::ATOL)
                .run();
                RuleTest::new(
                    (l, bv),
                    |a| cholesky_solve(&a.0, &a.1),
                    |a| Call((&a.0, &a.1)).cholesky_solve(),
                )
                .forward(|a| cholesky_solve(&a.0, &a.1))
                .tolerance(T::RTOL, T::ATOL)
                .run();
            }
        }
    }

    #[test]
    fn triangular_and_cholesky_solves() {
        solves::<f64>();
        solves::<f32>();
    }

    #[test]
    fn the_solution_solves_and_the_other_triangle_is_never_read() {
        let t = triangular::<f64>(5, true, 36);
        let b = random::<f64>(5, 2, 37);
        let x = solve_lower_triangular(&t, &b);
        let lower = t.tril(0);
        // ‖T X − B‖ within eps · 8 · n · scale
        let err = (&lower.dot(&x) - &b)
            .iter()
            .fold(0.0_f64, |m, e| m.max(e.abs()));
        assert!(err < f64::EPSILON * 8.0 * 5.0 * 10.0);
        assert_eq!(solve_lower_triangular(&lower, &b), x);
    }

    /// `(T̄, B̄)` from the pullback of `solve` (`lower`/`upper`/`cholesky_solve`, the
    /// matrix argument `t`) of a fixed `X̄`, flattened.
    fn solve_gradient<T: LinalgElem>(
        which: &str,
        t: &Array2<T>,
        b: &Array2<f64>,
        dx: &Array2<f64>,
    ) -> Vec<T> {
        let b = b.mapv(T::of_f64);
        let dx = dx.mapv(T::of_f64);
        let (mut dt, mut db) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
        match which {
            "lower" => solve_lower_triangular::rrule(t, &b)
                .1
                .pullback(dx, (&mut dt, &mut db)),
            "upper" => solve_upper_triangular::rrule(t, &b)
                .1
                .pullback(dx, (&mut dt, &mut db)),
            _ => cholesky_solve::rrule(t, &b)
                .1
                .pullback(dx, (&mut dt, &mut db)),
        }
        dt.into_iter().chain(db).collect()
    }

    #[test]
    fn the_triangular_pullbacks_run_on_duals() {
        let n = 4;
        let b = random::<f64>(n, 2, 38);
        let dx = random::<f64>(n, 2, 39);
        let v = random::<f64>(n, n, 40);
        for (which, t) in [
            ("lower", triangular::<f64>(n, true, 41)),
            ("upper", triangular::<f64>(n, false, 42)),
            ("cholesky", crate::cholesky(&spd::<f64>(n, 43)).unwrap()),
        ] {
            assert_dual_gradient_matches_finite_differences(
                &t,
                &v,
                |t| solve_gradient(which, t, &b, &dx),
                |t| solve_gradient(which, t, &b, &dx),
            );
        }
    }

    #[test]
    #[should_panic(expected = "the right-hand side has 2 rows, the matrix is 3×3")]
    fn mismatched_right_hand_side_panics() {
        let _ = solve_upper_triangular(&Array2::<f64>::eye(3), &Array1::<f64>::zeros(2));
    }
}
