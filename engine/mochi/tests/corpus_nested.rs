//! Nested sequences written as Rust users write them: `m[i][j]` reads and writes on
//! `Vec<Vec<f64>>`, `&mut [Vec<f64>]` and `[[f64; N]; M]`, rows borrowed `&mut`, each
//! checked by `test_rule`.

#![allow(
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::assign_op_pattern,
    clippy::useless_vec
)]

mod common;
use mochi::prelude::*;

/// An outer product written into a local matrix, then read back on two diagonals.
#[differentiable]
fn local_matrix_write(x: &[f64]) -> f64 {
    let n = x.len();
    let mut m = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            m[i][j] = x[i] * x[j];
        }
    }
    let mut s = 0.0;
    for i in 0..n {
        s += m[i][i] + m[i][(i + 1) % n];
    }
    s
}

/// `m[i][j] += v` accumulating into a local matrix (a covariance-like sum).
#[differentiable]
fn local_matrix_accumulate(x: &[f64], y: &[f64]) -> f64 {
    let mut c = vec![vec![0.0; 2]; 2];
    for k in 0..x.len() {
        c[0][0] += x[k] * x[k];
        c[0][1] += x[k] * y[k];
        c[1][0] += y[k] * x[k];
        c[1][1] += y[k] * y[k];
    }
    c[0][0] * c[1][1] - c[0][1] * c[1][0]
}

/// Reads `a[i][j]` of a parameter given as rows (a matrix-vector product).
#[differentiable]
fn rows_matvec(a: &[Vec<f64>], x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        let mut r = 0.0;
        for j in 0..x.len() {
            r += a[i][j] * x[j];
        }
        s += r.tanh();
    }
    s
}

/// Writes through two indices into a `&mut [Vec<f64>]` argument.
#[differentiable]
fn scale_rows_in_place(m: &mut [Vec<f64>], w: &[f64]) -> f64 {
    for i in 0..m.len() {
        for j in 0..m[i].len() {
            m[i][j] *= w[j];
            m[i][j] += w[i] * 0.5;
        }
    }
    let mut s = 0.0;
    for i in 0..m.len() {
        for j in 0..m[i].len() {
            s += m[i][j].sin();
        }
    }
    s
}

/// Writes through two indices into a `&mut Vec<Vec<f64>>` argument, rows of
/// different lengths.
#[differentiable]
fn ragged_rows_in_place(m: &mut Vec<Vec<f64>>, a: f64) -> f64 {
    for i in 0..m.len() {
        let last = m[i].len() - 1;
        m[i][last] = m[i][0] * a;
    }
    let mut s = 0.0;
    for i in 0..m.len() {
        for j in 0..m[i].len() {
            s += m[i][j] * m[i][j];
        }
    }
    s
}

/// A fixed-size `[[f64; 2]; 2]` local: a 2×2 determinant of a Gram matrix.
#[differentiable]
fn fixed_size_gram(x: &[f64]) -> f64 {
    let mut g = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            g[i][j] = x[i] * x[j] + x[i + 2] * x[j + 2];
        }
    }
    g[0][0] * g[1][1] - g[0][1] * g[1][0] + g[1][1]
}

/// Indices read from data (saved, not recomputed).
#[differentiable]
fn scattered_pairs(x: &[f64], pairs: &[(usize, usize)]) -> f64 {
    let mut m = vec![vec![0.0; 3]; 3];
    for k in 0..pairs.len() {
        let (i, j) = pairs[k];
        m[i][j] += x[k] * x[i];
    }
    let mut s = 0.0;
    for p in pairs {
        s += m[p.0][p.1].exp();
    }
    s
}

/// A row borrowed `&mut`, then written by one index.
#[differentiable]
fn row_borrowed_mut(x: &[f64]) -> f64 {
    let mut m = vec![vec![1.0; 3]; 2];
    for i in 0..2 {
        let row = &mut m[i];
        for j in 0..3 {
            row[j] += x[j] * (i as f64 + 1.0);
        }
    }
    m[0][1] * m[1][2] + m[1][0]
}

/// Rows of fixed-size arrays as a parameter: squared distances to a point.
#[differentiable]
fn array_rows(p: &[[f64; 2]], c: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..p.len() {
        let dx = p[i][0] - c[0];
        let dy = p[i][1] - c[1];
        s += (dx * dx + dy * dy).sqrt();
    }
    s
}

/// A row of a `&mut Vec<Vec<f64>>` argument borrowed `&mut` and updated.
#[differentiable]
fn arg_row_borrowed_mut(m: &mut Vec<Vec<f64>>, x: &[f64]) -> f64 {
    for i in 0..m.len() {
        let row = &mut m[i];
        for j in 0..row.len() {
            row[j] = row[j] * x[j] + x[i];
        }
    }
    m[0][0] * m[1][1]
}

