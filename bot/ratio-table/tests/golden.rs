//! The table formatter against committed golden output.
//!
//! To accept a deliberate change of the table's look, run the test with
//! `MOCHI_UPDATE_GOLDEN=1` and review the diff of `tests/golden/table.txt`.

use std::path::Path;

use mochi_ratio_table::{render_table, BenchReport};

#[test]
fn table_matches_golden_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let input = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let report = BenchReport::from_json_str(&input, "tests/golden/report.json").unwrap();
    let table = render_table(&report);
    let golden_path = dir.join("table.txt");
    if std::env::var_os("MOCHI_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden_path, &table).unwrap();
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap();
    assert_eq!(
        table, golden,
        "table changed; see tests/golden.rs for how to accept it"
    );
}

#[test]
fn every_line_has_the_same_width() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let input = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let report = BenchReport::from_json_str(&input, "report.json").unwrap();
    let table = render_table(&report);
    let widths: Vec<usize> = table.lines().map(|l| l.chars().count()).collect();
    assert_eq!(widths.len(), 5 + 4);
    assert!(widths.iter().all(|w| *w == widths[0]), "{table}");
}
