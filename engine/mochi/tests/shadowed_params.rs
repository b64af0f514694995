//! A parameter bound again at the top of the body (`let x = { .. x .. };`) keeps its
//! derivative whatever the new value is written as: only a value that carries none
//! (`no_grad(x)`, a length) makes the parameter constant. Before 2026-12-03 a block with
//! its own bindings (`{ let t = x; t }`, an accumulating loop) read as constant, and the
//! gradient was zero. Parameters written as patterns (`(a, b): (f64, f64)`) are named and
//! destructured by the body's first statement.

// The forms are written as they are on purpose: they are what is tested.
#![allow(
    clippy::let_and_return,
    clippy::iter_cloned_collect,
    clippy::redundant_slicing,
    clippy::unnecessary_literal_unwrap,
    clippy::manual_clamp,
    clippy::unnecessary_cast,
    clippy::useless_conversion,
    clippy::never_loop,
    clippy::type_complexity,
    clippy::redundant_locals
)]

use mochi::prelude::*;

#[differentiable]
fn a(x: &[f64]) -> f64 {
    let x = {
        let t = x;
        t
    };
    x[0] * x[1]
}
#[differentiable]
fn b(x: &[f64]) -> f64 {
    let x = if x.len() > 5 { &x[1..] } else { x };
    x[0] * x[1]
}
#[differentiable]
fn c(x: &[f64]) -> f64 {
    let x: Vec<f64> = x.iter().copied().collect();
    x[0] * x[1]
}
#[differentiable]
fn d(x: &[f64]) -> f64 {
    let x = x.iter().map(|v| v * 2.0).collect::<Vec<_>>();
    x[0] * x[1]
}
#[differentiable]
fn e(x: &[f64]) -> f64 {
    let x = match x.len() {
        0 => x,
        _ => x,
    };
    x[0] * x[1]
}
#[differentiable]
fn f(x: &[f64]) -> f64 {
    let x = x.to_vec();
    x[0] * x[1]
}
#[differentiable]
fn g(x: &[f64]) -> f64 {
    let x = &x[..];
    x[0] * x[1]
}
#[differentiable]
fn h(x: f64, y: f64) -> f64 {
    let x = {
        let k = 2.0;
        x * k
    };
    x * y
}
#[differentiable]
fn i(x: f64, y: f64) -> f64 {
    let x = {
        let mut acc = 0.0;
        for _ in 0..3 {
            acc += x;
        }
        acc
    };
    x * y
}
#[differentiable]
fn j(x: f64, y: f64) -> f64 {
    let x = (x, 1.0).0;
    x * y
}
#[differentiable]
fn k(x: f64, y: f64) -> f64 {
    let x = [x, y][0];
    x * y
}
#[differentiable]
fn l(x: f64, y: f64) -> f64 {
    let x = Some(x).unwrap();
    x * y
}
#[differentiable]
fn m(x: f64, y: f64) -> f64 {
    let x = {
        let f = |t: f64| t * t;
        f(x)
    };
    x * y
}
#[differentiable]
fn n(x: f64, y: f64) -> f64 {
    let x = x.max(0.0).min(10.0);
    x * y
}
#[differentiable]
fn o(x: f64, y: f64) -> f64 {
    let x = x as f64;
    x * y
}
#[differentiable]
fn p(x: f64, y: f64) -> f64 {
    let x = f64::from(x);
    x * y
}
#[differentiable]
fn q(x: f64, y: f64) -> f64 {
    let x: f64 = x.into();
    x * y
}
#[differentiable]
fn r(x: f64, y: f64) -> f64 {
    let x = -(-x);
    x * y
}
#[differentiable]
fn s(x: f64, y: f64) -> f64 {
    let x = { x };
    x * y
}
#[differentiable]
fn u(x: f64, y: f64) -> f64 {
    let x = loop {
        break x * 2.0;
    };
    x * y
}
#[test]
fn slices_bound_again_keep_their_gradient() {
    let x = [2.0, 3.0];
    assert_eq!(a::gradient(&x), vec![3.0, 2.0]);
    assert_eq!(b::gradient(&x), vec![3.0, 2.0]);
    assert_eq!(c::gradient(&x), vec![3.0, 2.0]);
    assert_eq!(d::gradient(&x), vec![12.0, 8.0]);
    assert_eq!(e::gradient(&x), vec![3.0, 2.0]);
    assert_eq!(f::gradient(&x), vec![3.0, 2.0]);
    assert_eq!(g::gradient(&x), vec![3.0, 2.0]);
}

#[test]
fn floats_bound_again_keep_their_gradient() {
    let cases: [(&str, (f64, f64), (f64, f64)); 13] = [
        ("h", h::gradient(2.0, 3.0), (6.0, 4.0)),
        ("i", i::gradient(2.0, 3.0), (9.0, 6.0)),
        ("j", j::gradient(2.0, 3.0), (3.0, 2.0)),
        ("k", k::gradient(2.0, 3.0), (3.0, 2.0)),
        ("l", l::gradient(2.0, 3.0), (3.0, 2.0)),
        ("m", m::gradient(2.0, 3.0), (12.0, 4.0)),
        ("n", n::gradient(2.0, 3.0), (3.0, 2.0)),
        ("o", o::gradient(2.0, 3.0), (3.0, 2.0)),
        ("p", p::gradient(2.0, 3.0), (3.0, 2.0)),
        ("q", q::gradient(2.0, 3.0), (3.0, 2.0)),
        ("r", r::gradient(2.0, 3.0), (3.0, 2.0)),
        ("s", s::gradient(2.0, 3.0), (3.0, 2.0)),
        ("u", u::gradient(2.0, 3.0), (6.0, 4.0)),
    ];
    for (name, got, want) in cases {
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn a_parameter_bound_to_its_no_grad_is_still_constant() {
    assert_eq!(frozen::gradient(2.0, 3.0), (0.0, 2.0));
}

#[differentiable]
fn frozen(x: f64, y: f64) -> f64 {
    let x = no_grad(x);
    x * y
}

#[differentiable]
fn pair((a, b): (f64, f64)) -> f64 {
    a * b.sin()
}

#[differentiable]
fn corners([lo, hi]: [f64; 2], _: usize) -> f64 {
    hi * hi - lo
}

#[test]
fn parameters_written_as_patterns_are_destructured() {
    let (da, db) = pair::gradient((2.0, 3.0));
    assert_eq!((da, db), (3.0f64.sin(), 2.0 * 3.0f64.cos()));
    let (d, _) = corners::gradient([1.5, -2.0], 7);
    assert_eq!(d, [-1.0, -4.0]);
}
