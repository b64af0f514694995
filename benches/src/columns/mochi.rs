//! The primal column (the plain call of each case's function) and the mochi column
//! (its allocation-free `value_and_gradient_into` companion).

use crate::cases::functions as f;
use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::cell::{gradient_cell, primal_cell, Cell};
use ndarray::{Array1, Array2};
use std::hint::black_box;

fn flat(parts: &[&[f64]]) -> Vec<f64> {
    parts.concat()
}

/// A matrix's entries in logical (row-major) order, as a gradient is flattened.
pub(super) fn flat2(a: &Array2<f64>) -> Vec<f64> {
    a.iter().copied().collect()
}

/// The primal cell of `case`: one plain call of the case's function.
pub fn primal(case: Case, inputs: &Inputs) -> Box<dyn Cell> {
    let i = inputs.clone();
    match case {
        Case::Sum1000 => primal_cell(i.x1000, |x| f::sum_all(x)),
        Case::SumLoop1000 => primal_cell(i.x1000_vec, |x| f::sum_loop(x)),
        Case::SumSin1000 => primal_cell(i.x1000, |x| f::sum_sin(x)),
        Case::SumSinLoop1000 => primal_cell(i.x1000_vec, |x| f::sum_sin_loop(x)),
        Case::KronSum => primal_cell(i.kron, |(a, b)| f::kron_sum(a.view(), b.view())),
        Case::KronViewSum => primal_cell(i.kron_view, |(a, b)| f::kron_view_sum(a, b)),
        Case::NaiveMapSinCosExp => primal_cell(i.x10, |x| f::naive_map_sin_cos_exp(x)),
        Case::MapSinCosExp => primal_cell(i.x10, |x| f::map_sin_cos_exp(x)),
        Case::BroadcastSinCosExp => primal_cell(i.x10, |x| f::broadcast_sin_cos_exp(x)),
        Case::SimpleMlp => primal_cell(i.mlp, |m| f::simple_mlp(&m.w2, &m.w1, &m.y, &m.x)),
        Case::GpLml => primal_cell(i.gp, |g| f::gp_lml(&g.x, &g.y, g.s)),
        Case::TuringBroadcast => primal_cell(i.turing, |t| f::turing_log_joint(&t.theta, &t.data)),
        Case::LargeSingleBlock => primal_cell(i.block, |(x0, a)| {
            f::large_single_block(black_box(*x0), black_box(*a))
        }),
    }
}

