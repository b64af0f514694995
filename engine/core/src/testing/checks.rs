//! The checks of a rule test, run in order on one set of arguments.

use super::alloc::{allocations_during, counting_allocator_installed};
use super::arguments::{flatten, Arguments};
use super::finite_difference::directional::{compare, normalise, step_scale, Comparison, Probe};
use super::jvp::MaybeJvp;
use super::perturb::{Flatten, Perturb};
use super::report::{clip, panic_message, At, Check, Recorder, RuleTestFailure, RuleTestReport};
use crate::{Accumulators, Pullback, Tangent, TangentVector};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The options of a [`RuleTest`](super::RuleTest).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) rtol: f64,
    pub(crate) atol: f64,
    pub(crate) seed: u64,
    pub(crate) samples: usize,
    pub(crate) no_alloc: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rtol: 1e-6,
            atol: 0.0,
            // "mochi" in ASCII: any fixed seed makes failures reproducible.
            seed: 0x6d_6f_63_68_69,
            samples: 3,
            no_alloc: false,
        }
    }
}

/// What the harness needs of a test, bundled so the checks can share it.
struct Subject<'a, A: Perturb, Y, F, R, J> {
    args: &'a A,
    primal: &'a F,
    rule: &'a R,
    jvp: &'a J,
    options: &'a Options,
    _output: std::marker::PhantomData<fn() -> Y>,
}

/// Everything of one random draw.
struct Draw<A: Tangent, Y: Tangent> {
    output: Y,
    output_cotangent: Y::Tangent,
    direction: A::Tangent,
    seed: A::Tangent,
}

