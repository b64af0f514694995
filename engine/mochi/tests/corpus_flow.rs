//! Control flow written the way Rust users write it, around values with a derivative:
//! labelled blocks with `break 'label value`, a valued `loop` on the right of `+=`,
//! closures with an early `return` inside iterator chains, closures that call closures,
//! an element borrowed `let v = &x[i]` and read as `*v` in a condition, and a count of
//! filtered elements as a float. And names: a closure's captured variable bound again or
//! assigned after the closure (a `move` closure keeps the value it captured), a chunk
//! size assigned inside its loop, a closure parameter or a `for` pattern that reuses
//! the name of a sequence the chain still reads. Each is checked by `test_rule` (finite
//! differences, the adjoint identity, accumulation), and the Hessians against finite
//! differences of the gradient. The argmin/argmax of `enumerate().min_by(..)` and
//! the element there; windows zipped with windows (the trapezoidal rule); `filter_map`
//! (with `then`/`then_some`, and in a `for`); values whose branch `continue`s or
//! `break`s after a statement; a `let y;` assigned later; a chain kept in a local;
//! `find(..).unwrap()` and `filter(..).last().unwrap()`; `flatten`/`flat_map` over
//! rows, and labelled loops over them.

#![allow(
    clippy::needless_range_loop,
    clippy::never_loop,
    clippy::useless_vec,
    clippy::filter_map_bool_then,
    clippy::needless_late_init,
    clippy::double_ended_iterator_last,
    clippy::filter_next
)]

mod common;
use mochi::prelude::*;
use ndarray::Array2;

/// A labelled block whose value comes from a `break 'r value` or from its tail.
#[differentiable]
fn labelled_block(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in (0..x.len()).rev() {
        let v = &x[i];
        let t = 'r: {
            if *v < 0.0 {
                break 'r 0.5 * v;
            }
            v * v
        };
        s += t * s + 1.0;
    }
    s
}

/// A labelled block without a value, left early.
#[differentiable]
fn labelled_block_left_early(x: &[f64], a: f64) -> f64 {
    let mut s = 0.0;
    'blk: {
        if a < 0.0 {
            break 'blk;
        }
        s = a * x[0];
        if s > 10.0 {
            break 'blk;
        }
        s *= x[1];
    }
    s + x[1]
}

/// `s += 'r: loop { … }` and `s *= loop { … }`: a valued loop on the right of a
/// compound assignment.
#[differentiable]
fn loop_value_compound(x: &[f64]) -> f64 {
    let mut s = 1.0;
    for i in 0..x.len() {
        s += 'r: loop {
            if x[i] < 0.0 {
                break 'r 0.0;
            }
            break 'r x[i] * x[i];
        };
    }
    s *= loop {
        if x[0] > 5.0 {
            break 1.0;
        }
        break x[0].sin();
    };
    s
}

/// Closures with an early `return` in chains the desugaring writes as loops.
#[differentiable]
fn closure_return_rev(x: &[f64]) -> f64 {
    x.iter()
        .rev()
        .map(|v| {
            if *v < 0.0 {
                return 0.25 * v;
            }
            v * v
        })
        .sum::<f64>()
}

#[differentiable]
fn closure_return_skip_collect(x: &[f64]) -> f64 {
    let y: Vec<f64> = x
        .iter()
        .skip(1)
        .map(|&v| {
            if v > 1.0 {
                return v.ln();
            }
            v * 2.0
        })
        .collect();
    y.iter().sum::<f64>() * x[0]
}

/// A closure that calls another closure, inside an arithmetic expression.
#[differentiable]
fn nested_closures(x: f64, y: f64) -> f64 {
    let f = |a: f64| a * y;
    let g = |b: f64| f(b) + f(b * b);
    g(x) * g(y) + 1.0
}

/// An element borrowed and read through `*v` in conditions and as a value.
#[differentiable]
fn borrowed_element(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let v = &x[i];
        s += if *v < 0.0 {
            0.5 * v
        } else {
            v * v + (*v).sin() + v.cos()
        };
    }
    s
}

