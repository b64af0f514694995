//! The third table of the main job: second-order derivatives. For Rosenbrock at
//! n = 100 and three of the 13 cases written over `f64` (`_sum_1000`, `_sum_sin_1000`,
//! `large_single_block`), the primal, the gradient, a Hessian-vector product, the
//! dense Hessian and a Jacobian-vector product, timed like the 13 cases (interleaved,
//! medians). The ratios are `jvp ÷ primal` (forward mode: the function run on
//! `Dual<1>`), `hvp ÷ gradient` (forward over reverse: the gradient run on `Dual<1>`)
//! and `hessian ÷ primal`. Where JAX can be imported (see `crate::jax`), the same ratios of
//! `jax.jit` of `jax.grad`, `jax.jvp(jax.grad(f))` and `jax.hessian`
//! (`peers/jax_higher.py`) stand beside them.

use crate::cases::functions::{large_single_block, sum_loop, sum_sin_loop};
use crate::cell::{primal_cell, Cell};
use crate::programs::values;
use crate::timing::{self, Budget};
use mochi::prelude::*;

/// Rosenbrock's function over `f64`.
#[differentiable]
pub fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = 1.0 - x[i];
        s += 100.0 * a * a + b * b;
    }
    s
}

/// One row: the four routines of one function at one point.
pub struct Row {
    /// The function and its size.
    pub label: &'static str,
    cells: Vec<Box<dyn Cell>>,
}

/// The cells of a function of one slice.
macro_rules! slice_row {
    ($label:expr, $f:ident, $x:expr) => {{
        let x: Vec<f64> = $x;
        let v: Vec<f64> = values(x.len(), 17, 1.0);
        Row {
            label: $label,
            cells: vec![
                primal_cell(x.clone(), |x| $f(x)),
                primal_cell(x.clone(), |x| $f::gradient(x)[0]),
                primal_cell((x.clone(), v.clone()), |s| $f::hvp(&s.0, &s.1)[0]),
                primal_cell(x.clone(), |x| $f::hessian(x)[[0, 0]]),
                primal_cell((x, v), |s| $f::jvp(&s.0, &s.1).1),
            ],
        }
    }};
}

/// The rows.
pub fn rows() -> Vec<Row> {
    let point = (0.999_f64, 1.0005_f64);
    vec![
        slice_row!("rosenbrock n=100", rosenbrock, values(100, 21, 1.2)),
        slice_row!("_sum_1000", sum_loop, values(1000, 22, 1.0)),
        slice_row!("_sum_sin_1000", sum_sin_loop, values(1000, 23, 1.0)),
        Row {
            label: "large_single_block",
            cells: vec![
                primal_cell(point, |p| large_single_block(p.0, p.1)),
                primal_cell(point, |p| large_single_block::gradient(p.0, p.1).0),
                primal_cell(point, |p| large_single_block::hvp(p.0, p.1, (0.3, -0.7)).0),
                primal_cell(point, |p| large_single_block::hessian(p.0, p.1)[[0, 1]]),
                primal_cell(point, |p| large_single_block::jvp(p.0, p.1, (0.3, -0.7)).1),
            ],
        },
    ]
}

/// One measured row: median primal, gradient, hvp, Hessian and jvp times, ns.
pub struct Measured {
    /// The function and its size.
    pub label: &'static str,
    /// Medians, ns: primal, gradient, hvp, Hessian, jvp.
    pub ns: [f64; 5],
}

/// Times every row.
pub fn measure(budget: Budget) -> Vec<Measured> {
    rows()
        .into_iter()
        .map(|mut r| {
            let samples = timing::sample(&mut r.cells, budget, |_| {});
            Measured {
                label: r.label,
                ns: [0, 1, 2, 3, 4].map(|k| samples[k].median()),
            }
        })
        .collect()
}

