//! Gradient-versus-primal timings of the ndarray rules (the cases of
//! `shared/bench-cases.md` that one rule decides): `sum` of 1000 elements against
//! its floor (sum + fill), a matrix product's gradient against the product, and
//! `kron` then `sum`.
#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use mochi_core::{Call, Pullback, Tangent};
use mochi_rules_ndarray::rules::*;
use ndarray::{Array, Array1, Array2, Ix2};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use std::time::Duration;

fn random(shape: (usize, usize), seed: u64) -> Array2<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    Array::from_shape_simple_fn(shape, || rng.sample(StandardNormal))
}

fn sum_1000(c: &mut Criterion) {
    let x: Array1<f64> = random((1, 1000), 1).into_shape_with_order(1000).unwrap();
    let mut g = c.benchmark_group("sum_1000");
    g.bench_function("primal", |b| b.iter(|| black_box(&x).sum()));
    g.bench_function("floor", |b| {
        b.iter(|| (black_box(&x).sum(), Array1::from_elem(1000, 1.0)))
    });
    g.bench_function("gradient", |b| {
        b.iter(|| {
            let (y, pb) = Call((black_box(&x),)).sum();
            let mut dx = Array1::zeros(0);
            pb.pullback(1.0, (&mut dx,));
            // `sum` leaves a broadcast form: write the dense gradient out.
            Tangent::densify(black_box(&x), &mut dx);
            (y, dx)
        })
    });
    g.finish();
}

fn matmul(c: &mut Criterion) {
    let a = random((128, 256), 2);
    let b = random((256, 128), 3);
    let dc = random((128, 128), 4);
    let mut g = c.benchmark_group("matmul_128x256x128");
    g.bench_function("primal", |bch| {
        bch.iter(|| black_box(&a).dot(black_box(&b)))
    });
    g.bench_function("gradient", |bch| {
        bch.iter_batched(
            || dc.clone(),
            |dc| {
                let (y, pb) = Call((black_box(&a), black_box(&b))).dot();
                let (mut da, mut db) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
                pb.pullback(dc, (&mut da, &mut db));
                (y, da, db)
            },
            // One input at a time: a batch would keep every output alive and make each
            // call fault fresh pages in, which the primal does not pay.
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn kron_sum(c: &mut Criterion) {
    let a = random((20, 20), 5);
    let b = random((40, 40), 6);
    let mut g = c.benchmark_group("kron_sum");
    g.bench_function("primal", |bch| {
        bch.iter(|| ndarray::linalg::kron(black_box(&a), black_box(&b)).sum())
    });
    g.bench_function("gradient", |bch| {
        bch.iter(|| {
            let (k, pk) = Call((black_box(&a), black_box(&b))).kron();
            let (s, ps) = Call((&k,)).sum();
            let mut dk = Array::zeros(Ix2(0, 0));
            ps.pullback(1.0, (&mut dk,));
            let (mut da, mut db) = (Array2::zeros((0, 0)), Array2::zeros((0, 0)));
            pk.pullback(dk, (&mut da, &mut db));
            (s, da, db)
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
    targets = sum_1000, matmul, kron_sum
}
criterion_main!(benches);
