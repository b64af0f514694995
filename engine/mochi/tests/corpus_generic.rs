//! Generic functions as numeric Rust writes them: bounded by `num_traits::Float` (also
//! in a `where` clause) or `mochi::Real`, over `&[T]`, `Vec<T>` and `T` (and one over
//! an array's dimension, and a helper over a constant length called with array literals),
//! with loops, iterator chains,
//! branches, early exits and calls between generic functions; argmin-style test
//! functions (sphere, Rosenbrock, Rastrigin, Ackley, Beale, Styblinski–Tang). Each is
//! checked by `test_rule` in `f64` and most in `f32`, and the gradient companions are
//! called with the scalar type inferred at the call site.

#![allow(clippy::needless_range_loop, clippy::ptr_arg)]

mod common;
use mochi::num_traits::Float;
use mochi::{prelude::*, Real};

#[differentiable]
fn sphere<T: Float>(x: &[T]) -> T {
    let mut s = T::zero();
    for i in 0..x.len() {
        s = s + x[i] * x[i];
    }
    s
}

#[differentiable]
fn rosenbrock<T: Float>(x: &[T]) -> T {
    let hundred = T::from(100.0).unwrap();
    let mut s = T::zero();
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = T::one() - x[i];
        s = s + hundred * a * a + b * b;
    }
    s
}

#[differentiable]
fn rastrigin<T: Float>(x: &[T]) -> T {
    let ten = T::from(10.0).unwrap();
    let tau = T::from(std::f64::consts::TAU).unwrap();
    let mut s = ten * T::from(x.len()).unwrap();
    for i in 0..x.len() {
        s = s + x[i] * x[i] - ten * (tau * x[i]).cos();
    }
    s
}

#[differentiable]
fn ackley<T: Float>(x: &[T]) -> T {
    let n = T::from(x.len()).unwrap();
    let mut sq = T::zero();
    let mut cs = T::zero();
    for i in 0..x.len() {
        sq = sq + x[i] * x[i];
        cs = cs + (T::from(std::f64::consts::TAU).unwrap() * x[i]).cos();
    }
    let a = T::from(-20.0).unwrap() * (T::from(-0.2).unwrap() * (sq / n).sqrt()).exp();
    a - (cs / n).exp() + T::from(20.0).unwrap() + T::one().exp()
}

#[differentiable]
fn styblinski_tang<T>(x: &[T]) -> T
where
    T: Float,
{
    let half = T::from(0.5).unwrap();
    let mut s = T::zero();
    for i in 0..x.len() {
        let v = x[i];
        s = s + half * (v.powi(4) - T::from(16.0).unwrap() * v.powi(2) + T::from(5.0).unwrap() * v);
    }
    s
}

#[differentiable]
fn beale<T: Float>(x: &[T]) -> T {
    let (a, b) = (x[0], x[1]);
    let t1 = T::from(1.5).unwrap() - a + a * b;
    let t2 = T::from(2.25).unwrap() - a + a * b.powi(2);
    let t3 = T::from(2.625).unwrap() - a + a * b.powf(T::from(3.0).unwrap());
    t1 * t1 + t2 * t2 + t3 * t3
}

/// Bounded by `mochi::Real`: its constants and methods.
#[differentiable]
fn softplus_sum<T: Real>(x: &[T]) -> T {
    let mut s = T::ZERO;
    for i in 0..x.len() {
        s += x[i].max(T::ZERO) + (-x[i].abs()).exp().ln_1p();
    }
    s
}

/// A branch on the data, and a parameter of type `T`.
#[differentiable]
fn huber<T: Float>(x: &[T], delta: T) -> T {
    let half = T::from(0.5).unwrap();
    let mut s = T::zero();
    for i in 0..x.len() {
        let r = x[i].abs();
        if r <= delta {
            s = s + half * x[i] * x[i];
        } else {
            s = s + delta * (r - half * delta);
        }
    }
    s
}

#[differentiable]
fn dot<T: Float>(a: &[T], b: &[T]) -> T {
    let mut s = T::zero();
    for i in 0..a.len() {
        s = s + a[i] * b[i];
    }
    s
}

