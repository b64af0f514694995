//! Shared by the corpus tests: one line per checked function.

/// `check!(name, args_tuple, |a| (call arguments…))` checks `name` against its derived
/// rule with `mochi::testing::test_rule` (finite differences, accumulation, shapes,
/// inputs left as the primal leaves them).
#[macro_export]
macro_rules! check {
    // rustfmt may wrap the argument list in a block
    ($name:ident, $args:expr, |$a:ident| { ($($arg:expr),* $(,)?) }) => {
        $crate::check!($name, $args, |$a| ($($arg),*));
    };
    ($name:ident, $args:expr, |$a:ident| ($($arg:expr),* $(,)?)) => {
        #[test]
        fn $name() {
            mochi::testing::test_rule(
                $args,
                |$a| super::$name($($arg),*),
                |$a| super::$name::rrule($($arg),*),
            );
        }
    };
}

/// Checks a Hessian against central differences of the gradient at `x` (step 1e-5,
/// relative tolerance `tol`); `name` labels a failure.
#[allow(dead_code)]
pub fn assert_hessian_matches(
    name: &str,
    grad: impl Fn(&[f64]) -> Vec<f64>,
    h: &ndarray::Array2<f64>,
    x: &[f64],
    tol: f64,
) {
    let step = 1e-5;
    for j in 0..x.len() {
        let (mut up, mut down) = (x.to_vec(), x.to_vec());
        up[j] += step;
        down[j] -= step;
        let (gu, gd) = (grad(&up), grad(&down));
        for i in 0..x.len() {
            let fd = (gu[i] - gd[i]) / (2.0 * step);
            assert!(
                (h[[i, j]] - fd).abs() < tol * (1.0 + fd.abs()),
                "{name}: h[{i},{j}] = {} vs {fd}",
                h[[i, j]]
            );
        }
    }
}

/// One `#[test]` per function `name(x: &[f64]) -> f64`, named as it, in the module the
/// macro is called in (`super::name`): the gradient against central differences, `jvp`
/// against ∇f·v, the Hessian against central differences of the gradient, and `hvp`
/// against H·v.
#[macro_export]
macro_rules! all_orders {
    ($name:ident, $x:expr) => {
        #[test]
        fn $name() {
            let x: Vec<f64> = $x.to_vec();
            let g = super::$name::gradient(&x);
            $crate::common::assert_gradient_matches(super::$name, &g, &x);
            let v: Vec<f64> = (0..x.len()).map(|i| 0.3 + 0.7 * (i as f64).sin()).collect();
            let (y, d) = super::$name::jvp(&x, &v);
            // (The same operations on duals: equal but for rounding where a factorisation
            // runs blocked on floats and as plain loops on duals.)
            let primal = super::$name(&x);
            assert!(
                (y - primal).abs() <= 1e-13 * (1.0 + primal.abs()),
                "jvp's value {y} against the function's {primal}"
            );
            let gv: f64 = g.iter().zip(&v).map(|(a, b)| a * b).sum();
            assert!(
                (d - gv).abs() <= 1e-9 * (1.0 + gv.abs()),
                "jvp {d} against ∇f·v {gv}"
            );
            let hm = super::$name::hessian(&x);
            for j in 0..x.len() {
                let step = 1e-5 * (1.0 + x[j].abs());
                let (mut u, mut dn) = (x.clone(), x.clone());
                u[j] += step;
                dn[j] -= step;
                let (gu, gd) = (super::$name::gradient(&u), super::$name::gradient(&dn));
                for i in 0..x.len() {
                    let fd = (gu[i] - gd[i]) / (2.0 * step);
                    assert!(
                        (hm[[i, j]] - fd).abs() <= 1e-4 * (1.0 + fd.abs()),
                        "H[{i},{j}] = {} against {fd}",
                        hm[[i, j]]
                    );
                }
            }
            let hv = super::$name::hvp(&x, &v);
            for i in 0..x.len() {
                let want: f64 = (0..x.len()).map(|j| hm[[i, j]] * v[j]).sum();
                assert!(
                    (hv[i] - want).abs() <= 1e-8 * (1.0 + want.abs()),
                    "hvp[{i}] {} against H·v {want}",
                    hv[i]
                );
            }
        }
    };
}

