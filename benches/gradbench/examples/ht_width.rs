//! How `ht`'s Jacobian time depends on the number of directions per run of the
//! objective on `Dual<B>` (`mochi-gradbench` uses `B = 4`, the width of the `jacobian`
//! companions). Prints, per input, the primal time and the Jacobian/primal ratio for
//! `B` = 1, 4, 7, 14 and 28 (median of ≥ 1 s of calls each).
//!
//! The inputs are `ht` inputs as the eval sends them, one JSON file each, written from
//! a GradBench checkout with its own reader, e.g.
//!
//! ```sh
//! cd GRADBENCH && PYTHONPATH=python/gradbench python -c "import json, pathlib; \
//!   from gradbench.evals.ht import io; d = pathlib.Path('evals/ht/data/complicated_big'); \
//!   json.dump(io.read_hand_instance(d / 'model', d / 'hand1_t26_c100.txt', True).to_dict(), \
//!   open('/tmp/hand1.json', 'w'))"
//! cargo run --release -p mochi-gradbench --example ht_width -- /tmp/hand1.json
//! ```

use mochi_gradbench::evals::ht::{jacobian_by, objective, Data, Input};
use std::time::Instant;

/// The median time of `f` in seconds, over at least 1 s and 3 calls.
fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 1.0 || times.len() < 3 {
        let t = Instant::now();
        std::hint::black_box(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).expect("the input file is readable");
        let input: Input = serde_json::from_str(&text).expect("an ht input");
        let data = Data::from_input(&input).expect("a consistent ht input");
        let us = input.us.concat();
        let theta = &input.theta;
        let primal = time(|| objective(theta, &us, &data));
        let ratios = [
            time(|| jacobian_by::<1>(theta, &us, &data)),
            time(|| jacobian_by::<4>(theta, &us, &data)),
            time(|| jacobian_by::<7>(theta, &us, &data)),
            time(|| jacobian_by::<14>(theta, &us, &data)),
            time(|| jacobian_by::<28>(theta, &us, &data)),
        ]
        .map(|j| j / primal);
        println!(
            "{path}: primal {:.3} ms; jacobian/primal for B = 1, 4, 7, 14, 28: {:.1}, {:.1}, {:.1}, {:.1}, {:.1}",
            primal * 1e3,
            ratios[0],
            ratios[1],
            ratios[2],
            ratios[3],
            ratios[4]
        );
    }
}
