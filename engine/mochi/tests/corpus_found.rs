//! Functions a user-style probe found wrong or not compiling, each with the value it
//! must give: chunks after `skip`/`skip_while`/`rev` (the chunk index was spliced
//! without parentheses: wrong values and gradients, and a generated-code panic), casts
//! to a float named by an alias or a path (`as Real`, `as std::primitive::f64`,
//! `as _` into a typed `let`; the derivative was dropped), a method whose only
//! parameter is `&self`, a `return` as the last statement (also at the end of every
//! branch of a tail `if`/`match`), a float alias in a `let` annotation (with its
//! Hessian), shapes cast to floats (the Hessian was missing), `T::max` as a path in
//! generic code; and (probe 27) an `iter_mut` element or row given to a helper, methods
//! on elements of a local `vec![P { .. }]`, `enumerate()` before `skip`,
//! `as_mut_slice`, `clone_from`, `if let Some((h, t)) = x.split_first()`. Checked by `test_rule` (finite differences, the adjoint identity) and by
//! the exact values.

#![allow(
    clippy::assign_op_pattern,
    clippy::needless_return,
    clippy::unnecessary_cast,
    clippy::needless_range_loop,
    clippy::get_first,
    clippy::iter_nth,
    clippy::iter_next_slice,
    clippy::double_ended_iterator_last,
    clippy::iter_nth_zero,
    clippy::useless_vec
)]

mod common;
use mochi::prelude::*;

/// A float alias, as numerical code writes one.
pub type Real = f64;

#[differentiable]
fn chunks_exact_skip(x: &[f64]) -> f64 {
    x.chunks_exact(2).skip(1).map(|c| c[0] * c[1]).sum::<f64>()
}

#[differentiable]
fn chunks_ragged_skip(x: &[f64]) -> f64 {
    x.chunks(4)
        .skip(1)
        .map(|c| c[0] * c.len() as f64 + c[c.len() - 1])
        .sum::<f64>()
}

#[differentiable]
fn chunks_skip_while(x: &[f64]) -> f64 {
    x.chunks_exact(2)
        .skip_while(|c| c[0] < 2.5)
        .map(|c| c[0] * c[1])
        .sum::<f64>()
}

#[differentiable]
fn chunks_rev(x: &[f64]) -> f64 {
    x.chunks(4)
        .rev()
        .map(|c| c[0] * c[c.len() - 1])
        .sum::<f64>()
        + x.chunks_exact(2)
            .rev()
            .map(|c| c[0])
            .fold(0.0, |a, v| a * 0.5 + v)
}

#[differentiable]
fn enumerate_after_skip(x: &[f64]) -> f64 {
    x.iter()
        .enumerate()
        .skip(1)
        .map(|(i, v)| v * (i * 2) as f64)
        .sum::<f64>()
}

#[differentiable]
fn cast_to_alias(x: &[f64]) -> f64 {
    let a = x[0] as Real;
    let b = (x[1] * a) as std::primitive::f64;
    let c: f64 = x[2] as _;
    let k = (x[2] * 10.0) as usize;
    a * b + c * c + k as f64
}

/// A point of the plane.
#[derive(Clone, Debug, Tangent)]
pub struct V2 {
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
}

impl V2 {
    /// Its length.
    #[differentiable]
    pub fn norm(&self) -> f64 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
}

#[differentiable]
fn tail_return(x: f64) -> f64 {
    let r = x * x;
    return r * 2.0;
}

#[differentiable]
fn tail_returns_in_branches(x: f64, k: usize) -> f64 {
    if k == 0 {
        let t = x * x;
        return t * 3.0;
    } else {
        match k {
            1 => return x.sin(),
            _ => {
                if x > 1.0 {
                    return x;
                } else {
                    return 1.0 / x;
                }
            }
        }
    }
}

#[differentiable]
fn unit_return(y: &mut [f64]) {
    for i in 0..y.len() {
        y[i] *= y[i];
    }
    return;
}

/// Calls `unit_return` (whose last statement is `return;`) on a copy.
#[differentiable]
fn squares_through_a_helper(x: &[f64]) -> f64 {
    let mut y = x.to_vec();
    unit_return(&mut y);
    y.iter().sum()
}

#[differentiable]
fn alias_annotations(x: &[f64]) -> f64 {
    let a: Real = x[0];
    let v: Vec<Real> = x.iter().map(|t| t * a).collect();
    v.iter().sum::<f64>() * x[1]
}

/// Shapes cast to the float type (`q.ncols() as f64`, `(n * m) as f64` from `q.dim()`):
/// integers in the twin too, so the function keeps its Hessian.
#[differentiable]
fn shapes_as_floats(q: &ndarray::Array2<f64>) -> f64 {
    let d = q.ncols() as f64;
    let (n, m) = q.dim();
    let mut s = 0.0;
    for i in 0..n {
        for j in 0..m {
            s += q[[i, j]] * q[[i, j]] * (i + j) as f64;
        }
    }
    s / (n * m) as f64 + q[[0, 0]] * q[[0, 1]] * d
}

/// `fold(T::neg_infinity(), T::max)` and `T::sin(x)` in generic code: the methods.
#[differentiable]
fn generic_paths<T: num_traits::Float>(x: &[T]) -> T {
    let m = x.iter().cloned().fold(T::neg_infinity(), T::max);
    let mut s = T::zero();
    for i in 0..x.len() {
        s = s + (x[i] - m).exp();
    }
    m + s.ln() + T::sin(x[0])
}

/// An order-dependent `fold` of a reversed slice and of a transposed view: ndarray
/// visits them in memory order, and so must the derivative (its value was the logical
/// order's, 3.25 for 6.125).
#[differentiable]
fn folds_in_memory_order(x: &ndarray::Array1<f64>, a: &ndarray::Array2<f64>) -> f64 {
    let r = x
        .slice(ndarray::s![..;-1])
        .fold(0.0, |acc, &v| acc * 0.5 + v);
    let t = a.t().fold(0.0, |acc, &v| acc * 0.5 + v * v);
    r + t
}

/// `map_inplace(|v| *v *= …)`, `map_inplace(|v| *v = …)` and `mapv_into(..)` of a
/// differentiable array.
#[differentiable]
fn maps_in_place(x: &ndarray::Array1<f64>) -> f64 {
    let mut a = x.clone();
    a.map_inplace(|v| *v *= v.sin());
    a.map_inplace(|v| *v = v.exp() - 1.0);
    a.mapv_into(|v| v * v).sum()
}

mod inner {
    use mochi::prelude::*;

    /// Σ w³.
    #[differentiable]
    pub fn cubes(w: &[f64]) -> f64 {
        w.iter().map(|v| v * v * v).sum::<f64>()
    }
}

/// Another module's companion called by its path (`crate::inner::cubes::gradient`).
#[differentiable]
fn companion_by_path(w: &[f64]) -> f64 {
    let g = crate::inner::cubes::gradient(w);
    g[0] * w[1]
}

/// `mapv` of a transposed view keeps its column-major layout (as ndarray's does), so
/// that a later order-dependent `fold` and a test of the layout see what the plain call
/// sees.
#[differentiable]
fn mapped_view_keeps_its_layout(a: &ndarray::Array2<f64>) -> f64 {
    let b = a.t().mapv(|v| v * v);
    let f = b.fold(0.0, |acc, &v| acc * 0.5 + v);
    let corner = if b.is_standard_layout() {
        b[[0, 1]]
    } else {
        b[[1, 0]]
    };
    f + corner
}

/// `a.get((i, j))` of a matrix, with a default and in an `if let`.
#[differentiable]
fn matrix_get(a: &ndarray::Array2<f64>, i: usize) -> f64 {
    let c = a.get((i, 1)).copied().unwrap_or(0.5);
    let d = a[[0, 2]];
    c * d
        + if let Some(v) = a.get((1, 0)) {
            *v * *v
        } else {
            1.0
        }
}

/// `x.get(i).unwrap()` (also under `*` and with `.copied()`) of a sequence with a
/// derivative is the element; the same forms on an index sequence stay as written
/// (`*idx.first().unwrap()` used to become `*idx[0]`, which did not compile).
#[differentiable]
fn elements_by_get(x: &[f64], idx: &[usize]) -> f64 {
    let j = *idx.get(1).unwrap();
    let k = *idx.first().unwrap();
    let r = idx.get(0).unwrap();
    let m = idx.get(2).copied().unwrap();
    let a = *x.get(1).unwrap();
    let b = x.get(0).copied().unwrap();
    x[j] * x[k] + x[*r] + x[m] * x.get(j).unwrap() + a * b
}

