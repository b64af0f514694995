//! `pr-summary` end to end: the real CLI code and octocrab client against the fake GitHub API.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use http::Method;
use mochi_bot::cli::{execute, Cli, Env, Report};
use mochi_bot::github::RetryPolicy;
use mochi_bot::summary::MARKER;
use support::{FakeGitHub, Fault, BOT, REPO, TOKEN};

const HEAD: &str = "1111111111111111111111111111111111111111";
const NEWER: &str = "2222222222222222222222222222222222222222";
const BASE: &str = "0000000000000000000000000000000000000000";

struct Inputs {
    dir: tempfile::TempDir,
}

impl Inputs {
    /// A repository root with head/base lcov files (absolute paths inside it), a diff and a bench report.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let lcov = |hits: &[(u32, u32)]| {
            let mut s = format!("SF:{}/src/lib.rs\n", root.display());
            for (line, count) in hits {
                s.push_str(&format!("DA:{line},{count}\n"));
            }
            s.push_str("end_of_record\n");
            s
        };
        std::fs::write(
            root.join("head.lcov"),
            lcov(&[(1, 1), (2, 0), (3, 1), (4, 0)]),
        )
        .unwrap();
        std::fs::write(
            root.join("head2.lcov"),
            lcov(&[(1, 1), (2, 1), (3, 1), (4, 0)]),
        )
        .unwrap();
        std::fs::write(root.join("base.lcov"), lcov(&[(1, 1), (2, 1)])).unwrap();
        std::fs::write(
            root.join("pr.diff"),
            "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,1 +1,4 @@\n-old\n+1\n+2\n+3\n+4\n",
        )
        .unwrap();
        std::fs::write(
            root.join("bench.json"),
            r#"{"schema_version":1,"columns":["mochi","peer"],"cases":[{"label":"sum_1000","primal_ns":85.0,"ratios":{"mochi":1.7,"peer":null}}]}"#,
        )
        .unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }
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

async fn run(
    fake: &FakeGitHub,
    inputs: &Inputs,
    extra: &[&str],
    env: &Env,
) -> Result<Report, String> {
    let root = inputs.root().display().to_string();
    let mut args: Vec<String> = vec![
        "mochi-bot".into(),
        "--repo-root".into(),
        root,
        "pr-summary".into(),
        "--api-url".into(),
        fake.url.clone(),
    ];
    let has = |flag: &str| extra.contains(&flag);
    if !has("--repo") {
        args.extend(["--repo".to_string(), REPO.to_string()]);
    }
    if !has("--pr") {
        args.extend(["--pr".to_string(), "7".to_string()]);
    }
    if !has("--lcov") {
        args.extend([
            "--lcov".to_string(),
            inputs.path("head.lcov").display().to_string(),
        ]);
    }
    if !has("--no-diff") {
        args.extend([
            "--diff".to_string(),
            inputs.path("pr.diff").display().to_string(),
        ]);
    }
    args.extend(
        extra
            .iter()
            .filter(|a| **a != "--no-diff")
            .map(|a| a.to_string()),
    );
    let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
    execute(cli, env).await.map_err(|e| e.to_string())
}

fn ours(fake: &FakeGitHub, pr: u64) -> Vec<support::FakeComment> {
    fake.comments_on(pr)
        .into_iter()
        .filter(|c| c.login == BOT && c.body.starts_with(MARKER))
        .collect()
}

