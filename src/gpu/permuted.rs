//! Permuted splits and concats on the GPU ([`GpuSplitter::encode_permuted`],
//! [`GpuSplitter::encode_permuted_concat`]): each
//! output's words gathered through its strided view of the input by the
//! permuted-move kernel, a dispatch per group of destinations whose
//! bindings do not alias, its parameters uploaded with the encode.

use std::ops::Range;
use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::cache::lock;
use super::prepared::PreparedSplit;
use super::region::{BufferRegion, plain_regions};
use super::scope::{ErrorScope, scoped};
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::Result;
use crate::kernels::permute::{
    CONCAT_RECORD_WORDS, ConcatUnits, HEADER_WORDS, MODE_ELEMENTS, concat_module, concat_record,
    module, record,
};
use crate::kernels::permute_tile::{self, TileSide, TileWalk};
use crate::kernels::table::WORKGROUP_SIZE;
use crate::plan::binding::regions::PlainRegion;
use crate::plan::{
    CostModel, DeviceClass, LaneOrder, PermutedConcatPlan, PermutedPlan, PlanError, PlanLimits,
    PlanMismatch, Strategy,
};
use crate::semantics::{PermutedConcat, PermutedSplit};

impl GpuSplitter {
    /// Plans `split` (outputs reshaped and permuted) for tensors of
    /// `element_type` on this device.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::PermutedTooLarge`].
    pub fn plan_permuted(
        &self,
        split: &PermutedSplit,
        element_type: ElementType,
    ) -> Result<PermutedPlan> {
        Ok(PermutedPlan::new(split, element_type, self.limits())?.lanes(self.lanes()))
    }

