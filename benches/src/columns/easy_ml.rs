//! The easy-ml column: reverse mode with `Record`s on a `WengertList` that is created
//! once and cleared at the start of every call (so recording is inside the timed region).

use super::tape::{TapeProblem, TapeScalar};
use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::cell::{gradient_cell, Cell};
use easy_ml::differentiation::{Record, WengertList};
use easy_ml::numeric::extra::{Cos, Exp, Ln, Sin, Sqrt};

impl TapeScalar for Record<'_, f64> {
    fn constant(v: f64) -> Self {
        Record::constant(v)
    }
    fn value(self) -> f64 {
        self.number
    }
    fn sin(self) -> Self {
        Sin::sin(self)
    }
    fn cos(self) -> Self {
        Cos::cos(self)
    }
    fn exp(self) -> Self {
        Exp::exp(self)
    }
    fn ln(self) -> Self {
        Ln::ln(self)
    }
    fn sqrt(self) -> Self {
        Sqrt::sqrt(self)
    }
    fn relu(self) -> Self {
        if self.number >= 0.0 {
            self
        } else {
            Record::constant(0.0)
        }
    }
}

/// One `WengertList` per cell, cleared and re-recorded on every call.
pub fn gradient(case: Case, inputs: &Inputs) -> Box<dyn Cell> {
    let problem = TapeProblem::new(case, inputs);
    gradient_cell(
        (problem, WengertList::<f64>::new(), Vec::new()),
        |(problem, list, grad)| {
            list.clear();
            let params: Vec<Record<f64>> =
                problem.params.iter().map(|&v| list.variable(v)).collect();
            let y = problem.eval(&params);
            let derivatives = y.derivatives();
            grad.clear();
            grad.extend(params.iter().map(|p| derivatives[p]));
            y.number
        },
        |(_, _, grad)| grad.clone(),
    )
}
