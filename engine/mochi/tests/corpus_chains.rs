//! Iterator chains as Rust users write them — `scan`, `reduce`, `max_by`, `position`,
//! `all`, `if let` over a reduction, chains over rows — each checked by `test_rule`.

#![allow(clippy::needless_range_loop, clippy::ptr_arg)]

mod common;
use mochi::prelude::*;

/// A running sum by `scan`, squared and summed.
#[differentiable]
fn running_sum_scan(x: &[f64]) -> f64 {
    x.iter()
        .scan(0.0, |s, &v| {
            *s += v;
            Some(*s)
        })
        .map(|c| c * c)
        .sum()
}

/// `reduce(f64::max)` of cloned elements.
#[differentiable]
fn reduce_max(x: &[f64]) -> f64 {
    x.iter().cloned().reduce(f64::max).unwrap() * x[0]
}

/// The largest element by `max_by` with `partial_cmp`, dereferenced.
#[differentiable]
fn max_by_partial_cmp(x: &[f64]) -> f64 {
    let m = *x.iter().max_by(|a, b| a.partial_cmp(b).unwrap()).unwrap();
    m * x[1]
}

/// A chain collected into a `Vec`, then summed.
#[differentiable]
fn collect_then_sum(x: &[f64]) -> f64 {
    let y: Vec<f64> = x.iter().map(|v| v.exp()).collect();
    y.iter().sum::<f64>().ln()
}

/// Two `map`s in a row over consecutive pairs.
#[differentiable]
fn double_map(x: &[f64]) -> f64 {
    x.iter()
        .zip(x.iter().skip(1))
        .map(|(a, b)| b - a)
        .map(|d| d * d)
        .sum()
}

/// `fold(0.0, f64::max)` after a `map`.
#[differentiable]
fn map_fold_max(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).fold(0.0, f64::max)
}

/// `filter` on the index of an `enumerate`.
#[differentiable]
fn filter_even_positions(x: &[f64]) -> f64 {
    x.iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, v)| v * v)
        .sum()
}

/// An index found by `position` (no derivative), then read.
#[differentiable]
fn position_then_read(x: &[f64]) -> f64 {
    let k = x.iter().position(|v| *v > 0.0).unwrap_or(0);
    x[k] * 2.0
}

/// `if let Some(m) = chain.reduce(f)`.
#[differentiable]
fn if_let_reduce(x: &[f64]) -> f64 {
    if let Some(m) = x.iter().copied().reduce(f64::min) {
        m * m
    } else {
        0.0
    }
}

/// A range walked backwards in steps of two.
#[differentiable]
fn rev_step_range(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in (0..x.len()).rev().step_by(2) {
        s += x[i] * (i as f64 + 1.0);
    }
    s
}

/// A reversed, skipped sequence zipped with the sequence.
#[differentiable]
fn rev_skip_zip(x: &[f64]) -> f64 {
    x.iter()
        .rev()
        .skip(1)
        .zip(x.iter())
        .map(|(a, b)| a * b)
        .sum()
}

/// An owned copy by `to_vec`, then a chain over it.
#[differentiable]
fn to_vec_chain(x: &[f64]) -> f64 {
    let v = x.to_vec();
    v.iter().map(|t| t.sin()).sum()
}

/// `product` of a `map` whose closure takes `&v`.
#[differentiable]
fn product_of_map(x: &[f64]) -> f64 {
    x.iter().map(|&v| 1.0 + v * v).product::<f64>()
}

/// The product of each chunk, summed.
#[differentiable]
fn chunk_products(x: &[f64]) -> f64 {
    x.chunks(2).map(|c| c.iter().product::<f64>()).sum()
}

/// A chain over rows whose closure runs a chain over the row.
#[differentiable]
fn rows_nested_chain(a: &[Vec<f64>]) -> f64 {
    a.iter()
        .map(|row| row.iter().map(|v| v.exp()).sum::<f64>().ln())
        .sum()
}

/// A fold keeping the largest absolute value.
#[differentiable]
fn fold_abs_max(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |m, &v| m.max(v.abs()))
}

