//! `doc-review` on a real git repository, planned (golden file) and applied
//! day after day to the fake GitHub API.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use clap::Parser;
use http::Method;
use mochi_bot::cli::{execute, Cli, Env, Report};
use mochi_bot::github::RetryPolicy;
use support::{FakeGitHub, BOT, REPO, TOKEN};

fn git(root: &Path, args: &[&str], date: &str) {
    let status = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.org",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn write(root: &Path, path: &str, text: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn doc(reviewed: &str, covers: &str, minutes: u32, owners: &str, body: &str) -> String {
    format!("---\nlast-reviewed: {reviewed}\ncovers: [{covers}]\nreview-minutes: {minutes}\nowners: [{owners}]\n---\n# Doc\n\n{body}\n")
}

/// A repository whose docs need review for different reasons.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(
        root,
        &["init", "-q", "-b", "main"],
        "2025-12-01T12:00:00+00:00",
    );
    write(root, "src/a/x.rs", "fn a() {}\n");
    write(root, "src/b.rs", "fn b() {}\n");
    write(root, "src/c.rs", "fn c() {}\n");
    write(root, "src/f.rs", "fn f() {}\n");
    write(
        root,
        "design-docs/README.md",
        "# Design docs\n\n- [a](a.md)\n- [b](b.md)\n",
    );
    // Reviewed long ago: far past the 90-day interval.
    write(
        root,
        "design-docs/f.md",
        &doc("2026-01-01", "src/f.rs", 50, "frank", "See [b](b.md)."),
    );
    // Past the interval and one commit since.
    write(
        root,
        "design-docs/a.md",
        &doc(
            "2026-06-01",
            "src/a/**",
            30,
            "alice",
            "Links: [web](https://example.org) [code](../src/a/x.rs).",
        ),
    );
    // Recent, but its code changed twice since.
    write(
        root,
        "design-docs/b.md",
        &doc("2026-11-01", "src/b.rs", 20, "bob", ""),
    );
    // Recent, but a covered path vanished and a link is broken.
    write(
        root,
        "design-docs/c.md",
        &doc(
            "2026-11-20",
            "src/c.rs, src/gone.rs",
            15,
            "carol",
            "See [old](old-design.md).",
        ),
    );
    // Fresh: nothing to do.
    write(
        root,
        "design-docs/d.md",
        &doc("2026-11-25", "src/a/**", 10, "dave", ""),
    );
    // Malformed: a finding, not a crash.
    write(
        root,
        "design-docs/e.md",
        "---\nlast-reviewed: soon\ncovers: [src/c.rs]\nreview-minutes: 5\n---\n# E\n",
    );
    git(root, &["add", "."], "2025-12-01T12:00:00+00:00");
    git(
        root,
        &["commit", "-q", "-m", "initial"],
        "2025-12-01T12:00:00+00:00",
    );
    write(root, "src/a/x.rs", "fn a() { 1; }\n");
    git(
        root,
        &["commit", "-q", "-am", "a changes"],
        "2026-08-01T12:00:00+00:00",
    );
    write(root, "src/b.rs", "fn b() { 1; }\n");
    git(
        root,
        &["commit", "-q", "-am", "b changes"],
        "2026-11-10T12:00:00+00:00",
    );
    write(root, "src/b.rs", "fn b() { 2; }\n");
    git(
        root,
        &["commit", "-q", "-am", "b changes again"],
        "2026-11-11T12:00:00+00:00",
    );
    dir
}

fn env() -> Env {
    Env {
        token: Some(TOKEN.to_string()),
        step_summary: None,
        github_repository: None,
        retry: RetryPolicy {
            attempts: 3,
            initial_backoff: Duration::from_millis(10),
            max_wait: Duration::from_secs(5),
            ..RetryPolicy::default()
        },
    }
}

