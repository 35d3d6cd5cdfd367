//! The host concat: parts into one tensor, the runs of the mirror split
//! written backwards.

use super::output_bytes;
use super::runs::{copy_bits, fill_in_parallel, run_ranges, scatter_runs};
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::RunLayout;
use crate::semantics::{ConcatError, ConcatOperator, ResolvedConcat};
use crate::tensor::{HostTensor, TensorError};

impl ConcatOperator {
    /// Resolves the operator against `inputs`' shapes and concatenates them
    /// on the host ([`HostTensor::concat`]).
    ///
    /// # Errors
    ///
    /// The operator's [`ConcatError`]; see [`HostTensor::concat`].
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::{ConcatOperator, HostTensor, OnnxConcat};
    ///
    /// let a = HostTensor::from_slice(&[2, 1], &[1i32, 2]).unwrap();
    /// let b = HostTensor::from_slice(&[2, 2], &[3i32, 4, 5, 6]).unwrap();
    /// let op: ConcatOperator = OnnxConcat::new(13).axis(1).into();
    /// let y = op.concat_on_host(&[&a, &b]).unwrap();
    /// assert_eq!(y.shape(), &[2, 3]);
    /// assert_eq!(y.to_vec::<i32>().unwrap(), vec![1, 3, 4, 2, 5, 6]);
    /// ```
    pub fn concat_on_host(&self, inputs: &[&HostTensor]) -> Result<HostTensor> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|t| t.shape()).collect();
        HostTensor::concat(inputs, &self.resolve(&shapes)?)
    }
}

impl HostTensor {
    /// Concatenates `inputs` as `concat` says: every input that takes part
    /// copied into its window of the output, one contiguous run per outer block
    /// (the runs of [`ResolvedConcat::mirror`]). Sub-byte inputs are read from
    /// their own first element, and the output's last byte's unused high bits
    /// are zero.
    ///
    /// # Errors
    ///
    /// [`ConcatError::InputCountMismatch`] and [`ConcatError::InputShapeMismatch`]
    /// when the tensors are not the ones `concat` was resolved for;
    /// [`ConcatError::ElementTypeMismatch`] when the inputs that take part
    /// differ in element type.
    pub fn concat(inputs: &[&HostTensor], concat: &ResolvedConcat) -> Result<HostTensor> {
        let element_type = check_inputs(inputs, concat)?;
        let shape = concat.output_shape();
        if element_type.bit_width().is_none() {
            return concat_strings(inputs, concat);
        }
        let mut bytes = vec![0u8; output_bytes(element_type, shape)];
        write_output(inputs, concat, element_type, &mut bytes)?;
        Ok(HostTensor::from_raw(element_type, shape, bytes)?)
    }

    /// Concatenates fixed-width `inputs` into a caller-provided buffer of
    /// exactly the output's packed byte length (the host analogue of recording
    /// into a preallocated GPU buffer). Concats of 8 MiB or more whose elements
    /// are whole bytes use every core.
    ///
    /// # Errors
    ///
    /// As [`HostTensor::concat`]; [`TensorError::NoPackedBytes`] for strings;
    /// [`TensorError::DataLength`] when `output` has the wrong length.
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::{HostTensor, ResolvedConcat};
    ///
    /// let a = HostTensor::from_slice(&[1, 2], &[1u16, 2]).unwrap();
    /// let b = HostTensor::from_slice(&[1, 1], &[3u16]).unwrap();
    /// let concat = ResolvedConcat::new(&[a.shape(), b.shape()], 1).unwrap();
    /// let mut y = [0u8; 6];
    /// HostTensor::concat_into(&[&a, &b], &concat, &mut y).unwrap();
    /// assert_eq!(y, [1, 0, 2, 0, 3, 0]);
    /// ```
    pub fn concat_into(
        inputs: &[&HostTensor],
        concat: &ResolvedConcat,
        output: &mut [u8],
    ) -> Result<()> {
        let element_type = check_inputs(inputs, concat)?;
        if element_type.bit_width().is_none() {
            return Err(TensorError::NoPackedBytes { element_type }.into());
        }
        let expected = output_bytes(element_type, concat.output_shape());
        if output.len() != expected {
            return Err(TensorError::DataLength {
                element_type,
                shape: concat.output_shape().iter().map(|&d| d as u64).collect(),
                expected: expected as u128,
                actual: output.len(),
                unit: "bytes",
            }
            .into());
        }
        write_output(inputs, concat, element_type, output)
    }
}

/// The shapes are the resolved ones and the inputs that take part share one
/// element type, which is returned.
fn check_inputs(
    inputs: &[&HostTensor],
    concat: &ResolvedConcat,
) -> Result<ElementType, ConcatError> {
    let shapes: Vec<&[usize]> = inputs.iter().map(|t| t.shape()).collect();
    concat.check_input_shapes(&shapes)?;
    let types: Vec<ElementType> = inputs.iter().map(|t| t.element_type()).collect();
    concat.check_element_types(&types)
}

