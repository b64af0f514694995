//! `#[differentiable]` on methods: companions named after the method, the receiver's
//! cotangent first; `&mut self` methods that update state; methods calling methods; the
//! methods of a trait's `impl` (the attribute on the block too, the companions in an
//! inherent `impl` beside it), generic over the model; methods called from a free
//! function on a parameter or a local of the struct's type (`Linear::predict(m, x)`,
//! `Point::dist(&q, &r)` with `r` a struct literal), and by method syntax on values of
//! `Self` in a method (`o.norm()` with `o: &Self`).

#![allow(clippy::needless_range_loop)]

use mochi::prelude::*;
use std::ops::{Add, Mul, Neg, Sub};

mod common;

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Linear {
    w: Vec<f64>,
    b: f64,
}

impl Linear {
    #[differentiable]
    fn predict(&self, x: &[f64]) -> f64 {
        let mut s = self.b;
        for i in 0..x.len() {
            s += self.w[i] * x[i];
        }
        s
    }

    #[differentiable]
    fn loss(&self, x: &[f64], y: f64) -> f64 {
        let e = self.predict(x) - y;
        e * e + 0.1 * self.b * self.b
    }

    /// `self.predict` of two sub-slices of `x` (their cotangents added back into `x̄`).
    #[differentiable]
    fn halves(&self, x: &[f64]) -> f64 {
        let n = self.w.len();
        let a = self.predict(&x[0..n]);
        let b = self.predict(&x[n..2 * n]);
        a * b
    }
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Oscillator {
    pos: f64,
    vel: f64,
}

impl Oscillator {
    #[differentiable]
    fn step(&mut self, k: f64, dt: f64) {
        self.vel -= k * self.pos * dt;
        self.pos += self.vel * dt;
    }