/// Closures with several parameters typed `&Array1<f64>`, inlined where called: each
/// parameter is bound on its own, so it is known to be a reference (`a - b` was looked
/// up as an operator on `&&Array1`).
#[differentiable]
fn closures_of_arrays(x: &ndarray::Array1<f64>, y: &ndarray::Array1<f64>) -> f64 {
    let f = |v: &ndarray::Array1<f64>| v.dot(v) * 2.0 + v.sum();
    let g = |a: &ndarray::Array1<f64>, b: &ndarray::Array1<f64>| (a - b).mapv(|t| t * t).sum();
    let h = |a: f64, b| a * b;
    f(x) + f(y) + g(x, y) + h(x[0], y[1])
}

/// A sub-slice copied into a `Vec` (`x[1..3].to_vec()`, was a type error at the
/// attribute), a chain collected by assignment (`v = chain.collect();`, was "no rule
/// for `iter`"), `let Some(m) = chain.reduce(f) else { … }` and `let Some(v) =
/// x.get(k).copied() else { … }` (were "no rule" errors).
#[differentiable]
fn vec_forms(x: &[f64], k: usize) -> f64 {
    let v = x[1..3].to_vec();
    let mut w = x.to_vec();
    w[0] += 1.0;
    let w0 = w[0];
    w = x.iter().map(|t| t * t).collect();
    let Some(m) = x.iter().copied().reduce(f64::max) else {
        return 0.0;
    };
    let Some(e) = x.get(k).copied() else {
        return x[0];
    };
    v[0] * v[1] + w[0] + m * x[0] + e * e + w0
}

/// Statistics returned as a struct by a helper.
#[derive(Clone, Debug, Tangent)]
pub struct Moments {
    /// Mean.
    pub mean: f64,
    /// Variance.
    pub var: f64,
}

#[differentiable]
fn moments(x: &[f64]) -> Moments {
    let mean = (x[0] + x[1]) / 2.0;
    Moments {
        mean,
        var: (x[0] - mean).powi(2),
    }
}

/// A caller reading the fields of a helper's struct: its generic form would get the
/// struct with `f64` fields back, so it has none (the first-order rule compiled only
/// once the twin stopped being written: E0308 at the attribute before).
#[differentiable]
fn reads_moments(x: &[f64]) -> f64 {
    let s = moments(x);
    s.mean * s.var
}

/// `assert!` with a float formatted in its message (the generic form's scalar is
/// `Display`: "`__MochiT` doesn't implement `Display`" before).
#[differentiable]
fn asserts_with_message(x: &[f64]) -> f64 {
    assert!(x[0].is_finite(), "bad x0 = {:.3}", x[0]);
    x[0] * x[1] * x[1]
}

/// Parameters unpacked through a cursor (`k: &mut usize`) and a permutation written in
/// place: integer `&mut` parameters (the higher-order companions, which pass arguments
/// through by a clone, made them a type error at the attribute; such a function now
/// has none).
#[differentiable]
fn unpack(x: &[f64], k: &mut usize, perm: &mut [usize]) -> f64 {
    let a = x[*k];
    *k += 1;
    let b = x[*k];
    *k += 1;
    let c = x[perm[0]];
    perm.swap(0, 1);
    a * b + c * x[perm[0]]
}

/// Points collected as tuples, and a buffer taken with `std::mem::take` (a type error
/// at the attribute and E0433 before).
#[differentiable]
fn tuples_and_take(x: &[f64]) -> f64 {
    let pts: Vec<(f64, f64)> = (0..x.len() / 2).map(|i| (x[2 * i], x[2 * i + 1])).collect();
    let mut a = x.to_vec();
    let b = std::mem::take(&mut a);
    pts[0].0 * pts[1].1 + b[1] * 2.0 + a.len() as f64
}

/// A float cast to an index (`(x[0] * 2.0) as usize`, `(n as f64).sqrt() as usize`):
/// the generic form casts the value its scalar holds, so the Hessian exists (the
/// function had none before).
#[differentiable]
fn float_to_index(x: &[f64]) -> f64 {
    let k = (x[0] * 2.0) as usize;
    let n = (x.len() as f64).sqrt() as usize;
    x[k] * x[1] * x[n]
}

/// `for` over adapted mutable iterators: `iter_mut().skip(1)`, `.rev()`, `.step_by(2)`,
/// a sub-slice's `iter_mut()`, `chunks_mut`/`chunks_exact_mut`, and `windows(3)
/// .enumerate()` (each "`for` over a differentiable sequence supports …" before).
#[differentiable]
fn adapted_loops(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    for e in v.iter_mut().skip(1) {
        *e *= 2.0;
    }
    for e in v.iter_mut().rev() {
        *e += 1.0;
    }
    for e in v.iter_mut().step_by(2) {
        *e = e.sin();
    }
    for (i, e) in v[1..3].iter_mut().enumerate() {
        *e *= 3.0 + i as f64;
    }
    for c in v.chunks_mut(2) {
        if c.len() > 1 {
            c[0] *= c[1];
        } else {
            c[0] += 1.0;
        }
    }
    for c in v.chunks_exact_mut(2) {
        c[1] = c[0].sin();
    }
    let mut s = 0.0;
    for (i, w) in v.windows(3).enumerate() {
        s += w[0] * w[2] * (i as f64 + 1.0);
    }
    s + v.iter().sum::<f64>()
}

/// Rows written in a loop over `rows_mut()` (also `columns_mut()`).
#[differentiable]
fn rows_written(a: &ndarray::Array2<f64>) -> f64 {
    let mut out = ndarray::Array2::<f64>::zeros(a.dim());
    for (i, mut row) in out.rows_mut().into_iter().enumerate() {
        row.assign(&a.row(i).mapv(|v| v * v));
    }
    for mut col in out.columns_mut() {
        col *= 2.0;
    }
    out.mapv(|v| v.sin()).sum()
}

/// `Option` combinators on elements and chains: `map(..).unwrap_or(..)`, `map_or`,
/// `map_or_else`, `copied().unwrap_or_default()`, `reduce(..).map(..)
/// .unwrap_or_else(..)`, `map(..).unwrap()` (each was "no rule for `first`/`get`").
#[differentiable]
fn option_combinators(x: &[f64], k: usize) -> f64 {
    let m = x.first().map(|v| v * 2.0).unwrap_or(0.0);
    let a = m + x.get(k).map_or(0.5, |v| v.sin());
    let b = x.last().map_or_else(|| 1.0, |&v| v * v);
    let c = x.get(k + 5).copied().unwrap_or_default() + x.get(2).copied().unwrap_or_default();
    let d = x
        .iter()
        .copied()
        .reduce(f64::max)
        .map(|v| v.exp())
        .unwrap_or_else(|| 0.0);
    let e = x.first().map(|v: &f64| v.powi(3)).unwrap();
    a + b + c + d + e
}

/// A `&mut Vec` argument the function grows, read after (the gradient panicked: its
/// shadow had the length the argument came in with).
#[differentiable]
fn grows_its_argument(c: &mut Vec<f64>, a: f64) -> f64 {
    c.push(a * a);
    c[0] + c[c.len() - 1] * 2.0 + c.iter().sum::<f64>()
}

/// The same through a `&mut self` method.
#[derive(Clone, Debug, Tangent)]
pub struct Poly {
    /// Coefficients, lowest degree first.
    pub c: Vec<f64>,
}

impl Poly {
    #[differentiable]
    fn eval(&self, t: f64) -> f64 {
        let mut acc = 0.0;
        for c in self.c.iter().rev() {
            acc = acc * t + c;
        }
        acc
    }
    #[differentiable]
    fn push_coeff(&mut self, a: f64) -> f64 {
        self.c.push(a);
        self.eval(0.5)
    }
}

