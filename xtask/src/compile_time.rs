//! `cargo xtask compile-time [--count N] [--seed S] [--runs R]`: the release build time
//! of a crate of `N` generated differentiable functions against the same crate with the
//! attribute (and `derive(Tangent)`) removed.
//!
//! Both crates live under `target/compile-time/` and depend on the workspace's `mochi`
//! by path, with one shared target directory: the dependencies are built once (a warm-up
//! build of each), then each run touches one crate's `lib.rs` and times its release
//! build, the two crates in turn. Prints each median and the ratio of the medians (the
//! issue's target: at most 2).

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
    for (name, attribute) in [("with-attribute", true), ("without-attribute", false)] {
        let dir = base.join(name);
        write_crate(root, &dir, name, o, attribute)?;
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
    Ok(format!(
        "compile time, {} generated functions (seed {}), release, median of {} builds:\n  \
         with #[differentiable]:    {with:.2} s\n  \
         without the attribute:     {without:.2} s\n  \
         ratio:                     {:.2}\n",
        o.count,
        o.seed,
        o.runs,
        with / without
    ))
}

fn write_crate(
    root: &Path,
    dir: &Path,
    name: &str,
    o: &Options,
    attribute: bool,
) -> Result<(), String> {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| format!("cannot create {}: {e}", src.display()))?;
    let facade = root.join("engine").join("mochi");
    let manifest = format!(
        "[package]\nname = \"compile-time-{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nmochi = {{ package = \"mochi-ad\", path = {:?} }}\nndarray = \"0.16\"\n\n\
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
