//! Every column's gradient on every case is checked before anything is timed: mochi's
//! against central finite differences, each peer's against mochi's. The function
//! values of the primal, mochi and the peers must agree too.

use mochi_benches::cases::inputs::{Inputs, Scale};
use mochi_benches::cases::Case;
use mochi_benches::columns::tape::TapeProblem;
use mochi_benches::columns::{self, Column};

/// Central differences of the scalar form of `case` (itself checked against the primal).
fn finite_differences(problem: &TapeProblem) -> Vec<f64> {
    let mut p = problem.params.clone();
    (0..p.len())
        .map(|k| {
            let h = 1e-6 * p[k].abs().max(1.0);
            let x = p[k];
            p[k] = x + h;
            let up = problem.eval(&p);
            p[k] = x - h;
            let down = problem.eval(&p);
            p[k] = x;
            (up - down) / (2.0 * h)
        })
        .collect()
}

fn assert_close(what: &str, got: &[f64], want: &[f64], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: gradient length");
    let scale = want.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rtol * scale,
            "{what}: component {k} is {g}, expected {w} (scale {scale})"
        );
    }
}

#[test]
fn primal_and_scalar_forms_agree() {
    let inputs = Inputs::new(Scale::Small);
    for case in Case::ALL {
        let primal = columns::primal(case, &inputs).run(1);
        let scalar = TapeProblem::new(case, &inputs).eval(&TapeProblem::new(case, &inputs).params);
        assert!(
            (primal - scalar).abs() <= 1e-10 * primal.abs().max(1.0),
            "{case}: primal {primal}, scalar form {scalar}"
        );
    }
}

#[test]
fn mochi_gradients_match_finite_differences() {
    let inputs = Inputs::new(Scale::Small);
    for case in Case::ALL {
        let mut cell = columns::gradient(Column::Mochi, case, &inputs).unwrap();
        let value = cell.run(2); // twice: the shadows must be zeroed between calls
        let primal = columns::primal(case, &inputs).run(1);
        assert!(
            (value - primal).abs() <= 1e-12 * primal.abs().max(1.0),
            "{case}: value {value} vs primal {primal}"
        );
        let want = finite_differences(&TapeProblem::new(case, &inputs));
        assert_close(
            &format!("{case} (mochi vs finite differences)"),
            &cell.gradient(),
            &want,
            1e-6,
        );
    }
}

#[test]
fn peer_gradients_match_mochi() {
    let inputs = Inputs::new(Scale::Small);
    for case in Case::ALL {
        let mut mochi = columns::gradient(Column::Mochi, case, &inputs).unwrap();
        let primal = mochi.run(1);
        let want = mochi.gradient();
        for column in Column::ALL.into_iter().filter(|c| *c != Column::Mochi) {
            let Some(mut cell) = columns::gradient(column, case, &inputs) else {
                continue;
            };
            let value = cell.run(2);
            let what = format!("{case} ({} vs mochi)", column.name());
            assert!(
                (value - primal).abs() <= 1e-9 * primal.abs().max(1.0),
                "{what}: value {value} vs {primal}"
            );
            assert_close(&what, &cell.gradient(), &want, 1e-9);
        }
    }
}

#[test]
fn full_size_gradients_agree_between_mochi_and_echidna() {
    // The sizes that are timed, on the cheaper replayed tape.
    let inputs = Inputs::new(Scale::Full);
    for case in Case::ALL {
        let mut mochi = columns::gradient(Column::Mochi, case, &inputs).unwrap();
        mochi.run(1);
        let mut peer = columns::gradient(Column::EchidnaOnce, case, &inputs).unwrap();
        peer.run(1);
        assert_close(
            &format!("{case} at full size"),
            &mochi.gradient(),
            &peer.gradient(),
            1e-8,
        );
    }
}

#[test]
fn no_cotangent_flows_into_the_turing_observations() {
    use mochi_benches::cases::functions::turing_log_joint;
    let t = Inputs::new(Scale::Small).turing;
    let (mut dtheta, mut ddata) = (vec![0.0; 2], vec![0.0; t.data.len()]);
    turing_log_joint::value_and_gradient_into(&t.theta, &t.data, (&mut dtheta, &mut ddata));
    assert!(
        dtheta.iter().all(|d| *d != 0.0),
        "θ has a gradient: {dtheta:?}"
    );
    // the benchmark never refills this shadow, so it must stay zero
    assert!(
        ddata.iter().all(|d| *d == 0.0),
        "observations got a cotangent: {ddata:?}"
    );
}
