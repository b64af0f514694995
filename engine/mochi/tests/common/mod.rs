//! Shared by the corpus tests: one line per checked function.

/// `check!(name, args_tuple, |a| (call arguments…))` checks `name` against its derived
/// rule with `mochi::testing::test_rule` (finite differences, accumulation, shapes,
/// inputs left as the primal leaves them).
#[macro_export]
macro_rules! check {
    // rustfmt may wrap the argument list in a block
    ($name:ident, $args:expr, |$a:ident| { ($($arg:expr),* $(,)?) }) => {
        $crate::check!($name, $args, |$a| ($($arg),*));
    };
    ($name:ident, $args:expr, |$a:ident| ($($arg:expr),* $(,)?)) => {
        #[test]
        fn $name() {
            mochi::testing::test_rule(
                $args,
                |$a| super::$name($($arg),*),
                |$a| super::$name::rrule($($arg),*),
            );
        }
    };
}

/// Checks a Hessian against central differences of the gradient at `x` (step 1e-5,
/// relative tolerance `tol`); `name` labels a failure.
#[allow(dead_code)]
pub fn assert_hessian_matches(
    name: &str,
    grad: impl Fn(&[f64]) -> Vec<f64>,
    h: &ndarray::Array2<f64>,
    x: &[f64],
    tol: f64,
) {
    let step = 1e-5;
    for j in 0..x.len() {
        let (mut up, mut down) = (x.to_vec(), x.to_vec());
        up[j] += step;
        down[j] -= step;
        let (gu, gd) = (grad(&up), grad(&down));
        for i in 0..x.len() {
            let fd = (gu[i] - gd[i]) / (2.0 * step);
            assert!(
                (h[[i, j]] - fd).abs() < tol * (1.0 + fd.abs()),
                "{name}: h[{i},{j}] = {} vs {fd}",
                h[[i, j]]
            );
        }
    }
}
