//! The candle column (feature `heavy-peers`): candle-core's `Var`s, created once
//! outside the timed region, a graph built from them on every call, `backward`, and
//! the gradients copied out. The suite runs with `RAYON_NUM_THREADS=1`.

use crate::cases::functions::{truncation_log_mass, HALF_LN_2PI};
use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::cell::{gradient_cell, Cell};
use candle_core::{DType, Device, Result, Tensor, Var};
use ndarray::{Array1, Array2};

fn var1(x: &Array1<f64>) -> Result<Var> {
    Var::from_slice(&x.to_vec(), x.len(), &Device::Cpu)
}

fn var2(x: &Array2<f64>) -> Result<Var> {
    let v: Vec<f64> = x.iter().copied().collect();
    Var::from_slice(&v, x.dim(), &Device::Cpu)
}

/// The case's function of candle tensors.
fn eval(case: Case, v: &[Tensor], data: Option<&Tensor>) -> Result<Tensor> {
    let dev = &Device::Cpu;
    match case {
        Case::Sum1000 => v[0].sum_all(),
        Case::SumLoop1000 | Case::SumSinLoop1000 => {
            let mut y = Tensor::new(0.0f64, dev)?;
            for n in 0..v[0].dim(0)? {
                let xn = v[0].get(n)?;
                let term = if case == Case::SumLoop1000 {
                    xn
                } else {
                    xn.sin()?
                };
                y = (y + term)?;
            }
            Ok(y)
        }
        Case::SumSin1000 => v[0].sin()?.sum_all(),
        Case::KronSum => kron_sum(&v[0], &v[1]),
        Case::KronViewSum => {
            let (r, c) = v[1].dims2()?;
            let block = v[0].narrow(0, 0, r / 2)?.narrow(1, 0, c / 2)?;
            let upper = (&v[1] * Tensor::triu2(r, DType::F64, dev)?)?;
            kron_sum(&block, &upper)
        }
        Case::NaiveMapSinCosExp => {
            let (r, c) = v[0].dims2()?;
            let mut y = Vec::with_capacity(r * c);
            for i in 0..r {
                let row = v[0].get(i)?;
                for j in 0..c {
                    y.push(row.get(j)?.exp()?.cos()?.sin()?);
                }
            }
            Tensor::stack(&y, 0)?.sum_all()
        }
        // candle has no closure adapter: the map is written as elementwise operations.
        Case::MapSinCosExp | Case::BroadcastSinCosExp => v[0].exp()?.cos()?.sin()?.sum_all(),
        Case::SimpleMlp => {
            let (w2, w1, y, x) = (&v[0], &v[1], &v[2], &v[3]);
            let r = w1.matmul(x)?.relu()?;
            (y - w2.matmul(&r)?)?.sqr()?.sum_all()
        }
        Case::GpLml => unreachable!("candle-core has no Cholesky factorisation"),
        Case::TuringBroadcast => {
            let data = data.expect("observations");
            let (lo, hi) = (0.1, 10.0);
            let p = (v[0].neg()?.exp()? + 1.0)?.recip()?;
            let mu = p.get(0)?.affine(hi - lo, lo)?;
            let sigma = p.get(1)?.affine(hi - lo, lo)?;
            let log_jacobian =
                ((p.log()? + p.affine(-1.0, 1.0)?.log()?)?.sum_all()? + 2.0 * (hi - lo).ln())?;
            let constant = 2.0_f64.ln() + HALF_LN_2PI + truncation_log_mass();
            let prior = |t: &Tensor| t.affine(0.5, -0.5)?.sqr()?.affine(-0.5, -constant);
            let lx = data.log()?;
            let z = lx.broadcast_sub(&mu)?.broadcast_div(&sigma)?;
            let log_likelihood = (z
                .sqr()?
                .affine(-0.5, -HALF_LN_2PI)?
                .broadcast_sub(&sigma.log()?)?
                - lx)?
                .sum_all()?;
            ((prior(&mu)? + prior(&sigma)?)? + log_jacobian)? + log_likelihood
        }
        Case::LargeSingleBlock => {
            let mut x = v[0].clone();
            for _ in 0..400 {
                x = x.mul(&v[1])?;
            }
            Ok(x)
        }
    }
}

/// `kron(A, B)` by broadcasting `A[i, 1, j, 1] · B[1, k, 1, l]`, then its sum.
fn kron_sum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let ((m, n), (p, q)) = (a.dims2()?, b.dims2()?);
    let k = a
        .reshape((m, 1, n, 1))?
        .broadcast_mul(&b.reshape((1, p, 1, q))?)?;
    k.reshape((m * p, n * q))?.sum_all()
}

fn vars(case: Case, i: &Inputs) -> Result<(Vec<Var>, Option<Tensor>)> {
    let dev = &Device::Cpu;
    Ok(match case {
        Case::Sum1000 | Case::SumLoop1000 | Case::SumSin1000 | Case::SumSinLoop1000 => {
            (vec![var1(&i.x1000)?], None)
        }
        Case::KronSum => (vec![var2(&i.kron.0)?, var2(&i.kron.1)?], None),
        Case::KronViewSum => (vec![var2(&i.kron_view.0)?, var2(&i.kron_view.1)?], None),
        Case::NaiveMapSinCosExp | Case::MapSinCosExp | Case::BroadcastSinCosExp => {
            (vec![var2(&i.x10)?], None)
        }
        Case::SimpleMlp => {
            let m = &i.mlp;
            (
                vec![var2(&m.w2)?, var2(&m.w1)?, var2(&m.y)?, var2(&m.x)?],
                None,
            )
        }
        Case::GpLml => (vec![], None),
        Case::TuringBroadcast => (
            vec![Var::from_slice(&i.turing.theta, 2, dev)?],
            Some(Tensor::from_slice(
                &i.turing.data,
                i.turing.data.len(),
                dev,
            )?),
        ),
        Case::LargeSingleBlock => (
            vec![Var::new(i.block.0, dev)?, Var::new(i.block.1, dev)?],
            None,
        ),
    })
}

fn value_and_gradient(
    case: Case,
    vars: &[Var],
    data: Option<&Tensor>,
    grad: &mut Vec<f64>,
) -> Result<f64> {
    let tensors: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
    let y = eval(case, &tensors, data)?;
    let store = y.backward()?;
    grad.clear();
    for v in vars {
        match store.get(v.as_tensor()) {
            Some(g) => grad.extend(g.flatten_all()?.to_vec1::<f64>()?),
            None => grad.extend(std::iter::repeat_n(0.0, v.as_tensor().elem_count())),
        }
    }
    y.to_scalar::<f64>()
}

/// The candle cell of `case`; `None` for `gp_lml` (no Cholesky in candle-core).
pub fn gradient(case: Case, inputs: &Inputs) -> Option<Box<dyn Cell>> {
    if case == Case::GpLml {
        return None;
    }
    let (vars, data) = vars(case, inputs).expect("candle accepts the inputs");
    Some(gradient_cell(
        (vars, data, Vec::new()),
        move |(vars, data, grad)| {
            value_and_gradient(case, vars, data.as_ref(), grad).expect("candle evaluates the case")
        },
        |(_, _, grad)| grad.clone(),
    ))
}