/// The mean of the positive elements: a filtered count, cast to a float.
#[differentiable]
fn mean_of_positive(x: &[f64]) -> f64 {
    let n = x.iter().filter(|v| **v > 0.0).count() as f64;
    let s: f64 = x.iter().filter(|v| **v > 0.0).sum();
    s / n
}

/// The closure reads the `w` it captured, not the `w` bound after it.
#[differentiable]
fn closure_then_shadow(x: f64) -> f64 {
    let w = x;
    let g = |a: f64| a * w;
    let w = x * 10.0;
    g(1.0) + w
}

/// The same, the closure passed to an adapter after the shadowing.
#[differentiable]
fn shadow_then_adapter(x: &[f64]) -> f64 {
    let s = x[0];
    let g = |a: &f64| a * s;
    let s = 100.0;
    x.iter().map(g).sum::<f64>() + s
}

/// A parameter captured, then shadowed by a constant.
#[differentiable]
fn shadow_param(x: f64, y: f64) -> f64 {
    let g = |a: f64| a * x;
    let x = 5.0;
    g(y) + x
}

/// A `move` closure keeps the value it captured; the variable changes after.
#[differentiable]
fn move_closure(x: f64) -> f64 {
    let mut w = x;
    let g = move |a: f64| a * w;
    w *= 3.0;
    g(2.0) * w
}

/// The captured `k` shadowed inside the loop that calls the closure.
#[differentiable]
fn closure_in_loop_shadow(x: &[f64]) -> f64 {
    let k = x[0];
    let g = |a: f64| a * k;
    let mut s = 0.0;
    for i in 0..x.len() {
        let k = i as f64;
        s += g(x[i]) + k;
    }
    s
}

/// A closure with an early `return`, called twice.
#[differentiable]
fn local_closure_return(x: f64, y: f64) -> f64 {
    let g = |a: f64| {
        if a < 0.0 {
            return 0.0;
        }
        a.sqrt()
    };
    g(x) + g(y) * 10.0
}

/// `chunks(m)` fixes its size when the loop begins; the body assigns `m`.
#[differentiable]
fn chunks_size_assigned(x: &[f64]) -> f64 {
    let mut m = 2;
    let mut s = 0.0;
    for c in x.chunks(m) {
        s += c[0] * c[c.len() - 1];
        m = 3;
    }
    s + m as f64
}

/// `windows(m)` likewise, the body reading `w[m - 1]` with the new `m`.
#[differentiable]
fn windows_size_assigned(x: &[f64]) -> f64 {
    let mut m = 2;
    let mut s = 0.0;
    for w in x.windows(m) {
        s += w[0] * w[m - 1];
        m = 1;
    }
    s
}

/// `for (y, x) in x.iter().zip(y.iter())`: the names swapped.
#[differentiable]
fn for_zip_swapped(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (y, x) in x.iter().zip(y.iter()) {
        s += y * y - x;
    }
    s
}

/// Chain closures whose parameters reuse the sequences' names.
#[differentiable]
fn chain_params_reuse_names(x: &[f64], y: &[f64]) -> f64 {
    let a = x
        .iter()
        .map(|x| x * 2.0)
        .zip(y.iter())
        .map(|(a, b)| a * b * x[0])
        .sum::<f64>();
    let b = x
        .iter()
        .rev()
        .zip(y.iter())
        .map(|(y, x)| y * y - x)
        .sum::<f64>();
    a + b
}

/// `a %= b`.
#[differentiable]
fn rem_assign(x: f64) -> f64 {
    let mut a = x * 3.0;
    a %= 0.5;
    a * x
}

/// `let y = if c { a } else { return 0.0; };`
#[differentiable]
fn let_if_returns(x: f64, y: f64) -> f64 {
    let t = if x > 0.0 {
        x * y
    } else {
        return y * 0.5;
    };
    t * t
}

