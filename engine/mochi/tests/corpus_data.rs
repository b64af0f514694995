//! Arrays and mutation, calls across functions and modules, recursion, structs,
//! closures in iterator adapters, and two small models.

// The corpus writes every form on purpose (`y = y * a`, index loops), so clippy's
// style suggestions for the user's code are off here; the generated code itself is
// checked by clippy like any other code.
#![allow(
    clippy::assign_op_pattern,
    clippy::needless_range_loop,
    clippy::neg_multiply,
    clippy::approx_constant,
    clippy::excessive_precision,
    clippy::explicit_counter_loop,
    clippy::manual_memcpy,
    clippy::ptr_arg,
    clippy::let_and_return,
    clippy::just_underscores_and_digits
)]

mod common;
use mochi::prelude::*;

#[differentiable]
fn overwrite_local_array(x: &[f64]) -> f64 {
    let mut y = vec![0.0; x.len()];
    for i in 0..x.len() {
        y[i] = x[i].exp().cos().sin();
    }
    let mut s = 0.0;
    for i in 0..y.len() {
        s += y[i];
    }
    s
}

#[differentiable]
fn overwritten_twice(x: &[f64]) -> f64 {
    let mut y = vec![0.0; 3];
    y[0] = x[0] * x[1];
    y[1] = y[0] + x[2];
    y[0] = y[1] * y[1]; // overwrites an element that was read
    y[2] = y[0] - x[0];
    y[0] + y[2]
}

#[differentiable]
fn mutate_argument(x: &mut [f64], a: f64) -> f64 {
    x[0] = x[0] * a;
    x[1] = x[1] + x[0];
    x[0] = x[0].sin(); // the same element mutated twice
    x[0] + x[1] * a
}

#[differentiable]
fn mutate_vec_argument(v: &mut Vec<f64>) -> f64 {
    for i in 1..v.len() {
        v[i] = v[i] + v[i - 1] * 0.5;
    }
    v[v.len() - 1]
}

#[differentiable]
fn owned_vec(v: Vec<f64>, s: f64) -> f64 {
    let mut w = v;
    w[0] = w[0] * s;
    w[0] + w[1]
}

#[differentiable]
fn gather_with_saved_index(x: &[f64], idx: &[usize]) -> f64 {
    let mut s = 0.0;
    for k in 0..idx.len() {
        let j = idx[k];
        s += x[j] * x[j];
    }
    s
}

#[differentiable]
fn prefix_sums(x: &[f64]) -> f64 {
    let mut c = x.to_vec();
    for i in 1..c.len() {
        c[i] = c[i] + c[i - 1];
    }
    let mut s = 0.0;
    for i in 0..c.len() {
        s += c[i] * c[i];
    }
    s
}

#[differentiable]
fn naive_matmul(a: &[f64], b: &[f64], n: usize) -> f64 {
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0.0;
            for k in 0..n {
                acc += a[i * n + k] * b[k * n + j];
            }
            c[i * n + j] = acc;
        }
    }
    let mut s = 0.0;
    for i in 0..n * n {
        s += c[i] * c[i];
    }
    s
}

#[differentiable]
fn square(x: f64) -> f64 {
    x * x
}

#[differentiable]
fn sum_of_squares(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += square(x[i]);
    }
    s
}

mod geometry {
    use mochi::prelude::*;

    #[differentiable]
    pub fn norm(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            s += x[i] * x[i];
        }
        s.sqrt()
    }
}

#[differentiable]
fn calls_across_modules(x: &[f64], a: f64) -> f64 {
    geometry::norm(x) * a + crate::square(a)
}

#[differentiable]
fn power_by_recursion(x: f64, n: u32) -> f64 {
    if n == 0 {
        1.0
    } else {
        x * power_by_recursion(x, n - 1)
    }
}

#[differentiable(boxed)]
fn even_chain(x: f64, n: u32) -> f64 {
    if n == 0 {
        x
    } else {
        odd_chain(x.sin(), n - 1) + x
    }
}

