//! The host path of permuted splits and concats: each output (concat: each
//! input) walks its [`StridedView`] of the tensor run by run, in order,
//! copying the runs' bits (bytes where the elements are whole bytes,
//! strings for strings). The oracle of the GPU's permuted moves.

use super::output_bytes;
use super::runs::copy_bits;
use crate::element::ElementType;
use crate::error::Result;
use crate::semantics::concat::ConcatError;
use crate::semantics::{PermutedConcat, PermutedSplit, StridedView};
use crate::tensor::HostTensor;

impl HostTensor {
    /// Splits the tensor as `split` says, each output reshaped and
    /// permuted (`[p.reshape(s).permute(perm).contiguous() for p in
    /// x.split(..)]`). Sub-byte outputs are packed from their own first
    /// element, their last byte's unused high bits zero. Any element type.
    ///
    /// # Errors
    ///
    /// [`crate::ResolveError::ShapeMismatch`] when the tensor's shape is not
    /// the one `split` was resolved for.
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::{HostTensor, PermutedSplit};
    ///
    /// // [S = 2, E = 6] into Q, two heads of 2 ([S, 2 * 2] -> [2, S, 2]),
    /// // and K, one head.
    /// let x = HostTensor::from_slice(&[2, 6], &[0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]).unwrap();
    /// let qk = PermutedSplit::split_heads(&[2, 6], &[4, 2], 2).unwrap();
    /// let out = x.split_permuted(&qk).unwrap();
    /// assert_eq!(out[0].shape(), &[2, 2, 2]);
    /// assert_eq!(out[0].to_vec::<u8>().unwrap(), vec![0, 1, 6, 7, 2, 3, 8, 9]);
    /// assert_eq!(out[1].to_vec::<u8>().unwrap(), vec![4, 5, 10, 11]);
    /// ```
    pub fn split_permuted(&self, split: &PermutedSplit) -> Result<Vec<HostTensor>> {
        split.split().check_input_shape(self.shape())?;
        let t = self.element_type();
        (0..split.output_count())
            .map(|i| {
                let shape = split.output_shape(i);
                let view = split.view(i);
                if t.bit_width().is_none() {
                    let strings = self.byte_strings()?;
                    let mut out = Vec::with_capacity(view.len());
                    view.for_each_run(|at, n| out.extend_from_slice(&strings[at..at + n]));
                    return Ok(HostTensor::from_byte_strings(&shape, out)?);
                }
                let mut bytes = vec![0u8; output_bytes(t, &shape)];
                let src = self.as_bytes()?;
                walk(t, view, |tensor_bit, piece_bit, bits| {
                    copy(src, tensor_bit, &mut bytes, piece_bit, bits, t)
                });
                Ok(HostTensor::from_raw(t, &shape, bytes)?)
            })
            .collect()
    }

    /// Concatenates `inputs` as `concat` says, each permuted and reshaped
    /// first (`torch.cat([x.permute(perm).reshape(s) for x in xs], dim)`).
    /// Any element type; the output's last byte's unused high bits are
    /// zero.
    ///
    /// # Errors
    ///
    /// [`ConcatError::InputCountMismatch`] and
    /// [`ConcatError::InputShapeMismatch`] when the tensors are not the ones
    /// `concat` was resolved for; [`ConcatError::ElementTypeMismatch`].
    ///
    /// # Examples
    ///
    /// ```
    /// use wgpu_split::{HostTensor, PermutedConcat};
    ///
    /// // Two heads [2, S = 2, 2] and one [1, 2, 2] back into [S, 6].
    /// let q = HostTensor::from_slice(&[2, 2, 2], &[0u8, 1, 6, 7, 2, 3, 8, 9]).unwrap();
    /// let k = HostTensor::from_slice(&[1, 2, 2], &[4u8, 5, 10, 11]).unwrap();
    /// let merge = PermutedConcat::merge_heads(&[q.shape(), k.shape()]).unwrap();
    /// let x = HostTensor::concat_permuted(&[&q, &k], &merge).unwrap();
    /// assert_eq!(x.to_vec::<u8>().unwrap(), (0..12).collect::<Vec<u8>>());
    /// ```
    pub fn concat_permuted(inputs: &[&HostTensor], concat: &PermutedConcat) -> Result<HostTensor> {
        let t = check_inputs(inputs, concat)?;
        let shape = concat.output_shape();
        let mirror = concat.mirror();
        if t.bit_width().is_none() {
            let total: usize = shape.iter().product();
            let mut out = vec![Vec::new(); total];
            for (i, input) in inputs.iter().enumerate() {
                let strings = input.byte_strings()?;
                let mut piece = 0;
                mirror.view(i).for_each_run(|at, n| {
                    out[at..at + n].clone_from_slice(&strings[piece..piece + n]);
                    piece += n;
                });
            }
            return Ok(HostTensor::from_byte_strings(shape, out)?);
        }
        let mut bytes = vec![0u8; output_bytes(t, shape)];
        for (i, input) in inputs.iter().enumerate() {
            let src = input.as_bytes()?;
            walk(t, mirror.view(i), |tensor_bit, piece_bit, bits| {
                copy(src, piece_bit, &mut bytes, tensor_bit, bits, t)
            });
        }
        Ok(HostTensor::from_raw(t, shape, bytes)?)
    }
}

/// Calls `f(tensor bit, piece bit, bits)` for every run of `view`, the
/// piece's bits counted from its first element, in order.
fn walk(t: ElementType, view: &StridedView, mut f: impl FnMut(usize, usize, usize)) {
    let width = t.bit_width().unwrap_or_default() as usize;
    let mut piece = 0;
    view.for_each_run(|at, n| {
        f(at * width, piece, n * width);
        piece += n * width;
    });
}

/// Copies `bits` bits of `src` from bit `from` into zeroed `dst` at bit
/// `to`: bytes for whole-byte elements, else element by element.
fn copy(src: &[u8], from: usize, dst: &mut [u8], to: usize, bits: usize, t: ElementType) {
    let width = t.bit_width().unwrap_or_default() as usize;
    if width.is_multiple_of(8) {
        dst[to / 8..(to + bits) / 8].copy_from_slice(&src[from / 8..(from + bits) / 8]);
    } else {
        copy_bits(src, from, dst, to, bits, width);
    }
}

/// The inputs are the ones `concat` was resolved for, of one element type
/// (returned).
fn check_inputs(inputs: &[&HostTensor], concat: &PermutedConcat) -> Result<ElementType> {
    let expected = concat.input_shapes();
    if inputs.len() != expected.len() || inputs.is_empty() {
        return Err(ConcatError::InputCountMismatch {
            expected: expected.len(),
            actual: inputs.len(),
        }
        .into());
    }
    if let Some(index) = (0..inputs.len()).find(|&i| inputs[i].shape() != expected[i]) {
        return Err(ConcatError::InputShapeMismatch {
            index,
            expected: expected[index].clone(),
            actual: inputs[index].shape().to_vec(),
        }
        .into());
    }
    let t = inputs[0].element_type();
    if let Some(index) = (1..inputs.len()).find(|&i| inputs[i].element_type() != t) {
        return Err(ConcatError::ElementTypeMismatch {
            index,
            element_type: inputs[index].element_type(),
            reference: 0,
            expected: t,
        }
        .into());
    }
    Ok(t)
}