/// `let y = match k { 0 => return x, _ => e };` and a `continue` in a `let`'s `if`.
#[differentiable]
fn let_match_returns(x: &[f64], k: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let v = if x[i] > 0.0 { x[i].ln() } else { continue };
        s += v * x[0];
    }
    let y = match k {
        0 => return s,
        _ => s * s,
    };
    y + x[1]
}

/// `let a = *v;` copies; a closure called with `*v` inside an adapter.
#[differentiable]
fn deref_copies(x: &[f64], w: f64) -> f64 {
    let v = &x[0];
    let a = *v;
    let b: f64 = *v * 2.0;
    let g = |t: f64| t * w;
    a * b + x.iter().map(|v| g(*v)).sum::<f64>()
}

/// A part of `split_at` read inside `vec![..]`.
#[differentiable]
fn split_part_in_vec(x: &[f64]) -> f64 {
    let (a, b) = x.split_at(2);
    let z = vec![b[0] * 10.0, a[1]];
    a[0] * z[0] + z[1] * z[1]
}

/// A constant weight vector built with `array!`, dotted with the argument.
#[differentiable]
fn constant_weights_dot(x: &ndarray::Array1<f64>) -> f64 {
    let w = ndarray::array![1.0, -2.0, 0.5];
    x.dot(&w) * x[0]
}

/// `vec![e; n]` of a differentiable `e`.
#[differentiable]
fn repeated_in_vec(x: &[f64]) -> f64 {
    let z = vec![x[0] * 10.0; 3];
    let mut s = 0.0;
    for i in 0..z.len() {
        s += z[i] * x[1 + i % 2];
    }
    s
}

/// An integer literal with a float suffix (`3_f64`, `2f64`).
#[differentiable]
fn float_suffixed_integers(x: f64) -> f64 {
    3_f64 * x * x.powf(2f64)
}

/// Constant arrays shaped like a differentiable one: `Array2::eye(a.nrows())`,
/// `Array2::from_shape_fn(a.dim(), ..)`.
#[differentiable]
fn shaped_constants(a: &ndarray::Array2<f64>) -> f64 {
    let n = a.nrows();
    let e: ndarray::Array2<f64> = ndarray::Array2::eye(n);
    let w = ndarray::Array2::from_shape_fn(a.dim(), |(i, j)| (i + 2 * j) as f64);
    ((a + &e) * &w).sum() + (a * a).sum()
}

/// A closure called inside an adapter's closure, in a product with the element.
#[differentiable]
fn closure_call_in_product(x: &[f64], w: f64) -> f64 {
    let g = |a: f64| a * w;
    x.iter().map(|v| g(*v) * v).sum::<f64>()
}

/// The argmin of a sequence and the element there:
/// `let (i, m) = x.iter().enumerate().min_by(..).unwrap();`.
#[differentiable]
fn argmin_pair(x: &[f64]) -> f64 {
    let (i, m) = x
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.partial_cmp(b.1).unwrap())
        .unwrap();
    *m * (i as f64 + 1.0)
}

/// The argmax by `total_cmp`, the element bound by value (`&m`).
#[differentiable]
fn argmax_pair(x: &[f64]) -> f64 {
    let (i, &m) = x
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap();
    m * m * (i as f64 + 1.0)
}

/// The index alone (`.0`), over a copied chain, used to read another sequence; and the
/// nearest of several centres, k-means style.
#[differentiable]
fn argmin_index(x: &[f64], y: &[f64]) -> f64 {
    let j = x
        .iter()
        .copied()
        .enumerate()
        .min_by(|(_, a), (_, b)| a.partial_cmp(b).unwrap())
        .unwrap()
        .0;
    let mut d = vec![0.0; y.len()];
    for k in 0..y.len() {
        d[k] = (x[0] - y[k]) * (x[0] - y[k]);
    }
    let (_, nearest) = d
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.partial_cmp(b.1).unwrap())
        .unwrap();
    y[j] * x[j] + nearest.sqrt()
}

