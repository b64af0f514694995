//! Branches, matches, every loop form, early exits.

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
fn branch(x: f64) -> f64 {
    if x > 0.0 {
        x * x
    } else {
        -x * 3.0
    }
}

#[differentiable]
fn branch_statement(x: f64, y: f64) -> f64 {
    let mut z = x;
    if y > x {
        z = z * y;
    } else if y < -1.0 {
        z = z + y;
    } else {
        z = z.sin();
    }
    z * 2.0
}

#[differentiable]
fn branch_without_else(x: f64) -> f64 {
    let mut z = x * 2.0;
    if x < 10.0 {
        z = z * z;
    }
    z
}

#[differentiable]
fn match_on_integer(x: f64, k: usize) -> f64 {
    match k % 3 {
        0 => x * x,
        1 => x.sin(),
        _ => {
            let t = x + 1.0;
            t * t * t
        }
    }
}

#[differentiable]
fn match_with_guard(x: f64, k: i32) -> f64 {
    let mut y = x;
    match k {
        n if n < 0 => y = y * -1.0,
        0 => {}
        _ => y = y * x,
    }
    y
}

#[differentiable]
fn while_loop(x: f64) -> f64 {
    let mut y = x;
    let mut k = 0;
    while k < 5 {
        y = y * 0.9 + x;
        k += 1;
    }
    y
}

#[differentiable]
fn data_dependent_while(x: f64) -> f64 {
    // the trip count depends on the input
    let mut y = x;
    let mut n = 0;
    while y < 100.0 {
        y = y * 1.7 + 0.5;
        n += 1;
    }
    y + n as f64
}

#[differentiable]
fn loop_with_break(x: f64) -> f64 {
    let mut y = x;
    let mut k = 0;
    loop {
        y = y.sin() + x;
        k += 1;
        if k >= 4 {
            break;
        }
    }
    y
}

#[differentiable]
fn loop_with_continue(x: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while i < x.len() {
        i += 1;
        if x[i - 1] < 0.0 {
            continue;
        }
        s += x[i - 1] * x[i - 1];
    }
    s
}

#[differentiable]
fn for_range(x: f64, n: usize) -> f64 {
    let mut y = 1.0;
    for _ in 0..n {
        y = y * x;
    }
    y
}

#[differentiable]
fn for_inclusive_rev_step(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in (0..=x.len() - 1).rev() {
        s = s * 0.5 + x[i];
    }
    for i in (0..x.len()).step_by(2) {
        s += x[i] * x[i];
    }
    s
}

#[differentiable]
fn for_with_break(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        if s > 2.0 {
            break;
        }
        s += x[i].exp();
    }
    s
}

#[differentiable]
fn nested_loops(a: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        for j in 0..i {
            s += a[i] * a[j];
        }
    }
    s
}

#[differentiable]
fn nested_data_dependent(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let mut t = x[i];
        while t.abs() > 0.1 {
            t = t * 0.5;
        }
        s += t;
    }
    s
}

#[differentiable]
fn branch_in_loop(x: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        if x[i] > c {
            s += x[i] - c;
        } else {
            s += (c - x[i]) * 0.1;
        }
    }
    s
}

#[differentiable]
fn early_return(x: f64) -> f64 {
    if x < 0.0 {
        return x * x;
    }
    let y = x.sqrt();
    y * 3.0
}

#[differentiable]
fn return_from_loop(x: &[f64], limit: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * x[i];
        if s > limit {
            return s * 2.0;
        }
    }
    s
}

#[differentiable]
fn if_expression_value(x: f64, y: f64) -> f64 {
    let m = if x > y { x } else { y };
    let z = if m > 1.0 { m * 2.0 } else { 1.0 };
    m * z
}

#[differentiable]
fn loop_carried_reassignment(x: f64, a: f64) -> f64 {
    let mut y = x;
    for _ in 0..7 {
        y = y * a;
    }
    y
}

#[differentiable]
fn for_over_iterator(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.iter() {
        s += v.sin() * *v;
    }
    s
}

#[differentiable]
fn for_over_enumerate(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, &v) in x.iter().enumerate() {
        s += v * (i as f64 + 1.0);
    }
    s
}

#[differentiable]
fn for_over_zip(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in x.iter().zip(y.iter()) {
        s += a * b;
    }
    s
}

#[differentiable]
fn for_over_reference(x: &Vec<f64>) -> f64 {
    let mut s = 1.0;
    for v in x {
        s *= 1.0 + v * v;
    }
    s
}

#[differentiable]
fn diagnostics_run_as_written(x: f64) -> f64 {
    assert!(x.is_finite(), "x must be finite");
    debug_assert!(x > -1e9);
    let y = x * 2.0;
    if y.is_nan() {
        println!("unexpected NaN");
    }
    y
}

