//! The host split: one tensor into parts, run by run.

use super::output_bytes;
use super::runs::{copy_bits, fill_in_parallel, gather_runs, run_ranges};
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::RunLayout;
use crate::semantics::{Operator, ResolvedSplit};
use crate::tensor::{HostTensor, TensorError};

impl Operator {
    /// Resolves the operator against `input`'s shape and splits `input` on
    /// the host ([`HostTensor::split`]).
    ///
    /// # Errors
    ///
    /// The operator's resolution errors; see [`HostTensor::split`].
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::{HostTensor, OnnxSplit, Operator};
    ///
    /// let input = HostTensor::from_slice(&[5], &[1i32, 2, 3, 4, 5]).unwrap();
    /// let op: Operator = OnnxSplit::new(18, 2).num_outputs(2).into();
    /// let outputs = op.split_on_host(&input).unwrap();
    /// assert_eq!(outputs[0].to_vec::<i32>().unwrap(), vec![1, 2, 3]);
    /// assert_eq!(outputs[1].to_vec::<i32>().unwrap(), vec![4, 5]);
    /// ```
    pub fn split_on_host(&self, input: &HostTensor) -> Result<Vec<HostTensor>> {
        input.split(&self.resolve(input.shape())?)
    }
}

impl HostTensor {
    /// Splits the tensor as `split` says, copying one contiguous run per output per
    /// outer block. Sub-byte outputs are re-packed from their own first element,
    /// and their last byte's unused high bits are zero.
    ///
    /// # Errors
    ///
    /// [`crate::ResolveError::ShapeMismatch`] when the tensor's shape is not the one `split` was
    /// resolved for.
    pub fn split(&self, split: &ResolvedSplit) -> Result<Vec<HostTensor>> {
        let input = self;
        let element_type = input.element_type();
        let shapes = split.output_shapes();
        if element_type.bit_width().is_none() {
            return split_strings(input, split);
        }
        let mut buffers: Vec<Vec<u8>> = shapes
            .iter()
            .map(|shape| vec![0u8; output_bytes(element_type, shape)])
            .collect();
        let mut slices: Vec<&mut [u8]> = buffers.iter_mut().map(Vec::as_mut_slice).collect();
        input.split_into(split, &mut slices)?;
        buffers
            .into_iter()
            .zip(&shapes)
            .map(|(bytes, shape)| Ok(HostTensor::from_raw(element_type, shape, bytes)?))
            .collect()
    }

    /// Splits a fixed-width tensor into caller-provided buffers, one per output,
    /// each exactly the output's packed byte length (the host analogue of
    /// recording into preallocated GPU buffers). Splits of 8 MiB or more whose
    /// elements are whole bytes use every core.
    ///
    /// # Errors
    ///
    /// [`crate::ResolveError::ShapeMismatch`]; [`TensorError::NoPackedBytes`] for strings;
    /// [`TensorError::DataLength`] when the buffer count or a buffer's length is wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::{HostTensor, ResolvedSplit};
    ///
    /// let input = HostTensor::from_slice(&[2, 3], &[1u16, 2, 3, 4, 5, 6]).unwrap();
    /// let split = ResolvedSplit::new(&[2, 3], 1, vec![1, 2], true).unwrap();
    /// let (mut a, mut b) = ([0u8; 4], [0u8; 8]);
    /// input.split_into(&split, &mut [&mut a[..], &mut b[..]]).unwrap();
    /// assert_eq!(a, [1, 0, 4, 0]);
    /// ```
    pub fn split_into(&self, split: &ResolvedSplit, outputs: &mut [&mut [u8]]) -> Result<()> {
        let input = self;
        split.check_input_shape(input.shape())?;
        let element_type = input.element_type();
        let bytes = input.as_bytes()?;
        check_output_buffers(element_type, split, outputs)?;
        let bits = element_type.bit_width().unwrap_or_default() as usize;
        let layout = RunLayout::new(split);
        if bits.is_multiple_of(8) {
            split_whole_bytes(&layout, bytes, bits / 8, outputs);
        } else {
            split_sub_byte(&layout, bytes, bits, outputs);
        }
        Ok(())
    }
}

