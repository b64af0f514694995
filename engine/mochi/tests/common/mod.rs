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