/// Idioms a second probe found not compiling: `std::iter::zip`, `x.iter().nth(k)`,
/// `.next()`, `.last()`, `chain.reduce(f).unwrap_or(d)`, the argmax index
/// `enumerate().max_by(..).map(|(i, _)| i).unwrap()`, `Vec::from(x)`, `Vec::from([..])`,
/// `Array1::from_elem(n, v)`, `Array1::ones(n)` typed by its later use, `(t > 0.0) as
/// usize` as an index (its generic form), and a named constant as one branch's value.
#[differentiable]
fn probe_idioms(x: &[f64], y: &[f64]) -> f64 {
    let dot = std::iter::zip(x, y).map(|(a, b)| a * b).sum::<f64>();
    let third = x.iter().nth(2).copied().unwrap_or(0.0);
    let ends = *x.iter().next().unwrap() * *x.iter().last().unwrap();
    let low = x.iter().copied().reduce(f64::min).unwrap_or(0.0);
    let i = x
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i)
        .unwrap();
    let v = Vec::from(x);
    let w = Vec::from([dot, third]);
    let z = ndarray::Array1::from_elem(2, ends);
    let mut ones = ndarray::Array1::ones(2);
    ones *= low;
    let mut bins = [0.0; 2];
    for &t in x {
        bins[(t > 0.0) as usize] += t * t;
    }
    let start = if low > 0.8 { std::f64::consts::PI } else { low };
    v[i] * y[i] + w[0] * w[1] + z.sum() + ones.sum() + bins[0] * bins[1] + start.sin()
}

/// A tuple whose part is a `collect()`, as the function's value.
#[differentiable]
fn tuple_with_collect(x: &[f64]) -> (f64, Vec<f64>) {
    let s: f64 = x.iter().sum();
    (s * s, x.iter().map(|v| v * s).collect())
}

/// A particle of a swarm.
#[derive(Clone, Debug, Tangent)]
pub struct Body {
    /// Position.
    pub x: f64,
    /// Velocity.
    pub v: f64,
}

/// Fields of the elements of a `Vec` of structs written in place, by index and through
/// `iter_mut()` ("assignment to this place is not supported" before).
#[differentiable]
fn swarm(ps: &[Body], k: f64) -> f64 {
    let mut st = ps.to_vec();
    for i in 0..st.len() {
        st[i].v += -k * st[i].x * 0.1;
        st[i].x += 0.1 * st[i].v;
    }
    for p in st.iter_mut() {
        p.v *= 1.0 - 0.1 * k;
        p.x += 0.1 * p.v;
    }
    st.iter().map(|p| p.x * p.x + p.v).sum()
}

/// `split_first().unwrap()` and `split_last().expect(..)`, bound by a tuple `let` (by
/// reference and through `&h`).
#[differentiable]
fn split_ends(x: &[f64]) -> f64 {
    let (head, tail) = x.split_first().unwrap();
    let (&last, rest) = x.split_last().expect("not empty");
    head * tail.iter().sum::<f64>() + last.exp() + rest.iter().map(|v| v * last).sum::<f64>()
}

/// Loops over a parameter of indices: `for &k in idx.iter()`, `.enumerate()`,
/// `chunks_exact(2)`, `chunks(2)` (E0700 at the attribute before: the replayed iterator
/// borrowed the parameter).
#[differentiable]
fn gathered(x: &[f64], idx: &[usize]) -> f64 {
    let mut s = 0.0;
    for &k in idx.iter() {
        s += x[k] * x[k];
    }
    for (i, &k) in idx.iter().enumerate() {
        s += x[k] * i as f64;
    }
    for t in idx.chunks_exact(2) {
        s += x[t[0]] * x[t[1]];
    }
    for t in idx.chunks(2) {
        s += x[t[t.len() - 1]];
    }
    s
}

/// A particle stepped by a `&mut self` method.
#[derive(Clone, Debug, Tangent)]
pub struct Particle {
    /// Position.
    pub x: f64,
    /// Velocity.
    pub v: f64,
}

impl Particle {
    #[differentiable]
    fn step(&mut self, k: f64) {
        self.v -= k * self.x * 0.1;
        self.x += self.v * 0.1;
    }
}

/// A `&mut self` method called from a free function as `Type::m(&mut v, ..)` ("`&mut`
/// of a differentiable value is supported only as an argument of a function call"
/// before).
#[differentiable]
fn simulate(p0: &Particle, k: f64) -> f64 {
    let mut p = p0.clone();
    for _ in 0..10 {
        Particle::step(&mut p, k);
    }
    p.x * p.v
}

mod rules {
    use crate::check;

    fn eight() -> Vec<f64> {
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    }
    fn ragged() -> Vec<f64> {
        vec![0.3, -0.7, 1.1, 0.4, 0.9, -0.2]
    }

    check!(chunks_exact_skip, (eight(),), |a| (&a.0));
    check!(adapted_loops, (vec![0.3_f64, 0.7, -0.4, 1.1, 0.5],), |a| {
        (&a.0)
    });
    check!(
        rows_written,
        (ndarray::Array2::from_shape_fn((2, 3), |(i, j)| (i + 2 * j)
            as f64
            * 0.1
            + 0.05),),
        |a| (&a.0)
    );
    check!(tuples_and_take, (vec![1.0_f64, 2.0, 3.0, 4.0],), |a| (&a.0));
    check!(reads_moments, (vec![1.0_f64, 2.0],), |a| (&a.0));
    check!(asserts_with_message, (vec![1.5_f64, -2.0],), |a| (&a.0));
    check!(vec_forms, (vec![1.0_f64, 2.0, 3.0, 4.0], 2_usize), |a| (
        &a.0, a.1
    ));
    check!(
        elements_by_get,
        (vec![0.3_f64, 0.7, 0.9], vec![0_usize, 2, 1]),
        |a| (&a.0, &a.1)
    );
    check!(
        closures_of_arrays,
        (
            ndarray::array![0.3_f64, 0.7],
            ndarray::array![-0.3_f64, 0.2]
        ),
        |a| (&a.0, &a.1)
    );
    check!(chunks_ragged_skip, (ragged(),), |a| (&a.0));
    check!(chunks_skip_while, (eight(),), |a| (&a.0));
    check!(chunks_rev, (ragged(),), |a| (&a.0));
    check!(enumerate_after_skip, (ragged(),), |a| (&a.0));
    check!(cast_to_alias, (vec![0.3_f64, -0.7, 0.44],), |a| (&a.0));
    check!(tail_return, (1.5_f64,), |a| (a.0));
    check!(tail_returns_in_branches, (0.5_f64, 1_usize), |a| (a.0, a.1));
    check!(squares_through_a_helper, (vec![0.5_f64, -2.0],), |a| (&a.0));
    check!(alias_annotations, (vec![0.5_f64, 2.0, -1.0],), |a| (&a.0));
    check!(generic_paths, (vec![0.3_f64, -0.7, 1.1],), |a| (&a.0));
    check!(maps_in_place, (ndarray::array![0.3_f64, -0.7, 1.1],), |a| {
        (&a.0)
    });
    check!(
        mapped_view_keeps_its_layout,
        (ndarray::array![[1.0_f64, 2.0, 3.0], [4.0, 5.0, 6.0]],),
        |a| (&a.0)
    );
    check!(companion_by_path, (vec![0.5_f64, 2.0],), |a| (&a.0));
    check!(split_ends, (vec![0.5_f64, -1.0, 2.0, 0.3],), |a| (&a.0));
    check!(
        probe_idioms,
        (vec![0.5_f64, -1.0, 2.0, 0.3], vec![1.0_f64, 3.0, -2.0, 0.7]),
        |a| (&a.0, &a.1)
    );
    check!(
        option_combinators,
        (vec![-1.0_f64, 2.0, 3.0], 1_usize),
        |a| (&a.0, a.1)
    );
    check!(
        folds_in_memory_order,
        (
            ndarray::array![1.0_f64, 2.0, 3.0, 4.0],
            ndarray::array![[1.0_f64, 2.0, 3.0], [4.0, 5.0, 6.0]]
        ),
        |a| (&a.0, &a.1)
    );
}

