//! What the forward-mode and forward-over-reverse companions of a generic
//! `#[differentiable]` function (`f::jvp`, `f::hvp`, `f::hessian`) call: seeding duals
//! along directions and reading the partials back.
//!
//! Forward over reverse: the derived reverse rule of `f<T>` run with `T = Dual<B>` and
//! inputs `xᵢ + Σₖ Vᵢₖ εₖ` computes the gradient and, in partial `k` of each component,
//! the directional derivative of the gradient along column `k` of `V`: the
//! Hessian-vector product `H·V[:, k]`.

use super::Dual;
use crate::NoTangent;

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

/// Data of a function's argument (`xs: &[Vec<f64>]`, `&[(f64, usize)]`, `Vec<[f64;
/// 3]>`: what the companions take as constants) as duals seeded along a direction of
/// its cotangent's shape: `xᵢ + dᵢ ε`. A nested gradient's rule (`g::gradient::rrule`)
/// runs the gradient on these to carry the cotangent of the gradient's data part into
/// the Hessian-vector product, and to read back the data's own part of it. A
/// structural-zero direction (an empty `Vec`) seeds zeros.
pub trait SeedData<D> {
    /// The data in `Dual<1>`.
    type Out;
    /// The data seeded along `dir`.
    fn seed_data(self, dir: &D) -> Self::Out;
}

impl SeedData<f64> for f64 {
    type Out = Dual<1>;
    #[inline(always)]
    fn seed_data(self, dir: &f64) -> Dual<1> {
        Dual::new(self, [*dir])
    }
}

impl<X: SeedData<D> + Clone, D: crate::TangentVector> SeedData<Vec<D>> for &[X] {
    type Out = Vec<X::Out>;
    fn seed_data(self, dir: &Vec<D>) -> Vec<X::Out> {
        let zero = D::zero();
        self.iter()
            .enumerate()
            .map(|(i, x)| x.clone().seed_data(dir.get(i).unwrap_or(&zero)))
            .collect()
    }
}

impl<X: SeedData<D> + Clone, D: crate::TangentVector> SeedData<Vec<D>> for &Vec<X> {
    type Out = Vec<X::Out>;
    fn seed_data(self, dir: &Vec<D>) -> Vec<X::Out> {
        self[..].seed_data(dir)
    }
}

impl<X: SeedData<D> + Clone, D: crate::TangentVector> SeedData<Vec<D>> for Vec<X> {
    type Out = Vec<X::Out>;
    fn seed_data(self, dir: &Vec<D>) -> Vec<X::Out> {
        self[..].seed_data(dir)
    }
}

impl<X: SeedData<D>, D, const N: usize> SeedData<[D; N]> for [X; N] {
    type Out = [X::Out; N];
    fn seed_data(self, dir: &[D; N]) -> [X::Out; N] {
        let mut k = 0;
        self.map(|x| {
            k += 1;
            x.seed_data(&dir[k - 1])
        })
    }
}

impl<X: SeedData<D> + Clone, D, const N: usize> SeedData<[D; N]> for &[X; N] {
    type Out = [X::Out; N];
    fn seed_data(self, dir: &[D; N]) -> [X::Out; N] {
        self.clone().seed_data(dir)
    }
}

macro_rules! seed_data_tuple {
    ($($p:ident $d:ident $i:tt),+) => {
        impl<$($p: SeedData<$d>, $d),+> SeedData<($($d,)+)> for ($($p,)+) {
            type Out = ($($p::Out,)+);
            fn seed_data(self, dir: &($($d,)+)) -> Self::Out {
                ($(self.$i.seed_data(&dir.$i),)+)
            }
        }
    };
}
seed_data_tuple!(A DA 0, B DB 1);
seed_data_tuple!(A DA 0, B DB 1, C DC 2);
seed_data_tuple!(A DA 0, B DB 1, C DC 2, E DE 3);

macro_rules! seed_data_as_is {
    ($($t:ty),*) => {$(
        impl SeedData<NoTangent> for $t {
            type Out = $t;
            #[inline(always)]
            fn seed_data(self, _: &NoTangent) -> $t {
                self
            }
        }
    )*};
}
crate::tangent::for_sized_no_tangent_types!(seed_data_as_is);

/// `dy·∇f + H·v` of a data argument's part of a gradient computed on `Dual<1>` (the
/// value is the gradient, the first partial the Hessian-vector product), in the
/// argument's own cotangent type.
pub trait DataPartials {
    /// The part in `f64`.
    type Out;
    /// `dy · value + partial`, componentwise.
    fn data_partials(&self, dy: f64) -> Self::Out;
}

impl DataPartials for Dual<1> {
    type Out = f64;
    #[inline(always)]
    fn data_partials(&self, dy: f64) -> f64 {
        dy * self.value + self.partials[0]
    }
}

impl<X: DataPartials> DataPartials for Vec<X> {
    type Out = Vec<X::Out>;
    fn data_partials(&self, dy: f64) -> Vec<X::Out> {
        self.iter().map(|x| x.data_partials(dy)).collect()
    }
}

impl<X: DataPartials, const N: usize> DataPartials for [X; N] {
    type Out = [X::Out; N];
    fn data_partials(&self, dy: f64) -> [X::Out; N] {
        std::array::from_fn(|i| self[i].data_partials(dy))
    }
}

impl DataPartials for NoTangent {
    type Out = NoTangent;
    #[inline(always)]
    fn data_partials(&self, _: f64) -> NoTangent {
        NoTangent
    }
}

macro_rules! data_partials_tuple {
    ($($p:ident $i:tt),+) => {
        impl<$($p: DataPartials),+> DataPartials for ($($p,)+) {
            type Out = ($($p::Out,)+);
            fn data_partials(&self, dy: f64) -> Self::Out {
                ($(self.$i.data_partials(dy),)+)
            }
        }
    };
}
data_partials_tuple!(A 0, B 1);
data_partials_tuple!(A 0, B 1, C 2);
data_partials_tuple!(A 0, B 1, C 2, E 3);
