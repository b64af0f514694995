//! The Markdown body of the pull-request summary comment.

use mochi_ratio_table::{render_table, BenchReport};

use crate::coverage::lcov::{Coverage, Totals};
use crate::coverage::patch::{line_ranges, PatchCoverage};
use crate::icount::{IcountResult, IcountVerdict};
use crate::markdown;
use crate::wallclock::{self, CaseComparison, Finding};

/// Hidden first line that identifies the bot's summary comment.
pub const MARKER: &str = "<!-- mochi-bot:pr-summary -->";

const SHA_PREFIX: &str = "<!-- mochi-bot:head-sha=";

/// GitHub rejects issue comments longer than this many characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// Everything the summary shows.
#[derive(Debug, Clone)]
pub struct SummaryInput<'a> {
    /// The pull request's head commit.
    pub head_sha: &'a str,
    /// The base commit, when known.
    pub base_sha: Option<&'a str>,
    /// Head coverage, when a report was given.
    pub head: Option<&'a Coverage>,
    /// Base coverage, when a report was given.
    pub base: Option<&'a Coverage>,
    /// Coverage of the changed lines, when both a diff and a head report exist.
    pub patch: Option<&'a PatchCoverage>,
    /// The benchmark ratios, when a report was given.
    pub bench: Option<&'a BenchReport>,
    /// Wall-clock ratios of head against base, when runs of both were given.
    pub wallclock: Option<&'a [CaseComparison]>,
    /// The instruction gate's comparison of head against base, when both reports were given.
    pub icount: Option<&'a [IcountResult]>,
}

/// The head SHA recorded in a summary body, if any.
pub fn head_sha_of(body: &str) -> Option<&str> {
    let start = body.find(SHA_PREFIX)? + SHA_PREFIX.len();
    let rest = &body[start..];
    let end = rest.find(" -->")?;
    Some(&rest[..end])
}

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

fn percent(totals: Totals) -> String {
    totals
        .percent()
        .map_or_else(|| "n/a".to_string(), |p| format!("{p:.2}%"))
}

