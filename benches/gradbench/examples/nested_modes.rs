//! The outer derivatives of `particle` and `saddle` timed alone, one call each, against
//! their primal: `fr` (the cost run on `Dual`, the inner gradient forward over reverse)
//! and `rr` (the `gradient` of the differentiable cost, the inner gradient's rule
//! pulling back through a Hessian-vector product). Prints the median of ≥ 1 s of calls
//! and its ratio to the primal, at the eval's starting point.
//!
//! ```sh
//! cargo run --release -p mochi-gradbench --example nested_modes
//! ```

use mochi_gradbench::evals::{particle, saddle};
use std::hint::black_box;
use std::time::Instant;

/// The median time of `f` in seconds, over at least 1 s and 3 calls.
fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 1.0 || times.len() < 3 {
        let t = Instant::now();
        black_box(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn report(name: &str, primal: f64, fr: f64, rr: f64) {
    println!(
        "{name}: primal {:.1} µs; fr {:.1} µs ({:.2} × primal); rr {:.1} µs ({:.2} × primal, {:.2} × fr)",
        primal * 1e6,
        fr * 1e6,
        fr / primal,
        rr * 1e6,
        rr / primal,
        rr / fr
    );
}

fn main() {
    let w = black_box(0.0);
    report(
        "particle d/dw naive_euler at w = 0",
        time(|| particle::naive_euler(black_box(w))),
        time(|| particle::naive_euler_derivative(black_box(w))),
        time(|| particle::naive_euler_rr::gradient(black_box(w))),
    );
    let start = [1.0, 1.0];
    let p1 = black_box([1.0, 1.0]);
    report(
        "saddle ∇ max_f at p1 = start = (1, 1)",
        time(|| saddle::max_f(&p1, &start)),
        time(|| saddle::max_f_gradient(&p1, &start)),
        time(|| saddle::max_f_rr::gradient(&p1, &start)),
    );
}
