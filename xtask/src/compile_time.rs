//! `cargo xtask compile-time [--count N] [--seed S] [--runs R]`: the release build time
//! of a crate of `N` generated differentiable functions against the same crate with the
//! attribute (and `derive(Tangent)`) removed, and against the first crate built with the
//! facade's `higher-order` feature off (gradients only).
//!
//! The crates live under `target/compile-time/` and depend on the workspace's `mochi`
//! by path, with one shared target directory: the dependencies are built once (a warm-up
//! build of each), then each run touches one crate's `lib.rs` and times its release
//! build, the crates in turn. Prints each median and the ratios of the medians to the
//! attribute-free build (the target: at most 2).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The parsed options.
pub struct Options {
    /// How many functions each crate has.
    pub count: usize,
    /// The generator's seed.
    pub seed: u64,
    /// Timed builds of each crate.
    pub runs: usize,
}

/// Writes the two crates, builds them, and reports.
pub fn run(root: &Path, o: &Options) -> Result<String, String> {
    let base = root.join("target").join("compile-time");
    let mut crates = Vec::new();
    for (name, attribute, higher) in [
        ("with-attribute", true, true),
        ("without-attribute", false, true),
        ("first-order", true, false),
    ] {
        let dir = base.join(name);
        write_crate(root, &dir, name, o, attribute, higher)?;
        crates.push(dir);
    }
    let target = base.join("target");
    // Warm-up: the dependencies, and one build of each crate.
    for dir in &crates {
        build(dir, &target)?;
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); crates.len()];
    for _ in 0..o.runs {
        for (k, dir) in crates.iter().enumerate() {
            touch(&dir.join("src").join("lib.rs"))?;
            let t = Instant::now();
            build(dir, &target)?;
            times[k].push(t.elapsed().as_secs_f64());
        }
    }
    let with = median(&mut times[0]);
    let without = median(&mut times[1]);
    let first = median(&mut times[2]);
    Ok(format!(
        "compile time, {} generated functions (seed {}), release, median of {} builds:\n  \
         with #[differentiable]:    {with:.2} s\n  \
         without the attribute:     {without:.2} s\n  \
         ratio:                     {:.2}\n  \
         gradients only (`higher-order` off): {first:.2} s, ratio {:.2}\n",
        o.count,
        o.seed,
        o.runs,
        with / without,
        first / without
    ))
}

fn write_crate(
    root: &Path,
    dir: &Path,
    name: &str,
    o: &Options,
    attribute: bool,
    higher: bool,
) -> Result<(), String> {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| format!("cannot create {}: {e}", src.display()))?;
    let facade = root.join("engine").join("mochi");
    let features = if higher {
        ""
    } else {
        ", default-features = false, features = [\"ndarray\", \"linalg\", \"stats\", \"nalgebra\"]"
    };
    let manifest = format!(
        "[package]\nname = \"compile-time-{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nmochi = {{ package = \"mochi-ad\", path = {:?}{features} }}\nndarray = \"0.16\"\n\n\
         [workspace]\n",
        facade.display().to_string()
    );
    write(&dir.join("Cargo.toml"), &manifest)?;
    let lib = mochi_gradcheck::generator::generate_plain(o.seed, o.count, attribute);
    write(&src.join("lib.rs"), &lib)
}

fn write(path: &PathBuf, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn touch(path: &Path) -> Result<(), String> {
    let text = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn build(dir: &Path, target: &Path) -> Result<(), String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(dir)
        .args(["build", "--release", "--quiet"])
        .env("CARGO_TARGET_DIR", target)
        .output()
        .map_err(|e| format!("compile-time: could not run cargo: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "compile-time: the build of {} failed:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
