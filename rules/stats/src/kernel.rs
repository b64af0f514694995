//! The squared-exponential (RBF) kernel matrix
//! `Kᵢⱼ = v · exp(−(xᵢ − xⱼ)² / (2ℓ²))` of points `x`, variance `v`, length-scale `ℓ`.
//!
//! With `dᵢⱼ = xᵢ − xⱼ`: `∂Kᵢⱼ/∂xᵢ = −Kᵢⱼ dᵢⱼ/ℓ² = −∂Kᵢⱼ/∂xⱼ`, `∂Kᵢⱼ/∂v = Kᵢⱼ/v`,
//! `∂Kᵢⱼ/∂ℓ = Kᵢⱼ dᵢⱼ²/ℓ³`. Every entry is a function of `x`, so a cotangent in
//! one triangle only (what a Cholesky-based consumer returns) is handled exactly.

use mochi_core::kit::Pullback;
use mochi_rules_ndarray::cotangent::{dense, output};
use mochi_rules_ndarray::Elem;
use ndarray::{Array1, Array2, ArrayBase, Data, Ix1};

/// The squared-exponential kernel matrix of the points `x`.
///
/// ```
/// let k = mochi_rules_stats::se_kernel(&ndarray::array![0.0, 1.0], 2.0_f64, 1.0);
/// assert_eq!(k[[0, 0]], 2.0);
/// assert!((k[[0, 1]] - 2.0 * (-0.5_f64).exp()).abs() < 1e-15);
/// ```
pub fn se_kernel<T: Elem, S: Data<Elem = T>>(
    x: &ArrayBase<S, Ix1>,
    variance: T,
    lengthscale: T,
) -> Array2<T> {
    let n = x.len();
    let c = -(T::of_f64(2.0) * lengthscale * lengthscale).recip();
    Array2::from_shape_fn((n, n), |(i, j)| {
        let d = x[i] - x[j];
        variance * (c * d * d).exp()
    })
}

/// The rule of [`se_kernel`](fn@se_kernel).
pub mod se_kernel {
    /// The generic form through which the generic twins of `#[differentiable]`
    /// functions call it (it is generic already).
    #[doc(hidden)]
    pub use super::se_kernel as __twin;
    use super::*;

    /// Pullback of `se_kernel`: copies of the points and the matrix, `v` and `ℓ`.
    pub struct SeKernelPullback<T> {
        x: Array1<T>,
        k: Array2<T>,
        variance: T,
        lengthscale: T,
    }

    impl<T: Elem> Pullback for SeKernelPullback<T> {
        type Output = Array2<T>;
        type Args = (Array1<T>, T, T);
        #[track_caller]
        fn pullback(self, dk: Array2<T>, (dx, dv, dl): (&mut Array1<T>, &mut T, &mut T)) {
            let Some(dk) = output(dk, &self.k.raw_dim()) else {
                return;
            };
            let l2 = self.lengthscale * self.lengthscale;
            let dx = dense(dx, &self.x.raw_dim());
            let (mut sum_v, mut sum_l) = (T::ZERO, T::ZERO);
            for ((i, j), &g) in dk.indexed_iter() {
                let gk = g * self.k[[i, j]];
                let d = self.x[i] - self.x[j];
                let t = gk * d / l2;
                dx[i] -= t;
                dx[j] += t;
                sum_v += gk;
                sum_l += gk * d * d;
            }
            *dv += sum_v / self.variance;
            *dl += sum_l / (l2 * self.lengthscale);
        }
    }

    /// `se_kernel(x, variance, lengthscale)` with its pullback.
    pub fn rrule<T: Elem, S: Data<Elem = T>>(
        x: &ArrayBase<S, Ix1>,
        variance: T,
        lengthscale: T,
    ) -> (Array2<T>, SeKernelPullback<T>) {
        let k = super::se_kernel(x, variance, lengthscale);
        (
            k.clone(),
            SeKernelPullback {
                x: x.to_owned(),
                k,
                variance,
                lengthscale,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TestElem;
    use mochi_core::testing::RuleTest;
    use ndarray::array;

    fn kernels<T: TestElem>() {
        for x in [
            array![0.3],
            array![0.0, 0.2, 0.9, -0.5],
            Array1::<f64>::zeros(0),
        ] {
            let x = x.mapv(T::of_f64);
            RuleTest::new(
                (x, T::of_f64(1.3), T::of_f64(0.7)),
                |a| se_kernel(&a.0, a.1, a.2),
                |a| se_kernel::rrule(&a.0, a.1, a.2),
            )
            .forward(|a| se_kernel(&a.0, a.1, a.2))
            .tolerance(T::RTOL, T::ATOL)
            .expect_no_alloc()
            .run();
        }
    }

    #[test]
    fn squared_exponential_kernel() {
        kernels::<f64>();
        kernels::<f32>();
    }
}