mod checks {
    use crate::check;
    check!(branch, (0.7_f64,), |a| (a.0));
    #[test]
    fn branch_other_side() {
        mochi::testing::test_rule(
            (-0.7_f64,),
            |a| super::branch(a.0),
            |a| super::branch::rrule(a.0),
        );
    }
    check!(branch_statement, (0.5_f64, 2.0_f64), |a| (a.0, a.1));
    #[test]
    fn branch_statement_other_sides() {
        for args in [(0.5_f64, -2.0_f64), (0.5, 0.2)] {
            mochi::testing::test_rule(
                args,
                |a| super::branch_statement(a.0, a.1),
                |a| super::branch_statement::rrule(a.0, a.1),
            );
        }
    }
    check!(branch_without_else, (0.3_f64,), |a| (a.0));
    check!(match_on_integer, (0.3_f64, 4_usize), |a| (a.0, a.1));
    #[test]
    fn match_every_arm() {
        for k in 0..3 {
            mochi::testing::test_rule(
                (0.4_f64, k),
                |a| super::match_on_integer(a.0, a.1),
                |a| super::match_on_integer::rrule(a.0, a.1),
            );
        }
        for k in [-2, 0, 5] {
            mochi::testing::test_rule(
                (0.4_f64, k),
                |a| super::match_with_guard(a.0, a.1),
                |a| super::match_with_guard::rrule(a.0, a.1),
            );
        }
    }
    check!(while_loop, (0.3_f64,), |a| (a.0));
    check!(data_dependent_while, (1.3_f64,), |a| (a.0));
    check!(loop_with_break, (0.3_f64,), |a| (a.0));
    check!(
        loop_with_continue,
        (vec![0.5_f64, -1.0, 2.0, -0.1, 0.3],),
        |a| (&a.0)
    );
    check!(for_range, (1.1_f64, 6_usize), |a| (a.0, a.1));
    check!(
        for_inclusive_rev_step,
        (vec![0.5_f64, -1.0, 2.0, 0.25, 0.3],),
        |a| (&a.0)
    );
    check!(for_with_break, (vec![0.5_f64, -1.0, 0.2, 0.4, 0.3],), |a| {
        (&a.0)
    });
    check!(
        nested_loops,
        (vec![0.5_f64, -1.0, 2.0, 0.25], 4_usize),
        |a| (&a.0, a.1)
    );
    check!(
        nested_data_dependent,
        (vec![0.5_f64, -1.3, 2.0, 0.05],),
        |a| (&a.0)
    );
    check!(
        branch_in_loop,
        (vec![0.5_f64, -1.3, 2.0, 0.05], 0.2_f64),
        |a| (&a.0, a.1)
    );
    check!(early_return, (2.0_f64,), |a| (a.0));
    #[test]
    fn early_return_taken() {
        mochi::testing::test_rule(
            (-2.0_f64,),
            |a| super::early_return(a.0),
            |a| super::early_return::rrule(a.0),
        );
    }
    check!(
        return_from_loop,
        (vec![0.5_f64, 1.3, 2.0, 0.05], 2.0_f64),
        |a| (&a.0, a.1)
    );
    #[test]
    fn return_from_loop_not_taken() {
        mochi::testing::test_rule(
            (vec![0.5_f64, 0.3], 20.0_f64),
            |a| super::return_from_loop(&a.0, a.1),
            |a| super::return_from_loop::rrule(&a.0, a.1),
        );
    }
    check!(if_expression_value, (1.5_f64, 0.7_f64), |a| (a.0, a.1));
    check!(loop_carried_reassignment, (0.9_f64, 1.1_f64), |a| (
        a.0, a.1
    ));
    check!(for_over_iterator, (vec![0.5_f64, -1.3, 2.0],), |a| (&a.0));
    check!(for_over_enumerate, (vec![0.5_f64, -1.3, 2.0],), |a| (&a.0));
    check!(
        for_over_zip,
        (vec![0.5_f64, -1.3, 2.0], vec![1.5_f64, 0.3]),
        |a| (&a.0, &a.1)
    );
    check!(for_over_reference, (vec![0.5_f64, -1.3, 2.0],), |a| (&a.0));
    check!(diagnostics_run_as_written, (0.5_f64,), |a| (a.0));

    #[test]
    fn data_dependent_trip_counts_differ_and_both_are_right() {
        // y → 1.7y + 0.5 until ≥ 100: more iterations from a smaller start.
        let (_, d_small) = super::data_dependent_while::value_and_gradient(0.1);
        let (_, d_large) = super::data_dependent_while::value_and_gradient(60.0);
        assert!(d_small > d_large); // dy/dx = 1.7ⁿ, n larger for the small start
        assert_eq!(d_large, 1.7);
    }
}

/// `loop` as a value: `let v = loop { … break e; }`, a labelled `break 'outer e` from
/// an inner `for`, an assignment `x = loop { … }`, and a loop as a branch's value. The
/// value's derivative was lost before (a zero gradient, silently).
#[allow(clippy::never_loop)]
#[differentiable]
fn loop_values(x: &[f64]) -> f64 {
    let mut i = 0;
    let mut acc = 0.0;
    let r = loop {
        acc += x[i].exp();
        i += 1;
        if i == x.len() {
            break acc * 2.0;
        }
    };
    let mut total = 0.0;
    let s = 'outer: loop {
        for j in 0..x.len() {
            total += x[j] * x[j];
            if total > 1.0 {
                break 'outer total.sqrt();
            }
        }
        break total;
    };
    let mut t = 0.0;
    let mut k = 0;
    t = loop {
        k += 1;
        if k > 1 {
            break t + x[0] * x[1];
        }
    };
    let b = if x[0] > 0.0 {
        loop {
            break x[1].sin();
        }
    } else {
        0.5
    };
    r + s * 3.0 + t + b
}

#[test]
fn loop_values_carry_their_derivative() {
    for x in [
        vec![0.9, 0.8, 0.7],
        vec![0.1, -0.2, 0.3],
        vec![-0.4, 0.5, 0.2],
    ] {
        mochi::testing::test_rule((x,), |a| loop_values(&a.0), |a| loop_values::rrule(&a.0));
    }
    // d/dx₀ at a point where the labelled loop leaves early: 2eˣ⁰ + 3x₀/√(x₀²+x₁²)
    // (x₀² + x₁² > 1 after two terms) + x₁ + x₁'s sine term has no x₀.
    let x = [0.9, 0.8, 0.7];
    let g = loop_values::gradient(&x);
    let want = 2.0 * x[0].exp() + 3.0 * x[0] / (x[0] * x[0] + x[1] * x[1]).sqrt() + x[1];
    assert!((g[0] - want).abs() < 1e-12, "{} vs {want}", g[0]);
}