/// JAX's times for the same rows, by label (primal, gradient, hvp, Hessian, ns), or
/// why there are none.
pub fn jax(quick: bool) -> Result<std::collections::HashMap<String, [f64; 4]>, String> {
    if !crate::jax::available() {
        return Err(format!(
            "`{} -c \"import jax\"` fails (benches/peers/setup-jax.sh installs it)",
            crate::jax::python().display()
        ));
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("peers")
        .join("jax_higher.py");
    let out = std::env::temp_dir().join(format!("mochi-jax-higher-{}.json", std::process::id()));
    let mut cmd = std::process::Command::new(crate::jax::python());
    cmd.arg(&script)
        .arg("--json")
        .arg(&out)
        .current_dir(script.parent().unwrap_or(std::path::Path::new(".")))
        .env(
            "XLA_FLAGS",
            "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
        )
        .env("OPENBLAS_NUM_THREADS", "1");
    if quick {
        cmd.arg("--quick");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", crate::jax::python().display()))?;
    if !status.success() {
        return Err(format!("{} failed ({status})", script.display()));
    }
    let text =
        std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", out.display()))?;
    let rows = v["rows"]
        .as_object()
        .ok_or_else(|| format!("{}: no \"rows\" object", out.display()))?;
    let mut map = std::collections::HashMap::new();
    for (label, r) in rows {
        let get = |k: &str| {
            r[k].as_f64()
                .ok_or_else(|| format!("{}: {label} has no number {k}", out.display()))
        };
        map.insert(
            label.clone(),
            [
                get("primal_ns")?,
                get("gradient_ns")?,
                get("hvp_ns")?,
                get("hessian_ns")?,
            ],
        );
    }
    Ok(map)
}

/// The table: the four times and the two ratios (and JAX's, when given).
pub fn table(
    rows: &[Measured],
    jax: Option<&std::collections::HashMap<String, [f64; 4]>>,
) -> String {
    let mut s = String::from(
        "second order (jvp ÷ primal: forward mode; hvp ÷ gradient: forward over reverse; hessian ÷ primal)\n",
    );
    s.push_str(&format!(
        "{:<20} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>9} {:>9}",
        "function", "primal", "gradient", "hvp", "hessian", "grad/f", "jvp/f", "hvp/grad", "hess/f"
    ));
    if jax.is_some() {
        s.push_str(&format!(" {:>13} {:>13}", "jax hvp/grad", "jax hess/f"));
    }
    s.push('\n');
    for r in rows {
        let [f, g, hv, h, jv] = r.ns;
        s.push_str(&format!(
            "{:<20} {:>11} {:>11} {:>11} {:>11} {:>9.2} {:>9.2} {:>9.2} {:>9.1}",
            r.label,
            crate::programs::human(f),
            crate::programs::human(g),
            crate::programs::human(hv),
            crate::programs::human(h),
            g / f,
            jv / f,
            hv / g,
            h / f
        ));
        if let Some(j) = jax {
            match j.get(r.label) {
                Some([jf, jg, jhv, jh]) => {
                    s.push_str(&format!(" {:>13.2} {:>13.1}", jhv / jg, jh / jf))
                }
                None => s.push_str(&format!(" {:>13} {:>13}", "missing", "missing")),
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's Hessian-vector product is its dense Hessian times the direction, and
    /// the Hessian is the closed form where there is one.
    #[test]
    fn second_order_rows_agree_with_closed_forms() {
        let x = values(100, 21, 1.2);
        let h = rosenbrock::hessian(&x);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
        assert!(close(h[[0, 0]], 1200.0 * x[0] * x[0] - 400.0 * x[1] + 2.0));
        assert!(close(h[[0, 1]], -400.0 * x[0]));
        let v = values(100, 17, 1.0);
        let hv = rosenbrock::hvp(&x, &v);
        let want = h.dot(&ndarray::arr1(&v));
        for i in 0..100 {
            assert!((hv[i] - want[i]).abs() <= 1e-9 * (1.0 + want[i].abs()));
        }
        // The timed `jvp` is the gradient along the direction.
        let g = rosenbrock::gradient(&x);
        let (_, dy) = rosenbrock::jvp(&x, &v);
        let g_dot_v: f64 = g.iter().zip(&v).map(|(a, b)| a * b).sum();
        assert!(close(dy, g_dot_v));
        // Σ sin xᵢ: H = diag(−sin xᵢ).
        let x = values(1000, 23, 1.0);
        let h = sum_sin_loop::hessian(&x);
        assert!(close(h[[3, 3]], -x[3].sin()));
        assert_eq!(h[[3, 4]], 0.0);
        // x₀·a⁴⁰⁰: ∂²/∂x₀∂a = 400·a³⁹⁹.
        let (x0, a) = (0.999_f64, 1.0005_f64);
        let h = large_single_block::hessian(x0, a);
        let want = 400.0 * a.powi(399);
        assert!((h[[0, 1]] - want).abs() <= 1e-9 * want);
        assert_eq!(h[[0, 0]], 0.0);
    }
}