#[tokio::test]
async fn creates_then_stays_silent_then_updates() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    let bench = inputs.path("bench.json").display().to_string();

    let first = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--bench", &bench],
        &env(),
    )
    .await
    .unwrap();
    assert!(
        first.stdout.starts_with("created summary comment"),
        "{first:?}"
    );
    let comments = ours(&fake, 7);
    assert_eq!(comments.len(), 1);
    let body = &comments[0].body;
    assert!(body.contains(HEAD), "{body}");
    assert!(
        body.contains(
            "**Patch coverage: 50.00%** (2 of 4 changed coverable lines covered, 2 missing)"
        ),
        "{body}"
    );
    assert!(
        body.contains("| `src/lib.rs` | 50.00% (2/4) | 2, 4 |"),
        "{body}"
    );
    assert!(body.contains("No base coverage report"), "{body}");
    assert!(body.contains("### Performance Ratio:"), "{body}");
    assert!(
        body.contains("│ sum_1000 │ 85.0 ns │  1.70 │ missing │"),
        "{body}"
    );
    assert_eq!(fake.writes().len(), 1);

    fake.clear_log();
    let second = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--bench", &bench],
        &env(),
    )
    .await
    .unwrap();
    assert!(second.stdout.contains("up to date"), "{second:?}");
    assert!(fake.writes().is_empty(), "{:?}", fake.writes());

    fake.clear_log();
    let head2 = inputs.path("head2.lcov").display().to_string();
    let base = inputs.path("base.lcov").display().to_string();
    let third = run(
        &fake,
        &inputs,
        &[
            "--head-sha",
            HEAD,
            "--bench",
            &bench,
            "--lcov",
            &head2,
            "--base-lcov",
            &base,
        ],
        &env(),
    )
    .await
    .unwrap();
    assert!(
        third.stdout.starts_with("updated summary comment"),
        "{third:?}"
    );
    assert_eq!(
        fake.writes()
            .iter()
            .map(|(m, _)| m.clone())
            .collect::<Vec<_>>(),
        vec![Method::PATCH]
    );
    let comments = ours(&fake, 7);
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.contains("75.00%"), "{}", comments[0].body);
    assert!(
        comments[0]
            .body
            .contains("-25.00 percentage points against base (100.00%)"),
        "{}",
        comments[0].body
    );
}

#[tokio::test]
async fn an_older_head_never_overwrites_a_newer_summary() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    // The contributor pushes; the run for the new head writes its summary.
    fake.set_head(7, NEWER);
    let newer = run(&fake, &inputs, &["--head-sha", NEWER], &env())
        .await
        .unwrap();
    assert!(newer.stdout.starts_with("updated"), "{newer:?}");
    // A late run for the old head must leave it alone.
    fake.clear_log();
    let late = run(
        &fake,
        &inputs,
        &[
            "--head-sha",
            HEAD,
            "--lcov",
            &inputs.path("head2.lcov").display().to_string(),
        ],
        &env(),
    )
    .await
    .unwrap();
    assert!(late.stdout.contains("left as it is"), "{late:?}");
    assert!(fake.writes().is_empty());
    assert!(ours(&fake, 7)[0].body.contains(NEWER));
}

#[tokio::test]
async fn finds_its_comment_beyond_the_first_hundred() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    for i in 0..230 {
        fake.add_comment(7, "contributor", &format!("comment {i}"));
    }
    let inputs = Inputs::new();
    // Place our summary as comment 231 (on the third page).
    run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    fake.clear_log();
    let again = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    assert!(again.stdout.contains("up to date"), "{again:?}");
    assert!(fake.writes().is_empty(), "{:?}", fake.writes());
    let pages: Vec<String> = fake
        .requests()
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| p.contains("/comments"))
        .collect();
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert!(pages[2].contains("page=3"), "{pages:?}");
}

#[tokio::test]
async fn duplicates_are_removed_keeping_the_oldest() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let oldest = fake.add_comment(7, BOT, &format!("{MARKER}\nold summary"));
    fake.add_comment(7, BOT, &format!("{MARKER}\nduplicate"));
    fake.add_comment(7, BOT, &format!("{MARKER}\nanother duplicate"));
    // Someone quoting the marker is not the bot: never touched.
    let quoted = fake.add_comment(7, "contributor", &format!("{MARKER}\nquoted"));
    let inputs = Inputs::new();
    let out = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    assert!(out.stdout.starts_with("updated"), "{out:?}");
    let remaining = ours(&fake, 7);
    assert_eq!(remaining.len(), 1);
    assert_eq!(remaining[0].id, oldest);
    assert!(remaining[0].body.contains(HEAD));
    assert!(fake.comments_on(7).iter().any(|c| c.id == quoted));
    let deletes = fake
        .writes()
        .into_iter()
        .filter(|(m, _)| *m == Method::DELETE)
        .count();
    assert_eq!(deletes, 2);
}

