//! The burn column (feature `heavy-peers`): burn 0.22 on its pure-Rust CPU backend
//! (`Device::flex().autodiff()`), float64. Leaf tensors are created once with
//! `require_grad` outside the timed region; every call builds the graph from them,
//! runs `backward`, and reads the gradients out.

// burn's `slice` takes one range per axis: `[n..n + 1]` on a rank-1 tensor is that, not a
// mistaken `Vec` of one range.
#![allow(clippy::single_range_in_vec_init)]

use crate::cases::functions::{truncation_log_mass, HALF_LN_2PI};
use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::cell::{gradient_cell, Cell};
use burn::tensor::activation::relu;
use burn::tensor::{DType, Device, Tensor, TensorData};
use ndarray::{Array1, Array2};

fn device() -> Device {
    Device::flex().autodiff()
}

/// The differentiated inputs of a case, as burn leaves of their natural rank.
enum Leaves {
    Vector(Vec<Tensor<1>>),
    Matrix(Vec<Tensor<2>>),
}

fn leaf1(x: &[f64], d: &Device) -> Tensor<1> {
    Tensor::from_data(TensorData::new(x.to_vec(), [x.len()]), (d, DType::F64)).require_grad()
}

fn leaf2(x: &Array2<f64>, d: &Device) -> Tensor<2> {
    let v: Vec<f64> = x.iter().copied().collect();
    Tensor::from_data(TensorData::new(v, [x.nrows(), x.ncols()]), (d, DType::F64)).require_grad()
}

fn scalar(v: f64, d: &Device) -> Tensor<1> {
    Tensor::from_data(TensorData::new(vec![v], [1]), (d, DType::F64))
}

/// `kron(A, B)` by broadcasting `A[i, 1, j, 1] · B[1, k, 1, l]`, then its sum.
fn kron_sum(a: Tensor<2>, b: Tensor<2>) -> Tensor<1> {
    let ([m, n], [p, q]) = (a.dims(), b.dims());
    let k: Tensor<4> = a.reshape([m, 1, n, 1]) * b.reshape([1, p, 1, q]);
    k.reshape([m * p, n * q]).sum()
}

fn eval(case: Case, leaves: &Leaves, data: Option<&Tensor<1>>, d: &Device) -> Tensor<1> {
    match (case, leaves) {
        (Case::Sum1000, Leaves::Vector(v)) => v[0].clone().sum(),
        (Case::SumLoop1000 | Case::SumSinLoop1000, Leaves::Vector(v)) => {
            let mut y = scalar(0.0, d);
            for n in 0..v[0].dims()[0] {
                let xn = v[0].clone().slice([n..n + 1]);
                y = y + if case == Case::SumLoop1000 {
                    xn
                } else {
                    xn.sin()
                };
            }
            y
        }
        (Case::SumSin1000, Leaves::Vector(v)) => v[0].clone().sin().sum(),
        (Case::KronSum, Leaves::Matrix(v)) => kron_sum(v[0].clone(), v[1].clone()),
        (Case::KronViewSum, Leaves::Matrix(v)) => {
            let [r, c] = v[1].dims();
            kron_sum(
                v[0].clone().slice([0..r / 2, 0..c / 2]),
                v[1].clone().triu(0),
            )
        }
        (Case::NaiveMapSinCosExp, Leaves::Matrix(v)) => {
            let [r, c] = v[0].dims();
            let mut y = Vec::with_capacity(r * c);
            for i in 0..r {
                for j in 0..c {
                    let e: Tensor<2> = v[0].clone().slice([i..i + 1, j..j + 1]);
                    y.push(e.reshape([1]).exp().cos().sin());
                }
            }
            Tensor::<1>::cat(y, 0).sum()
        }
        // burn has no closure adapter: the map is written as elementwise operations.
        (Case::MapSinCosExp | Case::BroadcastSinCosExp, Leaves::Matrix(v)) => {
            v[0].clone().exp().cos().sin().sum()
        }
        (Case::SimpleMlp, Leaves::Matrix(v)) => {
            let r = relu(v[1].clone().matmul(v[3].clone()));
            (v[2].clone() - v[0].clone().matmul(r)).square().sum()
        }
        (Case::TuringBroadcast, Leaves::Vector(v)) => {
            let data = data.expect("observations").clone();
            let (lo, hi): (f64, f64) = (0.1, 10.0);
            let p = burn::tensor::activation::sigmoid(v[0].clone());
            let mu = p.clone().slice([0..1]).mul_scalar(hi - lo).add_scalar(lo);
            let sigma = p.clone().slice([1..2]).mul_scalar(hi - lo).add_scalar(lo);
            let log_jacobian = (p.clone().log() + p.neg().add_scalar(1.0).log())
                .sum()
                .add_scalar(2.0 * (hi - lo).ln());
            let constant = 2.0_f64.ln() + HALF_LN_2PI + truncation_log_mass();
            let prior = |t: Tensor<1>| {
                t.sub_scalar(1.0)
                    .div_scalar(2.0)
                    .square()
                    .mul_scalar(-0.5)
                    .sub_scalar(constant)
            };
            let lx = data.log();
            let z = (lx.clone() - mu.clone()) / sigma.clone();
            let log_likelihood =
                (z.square().mul_scalar(-0.5).sub_scalar(HALF_LN_2PI) - sigma.clone().log() - lx)
                    .sum();
            prior(mu) + prior(sigma) + log_jacobian + log_likelihood
        }
        (Case::LargeSingleBlock, Leaves::Vector(v)) => {
            let mut x = v[0].clone();
            for _ in 0..400 {
                x = x * v[1].clone();
            }
            x
        }
        _ => unreachable!("leaves built by `leaves` for this case"),
    }
}

