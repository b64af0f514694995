//! Repository tasks for mochi contributors, run as `cargo xtask <task>` (an alias of
//! `cargo run -p xtask --`, see `.cargo/config.toml`).
//!
//! - `new-rule-crate <name>`: creates `rules/<name>/` (package `mochi-rules-<name>`)
//!   with a worked example rule and its `test_rule` tests, a README, a design-doc stub
//!   `design-docs/rules-<name>.md`, and adds the crate to the workspace members.
//!
//! - `gradcheck [--seed S] [--count N] [--batch B]`: the deep run of the generated-program
//!   differential test (`engine/gradcheck`), `N` programs (default 5000) from seed `S`.
//!
//! Exit codes: 0 success, 2 any error (nothing is written when the name is refused).

mod gradcheck;
mod new_rule_crate;
mod templates;
mod workspace;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask new-rule-crate <name> [--workspace <dir>]

  new-rule-crate <name>   create rules/<name>/ (package mochi-rules-<name>): a worked
                          example rule with its test_rule tests, a README, the design-doc
                          stub design-docs/rules-<name>.md, and a workspace member entry.
                          <name>: lowercase letters, digits, `-` and `_`, starting with a
                          letter, e.g. `special` or `special-fns`.
  --workspace <dir>       the workspace root [default: the nearest ancestor of the
                          current directory whose Cargo.toml has a [workspace] table]

usage: cargo xtask gradcheck [--seed S] [--count N] [--batch B]

  gradcheck               generate N random #[differentiable] programs (default 5000) in
                          batches of B (default 250) from seed S (default 1), and check
                          each gradient against forward mode and finite differences
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(message) => {
            print!("{message}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Parses the command line and runs the task; the text to print on success.
fn run(args: &[String]) -> Result<String, String> {
    let mut words = args.iter();
    match words.next().map(String::as_str) {
        Some("new-rule-crate") => {}
        Some("gradcheck") => {
            let rest: Vec<String> = words.cloned().collect();
            let options = gradcheck::parse(&rest)?;
            return gradcheck::run(&workspace::find_root()?, &options);
        }
        Some("-h" | "--help" | "help") => return Ok(USAGE.to_string()),
        Some(other) => {
            return Err(format!(
                "unknown task `{other}`; the tasks are `new-rule-crate` and `gradcheck`\n\n{USAGE}"
            ))
        }
        None => return Err(format!("no task given\n\n{USAGE}")),
    }
    let mut name = None;
    let mut root = None;
    while let Some(word) = words.next() {
        match word.as_str() {
            "-h" | "--help" => return Ok(USAGE.to_string()),
            "--workspace" => match words.next() {
                Some(dir) => root = Some(PathBuf::from(dir)),
                None => return Err(format!("`--workspace` needs a directory\n\n{USAGE}")),
            },
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option `{flag}`\n\n{USAGE}"))
            }
            _ if name.is_some() => {
                return Err(format!(
                    "one crate name at a time; got `{}` and `{word}`",
                    name.unwrap_or_default()
                ))
            }
            _ => name = Some(word.clone()),
        }
    }
    let Some(name) = name else {
        return Err(format!("`new-rule-crate` needs a crate name\n\n{USAGE}"));
    };
    let root = match root {
        Some(dir) => dir,
        None => workspace::find_root()?,
    };
    // Today in UTC as YYYY-MM-DD, for the design-doc stub's `last-reviewed`.
    let today = chrono::Utc::now().date_naive().to_string();
    let created = new_rule_crate::create(&root, &name, today)?;
    Ok(created.summary())
}
