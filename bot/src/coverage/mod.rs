//! Coverage of a pull request: lcov reports, unified diffs, and patch coverage.

pub mod diff;
pub mod lcov;
pub mod patch;
