//! mochi-bot: the pull-request summary, the performance gate, the daily
//! design-doc review and the daemon that schedules it.
//!
//! The binary is a thin layer over [`cli::execute`]; every command is a function
//! in [`commands`] so that it can be tested end to end against a fake GitHub API.

pub mod cli;
pub mod commands;
pub mod config;
pub mod coverage;
pub mod docs;
pub mod github;
pub mod icount;
pub mod input;
pub mod markdown;
pub mod options;
pub mod perf;
pub mod serve;
pub mod summary;
pub mod wallclock;
