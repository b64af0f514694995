//! `lstm`: ADBench's LSTM loss (diagonal weight matrices) and its gradient with respect
//! to `main_params` and `extra_params`.
//!
//! Layer `i` has weights `main_params[2i]` and biases `main_params[2i + 1]`, each four
//! blocks of `b` (forget, input, output gate, change); its hidden and cell state start
//! at `state[2i]` and `state[2i + 1]`. `extra_params` holds the input weights, the
//! output weights and the output biases. The loss is the mean negative log-likelihood
//! of each next character under ADBench's normalisation `log(Σ exp(y) + 2)`.

use crate::evaluation::{parse_input, EvalError, Evaluation};
use crate::runs::{repeat, Runs};
use mochi::prelude::*;
use serde::Deserialize;
use serde_json::Value;

/// The eval's input.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// Per layer, a weight row and a bias row of `4b` each (`2l × 4b`).
    pub main_params: Vec<Vec<f64>>,
    /// Input weights, output weights, output biases (`3 × b`).
    pub extra_params: Vec<Vec<f64>>,
    /// Per layer, the initial hidden and cell state (`2l × b`).
    pub state: Vec<Vec<f64>>,
    /// The characters, one bit vector each (`c × b`).
    pub sequence: Vec<Vec<f64>>,
    /// How often to run.
    #[serde(flatten)]
    pub runs: Runs,
}

/// `1 / (1 + e⁻ˣ)`.
#[differentiable]
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// ADBench's normaliser `log(Σᵢ exp(vᵢ) + 2)`.
#[differentiable]
pub fn logsumexp(v: &[f64]) -> f64 {
    let mut s = 0.0;
    for vi in v.iter() {
        s += vi.exp();
    }
    (s + 2.0).ln()
}

/// One LSTM layer on `input`, updating its `hidden` and `cell` state in place.
#[differentiable]
pub fn lstm_model(
    weight: &[f64],
    bias: &[f64],
    hidden: &mut [f64],
    cell: &mut [f64],
    input: &[f64],
) {
    let b = hidden.len();
    for i in 0..b {
        let forget = sigmoid(input[i] * weight[i] + bias[i]);
        let ingate = sigmoid(hidden[i] * weight[b + i] + bias[b + i]);
        let outgate = sigmoid(input[i] * weight[2 * b + i] + bias[2 * b + i]);
        let change = (hidden[i] * weight[3 * b + i] + bias[3 * b + i]).tanh();
        cell[i] = cell[i] * forget + ingate * change;
        hidden[i] = outgate * cell[i].tanh();
    }
}

/// The network's output for one character: scale by the input weights, run every
/// layer (each layer's input is the previous layer's hidden state), then apply the
/// output weights and biases.
#[differentiable]
pub fn lstm_predict(
    main_params: &[Vec<f64>],
    extra_params: &[Vec<f64>],
    hidden: &mut [Vec<f64>],
    cell: &mut [Vec<f64>],
    input: &[f64],
) -> Vec<f64> {
    let b = input.len();
    let mut x = vec![0.0; b];
    for j in 0..b {
        x[j] = input[j] * extra_params[0][j];
    }
    for i in 0..hidden.len() {
        // Each layer's state is updated through row copies written back afterwards.
        let mut h = hidden[i].clone();
        let mut c = cell[i].clone();
        lstm_model(
            &main_params[2 * i],
            &main_params[2 * i + 1],
            &mut h,
            &mut c,
            &x,
        );
        x = h.clone();
        hidden[i] = h;
        cell[i] = c;
    }
    let mut out = vec![0.0; b];
    for j in 0..b {
        out[j] = x[j] * extra_params[1][j] + extra_params[2][j];
    }
    out
}

/// The loss: minus the mean over characters and bits of `yₜ₊₁ · (ŷₜ − log(Σ exp ŷₜ + 2))`,
/// `ŷₜ` the prediction from character `t`.
#[differentiable]
pub fn objective(
    main_params: &[Vec<f64>],
    extra_params: &[Vec<f64>],
    state: &[Vec<f64>],
    sequence: &[Vec<f64>],
) -> f64 {
    let layers = main_params.len() / 2;
    let b = sequence[0].len();
    let mut hidden = vec![vec![0.0; b]; layers];
    let mut cell = vec![vec![0.0; b]; layers];
    for i in 0..layers {
        hidden[i] = state[2 * i].clone();
        cell[i] = state[2 * i + 1].clone();
    }
    let mut total = 0.0;
    let mut count = 0;
    for t in 0..sequence.len() - 1 {
        let ypred = lstm_predict(
            main_params,
            extra_params,
            &mut hidden,
            &mut cell,
            &sequence[t],
        );
        let lse = logsumexp(&ypred);
        for j in 0..b {
            total += sequence[t + 1][j] * (ypred[j] - lse);
        }
        count += b;
    }
    -total / count as f64
}