#[tokio::test]
async fn two_runs_at_the_same_time_leave_one_comment() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    // Both runs list before either creates, so both create.
    fake.race_next_two_lists();
    let env = env();
    let (a, b) = tokio::join!(
        run(&fake, &inputs, &["--head-sha", HEAD], &env),
        run(&fake, &inputs, &["--head-sha", HEAD], &env)
    );
    a.unwrap();
    b.unwrap();
    let posts = fake
        .writes()
        .into_iter()
        .filter(|(m, _)| *m == Method::POST)
        .count();
    assert_eq!(posts, 2, "the race did not happen: {:?}", fake.requests());
    assert_eq!(ours(&fake, 7).len(), 1);
}

#[tokio::test]
async fn a_lost_answer_to_a_create_is_checked_not_repeated() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.fault(Fault::new(Method::POST, "/issues/7/comments", 502).applied());
    let inputs = Inputs::new();
    let out = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    assert!(out.stdout.starts_with("created"), "{out:?}");
    assert_eq!(ours(&fake, 7).len(), 1);
    let posts = fake
        .writes()
        .into_iter()
        .filter(|(m, _)| *m == Method::POST)
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test]
async fn a_create_that_failed_before_applying_is_tried_again_after_checking() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.fault(Fault::new(Method::POST, "/issues/7/comments", 503));
    let inputs = Inputs::new();
    run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    assert_eq!(ours(&fake, 7).len(), 1);
    let methods: Vec<Method> = fake.requests().into_iter().map(|(m, _)| m).collect();
    // list, POST (503), re-list, POST, final list.
    let post_positions: Vec<usize> = methods
        .iter()
        .enumerate()
        .filter(|(_, m)| **m == Method::POST)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(post_positions.len(), 2);
    assert_eq!(methods[post_positions[0] + 1], Method::GET, "{methods:?}");
}

#[tokio::test]
async fn reads_are_retried_on_server_errors() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.fault(Fault::new(Method::GET, "/pulls/7", 502));
    fake.fault(Fault::new(Method::GET, "/issues/7/comments", 500));
    let inputs = Inputs::new();
    run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    assert_eq!(ours(&fake, 7).len(), 1);
}

#[tokio::test]
async fn a_secondary_rate_limit_is_waited_out() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.fault(
        Fault::new(Method::GET, "/issues/7/comments", 403)
            .header("retry-after", "1")
            .message("You have exceeded a secondary rate limit"),
    );
    fake.fault(Fault::new(Method::POST, "/issues/7/comments", 429).header("retry-after", "0"));
    let inputs = Inputs::new();
    let out = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap();
    assert!(out.stdout.starts_with("created"), "{out:?}");
    assert_eq!(ours(&fake, 7).len(), 1);
    let lists = fake
        .requests()
        .into_iter()
        .filter(|(m, p)| *m == Method::GET && p.contains("/comments"))
        .count();
    assert!(lists >= 2, "the rate-limited list was not repeated");
}

#[tokio::test]
async fn a_rate_limit_longer_than_allowed_fails_clearly() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.fault(Fault::new(Method::GET, "/pulls/7", 403).header("retry-after", "3600"));
    let inputs = Inputs::new();
    let err = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap_err();
    assert!(
        err.contains("rate-limited") && err.contains("3600 s") && err.contains(REPO),
        "{err}"
    );
}

