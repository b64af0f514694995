//! `mochi-gradbench`: a GradBench tool. Reads protocol messages on stdin, one per line,
//! and writes one response per line on stdout.

use std::io::{self, BufRead, Write};

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut stdout = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match mochi_gradbench::protocol::respond(&line) {
            mochi_gradbench::protocol::Reply::Line(response) => {
                writeln!(stdout, "{response}")?;
                stdout.flush()?;
            }
            mochi_gradbench::protocol::Reply::End => break,
        }
    }
    Ok(())
}