/// Calls between generic functions, inferred and with a turbofish.
#[differentiable]
fn norm<T: Float>(x: &[T]) -> T {
    dot(x, x).sqrt()
}

#[differentiable]
fn cosine<T: Float>(a: &[T], b: &[T]) -> T {
    dot::<T>(a, b) / (norm::<T>(a) * norm(b))
}

/// A non-generic function calling generic ones.
#[differentiable]
fn rosen_plus_sphere(x: &[f64]) -> f64 {
    rosenbrock(x) + 0.5 * sphere(x)
}

/// A scalar argument.
#[differentiable]
fn logistic<T: Float>(x: T) -> T {
    T::one() / (T::one() + (-x).exp())
}

/// An owned `Vec<T>` and an early exit from a loop.
#[differentiable]
fn leading_mass<T: Float>(x: Vec<T>, cap: T) -> T {
    let mut s = T::zero();
    for i in 0..x.len() {
        if s > cap {
            break;
        }
        s = s + x[i].exp();
    }
    s.ln()
}

/// A `while` loop on a counter, a generic helper called in it.
#[differentiable]
fn damped<T: Float>(x: &[T]) -> T {
    let mut k = 0;
    let mut y = T::one();
    while k < x.len() {
        y = logistic(y * x[k]) + T::from(0.1).unwrap() * y;
        k += 1;
    }
    y
}

/// A const generic parameter beside the scalar one.
#[differentiable]
fn fixed_quadratic<T: Float, const N: usize>(x: [T; N]) -> T {
    let mut s = T::zero();
    for i in 0..N {
        s = s + T::from(i + 1).unwrap() * x[i] * x[i];
    }
    s
}

/// Iterator chains, with the `Sum` bound num-traits code adds for `.sum()`.
#[differentiable]
fn sum_of_squares<T: Float + std::iter::Sum>(x: &[T]) -> T {
    x.iter().map(|&v| v * v).sum()
}

#[differentiable]
fn folded_log_cosh<T: Float>(x: &[T]) -> T {
    x.iter().fold(T::zero(), |acc, &v| acc + v.cosh().ln())
}

/// Generic over the array's dimension (any `D: Dimension`), not its scalar.
#[differentiable]
fn sum_sin<D: ndarray::Dimension>(x: &ndarray::Array<f64, D>) -> f64 {
    x.mapv(|v| v.sin()).sum()
}

mod f64_rules {
    use crate::check;
    check!(sphere, (vec![0.3, -1.2, 2.0],), |a| (&a.0));
    check!(rosenbrock, (vec![-1.2, 1.0, 0.7, 0.3],), |a| (&a.0));
    check!(rastrigin, (vec![0.3, -0.2, 1.1],), |a| (&a.0));
    check!(ackley, (vec![0.3, -0.2, 1.1],), |a| (&a.0));
    check!(styblinski_tang, (vec![0.3, -2.0, 1.5],), |a| (&a.0));
    check!(beale, (vec![1.1, 0.6],), |a| (&a.0));
    check!(softplus_sum, (vec![-2.0, 0.3, 5.0],), |a| (&a.0));
    check!(huber, (vec![0.3, -2.0, 1.5, -0.1], 1.0), |a| (&a.0, a.1));
    check!(dot, (vec![0.3, -2.0, 1.5], vec![1.0, 0.5, -0.7]), |a| (
        &a.0, &a.1
    ));
    check!(norm, (vec![0.3, -2.0, 1.5],), |a| (&a.0));
    check!(cosine, (vec![0.3, -2.0, 1.5], vec![1.0, 0.5, -0.7]), |a| (
        &a.0, &a.1
    ));
    check!(rosen_plus_sphere, (vec![0.3, -0.4, 1.5],), |a| (&a.0));
    check!(logistic, (0.7,), |a| (a.0));
    check!(leading_mass, (vec![0.3, 1.0, 2.0, 0.5], 2.5), |a| (
        a.0.clone(),
        a.1
    ));
    check!(damped, (vec![0.3, -1.0, 2.0],), |a| (&a.0));
    check!(fixed_quadratic, ([0.3, -1.0, 2.0],), |a| (a.0));
    check!(sum_of_squares, (vec![0.3, -1.0, 2.0],), |a| (&a.0));
    check!(folded_log_cosh, (vec![0.3, -1.0, 2.0],), |a| (&a.0));
    check!(sum_sin, (ndarray::arr1(&[0.3, -1.0, 2.0]),), |a| (&a.0));
}

