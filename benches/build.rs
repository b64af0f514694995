//! Generates `large_single_block`: 400 dependent multiplies in one straight-line block,
//! written out statement by statement (no loop), as the case defines it.

use std::fmt::Write as _;

const STATEMENTS: usize = 400;

fn main() {
    let mut body = String::new();
    for _ in 0..STATEMENTS {
        body.push_str("    x = x * a;\n");
    }
    let mut src = String::new();
    writeln!(
        src,
        "/// `large_single_block`: {STATEMENTS} dependent multiplies `x = x * a` in one basic block."
    )
    .unwrap();
    src.push_str("#[differentiable]\n#[allow(clippy::assign_op_pattern)]\npub fn large_single_block(x0: f64, a: f64) -> f64 {\n    let mut x = x0;\n");
    src.push_str(&body);
    src.push_str("    x\n}\n");
    let out =
        std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("large_single_block.rs");
    std::fs::write(out, src).unwrap();
    println!("cargo::rerun-if-changed=build.rs");
}