#[tokio::test]
async fn error_statuses_give_one_clear_line() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();

    let mut bad_token = env();
    bad_token.token = Some("wrong".into());
    let err = run(&fake, &inputs, &["--head-sha", HEAD], &bad_token)
        .await
        .unwrap_err();
    assert!(
        err.contains("401")
            && err.contains(REPO)
            && err.contains("GET /repos/mochi-ad/mochi/pulls/7")
            && err.contains("GITHUB_TOKEN"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let err = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--repo", "mochi-ad/missing"],
        &env(),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("404")
            && err.contains("mochi-ad/missing")
            && err.contains("check the repository name"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    fake.fault(Fault::new(Method::POST, "/issues/7/comments", 422).message("Validation Failed"));
    let err = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap_err();
    assert!(
        err.contains("422")
            && err.contains("Validation Failed")
            && err.contains("POST /repos/mochi-ad/mochi/issues/7/comments"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(ours(&fake, 7).is_empty());
}

#[tokio::test]
async fn a_read_only_token_writes_the_job_summary_instead() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, true);
    fake.fault(
        Fault::new(Method::POST, "/issues/7/comments", 403)
            .message("Resource not accessible by integration"),
    );
    let inputs = Inputs::new();
    let mut env = env();
    let summary = inputs.path("step-summary.md");
    env.step_summary = Some(summary.clone());
    let out = run(&fake, &inputs, &["--head-sha", HEAD], &env)
        .await
        .unwrap();
    assert!(
        out.stdout.contains("from a fork") && out.stdout.contains("job summary"),
        "{out:?}"
    );
    let written = std::fs::read_to_string(summary).unwrap();
    assert!(
        written.starts_with(MARKER) && written.contains("Patch coverage"),
        "{written}"
    );
    assert!(ours(&fake, 7).is_empty());
}

#[tokio::test]
async fn malformed_input_posts_nothing() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    std::fs::write(
        inputs.path("bad.lcov"),
        "SF:src/lib.rs\nDA:1,1\nDA:two,0\nend_of_record\n",
    )
    .unwrap();
    let bad = inputs.path("bad.lcov").display().to_string();
    let err = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--lcov", &bad],
        &env(),
    )
    .await
    .unwrap_err();
    assert!(err.starts_with(&format!("{bad}:3:")), "{err}");

    std::fs::write(
        inputs.path("bad.json"),
        "{\"schema_version\": 1,\n\"columns\": [\"mochi\"],\n\"cases\": [}\n",
    )
    .unwrap();
    let bad = inputs.path("bad.json").display().to_string();
    let err = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--bench", &bad],
        &env(),
    )
    .await
    .unwrap_err();
    assert!(err.starts_with(&format!("{bad}:3:")), "{err}");

    std::fs::write(
        inputs.path("bad.diff"),
        "--- a/x\n+++ b/x\n@@ -1 +1 @@\n?\n",
    )
    .unwrap();
    let bad = inputs.path("bad.diff").display().to_string();
    let err = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--no-diff", "--diff", &bad],
        &env(),
    )
    .await
    .unwrap_err();
    assert!(err.starts_with(&format!("{bad}:4:")), "{err}");

    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[tokio::test]
async fn an_oversized_summary_is_shortened_not_rejected() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    let cases: Vec<String> = (0..2000)
        .map(|i| format!(r#"{{"label":"case_with_a_long_name_{i:05}","primal_ns":{}.0,"ratios":{{"mochi":1.5}}}}"#, i + 1))
        .collect();
    std::fs::write(
        inputs.path("big.json"),
        format!(
            r#"{{"schema_version":1,"columns":["mochi"],"cases":[{}]}}"#,
            cases.join(",")
        ),
    )
    .unwrap();
    let big = inputs.path("big.json").display().to_string();
    run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--bench", &big],
        &env(),
    )
    .await
    .unwrap();
    let comments = ours(&fake, 7);
    assert_eq!(comments.len(), 1);
    let body = &comments[0].body;
    assert!(body.chars().count() <= 65_536);
    assert!(
        body.contains("This summary was shortened"),
        "{}",
        &body[body.len() - 300..]
    );
    assert_eq!(body.matches("```").count() % 2, 0, "unbalanced code fence");
}

