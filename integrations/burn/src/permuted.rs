//! Attention heads in one pass on burn tensors: a split whose outputs are
//! each reshaped and permuted ([`BurnSplitter::split_heads`],
//! [`BurnSplitter::split_as`]) and the concat whose inputs are each
//! permuted and reshaped first ([`BurnSplitter::merge_heads`],
//! [`BurnSplitter::concat_as`]): one recorded move on burn's queue
//! where burn runs `split`, then `reshape` and `swap_dims` (a view), then
//! `into_contiguous` (a second pass) on each piece. The outputs are
//! contiguous tensors, allocated by burn's allocator.

use burn::tensor::{DType, Shape, Tensor};
use burn_cubecl::tensor::CubeTensor;
use wgpu_split::gpu::BufferRegion;
use wgpu_split::{PermutedConcat, PermutedSplit};

use crate::allocation::{Guard, resource, runtime};
use crate::error::Result;
use crate::primitive::SplitKind;
use crate::splitter::BurnSplitter;

impl BurnSplitter {
    /// Splits a fused projection `[B, S, W]` into attention heads: one
    /// output `[B, W_i / head_dim, S, head_dim]` per width `W_i` of
    /// `widths` (Q, K and V; grouped-query widths differ), in one pass.
    ///
    /// ```no_run
    /// # fn heads(s: &wgpu_split_burn::BurnSplitter, qkv: burn::tensor::Tensor<3>) -> wgpu_split_burn::Result<()> {
    /// // GPT-2: [B, S, 3 * 768] into Q, K, V as [B, 12, S, 64].
    /// let heads = s.split_heads(qkv, &[768; 3], 64)?;
    /// let merged = s.merge_heads(heads)?; // back to [B, S, 2304]
    /// # Ok(()) }
    /// ```
    /// burn's equivalent, per piece: `split_with_sizes(widths, 2)`, then
    /// `reshape([B, S, H_i, head_dim])`, `swap_dims(1, 2)` and a
    /// contiguous copy.
    ///
    /// # Errors
    ///
    /// [`wgpu_split::PermuteError`]s for widths past `W` (widths short of
    /// it leave the tail out, as a split does) or not whole heads, and the
    /// errors of
    /// [`BurnSplitter::split_as`].
    pub fn split_heads<K: SplitKind>(
        &self,
        tensor: Tensor<3, K>,
        widths: &[usize],
        head_dim: usize,
    ) -> Result<Vec<Tensor<4, K>>> {
        let split = PermutedSplit::split_heads(&tensor.shape(), widths, head_dim)
            .map_err(wgpu_split::Error::from)?;
        self.split_as(tensor, &split)
    }

    /// Joins attention heads `[B, H_i, S, D]` back into `[B, S, ΣH_i·D]`
    /// in one pass. burn's equivalent: each head `swap_dims(1, 2)` and
    /// `reshape([B, S, H_i·D])`, then `cat` on dimension 2.
    ///
    /// # Errors
    ///
    /// [`wgpu_split::PermuteError`]s for heads that do not agree on `B`,
    /// `S` and `D`, and the errors of [`BurnSplitter::concat_as`].
    pub fn merge_heads<K: SplitKind>(&self, heads: Vec<Tensor<4, K>>) -> Result<Tensor<3, K>> {
        let shapes: Vec<Vec<usize>> = heads.iter().map(|t| t.shape().to_vec()).collect();
        let merge = PermutedConcat::merge_heads(&shapes).map_err(wgpu_split::Error::from)?;
        self.concat_as(heads, &merge)
    }

    /// Plans the split, allocates each output with burn's allocator,
    /// flushes burn's work, records and submits the move, and keeps burn's
    /// resources alive until the device has finished it.
    pub(crate) fn run_permuted(
        &self,
        input: CubeTensor,
        split: &PermutedSplit,
        element: wgpu_split::ElementType,
        dtype: DType,
    ) -> Result<Vec<CubeTensor>> {
        let client = input.client.clone();
        let plan = self.splitter().plan(split, element)?;
        let input_guard = resource(&client, &input.handle)?;
        let handles: Vec<_> = (0..split.output_count())
            .map(|i| client.empty(plan.output_region_bytes(i).max(4) as usize))
            .collect();
        let guards = handles
            .iter()
            .map(|h| resource(&client, h))
            .collect::<Result<Vec<Guard>>>()?;
        client.flush().map_err(runtime)?;
        let input_region =
            BufferRegion::new(&input_guard.buffer, input_guard.offset, plan.input_bytes());
        let regions: Vec<BufferRegion<'_>> = guards
            .iter()
            .enumerate()
            .map(|(i, g)| BufferRegion::new(&g.buffer, g.offset, plan.output_region_bytes(i)))
            .collect();
        let mut encoder = self
            .splitter()
            .device()
            .create_command_encoder(&Default::default());
        self.splitter()
            .encode(&mut encoder, &plan, input_region, &regions)?;
        let queue = self.splitter().queue();
        queue.submit([encoder.finish()]);
        let held = (input_guard, guards);
        queue.on_submitted_work_done(move || drop(held));
        let device = input.device.clone();
        Ok(handles
            .into_iter()
            .zip(split.output_shapes())
            .map(|(handle, shape)| {
                CubeTensor::new_contiguous(
                    client.clone(),
                    device.clone(),
                    Shape::from(shape),
                    handle,
                    dtype,
                )
            })
            .collect())
    }

    /// Plans the concat, allocates the output with burn's allocator,
    /// flushes burn's work, records and submits the move, and keeps burn's
    /// resources alive until the device has finished it.
    pub(crate) fn run_permuted_concat(
        &self,
        inputs: Vec<CubeTensor>,
        concat: &PermutedConcat,
        element: wgpu_split::ElementType,
        dtype: DType,
    ) -> Result<CubeTensor> {
        let Some(first) = inputs.first() else {
            return Err(wgpu_split::ConcatError::NoInputs {
                op: concat.concat().op(),
            }
            .into());
        };
        let (client, device) = (first.client.clone(), first.device.clone());
        let plan = self.splitter().plan(concat, element)?;
        let guards = inputs
            .iter()
            .map(|t| resource(&client, &t.handle))
            .collect::<Result<Vec<Guard>>>()?;
        let handle = client.empty(plan.output_region_bytes().max(4) as usize);
        let output = resource(&client, &handle)?;
        client.flush().map_err(runtime)?;
        let regions: Vec<BufferRegion<'_>> = guards
            .iter()
            .enumerate()
            .map(|(i, g)| BufferRegion::new(&g.buffer, g.offset, plan.input_bytes(i)))
            .collect();
        let out = BufferRegion::new(&output.buffer, output.offset, plan.output_region_bytes());
        let mut encoder = self
            .splitter()
            .device()
            .create_command_encoder(&Default::default());
        self.splitter().encode(&mut encoder, &plan, &regions, out)?;
        let queue = self.splitter().queue();
        queue.submit([encoder.finish()]);
        let held = (guards, output);
        queue.on_submitted_work_done(move || drop(held));
        Ok(CubeTensor::new_contiguous(
            client,
            device,
            Shape::from(concat.output_shape().to_vec()),
            handle,
            dtype,
        ))
    }
}