#[test]
fn chunks_after_skip_and_rev_read_the_right_elements() {
    let x: Vec<f64> = (1..=8).map(f64::from).collect();
    // chunks (3,4), (5,6), (7,8)
    assert_eq!(chunks_exact_skip(&x), 98.0);
    assert_eq!(chunks_exact_skip::value_and_gradient(&x).0, 98.0);
    assert_eq!(
        chunks_exact_skip::gradient(&x),
        vec![0.0, 0.0, 4.0, 3.0, 6.0, 5.0, 8.0, 7.0]
    );
    assert_eq!(
        chunks_skip_while::gradient(&x),
        chunks_exact_skip::gradient(&x)
    );
    // the ragged tail (0.9, −0.2): 0.9·2 − 0.2
    let r = [0.3, -0.7, 1.1, 0.4, 0.9, -0.2];
    assert_eq!(
        chunks_ragged_skip::value_and_gradient(&r).0,
        0.9 * 2.0 - 0.2
    );
    assert_eq!(
        chunks_ragged_skip::gradient(&r),
        vec![0.0, 0.0, 0.0, 0.0, 2.0, 1.0]
    );
    // backwards: the ragged chunk (0.9, −0.2) first
    let (y, _) = chunks_rev::value_and_gradient(&r);
    assert_eq!(y, chunks_rev(&r));
    // enumerate, then skip: the indices stay those of enumerate
    assert_eq!(
        enumerate_after_skip::gradient(&r),
        vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    );
}

#[test]
fn casts_to_an_alias_keep_the_derivative() {
    let x = [0.3, -0.7, 0.44];
    // a·b = x0·(x1·x0): (2·x0·x1, x0², 2·x2)
    let g = cast_to_alias::gradient(&x);
    let want = [2.0 * 0.3 * -0.7, 0.09, 0.88];
    assert_close(&g, &want);
}

#[test]
fn a_method_of_self_alone() {
    let v = V2 { x: 3.0, y: 4.0 };
    let (n, d) = v.norm_value_and_gradient();
    assert_eq!(n, 5.0);
    assert!((d.x - 0.6).abs() < 1e-15 && (d.y - 0.8).abs() < 1e-15);
}

#[test]
fn returns_at_the_end() {
    assert_eq!(tail_return::gradient(1.5), 6.0);
    assert_eq!(tail_returns_in_branches::gradient(-1.5, 0).0, -9.0);
    assert_eq!(tail_returns_in_branches::gradient(0.5, 2).0, -4.0);
    assert_eq!(tail_returns_in_branches::gradient(2.0, 2).0, 1.0);
    assert_eq!(tail_returns_in_branches::gradient(0.5, 0).0, 3.0);
    // Σ y² through the `&mut` helper: 2·x
    assert_eq!(
        squares_through_a_helper::gradient(&[1.0, 3.0]),
        vec![2.0, 6.0]
    );
}

#[test]
fn an_alias_annotation_keeps_the_hessian() {
    // f = (x0² + x0·x1 + x0·x2)·x1
    let x = [0.5, 2.0, -1.0];
    let h = alias_annotations::hessian(&x);
    common::assert_hessian_matches(
        "alias_annotations",
        alias_annotations::gradient,
        &h,
        &x,
        1e-6,
    );
    assert_eq!(h[[0, 0]], 4.0);
}

