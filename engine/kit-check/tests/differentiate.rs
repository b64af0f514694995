//! `#[differentiable]` functions on `Mat2`, `Vec2` and `View`, whose rules are in this
//! crate, checked against finite differences by `mochi::testing::test_rule`.

use mochi::prelude::*;
use mochi_kit_check::rules::*;
use mochi_kit_check::{outer, Mat2, MatRef, Vec2, View};

fn a() -> Mat2 {
    Mat2::new(0.7, -1.3, 0.4, 2.1)
}
fn b() -> Mat2 {
    Mat2::new(-0.2, 0.9, 1.6, 0.5)
}
fn u() -> Vec2 {
    Vec2 { v: [0.8, -1.1] }
}

/// A product and a trace.
#[differentiable]
fn trace_of_product(a: &Mat2, b: &Mat2) -> f64 {
    (a * b).trace()
}

/// A transpose, element reads, a loop over an inactive shape query.
#[differentiable]
fn weighted_diagonal(a: &Mat2, b: &Mat2) -> f64 {
    let c = a.transpose() * *b;
    let mut s = 0.0;
    for i in 0..a.rows() {
        s += c[(i, i)] * (i as f64 + 1.0);
    }
    s
}

/// Shape queries bound to names (counted active by the analysis, zero rules), then
/// loops over them and an element product.
#[differentiable]
fn squared_entries(a: &Mat2) -> f64 {
    let n = a.rows();
    let (rows, columns) = a.shape();
    let mut s = 0.0;
    for i in 0..n {
        for j in 0..columns {
            s += a[(i, j)] * a[(i, j)] * a[(rows - 1 - i, j)];
        }
    }
    s
}

/// A free function with its rule module, imported with the function.
#[differentiable]
fn outer_form(a: &Mat2, u: &Vec2) -> f64 {
    let m = outer(u, u);
    (a * &m).trace()
}

/// A view type with a hidden lifetime as an argument.
#[differentiable]
fn view_trace(v: View) -> f64 {
    v.trace() * v[(0, 1)]
}

/// An identity method (`view`) and a call of a derived function on the view.
#[differentiable]
fn through_view(a: &Mat2) -> f64 {
    let v = a.view();
    view_trace(v) + a[(1, 0)]
}

#[test]
fn product_and_trace() {
    mochi::testing::test_rule(
        (a(), b()),
        |x| trace_of_product(&x.0, &x.1),
        |x| trace_of_product::rrule(&x.0, &x.1),
    );
    let (da, db) = trace_of_product::gradient(&a(), &b());
    // d tr(AB)/dA = Bᵀ, d tr(AB)/dB = Aᵀ
    assert_eq!(da.m, b().transpose().m);
    assert_eq!(db.m, a().transpose().m);
}

#[test]
fn transpose_and_element_reads() {
    mochi::testing::test_rule(
        (a(), b()),
        |x| weighted_diagonal(&x.0, &x.1),
        |x| weighted_diagonal::rrule(&x.0, &x.1),
    );
}

#[test]
fn shape_queries_without_a_derivative() {
    mochi::testing::test_rule(
        (a(),),
        |x| squared_entries(&x.0),
        |x| squared_entries::rrule(&x.0),
    );
}

#[test]
fn free_function() {
    mochi::testing::test_rule(
        (a(), u()),
        |x| outer_form(&x.0, &x.1),
        |x| outer_form::rrule(&x.0, &x.1),
    );
}

#[test]
fn view_with_a_hidden_lifetime() {
    mochi::testing::test_rule(
        (a(),),
        |x| view_trace(x.0.view()),
        |x| view_trace::rrule(x.0.view()),
    );
    mochi::testing::test_rule(
        (a(),),
        |x| through_view(&x.0),
        |x| through_view::rrule(&x.0),
    );
    let g = through_view::gradient(&a());
    // tr(A)·a₀₁ + a₁₀
    let a = a();
    assert_eq!(g.m, [[a.m[0][1], a.trace()], [1.0, a.m[0][1]]]);
    let _: fn(MatRef) -> f64 = view_trace;
}

/// The shape queries' rules are zero-sized: they cost what the primal costs.
#[test]
fn inactive_rules_are_zero_sized() {
    use mochi::kit::Call;
    let m = a();
    let (n, pb) = Call((&m,)).rows();
    assert_eq!(n, 2);
    assert_eq!(std::mem::size_of_val(&pb), 0);
    let (_, pb) = Call((&m,)).view();
    assert_eq!(std::mem::size_of_val(&pb), 0);
}
