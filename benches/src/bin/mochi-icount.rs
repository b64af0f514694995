//! Instruction counts of each case's primal and mochi gradient, under Valgrind.
//!
//! Wall-clock ratios on a shared runner move by tens of percent; the number of
//! instructions a call executes does not. This binary measures, for each case,
//! the instructions of `reps` primal calls and of `reps` mochi gradient calls
//! (Valgrind's callgrind tool, counting only inside [`measured`], after one warm-up
//! call), and writes their ratio per case as JSON for `mochi-bot icount-check`,
//! which compares a head build against a base build measured in the same job.
//!
//! ```text
//! cargo build --release -p mochi-benches --bin mochi-icount
//! target/release/mochi-icount --json icount.json            # needs valgrind on PATH
//! ```
//!
//! The output (`schema_version` 1):
//!
//! ```json
//! { "schema_version": 1, "tool": "valgrind-3.19.0 callgrind", "reps": 20,
//!   "cases": [ { "label": "sum_1000", "primal_instructions": 3012.0,
//!                "gradient_instructions": 9120.0, "ratio": 3.03 } ] }
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Parser;
use mochi_benches::cases::inputs::{Inputs, Scale};
use mochi_benches::cases::Case;
use mochi_benches::cell::Cell;
use mochi_benches::columns;

/// Counts the instructions of each case's primal and mochi gradient under Valgrind.
#[derive(Debug, Parser)]
#[command(name = "mochi-icount")]
struct Cli {
    /// Write the counts here (JSON, schema 1).
    #[arg(long, value_name = "PATH", required_unless_present = "measure")]
    json: Option<PathBuf>,
    /// Only these cases (labels, comma-separated) [default: all].
    #[arg(long, value_name = "LABELS", value_delimiter = ',')]
    cases: Vec<String>,
    /// Calls counted per part; the count per call is the total divided by this.
    #[arg(long, default_value_t = 20)]
    reps: u64,
    /// Internal: run `reps` calls of CASE's PART (primal or gradient) inside the counted function.
    #[arg(long, num_args = 2, value_names = ["CASE", "PART"], hide = true)]
    measure: Option<Vec<String>>,
}

/// The function whose instructions callgrind counts (`--toggle-collect`); never
/// inlined, so that its symbol exists.
#[inline(never)]
fn mochi_icount_measured(cell: &mut dyn Cell, reps: u64) -> f64 {
    cell.run(reps)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.measure {
        Some(what) => measure(&what[0], &what[1], cli.reps),
        None => drive(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mochi-icount: {e}");
            ExitCode::from(2)
        }
    }
}

/// The child: build the cell, warm it once, run it `reps` times in the counted function.
fn measure(label: &str, part: &str, reps: u64) -> Result<(), String> {
    let case = Case::from_label(label).ok_or_else(|| format!("unknown case `{label}`"))?;
    let inputs = Inputs::new(Scale::Full);
    let mut cell = match part {
        "primal" => columns::primal(case, &inputs),
        "gradient" => columns::mochi::gradient(case, &inputs),
        other => {
            return Err(format!(
                "unknown part `{other}`; expected primal or gradient"
            ))
        }
    };
    // Warm-up: lazily built state (first-call allocations) is not counted.
    cell.run(1);
    std::hint::black_box(mochi_icount_measured(cell.as_mut(), reps));
    Ok(())
}

fn valgrind_version() -> Result<String, String> {
    let out = Command::new("valgrind")
        .arg("--version")
        .output()
        .map_err(|e| {
            format!("cannot run valgrind ({e}); install it (Debian: apt-get install valgrind)")
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Instructions counted by callgrind for one part of one case.
fn count(exe: &Path, dir: &Path, case: Case, part: &str, reps: u64) -> Result<u64, String> {
    let out_file = dir.join(format!("callgrind.{}.{part}", case.label()));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg("--toggle-collect=*mochi_icount_measured*")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg("--quiet")
        .arg(exe)
        .arg("--measure")
        .arg(case.label())
        .arg(part)
        .arg("--reps")
        .arg(reps.to_string())
        .env("RAYON_NUM_THREADS", "1")
        .status()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    if !status.success() {
        return Err(format!(
            "{case} {part}: valgrind or the measured run failed ({status})"
        ));
    }
    let text = std::fs::read_to_string(&out_file)
        .map_err(|e| format!("cannot read {}: {e}", out_file.display()))?;
    let total = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .ok_or_else(|| format!("{}: no `totals:` line", out_file.display()))?;
    if total == 0 {
        return Err(format!(
            "{case} {part}: callgrind counted no instruction in mochi_icount_measured (was it inlined away?)"
        ));
    }
    Ok(total)
}

/// The driver: every selected case, primal and gradient, each in its own valgrind run.
fn drive(cli: &Cli) -> Result<(), String> {
    let cases: Vec<Case> = if cli.cases.is_empty() {
        Case::ALL.to_vec()
    } else {
        cli.cases
            .iter()
            .map(|l| Case::from_label(l.trim()).ok_or_else(|| format!("unknown case `{l}`")))
            .collect::<Result<_, _>>()?
    };
    if cli.reps == 0 {
        return Err("--reps 0: expected at least one call".to_string());
    }
    let tool = format!("{} callgrind", valgrind_version()?);
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let dir = std::env::temp_dir().join(format!("mochi-icount-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut rows = Vec::new();
    for case in cases {
        let primal = count(&exe, &dir, case, "primal", cli.reps)? as f64 / cli.reps as f64;
        let gradient = count(&exe, &dir, case, "gradient", cli.reps)? as f64 / cli.reps as f64;
        let ratio = gradient / primal;
        eprintln!(
            "{:<24} primal {primal:>14.1}  gradient {gradient:>14.1}  ratio {ratio:.4}",
            case.label()
        );
        rows.push(serde_json::json!({
            "label": case.label(),
            "primal_instructions": primal,
            "gradient_instructions": gradient,
            "ratio": ratio,
        }));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let report = serde_json::json!({
        "schema_version": 1,
        "tool": tool,
        "reps": cli.reps,
        "cases": rows,
    });
    let path = cli.json.as_ref().ok_or("--json PATH is required")?;
    std::fs::write(
        path,
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
    )
    .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