#[test]
fn shapes_and_generic_paths_keep_their_hessians() {
    let q = ndarray::Array2::from_shape_fn((2, 2), |(i, j)| (i + 2 * j) as f64 + 0.5);
    let h = shapes_as_floats::hessian(&q);
    // Σ q_ij²·(i + j)/4 + 2·q00·q01
    let want = [
        [0.0, 2.0, 0.0, 0.0],
        [2.0, 0.5, 0.0, 0.0],
        [0.0, 0.0, 0.5, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    for i in 0..4 {
        for j in 0..4 {
            assert!((h[[i, j]] - want[i][j]).abs() < 1e-12, "{h}");
        }
    }
    let x = [0.3, -0.7, 1.1];
    let h = generic_paths::hessian(&x);
    common::assert_hessian_matches("generic_paths", generic_paths::gradient, &h, &x, 1e-6);
    // softmax: p0·(1 − p0), less sin(x0)
    let p0 = 0.3_f64.exp() / x.iter().map(|v: &f64| v.exp()).sum::<f64>();
    assert!((h[[0, 0]] - (p0 * (1.0 - p0) - 0.3_f64.sin())).abs() < 1e-12);
}

#[test]
fn a_fold_gives_the_plain_calls_value() {
    let x = ndarray::array![1.0, 2.0, 3.0, 4.0];
    let a = ndarray::array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let (y, (dx, _)) = folds_in_memory_order::value_and_gradient(&x, &a);
    assert_eq!(y, folds_in_memory_order(&x, &a));
    // 6.125 from the reversed slice, walked in memory order (x0 first): x3 has the
    // weight 1; the logical order (x3 first) gave 3.25 and the weights reversed
    assert_eq!(dx, ndarray::array![0.125, 0.25, 0.5, 1.0]);
}

#[test]
fn vec_forms_values() {
    // x1·x2 + x0² + max·x0 + x2² + (x0 + 1), max = x3
    let x = [1.0_f64, 2.0, 3.0, 4.0];
    let (y, (g, _)) = vec_forms::value_and_gradient(&x, 2);
    assert_eq!(y, vec_forms(&x, 2));
    assert_eq!(g, vec![2.0 + 4.0 + 1.0, 3.0, 2.0 + 6.0, 1.0]);
    // out of bounds: x0
    let (y, (g, _)) = vec_forms::value_and_gradient(&x, 9);
    assert_eq!((y, g), (1.0, vec![1.0, 0.0, 0.0, 0.0]));
}

#[test]
fn struct_results_and_messages() {
    // mean·var = 1.5 · 0.25; ∂/∂x0 = 0.5·0.25 + 1.5·(x0 − x1)/2
    assert_eq!(
        reads_moments::value_and_gradient(&[1.0, 2.0]),
        (0.375, vec![-0.625, 0.875])
    );
    // x0·x1²: [[0, 2x1], [2x1, 2x0]]
    let h = asserts_with_message::hessian(&[1.5, -2.0]);
    assert_eq!(h, ndarray::array![[0.0, -4.0], [-4.0, 3.0]]);
}

#[test]
fn cursors_and_permutations_by_mut() {
    let x = [1.0_f64, 2.0, 3.0, 4.0];
    let (mut k, mut perm) = (0_usize, vec![3_usize, 2]);
    let (y, (g, _, _)) = unpack::value_and_gradient(&x, &mut k, &mut perm);
    // x0·x1 + x3·x2, and the cursor and the permutation moved as the plain call moves them
    assert_eq!(y, 2.0 + 12.0);
    assert_eq!(g, vec![2.0, 1.0, 4.0, 3.0]);
    assert_eq!((k, perm), (2, vec![2, 3]));
}

#[test]
fn tuples_and_take_values() {
    let x = [1.0_f64, 2.0, 3.0, 4.0];
    // x0·x3 + 2·x1
    assert_eq!(
        tuples_and_take::value_and_gradient(&x),
        (8.0, vec![4.0, 2.0, 0.0, 1.0])
    );
}

#[test]
fn float_casts_to_indices_keep_the_hessian() {
    let x = [0.6_f64, 2.0, 3.0];
    // k = 1, n = 1: x1³
    assert_eq!(
        float_to_index::value_and_gradient(&x),
        (8.0, vec![0.0, 12.0, 0.0])
    );
    let h = float_to_index::hessian(&x);
    assert_eq!(h[[1, 1]], 12.0);
    assert_eq!(h.sum(), 12.0);
}

#[test]
fn adapted_loops_give_the_plain_value() {
    let x = [0.3_f64, 0.7, -0.4, 1.1, 0.5];
    assert_eq!(adapted_loops::value_and_gradient(&x).0, adapted_loops(&x));
    let a = ndarray::Array2::from_shape_fn((2, 3), |(i, j)| (i + 2 * j) as f64 * 0.1 + 0.05);
    let (y, g) = rows_written::value_and_gradient(&a);
    assert_eq!(y, rows_written(&a));
    // ∂/∂a = cos(2a²)·4a
    assert!((g[[1, 2]] - (2.0 * a[[1, 2]].powi(2)).cos() * 4.0 * a[[1, 2]]).abs() < 1e-12);
}

#[test]
fn a_mut_method_from_a_free_function() {
    let p = Particle { x: 1.0, v: 0.0 };
    let (y, (_, dk)) = simulate::value_and_gradient(&p, 2.0);
    assert_eq!(y, simulate(&p, 2.0));
    let h = 1e-6;
    let fd = (simulate(&p, 2.0 + h) - simulate(&p, 2.0 - h)) / (2.0 * h);
    assert!((dk - fd).abs() < 1e-7, "{dk} vs {fd}");
}

#[test]
fn elements_read_by_get() {
    // x2·x0 + x0 + x1·x2 + x1·x0 at idx = [0, 2, 1]
    let x = [0.3_f64, 0.7, 0.9];
    let (y, (g, _)) = elements_by_get::value_and_gradient(&x, &[0, 2, 1]);
    assert_eq!(y, elements_by_get(&x, &[0, 2, 1]));
    assert_eq!(g, vec![x[2] + 1.0 + x[1], x[2] + x[0], x[0] + x[1]]);
}

#[test]
fn a_companion_called_by_its_path() {
    // 3·w0²·w1: (6·w0·w1, 3·w0²)
    assert_eq!(companion_by_path::gradient(&[0.5, 2.0]), vec![6.0, 0.75]);
}

#[test]
fn a_matrix_element_by_get() {
    let a = ndarray::Array2::from_shape_fn((2, 3), |(i, j)| (i + 2 * j) as f64 * 0.1 + 0.05);
    // in bounds: a11·a02 + a10²
    let (y, (g, _)) = matrix_get::value_and_gradient(&a, 1);
    assert_eq!(y, matrix_get(&a, 1));
    assert_eq!(g[[1, 1]], a[[0, 2]]);
    assert_eq!(g[[0, 2]], a[[1, 1]]);
    assert_eq!(g[[1, 0]], 2.0 * a[[1, 0]]);
    // out of bounds: the default 0.5
    let (g, _) = matrix_get::gradient(&a, 7);
    assert_eq!(g[[0, 2]], 0.5);
    assert_eq!(g[[1, 1]], 0.0);
}

#[test]
fn option_combinators_take_the_branch_the_plain_call_takes() {
    let x = [-1.0_f64, 2.0, 3.0];
    // k = 1: 2·x0 + sin x1 + x2² + (0 + x2) + e^{x2} + x0³
    let (y, (g, _)) = option_combinators::value_and_gradient(&x, 1);
    assert_eq!(y, option_combinators(&x, 1));
    let want = [2.0 + 3.0, 2.0_f64.cos(), 6.0 + 1.0 + 3.0_f64.exp()];
    assert_close(&g, &want);
    // k = 7: the defaults (0.5, and 0 for x[k + 5]) carry no derivative.
    let (y, (g, _)) = option_combinators::value_and_gradient(&x, 7);
    assert_eq!(y, option_combinators(&x, 7));
    assert!((g[1] - 0.0).abs() < 1e-15);
    // An empty slice: `unwrap` panics in both.
    assert!(std::panic::catch_unwind(|| option_combinators(&[], 0)).is_err());
    assert!(std::panic::catch_unwind(|| option_combinators::gradient(&[], 0)).is_err());
}

#[test]
fn a_mut_argument_that_grows() {
    let mut c = vec![0.7, 0.2];
    let (y, (dc, da)) = grows_its_argument::value_and_gradient(&mut c, 1.5);
    // c0 + 2a² + c0 + c1 + a²: ∂/∂c = (2, 1), ∂/∂a = 6a
    assert_eq!(c, vec![0.7, 0.2, 2.25]);
    assert_eq!(y, grows_its_argument(&mut vec![0.7, 0.2], 1.5));
    assert_eq!(dc, vec![2.0, 1.0]);
    assert_eq!(da, 9.0);
    let mut p = Poly {
        c: vec![-2.0, 0.3, 1.0],
    };
    let (y, (dp, da)) = p.push_coeff_value_and_gradient(1.3);
    assert_eq!(y, -2.0 + 0.3 * 0.5 + 0.25 + 1.3 * 0.125);
    assert_eq!(dp.c, vec![1.0, 0.5, 0.25]);
    assert_eq!(da, 0.125);
    assert_eq!(p.c.len(), 4);
}

#[test]
fn probe_idioms_values_and_second_derivatives() {
    let (x, y) = ([0.5_f64, -1.0, 2.0, 0.3], [1.0_f64, 3.0, -2.0, 0.7]);
    let (v, _) = probe_idioms::value_and_gradient(&x, &y);
    assert_eq!(v, probe_idioms(&x, &y));
    // The Hessian exists (the generic form compiles) and is symmetric.
    let h = probe_idioms::hessian(&x, &y);
    for a in 0..8 {
        for b in 0..8 {
            assert!((h[[a, b]] - h[[b, a]]).abs() < 1e-9);
        }
    }
}

#[test]
fn a_collect_inside_the_returned_tuple() {
    let x = [0.5_f64, -1.0, 2.0];
    let ((s2, v), pb) = tuple_with_collect::pullback(&x);
    assert_eq!((s2, v.clone()), tuple_with_collect(&x));
    // ȳ = (1, (1, 0, 2)): d/dx_k = 2s + Σ_j w_j·(δ_jk·s + x_j) = 2s + w_k·s + w·x
    let dx = pb((1.0, vec![1.0, 0.0, 2.0]));
    let s = 1.5;
    let wx = 0.5 + 4.0;
    assert_eq!(
        dx,
        vec![2.0 * s + s + wx, 2.0 * s + wx, 2.0 * s + 2.0 * s + wx]
    );
}

#[test]
fn fields_of_elements_written_in_place() {
    let ps = vec![Body { x: 0.5, v: 0.1 }, Body { x: -1.0, v: 0.3 }];
    let (y, (dps, dk)) = swarm::value_and_gradient(&ps, 0.7);
    assert_eq!(y, swarm(&ps, 0.7));
    let h = 1e-6;
    let fdk = (swarm(&ps, 0.7 + h) - swarm(&ps, 0.7 - h)) / (2.0 * h);
    assert!((dk - fdk).abs() < 1e-7, "{dk} vs {fdk}");
    for i in 0..2 {
        let (mut a, mut b) = (ps.clone(), ps.clone());
        a[i].x += h;
        b[i].x -= h;
        let fd = (swarm(&a, 0.7) - swarm(&b, 0.7)) / (2.0 * h);
        assert!((dps[i].x - fd).abs() < 1e-7, "x{i}: {} vs {fd}", dps[i].x);
        let (mut a, mut b) = (ps.clone(), ps.clone());
        a[i].v += h;
        b[i].v -= h;
        let fd = (swarm(&a, 0.7) - swarm(&b, 0.7)) / (2.0 * h);
        assert!((dps[i].v - fd).abs() < 1e-7, "v{i}: {} vs {fd}", dps[i].v);
    }
}

#[test]
fn loops_over_a_parameter_of_indices() {
    let x = [0.5_f64, 1.0, -0.3];
    let idx = [0_usize, 2, 2];
    let (y, (g, _)) = gathered::value_and_gradient(&x, &idx);
    assert_eq!(y, gathered(&x, &idx));
    // x0² + 2·x2² + (0·x0 + 1·x2 + 2·x2) + x0·x2 + (x2 + x2)
    let want = [2.0 * 0.5 + -0.3, 0.0, 4.0 * -0.3 + 3.0 + 0.5 + 2.0];
    assert_close(&g, &want);
}

/// Every component of `g` within 1e-12 of `want`'s.
fn assert_close(g: &[f64], want: &[f64]) {
    assert_eq!(g.len(), want.len(), "{g:?} vs {want:?}");
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!((a - b).abs() < 1e-12, "{i}: {a} vs {b}");
    }
}

// ------------------------------------------------- `&mut` arrays and early returns in helpers

/// A local fixed-size array passed `&mut` to a helper (its effect was dropped from the
/// gradient: the callee's pullback was handed a zero cotangent).
#[differentiable]
fn fill_pair(x: &[f64], out: &mut [f64]) {
    out[0] = x[0] * x[1];
    out[1] = x[1];
}

#[differentiable]
fn double_second(d: &mut [f64]) {
    d[1] = d[1] * 2.0;
}

#[differentiable]
fn fill_triple(x: &[f64], out: &mut [f64; 3]) {
    out[0] = x[0] * x[1];
    out[1] = x[1];
    out[2] = out[0] * x[0];
}

#[differentiable]
fn arrays_through_helpers(x: &[f64]) -> f64 {
    let mut p = [0.0; 2];
    fill_pair(x, &mut p);
    let mut q = [x[0], x[1]];
    double_second(&mut q);
    let mut r = [0.0; 3];
    fill_triple(x, &mut r);
    p[0] + p[1] + q[0] * q[1] + r[0] + r[1] * r[2]
}

/// A helper returning `()` that leaves early by `return;` (the gradient dropped the
/// helper, or panicked "the function returned no value", where the `return` was not
/// taken), also from inside its loop.
#[differentiable]
fn early_then_loop(d: &mut [f64], k: usize) {
    if k == 0 {
        return;
    }
    for i in 0..1 {
        d[i] = d[i] * d[i + 1];
    }
}

#[differentiable]
fn early_then_statement(d: &mut [f64], k: usize) {
    if k == 0 {
        return;
    }
    d[0] = d[0] * d[1];
}

#[differentiable]
fn early_in_loop(d: &mut [f64], k: usize) {
    for i in 0..d.len() - 1 {
        if i == k {
            return;
        }
        d[i] = d[i] * d[i + 1];
    }
}

#[differentiable]
fn scale_unless_negative(x: &mut f64, y: f64) {
    if y < 0.0 {
        return;
    }
    *x = *x * y;
}

/// `return r;` of a local, before the statements that write it (E0382 before).
#[differentiable]
fn early_local(x: &[f64]) -> Vec<f64> {
    let mut r = vec![0.0; 2];
    if x[0] < 0.0 {
        return r;
    }
    r[0] = x[0] * x[1];
    r[1] = x[1];
    r
}

#[differentiable]
fn early_helpers(x: &[f64], k: usize) -> f64 {
    let mut d = x.to_vec();
    early_then_loop(&mut d, k);
    early_then_statement(&mut d, k);
    early_in_loop(&mut d, k);
    let mut a = x[2];
    scale_unless_negative(&mut a, x[1]);
    let r = early_local(x);
    d[0] + d[1] * a + r[0] + 2.0 * r[1]
}

#[test]
fn mut_arrays_and_early_returns_in_helpers() {
    let x = vec![2.0_f64, 3.0];
    // p = (x0·x1, x1), q = (x0, 2·x1), r = (x0·x1, x1, x0²·x1):
    // f = x0·x1 + x1 + 2·x0·x1 + x0·x1 + x0²·x1².
    let g = arrays_through_helpers::gradient(&x);
    let (x0, x1) = (x[0], x[1]);
    assert_eq!(
        g,
        vec![
            4.0 * x1 + 2.0 * x0 * x1 * x1,
            4.0 * x0 + 1.0 + 2.0 * x0 * x0 * x1
        ]
    );
    mochi::testing::test_rule(
        (vec![0.7_f64, -1.3],),
        |a| arrays_through_helpers(&a.0),
        |a| arrays_through_helpers::rrule(&a.0),
    );
    for k in [0_usize, 1, 2] {
        for x in [vec![2.0_f64, 3.0, 0.5], vec![-1.5_f64, -0.7, 1.2]] {
            mochi::testing::test_rule(
                (x, k),
                |a| early_helpers(&a.0, a.1),
                |a| early_helpers::rrule(&a.0, a.1),
            );
        }
    }
    // At k = 1: d0 ← x0·x1 (the loop), then d0 ← d0·d1 = x0·x1² (the statement), then
    // the last loop returns at i = 1 after d0 ← d0·d1 = x0·x1³.
    let (y, g) = early_helpers::value_and_gradient(&[2.0, 3.0, 0.5], 1);
    let want = 2.0 * 27.0 + 3.0 * (0.5 * 3.0) + 6.0 + 6.0;
    assert!((y - want).abs() < 1e-12, "{y}");
    // ∂/∂x0 = x1³ + x1.
    assert!((g.0[0] - (27.0 + 3.0)).abs() < 1e-12, "{g:?}");
}

/// A sign made of comparisons cast to integers, then to a float: an integer, not a
/// cast of a float (the Hessian was refused: "it casts a float with `as f64`").
#[differentiable]
fn sign_of_product(x: &[f64]) -> f64 {
    let t = x[0] * x[1];
    let s = ((0.0 < t) as i32 - (t < 0.0) as i32) as f64;
    s * t * t + x[1] * x[1] * x[0]
}

#[test]
fn sign_from_comparisons_has_a_hessian() {
    // s·x0²·x1² + x1²·x0: H = [[2s·x1², 4s·x0·x1 + 2x1], [.., 2s·x0² + 2x0]].
    for (x, s) in [([2.0_f64, 3.0], 1.0), ([-2.0_f64, 3.0], -1.0)] {
        let h = sign_of_product::hessian(&x);
        let want = [
            [2.0 * s * x[1] * x[1], 4.0 * s * x[0] * x[1] + 2.0 * x[1]],
            [
                4.0 * s * x[0] * x[1] + 2.0 * x[1],
                2.0 * s * x[0] * x[0] + 2.0 * x[0],
            ],
        ];
        for i in 0..2 {
            for j in 0..2 {
                assert!((h[(i, j)] - want[i][j]).abs() < 1e-12, "{h:?}");
            }
        }
    }
}

/// A `bool` variable cast to an integer, then to a float (probe 24's `phi` of a
/// constant `bool`): not a comparison, so the twin does not take it for an integer;
/// the crate builds and the gradient is the cosine's zero plus the product's.
#[differentiable]
fn bool_variable_cast(x: f64) -> f64 {
    let a = x > 0.0;
    (a as i32 as f64).cos() + 2.0 * x
}

#[test]
fn bool_variable_cast_builds() {
    assert_eq!(bool_variable_cast::gradient(0.5), 2.0);
    assert_eq!(bool_variable_cast::gradient(-0.5), 2.0);
}

/// Local closures that write through a `&mut` parameter (`|v, out: &mut Vec<f64>|
/// out.push(v * c)`, `|s: &mut f64, v| *s += v * v` given `&mut a` or `&mut m[1][2]`) and
/// an `FnMut` closure writing its capture (`let mut add = |v| acc += v * v;`). The first
/// two gave a **zero gradient** with no error before 2026-12-02 (the writes went through
/// an alias that reached no cotangent); the last was refused. Also `let r: &mut Vec<f64> =
/// &mut o;` with its type written (refused before).
#[differentiable]
fn closures_writing_through_references(x: &[f64]) -> f64 {
    let mut acc = 0.0;
    let mut add = |v: f64| acc += v * v;
    for &v in x {
        add(v);
    }
    add(x[0]);
    let c = x[1];
    let push_scaled = |v: f64, out: &mut Vec<f64>| out.push(v * c);
    let mut o = Vec::new();
    push_scaled(x[2], &mut o);
    push_scaled(x[0], &mut o);
    let bump = |s: &mut f64, v: f64| *s += v * v;
    let mut a = x[0];
    bump(&mut a, x[1]);
    let mut m = vec![x.to_vec(), x.to_vec()];
    bump(&mut m[1][2], x[0]);
    let mut q = Vec::new();
    let r: &mut Vec<f64> = &mut q;
    r.push(x[2] * 2.0);
    acc + o[0] * o[1] + a * m[1][2] + q[0]
}

#[test]
fn closures_writing_through_references_gradients() {
    for x in [vec![0.3_f64, 1.2, -0.7], vec![-1.1, 0.4, 0.9]] {
        mochi::testing::test_rule(
            (x.clone(),),
            |t| closures_writing_through_references(&t.0),
            |t| closures_writing_through_references::rrule(&t.0),
        );
    }
    // Σx² + x0² + x2 x0 x1² + (x0 + x1²)(x2 + x0²) + 2 x2, at (0.3, 1.2, −0.7).
    let (x0, x1, x2) = (0.3_f64, 1.2_f64, -0.7_f64);
    let g = closures_writing_through_references::gradient(&[x0, x1, x2]);
    let want = [
        4.0 * x0 + x2 * x1 * x1 + (x2 + x0 * x0) + (x0 + x1 * x1) * 2.0 * x0,
        2.0 * x1 + 2.0 * x2 * x0 * x1 + 2.0 * x1 * (x2 + x0 * x0),
        2.0 * x2 + x0 * x1 * x1 + (x0 + x1 * x1) + 2.0,
    ];
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{g:?} against {want:?}");
    }
}