impl<'a, A, Y, P, F, R, J> Subject<'a, A, Y, F, R, J>
where
    A: Arguments + Clone + Debug,
    A::Tangent: Accumulators,
    Y: Perturb + Clone + Debug,
    P: Pullback<Output = Y::Tangent, Args = A::Tangent>,
    F: Fn(&mut A) -> Y,
    R: Fn(&mut A) -> (Y, P),
    J: MaybeJvp<A, Y>,
{
    /// Runs the rule's forward sweep and then its pullback on `accumulators`; returns the
    /// arguments after the rule, its value and the accumulators, or the panic message.
    fn forward_and_pullback(
        &self,
        output_cotangent: Y::Tangent,
        accumulators: A::Tangent,
    ) -> Result<(A, Y, A::Tangent), String> {
        self.forward_and_pullback_raw(output_cotangent, accumulators)
            .and_then(|(args, y, mut acc)| {
                catch_unwind(AssertUnwindSafe(|| self.args.densify(&mut acc)))
                    .map_err(|payload| {
                        format!(
                            "the cotangents do not fit the arguments: {}",
                            panic_message(&*payload)
                        )
                    })
                    .map(|()| (args, y, acc))
            })
    }

    /// As [`forward_and_pullback`](Self::forward_and_pullback), with the accumulators as
    /// the pullback left them (structural zeros and broadcast forms not written out).
    fn forward_and_pullback_raw(
        &self,
        output_cotangent: Y::Tangent,
        accumulators: A::Tangent,
    ) -> Result<(A, Y, A::Tangent), String> {
        let mut args = self.args.clone();
        let mut accumulators = accumulators;
        catch_unwind(AssertUnwindSafe(|| {
            let (y, pullback) = (self.rule)(&mut args);
            pullback.pullback(output_cotangent, accumulators.as_mut());
            (y, accumulators)
        }))
        .map(|(y, acc)| (args, y, acc))
        .map_err(|payload| panic_message(&*payload))
    }

    /// The arguments that carry a tangent (not integers and the like).
    fn active_arguments(&self) -> Vec<usize> {
        let zero = self.args.zero_tangent();
        (0..A::COUNT)
            .filter(|&i| !A::flatten_argument(&zero, i).is_empty())
            .collect()
    }

    /// `draw.direction` restricted to argument `i`, its largest component ±1.
    fn direction_in(&self, draw: &Draw<A, Y>, i: usize) -> A::Tangent {
        let mut d = self.args.only_argument(&draw.direction, i);
        normalise(&mut d);
        d
    }

    fn probe<'p>(
        &'p self,
        direction: &'p A::Tangent,
        draw: &'p Draw<A, Y>,
        seed: Option<&'p A::Tangent>,
        cotangent: &'p A::Tangent,
        i: usize,
    ) -> Probe<'p, A, Y> {
        Probe {
            args: self.args,
            direction,
            output: &draw.output,
            output_cotangent: &draw.output_cotangent,
            seed,
            cotangent,
            scale: step_scale(self.args.argument_scale(i)),
            rtol: self.options.rtol,
            atol: self.options.atol,
        }
    }

    fn run(&self) -> Result<RuleTestReport, RuleTestFailure> {
        let mut rec = Recorder::default();
        self.run_into(&mut rec);
        let report = RuleTestReport {
            seed: self.options.seed,
            samples: self.options.samples,
            arguments: clip(format!("{:?}", self.args)),
            checks: rec.checks,
            notes: rec.notes,
        };
        if rec.failures.is_empty() {
            Ok(report)
        } else {
            Err(RuleTestFailure {
                failures: rec.failures,
                report,
            })
        }
    }

    fn run_into(&self, rec: &mut Recorder) {
        let mut after_primal = self.args.clone();
        let y = (self.primal)(&mut after_primal);
        let mut rng = StdRng::seed_from_u64(self.options.seed);
        let draws: Vec<Draw<A, Y>> = (0..self.options.samples)
            .map(|_| Draw {
                output: y.clone(),
                output_cotangent: y.random_tangent(&mut rng),
                direction: self.args.random_tangent(&mut rng),
                // The accumulators hold the cotangent of the arguments' final state on
                // entry: shaped as they are after the call (a `&mut Vec` the function
                // pushes onto is longer).
                seed: after_primal.random_tangent(&mut rng),
            })
            .collect();

        // (a) and (d): the forward sweep against the primal. (The pullback owns what it
        // needs and cannot touch the arguments, so they are final after the forward sweep.)
        let mut after_rule = self.args.clone();
        let y_rule = match catch_unwind(AssertUnwindSafe(|| (self.rule)(&mut after_rule).0)) {
            Ok(y) => y,
            Err(payload) => {
                let message = panic_message(&*payload);
                rec.expect(Check::Primal, At::default(), false, || {
                    format!("the rule panicked (the primal did not): {message}")
                });
                return;
            }
        };
        rec.expect(Check::Primal, At::default(), y_rule.primal_eq(&y), || {
            format!(
                "the rule returned {} but the function returns {}",
                clip(format!("{y_rule:?}")),
                clip(format!("{y:?}"))
            )
        });
        let mut mutated = vec![false; A::COUNT];
        for (i, m) in mutated.iter_mut().enumerate() {
            let at = At {
                argument: Some(i),
                sample: None,
            };
            rec.expect(
                Check::Inputs,
                at,
                after_rule.argument_eq(&after_primal, i),
                || {
                    format!(
                        "after the rule the argument is {} but the function leaves it {}",
                        clip(after_rule.argument_debug(i)),
                        clip(after_primal.argument_debug(i))
                    )
                },
            );
            *m = !after_primal.argument_eq(self.args, i);
        }

        let active = self.active_arguments();
        let finite = all_finite(&y.difference(&y)) && all_finite(&self.args.difference(self.args));
        if !finite {
            rec.note(
                "finite differences and the JVP skipped: the arguments or the value are not finite"
                    .into(),
            );
        }
        for (s, draw) in draws.iter().enumerate() {
            self.check_draw(rec, draw, s, &active, &mutated, finite);
        }
        // (h) structured cotangents, from a stream of its own so that adding the check
        // changed no other draw.
        let mut rng = StdRng::seed_from_u64(self.options.seed ^ 0x5354_5255_4354);
        for (s, draw) in draws.iter().enumerate() {
            self.check_structured(rec, draw, &mut rng, s, &active, &mutated);
        }
        if self.options.no_alloc {
            self.check_no_allocation(rec, &draws[0]);
        }
    }

    /// (e), (b), (f) and (c) for one random draw.
    fn check_draw(
        &self,
        rec: &mut Recorder,
        draw: &Draw<A, Y>,
        s: usize,
        active: &[usize],
        mutated: &[bool],
        finite: bool,
    ) {
        let zero = self.args.zero_tangent();
        let raw = match self
            .forward_and_pullback_raw(draw.output_cotangent.clone(), TangentVector::zero())
        {
            Ok((_, _, g)) => g,
            Err(message) => {
                let at = At {
                    argument: None,
                    sample: Some(s),
                };
                rec.expect(Check::Shapes, at, false, || {
                    format!("the pullback panicked on structural-zero accumulators: {message}")
                });
                return;
            }
        };

        // (e) shapes: every cotangent is a structural zero or fits its argument (dense, or
        // a broadcast form of it), and is then compared in dense form.
        let mut untouched = vec![false; A::COUNT];
        for &i in active {
            untouched[i] = A::flatten_argument(&raw, i).is_empty();
        }
        let mut gradient = raw;
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| self.args.densify(&mut gradient))) {
            let message = panic_message(&*payload);
            rec.expect(Check::Shapes, At::sample(s), false, || {
                format!("the cotangents do not fit the arguments: {message}")
            });
            return;
        }
        for &i in active {
            let at = At {
                argument: Some(i),
                sample: Some(s),
            };
            let got = A::flatten_argument(&gradient, i).len();
            let want = A::flatten_argument(&zero, i).len();
            rec.expect(Check::Shapes, at, got == want, || {
                format!("the cotangent has {got} components but the argument has {want}")
            });
        }

        if finite {
            // (b) finite differences.
            for &i in active {
                let at = At {
                    argument: Some(i),
                    sample: Some(s),
                };
                let direction = self.direction_in(draw, i);
                let probe = self.probe(&direction, draw, None, &gradient, i);
                let check = if untouched[i] {
                    Check::Shapes
                } else {
                    Check::FiniteDifferences
                };
                match compare(&probe, self.primal) {
                    Some(c) => rec.compare(check, at, c.ratio, || {
                        let lead = if untouched[i] {
                            "the pullback left this cotangent a structural zero, but "
                        } else {
                            ""
                        };
                        format!("{lead}{}", describe(&c, "⟨ȳ, Δy⟩/2h"))
                    }),
                    None => rec.expect(Check::FiniteDifferences, at, false, || {
                        "no step size gave finite values on both sides of the arguments; the function is not \
                         differentiable here (check kinks and domain edges with direct assertions)"
                            .into()
                    }),
                }
            }
        }

        // (f) accumulation.
        match self.forward_and_pullback(draw.output_cotangent.clone(), draw.seed.clone()) {
            Ok((_, _, accumulated)) => {
                // With a mutated argument, its seed (the cotangent of its final state) flows
                // into the other arguments too: only finite differences can judge that.
                let any_mutated = mutated.iter().any(|m| *m);
                for &i in active {
                    let at = At {
                        argument: Some(i),
                        sample: Some(s),
                    };
                    if any_mutated {
                        if finite {
                            self.check_mutated_accumulation(rec, draw, &accumulated, i, at);
                        }
                    } else {
                        let seed = A::flatten_argument(&draw.seed, i);
                        let g = A::flatten_argument(&gradient, i);
                        let got = A::flatten_argument(&accumulated, i);
                        self.check_accumulation(rec, at, &seed, &g, &got);
                    }
                }
            }
            Err(message) => {
                let at = At {
                    argument: None,
                    sample: Some(s),
                };
                rec.expect(Check::Accumulation, at, false, || {
                    format!("the pullback panicked on accumulators seeded with dense cotangents: {message}")
                });
            }
        }

        // (c) adjoint identity with the JVP.
        if finite {
            for &i in active {
                let direction = self.direction_in(draw, i);
                self.check_jvp(
                    rec,
                    draw,
                    &gradient,
                    &direction,
                    At {
                        argument: Some(i),
                        sample: Some(s),
                    },
                );
            }
        }
    }

    /// For an argument the function does not mutate: `result − seed = gradient`.
    fn check_accumulation(
        &self,
        rec: &mut Recorder,
        at: At,
        seed: &[f64],
        gradient: &[f64],
        got: &[f64],
    ) {
        if got.len() != seed.len() {
            rec.expect(Check::Accumulation, at, false, || {
                format!(
                    "accumulating into a seed of {} components left {} components",
                    seed.len(),
                    got.len()
                )
            });
            return;
        }
        // A structural-zero gradient is zero in every component.
        let g = |k: usize| gradient.get(k).copied().unwrap_or(0.0);
        let mut worst = (0.0_f64, 0_usize);
        for (k, (&s, &r)) in seed.iter().zip(got).enumerate() {
            let expected = s + g(k);
            let ratio = if r == expected || (r.is_nan() && expected.is_nan()) {
                0.0
            } else {
                let tolerance = self.options.atol + self.options.rtol * (s.abs() + g(k).abs());
                let error = (r - expected).abs();
                if error.is_nan() {
                    f64::NAN
                } else {
                    error / tolerance
                }
            };
            if ratio.is_nan() || ratio > worst.0 || worst.0.is_nan() {
                worst = (ratio, k);
                if ratio.is_nan() {
                    break;
                }
            }
        }
        let (ratio, k) = worst;
        rec.compare(Check::Accumulation, at, ratio, || {
            let (s, r) = (seed[k], got[k]);
            let hint = if (r - g(k)).abs() <= self.options.rtol * g(k).abs() + self.options.atol {
                " (the seed was overwritten, not added to)"
            } else {
                ""
            };
            format!(
                "component {k}: seed {s:e} + gradient {:e} = {:e}, but the accumulator holds {r:e}{hint}",
                g(k),
                s + g(k)
            )
        });
    }

    /// When the function mutates an argument, that argument's accumulator holds the
    /// cotangent of its final state on entry and that of its initial state on exit:
    /// checked with finite differences of the map `x ↦ (y, x after)`.
    fn check_mutated_accumulation(
        &self,
        rec: &mut Recorder,
        draw: &Draw<A, Y>,
        accumulated: &A::Tangent,
        i: usize,
        at: At,
    ) {
        let direction = self.direction_in(draw, i);
        let probe = self.probe(&direction, draw, Some(&draw.seed), accumulated, i);
        match compare(&probe, self.primal) {
            Some(c) => rec.compare(Check::Accumulation, at, c.ratio, || {
                format!(
                    "on seeded accumulators (the function mutates its arguments), {}",
                    describe(&c, "(⟨ȳ, Δy⟩ + ⟨seed, Δx after⟩)/2h")
                )
            }),
            None => rec.note(format!(
                "accumulation into argument {i} not checked: no finite step"
            )),
        }
    }

    fn check_jvp(
        &self,
        rec: &mut Recorder,
        draw: &Draw<A, Y>,
        gradient: &A::Tangent,
        direction: &A::Tangent,
        at: At,
    ) {
        let tangent = match catch_unwind(AssertUnwindSafe(|| self.jvp.jvp(self.args, direction))) {
            Ok(Some(t)) => t,
            Ok(None) => return,
            Err(payload) => {
                let message = panic_message(&*payload);
                rec.expect(Check::Jvp, at, false, || {
                    format!("the JVP panicked: {message}")
                });
                return;
            }
        };
        let (forward, forward_terms) = dot(&flatten(&draw.output_cotangent), &flatten(&tangent));
        let (reverse, reverse_terms) = dot(&flatten(gradient), &flatten(direction));
        let tolerance = self.options.atol + self.options.rtol * forward_terms.max(reverse_terms);
        let error = (forward - reverse).abs();
        let ratio = if forward == reverse || (forward.is_nan() && reverse.is_nan()) {
            0.0
        } else {
            error / tolerance
        };
        rec.compare(Check::Jvp, at, ratio, || {
            format!(
                "⟨ȳ, J·ẋ⟩ = {forward:.9e} (JVP) but ⟨x̄, ẋ⟩ = {reverse:.9e} (pullback); error {error:.2e}, \
                 tolerance {tolerance:.2e}"
            )
        });
    }

    /// (h): a broadcast-form output cotangent gives the cotangents its expansion gives,
    /// and broadcast-form accumulators collect what dense ones do.
    fn check_structured<G: rand::Rng>(
        &self,
        rec: &mut Recorder,
        draw: &Draw<A, Y>,
        rng: &mut G,
        s: usize,
        active: &[usize],
        mutated: &[bool],
    ) {
        if let Some(structured) = draw.output.random_structured_tangent(rng) {
            let mut expanded = structured.clone();
            draw.output.densify(&mut expanded);
            let got = self.forward_and_pullback(structured, TangentVector::zero());
            let want = self.forward_and_pullback(expanded, TangentVector::zero());
            self.compare_runs(
                rec,
                s,
                active,
                got,
                want,
                "a broadcast-form output cotangent",
            );
        }
        if mutated.iter().any(|m| *m) {
            return;
        }
        if let Some(seed) = self.args.random_structured_tangent(rng) {
            let mut seed_dense = seed.clone();
            self.args.densify(&mut seed_dense);
            let got = self.forward_and_pullback(draw.output_cotangent.clone(), seed);
            let want = self.forward_and_pullback(draw.output_cotangent.clone(), seed_dense);
            self.compare_runs(rec, s, active, got, want, "broadcast-form accumulators");
        }
    }

    /// The cotangents of a run on structured inputs (`got`) against those of the run on
    /// their dense expansions (`want`), argument by argument.
    fn compare_runs(
        &self,
        rec: &mut Recorder,
        s: usize,
        active: &[usize],
        got: Result<(A, Y, A::Tangent), String>,
        want: Result<(A, Y, A::Tangent), String>,
        on: &str,
    ) {
        match (got, want) {
            (Ok((_, _, got)), Ok((_, _, want))) => {
                for &i in active {
                    self.compare_components(
                        rec,
                        At {
                            argument: Some(i),
                            sample: Some(s),
                        },
                        &A::flatten_argument(&want, i),
                        &A::flatten_argument(&got, i),
                        &format!("on {on}"),
                    );
                }
            }
            (Err(message), _) => rec.expect(Check::Structured, At::sample(s), false, || {
                format!("the pullback panicked on {on}: {message}")
            }),
            // The dense run's failures are reported by the other checks.
            (_, Err(_)) => {}
        }
    }

    /// Components `got` against `want` within the test's tolerance.
    fn compare_components(
        &self,
        rec: &mut Recorder,
        at: At,
        want: &[f64],
        got: &[f64],
        what: &str,
    ) {
        if got.len() != want.len() {
            rec.expect(Check::Structured, at, false, || {
                format!(
                    "{what}, the cotangent has {} components, not {}",
                    got.len(),
                    want.len()
                )
            });
            return;
        }
        let mut worst = (0.0_f64, 0_usize);
        for (k, (&w, &g)) in want.iter().zip(got).enumerate() {
            let ratio = if w == g || (w.is_nan() && g.is_nan()) {
                0.0
            } else {
                let tolerance = self.options.atol + self.options.rtol * (w.abs() + g.abs());
                (w - g).abs() / tolerance
            };
            if ratio.is_nan() || ratio > worst.0 {
                worst = (ratio, k);
            }
        }
        let (ratio, k) = worst;
        rec.compare(Check::Structured, at, ratio, || {
            format!(
                "{what}, component {k} is {:e}, but the dense expansion gives {:e}",
                got[k], want[k]
            )
        });
    }

    /// (g): the pullback on dense accumulators allocates nothing.
    fn check_no_allocation(&self, rec: &mut Recorder, draw: &Draw<A, Y>) {
        if !counting_allocator_installed() {
            rec.expect(Check::NoAllocation, At::default(), false, || {
                "allocations cannot be counted: install the counting allocator in this test binary with \
                 `#[global_allocator] static A: mochi_core::testing::CountingAllocator = \
                 mochi_core::testing::CountingAllocator;`"
                    .into()
            });
            return;
        }
        let mut args = self.args.clone();
        let (_, pullback) = (self.rule)(&mut args);
        let mut accumulators = self.args.zero_tangent();
        let output_cotangent = draw.output_cotangent.clone();
        let (result, allocations) = allocations_during(|| {
            catch_unwind(AssertUnwindSafe(|| {
                pullback.pullback(output_cotangent, accumulators.as_mut())
            }))
        });
        if let Err(payload) = result {
            let message = panic_message(&*payload);
            rec.expect(Check::NoAllocation, At::default(), false, || {
                format!("the pullback panicked on dense zero accumulators: {message}")
            });
            return;
        }
        rec.expect(Check::NoAllocation, At::default(), allocations == 0, || {
            format!("the pullback made {allocations} allocation(s) on dense zero accumulators")
        });
    }
}