#[tokio::test]
async fn without_a_diff_the_pull_request_files_are_used() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.state.lock().unwrap().pulls.get_mut(&7).unwrap().files = vec![
        serde_json::json!({"filename": "src/lib.rs", "status": "modified", "patch": "@@ -1,1 +1,2 @@\n-x\n+1\n+2"}),
        serde_json::json!({"filename": "logo.png", "status": "added"}),
        serde_json::json!({"filename": "gone.rs", "status": "removed", "patch": "@@ -1 +0,0 @@\n-x"}),
    ];
    let inputs = Inputs::new();
    run(&fake, &inputs, &["--head-sha", HEAD, "--no-diff"], &env())
        .await
        .unwrap();
    let body = &ours(&fake, 7)[0].body;
    assert!(
        body.contains(
            "**Patch coverage: 50.00%** (1 of 2 changed coverable lines covered, 1 missing)"
        ),
        "{body}"
    );
}

#[tokio::test]
async fn dry_run_prints_and_touches_nothing() {
    let fake = FakeGitHub::start().await;
    let inputs = Inputs::new();
    let out = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--dry-run"],
        &Env::default(),
    )
    .await
    .unwrap();
    assert!(out.stdout.starts_with(MARKER), "{out:?}");
    assert!(fake.requests().is_empty());
}

/// An environment whose calls give up after `deadline`.
fn env_with_deadline(deadline: Duration) -> Env {
    let mut env = env();
    env.retry.deadline = deadline;
    env
}

/// A server on 127.0.0.1 that accepts connections and then, per connection,
/// either says nothing or sends a never-ending answer one byte at a time.
/// Its threads end when the test process does.
fn stalling_server(drip: bool) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            if drip {
                std::thread::spawn(move || {
                    use std::io::{Read, Write};
                    // Read the request head, then answer a long body a byte at a time.
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n[";
                    for byte in head.iter().chain(std::iter::repeat(&b' ')) {
                        if socket.write_all(&[*byte]).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                });
            } else {
                held.push(socket);
            }
        }
    });
    url
}

async fn run_against(url: &str, env: &Env) -> Result<Report, String> {
    let inputs = Inputs::new();
    let args = vec![
        "mochi-bot".to_string(),
        "--repo-root".into(),
        inputs.root().display().to_string(),
        "pr-summary".into(),
        "--api-url".into(),
        url.to_string(),
        "--repo".into(),
        REPO.into(),
        "--pr".into(),
        "7".into(),
        "--lcov".into(),
        inputs.path("head.lcov").display().to_string(),
        "--diff".into(),
        inputs.path("pr.diff").display().to_string(),
    ];
    let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
    execute(cli, env).await.map_err(|e| e.to_string())
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let url = stalling_server(false);
    let env = env_with_deadline(Duration::from_millis(300));
    let run = run_against(&url, &env);
    let err = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the bot waited far past its deadline")
        .unwrap_err();
    assert!(
        err.contains("timed out after 0.3 s") && err.contains("GET /repos/mochi-ad/mochi/pulls/7"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[tokio::test]
async fn a_server_that_drips_one_byte_at_a_time_times_out() {
    let url = stalling_server(true);
    let env = env_with_deadline(Duration::from_millis(400));
    let run = run_against(&url, &env);
    let err = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the bot waited far past its deadline")
        .unwrap_err();
    assert!(err.contains("timed out"), "{err}");
}

#[tokio::test]
async fn a_rate_limit_that_would_outlast_the_deadline_fails_at_once() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.fault(Fault::new(Method::GET, "/pulls/7", 429).header("retry-after", "3"));
    let inputs = Inputs::new();
    let err = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD],
        &env_with_deadline(Duration::from_secs(1)),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("rate-limited") && err.contains("wait 3 s"),
        "{err}"
    );
}