#[differentiable]
fn double_and_advance(s: &mut f64, k: &mut usize) {
    *s *= 2.0;
    *k += 1;
}

#[differentiable]
fn scale_element(s: &mut f64, c: f64) {
    *s *= c;
}

/// `&mut v[k]` given to a call whose other argument changes `k` (`&mut k`, a block that
/// assigns it): the element goes back to `v[k]` with `k` as it was when the place was
/// borrowed. **Before 2026-12-02 it went to `v[new k]`**: a wrong value and gradient
/// with no error (probe 26).
#[differentiable]
fn index_changed_by_the_call(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let mut k = 0;
    double_and_advance(&mut v[k], &mut k);
    while k < 2 {
        double_and_advance(&mut v[k], &mut k);
    }
    let mut i = 2;
    scale_element(&mut v[i], {
        i += 1;
        3.0
    });
    v[0] + 10.0 * v[1] + v[2] * v[3] + i as f64
}

#[test]
fn index_changed_by_the_call_gradients() {
    let x = vec![0.5_f64, 0.25, -0.7, 1.3];
    // v = (2 x0, 2 x1, 3 x2, x3), i = 3.
    assert_eq!(
        index_changed_by_the_call(&x),
        1.0 + 5.0 + 3.0 * -0.7 * 1.3 + 3.0
    );
    mochi::testing::test_rule(
        (x.clone(),),
        |t| index_changed_by_the_call(&t.0),
        |t| index_changed_by_the_call::rrule(&t.0),
    );
    let (y, g) = index_changed_by_the_call::value_and_gradient(&x);
    assert_eq!(y, index_changed_by_the_call(&x));
    assert_eq!(g, vec![2.0, 20.0, 3.0 * 1.3, 3.0 * -0.7]);
}