/// A branch on `all` over the sequence.
#[differentiable]
fn branch_on_all(x: &[f64]) -> f64 {
    if x.iter().all(|v| *v > 0.0) {
        x.iter().map(|v| v.ln()).sum()
    } else {
        x.iter().sum()
    }
}

/// A loop over rows, each summed by a chain.
#[differentiable]
fn loop_over_rows(a: &[Vec<f64>]) -> f64 {
    let mut s = 0.0;
    for row in a {
        s += row.iter().sum::<f64>().powi(2);
    }
    s
}

/// Rows zipped with weights in a chain.
#[differentiable]
fn rows_zip_weights(a: &[Vec<f64>], w: &[f64]) -> f64 {
    a.iter().zip(w).map(|(row, wi)| wi * row[0]).sum()
}

/// Min-max scaling with two folds.
#[differentiable]
fn min_max_scale(x: &[f64]) -> f64 {
    let lo = x.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    (x[0] - lo) / (hi - lo)
}

/// A chain over a range `1..n` indexing neighbours.
#[differentiable]
fn range_neighbours(x: &[f64]) -> f64 {
    (1..x.len())
        .map(|i| (x[i] - x[i - 1]).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// Squared distances between paired points, rows zipped with rows.
#[differentiable]
fn paired_distances(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter()
        .zip(b.iter())
        .map(|(p, q)| p.iter().zip(q).map(|(u, v)| (u - v).powi(2)).sum::<f64>())
        .sum()
}

/// Each chunk summed inside the map (`c.iter().sum()`: a sub-slice read in place),
/// collected, then squared.
#[differentiable]
fn chunk_sums_collected(x: &[f64]) -> f64 {
    let v: Vec<f64> = x.chunks(2).map(|c| c.iter().sum()).collect();
    v.iter().map(|t| t * t).sum()
}

/// A literal range's sub-slice as a chain's source, in a loop too.
#[differentiable]
fn literal_subslice_sums(x: &[f64]) -> f64 {
    let head = x[1..3].iter().sum::<f64>();
    let mut t = 0.0;
    for k in 0..2 {
        let s: f64 = x[2 * k..2 * k + 2].iter().map(|v| v * v).sum();
        t += s * head;
    }
    t
}

/// Windows zipped with a sequence, in a chain and in a `for`; chunks zipped in a `for`.
#[differentiable]
fn windows_zipped(x: &[f64], y: &[f64]) -> f64 {
    let a: f64 = x
        .windows(2)
        .zip(y.iter())
        .map(|(w, b)| (w[1] - w[0]) * b)
        .sum();
    let b: f64 = y
        .iter()
        .zip(x.windows(3))
        .map(|(c, w)| c * w.iter().product::<f64>())
        .sum();
    let mut s = 0.0;
    for (c, w) in y.iter().zip(x.chunks(2)) {
        s += c * w.iter().sum::<f64>();
    }
    a + b + s
}

/// Tuples collected into a `Vec<(f64, f64)>`, then read by `|(a, b)|`, `|&(s, c)|` and
/// `p.0 * p.1` in a fold.
#[differentiable]
fn tuple_elements(x: &[f64]) -> f64 {
    let pairs: Vec<(f64, f64)> = x
        .iter()
        .zip(x.iter().skip(1))
        .map(|(a, b)| (*a, *b))
        .collect();
    let trig: Vec<(f64, f64)> = x.iter().map(|v| (v.sin(), v.cos())).collect();
    pairs.iter().map(|(a, b)| a * b).sum::<f64>()
        + trig.iter().map(|&(s, c)| s * c).sum::<f64>()
        + pairs.iter().fold(0.0, |acc, p| acc + p.0 * p.1 * p.1)
}

/// A softplus helper, passed by name to `map` and called in a closure over copied
/// elements.
#[differentiable]
fn softplus(v: f64) -> f64 {
    v.exp().ln_1p()
}

/// `copied().map(softplus)`, `copied().map(|v| softplus(v) * v)`, `cloned()`.
#[differentiable]
fn helper_by_name(x: &[f64]) -> f64 {
    let a: f64 = x.iter().copied().map(softplus).sum();
    let b: f64 = x.iter().copied().map(|v| softplus(v) * v).sum();
    let c: Vec<f64> = x.iter().cloned().map(softplus).collect();
    let owned = x.to_vec();
    let d: f64 = owned.into_iter().map(softplus).sum();
    // A local closure typed by value, passed by name.
    let g = |v: f64| v.cos() * v;
    let e: f64 = x.iter().copied().map(g).sum();
    let f: f64 = x.to_vec().iter().copied().map(g).sum();
    a + b + c[0] * c[1] + d * d + e * f
}

/// `min_by` and `max_by` comparing a key (the distance to `c`, the magnitude), the
/// nearest-neighbour idiom: the ordering carries no derivative, the chosen element does.
#[differentiable]
fn keyed_extremes(x: &[f64], c: f64) -> f64 {
    let near = *x
        .iter()
        .min_by(|a, b| (*a - c).abs().partial_cmp(&(*b - c).abs()).unwrap())
        .unwrap();
    let big = x
        .iter()
        .copied()
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))
        .unwrap();
    near * c + big * big
}