#[tokio::test]
async fn server_messages_are_quoted_short_and_on_one_line() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    fake.fault(Fault::new(Method::GET, "/pulls/7", 403).message(&"x".repeat(10 << 20)));
    let err = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap_err();
    assert!(err.contains("403"), "{}", &err[..200.min(err.len())]);
    assert!(err.len() < 1_000, "{} bytes", err.len());

    fake.fault(
        Fault::new(Method::POST, "/issues/7/comments", 422)
            .message("Validation Failed\nmochi-bot: all good\r\u{1b}[2K"),
    );
    let err = run(&fake, &inputs, &["--head-sha", HEAD], &env())
        .await
        .unwrap_err();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
    assert!(
        err.contains("Validation Failed\\nmochi-bot: all good"),
        "{err}"
    );
    assert!(ours(&fake, 7).is_empty());
}

#[tokio::test]
async fn a_list_longer_than_the_page_cap_is_an_error_and_posts_nothing() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    for i in 0..230 {
        fake.add_comment(7, "contributor", &format!("comment {i}"));
    }
    let inputs = Inputs::new();
    let mut env = env();
    env.retry.max_pages = 2;
    let err = run(&fake, &inputs, &["--head-sha", HEAD], &env)
        .await
        .unwrap_err();
    assert!(err.contains("more than 2 pages"), "{err}");
    assert!(fake.writes().is_empty(), "{:?}", fake.writes());
}

#[tokio::test]
async fn a_file_name_with_a_newline_from_the_api_is_one_file() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    fake.state.lock().unwrap().pulls.get_mut(&7).unwrap().files = vec![
        serde_json::json!({"filename": "src/lib.rs", "status": "modified", "patch": "@@ -1,1 +1,2 @@\n-x\n+1\n+2"}),
        serde_json::json!({"filename": "docs/a\n+++ b/src/lib.rs`<b>@alice", "status": "added", "patch": "@@ -0,0 +1 @@\n+x"}),
    ];
    let inputs = Inputs::new();
    run(&fake, &inputs, &["--head-sha", HEAD, "--no-diff"], &env())
        .await
        .unwrap();
    let body = &ours(&fake, 7)[0].body;
    assert!(
        body.contains("(1 of 2 changed coverable lines covered, 1 missing)"),
        "{body}"
    );
}

#[tokio::test]
async fn a_hostile_head_sha_is_refused() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    let err = run(&fake, &inputs, &["--head-sha", "abc -->\n@alice"], &env())
        .await
        .unwrap_err();
    assert!(err.contains("not a commit SHA"), "{err}");
    // The same from the API.
    fake.set_head(7, "1234567 --> @alice");
    let err = run(&fake, &inputs, &[], &env()).await.unwrap_err();
    assert!(err.contains("not a commit SHA"), "{err}");
    assert!(fake.writes().is_empty(), "{:?}", fake.writes());
}