async fn review(root: &Path, fake: Option<&FakeGitHub>, extra: &[&str]) -> Result<Report, String> {
    let mut args: Vec<String> = vec![
        "mochi-bot".into(),
        "--repo-root".into(),
        root.display().to_string(),
        "doc-review".into(),
    ];
    if let Some(fake) = fake {
        args.extend([
            "--api-url".to_string(),
            fake.url.clone(),
            "--repo".to_string(),
            REPO.to_string(),
        ]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    execute(
        Cli::try_parse_from(args).map_err(|e| e.to_string())?,
        &env(),
    )
    .await
    .map_err(|e| e.to_string())
}

#[tokio::test]
async fn dry_run_plan_matches_golden_file() {
    let repo = repository();
    let out = review(
        repo.path(),
        None,
        &["--dry-run", "--today", "2026-11-29", "--budget", "100"],
    )
    .await
    .unwrap();
    let golden_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/doc-review-plan.md");
    if std::env::var_os("MOCHI_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden_path, &out.stdout).unwrap();
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap();
    assert_eq!(out.stdout, golden);
}

#[tokio::test]
async fn the_tracking_issue_follows_the_plan_day_by_day() {
    let repo = repository();
    let root = repo.path();
    let fake = FakeGitHub::start().await;
    let writes = |fake: &FakeGitHub| {
        fake.writes()
            .into_iter()
            .map(|(m, p)| format!("{m} {p}"))
            .collect::<Vec<_>>()
    };

    // Day 1: the issue is opened with the label, the checklist and the owners.
    let out = review(
        root,
        Some(&fake),
        &["--today", "2026-11-29", "--budget", "100"],
    )
    .await
    .unwrap();
    assert!(out.stdout.contains("opened mochi-ad/mochi#1"), "{out:?}");
    assert_eq!(writes(&fake), vec!["POST /repos/mochi-ad/mochi/issues"]);
    let issue = &fake.issues()[0];
    assert_eq!(issue.labels, vec!["design-doc-review"]);
    assert!(
        issue.body.contains("- [ ] `design-docs/f.md` (50 min)"),
        "{}",
        issue.body
    );
    assert!(
        issue.body.contains("Owners: @alice @carol @frank"),
        "{}",
        issue.body
    );

    // Same day again: nothing written.
    fake.clear_log();
    let out = review(
        root,
        Some(&fake),
        &["--today", "2026-11-29", "--budget", "100"],
    )
    .await
    .unwrap();
    assert!(out.stdout.contains("up to date"), "{out:?}");
    assert!(writes(&fake).is_empty());

    // Next day, same docs: the body is edited, no new issue, no comment.
    fake.clear_log();
    review(
        root,
        Some(&fake),
        &["--today", "2026-11-30", "--budget", "100"],
    )
    .await
    .unwrap();
    assert_eq!(writes(&fake), vec!["PATCH /repos/mochi-ad/mochi/issues/1"]);
    assert!(fake.issues()[0].body.contains("on 2026-11-30"));

    // f and a are reviewed: the list changes and the owners are told once.
    write(
        root,
        "design-docs/f.md",
        &doc("2026-11-30", "src/f.rs", 50, "frank", "See [b](b.md)."),
    );
    write(
        root,
        "design-docs/a.md",
        &doc("2026-11-30", "src/a/**", 30, "alice", ""),
    );
    git(
        root,
        &["commit", "-q", "-am", "review f and a"],
        "2026-11-30T12:00:00+00:00",
    );
    fake.clear_log();
    let out = review(
        root,
        Some(&fake),
        &["--today", "2026-11-30", "--budget", "100"],
    )
    .await
    .unwrap();
    assert!(out.stdout.contains("owners mentioned"), "{out:?}");
    assert_eq!(
        writes(&fake),
        vec![
            "PATCH /repos/mochi-ad/mochi/issues/1",
            "POST /repos/mochi-ad/mochi/issues/1/comments"
        ]
    );
    let comments = fake.comments_on(1);
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].body.contains("@bob") && comments[0].body.contains("@carol"),
        "{}",
        comments[0].body
    );
    assert!(!comments[0].body.contains("@frank"), "{}", comments[0].body);

    // Everything reviewed and fixed: the issue is closed.
    write(
        root,
        "design-docs/b.md",
        &doc("2026-11-30", "src/b.rs", 20, "bob", ""),
    );
    write(
        root,
        "design-docs/c.md",
        &doc("2026-11-30", "src/c.rs", 15, "carol", ""),
    );
    write(
        root,
        "design-docs/e.md",
        &doc("2026-11-30", "src/c.rs", 5, "", ""),
    );
    git(
        root,
        &["commit", "-q", "-am", "review the rest"],
        "2026-11-30T13:00:00+00:00",
    );
    fake.clear_log();
    let out = review(root, Some(&fake), &["--today", "2026-11-30"])
        .await
        .unwrap();
    assert!(out.stdout.contains("closed mochi-ad/mochi#1"), "{out:?}");
    assert_eq!(writes(&fake), vec!["PATCH /repos/mochi-ad/mochi/issues/1"]);
    assert_eq!(fake.issues()[0].state, "closed");

    // And then nothing is posted.
    fake.clear_log();
    let out = review(root, Some(&fake), &["--today", "2026-12-01"])
        .await
        .unwrap();
    assert!(out.stdout.contains("nothing posted"), "{out:?}");
    assert!(writes(&fake).is_empty());
    assert_eq!(fake.issues().len(), 1);
}

#[tokio::test]
async fn duplicate_tracking_issues_are_closed_keeping_the_oldest() {
    let repo = repository();
    let fake = FakeGitHub::start().await;
    let marker = mochi_bot::docs::plan::MARKER;
    fake.add_issue(
        BOT,
        &format!("{marker}\nold"),
        &["design-doc-review"],
        "open",
    );
    fake.add_issue(
        BOT,
        &format!("{marker}\nduplicate"),
        &["design-doc-review"],
        "open",
    );
    fake.add_issue(
        "someone",
        &format!("{marker}\nnot ours"),
        &["design-doc-review"],
        "open",
    );
    review(repo.path(), Some(&fake), &["--today", "2026-11-29"])
        .await
        .unwrap();
    let issues = fake.issues();
    assert_eq!(issues[0].state, "open");
    assert!(issues[0]
        .body
        .contains("Design docs to review on 2026-11-29"));
    assert_eq!(issues[1].state, "closed");
    assert!(issues[1].body.contains("duplicate of #1"));
    assert_eq!(issues[2].state, "open");
    // No new issue: the oldest one is reused.
    assert!(
        fake.writes()
            .iter()
            .all(|(m, p)| !(*m == Method::POST && p.ends_with("/issues"))),
        "{:?}",
        fake.writes()
    );
    assert_eq!(issues.len(), 3);
}

#[tokio::test]
async fn nothing_to_review_posts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(
        root,
        &["init", "-q", "-b", "main"],
        "2026-11-01T12:00:00+00:00",
    );
    write(root, "src/x.rs", "x");
    write(
        root,
        "design-docs/x.md",
        &doc("2026-11-20", "src/x.rs", 10, "xavier", ""),
    );
    git(root, &["add", "."], "2026-11-01T12:00:00+00:00");
    git(
        root,
        &["commit", "-q", "-m", "x"],
        "2026-11-01T12:00:00+00:00",
    );
    let fake = FakeGitHub::start().await;
    let out = review(root, Some(&fake), &["--today", "2026-11-29"])
        .await
        .unwrap();
    assert!(out.stdout.contains("nothing posted"), "{out:?}");
    assert!(fake.writes().is_empty());
    let dry = review(root, None, &["--today", "2026-11-29", "--dry-run"])
        .await
        .unwrap();
    assert!(dry.stdout.contains("Nothing needs review"), "{dry:?}");
}

