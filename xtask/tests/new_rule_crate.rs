//! `cargo xtask new-rule-crate` end to end: into a copy of the workspace, where the new
//! crate must build and pass its tests, and refusing bad names without writing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The real workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Copies `from` to `to` recursively, keeping modification times so that cargo sees
/// the copied crates as unchanged between runs and reuses their builds.
fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() == "target" {
                continue;
            }
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
        let modified = std::fs::metadata(from).unwrap().modified().unwrap();
        std::fs::File::options()
            .write(true)
            .open(to)
            .unwrap()
            .set_modified(modified)
            .unwrap();
    }
}

/// `manifest` with its `members = [ … ]` array replaced by `members`.
fn with_members(manifest: &str, members: &[&str]) -> String {
    let start = manifest.find("members = [").expect("a members array");
    let end = start + manifest[start..].find(']').unwrap() + 1;
    let list: Vec<String> = members.iter().map(|m| format!("    \"{m}\",\n")).collect();
    format!(
        "{}members = [\n{}]{}",
        &manifest[..start],
        list.concat(),
        &manifest[end..]
    )
}

/// The parts of the workspace a rule crate needs: the engine (the core it depends on,
/// and the facade with its macros, which its tests use) and the rule crates (the
/// facade's dependencies), with the members cut down to the core and the scalar crate
/// as the rule crate it is added beside (path dependencies join as members by
/// themselves).
/// The copy lives at a fixed place under the target folder, so its crates keep their
/// paths and cargo reuses what earlier runs compiled.
fn copy_of_workspace() -> PathBuf {
    let root = workspace();
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-rule-crate/workspace");
    if copy.exists() {
        std::fs::remove_dir_all(&copy).unwrap();
    }
    std::fs::create_dir_all(&copy).unwrap();
    for part in ["Cargo.lock", "engine", "rules"] {
        copy_tree(&root.join(part), &copy.join(part));
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = ["engine/core", "rules/scalar"];
    std::fs::write(copy.join("Cargo.toml"), with_members(&manifest, &members)).unwrap();
    copy
}

fn xtask(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Runs cargo in `dir` with a target folder shared between runs, and without the
/// build settings of an outer coverage run (its instrumentation is not wanted here).
fn cargo(dir: &Path, args: &[&str]) -> Output {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-rule-crate/target");
    let mut command = Command::new(env!("CARGO"));
    command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let coverage_or_flags = key.starts_with("CARGO_LLVM_COV")
            || key.ends_with("RUSTFLAGS")
            || key.ends_with("RUSTDOCFLAGS")
            || key.starts_with("RUSTC_WRAPPER")
            || key.starts_with("RUSTC_WORKSPACE_WRAPPER")
            || key == "LLVM_PROFILE_FILE"
            || key == "CARGO_BUILD_TARGET_DIR";
        if coverage_or_flags {
            command.env_remove(key);
        }
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_new_rule_crate_builds_and_passes_its_tests() {
    let copy = copy_of_workspace();
    // Run from a subfolder: the scaffold finds the workspace root itself.
    let out = xtask(
        &copy.join("engine/core"),
        &["new-rule-crate", "special-fns"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("created mochi-rules-special-fns in rules/special-fns/"),
        "{stdout}"
    );

    let manifest = std::fs::read_to_string(copy.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("    \"rules/scalar\",\n    \"rules/special-fns\",\n"),
        "{manifest}"
    );
    let package = std::fs::read_to_string(copy.join("rules/special-fns/Cargo.toml")).unwrap();
    assert!(
        package.contains("name = \"mochi-rules-special-fns\""),
        "{package}"
    );
    let doc = std::fs::read_to_string(copy.join("design-docs/rules-special-fns.md")).unwrap();
    let front: Vec<&str> = doc.lines().take(5).collect();
    assert_eq!(front[0], "---");
    assert!(
        front[1].starts_with("last-reviewed: 20")
            && front[1].len() == "last-reviewed: 2026-11-29".len(),
        "{doc}"
    );
    assert_eq!(
        front[2..],
        [
            "covers: [rules/special-fns/src/**]",
            "review-minutes: 10",
            "---"
        ]
    );

    // The crate's tests pass, and all of them ran.
    let test = cargo(&copy, &["test", "-p", "mochi-rules-special-fns"]);
    let report = format!("{}{}", text(&test.stdout), text(&test.stderr));
    assert!(test.status.success(), "{report}");
    assert!(
        report.contains("test result: ok. 6 passed; 0 failed"),
        "{report}"
    );
    for name in [
        "passes_test_rule",
        "passes_test_rule_in_f64_with_a_jvp_and_in_f32",
        "value_and_derivative_at_zero",
        "neither_overflows_nor_vanishes_far_from_zero",
        "forward_rule_agrees_and_the_pullback_does_not_allocate",
    ] {
        assert!(
            report.contains(&format!("softplus::tests::{name} ... ok")),
            "{name}: {report}"
        );
    }
    // The derived code of `#[differentiable]` (the `mochi` dev-dependency) finds the rule.
    assert!(
        report.contains("softplus::derived::differentiable_code_calls_the_rule ... ok"),
        "{report}"
    );

    // What CI asks of every crate: formatted, and clippy-clean with warnings denied.
    let fmt = cargo(
        &copy,
        &["fmt", "-p", "mochi-rules-special-fns", "--", "--check"],
    );
    assert!(
        fmt.status.success(),
        "{}{}",
        text(&fmt.stdout),
        text(&fmt.stderr)
    );
    let clippy = cargo(
        &copy,
        &[
            "clippy",
            "-p",
            "mochi-rules-special-fns",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    );
    assert!(clippy.status.success(), "{}", text(&clippy.stderr));

    // The name is taken now: a second run is refused and changes nothing.
    let before = snapshot(&copy, &["Cargo.toml", "rules", "design-docs"]);
    let again = xtask(&copy, &["new-rule-crate", "special-fns"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("rules/special-fns already exists"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(
        snapshot(&copy, &["Cargo.toml", "rules", "design-docs"]),
        before
    );
}

/// Every file under `parts` of `root` (recursively) and its contents.
fn snapshot(root: &Path, parts: &[&str]) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(path: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        if path.is_dir() {
            for entry in std::fs::read_dir(path).unwrap() {
                walk(&entry.unwrap().path(), out);
            }
        } else if path.exists() {
            out.insert(path.to_path_buf(), std::fs::read(path).unwrap());
        }
    }
    let mut out = BTreeMap::new();
    for part in parts {
        walk(&root.join(part), &mut out);
    }
    out
}

/// A small workspace with a scalar crate and one third-party rule crate whose package
/// name differs from `mochi-rules-special-fns` only by `_`.
fn small_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\n    \"rules/scalar\",\n    \"rules/sf\",\n]\n",
    )
    .unwrap();
    for (folder, package) in [
        ("scalar", "mochi-rules-scalar"),
        ("sf", "mochi-rules-special_fns"),
    ] {
        std::fs::create_dir_all(root.join("rules").join(folder)).unwrap();
        std::fs::write(
            root.join("rules").join(folder).join("Cargo.toml"),
            format!("[package]\nname = \"{package}\"\n"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(root.join("design-docs")).unwrap();
    std::fs::write(root.join("design-docs/rules-taken.md"), "---\n---\n").unwrap();
    dir
}

#[test]
fn bad_names_are_refused_with_exit_code_2_and_nothing_written() {
    let dir = small_workspace();
    let root = dir.path();
    let before = snapshot(root, &["."]);
    let cases: [(&[&str], &str); 9] = [
        (&["new-rule-crate", ""], "the rule-crate name is empty"),
        (&["new-rule-crate", "Special"], "uppercase letter `S`"),
        (
            &["new-rule-crate", "9lives"],
            "does not start with a letter",
        ),
        (&["new-rule-crate", "a/b"], "contains '/'"),
        (
            &["new-rule-crate", "core"],
            "reserved for mochi's own crates",
        ),
        (
            &["new-rule-crate", "scalar"],
            "reserved for mochi's own crates",
        ),
        (
            &["new-rule-crate", "special-fns"],
            "already defines package `mochi-rules-special_fns`",
        ),
        (
            &["new-rule-crate", "taken"],
            "design-docs/rules-taken.md already exists",
        ),
        (&["new-rule-crate"], "<NAME>"),
    ];
    for (args, why) in cases {
        let out = xtask(root, args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(why),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(snapshot(root, &["."]), before, "{args:?} wrote something");
    }
    let unknown = xtask(root, &["new-crate", "x"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("unrecognized subcommand 'new-crate'"));
}

#[test]
fn a_folder_without_a_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = xtask(dir.path(), &["new-rule-crate", "x", "--workspace", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot read"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
