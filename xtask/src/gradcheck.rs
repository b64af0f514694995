//! `cargo xtask gradcheck [--seed S] [--count N] [--batch B]`: the deep run of the
//! generated-program differential test (`engine/gradcheck`).
//!
//! The programs are written in batches of `B` (default 250) into the
//! `mochi-gradcheck` test crate — seeds `S`, `S+1`, … — each batch built once and
//! checked against forward mode and finite differences. Prints one line per batch and a
//! total; fails when any program disagrees, with the program and the numbers.

use std::path::Path;
use std::process::Command;

/// The parsed options.
pub struct Options {
    /// The first batch's seed.
    pub seed: u64,
    /// How many programs in all.
    pub count: u64,
    /// Programs per build.
    pub batch: u64,
}

/// Runs the batches from the workspace at `root`.
pub fn run(root: &Path, o: &Options) -> Result<String, String> {
    let mut done = 0;
    let mut seed = o.seed;
    let mut failed = Vec::new();
    while done < o.count {
        let n = o.batch.min(o.count - done);
        let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(root)
            .args([
                "test",
                "--quiet",
                "-p",
                "mochi-gradcheck",
                "--test",
                "generated",
                "--",
                "--nocapture",
            ])
            .env("MOCHI_GRADCHECK_SEED", seed.to_string())
            .env("MOCHI_GRADCHECK_COUNT", n.to_string())
            .output()
            .map_err(|e| format!("gradcheck: could not run cargo: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.starts_with("gradcheck:"))
            .unwrap_or("gradcheck: no summary (the batch did not build)")
            .to_string();
        println!("seed {seed}: {line}");
        if !out.status.success() {
            failed.push(format!(
                "seed {seed} (MOCHI_GRADCHECK_SEED={seed} MOCHI_GRADCHECK_COUNT={n} cargo test -p mochi-gradcheck --test generated):\n{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        done += n;
        seed += 1;
    }
    if failed.is_empty() {
        Ok(format!(
            "gradcheck: {done} programs in {} batches from seed {}: no disagreement\n",
            seed - o.seed,
            o.seed
        ))
    } else {
        Err(failed.join("\n\n"))
    }
}