/// Central differences, Jacobians and checks with the tolerances of [`all_orders!`], for
/// functions of other signatures.
#[allow(dead_code)]
pub fn fd(f: &dyn Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|j| {
            let h = 1e-6 * (1.0 + x[j].abs());
            let (mut u, mut d) = (x.to_vec(), x.to_vec());
            u[j] += h;
            d[j] -= h;
            (f(&u) - f(&d)) / (2.0 * h)
        })
        .collect()
}
/// `g` against `w` entry by entry, to the absolute tolerance `tol` (for values worked
/// out by hand).
#[allow(dead_code)]
pub fn close_to(name: &str, g: &[f64], w: &[f64], tol: f64) {
    assert_eq!(g.len(), w.len(), "{name}: lengths differ");
    for (k, (a, b)) in g.iter().zip(w).enumerate() {
        assert!((a - b).abs() < tol, "{name}[{k}]: {a} against {b}");
    }
}
/// A `value_and_gradient` pair `(v, g)` at `x` against the function's own value `f(x)`
/// and the gradient `w` worked out by hand, both within `tol`.
/// [`assert_value_and_gradient`] (at 1e-13) with the function's own value checked
/// against one worked out by hand.
#[allow(dead_code)]
pub fn assert_by_hand(
    name: &str,
    vg: (f64, Vec<f64>),
    f: impl Fn(&[f64]) -> f64,
    x: &[f64],
    value: f64,
    dx: &[f64],
) {
    assert!(
        (f(x) - value).abs() < 1e-13,
        "{name}: {} against {value} worked out by hand",
        f(x)
    );
    assert_value_and_gradient(name, vg, f, x, dx, 1e-13);
}
#[allow(dead_code)]
pub fn assert_value_and_gradient(
    name: &str,
    (v, g): (f64, Vec<f64>),
    f: impl Fn(&[f64]) -> f64,
    x: &[f64],
    w: &[f64],
    tol: f64,
) {
    let want = f(x);
    assert!((v - want).abs() < tol, "{name}: value {v} against {want}");
    close_to(name, &g, w, tol);
}
#[allow(dead_code)]
pub fn close(name: &str, g: &[f64], w: &[f64]) {
    assert_eq!(g.len(), w.len(), "{name}: lengths differ");
    for (k, (a, b)) in g.iter().zip(w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * (1.0 + b.abs()),
            "{name}[{k}]: {a} against {b}\n got  {g:?}\n want {w:?}"
        );
    }
}
#[allow(dead_code)]
pub fn fdjac(f: &dyn Fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<Vec<f64>> {
    let m = f(x).len();
    let mut j = vec![vec![0.0; x.len()]; m];
    for c in 0..x.len() {
        let h = 1e-6 * (1.0 + x[c].abs());
        let (mut u, mut d) = (x.to_vec(), x.to_vec());
        u[c] += h;
        d[c] -= h;
        let (fu, fdn) = (f(&u), f(&d));
        for r in 0..m {
            j[r][c] = (fu[r] - fdn[r]) / (2.0 * h);
        }
    }
    j
}
#[allow(dead_code)]
pub fn check_jac(name: &str, j: &ndarray::Array2<f64>, f: &dyn Fn(&[f64]) -> Vec<f64>, x: &[f64]) {
    let w = fdjac(f, x);
    assert_eq!(j.nrows(), w.len(), "{name}: Jacobian rows");
    assert_eq!(j.ncols(), x.len(), "{name}: Jacobian columns");
    for r in 0..w.len() {
        for c in 0..x.len() {
            assert!(
                (j[[r, c]] - w[r][c]).abs() <= 1e-5 * (1.0 + w[r][c].abs()),
                "{name} J[{r},{c}] = {} against {}",
                j[[r, c]],
                w[r][c]
            );
        }
    }
}
#[allow(dead_code)]
pub fn check_jvp(name: &str, j: &ndarray::Array2<f64>, jv: &[f64], v: &[f64]) {
    assert_eq!(jv.len(), j.nrows(), "{name}: jvp length");
    for r in 0..j.nrows() {
        let want: f64 = (0..j.ncols()).map(|c| j[[r, c]] * v[c]).sum();
        assert!(
            (jv[r] - want).abs() <= 1e-9 * (1.0 + want.abs()),
            "{name} jvp[{r}] {} against J·v {want}",
            jv[r]
        );
    }
}

/// Checks a gradient against central differences of `f` at `x` (step `1e-6·(1 + |xⱼ|)`,
/// relative tolerance `1e-5`).
#[allow(dead_code)]
pub fn assert_gradient_matches(f: impl Fn(&[f64]) -> f64, g: &[f64], x: &[f64]) {
    assert_eq!(g.len(), x.len(), "gradient length");
    for j in 0..x.len() {
        let h = 1e-6 * (1.0 + x[j].abs());
        let (mut u, mut d) = (x.to_vec(), x.to_vec());
        u[j] += h;
        d[j] -= h;
        let fd = (f(&u) - f(&d)) / (2.0 * h);
        assert!(
            (fd - g[j]).abs() <= 1e-5 * (1.0 + fd.abs()),
            "gradient[{j}] = {} against {fd}",
            g[j]
        );
    }
}
