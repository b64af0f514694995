//! Timing one case: its primal and every gradient cell sampled interleaved in one
//! process, warm-up first, batches sized to a target duration, medians of many samples.

use crate::cell::Cell;
use std::time::{Duration, Instant};

/// How long to sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Warm-up per routine (at least two calls).
    pub warmup: Duration,
    /// Sampling time per routine.
    pub per_routine: Duration,
    /// Target duration of one batch (one sample); a batch is at least one call.
    pub batch: Duration,
    /// Samples per routine at least, whatever the time.
    pub min_samples: usize,
    /// Samples per routine at most.
    pub max_samples: usize,
}

impl Budget {
    /// The full run.
    pub const FULL: Budget = Budget {
        warmup: Duration::from_millis(150),
        per_routine: Duration::from_millis(1500),
        batch: Duration::from_millis(2),
        min_samples: 9,
        max_samples: 500,
    };
    /// `--quick`: for CI.
    pub const QUICK: Budget = Budget {
        warmup: Duration::from_millis(30),
        per_routine: Duration::from_millis(250),
        batch: Duration::from_millis(1),
        min_samples: 5,
        max_samples: 150,
    };
}

/// The samples of one routine, in nanoseconds per call.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    /// One entry per batch.
    pub ns_per_call: Vec<f64>,
    /// Calls per batch.
    pub batch_calls: u64,
}

impl Samples {
    /// The `q`-quantile (0 ≤ q ≤ 1), linearly interpolated.
    pub fn quantile(&self, q: f64) -> f64 {
        quantile(&self.ns_per_call, q)
    }
    /// The median time per call.
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }
    /// The spread: interquartile range over the median.
    pub fn spread(&self) -> f64 {
        (self.quantile(0.75) - self.quantile(0.25)) / self.median()
    }
}

/// The `q`-quantile of `values`, linearly interpolated; NaN when empty.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Samples `routines` (the primal first) interleaved: each round runs one batch of
/// every routine that still needs samples, starting at a different routine each
/// round. The primal keeps sampling while any gradient does. `tick` is called after
/// every batch with the fraction of this case done.
pub fn sample(
    routines: &mut [Box<dyn Cell>],
    budget: Budget,
    mut tick: impl FnMut(f64),
) -> Vec<Samples> {
    let n = routines.len();
    // Warm-up, and the cost of one call.
    let per_call: Vec<f64> = routines
        .iter_mut()
        .map(|r| {
            let start = Instant::now();
            let mut calls = 0u64;
            while calls < 2 || start.elapsed() < budget.warmup {
                r.run(1);
                calls += 1;
            }
            start.elapsed().as_nanos() as f64 / calls as f64
        })
        .collect();
    let batch_calls: Vec<u64> = per_call
        .iter()
        .map(|&t| ((budget.batch.as_nanos() as f64 / t).floor() as u64).clamp(1, 1 << 24))
        .collect();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut spent = vec![Duration::ZERO; n];
    let wants = |k: usize, samples: &[Vec<f64>], spent: &[Duration]| {
        samples[k].len() < budget.max_samples
            && (samples[k].len() < budget.min_samples || spent[k] < budget.per_routine)
    };
    let progress = |samples: &[Vec<f64>], spent: &[Duration]| {
        (0..n)
            .map(|k| {
                let by_time = spent[k].as_secs_f64() / budget.per_routine.as_secs_f64();
                let by_count = samples[k].len() as f64 / budget.max_samples as f64;
                let by_min = samples[k].len() as f64 / budget.min_samples as f64;
                by_time
                    .max(by_count)
                    .min(1.0)
                    .max(by_min.min(1.0) * by_time.min(1.0))
                    .min(1.0)
            })
            .sum::<f64>()
            / n as f64
    };
    let mut round = 0usize;
    loop {
        let gradients_active = (1..n).any(|k| wants(k, &samples, &spent));
        let primal_active = samples[0].len() < budget.max_samples
            && (gradients_active || wants(0, &samples, &spent));
        if !gradients_active && !primal_active {
            break;
        }
        for step in 0..n {
            let k = (round + step) % n;
            let active = if k == 0 {
                primal_active
            } else {
                wants(k, &samples, &spent)
            };
            if !active {
                continue;
            }
            let start = Instant::now();
            routines[k].run(batch_calls[k]);
            let elapsed = start.elapsed();
            spent[k] += elapsed;
            samples[k].push(elapsed.as_nanos() as f64 / batch_calls[k] as f64);
            tick(progress(&samples, &spent));
        }
        round += 1;
    }
    samples
        .into_iter()
        .zip(batch_calls)
        .map(|(ns_per_call, batch_calls)| Samples {
            ns_per_call,
            batch_calls,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::primal_cell;

    #[test]
    fn quantiles_interpolate() {
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn every_routine_gets_at_least_min_samples() {
        let budget = Budget {
            warmup: Duration::ZERO,
            per_routine: Duration::ZERO,
            batch: Duration::from_micros(10),
            min_samples: 4,
            max_samples: 10,
        };
        let mut routines = vec![
            primal_cell(0.0_f64, |x| *x + 1.0),
            primal_cell(1.0_f64, |x| x.sin()),
        ];
        let mut ticks = 0;
        let samples = sample(&mut routines, budget, |f| {
            assert!((0.0..=1.0).contains(&f));
            ticks += 1;
        });
        assert_eq!(samples.len(), 2);
        for s in &samples {
            assert_eq!(s.ns_per_call.len(), 4);
            assert!(s.batch_calls >= 1);
        }
        assert_eq!(ticks, 8);
    }
}
