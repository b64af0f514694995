//! The AD columns of the table and what each one times.

pub mod easy_ml;
pub mod echidna;
pub mod hand;
pub mod mochi;
pub mod tape;

#[cfg(feature = "heavy-peers")]
pub mod burn;
#[cfg(feature = "heavy-peers")]
pub mod candle;

use crate::cases::inputs::Inputs;
use crate::cases::Case;
use crate::cell::Cell;

/// An AD column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    /// mochi's `value_and_gradient_into`.
    Mochi,
    /// easy-ml 2.3, `Record` on a `WengertList`.
    EasyMl,
    /// echidna 0.15, reverse mode re-recorded every call.
    Echidna,
    /// echidna 0.15, bytecode tape recorded once and replayed.
    EchidnaOnce,
    /// candle-core 0.11, `Var` + `backward` on the CPU (feature `heavy-peers`).
    Candle,
    /// burn 0.22, `Device::flex().autodiff()` (feature `heavy-peers`).
    Burn,
    /// The value and gradient written by hand in plain Rust: the row's floor, not a peer.
    Hand,
    /// JAX `jit(value_and_grad)` on CPU, from `peers/jax_cases.py` (merged, not run in process).
    Jax,
}

impl Column {
    /// Every column, in table order.
    pub const ALL: [Column; 8] = [
        Column::Mochi,
        Column::EasyMl,
        Column::Echidna,
        Column::EchidnaOnce,
        Column::Candle,
        Column::Burn,
        Column::Hand,
        Column::Jax,
    ];

    /// The column's name in the table, the JSON and `--columns`.
    pub fn name(self) -> &'static str {
        match self {
            Column::Mochi => "mochi",
            Column::EasyMl => "easy-ml",
            Column::Echidna => "echidna",
            Column::EchidnaOnce => "echidna-once",
            Column::Candle => "candle",
            Column::Burn => "burn",
            Column::Hand => "hand",
            Column::Jax => "jax",
        }
    }

    /// The column with this name.
    pub fn from_name(name: &str) -> Option<Column> {
        Column::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether this build can run the column in process (`heavy-peers` for candle and
    /// burn; JAX never runs in process).
    pub fn compiled_in(self) -> bool {
        let heavy = matches!(self, Column::Candle | Column::Burn);
        self != Column::Jax && (!heavy || cfg!(feature = "heavy-peers"))
    }

    /// What the timed region holds, for the table's footnote.
    pub fn timed_region(self) -> &'static str {
        match self {
            Column::Mochi => "`value_and_gradient_into` (fused forward + reverse sweep) and the `fill(0.0)` of the caller's shadow buffers, which are allocated once outside",
            Column::EasyMl => "clearing the WengertList (created once outside), creating the input Records, recording the function, the reverse pass, reading the gradient",
            Column::Echidna => "`echidna::grad`: recording the tape (pooled, thread-local), the reverse sweep, the gradient Vec",
            Column::EchidnaOnce => "`BytecodeTape::gradient_with_buf`: replaying a tape recorded once outside (forward + reverse); valid only for input-independent control flow",
            Column::Candle => "building the graph from `Var`s created once outside, `backward`, copying the gradients out (RAYON_NUM_THREADS=1)",
            Column::Burn => "building the autodiff graph from tensors `require_grad`ed once outside, `backward`, reading the gradients (pure-Rust Flex CPU backend, f64)",
            Column::Hand => "the value and gradient written by hand in plain Rust (no tape; one `sin_cos` pass, running sums, the same GEMM), the shadows' `fill(0.0)` as for mochi: the row's floor",
            Column::Jax => "`jit(value_and_grad)` call and `block_until_ready`; compilation outside (float64, CPU, single-threaded)",
        }
    }
}

/// The primal cell of `case` (shared by every column).
pub fn primal(case: Case, inputs: &Inputs) -> Box<dyn Cell> {
    mochi::primal(case, inputs)
}

/// The gradient cell of `case` in `column`, or `None` when the column cannot express
/// the case or is not compiled into this build.
pub fn gradient(column: Column, case: Case, inputs: &Inputs) -> Option<Box<dyn Cell>> {
    match column {
        Column::Mochi => Some(mochi::gradient(case, inputs)),
        Column::EasyMl => Some(easy_ml::gradient(case, inputs)),
        Column::Echidna => Some(echidna::rerecord(case, inputs)),
        Column::EchidnaOnce => Some(echidna::record_once(case, inputs)),
        Column::Hand => Some(hand::gradient(case, inputs)),
        #[cfg(feature = "heavy-peers")]
        Column::Candle => candle::gradient(case, inputs),
        #[cfg(feature = "heavy-peers")]
        Column::Burn => burn::gradient(case, inputs),
        _ => None,
    }
}