#[differentiable]
fn step_state(h: &mut Vec<f64>, c: &mut [f64], x: f64) -> f64 {
    for j in 0..h.len() {
        c[j] = 0.5 * c[j] + x * h[j];
        h[j] = c[j].tanh();
    }
    h.iter().sum()
}

/// An LSTM-like update of per-layer states held as rows: `&mut hidden[i]` and
/// `&mut cell[i]` passed to a helper that writes them.
#[differentiable]
fn layered_states(hidden: &mut [Vec<f64>], cell: &mut [Vec<f64>], x: &[f64]) -> f64 {
    let mut out = 0.0;
    for i in 0..hidden.len() {
        out += step_state(&mut hidden[i], &mut cell[i], x[i]);
    }
    out + hidden[0][1] * cell[1][0]
}

#[derive(Clone, Debug, mochi::Tangent)]
struct Pair {
    a: Vec<f64>,
    s: f64,
}

#[differentiable]
fn scale_in_place(v: &mut Vec<f64>, k: f64) {
    for j in 0..v.len() {
        v[j] *= k;
    }
}

#[differentiable]
fn scale_slice(v: &mut [f64], a: f64) {
    for i in 0..v.len() {
        v[i] *= a;
    }
}

/// A row passed `&mut` to a helper taking `&mut [f64]`, once by a literal index and
/// once by an index read from data.
#[differentiable]
fn row_passed_mut(rows: &mut [Vec<f64>], order: &[usize], a: f64) -> f64 {
    scale_slice(&mut rows[0], a);
    scale_slice(&mut rows[order[0]], a + 1.0);
    rows[0][0] * rows[1][0]
}

/// A field of a struct argument passed `&mut` to a helper.
#[differentiable]
fn field_passed_mut(p: &mut Pair, k: f64) -> f64 {
    scale_in_place(&mut p.a, k * p.s);
    p.a.iter().map(|v| v * v).sum::<f64>() + p.s
}

/// A matrix built by `vec![x.to_vec(), x.to_vec()]`, a row borrowed `&mut` and walked
/// with `iter_mut`.
#[differentiable]
fn row_iter_mut(x: &[f64], a: f64) -> f64 {
    let mut m = vec![x.to_vec(), x.to_vec()];
    for i in 0..m.len() {
        let row = &mut m[i];
        for v in row.iter_mut() {
            *v *= a + i as f64;
        }
    }
    m[0][1] * m[1][2]
}

/// Nested `iter_mut` over the rows of a `&mut Vec<Vec<f64>>`.
#[differentiable]
fn nested_iter_mut(m: &mut Vec<Vec<f64>>, a: f64) -> f64 {
    for row in m.iter_mut() {
        for v in row.iter_mut() {
            *v = v.sin() * a;
        }
    }
    m[0][0] + m[1][1]
}

/// Nested `iter().enumerate()` over rows and their elements.
#[differentiable]
fn nested_enumerate(m: &[Vec<f64>], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, row) in m.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            s += v * w[j] * (i as f64 + 1.0);
        }
    }
    s
}

/// A row borrowed `&mut`, passed to a helper and walked with `for v in row`.
#[differentiable]
fn row_alias_passed_on(m: &mut Vec<Vec<f64>>, a: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..m.len() {
        let row = &mut m[i];
        scale_slice(row, a);
        for v in row {
            *v += 0.5;
            s += *v * *v;
        }
    }
    s
}

/// Reads through three indices of a `&[Vec<Vec<f64>>]` argument.
#[differentiable]
fn three_index_read(t: &[Vec<Vec<f64>>], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..t.len() {
        for j in 0..t[i].len() {
            s += t[i][j][1] * w[j];
        }
    }
    s
}

/// Writes three and four levels deep (`t[i][1][0] = …`, `q[0][i][1][0] += …`).
#[differentiable]
fn deep_writes(x: &[f64]) -> f64 {
    let mut t = vec![vec![vec![0.0; 2]; 2]; 2];
    let mut q = vec![vec![vec![vec![1.0; 2]; 2]; 2]; 1];
    for i in 0..2 {
        t[i][1][0] = x[i] * x[i + 1];
        q[0][i][1][0] += t[i][1][0].sin();
    }
    t[0][1][0] * t[1][1][0] + q[0][1][1][0] * q[0][0][1][0]
}

/// A write three levels deep, through a copied row written back.
#[differentiable]
fn three_index_write_via_row(x: &[f64]) -> f64 {
    let mut t = vec![vec![vec![0.0; 2]; 2]; 2];
    for i in 0..2 {
        let mut r = t[i][1].clone();
        r[0] = x[i] * x[i + 1];
        t[i][1] = r;
    }
    t[0][1][0] * t[1][1][0] + t[1][1][1]
}

