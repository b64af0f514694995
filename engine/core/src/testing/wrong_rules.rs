//! The harness against deliberately wrong rules: each mistake must be caught by the
//! check that names it, and the right rules must pass.

use super::{test_rule, Check, RuleTest, RuleTestFailure};
use crate::{FnPullback, NoTangent, Pullback, TangentVector};
use ndarray::Array1;

/// `x · y` with a pullback built from `reverse(x, y, ȳ, x̄, ȳ)`.
#[allow(clippy::type_complexity)]
fn mul_rule(
    reverse: fn(f64, f64, f64, &mut f64, &mut f64),
) -> impl Fn(
    &mut (f64, f64),
) -> (
    f64,
    FnPullback<Box<dyn FnOnce(f64, (&mut f64, &mut f64))>, f64, (f64, f64)>,
) {
    move |a: &mut (f64, f64)| {
        let (x, y) = *a;
        let f: Box<dyn FnOnce(f64, (&mut f64, &mut f64))> =
            Box::new(move |dz: f64, (dx, dy): (&mut f64, &mut f64)| reverse(x, y, dz, dx, dy));
        (x * y, FnPullback::new(f))
    }
}

fn right_mul(x: f64, y: f64, dz: f64, dx: &mut f64, dy: &mut f64) {
    *dx += y * dz; // ∂(xy)/∂x = y
    *dy += x * dz; // ∂(xy)/∂y = x
}

fn mul_jvp(a: &(f64, f64), t: &(f64, f64)) -> f64 {
    t.0 * a.1 + a.0 * t.1
}

fn check_mul(
    reverse: fn(f64, f64, f64, &mut f64, &mut f64),
) -> Result<super::RuleTestReport, RuleTestFailure> {
    RuleTest::new((1.5, -0.7), |a| a.0 * a.1, mul_rule(reverse))
        .jvp(mul_jvp)
        .check()
}

/// `Σ xᵢ` over a slice, with a pullback that adds `ȳ` to a cotangent of `written`
/// components (the length of the slice for the right rule; 0 leaves it untouched).
struct SumPullback {
    written: usize,
}

impl Pullback for SumPullback {
    type Output = f64;
    type Args = (Vec<f64>,);
    fn pullback(self, dy: f64, (dx,): (&mut Vec<f64>,)) {
        if self.written > 0 {
            dx.accumulate(vec![dy; self.written]); // ∂(Σx)/∂xᵢ = 1
        }
    }
}

fn sum_rule(written: impl Fn(usize) -> usize) -> impl Fn(&mut (Vec<f64>,)) -> (f64, SumPullback) {
    move |a| {
        (
            a.0.iter().sum(),
            SumPullback {
                written: written(a.0.len()),
            },
        )
    }
}

fn expect_failure<T: std::fmt::Debug>(result: Result<T, RuleTestFailure>) -> RuleTestFailure {
    match result {
        Ok(report) => panic!("a wrong rule passed: {report:?}"),
        Err(failure) => failure,
    }
}

#[test]
fn right_rules_pass_every_check() {
    let report = check_mul(right_mul).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.comparisons(Check::FiniteDifferences), 2 * 3);
    assert_eq!(report.comparisons(Check::Jvp), 2 * 3);
    assert_eq!(report.comparisons(Check::Accumulation), 2 * 3);
    test_rule(
        (vec![1.0, -2.0, 0.5],),
        |a| a.0.iter().sum::<f64>(),
        sum_rule(|n| n),
    );
}

#[test]
fn wrong_sign_is_caught_by_finite_differences_and_the_jvp() {
    let failure = expect_failure(check_mul(|x, y, dz, dx, dy| {
        *dx -= y * dz;
        *dy -= x * dz;
    }));
    assert_eq!(failure.checks(), vec![Check::FiniteDifferences, Check::Jvp]);
    let text = failure.to_string();
    assert!(
        text.contains("[finite differences] argument 0, sample 0"),
        "{text}"
    );
}

#[test]
fn gradient_sent_to_the_wrong_argument_is_caught_for_both_arguments() {
    let failure = expect_failure(check_mul(|x, y, dz, dx, dy| {
        *dy += y * dz;
        *dx += x * dz;
    }));
    assert_eq!(failure.checks(), vec![Check::FiniteDifferences, Check::Jvp]);
    let arguments: Vec<Option<usize>> = failure
        .failures
        .iter()
        .filter(|f| f.check == Check::FiniteDifferences)
        .map(|f| f.argument)
        .collect();
    assert!(
        arguments.contains(&Some(0)) && arguments.contains(&Some(1)),
        "{failure}"
    );
}

#[test]
fn overwriting_instead_of_adding_is_caught_by_accumulation_only() {
    let failure = expect_failure(check_mul(|x, y, dz, dx, dy| {
        *dx = y * dz;
        *dy += x * dz;
    }));
    assert_eq!(failure.checks(), vec![Check::Accumulation]);
    assert!(
        failure.failures.iter().all(|f| f.argument == Some(0)),
        "{failure}"
    );
    assert!(failure.to_string().contains("overwritten"), "{failure}");
}

