//! `#[differentiable]` on methods: companions named after the method, the receiver's
//! cotangent first; `&mut self` methods that update state; methods calling methods.

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
