//! Measurements → the bot's ratio report (`mochi-ratio-table`), the footnotes and the
//! spreads printed under the table.

use crate::cases::Case;
use crate::columns::Column;
use crate::timing::Samples;
use mochi_ratio_table::{format_ratio, BenchCase, BenchReport, SCHEMA_VERSION};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// JAX's per-call dispatch cost in nanoseconds; a JAX primal under three times this
/// is dispatch-bound.
pub const JAX_DISPATCH_NS: f64 = 5_000.0;

/// One gradient cell's measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct GradientResult {
    /// Median nanoseconds per gradient call.
    pub median_ns: f64,
    /// Interquartile range over median.
    pub spread: f64,
    /// Samples taken.
    pub samples: usize,
    /// Heap bytes requested per gradient call, when counted.
    pub bytes: Option<u64>,
    /// The ratio's denominator when it is not the Rust primal (JAX's own primal).
    pub own_primal_ns: Option<f64>,
}

impl GradientResult {
    /// From timing samples.
    pub fn from_samples(s: &Samples, bytes: Option<u64>) -> Self {
        GradientResult {
            median_ns: s.median(),
            spread: s.spread(),
            samples: s.ns_per_call.len(),
            bytes,
            own_primal_ns: None,
        }
    }
}

/// Everything measured for one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// The Rust primal's median (ns) and spread.
    pub primal_ns: f64,
    /// The primal's interquartile range over median.
    pub primal_spread: f64,
    /// Per selected column: its measurement, or `None` when missing.
    pub gradients: Vec<(Column, Option<GradientResult>)>,
}

impl CaseResult {
    /// The ratio of `column`: its gradient time over the primal time (JAX: over its own primal).
    pub fn ratio(&self, column: Column) -> Option<f64> {
        let g = self
            .gradients
            .iter()
            .find(|(c, _)| *c == column)?
            .1
            .as_ref()?;
        Some(g.median_ns / g.own_primal_ns.unwrap_or(self.primal_ns))
    }

    /// Whether `column`'s cell is dispatch-bound (JAX primal under 3× its dispatch cost).
    pub fn dispatch_bound(&self, column: Column) -> bool {
        self.gradients.iter().any(|(c, g)| {
            *c == column
                && g.as_ref()
                    .and_then(|g| g.own_primal_ns)
                    .is_some_and(|p| p < 3.0 * JAX_DISPATCH_NS)
        })
    }
}

/// The report: schema-1 fields plus absolute times, bytes per gradient and spreads.
pub fn build(columns: &[Column], results: &[CaseResult], meta: Value) -> BenchReport {
    let cases = results
        .iter()
        .map(|r| {
            let mut ratios = BTreeMap::new();
            let mut times = BTreeMap::new();
            let mut bytes = BTreeMap::new();
            let mut spread = Map::new();
            spread.insert("primal".into(), json!(r.primal_spread));
            let mut dispatch = Vec::new();
            for &column in columns {
                let name = column.name().to_string();
                let g = r
                    .gradients
                    .iter()
                    .find(|(c, _)| *c == column)
                    .and_then(|(_, g)| g.as_ref());
                ratios.insert(name.clone(), r.ratio(column));
                times.insert(name.clone(), g.map(|g| g.median_ns));
                bytes.insert(name.clone(), g.and_then(|g| g.bytes.map(|b| b as f64)));
                if let Some(g) = g {
                    spread.insert(name.clone(), json!(g.spread));
                }
                if r.dispatch_bound(column) {
                    dispatch.push(json!(name));
                }
            }
            let mut extra = BTreeMap::new();
            extra.insert("spread".to_string(), Value::Object(spread));
            if !dispatch.is_empty() {
                extra.insert("dispatch_bound".to_string(), Value::Array(dispatch));
            }
            BenchCase {
                label: r.case.label().to_string(),
                primal_ns: r.primal_ns,
                ratios,
                times_ns: Some(times),
                bytes_per_gradient: Some(bytes),
                extra,
            }
        })
        .collect();
    BenchReport {
        schema_version: SCHEMA_VERSION,
        columns: columns.iter().map(|c| c.name().to_string()).collect(),
        cases,
        meta: Some(meta),
    }
}

/// The lines printed under the table: what each column times, dispatch-bound JAX
/// cells, and the spread of every cell.
pub fn footnotes(columns: &[Column], results: &[CaseResult]) -> String {
    let mut out = String::from(
        "ratio = median gradient time / median primal time, both sampled interleaved in this process; \
primal = the plain call of the case's #[differentiable] function.\n",
    );
    for &c in columns {
        out.push_str(&format!("  {}: {}\n", c.name(), c.timed_region()));
    }
    let bound: Vec<&str> = results
        .iter()
        .filter(|r| columns.iter().any(|&c| r.dispatch_bound(c)))
        .map(|r| r.case.label())
        .collect();
    if !bound.is_empty() {
        out.push_str(&format!(
            "jax: dispatch-bound (JAX primal under 3 × {} µs), ratios not comparable: {}\n",
            JAX_DISPATCH_NS / 1e3,
            bound.join(", ")
        ));
    }
    out.push_str("spread (interquartile range / median) of primal | each column:\n");
    for r in results {
        let cells: Vec<String> = r
            .gradients
            .iter()
            .map(|(c, g)| match g {
                Some(g) => format!("{} {:.1}%", c.name(), 100.0 * g.spread),
                None => format!("{} -", c.name()),
            })
            .collect();
        out.push_str(&format!(
            "  {:<28} primal {:.1}% | {}\n",
            r.case.label(),
            100.0 * r.primal_spread,
            cells.join(", ")
        ));
    }
    out
}