// Found by probe 27 (2026-12-02): everyday forms that did not compile.

#[differentiable]
fn scale_in(e: &mut f64, s: f64) {
    *e *= s;
}

// A helper given the element of an iter_mut loop.
#[differentiable]
fn helper_on_iter_mut(x: &[f64], s: f64) -> f64 {
    let mut v = x.to_vec();
    for e in v.iter_mut() {
        scale_in(e, s);
    }
    v.iter().sum::<f64>()
}

#[differentiable]
fn scale_row(r: &mut [f64], s: f64) {
    for e in r.iter_mut() {
        *e *= s;
    }
}

// A helper given the row of an iter_mut loop over Vec<Vec<f64>>.
#[differentiable]
fn helper_on_rows(x: &[f64], s: f64) -> f64 {
    let mut m = vec![x.to_vec(), x.to_vec()];
    for row in m.iter_mut() {
        scale_row(row, s);
    }
    m[0][0] + m[1][1] * m[0][2]
}

/// A body moved by a symplectic Euler step.
#[derive(Clone, Debug, Tangent)]
pub struct Mover {
    /// Position.
    pub x: f64,
    /// Velocity.
    pub v: f64,
}

impl Mover {
    /// One step of length `dt`.
    #[differentiable]
    pub fn step(&mut self, dt: f64) {
        self.x += self.v * dt;
        self.v -= self.x * dt;
    }
}

// Methods on the elements of a local vec of struct literals.
#[differentiable]
fn methods_on_local_structs(x: &[f64]) -> f64 {
    let mut ps = vec![Mover { x: x[0], v: x[1] }, Mover { x: x[2], v: 0.5 }];
    for i in 0..ps.len() {
        ps[i].step(0.1);
    }
    ps[0].x * ps[1].v + ps[1].x
}

#[differentiable]
fn enumerate_skip_mut(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    for (i, e) in v.iter_mut().enumerate().skip(1) {
        *e *= i as f64;
    }
    v.iter().map(|e| e * e).sum::<f64>()
}

#[differentiable]
fn as_mut_slice_write(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let s = v.as_mut_slice();
    s[0] *= s[1];
    v[0] + v[2]
}

#[differentiable]
fn clone_from_vec(x: &[f64]) -> f64 {
    let mut a = vec![0.0; x.len()];
    let mut b = x.to_vec();
    for _ in 0..3 {
        a.clone_from(&b);
        for i in 0..b.len() {
            b[i] = a[i] * 0.5 + a[(i + 1) % a.len()].sin();
        }
    }
    b.iter().sum::<f64>()
}

#[differentiable]
fn split_ends_if_let(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    if let Some((h, rest)) = x.split_first() {
        v[0] = h * rest[0];
    }
    if let Some((l, rest)) = x.split_last() {
        v[1] += l * rest.iter().sum::<f64>();
    } else {
        v[1] = 0.0;
    }
    v[0] + v[1]
}

#[differentiable]
fn zip_helper_mut(x: &[f64], y: &[f64]) -> f64 {
    let mut out = vec![0.0; x.len()];
    for (o, &a) in out.iter_mut().zip(x) {
        scale_in(o, a);
        *o += a;
    }
    out.iter().zip(y).map(|(a, b)| a * b).sum::<f64>()
}

#[differentiable]
fn skip_helper_mut(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    for e in v.iter_mut().skip(1) {
        scale_in(e, 3.0);
    }
    v.iter().map(|e| e * e).sum::<f64>()
}

#[differentiable]
fn push_rows(x: &[f64]) -> f64 {
    let mut m: Vec<Vec<f64>> = Vec::new();
    for k in 0..2 {
        let mut row = Vec::new();
        for &e in x {
            row.push(e * (k as f64 + 1.0));
        }
        m.push(row);
    }
    m[0].iter().sum::<f64>() * m[1][0].sin()
}

mod found_by_probe_27 {
    use crate::check;

    check!(helper_on_iter_mut, (vec![0.5, -1.0, 2.0], 1.5), |a| (
        &a.0, a.1
    ));
    check!(helper_on_rows, (vec![0.5, -1.0, 2.0], 1.5), |a| (&a.0, a.1));
    check!(methods_on_local_structs, (vec![0.5, -1.0, 2.0],), |a| (&a
        .0));
    check!(enumerate_skip_mut, (vec![0.5, -1.0, 2.0],), |a| (&a.0));
    check!(as_mut_slice_write, (vec![0.5, -1.0, 2.0],), |a| (&a.0));
    check!(clone_from_vec, (vec![0.5, -1.0, 2.0],), |a| (&a.0));
    check!(split_ends_if_let, (vec![0.5, -1.0, 2.0],), |a| (&a.0));
    check!(
        zip_helper_mut,
        (vec![0.5, -1.0, 2.0], vec![1.0, 2.0, 3.0]),
        |a| (&a.0, &a.1)
    );
    check!(skip_helper_mut, (vec![0.5, -1.0, 2.0],), |a| (&a.0));
    check!(push_rows, (vec![0.5, -1.0, 2.0],), |a| (&a.0));
}

#[test]
fn elements_given_to_helpers_exact() {
    let x = vec![0.5_f64, -1.0, 2.0];
    let (y, (gx, gs)) = helper_on_iter_mut::value_and_gradient(&x, 1.5);
    assert_eq!(y, 1.5 * 1.5);
    assert_eq!(gx, vec![1.5; 3]);
    assert_eq!(gs, 1.5);
    // v = (x0, 1 x1, 2 x2) after the enumerate-then-skip loop.
    let (y, g) = enumerate_skip_mut::value_and_gradient(&x);
    assert_eq!(y, 0.25 + 1.0 + 16.0);
    assert_eq!(g, vec![1.0, -2.0, 16.0]);
}

// Found by probe 28 (2026-12-02): `for &k in idx` over a parameter without a derivative,
// written without `.iter()` (E0700 at the attribute before).

#[differentiable]
fn scatter_through_indices(x: &[f64], idx: &[usize]) -> f64 {
    let mut v = x.to_vec();
    for &k in idx {
        v[k] = v[k] * 2.0 + v[idx[0]];
    }
    for (j, k) in idx.iter().enumerate() {
        v[*k] += j as f64 * x[0];
    }
    v.iter().map(|e| e * e).sum::<f64>()
}

/// Bisection for `√a` as a plain function (no derivative): called inside `no_grad`.
fn bisect_sqrt(a: f64) -> f64 {
    bisection_as_written(a)
}