/// Whether `text` is a commit id as git writes it: 7 to 64 hexadecimal digits.
///
/// The head SHA is written into an HTML comment and shown in code spans; this
/// check is what keeps a hostile value from closing the comment.
pub fn is_commit_sha(text: &str) -> bool {
    (7..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Parses a `--head-sha`/`--base-sha` value.
pub fn parse_commit_sha(text: &str) -> Result<String, String> {
    if is_commit_sha(text) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(format!(
            "`{}` is not a commit SHA; expected 7 to 64 hexadecimal digits, e.g. from `git rev-parse HEAD`",
            crate::input::one_line(text, 80)
        ))
    }
}

/// Builds the full comment body (before any size limit is applied).
pub fn render(input: &SummaryInput<'_>) -> String {
    let mut out = String::new();
    out.push_str(MARKER);
    out.push('\n');
    out.push_str(&format!("{SHA_PREFIX}{} -->\n", input.head_sha));
    out.push_str("## mochi-bot summary\n\n");
    match input.base_sha {
        Some(base) => out.push_str(&format!(
            "For head `{}` against base `{}`.\n\n",
            short(input.head_sha),
            short(base)
        )),
        None => out.push_str(&format!("For head `{}`.\n\n", short(input.head_sha))),
    }
    if let Some(head) = input.head {
        render_coverage(&mut out, input, head);
    }
    if let Some(results) = input.icount {
        render_icount(&mut out, results);
    }
    if let Some(bench) = input.bench {
        render_performance(&mut out, bench);
    }
    if let Some(cases) = input.wallclock {
        render_wallclock(&mut out, cases);
    }
    out
}

fn render_wallclock(out: &mut String, cases: &[CaseComparison]) {
    out.push_str("#### Wall-clock ratio against base (informational)\n\n");
    out.push_str("Hodges–Lehmann shift of the log-ratio over interleaved runs, with its 95% Mann–Whitney interval; a slowdown is claimed only when a rerun confirms it.\n\n");
    out.push_str("| Case | Change | 95% interval | Finding |\n| --- | ---: | ---: | --- |\n");
    for c in cases {
        let (change, interval) = match c.shift {
            Some(s) => (
                format!("{:+.1}%", wallclock::percent(s.estimate)),
                format!(
                    "[{:+.1}%, {:+.1}%]",
                    wallclock::percent(s.lower),
                    wallclock::percent(s.upper)
                ),
            ),
            None => ("–".to_string(), "–".to_string()),
        };
        let finding = match c.finding {
            Finding::Slower => "slower (confirmed by a rerun) ⚠️",
            Finding::SlowerOnce => "slower once, not confirmed",
            Finding::Faster => "faster",
            Finding::NoChange => "no change detected",
            Finding::TooFewRuns => "too few runs",
        };
        out.push_str(&format!(
            "| {} | {change} | {interval} | {finding} |\n",
            markdown::code_span(&c.label)
        ));
    }
    out.push('\n');
}

fn render_icount(out: &mut String, results: &[IcountResult]) {
    let grew = results
        .iter()
        .filter(|r| r.verdict == IcountVerdict::Regressed)
        .count();
    out.push_str("### Instruction counts (the performance gate)\n\n");
    if grew == 0 {
        out.push_str(&format!(
            "No case's gradient/primal instruction ratio grew past its threshold ({} cases, head against base, counted under Valgrind) ✅\n\n",
            results.len()
        ));
    } else {
        out.push_str(&format!(
            "**{grew} of {} cases grew past their threshold** (gradient/primal instruction ratio, head against base, counted under Valgrind):\n\n",
            results.len()
        ));
    }
    out.push_str(
        "| Case | Base | Head | Change | Allowed |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    for r in results {
        let (base, change) = match (r.base_ratio, r.growth) {
            (Some(b), Some(g)) => (format!("{b:.3}"), format!("{:+.2}%", g * 100.0)),
            _ => ("new".to_string(), "–".to_string()),
        };
        let mark = if r.verdict == IcountVerdict::Regressed {
            " ❌"
        } else {
            ""
        };
        out.push_str(&format!(
            "| {} | {base} | {:.3} | {change}{mark} | +{:.1}% |\n",
            markdown::code_span(&r.label),
            r.head_ratio,
            r.threshold * 100.0
        ));
    }
    out.push('\n');
}

fn render_coverage(out: &mut String, input: &SummaryInput<'_>, head: &Coverage) {
    out.push_str("### Coverage\n\n");
    match input.patch {
        Some(patch) if patch.totals.coverable == 0 => out.push_str(
            "Patch coverage: no changed line is coverable (the pull request changes no code the coverage report measures).\n\n",
        ),
        Some(patch) if patch.totals.covered == patch.totals.coverable => out.push_str(&format!(
            "Patch coverage: all {} changed coverable lines are covered ✅\n\n",
            patch.totals.coverable
        )),
        Some(patch) => {
            out.push_str(&format!(
                "**Patch coverage: {}** ({} of {} changed coverable lines covered, {} missing)\n\n",
                percent(patch.totals),
                patch.totals.covered,
                patch.totals.coverable,
                patch.totals.coverable - patch.totals.covered
            ));
            out.push_str("| File | Patch % | Missing lines |\n| --- | ---: | --- |\n");
            for file in patch.files_with_missing_lines() {
                out.push_str(&format!(
                    "| {} | {} ({}/{}) | {} |\n",
                    markdown::code_span(&file.path),
                    percent(file.totals),
                    file.totals.covered,
                    file.totals.coverable,
                    line_ranges(&file.missing)
                ));
            }
            out.push('\n');
        }
        None => out.push_str(
            "Patch coverage: not computed (no diff of the pull request was available).\n\n",
        ),
    }
    let head_totals = head.totals();
    out.push_str(&format!(
        "**Project coverage: {}** ({} of {} lines",
        percent(head_totals),
        head_totals.covered,
        head_totals.coverable
    ));
    let (branches_hit, branches) = head.branch_totals();
    if branches > 0 {
        out.push_str(&format!("; {branches_hit} of {branches} branches"));
    }
    out.push(')');
    match input.base.map(|b| (b.totals(), b)) {
        Some((base_totals, _)) => match (head_totals.percent(), base_totals.percent()) {
            (Some(h), Some(b)) => {
                let delta = h - b;
                // Avoid "-0.00": a change that rounds to zero is shown as ±0.00.
                let shown = if delta.abs() < 0.005 {
                    "±0.00".to_string()
                } else {
                    format!("{delta:+.2}")
                };
                out.push_str(&format!(
                    ", {shown} percentage points against base ({b:.2}%)\n\n"
                ));
            }
            _ => out.push_str(", no delta: the base report has no coverable lines\n\n"),
        },
        None => {
            out.push_str("\n\n");
            out.push_str(
                "> [!WARNING]\n> **No base coverage report.** The coverage of the base commit is unknown, so no delta is shown. \
                 Produce one on the base commit and pass it with `--base-lcov`.\n\n",
            );
        }
    }
}

fn render_performance(out: &mut String, bench: &BenchReport) {
    out.push_str("### Performance Ratio:\n\n");
    out.push_str("Ratio of time to compute gradient and time to compute function.\n\n");
    out.push_str("> ⚠️ Informational: wall-clock figures from a shared CI runner, where differences of tens of percent can be noise. The gate is the instruction count above.\n\n");
    // The table escapes control characters, so no line of it can start a
    // fence; the fence is still longer than any backtick run inside.
    let table = render_table(bench);
    let fence = markdown::fence_for(&table);
    out.push_str(&format!("{fence}text\n{table}{fence}\n"));
}

/// Shortens `body` to at most `limit` characters, cutting at a line boundary,
/// closing an open code fence and ending with a note that says what was cut.
/// A body within the limit is returned unchanged.
pub fn fit_to_limit(body: &str, limit: usize) -> String {
    let total = body.chars().count();
    if total <= limit {
        return body.to_string();
    }
    let note = format!(
        "\n> [!NOTE]\n> This summary was shortened: the full text has {total} characters, over GitHub's limit of {limit}. \
         Run `mochi-bot pr-summary --dry-run` with the same inputs to see all of it.\n"
    );
    // Room for the note and a newline; a closing fence is counted as it opens.
    let budget = limit.saturating_sub(note.chars().count() + 1);
    let mut kept = String::new();
    let mut used = 0;
    // The fence that is open, if any: closed only by a run at least as long.
    let mut open_fence: Option<usize> = None;
    let mut closing = 0;
    for line in body.split_inclusive('\n') {
        let n = line.chars().count();
        if used + n + closing > budget {
            break;
        }
        let run = line.trim_start().chars().take_while(|c| *c == '`').count();
        if run >= 3 {
            match open_fence {
                Some(open) if run >= open && line.trim().chars().all(|c| c == '`') => {
                    open_fence = None
                }
                Some(_) => {}
                None => open_fence = Some(run),
            }
        }
        closing = open_fence.map_or(0, |run| run + 1);
        kept.push_str(line);
        used += n;
    }
    if !kept.ends_with('\n') {
        kept.push('\n');
    }
    if let Some(run) = open_fence {
        kept.push_str(&"`".repeat(run));
        kept.push('\n');
    }
    kept.push_str(&note);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::diff::ChangedLines;
    use std::path::Path;

    fn coverage(text: &str) -> Coverage {
        Coverage::parse(text, Path::new("c.lcov"), Path::new("/repo")).unwrap()
    }

    #[test]
    fn full_coverage_gets_the_check_mark_and_missing_base_a_banner() {
        let head = coverage("SF:a.rs\nDA:1,1\nDA:2,1\nDA:3,0\nend_of_record\n");
        let diff = ChangedLines::parse(
            "--- a/a.rs\n+++ b/a.rs\n@@ -1 +1,2 @@\n-x\n+y\n+z\n",
            Path::new("d"),
        )
        .unwrap();
        let patch = PatchCoverage::compute(&diff, &head);
        let body = render(&SummaryInput {
            head_sha: "0123456789abcdef",
            base_sha: None,
            head: Some(&head),
            base: None,
            patch: Some(&patch),
            bench: None,
            icount: None,
            wallclock: None,
        });
        assert!(body.starts_with(MARKER));
        assert_eq!(head_sha_of(&body), Some("0123456789abcdef"));
        assert!(
            body.contains("all 2 changed coverable lines are covered ✅"),
            "{body}"
        );
        assert!(
            body.contains("**Project coverage: 66.67%** (2 of 3 lines)"),
            "{body}"
        );
        assert!(body.contains("No base coverage report"), "{body}");
        assert!(!body.contains("percentage points"), "{body}");
    }

    #[test]
    fn missing_lines_table_and_delta() {
        let head = coverage("SF:/repo/src/a.rs\nDA:1,1\nDA:2,0\nDA:3,0\nDA:5,0\nend_of_record\n");
        let base = coverage("SF:src/a.rs\nDA:1,1\nDA:2,1\nDA:3,1\nDA:5,0\nend_of_record\n");
        let diff = ChangedLines::parse(
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -0,0 +1,5 @@\n+1\n+2\n+3\n+4\n+5\n",
            Path::new("d"),
        )
        .unwrap();
        let patch = PatchCoverage::compute(&diff, &head);
        let body = render(&SummaryInput {
            head_sha: "abc",
            base_sha: Some("def"),
            head: Some(&head),
            base: Some(&base),
            patch: Some(&patch),
            bench: None,
            icount: None,
            wallclock: None,
        });
        assert!(
            body.contains(
                "**Patch coverage: 25.00%** (1 of 4 changed coverable lines covered, 3 missing)"
            ),
            "{body}"
        );
        assert!(
            body.contains("| `src/a.rs` | 25.00% (1/4) | 2-3, 5 |"),
            "{body}"
        );
        assert!(
            body.contains("-50.00 percentage points against base (75.00%)"),
            "{body}"
        );
    }

    #[test]
    fn hostile_paths_and_labels_stay_inert() {
        let head = coverage("SF:src/a`b @alice <img src=x>.rs\nDA:1,0\nend_of_record\n");
        let diff = ChangedLines::parse(
            "--- a/x\n+++ b/src/a`b @alice <img src=x>.rs\n@@ -0,0 +1 @@\n+1\n",
            Path::new("d"),
        )
        .unwrap();
        let patch = PatchCoverage::compute(&diff, &head);
        let bench = BenchReport {
            schema_version: 1,
            columns: vec!["mochi".into()],
            cases: vec![mochi_ratio_table::BenchCase {
                label: "a\n```\n@alice <img src=x>".into(),
                primal_ns: 1.0,
                ratios: [("mochi".to_string(), Some(1.0))].into(),
                times_ns: None,
                bytes_per_gradient: None,
                extra: Default::default(),
            }],
            meta: None,
        };
        let body = render(&SummaryInput {
            head_sha: "abcdef0",
            base_sha: None,
            head: Some(&head),
            base: None,
            patch: Some(&patch),
            bench: Some(&bench),
            icount: None,
            wallclock: None,
        });
        // The path is one code span: the backtick inside cannot end it.
        assert!(
            body.contains("| ``src/a`b @alice <img src=x>.rs`` | 0.00% (0/1) | 1 |"),
            "{body}"
        );
        // The label stays on its table line, inside a fence longer than its backticks.
        let fence_start = body.find("\n````text\n").unwrap();
        let after = &body[fence_start + 10..];
        let fence_end = after.find("\n````\n").unwrap();
        assert!(after[..fence_end].contains("@alice <img src=x>"), "{body}");
        // Only those two places hold the name: nothing leaked into prose.
        assert_eq!(body.matches("@alice").count(), 2, "{body}");
        assert!(!after[fence_end + 6..].contains("@alice"), "{body}");
    }

    #[test]
    fn commit_shas_are_hex() {
        assert!(is_commit_sha("0123abc"));
        assert!(!is_commit_sha("abc -->\n@alice"));
        assert!(parse_commit_sha("ABCDEF0").is_ok());
    }

    #[test]
    fn a_longer_fence_is_closed_with_its_own_length() {
        let mut body = String::from("head\n`````text\n```\n");
        for i in 0..10_000 {
            body.push_str(&format!("line {i}\n"));
        }
        let cut = fit_to_limit(&body, 2_000);
        assert!(cut.chars().count() <= 2_000, "{}", cut.chars().count());
        assert!(cut.contains("\n`````\n"), "{cut}");
    }

    #[test]
    fn long_bodies_are_cut_with_a_note_and_a_closed_fence() {
        let mut body = String::from("head\n```\n");
        for i in 0..10_000 {
            body.push_str(&format!("line {i}\n"));
        }
        let cut = fit_to_limit(&body, 2_000);
        assert!(cut.chars().count() <= 2_000, "{}", cut.chars().count());
        assert!(cut.contains("shortened"));
        assert_eq!(cut.matches("```").count(), 2);
        assert_eq!(fit_to_limit("short", 10), "short");
    }
}
