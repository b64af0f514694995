//! Unsuffixed float literals in functions whose signature names no float type (so the
//! macro cannot give the literals one), next to every standard rule crate's traits and
//! to imported ndarray and nalgebra traits: each must compile without E0034 ("multiple
//! applicable items in scope") and differentiate correctly.

#![allow(unused_imports, clippy::assign_op_pattern)]

use mochi::prelude::*;
use mochi_kit_check::rules::*;
use mochi_kit_check::Mat2;
use nalgebra::{ComplexField, DVector, RealField};
use ndarray::linalg::Dot;
use ndarray::Array1;

type R = f64;

/// `let mut y = 1.0;` later multiplied by a parameter, then `x * 2.0`.
#[differentiable]
fn untyped_accumulator(x: R) -> R {
    let mut y = 1.0;
    y = y * x;
    y = 0.5 * y + x * 2.0;
    y * 3.0
}

/// An untyped accumulator mixed with an ndarray array's elements and reductions.
#[differentiable]
fn untyped_with_arrays(x: &Array1<R>) -> R {
    let mut y = 1.0;
    for i in 0..x.len() {
        y = y * x[i] + 0.5;
    }
    let s = x.sum() * 2.0;
    y * 2.0 + s + x.dot(x) * 0.25
}

/// An untyped accumulator mixed with a nalgebra vector.
#[differentiable]
fn untyped_with_nalgebra(x: &DVector<R>) -> R {
    let mut y = 1.0;
    for i in 0..x.len() {
        y = y + x[i] * 2.0;
    }
    y * x.norm()
}

/// An untyped accumulator mixed with this crate's matrix type.
#[differentiable]
fn untyped_with_mat(a: &Mat2, x: R) -> R {
    let mut y = 1.0;
    y = y * a.trace();
    y * 2.0 + x * 2.0
}

/// A method called on an unsuffixed literal with nalgebra's `RealField` imported: the
/// prelude must not add a second `max` (E0034 in the function as written).
#[differentiable]
fn literal_receiver(x: R) -> R {
    let w = 3.0;
    let mut y = 1.0;
    y = y * x;
    w.max(y) * y + w.min(2.0)
}

#[test]
fn literal_as_receiver() {
    mochi::testing::test_rule(
        (0.7,),
        |a| literal_receiver(a.0),
        |a| literal_receiver::rrule(a.0),
    );
    mochi::testing::test_rule(
        (4.5,),
        |a| literal_receiver(a.0),
        |a| literal_receiver::rrule(a.0),
    );
}

#[test]
fn scalars() {
    mochi::testing::test_rule(
        (0.7,),
        |a| untyped_accumulator(a.0),
        |a| untyped_accumulator::rrule(a.0),
    );
}

#[test]
fn with_ndarray() {
    let x = ndarray::array![0.3, -1.2, 0.8];
    mochi::testing::test_rule(
        (x,),
        |a| untyped_with_arrays(&a.0),
        |a| untyped_with_arrays::rrule(&a.0),
    );
}

#[test]
fn with_nalgebra() {
    let x = DVector::from_vec(vec![0.3, -1.2, 0.8]);
    mochi::testing::test_rule(
        (x,),
        |a| untyped_with_nalgebra(&a.0),
        |a| untyped_with_nalgebra::rrule(&a.0),
    );
}

#[test]
fn with_mat() {
    let a = Mat2::new(0.7, -1.3, 0.4, 2.1);
    mochi::testing::test_rule(
        (a, 0.4),
        |x| untyped_with_mat(&x.0, x.1),
        |x| untyped_with_mat::rrule(&x.0, x.1),
    );
}
