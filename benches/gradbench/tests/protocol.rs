//! The protocol end to end: transcripts written for this crate (each message line
//! followed by the response it must get) are fed to the built binary through its
//! stdin, and every response is compared field by field.
//!
//! A response line in a transcript lists the fields that must match; `output` numbers
//! are compared to 1e-12 relative (inside arrays and objects too); `error` must be
//! present exactly when the transcript says `"success": false`; `timings` must hold one
//! `"evaluate"` entry per run, at least `min_runs` of them, when the message's input
//! asks for runs.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn run_tool(input: &str) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mochi-gradbench"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tool starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .expect("the tool reads its input");
    let out = child.wait_with_output().expect("the tool exits");
    assert!(
        out.status.success(),
        "the tool exited with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8 output")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn close(expected: &Value, actual: &Value, path: &str) {
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (e.as_f64().unwrap(), a.as_f64().unwrap());
            assert!(
                (e - a).abs() <= 1e-12 * e.abs().max(1.0),
                "{path}: expected {e}, got {a}"
            );
        }
        (Value::Array(e), Value::Array(a)) => {
            assert_eq!(e.len(), a.len(), "{path}: length");
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                close(e, a, &format!("{path}[{i}]"));
            }
        }
        (Value::Object(e), Value::Object(a)) => {
            assert_eq!(
                e.keys().collect::<Vec<_>>(),
                a.keys().collect::<Vec<_>>(),
                "{path}: fields"
            );
            for (key, e) in e {
                close(e, &a[key], &format!("{path}.{key}"));
            }
        }
        _ => assert_eq!(expected, actual, "{path}"),
    }
}

fn check_transcript(name: &str, text: &str) {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len() % 2, 0, "{name}: message/response pairs");
    let messages: Vec<&str> = lines.iter().step_by(2).copied().collect();
    let expected: Vec<Value> = lines
        .iter()
        .skip(1)
        .step_by(2)
        .map(|l| serde_json::from_str(l).expect("transcript responses are JSON"))
        .collect();
    let input = messages.join("\n") + "\n";
    let responses = run_tool(&input);
    assert_eq!(
        responses.len(),
        messages.len(),
        "{name}: one response per message"
    );
    for ((message, want), got) in messages.iter().zip(&expected).zip(&responses) {
        let got: Value = serde_json::from_str(got)
            .unwrap_or_else(|e| panic!("{name}: response is not JSON ({e}): {got}"));
        for (key, value) in want.as_object().expect("responses are objects") {
            match key.as_str() {
                "output" => close(value, &got[key], &format!("{name}: {message}: output")),
                _ => assert_eq!(&got[key], value, "{name}: {message}: field {key}"),
            }
        }
        let failed = want.get("success") == Some(&Value::Bool(false));
        assert_eq!(
            got.get("error").is_some_and(Value::is_string),
            failed,
            "{name}: {message}: an error string exactly on failure, got {got}"
        );
        let message: Value = serde_json::from_str(message).unwrap_or(Value::Null);
        if message["kind"] == "evaluate" && !failed {
            let timings = got["timings"]
                .as_array()
                .expect("an evaluate response has timings");
            let min_runs = message["input"]["min_runs"].as_u64().unwrap_or(1) as usize;
            assert!(
                timings.len() >= min_runs,
                "{name}: at least min_runs timings"
            );
            for t in timings {
                assert_eq!(t["name"], "evaluate");
                assert!(t["nanoseconds"].is_u64());
            }
        }
    }
}

#[test]
fn hello_transcript() {
    check_transcript("hello", include_str!("transcripts/hello.jsonl"));
}

#[test]
fn lse_transcript_honours_min_runs() {
    check_transcript("lse", include_str!("transcripts/lse.jsonl"));
}

/// `ba` at a zero rotation, unit focal length and no distortion, where the Jacobian is
/// worked by hand: `Xcam = X − C + r × (X − C)`, `proj = Xcam₀,₁ / Xcam₂`.
#[test]
fn ba_transcript_gives_the_sparse_jacobian_worked_by_hand() {
    check_transcript("ba", include_str!("transcripts/ba.jsonl"));
}

/// `particle` and `saddle` reach the constants GradBench's evals check (`fr` and
/// `rr`), and decline `ff` with an error.
#[test]
fn nested_transcript_matches_gradbench_s_constants() {
    check_transcript("nested", include_str!("transcripts/nested.jsonl"));
}

#[test]
fn bad_messages_get_errors_and_the_tool_keeps_going() {
    check_transcript("errors", include_str!("transcripts/errors.jsonl"));
}

#[test]
fn end_stops_the_tool_without_a_response() {
    let responses = run_tool(
        "{\"id\": 0, \"kind\": \"start\"}\n{\"id\": 1, \"kind\": \"end\"}\n{\"id\": 2, \"kind\": \"start\"}\n",
    );
    assert_eq!(responses.len(), 1);
}

#[test]
fn every_implemented_module_is_defined_and_every_declined_one_says_why() {
    let mut input = String::new();
    for (i, m) in mochi_gradbench::modules::IMPLEMENTED.iter().enumerate() {
        input += &format!("{{\"id\": {i}, \"kind\": \"define\", \"module\": \"{m}\"}}\n");
    }
    let responses = run_tool(&input);
    for r in &responses {
        let r: Value = serde_json::from_str(r).unwrap();
        assert_eq!(r["success"], true, "{r}");
    }
    let mut input = String::new();
    for (i, (m, _)) in mochi_gradbench::modules::UNSUPPORTED.iter().enumerate() {
        input += &format!("{{\"id\": {i}, \"kind\": \"define\", \"module\": \"{m}\"}}\n");
    }
    for (r, (m, _)) in run_tool(&input)
        .iter()
        .zip(mochi_gradbench::modules::UNSUPPORTED)
    {
        let r: Value = serde_json::from_str(r).unwrap();
        assert_eq!(r["success"], false, "{r}");
        let error = r["error"].as_str().unwrap();
        assert!(
            error.contains(m) && error.contains("not supported"),
            "{error}"
        );
    }
}