#[differentiable]
fn odd_chain(x: f64, n: u32) -> f64 {
    if n == 0 {
        x * x
    } else {
        even_chain(x * 0.5, n - 1)
    }
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Params {
    w: f64,
    b: f64,
    steps: usize,
}

#[differentiable]
fn struct_argument(p: &Params, x: f64) -> f64 {
    let mut y = x;
    for _ in 0..p.steps {
        y = (p.w * y + p.b).tanh();
    }
    y
}

/// A plain function of integers (a count the model's settings give).
fn log_count_term(n: usize, d: usize) -> f64 {
    ((n * d) as f64).ln()
}

/// An integer setting of a struct in integer arithmetic (`d + p.steps + 1`), given to
/// a plain function: no derivative flows there.
#[differentiable]
fn integer_setting(p: &Params, x: &[f64]) -> f64 {
    let d = x.len();
    let n = d + p.steps + 1;
    let c = (n * d) as f64 * p.w.ln() - log_count_term(n, d);
    c * x[0] + p.b * x[1]
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Layer {
    weights: Vec<f64>,
    bias: f64,
}

#[differentiable]
fn struct_with_vec(layer: &Layer, x: &[f64]) -> f64 {
    let mut z = layer.bias;
    for i in 0..x.len() {
        z += layer.weights[i] * x[i];
    }
    z.tanh()
}

#[differentiable]
fn struct_output(x: f64) -> Params {
    Params {
        w: x * 2.0,
        b: x.sin(),
        steps: 3,
    }
}

#[differentiable]
fn iterator_sum(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() * 2.0
}

#[differentiable]
fn iterator_map_sum(x: &[f64], a: f64) -> f64 {
    // a closure capturing an active variable
    x.iter().map(|v| (v * a).sin()).sum::<f64>()
}

#[differentiable]
fn iterator_zip_map_sum(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y.iter())
        .map(|(a, b)| a * b.exp())
        .sum::<f64>()
}

#[differentiable]
fn iterator_fold(x: &[f64], c: f64) -> f64 {
    x.iter().fold(c, |acc, v| acc * 0.5 + v * v)
}

#[differentiable]
fn iterator_product(x: &[f64]) -> f64 {
    x.iter().product::<f64>()
}

#[differentiable]
fn small_mlp(w1: &[f64], b1: &[f64], w2: &[f64], x: &[f64], y: f64) -> f64 {
    // 3 inputs → 4 hidden (tanh) → 1 output, squared error
    let hidden = b1.len();
    let inputs = x.len();
    let mut out = 0.0;
    for h in 0..hidden {
        let mut z = b1[h];
        for i in 0..inputs {
            z += w1[h * inputs + i] * x[i];
        }
        out += w2[h] * z.tanh();
    }
    let r = out - y;
    r * r
}

mod checks {
    use crate::check;
    check!(
        overwrite_local_array,
        (vec![0.5_f64, -1.3, 2.0, 0.1],),
        |a| (&a.0)
    );
    check!(overwritten_twice, (vec![0.5_f64, -1.3, 2.0],), |a| (&a.0));
    check!(mutate_argument, (vec![0.5_f64, -1.3], 1.7_f64), |a| (
        &mut a.0, a.1
    ));
    check!(mutate_vec_argument, (vec![0.5_f64, -1.3, 0.8, 0.2],), |a| {
        (&mut a.0)
    });
    check!(owned_vec, (vec![0.5_f64, -1.3], 2.5_f64), |a| (
        a.0.clone(),
        a.1
    ));
    check!(
        gather_with_saved_index,
        (vec![0.5_f64, -1.3, 0.8], vec![2_usize, 0, 2, 1]),
        |a| (&a.0, &a.1)
    );
    check!(prefix_sums, (vec![0.5_f64, -1.3, 0.8, 0.2],), |a| (&a.0));
    check!(
        naive_matmul,
        (
            (0..9)
                .map(|i| (i as f64 * 0.37).sin())
                .collect::<Vec<f64>>(),
            (0..9)
                .map(|i| (i as f64 * 0.71).cos())
                .collect::<Vec<f64>>(),
            3_usize
        ),
        |a| (&a.0, &a.1, a.2)
    );
    check!(sum_of_squares, (vec![0.5_f64, -1.3, 0.8],), |a| (&a.0));
    check!(
        calls_across_modules,
        (vec![0.5_f64, -1.3, 0.8], 0.6_f64),
        |a| (&a.0, a.1)
    );
    check!(power_by_recursion, (1.3_f64, 5_u32), |a| (a.0, a.1));
    check!(even_chain, (0.8_f64, 5_u32), |a| (a.0, a.1));
    check!(odd_chain, (0.8_f64, 4_u32), |a| (a.0, a.1));
    check!(
        struct_argument,
        (
            super::Params {
                w: 0.8,
                b: -0.2,
                steps: 3
            },
            0.4_f64
        ),
        |a| (&a.0, a.1)
    );
    check!(
        struct_with_vec,
        (
            super::Layer {
                weights: vec![0.3, -0.2, 0.5],
                bias: 0.1
            },
            vec![1.0_f64, 0.5, -0.7]
        ),
        |a| (&a.0, &a.1)
    );
    check!(iterator_sum, (vec![0.5_f64, -1.3, 0.8],), |a| (&a.0));
    check!(iterator_map_sum, (vec![0.5_f64, -1.3, 0.8], 0.7_f64), |a| (
        &a.0, a.1
    ));
    check!(
        iterator_zip_map_sum,
        (vec![0.5_f64, -1.3, 0.8], vec![0.1_f64, 0.2, -0.3]),
        |a| (&a.0, &a.1)
    );
    check!(iterator_fold, (vec![0.5_f64, -1.3, 0.8], 0.3_f64), |a| (
        &a.0, a.1
    ));
    check!(iterator_product, (vec![0.5_f64, -1.3, 0.8, 2.0],), |a| (&a
        .0));
    check!(
        small_mlp,
        (
            (0..12)
                .map(|i| (i as f64 * 0.3).sin() * 0.5)
                .collect::<Vec<f64>>(),
            vec![0.1_f64, -0.1, 0.2, 0.0],
            vec![0.5_f64, -0.4, 0.3, 0.2],
            vec![1.0_f64, -0.5, 0.25],
            0.3_f64,
        ),
        |a| (&a.0, &a.1, &a.2, &a.3, a.4)
    );

    #[test]
    fn struct_gradient_has_the_struct_tangent() {
        let p = super::Params {
            w: 0.8,
            b: -0.2,
            steps: 1,
        };
        let (dp, dx) = super::struct_argument::gradient(&p, 0.4);
        // y = tanh(w x + b): ∂y/∂w = x (1 − y²), ∂y/∂b = 1 − y², ∂y/∂x = w (1 − y²)
        let y = (0.8_f64 * 0.4 - 0.2).tanh();
        let s = 1.0 - y * y;
        assert!((dp.w - 0.4 * s).abs() < 1e-15);
        assert!((dp.b - s).abs() < 1e-15);
        assert!((dx - 0.8 * s).abs() < 1e-15);
        assert_eq!(dp.steps, mochi::NoTangent);
    }

    #[test]
    fn struct_output_pullback() {
        let (y, pb) = super::struct_output::pullback(0.5);
        assert_eq!(y.steps, 3);
        let seed = super::ParamsTangent {
            w: 1.0,
            b: 2.0,
            steps: mochi::NoTangent,
        };
        // ∂/∂x of w·1 + b·2 = 2 + 2 cos x
        assert!((pb(seed) - (2.0 + 2.0 * 0.5_f64.cos())).abs() < 1e-15);
    }

    #[test]
    fn mutation_leaves_the_primal_state_and_differentiates_the_entry_value() {
        let mut x = vec![0.5, -1.3];
        let mut x_primal = x.clone();
        let y_primal = super::mutate_argument(&mut x_primal, 1.7);
        let (y, (dx, _da)) = super::mutate_argument::value_and_gradient(&mut x, 1.7);
        assert_eq!(y, y_primal);
        assert_eq!(x, x_primal); // the state after the call is what the primal leaves
                                 // y = sin(a x0) + a (x1 + a x0): ∂y/∂x1 = a
        assert!((dx[1] - 1.7).abs() < 1e-15);
    }

    #[test]
    fn shadow_buffers_accumulate_and_steady_state_allocates_nothing() {
        let x = vec![0.5, -1.3, 0.8, 0.1];
        let mut dx = vec![0.0; 4];
        let y = super::overwrite_local_array::value_and_gradient_into(&x, &mut dx);
        let (y2, dx2) = super::overwrite_local_array::value_and_gradient(&x);
        assert_eq!(y, y2);
        assert_eq!(dx, dx2);
        // a second call adds
        super::overwrite_local_array::gradient_into(&x, &mut dx);
        for (a, b) in dx.iter().zip(&dx2) {
            assert_eq!(*a, 2.0 * b);
        }
    }
    check!(
        integer_setting,
        (
            super::Params {
                w: 1.7,
                b: -0.4,
                steps: 3
            },
            vec![0.5_f64, -1.3, 0.8]
        ),
        |a| (&a.0, &a.1)
    );
}
