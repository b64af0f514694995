//! `perf-check` through the CLI: exit codes, listings, missing cases and retries.

use std::path::Path;

use clap::{CommandFactory, Parser};
use mochi_bot::cli::{execute, Cli, Env, Report};

fn report(ratios: &[(&str, Option<f64>)]) -> String {
    let cases: Vec<String> = ratios
        .iter()
        .map(|(label, r)| {
            let r = r.map_or("null".to_string(), |r| r.to_string());
            format!(
                r#"{{"label":"{label}","primal_ns":100.0,"ratios":{{"mochi":{r},"peer":2.0}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"schema_version":1,"columns":["mochi","peer"],"cases":[{}]}}"#,
        cases.join(",")
    )
}

const RANGES: &str =
    "[cases.sum]\nlower = 1.0\nupper = 2.0\n\n[cases.dot]\nlower = 1.0\nupper = 3.0\n";

async fn check(root: &Path, extra: &[&str]) -> Result<Report, String> {
    let mut args = vec![
        "mochi-bot".to_string(),
        "--repo-root".to_string(),
        root.display().to_string(),
        "perf-check".to_string(),
        "--bench".to_string(),
        root.join("bench.json").display().to_string(),
        "--ranges".to_string(),
        root.join("ranges.toml").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    execute(
        Cli::try_parse_from(args).map_err(|e| e.to_string())?,
        &Env::default(),
    )
    .await
    .map_err(|e| e.to_string())
}

fn setup(bench: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bench.json"), bench).unwrap();
    std::fs::write(dir.path().join("ranges.toml"), RANGES).unwrap();
    dir
}

#[tokio::test]
async fn inside_every_range_exits_zero() {
    let dir = setup(&report(&[
        ("sum", Some(1.5)),
        ("dot", Some(3.0)),
        ("ungated", Some(99.0)),
    ]));
    let out = check(dir.path(), &[]).await.unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("all 2 gated cases inside their ranges"),
        "{out:?}"
    );
}

#[tokio::test]
async fn outside_a_range_exits_one_listing_each_case() {
    let dir = setup(&report(&[("sum", Some(2.5)), ("dot", Some(0.5))]));
    let out = check(dir.path(), &[]).await.unwrap();
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("2 of 2 cases outside their ranges"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("sum (ratio 2.5, range [1, 2])"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("dot (ratio 0.5, range [1, 3])"),
        "{out:?}"
    );
}

#[tokio::test]
async fn a_missing_or_null_case_is_an_error() {
    let dir = setup(&report(&[("sum", None)]));
    let err = check(dir.path(), &[]).await.unwrap_err();
    assert!(
        err.contains("2 gated case(s) have no `mochi` ratio: dot, sum"),
        "{err}"
    );
}

#[tokio::test]
async fn a_retry_that_recovers_passes() {
    let dir = setup(&report(&[("sum", Some(2.5)), ("dot", Some(2.0))]));
    std::fs::write(
        dir.path().join("good.json"),
        report(&[("sum", Some(1.9)), ("dot", Some(2.0))]),
    )
    .unwrap();
    // The command re-measures only the failing cases, which it is told about.
    let cmd = r#"test "$MOCHI_RETRY_CASES" = "sum" && cp good.json bench.json"#;
    let out = check(dir.path(), &["--retry-cmd", cmd]).await.unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("retry 1/2: re-measuring sum"),
        "{out:?}"
    );
    assert!(
        out.stdout
            .contains("ok       sum: mochi ratio 1.9 inside [1, 2]"),
        "{out:?}"
    );
}

#[tokio::test]
async fn a_regression_that_persists_fails_after_the_retries() {
    let dir = setup(&report(&[("sum", Some(2.5)), ("dot", Some(2.0))]));
    let cmd = "echo again >> retries.log";
    let out = check(dir.path(), &["--retry-cmd", cmd, "--retries", "3"])
        .await
        .unwrap();
    assert_eq!(out.code, 1, "{out:?}");
    let log = std::fs::read_to_string(dir.path().join("retries.log")).unwrap();
    assert_eq!(log.lines().count(), 3);
}

#[tokio::test]
async fn a_failing_retry_command_is_an_error() {
    let dir = setup(&report(&[("sum", Some(2.5)), ("dot", Some(2.0))]));
    let err = check(dir.path(), &["--retry-cmd", "exit 3"])
        .await
        .unwrap_err();
    assert!(err.contains("--retry-cmd `exit 3` failed"), "{err}");
}

#[tokio::test]
async fn malformed_files_name_file_and_line() {
    let dir = setup("{\"schema_version\": 1,\n\"columns\": [\"mochi\"],\n\"cases\": 5}");
    let err = check(dir.path(), &[]).await.unwrap_err();
    assert!(err.contains("bench.json:3:"), "{err}");
    std::fs::write(dir.path().join("bench.json"), report(&[("sum", Some(1.5))])).unwrap();
    std::fs::write(
        dir.path().join("ranges.toml"),
        "[cases.sum]\nlower = 1.0\nupper = oops\n",
    )
    .unwrap();
    let err = check(dir.path(), &[]).await.unwrap_err();
    assert!(err.contains("ranges.toml:3:"), "{err}");
    let err = check(dir.path(), &["--column", "nope"]).await;
    assert!(err.is_err());
}

#[test]
fn every_command_has_help() {
    Cli::command().debug_assert();
    let mut cli = Cli::command();
    for name in ["pr-summary", "perf-check", "doc-review", "serve"] {
        let sub = cli.find_subcommand_mut(name).unwrap();
        let help = sub.render_help().to_string();
        assert!(help.contains("Usage: "), "{name}: {help}");
        assert!(help.len() > 200, "{name}: {help}");
    }
    let err = Cli::try_parse_from(["mochi-bot", "pr-summary", "--help"]).unwrap_err();
    assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp);
}

#[tokio::test]
async fn an_invalid_config_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".github")).unwrap();
    std::fs::write(
        dir.path().join(".github/mochi-bot.toml"),
        "[doc_review]\nbudget_minutes = 0\n",
    )
    .unwrap();
    let args = [
        "mochi-bot",
        "--repo-root",
        &dir.path().display().to_string(),
        "doc-review",
        "--dry-run",
    ]
    .map(String::from);
    let err = execute(Cli::try_parse_from(args).unwrap(), &Env::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mochi-bot.toml:2: key `doc_review.budget_minutes`"),
        "{err}"
    );
}