fn leaves(case: Case, i: &Inputs, d: &Device) -> (Leaves, Option<Tensor<1>>) {
    let v1 = |x: &Array1<f64>| leaf1(x.as_slice().expect("contiguous"), d);
    match case {
        Case::Sum1000 | Case::SumLoop1000 | Case::SumSin1000 | Case::SumSinLoop1000 => {
            (Leaves::Vector(vec![v1(&i.x1000)]), None)
        }
        Case::KronSum => (
            Leaves::Matrix(vec![leaf2(&i.kron.0, d), leaf2(&i.kron.1, d)]),
            None,
        ),
        Case::KronViewSum => (
            Leaves::Matrix(vec![leaf2(&i.kron_view.0, d), leaf2(&i.kron_view.1, d)]),
            None,
        ),
        Case::NaiveMapSinCosExp | Case::MapSinCosExp | Case::BroadcastSinCosExp => {
            (Leaves::Matrix(vec![leaf2(&i.x10, d)]), None)
        }
        Case::SimpleMlp => {
            let m = &i.mlp;
            (
                Leaves::Matrix([&m.w2, &m.w1, &m.y, &m.x].map(|a| leaf2(a, d)).to_vec()),
                None,
            )
        }
        Case::TuringBroadcast => {
            let data = Tensor::from_data(
                TensorData::new(i.turing.data.clone(), [i.turing.data.len()]),
                (d, DType::F64),
            );
            (Leaves::Vector(vec![leaf1(&i.turing.theta, d)]), Some(data))
        }
        Case::LargeSingleBlock => (
            Leaves::Vector(vec![leaf1(&[i.block.0], d), leaf1(&[i.block.1], d)]),
            None,
        ),
        Case::GpLml => unreachable!("no Cholesky in burn's tensor API"),
    }
}

fn read(grad: Option<impl Into<TensorData>>, len: usize, out: &mut Vec<f64>) {
    match grad {
        Some(g) => out.extend(
            g.into()
                .convert::<f64>()
                .try_to_vec::<f64>()
                .expect("f64 gradient"),
        ),
        None => out.extend(std::iter::repeat_n(0.0, len)),
    }
}

/// The burn cell of `case`; `None` for `gp_lml` (no Cholesky in burn's tensor API).
pub fn gradient(case: Case, inputs: &Inputs) -> Option<Box<dyn Cell>> {
    if case == Case::GpLml {
        return None;
    }
    let d = device();
    let (leaves, data) = leaves(case, inputs, &d);
    Some(gradient_cell(
        (leaves, data, d, Vec::new()),
        move |(leaves, data, d, grad)| {
            let y = eval(case, leaves, data.as_ref(), d);
            let grads = y.backward();
            grad.clear();
            match leaves {
                Leaves::Vector(v) => {
                    for t in v.iter() {
                        read(t.grad(&grads).map(|g| g.into_data()), t.dims()[0], grad);
                    }
                }
                Leaves::Matrix(v) => {
                    for t in v.iter() {
                        let [r, c] = t.dims();
                        read(t.grad(&grads).map(|g| g.into_data()), r * c, grad);
                    }
                }
            }
            y.into_scalar::<f64>()
        },
        |(_, _, _, grad)| grad.clone(),
    ))
}
