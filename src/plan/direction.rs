//! Which way a plan moves bits: a split reads one tensor and writes its
//! pieces, a concat (the split run backwards) reads the pieces and writes
//! the tensor. The same runs, windows and tables serve both.

/// Which way a plan moves bits between the tensor and its pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub(crate) enum Direction {
    /// The tensor is read and its pieces written (a split).
    #[default]
    Split,
    /// The pieces are read and the tensor written (a concat).
    Concat,
}

impl Direction {
    /// A short name, for labels and generated code.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Split => "split",
            Direction::Concat => "concat",
        }
    }

    /// What the operator calls the tensor: a split's input, a concat's
    /// output.
    pub fn tensor(self) -> &'static str {
        match self {
            Direction::Split => "input",
            Direction::Concat => "output",
        }
    }
}