#[tokio::test]
async fn inputs_that_cannot_be_right_are_refused_before_any_call() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(7, HEAD, BASE, false);
    let inputs = Inputs::new();
    std::fs::write(inputs.path("empty.diff"), "").unwrap();
    std::fs::write(inputs.path("notes.txt"), "just some notes\n").unwrap();
    std::fs::write(
        inputs.path("elsewhere.lcov"),
        "SF:/other/checkout/src/lib.rs\nDA:1,1\nDA:2,0\nend_of_record\n",
    )
    .unwrap();
    let empty = inputs.path("empty.diff").display().to_string();
    let notes = inputs.path("notes.txt").display().to_string();
    let elsewhere = inputs.path("elsewhere.lcov").display().to_string();
    for (args, expected) in [
        (vec!["--no-diff", "--diff", &empty], "the diff is empty"),
        (vec!["--no-diff", "--diff", &notes], "not a unified diff"),
        (vec!["--lcov", &elsewhere], "under the repository root"),
    ] {
        let mut all = vec!["--head-sha", HEAD];
        all.extend(args.iter().copied());
        let err = run(&fake, &inputs, &all, &env()).await.unwrap_err();
        assert!(err.contains(expected), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[tokio::test]
async fn without_a_number_the_pull_request_is_found_by_its_head() {
    let fake = FakeGitHub::start().await;
    fake.add_pull(5, NEWER, BASE, false);
    fake.add_pull(7, HEAD, BASE, true);
    let inputs = Inputs::new();
    let root = inputs.root().display().to_string();
    let lcov = inputs.path("head.lcov").display().to_string();
    let diff = inputs.path("pr.diff").display().to_string();
    let post = |head: &'static str| {
        let args = [
            "mochi-bot",
            "--repo-root",
            &root,
            "pr-summary",
            "--api-url",
            &fake.url,
            "--repo",
            REPO,
            "--lcov",
            &lcov,
            "--diff",
            &diff,
            "--head-sha",
            head,
        ]
        .map(String::from);
        Cli::try_parse_from(args).unwrap()
    };
    let out = execute(post(HEAD), &env()).await.unwrap();
    assert!(out.stdout.contains(&format!("on {REPO}#7")), "{out:?}");
    assert_eq!(ours(&fake, 7).len(), 1);
    assert!(ours(&fake, 5).is_empty());
    // A head no open pull request has any more: nothing is written.
    fake.clear_log();
    let gone = "3333333333333333333333333333333333333333";
    let out = execute(post(gone), &env()).await.unwrap();
    assert!(out.stdout.contains("nothing posted"), "{out:?}");
    assert!(fake.writes().is_empty(), "{:?}", fake.writes());
}

#[tokio::test]
async fn the_instruction_gate_is_shown_with_the_grown_case_marked() {
    let fake = FakeGitHub::start().await;
    let inputs = Inputs::new();
    let report = |sum_gradient: f64| {
        format!(
            r#"{{"schema_version":1,"cases":[{{"label":"sum_1000","primal_instructions":100,"gradient_instructions":{sum_gradient}}},{{"label":"a`b @alice","primal_instructions":10,"gradient_instructions":20}}]}}"#
        )
    };
    std::fs::write(inputs.path("icount-base.json"), report(300.0)).unwrap();
    std::fs::write(inputs.path("icount-head.json"), report(330.0)).unwrap();
    let head = inputs.path("icount-head.json").display().to_string();
    let base = inputs.path("icount-base.json").display().to_string();
    let out = run(
        &fake,
        &inputs,
        &[
            "--head-sha",
            HEAD,
            "--dry-run",
            "--icount",
            &head,
            "--icount-base",
            &base,
        ],
        &Env::default(),
    )
    .await
    .unwrap();
    let body = out.stdout;
    assert!(
        body.contains("**1 of 2 cases grew past their threshold**"),
        "{body}"
    );
    assert!(
        body.contains("| `sum_1000` | 3.000 | 3.300 | +10.00% ❌ | +5.0% |"),
        "{body}"
    );
    assert!(
        body.contains("| ``a`b @alice`` | 2.000 | 2.000 | +0.00% | +5.0% |"),
        "{body}"
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn wall_clock_runs_are_shown_as_information() {
    let fake = FakeGitHub::start().await;
    let inputs = Inputs::new();
    let dir = inputs.path("wallclock");
    std::fs::create_dir_all(&dir).unwrap();
    let report = |r: f64| {
        format!(
            r#"{{"schema_version":1,"columns":["mochi"],"cases":[{{"label":"sum_1000","primal_ns":85.0,"ratios":{{"mochi":{r}}}}}]}}"#
        )
    };
    for (i, (h, b)) in [
        (2.0, 2.0),
        (2.02, 2.01),
        (1.98, 1.99),
        (2.01, 2.02),
        (1.99, 1.98),
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(dir.join(format!("head-{i:02}.json")), report(*h)).unwrap();
        std::fs::write(dir.join(format!("base-{i:02}.json")), report(*b)).unwrap();
    }
    let wallclock = dir.display().to_string();
    let out = run(
        &fake,
        &inputs,
        &["--head-sha", HEAD, "--dry-run", "--wallclock", &wallclock],
        &Env::default(),
    )
    .await
    .unwrap();
    let body = out.stdout;
    assert!(
        body.contains("#### Wall-clock ratio against base (informational)"),
        "{body}"
    );
    assert!(body.contains("| `sum_1000` | +0.0% | ["), "{body}");
    assert!(body.contains("| no change detected |"), "{body}");
}
