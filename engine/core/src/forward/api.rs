//! The forward-mode entry points: seed duals, run the function, read the partials.

use super::Dual;

/// The value and the derivative of a scalar function at `x`.
///
/// `f` runs once, on `x` seeded as the only variable. Write `f` over [`Real`] to use the
/// same code for `f64`.
///
/// ```
/// use mochi_core::{derivative, Real};
///
/// fn f<T: Real>(x: T) -> T {
///     x * x.sin()
/// }
/// let (y, dy) = derivative(f, 2.0);
/// assert_eq!(y, f(2.0));
/// assert_eq!(dy, 2f64.sin() + 2.0 * 2f64.cos()); // d/dx x·sin x = sin x + x·cos x
/// ```
///
/// [`Real`]: crate::Real
pub fn derivative<F>(f: F, x: f64) -> (f64, f64)
where
    F: FnOnce(Dual<1>) -> Dual<1>,
{
    let y = f(Dual::variable(x, 0));
    (y.value, y.partials[0])
}

/// The duals `xᵢ + vᵢ·ε`.
#[track_caller]
fn seed(x: &[f64], v: &[f64]) -> Vec<Dual<1>> {
    assert_eq!(
        x.len(),
        v.len(),
        "jvp: the point has {} components but the tangent has {}; pass one tangent component per input",
        x.len(),
        v.len()
    );
    x.iter()
        .zip(v)
        .map(|(&xi, &vi)| Dual::new(xi, [vi]))
        .collect()
}

/// The Jacobian-vector product: `(f(x), J_f(x)·v)` for `f: ℝⁿ → ℝᵐ`.
///
/// `f` runs once, on `x` seeded with the tangent `v`.
///
/// # Panics
/// If `x` and `v` have different lengths.
///
/// ```
/// use mochi_core::{jvp, Dual, Real};
///
/// // f(a, b) = (a·b, sin a)
/// let f = |x: &[Dual<1>]| vec![x[0] * x[1], x[0].sin()];
/// let (y, t) = jvp(f, &[2.0, 3.0], &[1.0, -1.0]);
/// assert_eq!(y, vec![6.0, 2f64.sin()]);
/// // J·v = (b·1 + a·(−1), cos a · 1)
/// assert_eq!(t, vec![3.0 - 2.0, 2f64.cos()]);
/// ```
#[track_caller]
pub fn jvp<F>(f: F, x: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>)
where
    F: FnOnce(&[Dual<1>]) -> Vec<Dual<1>>,
{
    let seeded = seed(x, v);
    f(&seeded).iter().map(|y| (y.value, y.partials[0])).unzip()
}

/// The directional derivative of a scalar function: `(f(x), ∇f(x)·v)` for `f: ℝⁿ → ℝ`.
///
/// Like [`jvp`] with one output, without allocating the outputs.
///
/// # Panics
/// If `x` and `v` have different lengths.
///
/// ```
/// use mochi_core::forward::jvp_scalar;
/// use mochi_core::Dual;
///
/// // f(a, b) = a²·b, ∇f = (2ab, a²)
/// let f = |x: &[Dual<1>]| x[0] * x[0] * x[1];
/// let (y, dy) = jvp_scalar(f, &[2.0, 3.0], &[0.5, 2.0]);
/// assert_eq!((y, dy), (12.0, 12.0 * 0.5 + 4.0 * 2.0));
/// ```
#[track_caller]
pub fn jvp_scalar<F>(f: F, x: &[f64], v: &[f64]) -> (f64, f64)
where
    F: FnOnce(&[Dual<1>]) -> Dual<1>,
{
    let seeded = seed(x, v);
    let y = f(&seeded);
    (y.value, y.partials[0])
}