/// Rows where mochi misses its target ratio (from `shared/bench-cases.md`) or is not
/// below every peer measured in the same run.
pub fn target_misses(results: &[CaseResult]) -> Vec<String> {
    let mut misses = Vec::new();
    for r in results {
        let Some(mochi) = r.ratio(Column::Mochi) else {
            continue;
        };
        let target = target(r.case);
        if mochi > target {
            // Beside the target, the floor measured in the same run: the value and
            // gradient written by hand.
            let floor = r
                .ratio(Column::Hand)
                .map(|h| {
                    format!(
                        " (hand-written {}, mochi {} of it)",
                        format_ratio(h),
                        format_ratio(mochi / h)
                    )
                })
                .unwrap_or_default();
            misses.push(format!(
                "{}: mochi {} above its target {}{floor}",
                r.case.label(),
                format_ratio(mochi),
                format_ratio(target)
            ));
        }
        for (c, _) in &r.gradients {
            // `hand` is the row's floor, not a peer to be below.
            if matches!(*c, Column::Mochi | Column::Hand) || r.dispatch_bound(*c) {
                continue;
            }
            if let Some(peer) = r.ratio(*c) {
                if peer <= mochi {
                    misses.push(format!(
                        "{}: mochi {} not below {} {}",
                        r.case.label(),
                        format_ratio(mochi),
                        c.name(),
                        format_ratio(peer)
                    ));
                }
            }
        }
    }
    misses
}

/// mochi's target ratio per case (`shared/bench-cases.md`, last column).
pub fn target(case: Case) -> f64 {
    match case {
        Case::Sum1000 => 2.0,
        Case::SumLoop1000 => 1.08,
        Case::SumSin1000 | Case::SumSinLoop1000 | Case::KronSum => 1.5,
        Case::KronViewSum | Case::NaiveMapSinCosExp => 2.0,
        Case::MapSinCosExp => 1.44,
        Case::BroadcastSinCosExp => 1.46,
        Case::SimpleMlp => 2.9,
        Case::GpLml => 3.0,
        Case::TuringBroadcast | Case::LargeSingleBlock => 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> CaseResult {
        let g = |ns: f64| GradientResult {
            median_ns: ns,
            spread: 0.1,
            samples: 5,
            bytes: Some(0),
            own_primal_ns: None,
        };
        CaseResult {
            case: Case::Sum1000,
            primal_ns: 100.0,
            primal_spread: 0.05,
            gradients: vec![
                (Column::Mochi, Some(g(250.0))),
                (Column::Echidna, Some(g(200.0))),
                (Column::Candle, None),
                (
                    Column::Jax,
                    Some(GradientResult {
                        own_primal_ns: Some(6000.0),
                        ..g(9000.0)
                    }),
                ),
            ],
        }
    }

    #[test]
    fn ratios_use_the_right_denominator() {
        let r = result();
        assert_eq!(r.ratio(Column::Mochi), Some(2.5));
        assert_eq!(r.ratio(Column::Candle), None);
        assert_eq!(r.ratio(Column::Jax), Some(1.5)); // over JAX's own primal
        assert!(r.dispatch_bound(Column::Jax) && !r.dispatch_bound(Column::Mochi));
    }

    #[test]
    fn report_round_trips_through_the_bot_parser() {
        let columns = [Column::Mochi, Column::Echidna, Column::Candle, Column::Jax];
        let report = build(&columns, &[result()], json!({"machine": "test"}));
        let text = report.to_json_string();
        let back = BenchReport::from_json_str(&text, "r.json").unwrap();
        let case = &back.cases[0];
        assert_eq!(case.ratio("mochi"), Some(2.5));
        assert_eq!(case.ratio("candle"), None);
        assert_eq!(case.times_ns.as_ref().unwrap()["echidna"], Some(200.0));
        assert_eq!(
            case.bytes_per_gradient.as_ref().unwrap()["mochi"],
            Some(0.0)
        );
        assert_eq!(case.extra["dispatch_bound"], json!(["jax"]));
        assert!(mochi_ratio_table::render_table(&back).contains("missing"));
    }

    #[test]
    fn misses_name_target_and_faster_peers() {
        let misses = target_misses(&[result()]);
        assert_eq!(misses.len(), 2, "{misses:?}");
        assert!(misses[0].contains("above its target 2.00"));
        assert!(misses[1].contains("not below echidna 2.00"));
    }

    #[test]
    fn a_miss_names_the_hand_written_floor_which_is_not_a_peer() {
        let mut r = result();
        let hand = GradientResult {
            median_ns: 125.0,
            spread: 0.1,
            samples: 5,
            bytes: Some(0),
            own_primal_ns: None,
        };
        r.gradients.push((Column::Hand, Some(hand)));
        let misses = target_misses(&[r]);
        assert_eq!(misses.len(), 2, "{misses:?}");
        assert!(
            misses[0].contains("above its target 2.00 (hand-written 1.25, mochi 2.00 of it)"),
            "{misses:?}"
        );
        assert!(!misses.iter().any(|m| m.contains("not below hand")));
    }
}
