//! [argmin](https://argmin-rs.org) problems from `#[differentiable]` functions.
//!
//! argmin's solvers ask for a [`CostFunction`] and a [`Gradient`] (L-BFGS, gradient
//! descent, nonlinear conjugate gradients), and a [`Hessian`] for Newton's method;
//! mochi derives all three. [`Problem`] wraps the functions: the cost is the plain
//! function, the gradient its `f::gradient` companion, the Hessian its `f::hessian`
//! companion (generic functions of one slice) converted to the parameter's matrix type.
//!
//! ```
//! use argmin::core::{Executor, State};
//! use argmin::solver::linesearch::MoreThuenteLineSearch;
//! use argmin::solver::quasinewton::LBFGS;
//! use mochi::prelude::*;
//! use nalgebra::DVector;
//!
//! #[differentiable]
//! fn bowl(x: &DVector<f64>) -> f64 {
//!     let d = x - DVector::from_vec(vec![1.0, -2.0]);
//!     d.norm_squared()
//! }
//!
//! fn main() {
//!     let problem = mochi::argmin::problem!(bowl);
//!     let solver = LBFGS::new(MoreThuenteLineSearch::new(), 5);
//!     let result = Executor::new(problem, solver)
//!         .configure(|state| state.param(DVector::zeros(2)).max_iters(50))
//!         .run()
//!         .expect("L-BFGS runs");
//!     let best = result.state().get_best_param().expect("a best point");
//!     assert!((best - DVector::from_vec(vec![1.0, -2.0])).norm() < 1e-6);
//! }
//! ```
//!
//! A function of data as well as parameters is closed over:
//! `Problem::new(|w: &DVector<f64>| loss(w, &x, &y), |w| loss::gradient(w, &x, &y).0)`.

use argmin::core::{CostFunction, Error, Gradient, Hessian};
use std::marker::PhantomData;

/// An argmin problem over parameters `P` from a cost function, its gradient and, for
/// Newton's method, its Hessian (`H`, the Hessian's type; `()` without one).
pub struct Problem<P, F, G, H = (), M = ()> {
    cost: F,
    gradient: G,
    hessian: H,
    _types: PhantomData<fn(&P) -> M>,
}

impl<P, F, G> Problem<P, F, G>
where
    F: Fn(&P) -> f64,
    G: Fn(&P) -> P,
{
    /// The problem of minimising `cost`, whose gradient `gradient` computes (usually
    /// `|p| f(p)` and `|p| f::gradient(p)` of a `#[differentiable] fn f`, or the
    /// [`problem!`](crate::argmin::problem) macro).
    pub fn new(cost: F, gradient: G) -> Self {
        Problem {
            cost,
            gradient,
            hessian: (),
            _types: PhantomData,
        }
    }

    /// Adds the Hessian `hessian` computes (a matrix type argmin's Newton method
    /// inverts, such as `DMatrix<f64>` for `DVector<f64>` parameters).
    pub fn with_hessian<H, M>(self, hessian: H) -> Problem<P, F, G, H, M>
    where
        H: Fn(&P) -> M,
    {
        Problem {
            cost: self.cost,
            gradient: self.gradient,
            hessian,
            _types: PhantomData,
        }
    }
}

impl<P, F, G, H, M> CostFunction for Problem<P, F, G, H, M>
where
    F: Fn(&P) -> f64,
{
    type Param = P;
    type Output = f64;
    fn cost(&self, param: &P) -> Result<f64, Error> {
        Ok((self.cost)(param))
    }
}

impl<P, F, G, H, M> Gradient for Problem<P, F, G, H, M>
where
    G: Fn(&P) -> P,
{
    type Param = P;
    type Gradient = P;
    fn gradient(&self, param: &P) -> Result<P, Error> {
        Ok((self.gradient)(param))
    }
}

impl<P, F, G, H, M> Hessian for Problem<P, F, G, H, M>
where
    H: Fn(&P) -> M,
{
    type Param = P;
    type Hessian = M;
    fn hessian(&self, param: &P) -> Result<M, Error> {
        Ok((self.hessian)(param))
    }
}

/// `problem!(f)`: the [`Problem`] of a `#[differentiable] fn f(p: &P) -> f64` of one
/// argument (`&Vec<f64>`, `&Array1<f64>` or `&DVector<f64>`): the cost `f(p)` and the
/// gradient `f::gradient(p)`.
#[macro_export]
#[doc(hidden)]
macro_rules! __argmin_problem {
    ($($f:ident)::+) => {
        $crate::argmin::Problem::new(
            |p: &_| $($f)::+(p),
            |p: &_| $($f)::+::gradient(p),
        )
    };
}

#[doc(inline)]
pub use crate::__argmin_problem as problem;

/// The Hessian of a function of a slice, as `f::hessian(x)` gives it (an ndarray
/// matrix), converted to a nalgebra `DMatrix` for argmin's Newton method on
/// `DVector<f64>` parameters.
pub fn to_dmatrix(h: ndarray::Array2<f64>) -> nalgebra::DMatrix<f64> {
    let (rows, cols) = h.dim();
    nalgebra::DMatrix::from_fn(rows, cols, |i, j| h[[i, j]])
}