/// The trapezoidal rule over two zipped window sequences, as a chain and as a loop.
#[differentiable]
fn trapezoid_chain(xs: &[f64], ys: &[f64]) -> f64 {
    xs.windows(2)
        .zip(ys.windows(2))
        .map(|(x, y)| (x[1] - x[0]) * (y[0] + y[1]) / 2.0)
        .sum::<f64>()
}

#[differentiable]
fn trapezoid_loop(xs: &[f64], ys: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in xs.windows(2).zip(ys.chunks(1)) {
        s += (x[1] - x[0]) * y[0] * y[0];
    }
    s
}

/// A compound assignment whose right side a chain rewrite turns into a block (a
/// closure with a statement): found by the generator, seed 42.
#[differentiable]
fn chain_block_added(x: &[f64], a: f64) -> f64 {
    let mut s = a * a;
    s += (0..x.len())
        .map(|i| {
            let xi = x[i];
            xi.tanh() * (i as f64) * a
        })
        .sum::<f64>();
    s
}

/// `filter_map` with `if … { Some(e) } else { None }`, summed.
#[differentiable]
fn filter_map_sum(x: &[f64]) -> f64 {
    x.iter()
        .filter_map(|v| if *v > 0.0 { Some(v * v) } else { None })
        .sum()
}

/// `filter_map` with `bool::then_some` after a `map`, and `bool::then` after
/// `enumerate`, into a `fold`.
#[differentiable]
fn filter_map_then(x: &[f64], a: f64) -> f64 {
    let logs = x
        .iter()
        .map(|v| v * a)
        .filter_map(|v| (v > 0.1).then_some(v.ln()))
        .sum::<f64>();
    let prod = x
        .iter()
        .enumerate()
        .filter_map(|(i, v)| (i % 2 == 0).then(|| v.sin()))
        .fold(1.0, |acc, s| acc * (1.0 + s));
    logs + prod
}

/// A `for` over `filter` and `filter_map`, whose closure `return`s `None` from a
/// `match` arm.
#[differentiable]
fn for_filter_map(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for y in x
        .iter()
        .zip(w.iter())
        .filter(|(a, _)| **a > -0.5)
        .filter_map(|(a, b)| match *a > *b {
            true => Some(a - b),
            false => {
                if *b > 2.0 {
                    return None;
                }
                Some(b * b)
            }
        })
    {
        s += y * y;
    }
    s
}

/// A value whose branch leaves after a statement: `match` arms and nested `if`s with
/// a `continue` before the value.
#[differentiable]
fn value_after_continue(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let t = match i % 3 {
            0 => {
                if x[i] < -0.5 {
                    continue;
                }
                x[i].exp()
            }
            1 => x[i] * s,
            _ => {
                let u = x[i] * x[i];
                if u > 3.0 {
                    if x[i] > 0.0 {
                        break;
                    }
                    u.sqrt()
                } else {
                    u + 1.0
                }
            }
        };
        s += t;
    }
    s
}

/// `let y;` assigned later in branches, one of which `continue`s first.
#[differentiable]
fn deferred_let(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let y: f64;
        if x[i] > 0.0 {
            y = x[i] * 2.0;
        } else {
            if x[i] < -0.5 {
                continue;
            }
            let t = x[i] * x[i];
            y = t.sin();
        }
        s += y * x[0];
    }
    s
}

/// Chains kept in locals, then used once: in a `for`, and consumed by `sum`.
#[differentiable]
fn stored_chains(x: &[f64], w: &[f64]) -> f64 {
    let pairs = x.iter().zip(w.iter()).filter(|(a, _)| **a > -0.5);
    let mut s = 0.0;
    for (a, b) in pairs {
        s += a * b;
    }
    let squares = x.iter().map(|v| v * v * s);
    let total: f64 = squares.sum();
    s + total
}