/// A chain held in a name and walked twice, the first time by `clone()`.
#[differentiable]
fn held_chain_cloned(x: &[f64]) -> f64 {
    let pairs = x.iter().zip(x.iter().skip(1));
    let s: f64 = pairs.clone().map(|(p, q)| p * q).sum();
    s + pairs.map(|(p, q)| (p - q).sin()).sum::<f64>()
}

/// An array made from a chain collected where the constructor takes a `Vec`.
#[differentiable]
fn from_vec_of_chain(x: &[f64]) -> f64 {
    let e = ndarray::Array1::from_vec(x.iter().map(|t| t.exp()).collect());
    let w = ndarray::Array1::from_vec(x.to_vec());
    e.dot(&w) / e.sum()
}

/// Halves of each piece, by sub-slices of the piece, collected as rows.
#[differentiable]
fn piece_halves(x: &[f64]) -> f64 {
    let b = 2;
    let front: Vec<Vec<f64>> = x.chunks(2 * b).map(|s| s[..b].to_vec()).collect();
    let back: Vec<Vec<f64>> = x.chunks(2 * b).map(|s| s[b..].to_vec()).collect();
    front[0][1] * back[1][0] + front[1][0].sin() * back[0][1]
}

/// A recurrence folded over pieces.
#[differentiable]
fn fold_over_pieces(x: &[f64]) -> f64 {
    x.chunks(2).fold(0.5, |h, wb| (wb[0] * h + wb[1]).tanh())
}

/// Constant weights zipped with the pieces of a sub-slice, folded from its first element.
#[differentiable]
fn zipped_subslice_pieces(x: &[f64]) -> f64 {
    let w = [1.0, -0.5];
    w.iter()
        .zip(x[1..].chunks(2))
        .fold(x[0], |h, (k, wb)| (k * wb[0] * h + wb[1]).tanh())
}

/// Two `Vec`s joined by `into_iter().chain(..)` and by `extend` (of a `Vec`, of a chain
/// held in a name).
#[differentiable]
fn joined(x: &[f64]) -> f64 {
    let a: Vec<f64> = x.iter().map(|v| v * v).collect();
    let b = vec![x[0].sin(), x[1]];
    let mut c: Vec<f64> = a.into_iter().chain(b).collect();
    let d = vec![x[2].cos()];
    c.extend(d);
    c.extend(x.iter());
    // (A chain held in a name extends as the chain.)
    let sines = x.iter().map(|v| v.sin());
    c.extend(sines);
    c.iter()
        .enumerate()
        .map(|(i, v)| (i as f64 + 1.0) * v)
        .sum()
}

/// Features by `flat_map` into arrays, then neighbour products and one total, each
/// `chain`ed on (`std::iter::once`): a `Vec` result.
#[differentiable]
fn flattened_then_chained(x: &[f64]) -> Vec<f64> {
    x.iter()
        .flat_map(|&v| [v.sin(), v.cos()])
        .chain(x.windows(2).map(|w| w[0] * w[1]))
        .chain(std::iter::once(x.iter().sum::<f64>().tanh()))
        .collect()
}

