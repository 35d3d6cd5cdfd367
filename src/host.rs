//! The host path: executes a resolved split on a [`HostTensor`] on the CPU.
//! It is the test oracle for the GPU path and its fallback (strings).

use crate::error::{Error, Result};
use crate::plan::{Run, RunLayout};
use crate::semantics::{Operator, ResolvedSplit};
use crate::tensor::HostTensor;

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
/// [`Error::ShapeMismatch`] when `input`'s shape is not the one `split` was
/// resolved for.
pub fn split(input: &HostTensor, split: &ResolvedSplit) -> Result<Vec<HostTensor>> {
    if input.shape() != split.input_shape() {
        return Err(Error::ShapeMismatch {
            expected: split.input_shape().to_vec(),
            actual: input.shape().to_vec(),
        });
    }
    let layout = RunLayout::new(split);
    let element_type = input.element_type();
    let shapes = split.output_shapes();
    let Some(bits) = element_type.bit_width() else {
        let strings = input.byte_strings()?;
        return layout
            .runs()
            .iter()
            .zip(&shapes)
            .map(|(run, shape)| {
                let mut out = Vec::with_capacity(run.len * layout.outer());
                for source in run_ranges(&layout, run) {
                    out.extend_from_slice(&strings[source]);
                }
                HostTensor::from_byte_strings(shape, out)
            })
            .collect();
    };
    let bytes = input.as_bytes()?;
    let bits = bits as usize;
    layout
        .runs()
        .iter()
        .zip(&shapes)
        .map(|(run, shape)| {
            let out = if bits.is_multiple_of(8) {
                let width = bits / 8;
                let mut out = Vec::with_capacity(run.len * layout.outer() * width);
                for source in run_ranges(&layout, run) {
                    out.extend_from_slice(&bytes[source.start * width..source.end * width]);
                }
                out
            } else {
                let mut out = vec![0u8; (run.len * layout.outer() * bits).div_ceil(8)];
                for (o, source) in run_ranges(&layout, run).enumerate() {
                    copy_bits(
                        bytes,
                        source.start * bits,
                        &mut out,
                        o * run.len * bits,
                        run.len * bits,
                        bits,
                    );
                }
                out
            };
            HostTensor::from_raw(element_type, shape, out)
        })
        .collect()
}

/// The element range of `run` in every outer block, in order.
fn run_ranges(
    layout: &RunLayout,
    run: &Run,
) -> impl Iterator<Item = std::ops::Range<usize>> + use<> {
    let (block, run) = (layout.block(), *run);
    (0..layout.outer()).map(move |o| {
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