#[tokio::test]
async fn two_runs_at_the_same_time_leave_one_open_issue() {
    let repo = repository();
    let fake = FakeGitHub::start().await;
    fake.race_next_two_lists();
    let (a, b) = tokio::join!(
        review(repo.path(), Some(&fake), &["--today", "2026-11-29"]),
        review(repo.path(), Some(&fake), &["--today", "2026-11-29"])
    );
    a.unwrap();
    b.unwrap();
    let issues = fake.issues();
    assert_eq!(issues.len(), 2, "the race did not happen");
    let open: Vec<_> = issues.iter().filter(|i| i.state == "open").collect();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].number, 1);
    assert!(open[0].body.contains("Design docs to review on 2026-11-29"));
}

#[tokio::test]
async fn if_due_does_nothing_before_the_configured_time() {
    let dir = repository();
    let root = dir.path();
    // 29 February at 07:00 UTC: not due on any day this test will run but that one.
    write(
        root,
        ".github/mochi-bot.toml",
        "[serve]\nschedule = \"0 7 29 2 *\"\ntime_zone = \"UTC\"\n",
    );
    let fake = FakeGitHub::start().await;
    let out = review(root, Some(&fake), &["--if-due"]).await.unwrap();
    assert!(out.stdout.contains("no occurrence yet today"), "{out:?}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    // Every minute of every day: always due.
    write(
        root,
        ".github/mochi-bot.toml",
        "[serve]\nschedule = \"* * * * *\"\ntime_zone = \"UTC\"\n",
    );
    let out = review(root, Some(&fake), &["--if-due", "--dry-run"])
        .await
        .unwrap();
    assert!(out.stdout.starts_with("doc-review plan for"), "{out:?}");
}
