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
//!
//! Least squares is a [`ResidualProblem`]: argmin's Gauss–Newton solvers ask for the
//! residuals as an [`Operator`] and their [`Jacobian`]; mochi derives the Jacobian by
//! forward mode, from the `f::jacobian` companion of a generic
//! `fn f<T: Float>(x: &[T]) -> Vec<T>`. The [`residual_problem!`](crate::argmin::residual_problem)
//! macro builds one:
//!
//! ```
//! use argmin::core::{Executor, State};
//! use argmin::solver::gaussnewton::GaussNewton;
//! use mochi::num_traits::Float;
//! use mochi::prelude::*;
//! use nalgebra::DVector;
//!
//! /// Rosenbrock's function as residuals: `(10 (x₁ − x₀²), 1 − x₀)`, zero at `(1, 1)`.
//! #[differentiable]
//! fn rosenbrock_residuals<T: Float>(x: &[T]) -> Vec<T> {
//!     let mut r = vec![T::zero(); 2];
//!     r[0] = T::from(10.0).unwrap() * (x[1] - x[0] * x[0]);
//!     r[1] = T::one() - x[0];
//!     r
//! }
//!
//! fn main() {
//!     let problem = mochi::argmin::residual_problem!(rosenbrock_residuals);
//!     let result = Executor::new(problem, GaussNewton::<f64>::new())
//!         .configure(|state| state.param(DVector::from_vec(vec![-1.2, 1.0])).max_iters(20))
//!         .run()
//!         .expect("Gauss-Newton runs");
//!     let x = result.state().get_param().expect("a point");
//!     assert!((x - DVector::from_vec(vec![1.0, 1.0])).norm() < 1e-10);
//! }
//! ```

use argmin::core::{CostFunction, Error, Gradient, Hessian, Jacobian, Operator};
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

/// What a [`ResidualProblem`]'s parameters can be: `DVector<f64>` (residuals a
/// `DVector`, the Jacobian a `DMatrix`: what argmin's Gauss–Newton solvers invert) or
/// `Vec<f64>` (residuals a `Vec`, the Jacobian a `Vec` of rows).
pub trait ResidualParam {
    /// The residuals' type.
    type Residuals;
    /// The Jacobian's type.
    type Jacobian;
    /// The parameters as a slice, as the residual function takes them.
    fn as_params(&self) -> &[f64];
    /// The residuals from the function's `Vec`.
    fn residuals(r: Vec<f64>) -> Self::Residuals;
    /// The Jacobian (one row per residual) from the `f::jacobian` companion's matrix.
    fn jacobian(j: ndarray::Array2<f64>) -> Self::Jacobian;
}

impl ResidualParam for nalgebra::DVector<f64> {
    type Residuals = nalgebra::DVector<f64>;
    type Jacobian = nalgebra::DMatrix<f64>;
    fn as_params(&self) -> &[f64] {
        self.as_slice()
    }
    fn residuals(r: Vec<f64>) -> Self::Residuals {
        nalgebra::DVector::from_vec(r)
    }
    fn jacobian(j: ndarray::Array2<f64>) -> Self::Jacobian {
        to_dmatrix(j)
    }
}

impl ResidualParam for Vec<f64> {
    type Residuals = Vec<f64>;
    type Jacobian = Vec<Vec<f64>>;
    fn as_params(&self) -> &[f64] {
        self
    }
    fn residuals(r: Vec<f64>) -> Self::Residuals {
        r
    }
    fn jacobian(j: ndarray::Array2<f64>) -> Self::Jacobian {
        j.rows().into_iter().map(|row| row.to_vec()).collect()
    }
}

/// A nonlinear least-squares problem `min ½ ‖r(x)‖²` over parameters `P`
/// ([`ResidualParam`]): the residuals as argmin's [`Operator`], their [`Jacobian`], and
/// for solvers of the cost alone (L-BFGS) the [`CostFunction`] `½ ‖r‖²` and its
/// [`Gradient`] `Jᵀ r`.
///
/// Residuals or a Jacobian that are not finite (a parameter outside the model's domain)
/// are an argmin error naming the parameters, which stops the solver, never a panic.
pub struct ResidualProblem<P, F, J> {
    residuals: F,
    jacobian: J,
    _types: PhantomData<fn(&P)>,
}

