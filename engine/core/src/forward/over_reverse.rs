//! What the forward-mode and forward-over-reverse companions of a generic
//! `#[differentiable]` function (`f::jvp`, `f::hvp`, `f::hessian`) call: seeding duals
//! along directions and reading the partials back.
//!
//! Forward over reverse: the derived reverse rule of `f<T>` run with `T = Dual<B>` and
//! inputs `xᵢ + Σₖ Vᵢₖ εₖ` computes the gradient and, in partial `k` of each component,
//! the directional derivative of the gradient along column `k` of `V`: the
//! Hessian-vector product `H·V[:, k]`.

use super::Dual;

/// `xᵢ + vᵢ ε`: the inputs of a JVP or HVP along `v`.
///
/// # Panics
/// If `x` and `v` have different lengths.
#[track_caller]
pub fn duals_along(x: &[f64], v: &[f64]) -> Vec<Dual<1>> {
    assert_eq!(
        x.len(),
        v.len(),
        "mochi: the direction has {} components, the point {}",
        v.len(),
        x.len()
    );
    x.iter().zip(v).map(|(&a, &b)| Dual::new(a, [b])).collect()
}

/// The first partial of each component (`H·v` from the gradient on `Dual<1>`).
pub fn first_partials(g: &[Dual<1>]) -> Vec<f64> {
    g.iter().map(|d| d.partials[0]).collect()
}

/// Appends a cotangent of `n` components (a `Vec` or an array, in logical order) to
/// `out`, or `n` zeros for a structural zero (an empty cotangent).
pub fn extend_dense<'a, C>(out: &mut Vec<f64>, cotangent: C, n: usize)
where
    C: IntoIterator<Item = &'a f64>,
    C::IntoIter: ExactSizeIterator,
{
    let components = cotangent.into_iter();
    if components.len() == 0 {
        out.resize(out.len() + n, 0.0);
    } else {
        out.extend(components);
    }
}

/// The dense Hessian, `B` columns per reverse sweep: `gradient` is the function's
/// gradient on `Dual<B>`, called with `xᵢ + Σₖ [i = c + k] εₖ` for each block of
/// columns starting at `c`.
#[cfg(feature = "ndarray")]
pub fn hessian_by_blocks<const B: usize>(
    x: &[f64],
    mut gradient: impl FnMut(Vec<Dual<B>>) -> Vec<Dual<B>>,
) -> ndarray::Array2<f64> {
    let n = x.len();
    let mut h = ndarray::Array2::zeros((n, n));
    for start in (0..n).step_by(B) {
        let seeded = x
            .iter()
            .enumerate()
            .map(|(i, &value)| {
                let mut partials = [0.0; B];
                if (start..start + B).contains(&i) {
                    partials[i - start] = 1.0;
                }
                Dual::new(value, partials)
            })
            .collect();
        let g = gradient(seeded);
        assert_eq!(
            g.len(),
            n,
            "mochi: the gradient has {} components, the point {n}",
            g.len()
        );
        for (i, gi) in g.iter().enumerate() {
            for k in 0..B.min(n - start) {
                h[[i, start + k]] = gi.partials[k];
            }
        }
    }
    h
}

/// The value and the Jacobian (one row per output) by forward mode, `B` input
/// directions per run: `f` is the function on `Dual<B>`, called with
/// `xᵢ + Σₖ [i = c + k] εₖ` for each block of inputs starting at `c`.
#[cfg(feature = "ndarray")]
pub fn jacobian_by_blocks<const B: usize>(
    x: &[f64],
    mut f: impl FnMut(Vec<Dual<B>>) -> Vec<Dual<B>>,
) -> (Vec<f64>, ndarray::Array2<f64>) {
    let n = x.len();
    let mut value = Vec::new();
    let mut jacobian = ndarray::Array2::zeros((0, n));
    for start in (0..n.max(1)).step_by(B) {
        let seeded = x
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let mut partials = [0.0; B];
                if (start..start + B).contains(&i) {
                    partials[i - start] = 1.0;
                }
                Dual::new(v, partials)
            })
            .collect();
        let y = f(seeded);
        if start == 0 {
            value = y.iter().map(|d| d.value).collect();
            jacobian = ndarray::Array2::zeros((y.len(), n));
        }
        assert_eq!(
            y.len(),
            value.len(),
            "mochi: the output changed length between runs"
        );
        for (r, yr) in y.iter().enumerate() {
            for k in 0..B.min(n.saturating_sub(start)) {
                jacobian[[r, start + k]] = yr.partials[k];
            }
        }
    }
    (value, jacobian)
}