#[test]
fn a_mutated_input_is_caught() {
    let failure = expect_failure(
        RuleTest::new(
            (1.5, -0.7),
            |a| a.0 * a.1,
            |a: &mut (f64, f64)| {
                let out = mul_rule(right_mul)(a);
                a.1 = 0.0; // the primal leaves its arguments alone
                out
            },
        )
        .check(),
    );
    assert_eq!(failure.checks(), vec![Check::Inputs]);
    assert_eq!(failure.failures[0].argument, Some(1));
}

#[test]
fn a_wrong_primal_value_is_caught_exactly() {
    let failure = expect_failure(
        RuleTest::new(
            (1.5, -0.7),
            |a| a.0 * a.1,
            |a: &mut (f64, f64)| {
                let (y, pb) = mul_rule(right_mul)(a);
                (y * (1.0 + f64::EPSILON), pb)
            },
        )
        .check(),
    );
    assert_eq!(failure.checks(), vec![Check::Primal]);
}

#[test]
fn nan_values_are_equal_and_skip_finite_differences() {
    let report = RuleTest::new((f64::NAN, 2.0), |a| a.0 * a.1, mul_rule(right_mul))
        .check()
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.comparisons(Check::FiniteDifferences), 0);
    assert!(!report.notes.is_empty());
}

#[test]
fn a_cotangent_of_the_wrong_shape_is_caught() {
    let failure = expect_failure(
        RuleTest::new(
            (vec![1.0, 2.0, 3.0],),
            |a| a.0.iter().sum::<f64>(),
            sum_rule(|n| n + 1),
        )
        .check(),
    );
    assert!(failure.failed(Check::Shapes), "{failure}");
    let text = failure.to_string();
    assert!(
        text.contains("the cotangents do not fit the arguments: mochi: a cotangent of 4 elements for a sequence of 3"),
        "{text}"
    );
}

#[test]
fn an_untouched_structural_zero_passes_only_where_the_gradient_is_zero() {
    let failure = expect_failure(
        RuleTest::new(
            (vec![1.0, 2.0],),
            |a| a.0.iter().sum::<f64>(),
            sum_rule(|_| 0),
        )
        .check(),
    );
    assert_eq!(failure.checks(), vec![Check::Shapes]);
    // x ↦ 0·Σx has a zero gradient: leaving the cotangent untouched is right.
    test_rule(
        (vec![1.0, 2.0],),
        |a| 0.0 * a.0.iter().sum::<f64>(),
        |a: &mut (Vec<f64>,)| {
            let (y, _) = sum_rule(|_| 0)(a);
            (0.0 * y, SumPullback { written: 0 })
        },
    );
}

/// `x ← a·x` in place (a mutating rule): the accumulator of `x` holds `x̄` after on entry
/// and `x̄` before (`a·x̄`) on exit; `ā += ⟨x before, x̄ after⟩`.
struct ScalePullback {
    x: Vec<f64>,
    a: f64,
    scale_shadow: bool,
}

impl Pullback for ScalePullback {
    type Output = NoTangent;
    type Args = (Vec<f64>, f64);
    fn pullback(self, _: NoTangent, (dx, da): (&mut Vec<f64>, &mut f64)) {
        *da += self
            .x
            .iter()
            .zip(dx.iter())
            .map(|(x, d)| x * d)
            .sum::<f64>();
        if self.scale_shadow {
            dx.iter_mut().for_each(|d| *d *= self.a);
        }
    }
}

fn scale_in_place(scale_shadow: bool) -> impl Fn(&mut (Vec<f64>, f64)) -> ((), ScalePullback) {
    move |args| {
        let x = args.0.clone();
        args.0.iter_mut().for_each(|v| *v *= args.1);
        (
            (),
            ScalePullback {
                x,
                a: args.1,
                scale_shadow,
            },
        )
    }
}

#[test]
fn mutating_rules_are_checked_through_the_final_state() {
    let primal = |args: &mut (Vec<f64>, f64)| args.0.iter_mut().for_each(|v| *v *= args.1);
    let report = RuleTest::new((vec![1.0, -2.0], 0.5), primal, scale_in_place(true))
        .check()
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.comparisons(Check::Accumulation), 2 * 3);
    let failure = expect_failure(
        RuleTest::new((vec![1.0, -2.0], 0.5), primal, scale_in_place(false)).check(),
    );
    assert_eq!(failure.checks(), vec![Check::Accumulation]);
    assert!(
        failure.failures.iter().all(|f| f.argument == Some(0)),
        "{failure}"
    );
}