/// `find(p).unwrap()`, and `filter(p).last().unwrap()` / `.next()` after a `map`: the
/// element the search stops at carries the derivative.
#[differentiable]
fn searches(x: &[f64]) -> f64 {
    let first_big = x.iter().find(|v| **v > 1.0).unwrap();
    let last_pos = x.iter().filter(|v| **v > 0.0).last().unwrap();
    let first_sq = x.iter().map(|v| v * v).filter(|s| *s > 0.2).next().unwrap();
    first_big * 2.0 + last_pos * last_pos + first_sq * x[0]
}

/// `flatten` and `flat_map` over the rows of a `Vec<Vec<f64>>`, into `sum`, `product`,
/// `count` and `fold`.
#[differentiable]
fn flattened(m: &[Vec<f64>], a: f64) -> f64 {
    let squares: f64 = m.iter().flatten().map(|v| v * v).sum();
    let n = m.iter().flatten().count() as f64;
    let decayed = m.iter().flatten().fold(0.0, |acc, v| acc * 0.5 + v) / n;
    let prod: f64 = m
        .iter()
        .flat_map(|r| r.iter().map(|v| v * a))
        .map(|v| v.cos())
        .product();
    squares + decayed + prod
}

/// A labelled `for` over a flattened, filtered chain, left by `break 'all` and
/// `continue 'all`; and a labelled `for` over rows left from its inner loop.
#[differentiable]
fn flattened_for(m: &[Vec<f64>]) -> f64 {
    let mut s = 0.0;
    'all: for v in m.iter().flatten().filter(|v| **v > -0.5) {
        if *v > 2.0 {
            break 'all;
        }
        if *v < 0.0 {
            continue 'all;
        }
        s += v * s + v;
    }
    'rows: for r in m.iter() {
        for v in r.iter() {
            if *v > 2.2 {
                break 'rows;
            }
            s += v * v;
        }
    }
    s
}

mod rules {
    use crate::check;

    fn xs() -> Vec<f64> {
        vec![0.5, -1.0, 2.0, 1.5, -0.3]
    }