/// Bisection for `√a`, differentiated as written: every midpoint is a fixed multiple of
/// `hi = a`, so the derivative is that multiple, `y / a`, not `1 / (2√a)`.
#[differentiable]
fn bisection_as_written(a: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, a.max(1.0));
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if mid * mid > a {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The root found without a derivative, then one Newton step on `r² − a = 0`: the step
/// carries the implicit derivative `1 / (2r)`.
#[differentiable]
fn bisection_then_newton(a: f64) -> f64 {
    let r = mochi::no_grad(bisect_sqrt(a));
    r - (r * r - a) / (2.0 * r)
}

#[test]
fn solvers_differentiate_as_written_or_through_a_newton_step() {
    let a = 2.3_f64;
    let (y, g) = bisection_as_written::value_and_gradient(a);
    assert!((y - a.sqrt()).abs() < 1e-9);
    assert!((g - y / a).abs() < 1e-12, "{g} against {}", y / a);
    let (y, g) = bisection_then_newton::value_and_gradient(a);
    assert!((y - a.sqrt()).abs() < 1e-12);
    assert!(
        (g - 0.5 / a.sqrt()).abs() < 1e-9,
        "{g} against {}",
        0.5 / a.sqrt()
    );
}

#[test]
fn scatter_through_indices_gradients() {
    let x = vec![0.7_f64, -0.3, 1.2, 0.4, -0.9];
    let idx = vec![2usize, 0, 2, 4];
    mochi::testing::test_rule(
        (x.clone(), idx.clone()),
        |t| scatter_through_indices(&t.0, &t.1),
        |t| scatter_through_indices::rrule(&t.0, &t.1),
    );
}

// Probe 29 (2026-12-02): Gaussian elimination with row swaps of a `Vec<Vec<f64>>`
// (`m.swap(p, k)`), checked against the cofactors.

#[differentiable]
fn det_by_elimination(a: &[Vec<f64>]) -> f64 {
    let n = a.len();
    let mut m = a.to_vec();
    let mut det = 1.0;
    for k in 0..n {
        let mut p = k;
        for i in k + 1..n {
            if m[i][k].abs() > m[p][k].abs() {
                p = i;
            }
        }
        if p != k {
            m.swap(p, k);
            det = -det;
        }
        det *= m[k][k];
        for i in k + 1..n {
            let f = m[i][k] / m[k][k];
            for j in k..n {
                m[i][j] -= f * m[k][j];
            }
        }
    }
    det
}

#[test]
fn det_by_elimination_is_the_cofactors() {
    let a = vec![
        vec![0.1, 2.0, -0.3],
        vec![3.0, 0.5, 0.2],
        vec![-0.6, 1.1, 1.5],
    ];
    let (d, g) = det_by_elimination::value_and_gradient(&a);
    // det and its gradient (the cofactor matrix) by the rule of Sarrus.
    let m = |i: usize, j: usize| a[i][j];
    let det = m(0, 0) * (m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1))
        - m(0, 1) * (m(1, 0) * m(2, 2) - m(1, 2) * m(2, 0))
        + m(0, 2) * (m(1, 0) * m(2, 1) - m(1, 1) * m(2, 0));
    assert!((d - det).abs() < 1e-12, "{d} {det}");
    let c00 = m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1);
    let c01 = -(m(1, 0) * m(2, 2) - m(1, 2) * m(2, 0));
    assert!(
        (g[0][0] - c00).abs() < 1e-12 && (g[0][1] - c01).abs() < 1e-12,
        "{g:?}"
    );
}

#[test]
fn det_by_elimination_gradients() {
    let a = vec![
        vec![0.1, 2.0, -0.3],
        vec![3.0, 0.5, 0.2],
        vec![-0.6, 1.1, 1.5],
    ];
    mochi::testing::test_rule(
        (a,),
        |t| det_by_elimination(&t.0),
        |t| det_by_elimination::rrule(&t.0),
    );
}

// Probe 32 (2026-12-02): enumerate among iter_mut's adapters (rev outside it, step_by),
// &mut self methods on elements of a typed Vec of structs and of vec![S { .. }; n].

#[differentiable]
fn enumerate_rev(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let mut acc = 0.0;
    for (i, e) in v.iter_mut().enumerate().rev() {
        acc = acc * 0.5 + *e;
        *e = acc * (i as f64 + 1.0);
    }
    v.iter().map(|a| a * a).sum::<f64>()
}

#[differentiable]
fn skip_then_enumerate(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    for (i, e) in v.iter_mut().skip(2).enumerate() {
        *e *= (i + 1) as f64;
    }
    for (i, e) in v.iter_mut().enumerate().step_by(2) {
        *e += i as f64 * x[0];
    }
    v.iter().map(|a| a * a).sum::<f64>()
}

/// A spring's state.
#[derive(Clone, Debug, Tangent)]
pub struct Spring {
    /// Position.
    pub x: f64,
    /// Velocity.
    pub v: f64,
}

impl Spring {
    /// One step of the spring with constant `k`.
    #[differentiable]
    pub fn step(&mut self, k: f64) {
        self.v -= k * self.x * 0.1;
        self.x += self.v * 0.1;
    }
    /// The energy.
    #[differentiable]
    pub fn energy(&self, k: f64) -> f64 {
        0.5 * self.v * self.v + 0.5 * k * self.x * self.x
    }
}

#[differentiable]
fn typed_vec_of_structs(x: &[f64], k: f64) -> f64 {
    let mut os: Vec<Spring> = Vec::new();
    for &e in x {
        os.push(Spring { x: e, v: 0.0 });
    }
    for _ in 0..5 {
        for i in 0..os.len() {
            os[i].step(k);
        }
    }
    let mut e = 0.0;
    for i in 0..os.len() {
        e += os[i].energy(k) + os[(i + 1) % os.len()].x * os[i].x;
    }
    e
}

#[differentiable]
fn repeated_struct_literal(x: &[f64]) -> f64 {
    let mut os = vec![Spring { x: x[0], v: x[1] }; 3];
    os[1].step(2.0);
    os[2].step(x[2]);
    os[2].step(x[2]);
    os.iter().map(|o| o.x * o.v).sum::<f64>()
}

mod found_by_probe_32 {
    use crate::check;

    fn v5() -> Vec<f64> {
        vec![0.7, -0.3, 1.2, 0.4, -0.9]
    }
    check!(enumerate_rev, (v5(),), |a| (&a.0));
    check!(skip_then_enumerate, (v5(),), |a| (&a.0));
    check!(typed_vec_of_structs, (v5(), 1.3), |a| (&a.0, a.1));
    check!(repeated_struct_literal, (v5(),), |a| (&a.0));
}

#[test]
fn enumerate_rev_counts_the_elements_own_index() {
    let x = vec![0.7_f64, -0.3, 1.2, 0.4, -0.9];
    let mut v = x.clone();
    let mut acc = 0.0;
    for i in (0..v.len()).rev() {
        acc = acc * 0.5 + v[i];
        v[i] = acc * (i as f64 + 1.0);
    }
    let want: f64 = v.iter().map(|a| a * a).sum();
    assert_eq!(enumerate_rev::value_and_gradient(&x).0, want);
}

/// A local closure taking `&mut f64`, applied to the elements of `iter_mut` loops (E0308
/// at the attribute before 2026-12-02: the call was inlined before the loop became an
/// index loop, and the element reached it as a value).
#[differentiable]
fn closure_on_elements(x: &[f64]) -> f64 {
    let c = x[0];
    let f = |r: &mut f64| *r *= c;
    let mut v = x.to_vec();
    for e in v.iter_mut() {
        f(e);
    }
    for e in v.iter_mut().skip(1) {
        f(e);
        *e += 1.0;
    }
    v.iter().map(|a| a * a).sum::<f64>()
}

#[test]
fn closure_on_elements_gradients() {
    let x = vec![0.7_f64, -0.3, 1.2];
    mochi::testing::test_rule(
        (x.clone(),),
        |t| closure_on_elements(&t.0),
        |t| closure_on_elements::rrule(&t.0),
    );
    // v = (x0 c, x1 c² + 1, x2 c² + 1) with c = x0.
    let c = x[0];
    let v = [x[0] * c, x[1] * c * c + 1.0, x[2] * c * c + 1.0];
    let (y, g) = closure_on_elements::value_and_gradient(&x);
    assert_eq!(y, v.iter().map(|a| a * a).sum::<f64>());
    let want0 = 2.0 * v[0] * 2.0 * c + 2.0 * v[1] * 2.0 * c * x[1] + 2.0 * v[2] * 2.0 * c * x[2];
    assert!((g[0] - want0).abs() < 1e-12, "{g:?}");
    assert!((g[1] - 2.0 * v[1] * c * c).abs() < 1e-12);
    assert!((g[2] - 2.0 * v[2] * c * c).abs() < 1e-12);
}