#[tokio::test]
async fn retries_on_the_command_line_have_the_config_cap() {
    let dir = setup(&report(&[("sum", Some(1.5)), ("dot", Some(2.0))]));
    let err = check(dir.path(), &["--retries", "11"]).await.unwrap_err();
    assert!(err.contains("11 is not in 0..=10"), "{err}");
    check(dir.path(), &["--retries", "10"]).await.unwrap();
}

#[tokio::test]
async fn an_empty_ranges_file_is_an_error_not_a_pass() {
    let dir = setup(&report(&[("sum", Some(1.5))]));
    std::fs::write(dir.path().join("ranges.toml"), "[cases]\n").unwrap();
    let err = check(dir.path(), &[]).await.unwrap_err();
    assert!(err.contains("no case is gated"), "{err}");
}

#[tokio::test]
async fn a_report_that_says_two_things_about_one_ratio_is_refused() {
    let dir = setup(
        r#"{"schema_version":1,"columns":["mochi"],"cases":[{"label":"sum","primal_ns":1.0,"ratios":{"mochi":9.0,"mochi":1.5}},{"label":"dot","primal_ns":1.0,"ratios":{"mochi":1.5}}]}"#,
    );
    let err = check(dir.path(), &[]).await.unwrap_err();
    assert!(err.contains("`mochi` appears twice"), "{err}");
}

#[tokio::test]
async fn a_missing_case_is_one_line() {
    let dir = setup(&report(&[("sum", Some(1.5))]));
    let err = check(dir.path(), &[]).await.unwrap_err();
    assert!(
        err.contains("1 gated case(s) have no `mochi` ratio: dot"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[tokio::test]
async fn serve_refuses_a_schedule_that_never_occurs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".github")).unwrap();
    std::fs::write(
        dir.path().join(".github/mochi-bot.toml"),
        "[serve]\nschedule = \"0 7 30 2 *\"\n",
    )
    .unwrap();
    let args = [
        "mochi-bot",
        "--repo-root",
        &dir.path().display().to_string(),
        "serve",
        "--repo",
        "o/n",
    ]
    .map(String::from);
    let env = Env::default();
    let run = execute(Cli::try_parse_from(args).unwrap(), &env);
    let err = tokio::time::timeout(std::time::Duration::from_secs(30), run)
        .await
        .expect("serve started on a schedule that never occurs")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("never occurs") && err.contains("serve.schedule"),
        "{err}"
    );
}