    /// Records `plan` into `encoder`: each output, reshaped and permuted,
    /// into its region of `destinations` (one per output, at least
    /// [`PermutedPlan::output_region_bytes`]; the bytes past the output up
    /// to its last word are written zero, nothing else), read from `input`
    /// in one compute pass of a dispatch per group of destinations (at
    /// most [`PermutedPlan::destinations_per_dispatch`], whose bindings do
    /// not alias). Every buffer needs `STORAGE`; offsets are multiples of 4.
    ///
    /// # Errors
    ///
    /// [`PlanError::Mismatch`] for a plan made for limits this device does
    /// not allow; the [`crate::error::EncodeError`]s of the regions
    /// (count, usage, offset, size, extent, overlaps), before anything is
    /// recorded; [`crate::error::DeviceError`] when wgpu reports one.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{BufferRegion, GpuContext};
    /// use wgpu_split::{ElementType, PermutedSplit};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// // GPT-2's fused QKV into Q, K and V as [B, H, S, D].
    /// let qkv = PermutedSplit::split_heads(&[8, 1024, 2304], &[768; 3], 64)?;
    /// let plan = splitter.plan_permuted(&qkv, ElementType::Float16)?;
    /// # let (input, q, k, v): (wgpu::Buffer, wgpu::Buffer, wgpu::Buffer, wgpu::Buffer) = todo!();
    /// let mut encoder = splitter.device().create_command_encoder(&Default::default());
    /// let outputs = [&q, &k, &v].map(|b| BufferRegion::whole(b));
    /// splitter.encode_permuted(&mut encoder, &plan, BufferRegion::whole(&input), &outputs)?;
    /// splitter.queue().submit([encoder.finish()]);
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    pub fn encode_permuted(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PermutedPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<()> {
        let (dispatches, copies) = self.permuted_dispatches(plan, input, destinations, true)?;
        let scope = ErrorScope::open(self.device());
        for (i, from, bytes) in copies {
            let to = &destinations[i];
            encoder.copy_buffer_to_buffer(input.buffer, from, to.buffer, to.offset, bytes);
        }
        if !dispatches.is_empty() {
            self.record_own_pass(encoder, &self.bind_permuted(dispatches));
        }
        Ok(scope.close("recording the permuted split", ())?)
    }

    /// Prepares `plan` for recording inside the caller's own compute pass
    /// ([`PreparedSplit::record`], between two of its kernels): checked as
    /// [`GpuSplitter::encode_permuted`] checks, its parameters uploaded, its
    /// bind groups made. Bound to these buffers: prepare per step where
    /// buffers recycle.
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::encode_permuted`].
    pub fn prepare_permuted(
        &self,
        plan: &PermutedPlan,
        input: BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        let (dispatches, _) = self.permuted_dispatches(plan, input, destinations, false)?;
        let scope = ErrorScope::open(self.device());
        let prepared = self.bind_permuted(dispatches);
        Ok(scope.close("preparing the permuted split", prepared)?)
    }

    /// The dispatches of `plan` into these regions, checked, and (where
    /// `copies` allows them) the outputs moved by copy commands instead:
    /// (output, input byte offset, bytes).
    #[allow(clippy::type_complexity)]
    fn permuted_dispatches<'a>(
        &self,
        plan: &PermutedPlan,
        input: BufferRegion<'a>,
        destinations: &[BufferRegion<'a>],
        copies: bool,
    ) -> Result<(Vec<Dispatch<'a>>, Vec<(usize, u64, u64)>)> {
        self.check_plan_limits(plan.limits())?;
        let (plain_input, plain) = plain_regions(&input, destinations);
        plan.check_regions(&plain_input, &plain)?;
        // One run of the input into another buffer that takes copies: a
        // copy command (memcpy on a software adapter, the copy path on a
        // GPU) instead of the kernel.
        let copied = |i: usize| {
            let o = &plan.outputs()[i];
            copies
                && o.run.is_some()
                && o.bytes.is_multiple_of(4)
                && plain_input.usages.copy_src
                && plain[i].usages.copy_dst
                && plain[i].buffer != plain_input.buffer
        };
        let copy_list: Vec<(usize, u64, u64)> = (0..plan.outputs().len())
            .filter(|&i| plan.outputs()[i].words > 0 && copied(i))
            .filter_map(|i| {
                let o = &plan.outputs()[i];
                Some((i, plain_input.offset + o.run?, o.bytes))
            })
            .collect();
        let groups: Vec<Vec<usize>> = plan
            .dispatch_groups(&plain_input, &plain)?
            .into_iter()
            .map(|g| g.into_iter().filter(|&i| !copied(i)).collect::<Vec<_>>())
            .filter(|g| !g.is_empty())
            .collect();
        let bits = plan.element_type().bit_width().unwrap_or(32);
        let src = plan.binding(&plain_input, plan.input_bytes().next_multiple_of(4));
        let mut dispatches = Vec::with_capacity(groups.len());
        let tile_bytes = u64::from(bits / 8);
        // A dispatch writing into the input's buffer binds the input
        // writable too.
        let writes_input_buffer =
            |group: &[usize]| group.iter().any(|&i| plain[i].buffer == plain_input.buffer);
        let whole = |region: &PlainRegion, bound: &Range<u64>| {
            (region.offset - bound.start).is_multiple_of(tile_bytes)
        };
        for group in &groups {
            // Outputs moved through tiles: their own dispatches.
            let (tiled, group): (Vec<usize>, Vec<usize>) = group.iter().partition(|&&i| {
                plan.moves_through_tiles(i)
                    && whole(&plain_input, &src)
                    && whole(
                        &plain[i],
                        &plan.binding(&plain[i], plan.output_region_bytes(i)),
                    )
            });
            for chunk in tiled.chunks(plan.tile_destinations_per_dispatch()) {
                let read_shift = ((plain_input.offset - src.start) / tile_bytes) as u32;
                let mut entries = vec![entry(1, input.buffer, src.clone())];
                let mut walks = Vec::with_capacity(chunk.len());
                for (slot, &i) in chunk.iter().enumerate() {
                    let bound = plan.binding(&plain[i], plan.output_region_bytes(i));
                    let write_shift = ((plain[i].offset - bound.start) / tile_bytes) as u32;
                    if let Some(walk) = &plan.outputs()[i].tile {
                        walks.push((walk, read_shift, write_shift));
                    }
                    entries.push(entry(slot as u32 + 2, destinations[i].buffer, bound));
                }
                let writable = u32::from(writes_input_buffer(chunk));
                dispatches.push(self.tile_dispatch(
                    TileSide::Split,
                    bits,
                    writable,
                    &walks,
                    entries,
                )?);
            }
            if group.is_empty() {
                continue;
            }
            let group = &group;
            // Whole vec4s where every output of the dispatch moves them and
            // every binding starts a whole vec4 before its region.
            let vec4 = (plain_input.offset - src.start).is_multiple_of(16)
                && group.iter().all(|&i| {
                    let bound = plan.binding(&plain[i], plan.output_region_bytes(i));
                    plan.outputs()[i].vec4.is_some()
                        && (plain[i].offset - bound.start).is_multiple_of(16)
                });
            let unit_bytes = if vec4 { 16 } else { 4 };
            let pipeline = self.permute_pipeline(
                Kind::Split { vec4 },
                group.len(),
                u32::from(writes_input_buffer(group)),
            )?;
            let per = (plan.words_per_invocation() * 4 / unit_bytes as u32).max(1);
            let mut params = vec![group.len() as u32, per, 0, 0];
            let mut first = 0u32;
            let mut entries = vec![entry(1, input.buffer, src.clone())];
            let src_shift = ((plain_input.offset - src.start) / unit_bytes) as u32;
            for (slot, &i) in group.iter().enumerate() {
                let o = &plan.outputs()[i];
                let bound = plan.binding(&plain[i], plan.output_region_bytes(i));
                let dst_shift = ((plain[i].offset - bound.start) / unit_bytes) as u32;
                let (units, view) = match (&o.vec4, vec4) {
                    (Some(v), true) => (o.words / 4, (&v.0[..], &v.1[..], v.2)),
                    _ => (o.words, (&o.dims[..], &o.strides[..], o.offset)),
                };
                params.extend(record(
                    first, units, o.elements, o.mode, bits, view, src_shift, dst_shift,
                ));
                first += units.div_ceil(per);
                entries.push(entry(slot as u32 + 2, destinations[i].buffer, bound));
            }
            dispatches.push((pipeline, params, entries, first.div_ceil(WORKGROUP_SIZE)));
        }
        Ok((dispatches, copy_list))
    }

    /// A tile dispatch moving `walks` (each with the element shifts of its
    /// read and write bindings) on `side`, binding `entries` (all but the
    /// parameters'), the buffers read bound writable as `writable` says.
    fn tile_dispatch<'a>(
        &self,
        side: TileSide,
        bits: u32,
        writable: u32,
        walks: &[(&TileWalk, u32, u32)],
        entries: Vec<wgpu::BindGroupEntry<'a>>,
    ) -> Result<Dispatch<'a>> {
        let words = bits / 32;
        let pipeline = self.permute_pipeline(Kind::Tile { side, words }, walks.len(), writable)?;
        let mut params = vec![walks.len() as u32, 0, 0, 0];
        let mut first = 0u32;
        for &(walk, read_shift, write_shift) in walks {
            params.extend(permute_tile::record(first, walk, read_shift, write_shift));
            first += walk.workgroups() as u32;
        }
        Ok((pipeline, params, entries, first))
    }

    /// Plans `concat` (inputs permuted and reshaped, then joined) for
    /// tensors of `element_type` on this device.
    ///
    /// # Errors
    ///
    /// [`PlanError::NotOnGpu`] for strings; [`PlanError::PermutedTooLarge`].
    pub fn plan_permuted_concat(
        &self,
        concat: &PermutedConcat,
        element_type: ElementType,
    ) -> Result<PermutedConcatPlan> {
        Ok(PermutedConcatPlan::new(concat, element_type, self.limits())?.lanes(self.lanes()))
    }

    /// Records `plan` into `encoder`: `inputs` (one region per input of
    /// the concat, read only; they may share buffers) permuted, reshaped and
    /// joined into `output` (at least
    /// [`PermutedConcatPlan::output_region_bytes`]; the bytes past the
    /// output up to its last word are written zero, nothing else), in one
    /// compute pass: where inputs of sub-word runs share output words
    /// ([`PermutedConcatPlan::zeroes_output`]) a dispatch zeroes the output
    /// first; then a dispatch per group of at most
    /// [`PermutedConcatPlan::inputs_per_dispatch`] inputs. Every buffer
    /// needs `STORAGE`; offsets are multiples of 4.
    ///
    /// # Errors
    ///
    /// [`PlanError::Mismatch`] for a plan made for limits this device does
    /// not allow; the [`crate::error::EncodeError`]s of the regions (count,
    /// usage, offset, size, extent, an input bound over the output), before
    /// anything is recorded; [`crate::error::DeviceError`] when wgpu
    /// reports one.
    pub fn encode_permuted_concat(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<()> {
        let dispatches = self.permuted_concat_dispatches(plan, inputs, output)?;
        let scope = ErrorScope::open(self.device());
        self.record_own_pass(encoder, &self.bind_permuted(dispatches));
        Ok(scope.close("recording the permuted concat", ())?)
    }

    /// Prepares `plan` for recording inside the caller's own compute pass,
    /// as [`GpuSplitter::prepare_permuted`] does for a split (the zeroing
    /// dispatch, where there is one, comes first).
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::encode_permuted_concat`].
    pub fn prepare_permuted_concat(
        &self,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<PreparedSplit> {
        let dispatches = self.permuted_concat_dispatches(plan, inputs, output)?;
        let scope = ErrorScope::open(self.device());
        let prepared = self.bind_permuted(dispatches);
        Ok(scope.close("preparing the permuted concat", prepared)?)
    }

    /// The dispatches of `plan` from these regions, checked: the zeroing
    /// dispatch where pieces of elements share words, then one per group.
    fn permuted_concat_dispatches<'a>(
        &self,
        plan: &PermutedConcatPlan,
        inputs: &[BufferRegion<'a>],
        output: BufferRegion<'a>,
    ) -> Result<Vec<Dispatch<'a>>> {
        self.check_plan_limits(plan.limits())?;
        let (plain_output, plain) = plain_regions(&output, inputs);
        let groups = plan.check_regions(&plain, &plain_output)?;
        let out = plan.binding(&plain_output, plan.output_region_bytes());
        // Pieces in the output's buffer are bound writable (WebGPU forbids
        // a buffer bound read-only beside a writable binding of it), and
        // writable bindings of one dispatch may not overlap: such pieces
        // are dealt so that none overlaps another of its dispatch.
        let in_output_buffer = |i: usize| plain[i].buffer == plain_output.buffer;
        let bound = |i: usize| plan.binding(&plain[i], plan.pieces()[i].bytes.next_multiple_of(4));
        let groups: Vec<Vec<usize>> = groups
            .iter()
            .flat_map(|group| {
                let mut dealt: Vec<Vec<usize>> = Vec::new();
                for &i in group {
                    let fits = |d: &Vec<usize>| {
                        !in_output_buffer(i)
                            || d.iter()
                                .all(|&j| !in_output_buffer(j) || !overlap(&bound(i), &bound(j)))
                    };
                    match dealt.iter_mut().find(|d| fits(d)) {
                        Some(d) => d.push(i),
                        None => dealt.push(vec![i]),
                    }
                }
                dealt
            })
            .collect();
        let writable = |group: &[usize]| {
            group
                .iter()
                .enumerate()
                .filter(|&(_, &i)| in_output_buffer(i))
                .fold(0u32, |mask, (slot, _)| mask | 1 << slot)
        };
        let out_shift = plain_output.offset - out.start;
        let mut dispatches = Vec::new();
        if plan.zeroes_output() {
            let words = (plan.output_region_bytes() / 4) as u32;
            let pipeline = self.permute_pipeline(Kind::Clear, 1, 0)?;
            // The module's block holds a header and one record.
            let mut params = vec![0, 1, words, (out_shift / 4) as u32];
            params.resize(HEADER_WORDS + CONCAT_RECORD_WORDS, 0);
            dispatches.push((
                pipeline,
                params,
                vec![entry(1, output.buffer, out.clone())],
                words.div_ceil(WORKGROUP_SIZE),
            ));
        }
        let bits = plan.element_type().bit_width().unwrap_or(32);
        let tile_bytes = u64::from(bits / 8);
        for group in &groups {
            // Inputs moved through tiles: their own dispatches.
            let (tiled, group): (Vec<usize>, Vec<usize>) = group.iter().partition(|&&i| {
                let bound = plan.binding(&plain[i], plan.pieces()[i].bytes.next_multiple_of(4));
                plan.moves_through_tiles(i)
                    && out_shift.is_multiple_of(tile_bytes)
                    && (plain[i].offset - bound.start).is_multiple_of(tile_bytes)
            });
            for chunk in tiled.chunks(plan.tile_inputs_per_dispatch()) {
                let write_shift = (out_shift / tile_bytes) as u32;
                let mut entries = vec![entry(1, output.buffer, out.clone())];
                let mut walks = Vec::with_capacity(chunk.len());
                for (slot, &i) in chunk.iter().enumerate() {
                    let piece = &plan.pieces()[i];
                    let bound = plan.binding(&plain[i], piece.bytes.next_multiple_of(4));
                    let read_shift = ((plain[i].offset - bound.start) / tile_bytes) as u32;
                    if let Some(walk) = &piece.tile {
                        walks.push((walk, read_shift, write_shift));
                    }
                    entries.push(entry(slot as u32 + 2, inputs[i].buffer, bound));
                }
                dispatches.push(self.tile_dispatch(
                    TileSide::Concat,
                    bits,
                    writable(chunk),
                    &walks,
                    entries,
                )?);
            }
            if group.is_empty() {
                continue;
            }
            let group = &group;
            let units = concat_units(plan, group, &plain, out_shift);
            let unit_bytes: u64 = if units == ConcatUnits::Vec4 { 16 } else { 4 };
            let pipeline =
                self.permute_pipeline(Kind::Concat(units), group.len(), writable(group))?;
            let per = (plan.words_per_invocation() * 4 / unit_bytes as u32).max(1);
            let mut params = vec![group.len() as u32, per, 0, 0];
            let mut entries = vec![entry(1, output.buffer, out.clone())];
            let mut first = 0u32;
            for (slot, &i) in group.iter().enumerate() {
                let piece = &plan.pieces()[i];
                let bound = plan.binding(&plain[i], piece.bytes.next_multiple_of(4));
                let (count, read, write) = match (&piece.vec4, units) {
                    (Some((r, w)), ConcatUnits::Vec4) => (piece.words / 4, r, w),
                    _ => (piece.words, &piece.read, &piece.write),
                };
                params.extend(concat_record(
                    first,
                    count,
                    piece.elements,
                    piece.mode,
                    plan.element_type().bit_width().unwrap_or(32),
                    (&read.0, &read.1, read.2),
                    (&write.0, &write.1, write.2),
                    ((plain[i].offset - bound.start) / unit_bytes) as u32,
                    (out_shift / unit_bytes) as u32,
                ));
                first += count.div_ceil(per);
                entries.push(entry(slot as u32 + 2, inputs[i].buffer, bound));
            }
            dispatches.push((pipeline, params, entries, first.div_ceil(WORKGROUP_SIZE)));
        }
        Ok(dispatches)
    }

