//! `mochi-bot`: see `mochi-bot --help` and design-docs/bot.md.

use clap::Parser;
use mochi_bot::cli::{execute, Cli, Env};

fn main() {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mochi-bot: error: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    match runtime.block_on(execute(cli, &Env::from_process())) {
        Ok(report) => {
            print!("{}", report.stdout);
            std::process::exit(report.code);
        }
        Err(error) => {
            // One line whatever the error quotes: nothing read can forge log lines.
            let line = mochi_bot::input::one_line(&error.to_string(), 2_000);
            eprintln!("mochi-bot: error: {line}");
            std::process::exit(2);
        }
    }
}
