//! The host path: executes a resolved split on a [`HostTensor`] on the CPU.
//! It is the test oracle for the GPU path and its fallback (strings).

use crate::element::ElementType;
use crate::error::Result;
use crate::plan::{Run, RunLayout};
use crate::semantics::{Operator, ResolvedSplit};
use crate::tensor::{HostTensor, TensorError};

/// Resolves `op` against `input`'s shape and splits it on the host.
///
/// # Errors
///
/// The operator's resolution errors; see [`split`].
///
/// # Examples
///
/// ```
/// use wgpu_split::{host, HostTensor, OnnxSplit};
///
/// let input = HostTensor::from_slice(&[5], &[1i32, 2, 3, 4, 5]).unwrap();
/// let outputs = host::split_op(&OnnxSplit::new(18, 2).num_outputs(2).into(), &input).unwrap();
/// assert_eq!(outputs[0].to_vec::<i32>().unwrap(), vec![1, 2, 3]);
/// assert_eq!(outputs[1].to_vec::<i32>().unwrap(), vec![4, 5]);
/// ```
pub fn split_op(op: &Operator, input: &HostTensor) -> Result<Vec<HostTensor>> {
    split(input, &op.resolve(input.shape())?)
}

/// Splits `input` as `split` says, copying one contiguous run per output per
/// outer block. Sub-byte outputs are re-packed from their own first element,
/// and their last byte's unused high bits are zero.
///
/// # Errors
///
/// [`crate::ResolveError::ShapeMismatch`] when `input`'s shape is not the one `split` was
/// resolved for.
pub fn split(input: &HostTensor, split: &ResolvedSplit) -> Result<Vec<HostTensor>> {
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
    split_into(input, split, &mut slices)?;
    buffers
        .into_iter()
        .zip(&shapes)
        .map(|(bytes, shape)| Ok(HostTensor::from_raw(element_type, shape, bytes)?))
        .collect()
}

/// The string case of [`split`]: the same runs over byte strings.
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

/// Below this many bytes a split runs on the calling thread only.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

fn output_bytes(element_type: ElementType, shape: &[usize]) -> usize {
    // Output shapes come from a checked input shape, so this cannot overflow.
    element_type
        .byte_len(shape.iter().product())
        .unwrap_or_default()
}

/// Splits a fixed-width `input` into caller-provided buffers, one per output,
/// each exactly the output's packed byte length (the host analogue of
/// recording into preallocated GPU buffers). Splits of 1 MiB or more whose
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
/// use wgpu_split::{host, HostTensor, ResolvedSplit};
///
/// let input = HostTensor::from_slice(&[2, 3], &[1u16, 2, 3, 4, 5, 6]).unwrap();
/// let split = ResolvedSplit::new(&[2, 3], 1, vec![1, 2], true).unwrap();
/// let (mut a, mut b) = ([0u8; 4], [0u8; 8]);
/// host::split_into(&input, &split, &mut [&mut a[..], &mut b[..]]).unwrap();
/// assert_eq!(a, [1, 0, 4, 0]);
/// ```
pub fn split_into(
    input: &HostTensor,
    split: &ResolvedSplit,
    outputs: &mut [&mut [u8]],
) -> Result<()> {
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
    let threads = if bytes.len() >= PARALLEL_MIN_BYTES {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    } else {
        1
    };
    let mut tasks: Vec<Vec<(Run, usize, &mut [u8])>> = (0..threads).map(|_| Vec::new()).collect();
    for (run, out) in layout.runs().iter().zip(outputs.iter_mut()) {
        let share = out.len().div_ceil(threads).div_ceil(width).max(1) * width;
        for (t, piece) in out.chunks_mut(share).enumerate() {
            tasks[t].push((*run, t * share, piece));
        }
    }
    let block = layout.block() * width;
    let copy_pieces = |task: Vec<(Run, usize, &mut [u8])>| {
        for (run, start, piece) in task {
            let (row_bytes, offset) = (run.len * width, run.offset * width);
            let mut done = 0;
            while done < piece.len() {
                let position = start + done;
                let (row, column) = (position / row_bytes, position % row_bytes);
                let n = (row_bytes - column).min(piece.len() - done);
                let from = row * block + offset + column;
                piece[done..done + n].copy_from_slice(&bytes[from..from + n]);
                done += n;
            }
        }
    };
    if threads == 1 {
        tasks.into_iter().for_each(copy_pieces);
    } else {
        std::thread::scope(|scope| {
            for task in tasks {
                scope.spawn(move || copy_pieces(task));
            }
        });
    }
}

/// The element range of `run` in every outer block, in order.
fn run_ranges(
    layout: &RunLayout,
    run: &Run,
) -> impl Iterator<Item = std::ops::Range<usize>> + use<> {
    let (block, run) = (layout.block(), *run);
    // An empty run has nothing in any block: yield nothing rather than
    // `outer` empty ranges (a zero-size tensor such as [2^33, 0] would
    // otherwise loop billions of times).
    let rows = if run.len == 0 { 0 } else { layout.outer() };
    (0..rows).map(move |o| {
        let start = o * block + run.offset;
        start..start + run.len
    })
}

/// ORs `len` bits of `src` starting at bit `from` into zeroed `dst` at bit `to`.
/// `unit` is the element width (2 or 4), which divides 8, so no element
/// straddles a byte.
fn copy_bits(src: &[u8], from: usize, dst: &mut [u8], to: usize, len: usize, unit: usize) {
    let (mut from, mut to, mut len) = (from, to, len);
    if from % 8 == to % 8 {
        // Same phase: elements up to the next byte boundary, then whole bytes.
        while len > 0 && from % 8 != 0 {
            copy_unit(src, from, dst, to, unit);
            (from, to, len) = (from + unit, to + unit, len - unit);
        }
        let whole = len / 8;
        dst[to / 8..to / 8 + whole].copy_from_slice(&src[from / 8..from / 8 + whole]);
        (from, to, len) = (from + whole * 8, to + whole * 8, len - whole * 8);
    }
    while len > 0 {
        copy_unit(src, from, dst, to, unit);
        (from, to, len) = (from + unit, to + unit, len - unit);
    }
}

fn copy_unit(src: &[u8], from: usize, dst: &mut [u8], to: usize, unit: usize) {
    let mask = (1u8 << unit) - 1;
    let value = (src[from / 8] >> (from % 8)) & mask;
    dst[to / 8] |= value << (to % 8);
}