/// The string case of [`HostTensor::split`]: the same runs over byte strings.
fn split_strings(input: &HostTensor, split: &ResolvedSplit) -> Result<Vec<HostTensor>> {
    split.check_input_shape(input.shape())?;
    let layout = RunLayout::new(split);
    let strings = input.byte_strings()?;
    layout
        .runs()
        .iter()
        .zip(split.output_shapes())
        .map(|(run, shape)| {
            let mut out = Vec::with_capacity(run.len * layout.outer());
            for source in run_ranges(&layout, run) {
                out.extend_from_slice(&strings[source]);
            }
            Ok(HostTensor::from_byte_strings(&shape, out)?)
        })
        .collect()
}

/// One buffer per output, each exactly the output's packed length.
fn check_output_buffers(
    element_type: ElementType,
    split: &ResolvedSplit,
    outputs: &[&mut [u8]],
) -> Result<(), TensorError> {
    let shapes = split.output_shapes();
    if outputs.len() != shapes.len() {
        return Err(TensorError::DataLength {
            element_type,
            shape: split.input_shape().iter().map(|&d| d as u64).collect(),
            expected: shapes.len() as u128,
            actual: outputs.len(),
            unit: "output buffers",
        });
    }
    for (out, shape) in outputs.iter().zip(&shapes) {
        let expected = output_bytes(element_type, shape);
        if out.len() != expected {
            return Err(TensorError::DataLength {
                element_type,
                shape: shape.iter().map(|&d| d as u64).collect(),
                expected: expected as u128,
                actual: out.len(),
                unit: "bytes",
            });
        }
    }
    Ok(())
}

/// 2- and 4-bit elements: bit copies, each output re-packed from its own
/// first element with zero padding bits.
fn split_sub_byte(layout: &RunLayout, bytes: &[u8], bits: usize, outputs: &mut [&mut [u8]]) {
    for (run, out) in layout.runs().iter().zip(outputs.iter_mut()) {
        out.fill(0);
        for (o, source) in run_ranges(layout, run).enumerate() {
            copy_bits(
                bytes,
                source.start * bits,
                out,
                o * run.len * bits,
                run.len * bits,
                bits,
            );
        }
    }
}

/// Whole-byte elements: memcpy of runs, on every core for large inputs.
/// Each thread takes an equal contiguous share of every output's bytes, cut
/// at element boundaries, whatever the rows look like (an axis-0 split is
/// one long row per output).
fn split_whole_bytes(layout: &RunLayout, bytes: &[u8], width: usize, outputs: &mut [&mut [u8]]) {
    let block = layout.block() * width;
    fill_in_parallel(outputs, width, bytes.len(), |index, start, piece| {
        let run = layout.runs()[index];
        let n = run.len * width;
        if n == 0 {
            return;
        }
        // Row r of this part is source[r * block..][..n]. The piece holds
        // the part's bytes from `start` on: the rest of a row, whole rows
        // (one strided walk), the start of a row.
        let source = &bytes[run.offset * width..];
        let (mut row, column) = (start / n, start % n);
        let mut done = 0;
        if column > 0 {
            done = (n - column).min(piece.len());
            piece[..done].copy_from_slice(&source[row * block + column..][..done]);
            row += 1;
        }
        let rows = (piece.len() - done) / n;
        if rows > 0 {
            gather_runs(
                &mut piece[done..done + rows * n],
                &source[row * block..],
                block,
                n,
            );
            (done, row) = (done + rows * n, row + rows);
        }
        if done < piece.len() {
            let rest = piece.len() - done;
            piece[done..].copy_from_slice(&source[row * block..][..rest]);
        }
    });
}
