//! Generates `large_single_block`: 400 dependent multiplies in one straight-line block,
//! written out statement by statement (no loop), as the case defines it, and its adjoint
//! written out by hand for the `hand` column.

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
    // The same block's adjoint written out by hand (the `hand` column): the forward
    // statements keep every intermediate in a local, the reverse statements read them
    // back in reverse, `x̄ = x̄·a` and `ā += x̄·xₖ`.
    src.push_str("\n/// `large_single_block`'s value and gradient, written out by hand: the forward\n/// statements keep every intermediate, the reverse statements add into `(x̄₀, ā)`.\n#[allow(clippy::assign_op_pattern, clippy::too_many_lines)]\npub fn large_single_block_adjoint(x0: f64, a: f64, d: (&mut f64, &mut f64)) -> f64 {\n");
    for k in 1..=STATEMENTS {
        writeln!(src, "    let x{k} = x{} * a;", k - 1).unwrap();
    }
    src.push_str("    let mut xb = 1.0;\n    let mut ab = 0.0;\n");
    for k in (1..=STATEMENTS).rev() {
        writeln!(src, "    ab += xb * x{};\n    xb = xb * a;", k - 1).unwrap();
    }
    writeln!(
        src,
        "    *d.0 += xb;\n    *d.1 += ab;\n    x{STATEMENTS}\n}}"
    )
    .unwrap();
    let out =
        std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("large_single_block.rs");
    std::fs::write(out, src).unwrap();
    println!("cargo::rerun-if-changed=build.rs");
}