/// Particles as `&mut [[f64; 2]]`, moved in place by a velocity field.
#[differentiable]
fn move_particles(p: &mut [[f64; 2]], dt: f64) -> f64 {
    for i in 0..p.len() {
        let (x, y) = (p[i][0], p[i][1]);
        p[i][0] += dt * (-y);
        p[i][1] += dt * x * x;
    }
    p.iter().map(|q| q[0] * q[1]).sum()
}

mod checked_nested {
    use crate::check;

    fn x4() -> Vec<f64> {
        vec![0.5, -1.2, 0.3, 0.9]
    }

    check!(local_matrix_write, (vec![0.5_f64, -1.2, 0.3],), |a| (&a.0));
    check!(
        local_matrix_accumulate,
        (x4(), vec![0.1_f64, 0.7, -0.4, 1.1]),
        |a| (&a.0, &a.1)
    );
    check!(
        rows_matvec,
        (
            vec![vec![0.5_f64, -0.3, 0.2], vec![1.1, 0.4, -0.7]],
            vec![0.3_f64, -0.2, 0.5]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        scale_rows_in_place,
        (
            vec![vec![0.5_f64, -0.3], vec![1.1, 0.4]],
            vec![0.3_f64, -0.8]
        ),
        |a| (&mut a.0, &a.1)
    );
    check!(
        ragged_rows_in_place,
        (vec![vec![0.5_f64, -0.3, 0.9], vec![1.1, 0.4]], 0.7_f64),
        |a| (&mut a.0, a.1)
    );
    check!(fixed_size_gram, (x4(),), |a| (&a.0));
    check!(
        scattered_pairs,
        (x4(), vec![(0_usize, 2_usize), (2, 1), (0, 2), (1, 1)]),
        |a| (&a.0, &a.1)
    );
    check!(row_borrowed_mut, (vec![0.5_f64, -1.2, 0.3],), |a| (&a.0));
    check!(
        array_rows,
        (
            vec![[0.5_f64, -0.3], [1.1, 0.4], [-0.2, 0.8]],
            vec![0.1_f64, 0.2]
        ),
        |a| (&a.0, &a.1)
    );
    check!(row_iter_mut, (vec![0.5_f64, -1.2, 0.3], 0.7_f64), |a| (
        &a.0, a.1
    ));
    check!(
        nested_iter_mut,
        (vec![vec![0.5_f64, -0.3], vec![1.1, 0.4]], 0.7_f64),
        |a| (&mut a.0, a.1)
    );
    check!(
        nested_enumerate,
        (
            vec![vec![0.5_f64, -0.3, 0.2], vec![1.1, 0.4, -0.7]],
            vec![0.5_f64, -1.2, 0.3]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        row_alias_passed_on,
        (vec![vec![0.5_f64, -0.3], vec![1.1, 0.4]], 0.7_f64),
        |a| (&mut a.0, a.1)
    );
    check!(
        three_index_read,
        (
            vec![
                vec![vec![0.5_f64, -0.3], vec![1.1, 0.4]],
                vec![vec![0.2_f64, 0.1], vec![-0.6, 0.9]]
            ],
            vec![0.3_f64, -0.8]
        ),
        |a| (&a.0, &a.1)
    );
    check!(
        move_particles,
        (vec![[0.5_f64, -0.3], [1.1, 0.4], [-0.2, 0.8]], 0.1_f64),
        |a| (&mut a.0, a.1)
    );
    check!(deep_writes, (vec![0.5_f64, -1.2, 0.3],), |a| (&a.0));
    check!(
        three_index_write_via_row,
        (vec![0.5_f64, -1.2, 0.3],),
        |a| (&a.0)
    );
    check!(
        layered_states,
        (
            vec![vec![0.5_f64, -0.3], vec![1.1, 0.4]],
            vec![vec![0.2_f64, 0.1], vec![-0.6, 0.9]],
            vec![0.3_f64, -0.8]
        ),
        |a| (&mut a.0, &mut a.1, &a.2)
    );
    check!(
        row_passed_mut,
        (
            vec![vec![0.5_f64, -0.3], vec![1.1, 0.4]],
            vec![1_usize],
            0.7_f64
        ),
        |a| (&mut a.0, &a.1, a.2)
    );
    check!(
        field_passed_mut,
        (
            super::Pair {
                a: vec![0.5, -0.3, 0.8],
                s: 1.3
            },
            0.7_f64
        ),
        |a| (&mut a.0, a.1)
    );
    check!(
        arg_row_borrowed_mut,
        (
            vec![vec![0.5_f64, -0.3], vec![1.1, 0.4]],
            vec![0.3_f64, -0.8]
        ),
        |a| (&mut a.0, &a.1)
    );
}