    check!(labelled_block, (xs(),), |a| (&a.0));
    check!(labelled_block_left_early, (xs(), 2.0_f64), |a| (&a.0, a.1));
    check!(loop_value_compound, (xs(),), |a| (&a.0));
    check!(closure_return_rev, (xs(),), |a| (&a.0));
    check!(closure_return_skip_collect, (xs(),), |a| (&a.0));
    check!(nested_closures, (0.4_f64, 1.3_f64), |a| (a.0, a.1));
    check!(borrowed_element, (xs(),), |a| (&a.0));
    check!(mean_of_positive, (xs(),), |a| (&a.0));
    check!(closure_then_shadow, (0.7_f64,), |a| (a.0));
    check!(shadow_then_adapter, (xs(),), |a| (&a.0));
    check!(shadow_param, (0.7_f64, 1.3_f64), |a| (a.0, a.1));
    check!(move_closure, (0.7_f64,), |a| (a.0));
    check!(closure_in_loop_shadow, (xs(),), |a| (&a.0));
    check!(local_closure_return, (0.25_f64, 4.0_f64), |a| (a.0, a.1));
    check!(
        chunks_size_assigned,
        (vec![0.5_f64, 1.0, 2.0, 3.0, 4.0, 5.0],),
        |a| (&a.0)
    );
    check!(windows_size_assigned, (xs(),), |a| (&a.0));
    check!(
        for_zip_swapped,
        (xs(), vec![0.3_f64, -1.0, 2.5, 1.5, 0.2]),
        |a| (&a.0, &a.1)
    );
    check!(
        chain_params_reuse_names,
        (xs(), vec![0.3_f64, -1.0, 2.5, 1.5, 0.2]),
        |a| (&a.0, &a.1)
    );
    check!(rem_assign, (0.7_f64,), |a| (a.0));
    check!(let_if_returns, (0.7_f64, 1.3_f64), |a| (a.0, a.1));
    check!(let_match_returns, (xs(), 1_usize), |a| (&a.0, a.1));
    check!(deref_copies, (xs(), 1.3_f64), |a| (&a.0, a.1));
    check!(split_part_in_vec, (xs(),), |a| (&a.0));
    check!(repeated_in_vec, (xs(),), |a| (&a.0));
    check!(argmin_pair, (xs(),), |a| (&a.0));
    check!(chain_block_added, (xs(), 0.7_f64), |a| (&a.0, a.1));
    check!(filter_map_sum, (xs(),), |a| (&a.0));
    check!(filter_map_then, (xs(), 1.5_f64), |a| (&a.0, a.1));
    check!(
        for_filter_map,
        (xs(), vec![0.3_f64, -1.2, 2.5, 1.0, 0.2]),
        |a| (&a.0, &a.1)
    );
    check!(value_after_continue, (xs(),), |a| (&a.0));
    check!(deferred_let, (xs(),), |a| (&a.0));
    check!(searches, (xs(),), |a| (&a.0));
    fn rows() -> Vec<Vec<f64>> {
        vec![vec![0.3, -0.7, 1.1], vec![2.5, -0.2, 0.9], vec![0.4]]
    }
    check!(flattened, (rows(), 1.3_f64), |a| (&a.0, a.1));
    check!(flattened_for, (rows(),), |a| (&a.0));
    check!(
        stored_chains,
        (xs(), vec![0.3_f64, -1.2, 2.5, 1.0, 0.2]),
        |a| (&a.0, &a.1)
    );
    check!(
        trapezoid_chain,
        (vec![0.0_f64, 0.5, 1.5, 2.0, 3.5], xs()),
        |a| (&a.0, &a.1)
    );
    check!(
        trapezoid_loop,
        (vec![0.0_f64, 0.5, 1.5, 2.0, 3.5], xs()),
        |a| (&a.0, &a.1)
    );
    check!(argmax_pair, (xs(),), |a| (&a.0));
    check!(
        argmin_index,
        (xs(), vec![1.0_f64, 2.0, 3.0, 4.0, 5.0]),
        |a| (&a.0, &a.1)
    );
    check!(float_suffixed_integers, (0.7_f64,), |a| (a.0));
    check!(
        shaped_constants,
        (ndarray::array![[0.5_f64, 1.0], [2.0, -3.0]],),
        |a| (&a.0)
    );
    check!(closure_call_in_product, (xs(), 1.3_f64), |a| (&a.0, a.1));
    check!(
        constant_weights_dot,
        (ndarray::array![0.5_f64, -1.0, 2.0],),
        |a| (&a.0)
    );
}

/// The trapezoidal rule's gradient in `y` is the quadrature weights.
#[test]
fn the_trapezoid_weights() {
    let (xs, ys) = ([0.0, 0.5, 1.5, 2.0], [1.0, 2.0, 0.5, 3.0]);
    let (dx, dy) = trapezoid_chain::gradient(&xs, &ys);
    assert_eq!(dy, vec![0.25, 0.75, 0.75, 0.25]);
    assert_eq!(dx, vec![-1.5, 0.25, -0.5, 1.75]);
}

/// The element at the argmin gets the derivative; the others none.
#[test]
fn the_argmin_element_gets_the_derivative() {
    let x = [0.5, 2.0, -1.0, 0.7];
    // min at index 2: value x[2]·3
    assert_eq!(argmin_pair::gradient(&x), vec![0.0, 0.0, 3.0, 0.0]);
    // max at index 1: value x[1]²·2
    assert_eq!(argmax_pair::gradient(&x), vec![0.0, 8.0, 0.0, 0.0]);
}

