//! GradBench's gradient-descent solver for `particle` and `saddle` (its
//! `cpp/gradbench/gd.hpp`), generic over the scalar so that a derivative can be taken
//! through it by running it on dual numbers.
//!
//! The step size `eta` starts at `10⁻⁵`, doubles after ten accepted steps in a row and
//! halves on a rejected one; the solver stops when the gradient's norm or the step's
//! length falls to `10⁻⁵`. Comparisons look at values only, so a run on duals takes
//! the same steps as on `f64`.

use mochi::num_traits::Float;

fn magnitude<T: Float>(v: &[T]) -> T {
    let mut acc = T::zero();
    for &x in v {
        acc = acc + x * x;
    }
    acc.sqrt()
}

fn distance<T: Float>(u: &[T], v: &[T]) -> T {
    let mut acc = T::zero();
    for (&a, &b) in u.iter().zip(v) {
        acc = acc + (a - b) * (a - b);
    }
    acc.sqrt()
}

/// The point gradient descent reaches from `start` on `objective`, whose gradient is
/// `gradient`.
pub fn argmin<T: Float>(
    objective: impl Fn(&[T]) -> T,
    gradient: impl Fn(&[T]) -> Vec<T>,
    start: &[T],
) -> Vec<T> {
    let tolerance = T::from(1e-5).unwrap();
    let mut x = start.to_vec();
    let mut fx = objective(&x);
    let mut gx = gradient(&x);
    let mut i = 0;
    let mut eta = 1e-5;
    loop {
        if magnitude(&gx) <= tolerance {
            return x;
        } else if i == 10 {
            eta *= 2.0;
            i = 0;
        } else {
            let step = T::from(eta).unwrap();
            let x_prime: Vec<T> = x.iter().zip(&gx).map(|(&xj, &gj)| xj - step * gj).collect();
            if distance(&x, &x_prime) <= tolerance {
                return x;
            }
            let fx_prime = objective(&x_prime);
            if fx_prime < fx {
                x = x_prime;
                fx = fx_prime;
                gx = gradient(&x);
                i += 1;
            } else {
                eta /= 2.0;
                i = 0;
            }
        }
    }
}

/// The point gradient ascent reaches from `start`: [`argmin`] of `−objective`.
pub fn argmax<T: Float>(
    objective: impl Fn(&[T]) -> T,
    gradient: impl Fn(&[T]) -> Vec<T>,
    start: &[T],
) -> Vec<T> {
    argmin(
        |x| -objective(x),
        |x| gradient(x).into_iter().map(|g| -g).collect(),
        start,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descends_to_the_minimum_of_a_quadratic() {
        // f(x) = (x₀ − 1)² + 2(x₁ + 0.5)²
        let f = |x: &[f64]| (x[0] - 1.0).powi(2) + 2.0 * (x[1] + 0.5).powi(2);
        let g = |x: &[f64]| vec![2.0 * (x[0] - 1.0), 4.0 * (x[1] + 0.5)];
        let x = argmin(f, g, &[0.0, 0.0]);
        assert!(
            (x[0] - 1.0).abs() < 1e-4 && (x[1] + 0.5).abs() < 1e-4,
            "{x:?}"
        );
        let y = argmax(
            |x| -f(x),
            |x| g(x).iter().map(|v| -v).collect(),
            &[0.0, 0.0],
        );
        assert_eq!(x, y);
    }
}
