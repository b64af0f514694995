//! Measuring one case: build its cells, check every peer's gradient against mochi's,
//! sample them interleaved, count the bytes of one gradient call.

use crate::alloc;
use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::columns::{self, Column};
use crate::report::{CaseResult, GradientResult};
use crate::timing::{self, Budget};

/// Relative tolerance for a peer's gradient against mochi's before it is timed.
pub const AGREEMENT_RTOL: f64 = 1e-7;

/// Measures `case` in the in-process `columns` (a column that cannot run it is
/// `None`). Fails when a gradient disagrees with mochi's: a wrong gradient is never timed.
pub fn measure(
    case: Case,
    inputs: &Inputs,
    columns: &[Column],
    budget: Budget,
    tick: impl FnMut(f64),
) -> Result<CaseResult, String> {
    let mut cells = vec![columns::primal(case, inputs)];
    let mut timed = Vec::new();
    let mut reference: Option<Vec<f64>> = None;
    for &column in columns {
        let Some(mut cell) = columns::gradient(column, case, inputs) else {
            continue;
        };
        cell.run(1);
        let gradient = cell.gradient();
        match &reference {
            None => reference = Some(gradient),
            Some(want) => check_agreement(case, column, &gradient, want)?,
        }
        cells.push(cell);
        timed.push(column);
    }
    let samples = timing::sample(&mut cells, budget, tick);
    let mut gradients: Vec<(Column, Option<GradientResult>)> =
        columns.iter().map(|&c| (c, None)).collect();
    for (k, &column) in timed.iter().enumerate() {
        let cell = &mut cells[k + 1];
        let bytes = alloc::bytes_during(|| {
            cell.run(1);
        });
        let result = GradientResult::from_samples(&samples[k + 1], bytes);
        if let Some(slot) = gradients.iter_mut().find(|(c, _)| *c == column) {
            slot.1 = Some(result);
        }
    }
    Ok(CaseResult {
        case,
        primal_ns: samples[0].median(),
        primal_spread: samples[0].spread(),
        gradients,
    })
}

/// `Err` naming the case, the column and the first component that differs.
fn check_agreement(case: Case, column: Column, got: &[f64], want: &[f64]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{case}: {} returned {} gradient components, mochi {}; not timing a wrong gradient",
            column.name(),
            got.len(),
            want.len()
        ));
    }
    let scale = want.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    match got.iter().zip(want).position(|(g, w)| (g - w).abs() > AGREEMENT_RTOL * scale) {
        None => Ok(()),
        Some(k) => Err(format!(
            "{case}: {}'s gradient component {k} is {}, mochi's {} ({}); not timing a wrong gradient",
            column.name(),
            got[k],
            want[k],
            case.gradient_layout()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_is_relative_to_the_gradient_scale() {
        assert!(check_agreement(Case::Sum1000, Column::Echidna, &[1e6, 0.05], &[1e6, 0.0]).is_ok());
        let e =
            check_agreement(Case::Sum1000, Column::Echidna, &[1.0, 0.5], &[1.0, 0.0]).unwrap_err();
        assert!(e.contains("component 1") && e.contains("echidna"), "{e}");
        assert!(check_agreement(Case::Sum1000, Column::EasyMl, &[1.0], &[1.0, 2.0]).is_err());
    }
}