/// The value and the full gradient of `f: ℝⁿ → ℝ`, in forward mode, `N` directions at a
/// time.
///
/// `f` runs `⌈n / N⌉` times; run `k` seeds inputs `kN .. kN + N` as the variables
/// `0 .. N`. The cost is `⌈n / N⌉ · cost(f on Dual<N>)`: for large `n` reverse mode is
/// cheaper; forward mode needs no rules and checks them. The partials do not depend on
/// `N` (each direction's arithmetic is the same whatever travels beside it).
///
/// `N = 0` does not compile.
///
/// ```
/// use mochi_core::forward::gradient_forward;
/// use mochi_core::{Dual, Real};
///
/// // f(x) = Σ xᵢ², ∇f = 2x
/// let f = |x: &[Dual<4>]| x.iter().map(|&xi| xi * xi).sum::<Dual<4>>();
/// let (y, g) = gradient_forward(f, &[1.0, 2.0, 3.0, 4.0, 5.0]);
/// assert_eq!(y, 55.0);
/// assert_eq!(g, vec![2.0, 4.0, 6.0, 8.0, 10.0]);
/// ```
pub fn gradient_forward<const N: usize, F>(mut f: F, x: &[f64]) -> (f64, Vec<f64>)
where
    F: FnMut(&[Dual<N>]) -> Dual<N>,
{
    const {
        assert!(
            N > 0,
            "gradient_forward needs at least one direction per run: use N ≥ 1"
        )
    };
    let mut inputs: Vec<Dual<N>> = x.iter().map(|&xi| Dual::constant(xi)).collect();
    let mut gradient = vec![0.0; x.len()];
    if x.is_empty() {
        return (f(&inputs).value, gradient);
    }
    let mut value = f64::NAN;
    for start in (0..x.len()).step_by(N) {
        let end = (start + N).min(x.len());
        for (direction, input) in inputs[start..end].iter_mut().enumerate() {
            input.partials[direction] = 1.0;
        }
        let y = f(&inputs);
        if start == 0 {
            value = y.value;
        }
        gradient[start..end].copy_from_slice(&y.partials[..end - start]);
        for input in &mut inputs[start..end] {
            input.partials = [0.0; N];
        }
    }
    (value, gradient)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::finite_difference::scalar::{central, compare};
    use crate::Real;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Products, quotients and compositions only, so that its `f64` evaluation has a
    /// small relative error and finite differences can judge it.
    fn f<T: Real>(x: T) -> T {
        (x.sin() * x.exp()).atan() / (T::ONE + x * x).sqrt() * (x.powi(3) * T::HALF).cosh()
    }

    #[test]
    fn derivative_of_a_generic_function_matches_finite_differences() {
        let mut rng = StdRng::seed_from_u64(0xa9_0001);
        for _ in 0..32 {
            let x = rng.gen_range(-2.0..2.0);
            let (y, dy) = derivative(f, x);
            assert_eq!(y, f(x), "the value is the f64 value");
            if let Err(why) = compare(dy, central(f::<f64>, x, f64::INFINITY)) {
                panic!("f′({x}): {why}");
            }
        }
    }

    #[test]
    fn derivative_of_a_generic_function_on_f32_agrees_with_f64() {
        let x = 0.75_f64;
        let single = f(x as f32);
        assert!((f64::from(single) - f(x)).abs() <= 8.0 * f64::from(f32::EPSILON) * f(x).abs());
    }

    /// Rosenbrock: f(x) = Σ 100(xᵢ₊₁ − xᵢ²)² + (1 − xᵢ)².
    fn rosenbrock<T: Real>(x: &[T]) -> T {
        x.windows(2)
            .map(|w| {
                let a = w[1] - w[0] * w[0];
                let b = T::ONE - w[0];
                T::from_f64(100.0) * a * a + b * b
            })
            .sum()
    }

    /// ∂f/∂xᵢ = −400·xᵢ(xᵢ₊₁ − xᵢ²) − 2(1 − xᵢ) + 200(xᵢ − xᵢ₋₁²), and a bound on the
    /// rounding of evaluating it (the sum of the terms' magnitudes, times a few ulps).
    fn rosenbrock_gradient(x: &[f64]) -> Vec<(f64, f64)> {
        (0..x.len())
            .map(|i| {
                let mut terms = Vec::new();
                if i + 1 < x.len() {
                    terms.push(-400.0 * x[i] * (x[i + 1] - x[i] * x[i]));
                    terms.push(-2.0 * (1.0 - x[i]));
                }
                if i > 0 {
                    terms.push(200.0 * (x[i] - x[i - 1] * x[i - 1]));
                }
                let magnitude: f64 = terms.iter().map(|t| t.abs()).sum();
                (terms.iter().sum(), 16.0 * f64::EPSILON * magnitude)
            })
            .collect()
    }

    #[test]
    fn gradient_forward_matches_the_analytic_gradient_for_every_chunk_size() {
        let mut rng = StdRng::seed_from_u64(0xa9_0002);
        for n in 1..=9 {
            let x: Vec<f64> = (0..n).map(|_| rng.gen_range(-2.0..2.0)).collect();
            let (y1, g1) = gradient_forward(|d: &[Dual<1>]| rosenbrock(d), &x);
            let (y3, g3) = gradient_forward(|d: &[Dual<3>]| rosenbrock(d), &x);
            let (y16, g16) = gradient_forward(|d: &[Dual<16>]| rosenbrock(d), &x);
            assert_eq!(y1, rosenbrock(&x));
            assert_eq!((y1, &g1), (y3, &g3), "n = {n}: chunks of 1 and 3 differ");
            assert_eq!((y1, &g1), (y16, &g16), "n = {n}: chunks of 1 and 16 differ");
            for (i, (g, (expected, tolerance))) in
                g1.iter().zip(rosenbrock_gradient(&x)).enumerate()
            {
                assert!(
                    (g - expected).abs() <= tolerance,
                    "n = {n}, ∂f/∂x{i}: {g} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn gradient_forward_runs_once_per_chunk_and_handles_no_input() {
        let mut runs = 0;
        let (_, g) = gradient_forward(
            |d: &[Dual<4>]| {
                runs += 1;
                d.iter().sum::<Dual<4>>()
            },
            &[1.0; 10],
        );
        assert_eq!((runs, g), (3, vec![1.0; 10])); // ⌈10 / 4⌉ runs, ∂(Σx)/∂xᵢ = 1
        let (y, g) = gradient_forward(|_: &[Dual<2>]| Dual::constant(7.0), &[]);
        assert_eq!((y, g), (7.0, vec![]));
    }

    /// f(a, b, c) = (a·b, sin a + c², e^(b − c)).
    fn vector_function<T: Real>(x: &[T]) -> Vec<T> {
        vec![x[0] * x[1], x[0].sin() + x[2] * x[2], (x[1] - x[2]).exp()]
    }

    #[test]
    fn jvp_is_the_jacobian_times_the_tangent() {
        let mut rng = StdRng::seed_from_u64(0xa9_0003);
        for _ in 0..16 {
            let x: Vec<f64> = (0..3).map(|_| rng.gen_range(-2.0..2.0)).collect();
            let v: Vec<f64> = (0..3).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let (y, t) = jvp(vector_function, &x, &v);
            assert_eq!(y, vector_function(&x));
            // Row i of J·v from the gradient of output i.
            for (i, ti) in t.iter().enumerate() {
                let (_, row) = gradient_forward(|d: &[Dual<3>]| vector_function(d)[i], &x);
                let expected: f64 = row.iter().zip(&v).map(|(j, vj)| j * vj).sum();
                let magnitude: f64 = row.iter().zip(&v).map(|(j, vj)| (j * vj).abs()).sum();
                assert!(
                    (ti - expected).abs() <= 4.0 * f64::EPSILON * magnitude,
                    "output {i}"
                );
                let (yi, si) = jvp_scalar(|d| vector_function(d)[i], &x, &v);
                assert_eq!((yi, si), (y[i], *ti), "jvp_scalar of output {i}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "the point has 2 components but the tangent has 3")]
    fn jvp_rejects_a_tangent_of_the_wrong_length() {
        let _ = jvp(|d| d.to_vec(), &[1.0, 2.0], &[1.0, 0.0, 0.0]);
    }
}
