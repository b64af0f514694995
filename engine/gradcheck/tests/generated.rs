//! The fixed-seed batch of generated programs (see `design-docs/testing-rules.md`):
//! every program's reverse-mode gradient against forward mode and finite differences.

#![allow(
    missing_docs,
    clippy::all,
    unused_parens,
    unused_mut,
    unused_variables,
    unused_assignments,
    dead_code
)]

include!(concat!(env!("OUT_DIR"), "/programs.rs"));

#[test]
fn generated_programs_agree_with_forward_mode_and_finite_differences() {
    let report = mochi_gradcheck::check_all(PROGRAMS, 3);
    println!("{}", report.summary());
    assert!(report.failures.is_empty(), "{}", report.details());
}
