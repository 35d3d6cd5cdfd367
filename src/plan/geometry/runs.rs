//! The split as contiguous runs, in elements: the host path's whole plan and
//! the starting point of the GPU plan.
//!
//! A split of a row-major tensor along `axis` is a set of contiguous runs:
//! the input is `outer` blocks of `dim * inner` elements, and output `i`
//! takes `lengths[i] * inner` consecutive elements from every block, at the
//! same offset in each (`starts[i] * inner`; runs may overlap or leave gaps).

use crate::semantics::ResolvedSplit;

/// One output's contiguous run inside every outer block, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Run {
    /// Offset of the run from the start of its block, in elements.
    pub offset: usize,
    /// Length of the run, in elements.
    pub len: usize,
}

/// The normalised problem: `outer` blocks of `block` elements, one run per
/// output in each block.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunLayout {
    outer: usize,
    block: usize,
    runs: Vec<Run>,
}

impl RunLayout {
    /// The run layout of a resolved split.
    pub fn new(split: &ResolvedSplit) -> Self {
        let shape = split.input_shape();
        let axis = split.axis();
        // ResolvedSplit guarantees that the product of the non-zero dimensions
        // fits in usize, so none of these products can overflow.
        let outer: usize = shape[..axis].iter().product();
        let inner: usize = shape[axis + 1..].iter().product();
        let block = shape[axis] * inner;
        let runs = split
            .windows()
            .map(|(start, len)| Run {
                offset: start * inner,
                len: len * inner,
            })
            .collect();
        RunLayout { outer, block, runs }
    }

    /// Product of the dimensions before the axis.
    pub fn outer(&self) -> usize {
        self.outer
    }

    /// Elements in one outer block (`dim * inner`).
    pub fn block(&self) -> usize {
        self.block
    }

    /// One run per output.
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }
}

#[cfg(test)]
mod tests {
    use super::RunLayout;
    use crate::{OnnxSplit, ParamTensor};

    #[test]
    fn blocks_and_runs_of_a_middle_axis() {
        // [2, 6, 3] split on axis 1 into [1, 5]: 2 blocks of 18 elements.
        let split = OnnxSplit::new(13, 2)
            .axis(1)
            .split_input(ParamTensor::int64_1d(&[1, 5]))
            .resolve(&[2, 6, 3])
            .unwrap();
        let layout = RunLayout::new(&split);
        assert_eq!((layout.outer(), layout.block()), (2, 18));
        assert_eq!((layout.runs()[1].offset, layout.runs()[1].len), (3, 15));
    }
}
