//! The 13 benchmark cases: their functions, their fixed-seed inputs, and their labels.

pub mod functions;
pub mod inputs;

use std::fmt;

/// One of the 13 cases of `shared/bench-cases.md`, in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Case {
    /// `sum_1000`
    Sum1000,
    /// `_sum_1000`
    SumLoop1000,
    /// `sum_sin_1000`
    SumSin1000,
    /// `_sum_sin_1000`
    SumSinLoop1000,
    /// `kron_sum`
    KronSum,
    /// `kron_view_sum`
    KronViewSum,
    /// `naive_map_sin_cos_exp`
    NaiveMapSinCosExp,
    /// `map_sin_cos_exp`
    MapSinCosExp,
    /// `broadcast_sin_cos_exp`
    BroadcastSinCosExp,
    /// `simple_mlp`
    SimpleMlp,
    /// `gp_lml`
    GpLml,
    /// `turing_broadcast_benchmark`
    TuringBroadcast,
    /// `large_single_block`
    LargeSingleBlock,
}

impl Case {
    /// Every case, in table order.
    pub const ALL: [Case; 13] = [
        Case::Sum1000,
        Case::SumLoop1000,
        Case::SumSin1000,
        Case::SumSinLoop1000,
        Case::KronSum,
        Case::KronViewSum,
        Case::NaiveMapSinCosExp,
        Case::MapSinCosExp,
        Case::BroadcastSinCosExp,
        Case::SimpleMlp,
        Case::GpLml,
        Case::TuringBroadcast,
        Case::LargeSingleBlock,
    ];

    /// The label used in the table, the JSON and `ranges.toml`.
    pub fn label(self) -> &'static str {
        match self {
            Case::Sum1000 => "sum_1000",
            Case::SumLoop1000 => "_sum_1000",
            Case::SumSin1000 => "sum_sin_1000",
            Case::SumSinLoop1000 => "_sum_sin_1000",
            Case::KronSum => "kron_sum",
            Case::KronViewSum => "kron_view_sum",
            Case::NaiveMapSinCosExp => "naive_map_sin_cos_exp",
            Case::MapSinCosExp => "map_sin_cos_exp",
            Case::BroadcastSinCosExp => "broadcast_sin_cos_exp",
            Case::SimpleMlp => "simple_mlp",
            Case::GpLml => "gp_lml",
            Case::TuringBroadcast => "turing_broadcast_benchmark",
            Case::LargeSingleBlock => "large_single_block",
        }
    }

    /// The case with this label.
    pub fn from_label(label: &str) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.label() == label)
    }

    /// The order in which a gradient is flattened into one `Vec<f64>` (each array
    /// row-major, arguments in this order); every column follows it.
    pub fn gradient_layout(self) -> &'static str {
        match self {
            Case::Sum1000 | Case::SumLoop1000 | Case::SumSin1000 | Case::SumSinLoop1000 => "x",
            Case::KronSum => "A, B",
            Case::KronViewSum => "A (whole, zero outside the block), B",
            Case::NaiveMapSinCosExp | Case::MapSinCosExp | Case::BroadcastSinCosExp => "x",
            Case::SimpleMlp => "W2, W1, Y, X",
            Case::GpLml => "x, y, s",
            Case::TuringBroadcast => "θ",
            Case::LargeSingleBlock => "x₀, a",
        }
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}
