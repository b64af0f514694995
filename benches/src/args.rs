//! Command-line arguments of the main job.

use crate::cases::Case;
use crate::columns::Column;
use clap::Parser;
use std::path::PathBuf;

/// Runs the 13 cases in every column and prints the gradient/primal ratio table.
#[derive(Debug, Parser, PartialEq)]
#[command(name = "mochi-benches", about, long_about = None)]
pub struct Cli {
    /// A short run for CI: about a minute in total instead of several.
    #[arg(long)]
    pub quick: bool,
    /// Write the ratio report (schema 1, plus absolute times, spreads and bytes per gradient) here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Draw the ratio per case per column on a log scale into this SVG file.
    #[arg(long, value_name = "PATH.svg")]
    pub plot: Option<PathBuf>,
    /// Only these cases (labels, comma-separated) [default: all, or MOCHI_RETRY_CASES when set].
    #[arg(long, value_name = "LABELS", value_delimiter = ',')]
    pub cases: Vec<String>,
    /// Only these columns (comma-separated): mochi, easy-ml, echidna, echidna-once, candle, burn, jax [default: all].
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Do not run the JAX script even when JAX can be imported (see `benches/peers/setup-jax.sh`).
    #[arg(long)]
    pub no_jax: bool,
    /// Skip the second table (whole programs with helpers and inlined); it is also
    /// skipped when `--cases` or MOCHI_RETRY_CASES selects cases.
    #[arg(long)]
    pub no_programs: bool,
    /// Only the programs table.
    #[arg(long, conflicts_with = "no_programs")]
    pub programs_only: bool,
}

/// What to run, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Cases in table order.
    pub cases: Vec<Case>,
    /// Columns in table order.
    pub columns: Vec<Column>,
}

impl Cli {
    /// The selected cases and columns. `retry_cases` is `MOCHI_RETRY_CASES` (set by
    /// `mochi-bot perf-check --retry-cmd`), used when `--cases` is absent.
    pub fn selection(&self, retry_cases: Option<&str>) -> Result<Selection, String> {
        let from_env: Vec<String> = retry_cases
            .map(|s| {
                s.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        let case_names = if self.cases.is_empty() {
            &from_env
        } else {
            &self.cases
        };
        let cases = if case_names.is_empty() {
            Case::ALL.to_vec()
        } else {
            let mut picked = Vec::new();
            for name in case_names {
                let case = Case::from_label(name.trim()).ok_or_else(|| {
                    let all: Vec<&str> = Case::ALL.iter().map(|c| c.label()).collect();
                    format!("unknown case `{name}`; the cases are: {}", all.join(", "))
                })?;
                picked.push(case);
            }
            Case::ALL
                .into_iter()
                .filter(|c| picked.contains(c))
                .collect()
        };
        let columns = if self.columns.is_empty() {
            Column::ALL.to_vec()
        } else {
            let mut picked = Vec::new();
            for name in &self.columns {
                let column = Column::from_name(name.trim()).ok_or_else(|| {
                    let all: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
                    format!(
                        "unknown column `{name}`; the columns are: {}",
                        all.join(", ")
                    )
                })?;
                picked.push(column);
            }
            Column::ALL
                .into_iter()
                .filter(|c| picked.contains(c))
                .collect()
        };
        Ok(Selection { cases, columns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("mochi-benches").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_select_everything() {
        let cli = parse(&[]).unwrap();
        assert!(!cli.quick && cli.json.is_none() && cli.plot.is_none() && !cli.no_jax);
        let s = cli.selection(None).unwrap();
        assert_eq!(s.cases, Case::ALL.to_vec());
        assert_eq!(s.columns, Column::ALL.to_vec());
    }

    #[test]
    fn flags_and_lists() {
        let cli = parse(&[
            "--quick",
            "--json",
            "out.json",
            "--plot",
            "r.svg",
            "--cases",
            "gp_lml,_sum_1000",
            "--columns",
            "echidna,mochi",
            "--no-jax",
        ])
        .unwrap();
        assert!(cli.quick && cli.no_jax);
        assert_eq!(cli.json, Some(PathBuf::from("out.json")));
        assert_eq!(cli.plot, Some(PathBuf::from("r.svg")));
        let s = cli.selection(None).unwrap();
        // table order, whatever the order given
        assert_eq!(s.cases, vec![Case::SumLoop1000, Case::GpLml]);
        assert_eq!(s.columns, vec![Column::Mochi, Column::Echidna]);
    }

    #[test]
    fn repeated_flags_accumulate() {
        let cli = parse(&["--cases", "kron_sum", "--cases", "sum_1000"]).unwrap();
        let s = cli.selection(None).unwrap();
        assert_eq!(s.cases, vec![Case::Sum1000, Case::KronSum]);
    }

    #[test]
    fn unknown_names_are_errors_that_list_the_choices() {
        let e = parse(&["--cases", "sum_100"])
            .unwrap()
            .selection(None)
            .unwrap_err();
        assert!(e.contains("`sum_100`") && e.contains("sum_1000"), "{e}");
        let e = parse(&["--columns", "enzyme"])
            .unwrap()
            .selection(None)
            .unwrap_err();
        assert!(e.contains("`enzyme`") && e.contains("echidna-once"), "{e}");
        assert!(parse(&["--json"]).is_err(), "--json needs a path");
        assert!(parse(&["--fast"]).is_err());
    }

    #[test]
    fn retry_cases_apply_only_without_cases() {
        let cli = parse(&[]).unwrap();
        let s = cli.selection(Some("large_single_block, sum_1000")).unwrap();
        assert_eq!(s.cases, vec![Case::Sum1000, Case::LargeSingleBlock]);
        let cli = parse(&["--cases", "gp_lml"]).unwrap();
        assert_eq!(
            cli.selection(Some("sum_1000")).unwrap().cases,
            vec![Case::GpLml]
        );
        assert!(parse(&[]).unwrap().selection(Some("nope")).is_err());
    }
}
