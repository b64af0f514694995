//! `doc-review --dry-run` over the repository's own design docs gives a sensible plan.
//!
//! The docs change as the code does, so this pins properties, not a list: the command
//! succeeds, every doc's front matter parses, every planned doc exists, the day's plan
//! fits the budget, and on a day past every review interval each doc is planned.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// What the dry run printed, checked for the properties every plan has.
struct Plan {
    text: String,
    /// `design-docs/x.md` paths planned today.
    today: Vec<String>,
    /// Paths waiting for a later day.
    waiting: Vec<String>,
    planned_minutes: u32,
}

fn dry_run(today: &str) -> Plan {
    let root = repo_root();
    let out = Command::new(env!("CARGO_BIN_EXE_mochi-bot"))
        .args(["doc-review", "--dry-run", "--today", today, "--repo-root"])
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}{text}");

    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.starts_with(&format!("doc-review plan for {today} (budget 60 min): ")),
        "{text}"
    );
    // No doc has missing or malformed front matter.
    assert!(header.ends_with(", 0 front-matter finding(s)"), "{text}");
    assert!(!text.contains("### Front matter to fix"), "{text}");

    // `- [ ] `path` (N min): …` today, `- `path` (N min): …` waiting.
    let entry = |line: &str, prefix: &str| -> Option<(String, u32)> {
        let rest = line.strip_prefix(prefix)?;
        let (path, rest) = rest.split_once("` (")?;
        let (minutes, _) = rest.split_once(" min)")?;
        Some((path.to_string(), minutes.parse().unwrap()))
    };
    let waiting_at = text
        .find("### Waiting for a later day")
        .unwrap_or(text.len());
    let (today_part, waiting_part) = text.split_at(waiting_at);
    let today_entries: Vec<(String, u32)> = today_part
        .lines()
        .filter_map(|l| entry(l, "- [ ] `"))
        .collect();
    let waiting: Vec<String> = waiting_part
        .lines()
        .filter_map(|l| entry(l, "- `"))
        .map(|(p, _)| p)
        .collect();
    let planned_minutes = today_entries.iter().map(|(_, m)| m).sum();
    let today_list: Vec<String> = today_entries.into_iter().map(|(p, _)| p).collect();

    // The header's counts agree with the lists.
    assert!(
        header.contains(&format!(
            ": {} to review today ({planned_minutes} min), {} waiting,",
            today_list.len(),
            waiting.len()
        )),
        "{text}"
    );
    // The day's list fits the budget, unless one doc alone is longer than it.
    assert!(planned_minutes <= 60 || today_list.len() == 1, "{text}");
    // Every listed doc exists, once, in the docs folder.
    let mut seen = BTreeSet::new();
    for path in today_list.iter().chain(&waiting) {
        assert!(
            path.starts_with("design-docs/") && path.ends_with(".md"),
            "{path}"
        );
        assert!(
            root.join(path).is_file(),
            "{path} is planned but does not exist"
        );
        assert!(seen.insert(path.clone()), "{path} is listed twice:\n{text}");
    }
    // A covered path that matches nothing means the doc describes code that is gone.
    // The bot looks at tracked files only, so a path that exists but is not committed
    // yet (a crate just scaffolded) is not held against the doc here.
    for line in text.lines() {
        let Some((_, vanished)) = line.split_once("covered paths no longer exist: ") else {
            continue;
        };
        let vanished = vanished.split(';').next().unwrap_or_default();
        for entry in vanished.split(", ") {
            let entry = entry.trim().trim_matches('`');
            let literal = entry.split('*').next().unwrap_or_default();
            assert!(
                root.join(literal.trim_end_matches('/')).exists(),
                "`{entry}` matches nothing:\n{text}"
            );
        }
    }
    Plan {
        text,
        today: today_list,
        waiting,
        planned_minutes,
    }
}

/// The docs the bot reviews: every `*.md` directly in `design-docs/` (an index
/// `README.md` without front matter is skipped).
fn docs() -> BTreeSet<String> {
    let root = repo_root();
    std::fs::read_dir(root.join("design-docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| {
            p.file_name().unwrap() != "README.md"
                || std::fs::read_to_string(p).unwrap().starts_with("---")
        })
        .map(|p| format!("design-docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect()
}

#[test]
fn the_plan_for_the_day_after_the_docs_were_written_is_sensible() {
    let plan = dry_run("2026-11-30");
    // Written or reviewed on 2026-11-29, no doc is past its 90-day interval yet.
    assert!(!plan.text.contains("past the interval"), "{}", plan.text);
}

#[test]
fn on_a_day_past_every_review_interval_every_doc_is_planned() {
    let plan = dry_run("2100-01-02");
    let planned: BTreeSet<String> = plan.today.iter().chain(&plan.waiting).cloned().collect();
    assert_eq!(planned, docs(), "{}", plan.text);
    assert!(plan.planned_minutes > 0, "{}", plan.text);
}
