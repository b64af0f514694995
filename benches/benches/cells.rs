//! Criterion benchmarks of the same cells as the main job (primal and every
//! in-process gradient column per case), for criterion's history and change detection.
//! `cargo bench -p mochi-benches [-- FILTER]`, e.g. `-- gp_lml/mochi`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use mochi_benches::cases::inputs::{Inputs, Scale};
use mochi_benches::cases::Case;
use mochi_benches::columns::{self, Column};
use std::time::Duration;

fn cells(c: &mut Criterion) {
    let inputs = Inputs::new(Scale::Full);
    for case in Case::ALL {
        let mut group = c.benchmark_group(case.label());
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        let mut primal = columns::primal(case, &inputs);
        group.bench_function("primal", |b| b.iter(|| primal.run(1)));
        for column in Column::ALL {
            if let Some(mut cell) = columns::gradient(column, case, &inputs) {
                group.bench_function(column.name(), |b| b.iter(|| cell.run(1)));
            }
        }
        group.finish();
    }
}

criterion_group!(benches, cells);
criterion_main!(benches);