/// The inputs that take part, in mirror-output order.
fn parts<'t>(inputs: &[&'t HostTensor], concat: &ResolvedConcat) -> Vec<&'t HostTensor> {
    (0..inputs.len())
        .filter(|&i| concat.mirror_output(i).is_some())
        .map(|i| inputs[i])
        .collect()
}

/// Writes the fixed-width output (checked inputs and length).
fn write_output(
    inputs: &[&HostTensor],
    concat: &ResolvedConcat,
    element_type: ElementType,
    output: &mut [u8],
) -> Result<()> {
    let parts = parts(inputs, concat)
        .into_iter()
        .map(HostTensor::as_bytes)
        .collect::<Result<Vec<_>, _>>()?;
    let bits = element_type.bit_width().unwrap_or_default() as usize;
    let layout = RunLayout::new(concat.mirror());
    if bits.is_multiple_of(8) {
        concat_whole_bytes(&layout, &parts, bits / 8, output);
    } else {
        concat_sub_byte(&layout, &parts, bits, output);
    }
    Ok(())
}

/// Whole-byte elements: memcpy of runs, on every core for large outputs.
/// Each thread takes an equal contiguous share of the output, cut at element
/// boundaries: the rest of a row, whole rows (each input scattered into them
/// in one strided walk), the start of a row.
fn concat_whole_bytes(layout: &RunLayout, parts: &[&[u8]], width: usize, output: &mut [u8]) {
    let row_bytes = layout.block() * width;
    let total = output.len();
    fill_in_parallel(&mut [output], width, total, |_, start, piece| {
        let (mut row, column) = (start / row_bytes, start % row_bytes);
        let mut done = 0;
        if column > 0 {
            done = (row_bytes - column).min(piece.len());
            fill_row(layout, parts, width, &mut piece[..done], row, column);
            row += 1;
        }
        let rows = (piece.len() - done) / row_bytes;
        if rows > 0 {
            let whole = &mut piece[done..done + rows * row_bytes];
            for (run, part) in layout.runs().iter().zip(parts) {
                let n = run.len * width;
                if n > 0 {
                    let from = &part[row * n..(row + rows) * n];
                    scatter_runs(&mut whole[run.offset * width..], from, row_bytes, n);
                }
            }
            (done, row) = (done + rows * row_bytes, row + rows);
        }
        if done < piece.len() {
            fill_row(layout, parts, width, &mut piece[done..], row, 0);
        }
    });
}

/// Fills `piece` with bytes `column..` of output row `row`: from the runs
/// that cover them (the runs tile the row in order; empty runs end where
/// they start).
fn fill_row(
    layout: &RunLayout,
    parts: &[&[u8]],
    width: usize,
    piece: &mut [u8],
    row: usize,
    mut column: usize,
) {
    let mut done = 0;
    for (run, part) in layout.runs().iter().zip(parts) {
        let (run_start, n) = (run.offset * width, run.len * width);
        if run_start + n <= column {
            continue;
        }
        if done == piece.len() {
            break;
        }
        let k = (run_start + n - column).min(piece.len() - done);
        let from = row * n + column - run_start;
        piece[done..done + k].copy_from_slice(&part[from..from + k]);
        (done, column) = (done + k, column + k);
    }
}

/// 2- and 4-bit elements: bit copies from each part's own first element
/// into the zeroed output, so its padding bits stay zero.
fn concat_sub_byte(layout: &RunLayout, parts: &[&[u8]], bits: usize, output: &mut [u8]) {
    output.fill(0);
    for (run, part) in layout.runs().iter().zip(parts) {
        for (o, target) in run_ranges(layout, run).enumerate() {
            copy_bits(
                part,
                o * run.len * bits,
                output,
                target.start * bits,
                run.len * bits,
                bits,
            );
        }
    }
}

/// The string case of [`HostTensor::concat`]: the same runs over byte strings, row by
/// row and window by window, which is the output's order.
fn concat_strings(inputs: &[&HostTensor], concat: &ResolvedConcat) -> Result<HostTensor> {
    let layout = RunLayout::new(concat.mirror());
    let parts = parts(inputs, concat)
        .into_iter()
        .map(HostTensor::byte_strings)
        .collect::<Result<Vec<_>, _>>()?;
    // A row of no elements holds nothing: skip rows then (an output such as
    // [2^33, 0] would otherwise loop billions of times).
    let rows = if layout.block() == 0 {
        0
    } else {
        layout.outer()
    };
    let mut out = Vec::with_capacity(rows * layout.block());
    for row in 0..rows {
        for (run, part) in layout.runs().iter().zip(&parts) {
            out.extend_from_slice(&part[row * run.len..(row + 1) * run.len]);
        }
    }
    Ok(HostTensor::from_byte_strings(concat.output_shape(), out)?)
}
