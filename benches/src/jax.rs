//! The optional JAX column: `peers/jax_cases.py`, run when the interpreter can
//! `import jax`, its JSON merged into the report. The interpreter is `MOCHI_PYTHON`,
//! else `target/jax-venv/bin/python` (what `benches/peers/setup-jax.sh` installs), else
//! `python3`.

use crate::cases::Case;
use crate::report::GradientResult;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The script, in this package's source tree.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("peers")
        .join("jax_cases.py")
}

/// The Python interpreter that runs the JAX column.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("MOCHI_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("jax-venv")
        .join("bin")
        .join("python");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("python3")
}

/// Whether the interpreter can import JAX.
pub fn available() -> bool {
    Command::new(python())
        .args(["-c", "import jax"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the script on `cases` (quick: fewer samples) and returns its cells, or why not.
pub fn run(cases: &[Case], quick: bool) -> Result<HashMap<Case, GradientResult>, String> {
    let out = std::env::temp_dir().join(format!("mochi-jax-{}.json", std::process::id()));
    let labels: Vec<&str> = cases.iter().map(|c| c.label()).collect();
    let mut cmd = Command::new(python());
    cmd.arg(script())
        .args([
            "--json",
            &out.to_string_lossy(),
            "--cases",
            &labels.join(","),
        ])
        .env(
            "XLA_FLAGS",
            "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
        )
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("JAX_ENABLE_X64", "1")
        .env("JAX_PLATFORMS", "cpu");
    if quick {
        cmd.arg("--quick");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python().display()))?;
    if !status.success() {
        return Err(format!("{} failed ({status})", script().display()));
    }
    let text =
        std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    parse(&text)
}

/// Parses the script's output: `{"cases": {label: {"primal_ns", "gradient_ns", "spread"}}}`.
pub fn parse(text: &str) -> Result<HashMap<Case, GradientResult>, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("JAX output is not JSON: {e}"))?;
    let cases = v["cases"]
        .as_object()
        .ok_or("JAX output has no `cases` object")?;
    let mut cells = HashMap::new();
    for (label, cell) in cases {
        let case = Case::from_label(label)
            .ok_or_else(|| format!("JAX output has an unknown case `{label}`"))?;
        let num = |k: &str| {
            cell[k]
                .as_f64()
                .ok_or_else(|| format!("JAX case `{label}` has no number `{k}`"))
        };
        cells.insert(
            case,
            GradientResult {
                median_ns: num("gradient_ns")?,
                spread: cell["spread"].as_f64().unwrap_or(f64::NAN),
                samples: cell["samples"].as_u64().unwrap_or(0) as usize,
                bytes: None,
                own_primal_ns: Some(num("primal_ns")?),
            },
        );
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_script_output() {
        let cells = parse(r#"{"cases": {"gp_lml": {"primal_ns": 2e5, "gradient_ns": 7e5, "spread": 0.1, "samples": 30}}}"#).unwrap();
        let g = &cells[&Case::GpLml];
        assert_eq!(
            (g.median_ns, g.own_primal_ns, g.samples),
            (7e5, Some(2e5), 30)
        );
        assert!(
            parse(r#"{"cases": {"gp": {"primal_ns": 1, "gradient_ns": 2}}}"#)
                .unwrap_err()
                .contains("`gp`")
        );
        assert!(parse(r#"{"cases": {"gp_lml": {"primal_ns": 1}}}"#)
            .unwrap_err()
            .contains("gradient_ns"));
    }
}