/// A flattened part between two others (a copied slice, a `Vec`), collected and
/// weighted by position.
#[differentiable]
fn flattened_between(x: &[f64], y: &[f64]) -> f64 {
    let v: Vec<f64> = y
        .iter()
        .copied()
        .chain(x.iter().flat_map(|v| vec![v * v, v.exp()]))
        .chain(x.to_vec())
        .collect();
    v.iter()
        .enumerate()
        .map(|(i, a)| (i as f64 + 1.0) * a.sin())
        .sum()
}

/// Least squares, each residual a closure over its sample point, the powers of the
/// point from `std::iter::successors` held in a name and zipped with the
/// coefficients; and a sequence's first two values zipped (`take(2)`) in place.
#[differentiable]
fn powers_by_successors(x: &[f64], n: usize) -> f64 {
    let residual = |t: f64| {
        let powers = std::iter::successors(Some(1.0), move |p| Some(p * t));
        t.sin() - x.iter().zip(powers).map(|(c, p)| c * p).sum::<f64>()
    };
    let first: f64 = x
        .iter()
        .zip(std::iter::successors(Some(x[1]), |p| Some(p * 0.5)).take(2))
        .map(|(c, p)| c * p)
        .sum();
    0.5 * (0..n)
        .map(|i| residual(i as f64 / n as f64).powi(2))
        .sum::<f64>()
        + first.powi(2)
}

/// The last running sum by `scan(..).last().unwrap()`, squared.
#[differentiable]
fn last_of_scan(x: &[f64]) -> f64 {
    let total = x
        .iter()
        .scan(0.0, |acc, &v| {
            *acc = 0.5 * *acc + v;
            Some(*acc)
        })
        .last()
        .unwrap();
    total.powi(2) + total.sin()
}

/// Squares of the entries, as a helper's `Vec`.
#[differentiable]
fn squares(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| v * v).collect()
}

/// Elements read from a helper's result in the same expression (`last().copied()
/// .unwrap_or(..)`, `*first().unwrap()`, `get(1).copied().unwrap()`), and a buffer
/// extended by helpers' results.
#[differentiable]
fn read_from_calls(x: &[f64]) -> f64 {
    let ends = squares(x).last().copied().unwrap_or(0.0) * *squares(x).first().unwrap();
    let second = squares(&x[1..]).get(1).copied().unwrap();
    let mut all = Vec::new();
    all.extend(squares(x));
    all.extend(squares(&x[2..]));
    ends + second + all.iter().map(|v| v.sqrt().sin()).sum::<f64>()
}

/// A state `Vec` folded over steps, each step collected from a chain over the state.
#[differentiable]
fn fold_collecting(x: &[f64]) -> f64 {
    let out = (0..3).fold(x.to_vec(), |h, _| {
        h.iter().map(|v| v.tanh() + 0.1).collect()
    });
    out.iter().map(|v| v * v).sum()
}

/// A struct of rows.
#[derive(Clone, Debug, Tangent)]
struct Rows {
    head: Vec<f64>,
    rows: Vec<Vec<f64>>,
}

/// A struct whose field is collected from the pieces of a sub-slice.
#[differentiable]
fn rows_field(z: &[f64]) -> f64 {
    let r = Rows {
        head: z[..2].to_vec(),
        rows: z[2..].chunks(2).map(|c| c.to_vec()).collect(),
    };
    r.head[0] * r.rows[1][1] + r.rows[0][0] * r.head[1].exp()
}

const BATCHES: [[f64; 3]; 4] = [
    [0.5, 1.2, 1.0],
    [-0.3, 0.8, 0.0],
    [1.1, -0.4, 1.0],
    [0.2, 0.3, 0.0],
];

/// Two steps of minibatch descent over the pieces of a `const` table.
#[differentiable]
fn minibatches_of_a_constant(x: &[f64]) -> f64 {
    let mut w = x.to_vec();
    for batch in BATCHES.chunks(2) {
        let mut g = [0.0; 3];
        for row in batch {
            let e = (w[0] * row[0] + w[1] * row[1] + w[2]).tanh() - row[2];
            g[0] += e * row[0];
            g[1] += e * row[1];
            g[2] += e;
        }
        for (wi, gi) in w.iter_mut().zip(g.iter()) {
            *wi -= 0.3 * gi;
        }
    }
    w[0] * w[2] + w[1].sin()
}

