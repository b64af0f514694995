//! The lcov parser on a report written by `cargo llvm-cov --lcov`
//! (`fixtures/llvm-cov-ratio-table.lcov`, the coverage of `mochi-ratio-table`'s
//! own tests, produced in a checkout at /work/main).

use std::path::Path;

use mochi_bot::coverage::diff::ChangedLines;
use mochi_bot::coverage::lcov::Coverage;
use mochi_bot::coverage::patch::PatchCoverage;

fn fixture() -> Coverage {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llvm-cov-ratio-table.lcov");
    Coverage::read(&path, Path::new("/work/main")).unwrap()
}

#[test]
fn reads_a_real_llvm_cov_report() {
    let coverage = fixture();
    // The absolute SF path is made relative to the repository root.
    assert_eq!(
        coverage.files.keys().collect::<Vec<_>>(),
        vec!["bot/ratio-table/src/lib.rs"]
    );
    let file = &coverage.files["bot/ratio-table/src/lib.rs"];
    // 265 distinct DA lines, 25 of them with 0 hits. (llvm-cov's own LF/LH,
    // 276/251, count line regions; the bot counts DA lines for both project
    // and patch coverage so that the two agree.)
    assert_eq!(file.coverable(), 265);
    assert_eq!(file.covered(), 240);
    assert_eq!(coverage.branch_totals(), (0, 0));
    // FN/FNDA/FNF/FNH/BRF/BRH records are ignored without error.
}

#[test]
fn a_different_root_leaves_paths_absolute() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llvm-cov-ratio-table.lcov");
    let coverage = Coverage::read(&path, Path::new("/elsewhere")).unwrap();
    assert!(coverage
        .files
        .contains_key("/work/main/bot/ratio-table/src/lib.rs"));
}

#[test]
fn patch_coverage_against_the_real_report() {
    let coverage = fixture();
    let file = &coverage.files["bot/ratio-table/src/lib.rs"];
    let first_missing = *file.lines.iter().find(|(_, hits)| **hits == 0).unwrap().0;
    let first_covered = *file.lines.iter().find(|(_, hits)| **hits > 0).unwrap().0;
    let (low, high) = (
        first_missing.min(first_covered),
        first_missing.max(first_covered),
    );
    // A diff adding every line from the lower to the higher of the two.
    let count = high - low + 1;
    let mut diff = format!(
        "diff --git a/bot/ratio-table/src/lib.rs b/bot/ratio-table/src/lib.rs\n--- a/bot/ratio-table/src/lib.rs\n+++ b/bot/ratio-table/src/lib.rs\n@@ -{low},0 +{low},{count} @@\n"
    );
    for _ in 0..count {
        diff.push_str("+x\n");
    }
    let changed = ChangedLines::parse(&diff, Path::new("pr.diff")).unwrap();
    let patch = PatchCoverage::compute(&changed, &coverage);
    let expected_coverable = file.lines.range(low..=high).count();
    let expected_covered = file
        .lines
        .range(low..=high)
        .filter(|(_, h)| **h > 0)
        .count();
    assert_eq!(patch.totals.coverable, expected_coverable);
    assert_eq!(patch.totals.covered, expected_covered);
    assert!(patch.files[0].missing.contains(&first_missing));
}