fn check(input: &Input) -> Result<(), EvalError> {
    let layers = input.main_params.len() / 2;
    let b = input.sequence.first().map_or(0, Vec::len);
    let shape_ok = |v: &[Vec<f64>], len: usize, width: usize| {
        v.len() == len && v.iter().all(|r| r.len() == width)
    };
    if layers == 0
        || b == 0
        || input.sequence.len() < 2
        || !shape_ok(&input.main_params, 2 * layers, 4 * b)
        || !shape_ok(&input.extra_params, 3, b)
        || !shape_ok(&input.state, 2 * layers, b)
        || !shape_ok(&input.sequence, input.sequence.len(), b)
    {
        return Err(EvalError::BadInput(format!(
            "expected main_params 2l × 4b, extra_params 3 × b, state 2l × b and at least two \
             sequence rows of b; got {} main_params rows, {} sequence rows of {b}",
            input.main_params.len(),
            input.sequence.len()
        )));
    }
    Ok(())
}

/// Answers `objective` (the loss) and `jacobian` (its gradient with respect to
/// `main_params` then `extra_params`, each flattened row by row).
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, EvalError> {
    let input: Input = parse_input(input)?;
    check(&input)?;
    let i = &input;
    match function {
        "objective" => {
            let (y, timings) = repeat(i.runs, || {
                objective(&i.main_params, &i.extra_params, &i.state, &i.sequence)
            });
            Evaluation::new(y, timings)
        }
        "jacobian" => {
            let (g, timings) = repeat(i.runs, || {
                let (main, extra, _state, _sequence) =
                    objective::gradient(&i.main_params, &i.extra_params, &i.state, &i.sequence);
                main.into_iter()
                    .chain(extra)
                    .flatten()
                    .collect::<Vec<f64>>()
            });
            Evaluation::new(g, timings)
        }
        _ => Err(EvalError::UnknownFunction {
            module: "lstm",
            function: function.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::test_support::{assert_gradient_matches, seeded};

    fn rows(v: &[f64], width: usize) -> Vec<Vec<f64>> {
        v.chunks(width).map(<[f64]>::to_vec).collect()
    }

    #[test]
    fn gradient_matches_central_differences() {
        for (layers, b, c) in [(1, 1, 2), (2, 3, 4)] {
            let state = rows(&seeded(2 * layers * b, 5, 0.0, 1.0), b);
            let bits = seeded(c * b, 6, 0.0, 1.0);
            let sequence = rows(&bits.iter().map(|v| v.round()).collect::<Vec<_>>(), b);
            let main_len = 2 * layers * 4 * b;
            let params = seeded(main_len + 3 * b, 7 + layers as u64, 0.0, 1.0);
            let split = |p: &[f64]| (rows(&p[..main_len], 4 * b), rows(&p[main_len..], b));
            let (main, extra) = split(&params);
            let (dmain, dextra, _, _) = objective::gradient(&main, &extra, &state, &sequence);
            let flat: Vec<f64> = dmain.into_iter().chain(dextra).flatten().collect();
            assert_gradient_matches(
                &params,
                |p| {
                    let (main, extra) = split(p);
                    objective(&main, &extra, &state, &sequence)
                },
                flat,
            );
        }
    }

    #[test]
    fn jacobian_output_is_main_params_then_extra_params_row_by_row() {
        let b = 2;
        let input = serde_json::json!({
            "main_params": rows(&seeded(2 * 4 * b, 21, 0.0, 1.0), 4 * b),
            "extra_params": rows(&seeded(3 * b, 22, 0.0, 1.0), b),
            "state": rows(&seeded(2 * b, 23, 0.0, 1.0), b),
            "sequence": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
            "min_runs": 1, "min_seconds": 0.0
        });
        let e = evaluate("jacobian", &input).unwrap();
        assert_eq!(e.output.as_array().unwrap().len(), 2 * 4 * b + 3 * b);
        let parsed: Input = parse_input(&input).unwrap();
        let (dmain, dextra, _, _) = objective::gradient(
            &parsed.main_params,
            &parsed.extra_params,
            &parsed.state,
            &parsed.sequence,
        );
        // the first bias entry of the first layer sits after its 8 weights
        assert_eq!(e.output[8].as_f64().unwrap(), dmain[1][0]);
        assert_eq!(e.output[2 * 4 * b].as_f64().unwrap(), dextra[0][0]);
    }
}
