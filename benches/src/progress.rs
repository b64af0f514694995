//! A one-line progress bar on stderr (redrawn in place on a terminal, one line per
//! case otherwise).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Progress over the selected cases.
pub struct Progress {
    total: usize,
    start: Instant,
    last_draw: Option<Instant>,
    terminal: bool,
}

impl Progress {
    /// A bar over `total` cases.
    pub fn new(total: usize) -> Self {
        Progress {
            total,
            start: Instant::now(),
            last_draw: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// Case `index` (0-based) named `label` is `fraction` done.
    pub fn update(&mut self, index: usize, label: &str, fraction: f64) {
        if !self.terminal {
            return;
        }
        let now = Instant::now();
        if self
            .last_draw
            .is_some_and(|t| now - t < Duration::from_millis(100))
        {
            return;
        }
        self.last_draw = Some(now);
        let done = (index as f64 + fraction.clamp(0.0, 1.0)) / self.total.max(1) as f64;
        eprint!(
            "\r{}",
            line(done, index, self.total, label, self.start.elapsed())
        );
        let _ = std::io::stderr().flush();
    }

    /// Case `index` is finished.
    pub fn finish_case(&mut self, index: usize, label: &str) {
        if self.terminal {
            self.last_draw = None;
            self.update(index, label, 1.0);
        } else {
            eprintln!(
                "[{}/{}] {label} done ({:.0} s)",
                index + 1,
                self.total,
                self.start.elapsed().as_secs_f64()
            );
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if self.terminal {
            eprintln!("\r{:80}\r", "");
        }
    }
}

/// `[#########-----------]  45% 3/13 kron_sum  12 s`
fn line(done: f64, index: usize, total: usize, label: &str, elapsed: Duration) -> String {
    const WIDTH: usize = 30;
    let filled = ((done * WIDTH as f64).round() as usize).min(WIDTH);
    format!(
        "[{}{}] {:3.0}% {}/{} {:<28} {:4.0} s",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled),
        100.0 * done,
        (index + 1).min(total),
        total,
        label,
        elapsed.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_with_progress() {
        let l = line(0.5, 6, 13, "kron_sum", Duration::from_secs(12));
        assert!(
            l.starts_with(&format!("[{}{}]", "#".repeat(15), "-".repeat(15))),
            "{l}"
        );
        assert!(l.contains(" 50% 7/13 kron_sum"), "{l}");
        assert!(
            line(1.7, 12, 13, "x", Duration::ZERO).starts_with(&format!("[{}]", "#".repeat(30)))
        );
    }
}
