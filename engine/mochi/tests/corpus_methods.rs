//! `#[differentiable]` on methods: companions named after the method, the receiver's
//! cotangent first; `&mut self` methods that update state; methods calling methods; the
//! methods of a trait's `impl` (the attribute on the block too, the companions in an
//! inherent `impl` beside it), generic over the model.

#![allow(clippy::needless_range_loop)]

use mochi::prelude::*;

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