/// Each way out gives its own value and gradient.
#[test]
fn branches_that_leave_give_their_own_gradients() {
    assert_eq!(let_if_returns::gradient(-0.7, 1.3), (0.0, 0.5));
    // t = x·y, value t²: (2t·y, 2t·x)
    let (dx, dy) = let_if_returns::gradient(0.5, 2.0);
    assert_eq!((dx, dy), (4.0, 1.0));
    // k = 0 returns s = x0·(ln x0 + ln x2 + ln x3) over the positive elements
    let x = [0.5, -1.0, 2.0, 1.5, -0.3];
    let (dx, _) = let_match_returns::gradient(&x, 0);
    let logs = 0.5_f64.ln() + 2.0_f64.ln() + 1.5_f64.ln();
    assert!((dx[0] - (logs + 1.0)).abs() < 1e-12);
    assert!((dx[2] - 0.5 / 2.0).abs() < 1e-12);
    assert_eq!(dx[1], 0.0);
}

/// What `filter_map` keeps: the elements its closure gives `Some` for, each with its
/// own derivative; a `None` element gets none.
#[test]
fn filter_map_keeps_the_some_elements() {
    let x = [0.5, -1.0, 2.0, 1.5, -0.3];
    assert_eq!(filter_map_sum::gradient(&x), vec![1.0, 0.0, 4.0, 3.0, 0.0]);
    // pairs (a, b) with a > -0.5: (0.5, 0.3) → a − b; (2.0, 2.5) → b > 2: skipped;
    // (1.5, 1.0) → a − b; (−0.3, 0.2) → b². s = Σ y².
    let w = [0.3, -1.2, 2.5, 1.0, 0.2];
    let (dx, dw) = for_filter_map::gradient(&x, &w);
    let (y0, y3, y4) = (0.5 - 0.3, 1.5 - 1.0, 0.2 * 0.2);
    assert!((for_filter_map(&x, &w) - (y0 * y0 + y3 * y3 + y4 * y4)).abs() < 1e-12);
    let expect_dx = [2.0 * y0, 0.0, 0.0, 2.0 * y3, 0.0];
    let expect_dw = [-2.0 * y0, 0.0, 0.0, -2.0 * y3, 2.0 * y4 * 2.0 * 0.2];
    for i in 0..5 {
        assert!((dx[i] - expect_dx[i]).abs() < 1e-12, "dx {dx:?}");
        assert!((dw[i] - expect_dw[i]).abs() < 1e-12, "dw {dw:?}");
    }
}

/// Each search's element, and no other, gets the derivative.
#[test]
fn searches_give_their_elements_derivatives() {
    let x = [0.5, -1.0, 2.0, 1.5, -0.3];
    // 2·x2 + x3² + x0²·x0 (x0² = 0.25 > 0.2 is the first square kept)
    assert_eq!(searches(&x), 2.0 * 2.0 + 1.5 * 1.5 + 0.25 * 0.5);
    assert_eq!(searches::gradient(&x), vec![0.75, 0.0, 2.0, 3.0, 0.0]);
}

/// The flattened loop stops at the first element above 2 (2.5, in the second row),
/// and the labelled loop over rows at the same element: the elements after it get no
/// derivative.
#[test]
fn flattened_loops_stop_where_they_break() {
    let m = vec![vec![0.3, -0.7, 1.1], vec![2.5, -0.2, 0.9], vec![0.4]];
    // first loop: s = 0.3, then s += 1.1·0.3 + 1.1 → 1.73; second: + 0.09 + 0.49 + 1.21
    assert!((flattened_for(&m) - (1.73 + 0.09 + 0.49 + 1.21)).abs() < 1e-12);
    let g = flattened_for::gradient(&m);
    assert_eq!(g[1], vec![0.0, 0.0, 0.0]);
    assert_eq!(g[2], vec![0.0]);
    // ∂/∂x0 = (1 + x2) + 2·x0 (through s in the first loop, the square in the second)
    assert!((g[0][0] - (1.0 + 1.1 + 0.6)).abs() < 1e-12, "{g:?}");
}