#[test]
fn allocating_pullbacks_are_caught() {
    let allocating = |a: &mut (f64,)| {
        let x = a.0;
        let pb = FnPullback::<_, f64, (f64,)>::new(move |dy: f64, (dx,): (&mut f64,)| {
            let scratch = std::hint::black_box(vec![x.cos(); 4]);
            *dx += scratch[0] * dy; // d/dx sin x = cos x
        });
        (x.sin(), pb)
    };
    let failure = expect_failure(
        RuleTest::new((0.3,), |a| a.0.sin(), allocating)
            .expect_no_alloc()
            .check(),
    );
    assert_eq!(failure.checks(), vec![Check::NoAllocation]);
    let lean = |a: &mut (f64,)| {
        let x = a.0;
        let pb = FnPullback::<_, f64, (f64,)>::new(move |dy: f64, (dx,): (&mut f64,)| {
            *dx += x.cos() * dy
        });
        (x.sin(), pb)
    };
    let report = RuleTest::new((0.3,), |a| a.0.sin(), lean)
        .expect_no_alloc()
        .check()
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.comparisons(Check::NoAllocation), 1);
}

#[test]
fn f32_rules_integer_arguments_and_tuple_outputs_are_supported() {
    // (x, n) ↦ (sin x, cos x)·n with n an integer.
    struct SinCosN {
        x: f32,
        n: f32,
    }
    impl Pullback for SinCosN {
        type Output = (f32, f32);
        type Args = (f32, NoTangent);
        fn pullback(self, (ds, dc): (f32, f32), (dx, _): (&mut f32, &mut NoTangent)) {
            *dx += self.n * (ds * self.x.cos() - dc * self.x.sin());
        }
    }
    RuleTest::new(
        (0.8_f32, 3_i32),
        |a| (a.0.sin() * a.1 as f32, a.0.cos() * a.1 as f32),
        |a| {
            let (x, n) = (a.0, a.1 as f32);
            ((x.sin() * n, x.cos() * n), SinCosN { x, n })
        },
    )
    .jvp(|a, t| (a.0.cos() * a.1 as f32 * t.0, -a.0.sin() * a.1 as f32 * t.0))
    .tolerance(1e-4, 0.0)
    .samples(5)
    .seed(11)
    .run();
}

#[test]
#[should_panic(expected = "rule test failed: finite differences")]
fn run_panics_with_the_report() {
    test_rule(
        (2.0,),
        |a: &mut (f64,)| a.0.exp(),
        |a: &mut (f64,)| {
            let x = a.0;
            (
                x.exp(),
                FnPullback::<_, f64, (f64,)>::new(move |dy: f64, (dx,): (&mut f64,)| *dx += x * dy),
            )
        },
    );
}

/// `2·x` on an array, with a pullback that reads `ȳ` element by element in memory
/// order (`read_flat`) or through the broadcast-aware view (right).
fn double_rule(read_flat: bool) -> impl Fn(&mut (Array1<f64>,)) -> (Array1<f64>, DoubleRule) {
    move |a| {
        let dim = a.0.raw_dim();
        let f: DoublePullback = Box::new(move |dy, (dx,)| {
            // The accumulator may be a structural zero or a broadcast form: write it out.
            *dx = match crate::broadcast::view(dx, &dim) {
                None => Array1::zeros(dim),
                Some(v) => v.to_owned(),
            };
            if read_flat {
                for (d, y) in dx.iter_mut().zip(dy.iter()) {
                    *d += 2.0 * y;
                }
            } else if let Some(dy) = crate::broadcast::view(&dy, &dim) {
                dx.zip_mut_with(&dy, |d, y| *d += 2.0 * y);
            }
        });
        (a.0.mapv(|v| 2.0 * v), FnPullback::new(f))
    }
}

type DoublePullback = Box<dyn FnOnce(Array1<f64>, (&mut Array1<f64>,))>;
type DoubleRule = FnPullback<DoublePullback, Array1<f64>, (Array1<f64>,)>;

#[test]
fn a_rule_that_misreads_a_broadcast_form_cotangent_is_caught() {
    let x = ndarray::array![0.5, -1.0, 2.0];
    let primal = |a: &mut (ndarray::Array1<f64>,)| a.0.mapv(|v| 2.0 * v);
    RuleTest::new((x.clone(),), primal, double_rule(false))
        .check()
        .unwrap_or_else(|f| panic!("{f}"));
    let failure = expect_failure(RuleTest::new((x,), primal, double_rule(true)).check());
    assert_eq!(failure.checks(), vec![Check::Structured], "{failure}");
    assert!(
        failure
            .to_string()
            .contains("broadcast-form output cotangent"),
        "{failure}"
    );
}

#[test]
fn a_forward_rule_is_checked_against_the_pullback() {
    // The primal on duals agrees with the right pullback…
    let report = RuleTest::new((1.5, -0.7), |a| a.0 * a.1, mul_rule(right_mul))
        .forward(|a| a.0 * a.1)
        .check()
        .unwrap();
    assert_eq!(report.comparisons(Check::Jvp), 2 * 3);
    // …and a forward rule that differs from it (here: the derivative of x·y + y, a
    // different function on duals) is caught by the adjoint identity alone.
    let failure = expect_failure(
        RuleTest::new((1.5, -0.7), |a| a.0 * a.1, mul_rule(right_mul))
            .forward(|a| a.0 * a.1 + a.1)
            .check(),
    );
    assert_eq!(failure.checks(), vec![Check::Jvp]);
}