impl<P, F, J> ResidualProblem<P, F, J>
where
    P: ResidualParam,
    F: Fn(&[f64]) -> Vec<f64>,
    J: Fn(&[f64]) -> (Vec<f64>, ndarray::Array2<f64>),
{
    /// The problem of the residuals `residuals` computes, with the Jacobian `jacobian`
    /// computes (usually `|x| f(x)` and `f::jacobian` of a `#[differentiable]
    /// fn f<T: Float>(x: &[T]) -> Vec<T>`, or the
    /// [`residual_problem!`](crate::argmin::residual_problem) macro).
    pub fn new(residuals: F, jacobian: J) -> Self {
        ResidualProblem {
            residuals,
            jacobian,
            _types: PhantomData,
        }
    }

    /// The residuals at `x`, or an error if one is not finite.
    fn checked_residuals(&self, x: &[f64]) -> Result<Vec<f64>, Error> {
        let r = (self.residuals)(x);
        match r.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(Error::msg(format!(
                "mochi: residual {i} is {} at the parameters {x:?}; start from parameters where the model is defined, or bound them",
                r[i]
            ))),
            None => Ok(r),
        }
    }

    /// The Jacobian at `x`, or an error if an entry is not finite.
    fn checked_jacobian(&self, x: &[f64]) -> Result<ndarray::Array2<f64>, Error> {
        let (_, j) = (self.jacobian)(x);
        match j.indexed_iter().find(|(_, v)| !v.is_finite()) {
            Some(((i, k), v)) => Err(Error::msg(format!(
                "mochi: the Jacobian entry ∂r{i}/∂x{k} is {v} at the parameters {x:?}; start from parameters where the model is differentiable"
            ))),
            None => Ok(j),
        }
    }
}

impl<P, F, J> Operator for ResidualProblem<P, F, J>
where
    P: ResidualParam,
    F: Fn(&[f64]) -> Vec<f64>,
    J: Fn(&[f64]) -> (Vec<f64>, ndarray::Array2<f64>),
{
    type Param = P;
    type Output = P::Residuals;
    fn apply(&self, param: &P) -> Result<P::Residuals, Error> {
        self.checked_residuals(param.as_params()).map(P::residuals)
    }
}

impl<P, F, J> Jacobian for ResidualProblem<P, F, J>
where
    P: ResidualParam,
    F: Fn(&[f64]) -> Vec<f64>,
    J: Fn(&[f64]) -> (Vec<f64>, ndarray::Array2<f64>),
{
    type Param = P;
    type Jacobian = P::Jacobian;
    fn jacobian(&self, param: &P) -> Result<P::Jacobian, Error> {
        self.checked_jacobian(param.as_params()).map(P::jacobian)
    }
}

impl<P, F, J> CostFunction for ResidualProblem<P, F, J>
where
    P: ResidualParam,
    F: Fn(&[f64]) -> Vec<f64>,
    J: Fn(&[f64]) -> (Vec<f64>, ndarray::Array2<f64>),
{
    type Param = P;
    type Output = f64;
    /// `½ ‖r‖²`.
    fn cost(&self, param: &P) -> Result<f64, Error> {
        let r = self.checked_residuals(param.as_params())?;
        Ok(0.5 * r.iter().map(|v| v * v).sum::<f64>())
    }
}

impl<P, F, J> Gradient for ResidualProblem<P, F, J>
where
    P: ResidualParam + From<Vec<f64>>,
    F: Fn(&[f64]) -> Vec<f64>,
    J: Fn(&[f64]) -> (Vec<f64>, ndarray::Array2<f64>),
{
    type Param = P;
    type Gradient = P;
    /// `Jᵀ r`, the gradient of `½ ‖r‖²`.
    fn gradient(&self, param: &P) -> Result<P, Error> {
        let x = param.as_params();
        let r = ndarray::Array1::from(self.checked_residuals(x)?);
        let j = self.checked_jacobian(x)?;
        Ok(P::from(j.t().dot(&r).to_vec()))
    }
}

/// `residual_problem!(f)`: the [`ResidualProblem`] of a generic `#[differentiable]
/// fn f<T: Float>(x: &[T]) -> Vec<T>`: the residuals `f(x)` and the Jacobian
/// `f::jacobian(x)`, over `DVector<f64>` or `Vec<f64>` parameters (inferred from the
/// solver's initial parameters).
#[macro_export]
#[doc(hidden)]
macro_rules! __argmin_residual_problem {
    ($($f:ident)::+) => {
        $crate::argmin::ResidualProblem::new(
            |x: &[f64]| $($f)::+(x),
            $($f)::+::jacobian,
        )
    };
}

#[doc(inline)]
pub use crate::__argmin_residual_problem as residual_problem;

/// The Hessian of a function of a slice, as `f::hessian(x)` gives it (an ndarray
/// matrix), converted to a nalgebra `DMatrix` for argmin's Newton method on
/// `DVector<f64>` parameters.
pub fn to_dmatrix(h: ndarray::Array2<f64>) -> nalgebra::DMatrix<f64> {
    let (rows, cols) = h.dim();
    nalgebra::DMatrix::from_fn(rows, cols, |i, j| h[[i, j]])
}