/// The values the captured names give (a wrong capture gives other numbers).
#[test]
fn captured_names_keep_their_values() {
    // f = x + 10x
    assert_eq!(closure_then_shadow::gradient(0.7), 11.0);
    // f = 2x · 3x
    assert!((move_closure::gradient(0.7) - 12.0 * 0.7).abs() < 1e-12);
    // f = y·x + 5
    assert_eq!(shadow_param::gradient(0.7, 1.3), (1.3, 0.7));
    // the chunks stay pairs: x0·x1 + x2·x3 + x4·x5 + 3
    let x = [0.5, 1.0, 2.0, 3.0, 4.0, 5.0];
    assert_eq!(chunks_size_assigned(&x), 0.5 + 6.0 + 20.0 + 3.0);
    assert_eq!(
        chunks_size_assigned::gradient(&x),
        vec![1.0, 0.5, 3.0, 2.0, 5.0, 4.0]
    );
}

/// The left-early paths give their own gradients.
#[test]
fn a_labelled_block_left_early_has_each_paths_gradient() {
    let x = [0.5, -1.0];
    // `a < 0`: s = 0, value x[1].
    assert_eq!(
        labelled_block_left_early::gradient(&x, -2.0),
        (vec![0.0, 1.0], 0.0)
    );
    // `a·x[0] = 1`: value a·x[0]·x[1] + x[1].
    let (dx, da) = labelled_block_left_early::gradient(&x, 2.0);
    assert_eq!(dx, vec![-2.0, 2.0 * 0.5 + 1.0]);
    assert_eq!(da, -0.5);
    // `a·x[0] > 10`: value a·x[0] + x[1].
    let (dx, da) = labelled_block_left_early::gradient(&x, 30.0);
    assert_eq!(dx, vec![30.0, 1.0]);
    assert_eq!(da, 0.5);
}

/// Hessians through the new forms, against central differences of the gradient.
#[test]
fn the_forms_have_hessians() {
    type Grad = fn(&[f64]) -> Vec<f64>;
    type Hess = fn(&[f64]) -> Array2<f64>;
    let cases: [(&str, Grad, Hess); 6] = [
        (
            "labelled_block",
            |x| labelled_block::gradient(x),
            |x| labelled_block::hessian(x),
        ),
        (
            "loop_value_compound",
            |x| loop_value_compound::gradient(x),
            |x| loop_value_compound::hessian(x),
        ),
        (
            "closure_return_skip_collect",
            |x| closure_return_skip_collect::gradient(x),
            |x| closure_return_skip_collect::hessian(x),
        ),
        (
            "borrowed_element",
            |x| borrowed_element::gradient(x),
            |x| borrowed_element::hessian(x),
        ),
        (
            "filter_map_sum",
            |x| filter_map_sum::gradient(x),
            |x| filter_map_sum::hessian(x),
        ),
        (
            "value_after_continue",
            |x| value_after_continue::gradient(x),
            |x| value_after_continue::hessian(x),
        ),
    ];
    let x = [0.5, -1.0, 2.0, 1.5, -0.3];
    for (name, grad, hess) in cases {
        let h = hess(&x);
        common::assert_hessian_matches(name, grad, &h, &x, 1e-5);
        assert!(h.iter().any(|v| v.abs() > 1e-3), "{name}: a zero Hessian");
    }
    let h = float_suffixed_integers::hessian(0.7);
    assert!((h[[0, 0]] - 18.0 * 0.7).abs() < 1e-12, "{}", h[[0, 0]]);
    let h = nested_closures::hessian(0.4, 1.3);
    // g(b) = y·(b + b²); f = g(x)·g(y) + 1; ∂²f/∂x² = 2y·g(y).
    let (y, gy) = (1.3, 1.3 * (1.3 + 1.3 * 1.3));
    assert!((h[[0, 0]] - 2.0 * y * gy).abs() < 1e-12, "{}", h[[0, 0]]);
}