mod checked_chains {
    use crate::check;

    check!(helper_by_name, (x5(),), |a| (&a.0));
    check!(keyed_extremes, (x5(), 0.45_f64), |a| (&a.0, a.1));

    check!(chunk_sums_collected, (x5(),), |a| (&a.0));
    check!(literal_subslice_sums, (x5(),), |a| (&a.0));
    check!(windows_zipped, (x5(), vec![0.7, -0.2, 1.3, 0.4]), |a| (
        &a.0, &a.1
    ));
    check!(tuple_elements, (x5(),), |a| (&a.0));

    fn x5() -> Vec<f64> {
        vec![0.5, -1.2, 0.3, 1.7, -0.4]
    }
    fn rows() -> Vec<Vec<f64>> {
        vec![vec![0.5, -0.3, 0.2], vec![1.1, 0.4, -0.7]]
    }

    check!(running_sum_scan, (x5(),), |a| (&a.0));
    check!(reduce_max, (x5(),), |a| (&a.0));
    check!(max_by_partial_cmp, (x5(),), |a| (&a.0));
    check!(collect_then_sum, (x5(),), |a| (&a.0));
    check!(double_map, (x5(),), |a| (&a.0));
    check!(map_fold_max, (x5(),), |a| (&a.0));
    check!(filter_even_positions, (x5(),), |a| (&a.0));
    check!(position_then_read, (x5(),), |a| (&a.0));
    check!(if_let_reduce, (x5(),), |a| (&a.0));
    check!(rev_step_range, (x5(),), |a| (&a.0));
    check!(rev_skip_zip, (x5(),), |a| (&a.0));
    check!(to_vec_chain, (x5(),), |a| (&a.0));
    check!(product_of_map, (x5(),), |a| (&a.0));
    check!(chunk_products, (x5(),), |a| (&a.0));
    check!(rows_nested_chain, (rows(),), |a| (&a.0));
    check!(fold_abs_max, (x5(),), |a| (&a.0));
    check!(branch_on_all, (vec![0.5_f64, 1.2, 0.3],), |a| (&a.0));
    check!(loop_over_rows, (rows(),), |a| (&a.0));
    check!(rows_zip_weights, (rows(), vec![0.3_f64, -0.7]), |a| (
        &a.0, &a.1
    ));
    check!(min_max_scale, (x5(),), |a| (&a.0));
    check!(
        paired_distances,
        (rows(), vec![vec![0.1_f64, 0.2, -0.3], vec![-0.4, 0.9, 0.6]]),
        |a| (&a.0, &a.1)
    );
    check!(range_neighbours, (x5(),), |a| (&a.0));
    check!(held_chain_cloned, (x5(),), |a| (&a.0));
    check!(from_vec_of_chain, (x5(),), |a| (&a.0));
    check!(
        piece_halves,
        (vec![0.5_f64, -1.2, 0.3, 1.7, -0.4, 0.9, 1.3, -0.6],),
        |a| (&a.0)
    );
    check!(fold_over_pieces, (vec![0.5_f64, -1.2, 0.3, 1.7],), |a| (&a
        .0));
    check!(zipped_subslice_pieces, (x5(),), |a| (&a.0));
    check!(joined, (x5(),), |a| (&a.0));
    check!(last_of_scan, (x5(),), |a| (&a.0));
    check!(read_from_calls, (vec![0.5_f64, 1.2, 0.3, 1.7, 0.4],), |a| {
        (&a.0)
    });
    check!(fold_collecting, (x5(),), |a| (&a.0));
    check!(
        rows_field,
        (vec![0.5_f64, -1.2, 0.3, 1.7, -0.4, 0.9],),
        |a| (&a.0)
    );
    check!(powers_by_successors, (x5(), 5_usize), |a| (&a.0, a.1));
    check!(flattened_then_chained, (x5(),), |a| (&a.0));
    check!(flattened_between, (x5(), vec![0.2_f64, 0.5]), |a| (
        &a.0, &a.1
    ));
    check!(
        minibatches_of_a_constant,
        (vec![0.3_f64, -0.2, 0.5],),
        |a| (&a.0)
    );
}