    /// How the splitter's model lays invocations over units: blocked on a
    /// software adapter, striped on GPUs.
    fn lanes(&self) -> LaneOrder {
        match self.strategy() {
            Strategy::Auto(model) => model.lanes,
            _ => CostModel::for_class(DeviceClass::of_adapter(&self.device().adapter_info())).lanes,
        }
    }

    /// A plan made for limits this device does not allow is refused.
    fn check_plan_limits(&self, limits: &PlanLimits) -> Result<()> {
        if limits.fits_within(self.limits()) {
            return Ok(());
        }
        Err(PlanError::Mismatch(PlanMismatch::Limits {
            planned: Box::new(*limits),
            device: Box::new(*self.limits()),
        })
        .into())
    }

    /// Binds `dispatches`: each its parameters uploaded (binding 0), its
    /// bind group made, its workgroups counted. Runs inside the caller's
    /// error scope.
    fn bind_permuted(&self, dispatches: Vec<Dispatch<'_>>) -> PreparedSplit {
        let device = self.device();
        let mut pipelines: Vec<wgpu::ComputePipeline> = Vec::new();
        let mut params_bytes = 0u64;
        let bound = dispatches
            .into_iter()
            .map(|(pipeline, params, mut entries, workgroups)| {
                params_bytes += 4 * params.len() as u64;
                let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-split permuted move parameters"),
                    contents: bytemuck::cast_slice(&params),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                entries.push(wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params.as_entire_binding(),
                });
                let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("wgpu-split permuted move"),
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &entries,
                });
                let index = match pipelines.iter().position(|p| *p == *pipeline) {
                    Some(index) => index,
                    None => {
                        pipelines.push((*pipeline).clone());
                        pipelines.len() - 1
                    }
                };
                let x = workgroups.clamp(1, self.limits().max_compute_workgroups_per_dimension);
                (index, bind_group, [x, workgroups.div_ceil(x)])
            })
            .collect();
        PreparedSplit::new(pipelines, bound, params_bytes)
    }

    /// Records `prepared` in a compute pass of its own.
    fn record_own_pass(&self, encoder: &mut wgpu::CommandEncoder, prepared: &PreparedSplit) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("wgpu-split permuted move"),
            timestamp_writes: None,
        });
        prepared.record(&mut pass);
    }

    /// The permuted-move pipeline of `kind` for dispatches binding `slots`
    /// destinations (pieces, for a concat), the buffers read bound writable
    /// as `writable` says (bit 0: a split's source; bit `k`: a concat's
    /// piece `k`), compiled once per splitter.
    fn permute_pipeline(
        &self,
        kind: Kind,
        slots: usize,
        writable: u32,
    ) -> Result<Arc<wgpu::ComputePipeline>> {
        let resources = self.resources();
        let kind_code: u64 = match kind {
            Kind::Split { vec4 } => u64::from(vec4),
            Kind::Concat(ConcatUnits::Words) => 2,
            Kind::Concat(ConcatUnits::Atomic) => 3,
            Kind::Concat(ConcatUnits::Vec4) => 4,
            Kind::Clear => 5,
            Kind::Tile { side, words } => {
                6 + u64::from(words) + if side == TileSide::Concat { 4 } else { 0 }
            }
        };
        let key = kind_code << 48 | u64::from(writable) << 16 | slots as u64;
        if let Some(p) = lock(&resources.permute).get(&key) {
            return Ok(p.clone());
        }
        let device = self.device();
        let pipeline = scoped(device, "compiling the permuted-move kernel", || {
            let label = format!("wgpu-split permute {kind:?} x{slots}");
            let source = match kind {
                Kind::Split { vec4 } => module(slots, vec4, writable & 1 == 1),
                Kind::Concat(units) => concat_module(slots, units, writable),
                Kind::Clear => concat_module(slots, ConcatUnits::Atomic, 0),
                Kind::Tile { side, words } => permute_tile::module(slots, side, words, writable),
            };
            let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: None,
                module: &shader,
                entry_point: Some(if kind == Kind::Clear { "clear" } else { "main" }),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            })
        })?;
        let pipeline = Arc::new(pipeline);
        lock(&resources.permute).insert(key, pipeline.clone());
        Ok(pipeline)
    }
}

