//! The echidna columns: reverse mode re-recording its tape on every call
//! (`echidna::grad`), and a bytecode tape recorded once and replayed
//! (`echidna::record` + `BytecodeTape::gradient_with_buf`).

use super::tape::{TapeProblem, TapeScalar};
use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::cell::{gradient_cell, Cell};
use echidna::{BReverse, BytecodeTape, Reverse, Scalar};
use num_traits::{Float, ToPrimitive};

macro_rules! tape_scalar_via_float {
    ($t:ty, $value:expr) => {
        impl TapeScalar for $t {
            fn constant(v: f64) -> Self {
                <$t>::constant(v)
            }
            fn value(self) -> f64 {
                $value(self)
            }
            fn sin(self) -> Self {
                Float::sin(self)
            }
            fn cos(self) -> Self {
                Float::cos(self)
            }
            fn exp(self) -> Self {
                Float::exp(self)
            }
            fn ln(self) -> Self {
                Float::ln(self)
            }
            fn sqrt(self) -> Self {
                Float::sqrt(self)
            }
            fn relu(self) -> Self {
                // echidna records `max` as one operation, so a replayed tape takes
                // the right branch for any input.
                Float::max(self, <$t>::constant(0.0))
            }
        }
    };
}

tape_scalar_via_float!(Reverse<f64>, |v: Reverse<f64>| Scalar::value(&v));
tape_scalar_via_float!(BReverse<f64>, |v: BReverse<f64>| v
    .to_f64()
    .unwrap_or(f64::NAN));

/// Reverse mode, tape recorded on every call (echidna's pooled thread-local tape).
pub fn rerecord(case: Case, inputs: &Inputs) -> Box<dyn Cell> {
    let problem = TapeProblem::new(case, inputs);
    gradient_cell(
        (problem, Vec::new()),
        |(problem, grad)| {
            let mut value = 0.0;
            *grad = echidna::grad(
                |p: &[Reverse<f64>]| {
                    let y = problem.eval(p);
                    value = y.value();
                    y
                },
                &problem.params,
            );
            value
        },
        |(_, grad)| grad.clone(),
    )
}

/// Bytecode tape recorded once outside the timed region, replayed (forward and
/// reverse sweep) on every call. Valid only while control flow does not depend on
/// the inputs.
pub fn record_once(case: Case, inputs: &Inputs) -> Box<dyn Cell> {
    let problem = TapeProblem::new(case, inputs);
    let (tape, _) = echidna::record(|p: &[BReverse<f64>]| problem.eval(p), &problem.params);
    struct State {
        params: Vec<f64>,
        tape: BytecodeTape<f64>,
        adjoints: Vec<f64>,
        grad: Vec<f64>,
    }
    gradient_cell(
        State {
            params: problem.params,
            tape,
            adjoints: Vec::new(),
            grad: Vec::new(),
        },
        |s| {
            s.grad = s.tape.gradient_with_buf(&s.params, &mut s.adjoints);
            s.tape.output_value()
        },
        |s| s.grad.clone(),
    )
}