    #[differentiable]
    fn energy_after(&self, k: f64, steps: usize) -> f64 {
        let mut s = self.clone();
        for _ in 0..steps {
            Self::step(&mut s, k, 0.1);
        }
        0.5 * (s.vel * s.vel + k * s.pos * s.pos)
    }
}

fn fd(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

#[test]
fn method_gradients_match_finite_differences() {
    let m = Linear {
        w: vec![0.5, -1.2, 0.3],
        b: 0.2,
    };
    let x = [0.7, 0.1, -0.4];
    let (y, (dm, dx, _)) = m.loss_value_and_gradient(&x, 1.5);
    assert!((y - m.loss(&x, 1.5)).abs() < 1e-12);
    for i in 0..3 {
        let want = fd(
            |v| {
                let mut a = m.clone();
                a.w[i] = v;
                a.loss(&x, 1.5)
            },
            m.w[i],
        );
        assert!(
            (dm.w[i] - want).abs() < 1e-6,
            "dw[{i}] {} vs {want}",
            dm.w[i]
        );
        let want = fd(
            |v| {
                let mut xx = x;
                xx[i] = v;
                m.loss(&xx, 1.5)
            },
            x[i],
        );
        assert!((dx[i] - want).abs() < 1e-6);
    }
    let want_b = fd(
        |v| {
            let mut a = m.clone();
            a.b = v;
            a.loss(&x, 1.5)
        },
        m.b,
    );
    assert!((dm.b - want_b).abs() < 1e-6);
    let (dm2, _, dy) = m.loss_gradient(&x, 1.5);
    assert_eq!(dm2, dm);
    assert!((dy - fd(|v| m.loss(&x, v), 1.5)).abs() < 1e-6);
    let (y2, pb) = m.predict_pullback(&x);
    assert_eq!(y2, m.predict(&x));
    let (dm3, dx3) = pb(1.0);
    assert_eq!(dm3.w, x.to_vec());
    assert_eq!(dx3, m.w);
}

#[test]
fn mut_self_methods_update_state() {
    let o = Oscillator { pos: 1.0, vel: 0.3 };
    let (e, (d_o, dk, _)) = o.energy_after_value_and_gradient(2.0, 20);
    assert!((e - o.energy_after(2.0, 20)).abs() < 1e-12);
    let want_k = fd(|k| o.energy_after(k, 20), 2.0);
    assert!((dk - want_k).abs() < 1e-6, "{dk} vs {want_k}");
    let want_pos = fd(
        |p| {
            let mut a = o.clone();
            a.pos = p;
            a.energy_after(2.0, 20)
        },
        1.0,
    );
    assert!(
        (d_o.pos - want_pos).abs() < 1e-6,
        "{} vs {want_pos}",
        d_o.pos
    );
}

/// A trait with a differentiable loss, implemented by two models.
trait Model {
    fn predict(&self, x: f64) -> f64;
    fn loss(&self, xs: &[f64], ys: &[f64]) -> f64;
    fn name(&self) -> &'static str;
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Affine {
    w: f64,
    b: f64,
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Cubic {
    c: Vec<f64>,
}

#[differentiable]
impl Model for Affine {
    #[differentiable]
    fn predict(&self, x: f64) -> f64 {
        self.w * x + self.b
    }
    #[differentiable]
    fn loss(&self, xs: &[f64], ys: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..xs.len() {
            let e = self.predict(xs[i]) - ys[i];
            s += e * e;
        }
        s / xs.len() as f64
    }
    fn name(&self) -> &'static str {
        "affine"
    }
}

#[differentiable]
impl Model for Cubic {
    #[differentiable(higher_order)]
    fn predict(&self, x: f64) -> f64 {
        self.c.iter().rev().fold(0.0, |acc, c| acc * x + c)
    }
    #[differentiable(higher_order)]
    fn loss(&self, xs: &[f64], ys: &[f64]) -> f64 {
        xs.iter()
            .zip(ys)
            .map(|(x, y)| (self.predict(*x) - y).powi(2))
            .sum::<f64>()
    }
    fn name(&self) -> &'static str {
        "cubic"
    }
}

#[test]
fn trait_impl_methods_have_companions() {
    let (xs, ys) = ([0.5, 1.0, 2.0], [0.7, 1.1, 1.9]);
    let m = Affine { w: 0.5, b: -0.2 };
    let (v, (dm, dxs, _)) = m.loss_value_and_gradient(&xs, &ys);
    assert_eq!(v, m.loss(&xs, &ys));
    assert_eq!(m.name(), "affine");
    let dw = fd(|w| Affine { w, b: -0.2 }.loss(&xs, &ys), 0.5);
    assert!((dm.w - dw).abs() < 1e-7, "{} vs {dw}", dm.w);
    let db = fd(|b| Affine { w: 0.5, b }.loss(&xs, &ys), -0.2);
    assert!((dm.b - db).abs() < 1e-7);
    // ∂/∂x1 = 2·(w·x1 + b - y1)·w / n
    assert!((dxs[1] - 2.0 * (0.5 - 0.2 - 1.1) * 0.5 / 3.0).abs() < 1e-15);

    let c = Cubic {
        c: vec![0.1, -0.4, 0.3],
    };
    let (v, (dc, _, _)) = c.loss_value_and_gradient(&xs, &ys);
    assert_eq!(v, c.loss(&xs, &ys));
    for k in 0..3 {
        let want = fd(
            |t| {
                let mut d = c.clone();
                d.c[k] = t;
                d.loss(&xs, &ys)
            },
            c.c[k],
        );
        assert!((dc.c[k] - want).abs() < 1e-6, "c{k}: {} vs {want}", dc.c[k]);
    }
    // The loss is quadratic in the coefficients: its Hessian is 2·Σ φ(x)φ(x)ᵀ with
    // φ(x) = (1, x, x²).
    let h = c.loss_hessian(&xs, &ys);
    let phi = |x: f64| [1.0, x, x * x];
    for a in 0..3 {
        for b in 0..3 {
            let want: f64 = xs.iter().map(|&x| 2.0 * phi(x)[a] * phi(x)[b]).sum();
            assert!((h[[a, b]] - want).abs() < 1e-12, "({a}, {b})");
        }
    }
}

/// Generic code over the trait calls the plain methods; the companions are the types'.
fn total_loss(models: &[&dyn Model], xs: &[f64], ys: &[f64]) -> f64 {
    models.iter().map(|m| m.loss(xs, ys)).sum()
}

#[test]
fn trait_objects_still_work() {
    let (a, c) = (
        Affine { w: 0.5, b: -0.2 },
        Cubic {
            c: vec![0.1, -0.4, 0.3],
        },
    );
    let (xs, ys) = ([0.5, 1.0], [0.7, 1.1]);
    assert_eq!(
        total_loss(&[&a, &c], &xs, &ys),
        a.loss(&xs, &ys) + c.loss(&xs, &ys)
    );
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Point {
    x: f64,
    y: f64,
}

impl Point {
    #[differentiable]
    fn dist(&self, o: &Point) -> f64 {
        ((self.x - o.x).powi(2) + (self.y - o.y).powi(2)).sqrt()
    }
    #[differentiable]
    fn norm(&self) -> f64 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
    /// Method syntax on other values of `Self`: a parameter and a struct literal.
    #[differentiable]
    fn spread(&self, o: &Self) -> f64 {
        let mid = Self {
            x: 0.5 * (self.x + o.x),
            y: 0.5 * (self.y + o.y),
        };
        o.norm() * mid.dist(self)
    }
}

/// Methods of the user's structs from a free function, by path: on a `&Linear`
/// parameter, on a `Point` by value, on a struct literal and on a clone.
#[differentiable]
fn free_calls(m: &Linear, x: &[f64], p: &Point, q: Point, t: f64) -> f64 {
    let e = Linear::predict(m, x) - t;
    let e2 = Linear::predict(m, x) - t;
    let r = Point { x: p.x * t, y: p.y };
    let s = q.clone();
    e * e2
        + Point::dist(p, &q)
        + Point::norm(p)
        + Point::norm(&r) * Point::dist(&s, &r)
        + Point::norm(&q)
        + Point::spread(p, &q)
}

#[test]
fn methods_called_from_a_free_function() {
    let m = Linear {
        w: vec![0.5, -0.3],
        b: 0.1,
    };
    let x = [1.0, 2.0];
    let (p, q) = (Point { x: 0.3, y: 0.4 }, Point { x: -1.0, y: 0.5 });
    let (y, (dm, dx, dp, dq, dt)) = free_calls::value_and_gradient(&m, &x, &p, q.clone(), 1.5);
    assert_eq!(y, free_calls(&m, &x, &p, q.clone(), 1.5));
    // e = e2 = w·x + b - t: ∂/∂w = 2e·x
    let e = 0.5 - 0.6 + 0.1 - 1.5;
    assert!((dm.w[0] - 2.0 * e * x[0]).abs() < 1e-12);
    assert!((dx[1] - 2.0 * e * m.w[1]).abs() < 1e-12);
    let f = |p: &Point, q: &Point, t: f64| free_calls(&m, &x, p, q.clone(), t);
    let want_t = fd(|t| f(&p, &q, t), 1.5);
    assert!((dt - want_t).abs() < 1e-6, "{dt} vs {want_t}");
    let want_px = fd(|a| f(&Point { x: a, y: 0.4 }, &q, 1.5), 0.3);
    assert!((dp.x - want_px).abs() < 1e-6, "{} vs {want_px}", dp.x);
    let want_qy = fd(|a| f(&p, &Point { x: -1.0, y: a }, 1.5), 0.5);
    assert!((dq.y - want_qy).abs() < 1e-6, "{} vs {want_qy}", dq.y);
}

/// Running statistics with a method named like `Vec`'s (`push`).
#[derive(Clone, Debug, Tangent)]
struct Stats {
    n: usize,
    mean: f64,
    m2: f64,
}

impl Stats {
    #[differentiable]
    fn push(&mut self, v: f64) {
        self.n += 1;
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
    }
    #[differentiable]
    fn var(&self) -> f64 {
        self.m2 / (self.n - 1) as f64
    }
    fn count(&self) -> usize {
        self.n
    }
}

/// Method syntax on locals surely of the user's type: a `mut` struct literal (`s.push(v)`
/// is `Stats::push(&mut s, v)`, not `Vec::push`), a plain method with no derivative
/// (`k.count()`), and in a method a `mut` clone of `self` stepped and read.
#[differentiable]
fn welford(x: &[f64]) -> f64 {
    let mut s = Stats {
        n: 0,
        mean: 0.0,
        m2: 0.0,
    };
    for &v in x {
        s.push(v);
    }
    let k = Stats {
        n: 3,
        mean: 0.0,
        m2: 0.0,
    };
    s.var() * s.mean + s.var() + k.count() as f64
}

impl Linear {
    #[differentiable]
    fn sgd_step(&mut self, x: &[f64], y: f64, lr: f64) {
        let r = self.predict(x) - y;
        for i in 0..self.w.len() {
            self.w[i] -= lr * r * x[i];
        }
        self.b -= lr * r;
    }
    #[differentiable]
    fn loss_after_step(&self, x: &[f64], y: f64, lr: f64) -> f64 {
        let mut m = self.clone();
        m.sgd_step(x, y, lr);
        let r = m.predict(x) - y;
        r * r
    }
}

#[test]
fn method_syntax_on_locals_of_the_users_type() {
    let x = [0.5, -1.0, 2.0, 0.3];
    let (y, g) = welford::value_and_gradient(&x);
    assert_eq!(y, welford(&x));
    for i in 0..4 {
        let want = fd(
            |t| {
                let mut a = x.to_vec();
                a[i] = t;
                welford(&a)
            },
            x[i],
        );
        assert!((g[i] - want).abs() < 1e-6, "{i}: {} vs {want}", g[i]);
    }
    let m = Linear {
        w: vec![0.5, -0.3, 0.2],
        b: 0.1,
    };
    let xs = [1.0, 2.0, -1.0];
    let (v, (dm, _, _, dlr)) = m.loss_after_step_value_and_gradient(&xs, 0.7, 0.1);
    assert_eq!(v, m.loss_after_step(&xs, 0.7, 0.1));
    let want_b = fd(
        |b| {
            let mut n = m.clone();
            n.b = b;
            n.loss_after_step(&xs, 0.7, 0.1)
        },
        0.1,
    );
    assert!((dm.b - want_b).abs() < 1e-7, "{} vs {want_b}", dm.b);
    let want_lr = fd(|lr| m.loss_after_step(&xs, 0.7, lr), 0.1);
    assert!((dlr - want_lr).abs() < 1e-7, "{dlr} vs {want_lr}");
}

#[test]
fn a_method_given_sub_slices() {
    let m = Linear {
        w: vec![0.5, -0.3],
        b: 0.1,
    };
    let x = [0.3, 0.8, -0.5, 1.2];
    let (y, (dm, dx)) = m.halves_value_and_gradient(&x);
    // a = 0.01, b = -0.51: y = ab, w̄ = b·x[..2] + a·x[2..], b̄ = a + b, x̄ = (b·w, a·w).
    assert!((y - 0.01 * -0.51).abs() < 1e-12);
    let want_w = [-0.51 * 0.3 + 0.01 * -0.5, -0.51 * 0.8 + 0.01 * 1.2];
    for (g, w) in dm.w.iter().zip(want_w) {
        assert!((g - w).abs() < 1e-12, "{g} vs {w}");
    }
    assert!((dm.b - (0.01 - 0.51)).abs() < 1e-12);
    let want_x = [-0.51 * 0.5, -0.51 * -0.3, 0.01 * 0.5, 0.01 * -0.3];
    for (g, w) in dx.iter().zip(want_x) {
        assert!((g - w).abs() < 1e-12, "{g} vs {w}");
    }
}

/// An associated function without `self` in an `impl` block marked `#[differentiable]`:
/// its companions are associated functions (`Squash::squash_gradient`), and a method
/// calls it as `Self::squash(..)` or `Squash::squash(..)` (its higher-order companions would be modules, which
/// an `impl` cannot hold; it did not compile before).
#[derive(Clone, Debug, Tangent)]
struct Squash {
    k: f64,
}

#[differentiable]
impl Squash {
    #[differentiable]
    fn squash(v: f64) -> f64 {
        v.tanh() * 0.5 + v
    }
    #[differentiable]
    fn apply(&self, x: f64) -> f64 {
        Self::squash(x * self.k) * x + Squash::squash(x) * self.k
    }
}

#[test]
fn associated_functions_in_a_marked_impl_have_companions() {
    let (y, d) = Squash::squash_value_and_gradient(0.3);
    assert_eq!(y, Squash::squash(0.3));
    let sech2 = 1.0 - 0.3_f64.tanh().powi(2);
    assert!((d - (0.5 * sech2 + 1.0)).abs() < 1e-14, "{d}");
    let m = Squash { k: 2.0 };
    mochi::testing::test_rule(
        (m.clone(), 0.3),
        |a| a.0.apply(a.1),
        |a| Squash::apply_rrule(&a.0, a.1),
    );
}

/// A model's method called on layers kept in a `Vec` field, on a struct field, on a
/// parameter and on a slice's elements, by method syntax and by the type's path with a
/// borrowed place (each "no rule for `forward`/`layer_forward`" before).
#[derive(Clone, Debug, Tangent)]
struct Dense {
    w: Vec<f64>,
    b: f64,
}

impl Dense {
    #[differentiable]
    fn forward(&self, x: &[f64]) -> f64 {
        (self.w[0] * x[0] + self.w[1] * x[1] + self.b).tanh()
    }
}

#[derive(Clone, Debug, Tangent)]
struct Stack {
    layers: Vec<Dense>,
    head: Dense,
}

impl Stack {
    #[differentiable]
    fn score(&self, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..self.layers.len() {
            s += self.layers[k].forward(x) * (k as f64 + 1.0);
        }
        s * self.head.forward(x) + Dense::forward(&self.layers[0], x)
    }
}

#[differentiable]
fn through_layers(ls: &[Dense], l: &Dense, x: &[f64]) -> f64 {
    let mut s = l.forward(x);
    for k in 0..ls.len() {
        s += Dense::forward(&ls[k], x) * ls[k].forward(x);
    }
    s
}

#[test]
fn methods_of_layers_in_fields_and_slices() {
    let a = Dense {
        w: vec![0.5, -0.3],
        b: 0.1,
    };
    let b = Dense {
        w: vec![0.2, 0.7],
        b: -0.2,
    };
    let net = Stack {
        layers: vec![a.clone(), b.clone()],
        head: b.clone(),
    };
    mochi::testing::test_rule(
        (net, vec![0.3, 0.9]),
        |v| v.0.score(&v.1),
        |v| Stack::score_rrule(&v.0, &v.1),
    );
    mochi::testing::test_rule(
        (vec![a.clone(), b.clone()], a, vec![0.3, 0.9]),
        |v| through_layers(&v.0, &v.1, &v.2),
        |v| through_layers::rrule(&v.0, &v.1, &v.2),
    );
}

/// Layers reached through loops and chains: `for l in &self.cells`, `.iter()`,
/// `.iter().fold(x, |h, l| l.apply(h))`, `.iter().map(|l| ..).sum()`, and `&mut self`
/// methods through `iter_mut()`, `&mut v` and `for_each`, on fields, parameters and a
/// local copy (each "no rule for `apply`/`bump`", or "`bump` is not
/// `#[differentiable]`", before).
#[derive(Clone, Debug, Tangent)]
struct Cell {
    w: Vec<f64>,
    s: f64,
}

impl Cell {
    #[differentiable]
    fn apply(&self, h: f64) -> f64 {
        (self.w[0] * h + self.s).tanh()
    }

    #[differentiable]
    fn bump(&mut self, x: f64) {
        self.s += self.w[0] * x;
    }

    #[differentiable]
    fn decay(&mut self, r: f64) {
        for v in self.w.iter_mut() {
            *v *= r;
        }
        self.s *= r;
    }

    #[differentiable]
    fn energy(&self) -> f64 {
        self.s * self.s + self.w[0]
    }
}

#[derive(Clone, Debug, Tangent)]
struct Chain {
    cells: Vec<Cell>,
    scale: f64,
}

impl Chain {
    #[differentiable]
    fn folded(&self, x: f64) -> f64 {
        self.cells.iter().fold(x, |h, l| l.apply(h)) * self.scale
    }

    #[differentiable]
    fn looped(&self, x: f64) -> f64 {
        let mut h = x;
        for l in &self.cells {
            h = l.apply(h);
        }
        for l in self.cells.iter() {
            h += l.energy();
        }
        h + self.cells.iter().map(|l| l.apply(x)).sum::<f64>()
    }

    #[differentiable]
    fn shrunk(&mut self, r: f64) -> f64 {
        for l in self.cells.iter_mut() {
            l.decay(r);
        }
        self.folded(1.0)
    }
}

#[differentiable]
fn chain_loss(c: &Chain, x: f64) -> f64 {
    let y = c.folded(x);
    (y - 0.5).powi(2) + c.looped(x)
}

#[differentiable]
fn shrunk_chain(c: &Chain, r: f64) -> f64 {
    let mut c2 = c.clone();
    c2.shrunk(r) * r
}

#[differentiable]
fn bumped(v: &[Cell], x: f64) -> f64 {
    let mut w = v.to_vec();
    for a in w.iter_mut() {
        a.bump(x);
    }
    for a in &mut w {
        a.bump(x * x);
    }
    for (i, a) in w.iter_mut().enumerate() {
        a.bump(i as f64 + x);
    }
    w.iter_mut().for_each(|a| a.decay(0.9));
    let mut t = 0.0;
    for a in &w {
        t += a.energy();
    }
    t + w.iter().map(|a| a.apply(x)).sum::<f64>()
}

#[differentiable]
#[allow(clippy::ptr_arg)]
fn bumped_in_place(v: &mut Vec<Cell>, x: f64) -> f64 {
    for a in v.iter_mut() {
        a.bump(x);
    }
    v.iter().map(|a| a.energy()).sum()
}

#[test]
fn methods_through_loops_and_chains() {
    let cells = vec![
        Cell {
            w: vec![0.5],
            s: 0.1,
        },
        Cell {
            w: vec![-1.2],
            s: 0.3,
        },
        Cell {
            w: vec![0.8],
            s: -0.4,
        },
    ];
    let c = Chain {
        cells: cells.clone(),
        scale: 1.5,
    };
    mochi::testing::test_rule(
        (c.clone(), 0.3),
        |a| chain_loss(&a.0, a.1),
        |a| chain_loss::rrule(&a.0, a.1),
    );
    mochi::testing::test_rule(
        (c.clone(), 0.9),
        |a| shrunk_chain(&a.0, a.1),
        |a| shrunk_chain::rrule(&a.0, a.1),
    );
    mochi::testing::test_rule(
        (cells.clone(), 0.3),
        |a| bumped(&a.0, a.1),
        |a| bumped::rrule(&a.0, a.1),
    );
    // In place: the cells as the function leaves them, and the gradient by hand
    // (`s ← s + w·x`, energy `s² + w`): ∂/∂s = 2s', ∂/∂w = 2s'·x + 1, ∂/∂x = Σ 2s'·w.
    let mut v = cells.clone();
    let x = 0.3;
    let (y, pb) = bumped_in_place::pullback(&mut v, x);
    let (dv, dx) = pb(1.0);
    let mut want_dx = 0.0;
    for (k, c) in cells.iter().enumerate() {
        let s1 = c.s + c.w[0] * x;
        assert!((v[k].s - s1).abs() < 1e-15);
        assert!((dv[k].s - 2.0 * s1).abs() < 1e-12, "{dv:?}");
        assert!((dv[k].w[0] - (2.0 * s1 * x + 1.0)).abs() < 1e-12, "{dv:?}");
        want_dx += 2.0 * s1 * c.w[0];
    }
    assert!((dx - want_dx).abs() < 1e-12);
    assert!((y - v.iter().map(|c| c.s * c.s + c.w[0]).sum::<f64>()).abs() < 1e-12);
}

/// A vector type whose methods share names with the library's (`dot`, `norm`, `add`,
/// `scale`), called on parameters, on elements and on locals whose type the macro
/// cannot see (`let b = a.scale(s); b.add(a)`): "no rule for `dot`/`norm`/`add`"
/// before. They reach the derived rules through a trait for the rule call on `V3`.
#[derive(Clone, Copy, Debug, PartialEq, Tangent)]
struct V3 {
    x: f64,
    y: f64,
    z: f64,
}

#[differentiable]
impl V3 {
    #[differentiable]
    fn dot(&self, o: &V3) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    #[differentiable]
    fn norm(&self) -> f64 {
        self.dot(self).sqrt()
    }

    #[differentiable]
    fn scale(&self, s: f64) -> V3 {
        V3 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }

    #[differentiable]
    fn add(&self, o: &V3) -> V3 {
        V3 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }

    #[differentiable]
    fn sum(&self, w: &[f64]) -> f64 {
        self.x * w[0] + self.y * w[1] + self.z * w[2]
    }
}

#[differentiable]
fn vector_energy(a: &V3, b: &V3) -> f64 {
    a.dot(b) + a.norm() * b.norm()
}

#[differentiable]
fn vector_chain(ps: &[V3], s: f64, w: &[f64]) -> f64 {
    let mut t = 0.0;
    for k in 0..ps.len() {
        t += ps[k].scale(s).norm();
    }
    let b = ps[0].scale(s);
    let c = b.add(&ps[1]);
    t + ps[0].add(&ps[1]).dot(&ps[0]) + c.norm() + c.sum(w)
}

#[test]
fn methods_named_as_the_library_s() {
    let a = V3 {
        x: 0.3,
        y: -1.2,
        z: 0.8,
    };
    let b = V3 {
        x: 1.0,
        y: 0.5,
        z: -0.4,
    };
    mochi::testing::test_rule(
        (a, b),
        |t| vector_energy(&t.0, &t.1),
        |t| vector_energy::rrule(&t.0, &t.1),
    );
    mochi::testing::test_rule(
        (vec![a, b], 0.7, vec![0.5, -1.0, 2.0]),
        |t| vector_chain(&t.0, t.1, &t.2),
        |t| vector_chain::rrule(&t.0, t.1, &t.2),
    );
    // ∂(a·b)/∂a = b, ∂(|a||b|)/∂a = |b| a/|a|.
    let (da, _) = vector_energy::gradient(&a, &b);
    let (na, nb) = (a.dot(&a).sqrt(), b.dot(&b).sqrt());
    assert!((da.x - (b.x + nb * a.x / na)).abs() < 1e-12, "{da:?}");
}

/// A point built by its associated constructor from a free function (`P2::new(a, b)`,
/// reached through the rule named after the type, `p2_new`), then its methods chained.
#[derive(Clone, Copy, Debug, Tangent)]
struct P2 {
    x: f64,
    y: f64,
}

#[differentiable]
impl P2 {
    #[differentiable]
    fn new(x: f64, y: f64) -> Self {
        P2 { x, y }
    }
    #[differentiable]
    fn from_polar(r: &f64, t: f64) -> P2 {
        P2 {
            x: r * t.cos(),
            y: r * t.sin(),
        }
    }
    #[differentiable]
    fn dot(&self, o: &P2) -> f64 {
        self.x * o.x + self.y * o.y
    }
    #[differentiable]
    fn scale(&self, s: f64) -> P2 {
        P2 {
            x: self.x * s,
            y: self.y * s,
        }
    }
}

#[differentiable]
fn spring_energy(p: &[f64]) -> f64 {
    let a = P2::new(p[0], p[1]);
    let b = P2::from_polar(&p[2], p[3]);
    let d = P2::new(b.x - a.x, b.y - a.y);
    let mid = P2::new(a.x + b.x, a.y + b.y).scale(0.5);
    (d.dot(&d).sqrt() - 1.0).powi(2) + mid.dot(&mid)
}

#[test]
fn associated_constructors_from_a_free_function() {
    let x = [0.4, 1.3, 0.8, 0.3];
    let g = spring_energy::gradient(&x);
    common::assert_gradient_matches(spring_energy, &g, &x);
}

#[differentiable]
impl Add for P2 {
    type Output = P2;
    #[differentiable]
    fn add(self, o: P2) -> P2 {
        P2 {
            x: self.x + o.x,
            y: self.y + o.y,
        }
    }
}

#[differentiable]
impl Sub for P2 {
    type Output = Self;
    #[differentiable]
    fn sub(self, o: Self) -> Self::Output {
        P2 {
            x: self.x - o.x,
            y: self.y - o.y,
        }
    }
}

#[differentiable]
impl Mul<f64> for P2 {
    type Output = P2;
    #[differentiable]
    fn mul(self, s: f64) -> P2 {
        P2 {
            x: self.x * s,
            y: self.y * s,
        }
    }
}

#[differentiable]
impl Neg for P2 {
    type Output = P2;
    #[differentiable]
    fn neg(self) -> P2 {
        P2 {
            x: -self.x,
            y: -self.y,
        }
    }
}

/// The operators of the struct's `impl Add`/`Sub`/`Mul<f64>`/`Neg` blocks (`b - a`,
/// `(a + b) * 0.5`, `-m`): each reaches the method's derived rule.
#[differentiable]
fn spring_by_operators(p: &[f64]) -> f64 {
    let a = P2::new(p[0], p[1]);
    let b = P2::new(p[2], p[3]);
    let d = b - a;
    let mid = (a + b) * 0.5;
    let e = -mid;
    (d.dot(&d).sqrt() - 1.0).powi(2) + mid.dot(&mid) * e.x
}

#[test]
fn operators_of_the_users_struct() {
    let x = [0.4, 1.3, -0.7, 0.2];
    let g = spring_by_operators::gradient(&x);
    common::assert_gradient_matches(spring_by_operators, &g, &x);
}