/// The mochi cell of `case`: `value_and_gradient_into` with shadow buffers allocated
/// once, outside the timed call, and zeroed (`fill(0.0)`) inside it, since the
/// companion adds into them.
pub fn gradient(case: Case, inputs: &Inputs) -> Box<dyn Cell> {
    let i = inputs.clone();
    match case {
        Case::Sum1000 => {
            let dx = Array1::zeros(i.x1000.raw_dim());
            gradient_cell(
                (i.x1000, dx),
                |(x, dx)| {
                    dx.fill(0.0);
                    f::sum_all::value_and_gradient_into(x, dx)
                },
                |(_, dx)| dx.to_vec(),
            )
        }
        Case::SumLoop1000 | Case::SumSinLoop1000 => {
            let dx = vec![0.0; i.x1000_vec.len()];
            let g = if case == Case::SumLoop1000 {
                f::sum_loop::value_and_gradient_into
            } else {
                f::sum_sin_loop::value_and_gradient_into
            };
            gradient_cell(
                (i.x1000_vec, dx),
                move |(x, dx)| {
                    dx.fill(0.0);
                    g(x, dx)
                },
                |(_, dx)| dx.clone(),
            )
        }
        Case::SumSin1000 => {
            let dx = Array1::zeros(i.x1000.raw_dim());
            gradient_cell(
                (i.x1000, dx),
                |(x, dx)| {
                    dx.fill(0.0);
                    f::sum_sin::value_and_gradient_into(x, dx)
                },
                |(_, dx)| dx.to_vec(),
            )
        }
        Case::KronSum => {
            let (a, b) = i.kron;
            let (da, db) = (Array2::zeros(a.raw_dim()), Array2::zeros(b.raw_dim()));
            gradient_cell(
                (a, b, da, db),
                |(a, b, da, db)| {
                    da.fill(0.0);
                    db.fill(0.0);
                    f::kron_sum::value_and_gradient_into(a.view(), b.view(), (da, db))
                },
                |(_, _, da, db)| flat(&[&flat2(da), &flat2(db)]),
            )
        }
        Case::KronViewSum => {
            let (a, b) = i.kron_view;
            let (da, db) = (Array2::zeros(a.raw_dim()), Array2::zeros(b.raw_dim()));
            gradient_cell(
                (a, b, da, db),
                |(a, b, da, db)| {
                    da.fill(0.0);
                    db.fill(0.0);
                    f::kron_view_sum::value_and_gradient_into(a, b, (da, db))
                },
                |(_, _, da, db)| flat(&[&flat2(da), &flat2(db)]),
            )
        }
        Case::NaiveMapSinCosExp | Case::MapSinCosExp | Case::BroadcastSinCosExp => {
            let dx = Array2::zeros(i.x10.raw_dim());
            let g = match case {
                Case::NaiveMapSinCosExp => f::naive_map_sin_cos_exp::value_and_gradient_into,
                Case::MapSinCosExp => f::map_sin_cos_exp::value_and_gradient_into,
                _ => f::broadcast_sin_cos_exp::value_and_gradient_into,
            };
            gradient_cell(
                (i.x10, dx),
                move |(x, dx)| {
                    dx.fill(0.0);
                    g(x, dx)
                },
                |(_, dx)| flat2(dx),
            )
        }
        Case::SimpleMlp => {
            let m = i.mlp;
            let shadows = [&m.w2, &m.w1, &m.y, &m.x].map(|a| Array2::zeros(a.raw_dim()));
            gradient_cell(
                (m, shadows),
                |(m, [dw2, dw1, dy, dx])| {
                    for d in [&mut *dw2, &mut *dw1, &mut *dy, &mut *dx] {
                        d.fill(0.0);
                    }
                    f::simple_mlp::value_and_gradient_into(
                        &m.w2,
                        &m.w1,
                        &m.y,
                        &m.x,
                        (dw2, dw1, dy, dx),
                    )
                },
                |(_, [dw2, dw1, dy, dx])| flat(&[&flat2(dw2), &flat2(dw1), &flat2(dy), &flat2(dx)]),
            )
        }
        Case::GpLml => {
            let g = i.gp;
            let (dx, dy) = (Array1::zeros(g.x.raw_dim()), Array1::zeros(g.y.raw_dim()));
            gradient_cell(
                (g, dx, dy, 0.0),
                |(g, dx, dy, ds)| {
                    dx.fill(0.0);
                    dy.fill(0.0);
                    *ds = 0.0;
                    f::gp_lml::value_and_gradient_into(&g.x, &g.y, g.s, (dx, dy, ds))
                },
                |(_, dx, dy, ds)| flat(&[&dx.to_vec(), &dy.to_vec(), &[*ds]]),
            )
        }
        Case::TuringBroadcast => {
            let t = i.turing;
            let dtheta = vec![0.0; t.theta.len()];
            // No cotangent flows into the observations (`no_grad`): their shadow stays
            // zero and is never refilled.
            let ddata = vec![0.0; t.data.len()];
            gradient_cell(
                (t, dtheta, ddata),
                |(t, dtheta, ddata)| {
                    dtheta.fill(0.0);
                    f::turing_log_joint::value_and_gradient_into(&t.theta, &t.data, (dtheta, ddata))
                },
                |(_, dtheta, _)| dtheta.clone(),
            )
        }
        Case::LargeSingleBlock => gradient_cell(
            (i.block, [0.0; 2]),
            |((x0, a), d)| {
                *d = [0.0; 2];
                let [dx0, da] = d;
                f::large_single_block::value_and_gradient_into(
                    black_box(*x0),
                    black_box(*a),
                    (dx0, da),
                )
            },
            |(_, d)| d.to_vec(),
        ),
    }
}