/// `(Σ aᵢbᵢ, Σ |aᵢbᵢ|)` over the common length.
fn dot(a: &[f64], b: &[f64]) -> (f64, f64) {
    a.iter()
        .zip(b)
        .fold((0.0, 0.0), |(s, m), (x, y)| (s + x * y, m + (x * y).abs()))
}

fn all_finite<T: Flatten>(difference_with_itself: &T) -> bool {
    // `v − v` is 0 for finite components and NaN for infinite or NaN ones.
    flatten(difference_with_itself).iter().all(|d| *d == 0.0)
}

fn describe(c: &Comparison, left: &str) -> String {
    format!(
        "{left} = {:.9e} but ⟨x̄, Δx⟩/2h = {:.9e} (pullback); error {:.2e}, tolerance {:.2e}, step h = {:.1e}",
        c.finite_difference,
        c.pullback,
        (c.finite_difference - c.pullback).abs(),
        c.tolerance,
        c.step
    )
}

/// Runs every check of a rule test.
pub(crate) fn run_checks<A, Y, P, F, R, J>(
    args: &A,
    primal: &F,
    rule: &R,
    jvp: &J,
    options: &Options,
) -> Result<RuleTestReport, RuleTestFailure>
where
    A: Arguments + Clone + Debug,
    A::Tangent: Accumulators,
    Y: Perturb + Clone + Debug,
    P: Pullback<Output = Y::Tangent, Args = A::Tangent>,
    F: Fn(&mut A) -> Y,
    R: Fn(&mut A) -> (Y, P),
    J: MaybeJvp<A, Y>,
{
    Subject {
        args,
        primal,
        rule,
        jvp,
        options,
        _output: std::marker::PhantomData,
    }
    .run()
}
