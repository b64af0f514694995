//! Gradient-versus-primal timings of the linear-algebra rules: the log-determinant
//! of a 128 × 128 positive-definite matrix, fused (`logdet`) and composed
//! (`cholesky` then `logdet_cholesky`).
#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use mochi_core::{Call, Pullback};
use mochi_rules_linalg::rules::*;
use ndarray::Array2;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use std::time::Duration;

fn spd(n: usize) -> Array2<f64> {
    let mut rng = StdRng::seed_from_u64(7);
    let a = Array2::from_shape_simple_fn((n, n), || rng.sample::<f64, _>(StandardNormal));
    let mut k = a.dot(&a.t()) / n as f64;
    k.diag_mut().map_inplace(|d| *d += 1.0);
    k
}

fn cholesky_logdet(c: &mut Criterion) {
    let k = spd(128);
    let mut g = c.benchmark_group("cholesky_logdet_128");
    g.bench_function("primal", |b| {
        b.iter(|| {
            let l = mochi_rules_linalg::cholesky(black_box(&k)).unwrap();
            mochi_rules_linalg::logdet_cholesky(&l)
        })
    });
    g.bench_function("gradient_fused", |b| {
        b.iter(|| {
            let (y, pb) = Call((black_box(&k),)).logdet();
            let mut dk = Array2::zeros((0, 0));
            pb.pullback(1.0, (&mut dk,));
            (y.unwrap(), dk)
        })
    });
    g.bench_function("gradient_composed", |b| {
        b.iter(|| {
            let (l, pl) = Call((black_box(&k),)).cholesky();
            let l = l.unwrap();
            let (y, pd) = Call((&l,)).logdet_cholesky();
            let mut dl = Array2::zeros((0, 0));
            pd.pullback(1.0, (&mut dl,));
            let mut dk = Array2::zeros((0, 0));
            pl.pullback(dl, (&mut dk,));
            (y, dk)
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
}

criterion_group! {
    name = benches;
    config = config();
    targets = cholesky_logdet
}
criterion_main!(benches);
