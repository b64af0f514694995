//! The daemon: the design-doc review on a cron schedule, once per local date.

pub mod daemon;
pub mod schedule;
pub mod state;