fn icount(cases: &[(&str, f64, f64)]) -> String {
    let cases: Vec<String> = cases
        .iter()
        .map(|(l, p, g)| {
            format!(r#"{{"label":"{l}","primal_instructions":{p},"gradient_instructions":{g}}}"#)
        })
        .collect();
    format!(
        r#"{{"schema_version":1,"tool":"test","cases":[{}]}}"#,
        cases.join(",")
    )
}

async fn icount_check(root: &Path, extra: &[&str]) -> Result<Report, String> {
    let mut args = vec![
        "mochi-bot".to_string(),
        "--repo-root".to_string(),
        root.display().to_string(),
        "icount-check".to_string(),
        "--head".to_string(),
        root.join("head.json").display().to_string(),
        "--base".to_string(),
        root.join("base.json").display().to_string(),
        "--ranges".to_string(),
        root.join("ranges.toml").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    execute(
        Cli::try_parse_from(args).map_err(|e| e.to_string())?,
        &Env::default(),
    )
    .await
    .map_err(|e| e.to_string())
}

#[tokio::test]
async fn the_instruction_gate_names_the_case_that_grew() {
    let dir = setup("{}");
    let base = icount(&[("sum", 1000.0, 3000.0), ("dot", 500.0, 1000.0)]);
    std::fs::write(dir.path().join("base.json"), &base).unwrap();
    // The same build: no alarm.
    std::fs::write(dir.path().join("head.json"), &base).unwrap();
    let same = icount_check(dir.path(), &[]).await.unwrap();
    assert_eq!(same.code, 0, "{same:?}");
    // sum's gradient 10% more instructions: sum is named, dot is not.
    std::fs::write(
        dir.path().join("head.json"),
        icount(&[("sum", 1000.0, 3300.0), ("dot", 500.0, 1010.0)]),
    )
    .unwrap();
    let grew = icount_check(dir.path(), &[]).await.unwrap();
    assert_eq!(grew.code, 1, "{grew:?}");
    assert!(
        grew.stdout
            .contains("1 of 2 cases grew past their threshold: sum\n"),
        "{grew:?}"
    );
    // A per-case allowance in the ranges file.
    std::fs::write(
        dir.path().join("ranges.toml"),
        RANGES.replace(
            "upper = 2.0\n",
            "upper = 2.0\nmax_instruction_growth = 0.15\n",
        ),
    )
    .unwrap();
    let allowed = icount_check(dir.path(), &[]).await.unwrap();
    assert_eq!(allowed.code, 0, "{allowed:?}");
    // A gated case the head does not measure is an error.
    std::fs::write(dir.path().join("head.json"), icount(&[("sum", 1.0, 3.0)])).unwrap();
    let err = icount_check(dir.path(), &[]).await.unwrap_err();
    assert!(err.contains("no instruction count: dot"), "{err}");
}

#[test]
fn the_binary_exits_2_with_one_line_on_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("head.lcov"),
        "SF:src/a.rs\nDA:1,1\nend_of_record\n",
    )
    .unwrap();
    std::fs::write(root.join("pr.diff"), "").unwrap();
    // A message from the input that tries to forge a second log line.
    std::fs::write(
        root.join("bad.lcov"),
        "SF:a.rs\nDA:1,x\n::error::forged\nend_of_record\n",
    )
    .unwrap();
    for (lcov, diff, expected) in [
        ("head.lcov", "pr.diff", "the diff is empty"),
        ("bad.lcov", "pr.diff", "bad.lcov:2:"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mochi-bot"))
            .arg("--repo-root")
            .arg(root)
            .args(["pr-summary", "--dry-run", "--head-sha", "abcdef0"])
            .arg("--lcov")
            .arg(root.join(lcov))
            .arg("--diff")
            .arg(root.join(diff))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("mochi-bot: error: ") && stderr.contains(expected),
            "{stderr}"
        );
    }
}

/// A measuring command: `slow`'s ratio is `slow_ratio`, `same`'s 1.5, each with a
/// ±2% jitter that cycles with a per-side counter.
fn fake_bench(dir: &Path, side: &str, slow_ratio: f64) -> String {
    let script = dir.join(format!("{side}.sh"));
    std::fs::write(
        &script,
        format!(
            r#"n=$(cat {side}.count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {side}.count
j=$(awk -v n=$n 'BEGIN {{ printf "%.5f", 1 + 0.01 * ((n * 3) % 5 - 2) }}')
s=$(awk -v j=$j 'BEGIN {{ printf "%.5f", {slow_ratio} * j }}')
m=$(awk -v j=$j 'BEGIN {{ printf "%.5f", 1.5 * j }}')
printf '{{"schema_version":1,"columns":["mochi"],"cases":[{{"label":"slow","primal_ns":100,"ratios":{{"mochi":%s}}}},{{"label":"same","primal_ns":100,"ratios":{{"mochi":%s}}}}]}}' "$s" "$m" > "$MOCHI_BENCH_OUT"
"#
        ),
    )
    .unwrap();
    format!("sh {}", script.display())
}

#[tokio::test]
async fn wall_clock_runs_find_a_confirmed_slowdown_and_no_change_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let head = fake_bench(root, "head", 2.2);
    let base = fake_bench(root, "base", 2.0);
    let out_dir = root.join("wallclock");
    let args = [
        "mochi-bot",
        "--repo-root",
        &root.display().to_string(),
        "wallclock-check",
        "--head-cmd",
        &head,
        "--base-cmd",
        &base,
        "--out",
        &out_dir.display().to_string(),
    ]
    .map(String::from);
    let env = Env::default();
    let report = execute(Cli::try_parse_from(args).unwrap(), &env)
        .await
        .unwrap();
    assert_eq!(report.code, 0, "{report:?}");
    assert!(
        report
            .stdout
            .contains("rerunning the cases found slower: slow\n"),
        "{report:?}"
    );
    assert!(
        report.stdout.contains("slow: +10.0% [")
            && report.stdout.contains("slower (confirmed by a rerun)"),
        "{report:?}"
    );
    assert!(
        report.stdout.contains("same: +0.0% [") && report.stdout.contains("no change detected"),
        "{report:?}"
    );
    // 5 + 5 runs, then 5 + 5 reruns.
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 20);
}