/// One dispatch to record: its pipeline, its parameters, its bindings
/// other than the parameters', and its workgroups.
type Dispatch<'a> = (
    Arc<wgpu::ComputePipeline>,
    Vec<u32>,
    Vec<wgpu::BindGroupEntry<'a>>,
    u32,
);

/// Which entry point of which permuted-move module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A split: outputs gathered from the tensor, in words or vec4s.
    Split {
        /// Units of vec4s.
        vec4: bool,
    },
    /// A concat: pieces written into the tensor in `units` (atomics where
    /// pieces of elements OR into shared words).
    Concat(ConcatUnits),
    /// The concat's tensor zeroed.
    Clear,
    /// Moves through workgroup tiles, on `side`, in elements of `words`
    /// 32-bit words.
    Tile {
        /// Which side binds a buffer per slot.
        side: TileSide,
        /// Words per element: 1, 2 or 4.
        words: u32,
    },
}

/// Binding `binding` of a bind group: `range` of `buffer`.
fn entry(binding: u32, buffer: &wgpu::Buffer, range: Range<u64>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: range.start,
            size: wgpu::BufferSize::new(range.end - range.start),
        }),
    }
}

/// How a concat dispatch of `group` writes the output (whose binding
/// starts `out_shift` bytes before its region): atomics where a piece of
/// elements ORs into words others write; whole vec4s where every piece
/// moves them and every binding starts a whole vec4 before its region;
/// else words.
fn concat_units(
    plan: &PermutedConcatPlan,
    group: &[usize],
    plain: &[PlainRegion],
    out_shift: u64,
) -> ConcatUnits {
    if group
        .iter()
        .any(|&i| plan.pieces()[i].mode == MODE_ELEMENTS)
    {
        return ConcatUnits::Atomic;
    }
    let vec4 = out_shift.is_multiple_of(16)
        && group.iter().all(|&i| {
            let piece = &plan.pieces()[i];
            let bound = plan.binding(&plain[i], piece.bytes.next_multiple_of(4));
            piece.vec4.is_some() && (plain[i].offset - bound.start).is_multiple_of(16)
        });
    if vec4 {
        ConcatUnits::Vec4
    } else {
        ConcatUnits::Words
    }
}

fn overlap(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}