mod two_dimensional {
    use crate::check;
    check!(sum_sin, (ndarray::arr2(&[[0.3, -1.0], [2.0, 0.1]]),), |a| {
        (&a.0)
    });
}

mod f32_rules {
    use crate::check;
    check!(sphere, (vec![0.3_f32, -1.2, 2.0],), |a| (&a.0));
    check!(generic_chain, (vec![0.5_f32, -1.2, 0.3, 0.9],), |a| (&a.0));
    check!(rastrigin, (vec![0.3_f32, -0.2, 1.1],), |a| (&a.0));
    check!(beale, (vec![1.1_f32, 0.6],), |a| (&a.0));
    check!(huber, (vec![0.3_f32, -2.0, 1.5, -0.1], 1.0), |a| (
        &a.0, a.1
    ));
    check!(
        cosine,
        (vec![0.3_f32, -2.0, 1.5], vec![1.0, 0.5, -0.7]),
        |a| (&a.0, &a.1)
    );
    check!(logistic, (0.7_f32,), |a| (a.0));
    check!(sum_of_squares, (vec![0.3_f32, -1.0, 2.0],), |a| (&a.0));
    check!(folded_log_cosh, (vec![0.3_f32, -1.0, 2.0],), |a| (&a.0));
}

/// ∇ of Rosenbrock in closed form.
fn rosenbrock_gradient(x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        g[i] += -400.0 * x[i] * a - 2.0 * (1.0 - x[i]); // ∂/∂xᵢ
        g[i + 1] += 200.0 * a; // ∂/∂xᵢ₊₁
    }
    g
}

#[test]
fn gradients_are_inferred_for_f64_and_f32() {
    let x = vec![-1.2, 1.0, 0.7, 0.3];
    let (y, g) = rosenbrock::value_and_gradient(&x);
    assert_eq!(y, rosenbrock(&x));
    for (a, b) in g.iter().zip(rosenbrock_gradient(&x)) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
    }
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let g32: Vec<f32> = rosenbrock::gradient(&x32);
    for (a, b) in g32.iter().zip(rosenbrock_gradient(&x)) {
        assert!(
            (*a as f64 - b).abs() <= 1e-4 * b.abs().max(1.0),
            "{a} vs {b}"
        );
    }
    // The in-place companions, generic too.
    let mut shadow = vec![0.0_f32; 4];
    let y32 = rosenbrock::value_and_gradient_into(&x32, &mut shadow);
    assert_eq!((y32, shadow), (rosenbrock(&x32), g32.clone()));
    let mut shadow = vec![0.0_f32; 4];
    rosenbrock::gradient_into(&x32, &mut shadow);
    assert_eq!(shadow, g32);
    let (y, pb) = rosenbrock::pullback(&x32);
    assert_eq!(
        (y, pb(2.0)),
        (rosenbrock(&x32), g32.iter().map(|g| 2.0 * g).collect())
    );
}

#[test]
fn several_arguments_and_a_scalar_one() {
    let (a, b) = (vec![0.3, -2.0, 1.5], vec![1.0, 0.5, -0.7]);
    let (da, db) = dot::gradient(&a, &b);
    assert_eq!((da, db), (b.clone(), a.clone())); // ∂(a·b)/∂a = b, ∂/∂b = a
    let (y, dx) = logistic::value_and_gradient(0.7_f32);
    assert!((dx - y * (1.0 - y)).abs() < 1e-6); // σ' = σ(1 − σ)
    let (dx, ddelta) = huber::gradient(&[0.3, -2.0], 1.0);
    assert_eq!(dx, vec![0.3, -1.0]); // x inside, −δ·sign outside
    assert_eq!(ddelta, 2.0 - 1.0); // r − δ for the outside element
}

