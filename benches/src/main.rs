//! `cargo run --release -p mochi-benches [-- --quick --json out.json --plot ratios.svg]`

use clap::Parser;
use mochi_benches::alloc::CountingAllocator;
use mochi_benches::args::Cli;
use mochi_benches::cases::inputs::{Inputs, Scale};
use mochi_benches::columns::Column;
use mochi_benches::progress::Progress;
use mochi_benches::timing::Budget;
use mochi_benches::{jax, plot, report, run};
use mochi_ratio_table::render_table;
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn main() -> ExitCode {
    match main_inner() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mochi-benches: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main_inner() -> Result<(), String> {
    let cli = Cli::parse();
    if cli.programs_only {
        let budget = if cli.quick {
            Budget::QUICK
        } else {
            Budget::FULL
        };
        let rows = mochi_benches::programs::measure(budget)?;
        print!("{}", mochi_benches::programs::table(&rows));
        print!("\n{}", second_order(budget, cli.quick, cli.no_jax));
        return Ok(());
    }
    let retry = std::env::var("MOCHI_RETRY_CASES").ok();
    let selection = cli.selection(retry.as_deref())?;
    // candle uses rayon; one thread, like every other column.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        std::env::set_var("RAYON_NUM_THREADS", "1");
    }
    let budget = if cli.quick {
        Budget::QUICK
    } else {
        Budget::FULL
    };
    let started = Instant::now();
    let mut notes = Vec::new();
    let in_process: Vec<Column> = selection
        .columns
        .iter()
        .copied()
        .filter(|c| {
            let ok = c.compiled_in();
            if !ok && *c != Column::Jax {
                notes.push(format!(
                    "{}: not in this build (cargo run --release -p mochi-benches --features heavy-peers)",
                    c.name()
                ));
            }
            ok
        })
        .collect();

    let mut jax_cells = None;
    if selection.columns.contains(&Column::Jax) {
        if cli.no_jax {
            notes.push("jax: skipped (--no-jax)".to_string());
        } else if !jax::available() {
            notes.push(format!(
                "jax: skipped, `{} -c \"import jax\"` fails on this machine (install it with benches/peers/setup-jax.sh)",
                jax::python().display()
            ));
        } else {
            eprintln!("running {}", jax::script().display());
            match jax::run(&selection.cases, cli.quick) {
                Ok(cells) => jax_cells = Some(cells),
                Err(e) => notes.push(format!("jax: skipped, {e}")),
            }
        }
    }

    let inputs = Inputs::new(Scale::Full);
    let mut progress = Progress::new(selection.cases.len());
    let mut results = Vec::new();
    for (index, &case) in selection.cases.iter().enumerate() {
        let mut result = run::measure(case, &inputs, &in_process, budget, |f| {
            progress.update(index, case.label(), f)
        })?;
        if let Some(cells) = &jax_cells {
            result
                .gradients
                .push((Column::Jax, cells.get(&case).cloned()));
        } else if selection.columns.contains(&Column::Jax) {
            result.gradients.push((Column::Jax, None));
        }
        // Keep the selection's column order.
        result
            .gradients
            .sort_by_key(|(c, _)| selection.columns.iter().position(|s| s == c));
        results.push(result);
        progress.finish_case(index, case.label());
    }
    progress.finish();

    let meta = json!({
        "date": chrono::Local::now().format("%Y-%m-%d %H:%M %Z").to_string(),
        "machine": machine(),
        "mode": if cli.quick { "quick" } else { "full" },
        "seconds": started.elapsed().as_secs_f64().round(),
        "counting_allocator": mochi_benches::alloc::installed(),
        "timed_region": selection
            .columns
            .iter()
            .map(|c| (c.name().to_string(), json!(c.timed_region())))
            .collect::<serde_json::Map<_, _>>(),
        "notes": notes,
    });
    let report = report::build(&selection.columns, &results, meta.clone());
    print!("{}", render_table(&report));
    println!(
        "{} · {} · {} run, {:.0} s",
        meta["date"].as_str().unwrap_or_default(),
        meta["machine"].as_str().unwrap_or_default(),
        meta["mode"].as_str().unwrap_or_default(),
        started.elapsed().as_secs_f64()
    );
    print!("{}", report::footnotes(&selection.columns, &results));
    for note in &notes {
        println!("note: {note}");
    }
    let misses = report::target_misses(&results);
    if !misses.is_empty() {
        println!("mochi rows off target (shared/bench-cases.md):");
        for m in misses {
            println!("  {m}");
        }
    }
    if !cli.no_programs && cli.cases.is_empty() && retry.is_none() {
        eprintln!("timing the programs table");
        let rows = mochi_benches::programs::measure(budget)?;
        print!("\n{}", mochi_benches::programs::table(&rows));
        eprintln!("timing the second-order table");
        print!("\n{}", second_order(budget, cli.quick, cli.no_jax));
    }
    if let Some(path) = &cli.json {
        std::fs::write(path, report.to_json_string() + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &cli.plot {
        plot::draw(&report, path)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The second-order table, with JAX's ratios when JAX can be imported.
fn second_order(budget: Budget, quick: bool, no_jax: bool) -> String {
    let rows = mochi_benches::higher::measure(budget);
    let (jax, note) = if no_jax {
        (None, "jax: skipped (--no-jax)\n".to_string())
    } else {
        match mochi_benches::higher::jax(quick) {
            Ok(j) => (Some(j), String::new()),
            Err(e) => (None, format!("jax: {e}\n")),
        }
    };
    format!(
        "{}{note}",
        mochi_benches::higher::table(&rows, jax.as_ref())
    )
}

/// CPU model and core count, from /proc/cpuinfo when there is one.
fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} cores, {}", std::env::consts::OS)
}