/// `H` of Rosenbrock in closed form.
fn rosenbrock_hessian(x: &[f64]) -> ndarray::Array2<f64> {
    let n = x.len();
    let mut h = ndarray::Array2::zeros((n, n));
    for i in 0..n - 1 {
        h[[i, i]] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0; // ∂²/∂xᵢ²
        h[[i, i + 1]] -= 400.0 * x[i]; // ∂²/∂xᵢ∂xᵢ₊₁
        h[[i + 1, i]] -= 400.0 * x[i];
        h[[i + 1, i + 1]] += 200.0;
    }
    h
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

#[test]
fn the_derived_gradient_runs_on_duals() {
    // Forward over reverse by hand: the gradient of a `T: Float` function on `Dual<1>`.
    let x = [-1.2, 1.0, 0.7];
    let v = [0.5, -1.0, 2.0];
    let xd: Vec<Dual<1>> = x.iter().zip(&v).map(|(&a, &b)| Dual::new(a, [b])).collect();
    let g = rosenbrock::gradient(&xd);
    let h = rosenbrock_hessian(&x);
    let hv = h.dot(&ndarray::arr1(&v));
    for i in 0..3 {
        assert!(close(g[i].value, rosenbrock_gradient(&x)[i], 1e-12));
        assert!(
            close(g[i].partials[0], hv[i], 1e-12),
            "{} vs {}",
            g[i].partials[0],
            hv[i]
        );
    }
}

#[test]
fn hessians_of_rosenbrock_match_the_closed_form() {
    for x in [vec![-1.2, 1.0], vec![0.3, -0.4, 1.5, 0.9, -2.0, 0.1]] {
        let h = rosenbrock::hessian(&x);
        let want = rosenbrock_hessian(&x);
        for (a, b) in h.iter().zip(want.iter()) {
            assert!(close(*a, *b, 1e-12), "{a} vs {b}");
        }
        assert_eq!(h, h.t()); // symmetric
        let (y, g, h2) = rosenbrock::value_gradient_and_hessian(&x);
        assert_eq!(
            (y, g, h2),
            (rosenbrock(&x), rosenbrock::gradient(&x), h.clone())
        );
    }
}

/// ½ xᵀAx + bᵀx with A symmetric, over `mochi::Real`: H = A.
#[differentiable]
fn quadratic_form<T: Real>(x: &[T]) -> T {
    let a = [[4.0, 1.0, -0.5], [1.0, 3.0, 0.25], [-0.5, 0.25, 2.0]];
    let b = [1.0, -2.0, 0.5];
    let mut s = T::ZERO;
    for i in 0..3 {
        for j in 0..3 {
            s += T::HALF * T::from_f64(a[i][j]) * x[i] * x[j];
        }
        s += T::from_f64(b[i]) * x[i];
    }
    s
}

#[test]
fn the_hessian_of_a_quadratic_form_is_its_matrix() {
    let h = quadratic_form::hessian(&[0.3, -1.0, 2.0]);
    let a = ndarray::arr2(&[[4.0, 1.0, -0.5], [1.0, 3.0, 0.25], [-0.5, 0.25, 2.0]]);
    assert_eq!(h, a);
    let hv = quadratic_form::hvp(&[0.3, -1.0, 2.0], &[1.0, 0.0, -1.0]);
    assert_eq!(hv, vec![4.5, 0.75, -2.5]); // A·v
}

#[test]
fn jvp_is_the_gradient_along_v_and_hvp_the_finite_difference_of_gradients() {
    let x = [0.3, -0.2, 1.1, 0.6];
    let v = [1.0, -0.5, 0.25, 2.0];
    let dot = |a: &[f64], b: &[f64]| -> f64 { a.iter().zip(b).map(|(p, q)| p * q).sum() };
    // jvp = ∇f·v, and its value is the primal's.
    let (y, dy) = rastrigin::jvp(&x, &v);
    assert_eq!(y, rastrigin(&x));
    assert!(close(dy, dot(&rastrigin::gradient(&x), &v), 1e-12));
    let (y, dy) = ackley::jvp(&x, &v);
    assert!(close(y, ackley(&x), 1e-15));
    assert!(close(dy, dot(&ackley::gradient(&x), &v), 1e-12));
    // hvp ≈ (∇f(x + hv) − ∇f(x − hv)) / 2h, and = H·v with the dense Hessian.
    let h = 1e-5;
    let shifted = |s: f64| -> Vec<f64> { x.iter().zip(&v).map(|(a, b)| a + s * b).collect() };
    for (hv, gp, gm, hess) in [
        (
            rastrigin::hvp(&x, &v),
            rastrigin::gradient(&shifted(h)),
            rastrigin::gradient(&shifted(-h)),
            rastrigin::hessian(&x),
        ),
        (
            ackley::hvp(&x, &v),
            ackley::gradient(&shifted(h)),
            ackley::gradient(&shifted(-h)),
            ackley::hessian(&x),
        ),
    ] {
        let dense = hess.dot(&ndarray::arr1(&v));
        for i in 0..4 {
            let fd = (gp[i] - gm[i]) / (2.0 * h);
            assert!(close(hv[i], fd, 1e-5), "{} vs {fd}", hv[i]);
            assert!(close(hv[i], dense[i], 1e-12), "{} vs {}", hv[i], dense[i]);
        }
    }
}

/// A `Vec<T>` argument gets the companions too, each taking it as the function does (a
/// `Vec`); the direction is a slice.
#[test]
fn companions_of_a_vec_argument() {
    let x = [0.3, 1.0, 2.0, 0.5];
    let v = [1.0, 0.0, 0.0, 0.0];
    let (y, dy) = leading_mass_all::jvp(x.to_vec(), &v);
    assert!(close(y, leading_mass_all(x.to_vec()), 1e-15));
    let g = leading_mass_all::gradient(x.to_vec());
    assert!(close(dy, g[0], 1e-12));
    let h = leading_mass_all::hessian(x.to_vec());
    for (a, b) in h.iter().zip(h.t().iter()) {
        assert!(close(*a, *b, 1e-14)); // symmetric up to rounding
    }
    // The Hessian of log-sum-exp: diag(p) − p pᵀ with p the softmax.
    let z: f64 = x.iter().map(|v| v.exp()).sum();
    let p: Vec<f64> = x.iter().map(|v| v.exp() / z).collect();
    for i in 0..4 {
        for j in 0..4 {
            let want = if i == j { p[i] } else { 0.0 } - p[i] * p[j];
            assert!(close(h[[i, j]], want, 1e-12), "{} vs {want}", h[[i, j]]);
        }
    }
}

#[differentiable]
fn leading_mass_all<T: Float>(x: Vec<T>) -> T {
    let mut s = T::zero();
    for i in 0..x.len() {
        s = s + x[i].exp();
    }
    s.ln()
}

#[test]
fn second_derivative_of_a_scalar_function() {
    let x = 0.7;
    let s = logistic(x);
    let (y, dy) = logistic::jvp(x, 2.0);
    assert_eq!(y, s);
    assert!(close(dy, 2.0 * s * (1.0 - s), 1e-12)); // σ' = σ(1 − σ), along v = 2
    let d2 = s * (1.0 - s) * (1.0 - 2.0 * s); // σ'' = σ(1 − σ)(1 − 2σ)
    assert!(close(logistic::hvp(x, 1.0), d2, 1e-12));
    let (y, g, h) = logistic::value_gradient_and_hessian(x);
    assert_eq!((y, g), logistic::value_and_gradient(x));
    assert_eq!(h.shape(), [1, 1]);
    assert!(close(h[[0, 0]], d2, 1e-12));
}

#[test]
fn a_where_clause_bound_gets_the_companions_too() {
    // Styblinski–Tang: H = diag(½(12xᵢ² − 32)).
    let x = [0.3, -2.0, 1.5];
    let h = styblinski_tang::hessian(&x);
    for i in 0..3 {
        for j in 0..3 {
            let want = if i == j {
                0.5 * (12.0 * x[i] * x[i] - 32.0)
            } else {
                0.0
            };
            assert!(close(h[[i, j]], want, 1e-12), "{} vs {want}", h[[i, j]]);
        }
    }
}

/// A vector output: residuals of a Rosenbrock-style least-squares problem.
#[differentiable]
fn residuals<T: Float>(x: &[T]) -> Vec<T> {
    let mut r = vec![T::zero(); 2 * (x.len() - 1)];
    for i in 0..x.len() - 1 {
        r[2 * i] = T::from(10.0).unwrap() * (x[i + 1] - x[i] * x[i]);
        r[2 * i + 1] = T::one() - x[i];
    }
    r
}

#[test]
fn jacobians_by_forward_mode() {
    let x = [-1.2, 1.0, 0.7, 0.3, 2.0, -0.5];
    let (y, j) = residuals::jacobian(&x);
    assert_eq!(y, residuals(&x));
    assert_eq!(j.shape(), [10, 6]);
    for i in 0..5 {
        for k in 0..6 {
            // ∂r₂ᵢ/∂xₖ = 10(δₖ,ᵢ₊₁ − 2xᵢδₖᵢ), ∂r₂ᵢ₊₁/∂xₖ = −δₖᵢ
            let d = |a: usize| if a == k { 1.0 } else { 0.0 };
            assert_eq!(j[[2 * i, k]], 10.0 * (d(i + 1) - 2.0 * x[i] * d(i)));
            assert_eq!(j[[2 * i + 1, k]], -d(i));
        }
    }
    // jvp = J·v
    let v = [1.0, -0.5, 0.25, 2.0, 0.0, 1.5];
    let (y2, jv) = residuals::jvp(&x, &v);
    assert_eq!(y2, y);
    let want = j.dot(&ndarray::arr1(&v));
    for (a, b) in jv.iter().zip(want.iter()) {
        assert!(close(*a, *b, 1e-12));
    }
}

#[differentiable]
fn generic_chain<T: mochi::Real>(x: &[T]) -> T {
    x.iter()
        .zip(x.iter().skip(1))
        .map(|(a, b)| (*b - *a) * (*b - *a))
        .sum::<T>()
        + x.iter().rev().take(2).map(|v| v.sin()).product::<T>()
}

mod checked_generic_chain {
    use crate::check;

    check!(generic_chain, (vec![0.5_f64, -1.2, 0.3, 0.9],), |a| (&a.0));
}

// Helpers generic over `T: Real` (the README's style), called from functions over
// `f64`: the callers' generic forms (bounded by `num_traits::Float`) reach them through
// a bridge at `<T as Scalar>::Real`, so the callers have gradients and Hessians.
#[differentiable]
fn real_square<T: Real>(v: T) -> T {
    v * v
}

#[differentiable]
fn real_dot<T: Real>(x: &[T], y: &[T]) -> T {
    x.iter().zip(y.iter()).map(|(a, b)| *a * *b).sum()
}

#[differentiable]
fn real_scaled<T: Real>(x: &[T], k: usize) -> Vec<T> {
    x.iter().map(|v| *v * T::from_f64(k as f64)).collect()
}

#[differentiable]
fn calls_real_helpers(x: &[f64]) -> f64 {
    let s = real_scaled(x, 3);
    real_dot(x, &s) + real_square(x[0]).sin()
}

#[differentiable]
fn calls_real_square(x: f64) -> f64 {
    real_square(x) * x + x
}

mod checked_real_helpers {
    use crate::check;

    check!(calls_real_helpers, (vec![0.5_f64, -1.0, 2.0],), |a| (&a.0));
    check!(real_dot, (vec![0.5_f64, -1.0], vec![2.0_f64, 0.25]), |a| (
        &a.0, &a.1
    ));
}

#[test]
fn callers_of_real_helpers_have_gradients_and_hessians() {
    // f = 3 Σ x² + sin(x₀²)
    let x = [0.5, -1.0, 2.0];
    let g = calls_real_helpers::gradient(&x);
    let want = [
        6.0 * x[0] + 2.0 * x[0] * (x[0] * x[0]).cos(),
        6.0 * x[1],
        6.0 * x[2],
    ];
    for (a, b) in g.iter().zip(want.iter()) {
        assert!(close(*a, *b, 1e-12), "{a} vs {b}");
    }
    let h = calls_real_helpers::hessian(&x);
    common::assert_hessian_matches(
        "calls_real_helpers",
        calls_real_helpers::gradient,
        &h,
        &x,
        1e-6,
    );
    let h00 = 6.0 + 2.0 * (0.25_f64).cos() - 4.0 * 0.25 * (0.25_f64).sin();
    assert!(close(h[[0, 0]], h00, 1e-12), "{} vs {h00}", h[[0, 0]]);
    // f = x³ + x: f' = 3x² + 1, f'' = 6x
    let (y, d) = calls_real_square::value_and_gradient(1.5);
    assert_eq!(y, 1.5 * 1.5 * 1.5 + 1.5);
    assert!(close(d, 3.0 * 1.5 * 1.5 + 1.0, 1e-12));
    let h = calls_real_square::hessian(1.5);
    assert!(close(h[[0, 0]], 9.0, 1e-12), "{}", h[[0, 0]]);
}

#[differentiable]
fn real_pair<T: Real>(a: T, b: T) -> (T, T) {
    (a * b, a + b.sin())
}

#[differentiable]
fn calls_real_pair(x: &[f64]) -> f64 {
    let (p, q) = real_pair(x[0], x[1]);
    p * q
}

#[differentiable]
fn closure_calls_marked(x: &[f64]) -> f64 {
    let f = |v: f64| real_square(v) + 1.0;
    f(x[0]) * f(x[1])
}

#[test]
fn hessians_through_a_pair_helper_and_a_local_closure() {
    // f = ab(a + sin b)
    let x = [0.5, 2.0];
    let (a, b) = (x[0], x[1]);
    let h = calls_real_pair::hessian(&x);
    let want = [
        [2.0 * b, 2.0 * a + b.sin() + b * b.cos()],
        [
            2.0 * a + b.sin() + b * b.cos(),
            2.0 * a * b.cos() - a * b * b.sin(),
        ],
    ];
    assert_matrix(&h, &want);
    // g = (a² + 1)(b² + 1)
    let h = closure_calls_marked::hessian(&x);
    let want = [
        [2.0 * (b * b + 1.0), 4.0 * a * b],
        [4.0 * a * b, 2.0 * (a * a + 1.0)],
    ];
    assert_matrix(&h, &want);
}

mod helpers {
    use mochi::prelude::*;

    #[differentiable]
    pub fn sq(v: f64) -> f64 {
        v * v
    }

    pub mod deep {
        use mochi::prelude::*;

        #[differentiable]
        pub fn cube(v: f64) -> f64 {
            v * v * v
        }
    }
}

mod through_paths {
    use super::helpers;
    use super::helpers::deep::cube as c3;
    use mochi::prelude::*;

    /// Helpers reached by a module path (`helpers::sq`, after `use super::helpers`) and
    /// by a renamed import: the caller's generic form calls theirs (it had none).
    #[differentiable]
    pub fn f(x: &[f64]) -> f64 {
        helpers::sq(x[0]) * helpers::deep::cube(x[1]) + c3(x[0])
    }
}

#[test]
fn hessians_through_module_paths_and_renamed_imports() {
    // f = a²b³ + a³
    let (a, b) = (0.5, 2.0);
    let h = through_paths::f::hessian(&[a, b]);
    let want = [
        [2.0 * b * b * b + 6.0 * a, 6.0 * a * b * b],
        [6.0 * a * b * b, 6.0 * a * a * b],
    ];
    assert_matrix(&h, &want);
}

/// `h` equals `want` entry by entry (relative 1e-12).
fn assert_matrix(h: &ndarray::Array2<f64>, want: &[[f64; 2]; 2]) {
    for i in 0..2 {
        for j in 0..2 {
            assert!(
                close(h[[i, j]], want[i][j], 1e-12),
                "{i}{j}: {} vs {}",
                h[[i, j]],
                want[i][j]
            );
        }
    }
}

/// A helper generic over its length (`const N: usize`), called with array literals:
/// the callers' gradients (their generic forms pass the literal and infer `N`).
mod over_a_length {
    use mochi::prelude::*;

    #[differentiable]
    pub fn norm<const N: usize>(x: [f64; N]) -> f64 {
        x.iter().map(|v| v * v).sum::<f64>().sqrt()
    }

    #[differentiable]
    pub fn scaled_norm(x: &[f64]) -> f64 {
        norm([x[0], x[1], x[2]]) * x[3]
    }

    #[differentiable]
    pub fn two_lengths(x: &[f64], s: f64) -> f64 {
        norm([x[0] * s, x[1]]) + norm([s; 4])
    }

    /// The array bound to a local first, and an argument of an array type.
    #[differentiable]
    pub fn named_arrays(x: &[f64], w: [f64; 2]) -> f64 {
        let v = [x[0], x[1] * x[2]];
        let u: [f64; 2] = [x[2], 1.0];
        norm(v) * norm(w) + norm(u)
    }

    mod checks {
        use crate::check;
        check!(named_arrays, (vec![0.3, 0.7, 1.4], [0.5, -1.2]), |a| (
            &a.0, a.1
        ));
        check!(scaled_norm, (vec![0.3, 0.7, 1.4, 0.2],), |a| (&a.0));
        check!(two_lengths, (vec![0.3, 0.7], 1.3), |a| (&a.0, a.1));
    }

    #[test]
    fn gradient_of_a_caller_of_a_length_generic_helper() {
        // d/dx (|(x0, x1, x2)|·x3): xᵢ·x3/r for i < 3, r for x3
        let x: [f64; 4] = [0.3, 0.7, 1.4, 0.2];
        let r = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        let g = scaled_norm::gradient(&x);
        let want = [x[0] * x[3] / r, x[1] * x[3] / r, x[2] * x[3] / r, r];
        for i in 0..4 {
            assert!(
                (g[i] - want[i]).abs() < 1e-14,
                "{i}: {} vs {}",
                g[i],
                want[i]
            );
        }
    }
}

/// A Gaussian mixture's density as generic numeric code writes it: constants from
/// `FloatConst` (`T::PI()`, `T::TAU()`), a `Default` start, counts by `FromPrimitive`.
#[differentiable]
fn mean_density<
    T: Float + mochi::num_traits::FloatConst + mochi::num_traits::FromPrimitive + Default,
>(
    x: &[T],
    mu: T,
) -> T {
    let mut s = T::default();
    for &v in x {
        let z = v - mu;
        s = s
            + (-(z * z) / T::from_u8(2).unwrap()).exp() / T::TAU().sqrt()
                * T::FRAC_1_PI()
                * T::PI();
    }
    s / T::from_usize(x.len()).unwrap()
}

/// Bounds beyond `Float` that the forward-mode scalar meets (`FloatConst`,
/// `FromPrimitive`, `Default`) keep the higher-order companions.
#[test]
fn float_const_from_primitive_and_default_bounds_keep_the_hessian() {
    let x = [0.3, -0.5, 0.9];
    let mu = 0.2_f64;
    // closed form: d/dmu = mean of z·φ(z), d/dx_i = −z_i·φ(z_i)/n, φ(z) = exp(−z²/2)/√(2π)
    let phi = |z: f64| (-z * z / 2.0).exp() / std::f64::consts::TAU.sqrt();
    let (gx, gm) = mean_density::gradient(&x, mu);
    let want_mu: f64 = x.iter().map(|v| (v - mu) * phi(v - mu)).sum::<f64>() / 3.0;
    assert!(close(gm, want_mu, 1e-13), "{gm} vs {want_mu}");
    for i in 0..3 {
        assert!(close(gx[i], -(x[i] - mu) * phi(x[i] - mu) / 3.0, 1e-13));
    }
    // d²/dx_i² = (z_i² − 1)·φ(z_i)/n on the diagonal, zero between different x's
    let h = mean_density::hessian(&x, mu);
    assert_eq!(h.dim(), (4, 4));
    for i in 0..3 {
        let z = x[i] - mu;
        assert!(
            close(h[[i, i]], (z * z - 1.0) * phi(z) / 3.0, 1e-12),
            "{h:?}"
        );
        for j in 0..3 {
            if i != j {
                assert!(h[[i, j]].abs() < 1e-15);
            }
        }
    }
    let g32 = mean_density::gradient(&[0.3_f32, -0.5, 0.9], 0.2_f32);
    assert!((g32.1 as f64 - want_mu).abs() < 1e-6);
}
