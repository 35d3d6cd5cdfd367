//! The access trace: a plan's dispatches run in their modules' trace
//! variant, so that every load and store of every traced invocation is
//! recorded ([`crate::plan::coalescing`] counts what a GPU's warps would make
//! of them). The adapter executes the very WGSL a GPU gets; only its timing
//! is its own, and a trace has none. A diagnostic: plans never record it.

use std::ops::Range;

use super::dispatch::{bind_group, table_buffer};
use super::error::DeviceError;
use super::moves::{MovePlan, PlanRef, Token};
use super::region::{BufferRegion, plain_regions};
use super::scope::{buffer_with_contents, poll, read_mapped, scoped, submit};
use super::splitter::GpuSplitter;
use crate::error::Result;
use crate::kernels::table::TableHeader;
use crate::kernels::table::WORKGROUP_SIZE;
use crate::kernels::wgsl::Bindings;
use crate::plan::EncodeError;
use crate::plan::binding::BoundDispatch;
use crate::plan::binding::SlotBinding;
use crate::plan::coalescing::{Access, SCRATCH_BUFFER, TracedBinding, TracedDispatch};
use crate::plan::geometry::Direction;
use crate::plan::permuted_binding::{PermutedBinding, PermutedDispatch, Side, dispatch_grid};
use crate::plan::{ConcatPlan, PermutedConcatPlan, PermutedPlan, SplitPlan};

/// Records kept per invocation at first; a dispatch whose invocations made
/// more runs again with room for them all.
const FIRST_RECORDS: u32 = 64;

/// Bytes of the trace binding's header (`struct Trace` before `records`).
const HEADER_BYTES: u64 = 16;

/// A traced run of a plan: what every traced invocation accessed, and what
/// each destination holds afterwards (to compare with the host path: the
/// trace variant moves the same bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedRun {
    /// Per dispatch, in recording order.
    pub dispatches: Vec<TracedDispatch>,
    /// Each destination buffer's bytes after the run.
    pub destinations: Vec<Vec<u8>>,
    /// The tensor's buffer after the run (the input of a split; the output
    /// of a concat).
    pub tensor: Vec<u8>,
}

/// Runs `plan` (of any move) on `inputs` (the packed bytes of a split's
/// one input, or of each concat input in order) into buffers of their
/// own, every dispatch in its module's trace variant, and returns the
/// accesses of the traced invocations: all of a dispatch's when it has at
/// most `most` invocations, else three windows of about `most / 3` each
/// (its start, middle and end), every window whole warps of 64. A split's
/// outputs (a concat's inputs) are [`TracedRun::destinations`], the
/// other side [`TracedRun::tensor`]; a permuted move's copy commands run
/// untraced.
///
/// # Errors
///
/// [`crate::error::EncodeError::RegionCount`] for a split given other than
/// one input; the plan's [`crate::error::EncodeError`]s (none for regions
/// of its own sizes) and [`DeviceError::Gpu`] when the device fails.
pub fn trace<P: MovePlan>(
    splitter: &GpuSplitter,
    plan: &P,
    inputs: &[&[u8]],
    most: u64,
) -> Result<TracedRun> {
    match plan.as_plan(Token(())) {
        PlanRef::Split(plan) => trace_split(splitter, plan, one_input(inputs)?, most),
        PlanRef::Concat(plan) => trace_concat(splitter, plan, inputs, most),
        PlanRef::PermutedSplit(plan) => trace_permuted(splitter, plan, one_input(inputs)?, most),
        PlanRef::PermutedConcat(plan) => trace_permuted_concat(splitter, plan, inputs, most),
    }
}

/// The one input of a split's trace.
pub(crate) fn one_input<'a>(inputs: &[&'a [u8]]) -> Result<&'a [u8]> {
    match inputs {
        [input] => Ok(input),
        _ => Err(EncodeError::RegionCount {
            expected: 1,
            actual: inputs.len(),
        }
        .into()),
    }
}

/// [`trace`] of a split.
fn trace_split(
    splitter: &GpuSplitter,
    plan: &SplitPlan,
    input: &[u8],
    most: u64,
) -> Result<TracedRun> {
    traced_run(splitter, plan, input, &[], most)
}

/// [`trace`] of a concat.
fn trace_concat(
    splitter: &GpuSplitter,
    plan: &ConcatPlan,
    inputs: &[&[u8]],
    most: u64,
) -> Result<TracedRun> {
    let pieces = plan.destinations(inputs)?;
    traced_run(splitter, plan.mirror(), &[], &pieces, most)
}

/// [`trace`] of a permuted split.
fn trace_permuted(
    splitter: &GpuSplitter,
    plan: &PermutedPlan,
    input: &[u8],
    most: u64,
) -> Result<TracedRun> {
    let device = splitter.device();
    let single_bytes = plan.input_bytes().next_multiple_of(4);
    let single = buffer_with_contents(
        device,
        "wgpu-split traced input",
        input,
        single_bytes.max(16),
        USAGE,
    )?;
    let each = (0..plan.outputs().len())
        .map(|i| {
            buffer_with_contents(
                device,
                "wgpu-split traced output",
                &[],
                plan.output_region_bytes(i).max(16),
                USAGE,
            )
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let regions: Vec<BufferRegion<'_>> = each.iter().map(BufferRegion::whole).collect();
    let input_region = BufferRegion::new(&single, 0, single_bytes);
    let (plain_input, plain) = plain_regions(&input_region, &regions);
    let binding = plan.bind(&plain_input, &plain)?;
    let mut encoder = device.create_command_encoder(&Default::default());
    for &(i, from, bytes) in &binding.copies {
        encoder.copy_buffer_to_buffer(&single, from, &each[i], 0, bytes);
    }
    submit(
        device,
        splitter.queue(),
        "copying kept pieces",
        [encoder.finish()],
    )?;
    traced_permuted_run(splitter, &binding, &single, &each, most)
}

/// [`trace`] of a permuted concat.
fn trace_permuted_concat(
    splitter: &GpuSplitter,
    plan: &PermutedConcatPlan,
    inputs: &[&[u8]],
    most: u64,
) -> Result<TracedRun> {
    let device = splitter.device();
    let output_bytes = plan.output_region_bytes();
    let single = buffer_with_contents(
        device,
        "wgpu-split traced output",
        &[],
        output_bytes.max(16),
        USAGE,
    )?;
    let each = (0..inputs.len())
        .map(|i| {
            let bytes = inputs[i];
            let size = plan.input_bytes(i).next_multiple_of(4).max(16);
            buffer_with_contents(device, "wgpu-split traced input", bytes, size, USAGE)
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let regions: Vec<BufferRegion<'_>> = each.iter().map(BufferRegion::whole).collect();
    let output_region = BufferRegion::new(&single, 0, output_bytes);
    let (plain_output, plain) = plain_regions(&output_region, &regions);
    let binding = plan.bind(&plain, &plain_output)?;
    traced_permuted_run(splitter, &binding, &single, &each, most)
}

/// The usage of every buffer of a trace.
const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// `binding`'s dispatches run in order over `single` (buffer 0) and
/// `each` (buffers `1..`), each in its module's trace variant, then every
/// buffer read back.
fn traced_permuted_run(
    splitter: &GpuSplitter,
    binding: &PermutedBinding,
    single: &wgpu::Buffer,
    each: &[wgpu::Buffer],
    most: u64,
) -> Result<TracedRun> {
    let run = PermutedTrace {
        splitter,
        single,
        each,
    };
    let dispatches = binding
        .dispatches
        .iter()
        .map(|d| run.dispatch(d, most))
        .collect::<Result<Vec<_>>>()?;
    Ok(TracedRun {
        dispatches,
        destinations: each
            .iter()
            .map(|b| read(splitter, b))
            .collect::<Result<_>>()?,
        tensor: read(splitter, single)?,
    })
}

/// The buffers a traced permuted move binds: `single` (a split's input, a
/// concat's output; buffer 0 in the trace) and `each` (buffers `1..`).
struct PermutedTrace<'a> {
    splitter: &'a GpuSplitter,
    single: &'a wgpu::Buffer,
    each: &'a [wgpu::Buffer],
}

impl PermutedTrace<'_> {
    /// The buffer a binding takes, and its number in the trace.
    fn buffer_of(&self, b: Side) -> (&wgpu::Buffer, usize) {
        match b {
            Side::Single => (self.single, 0),
            Side::Each(i) => (&self.each[i], i + 1),
        }
    }

    /// Runs `d` in its module's trace variant (compiled here: a trace is a
    /// diagnostic, nothing is cached), traced in windows of `most`.
    fn dispatch(&self, d: &PermutedDispatch, most: u64) -> Result<TracedDispatch> {
        let device = self.splitter.device();
        let pipeline = scoped(device, "compiling a traced permuted move", || {
            let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("wgpu-split traced permuted move"),
                source: wgpu::ShaderSource::Wgsl(d.module.traced_source().into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("wgpu-split traced permuted move"),
                layout: None,
                module: &shader,
                entry_point: Some(d.module.entry_point()),
                compilation_options: Default::default(),
                cache: None,
            })
        })?;
        let params = buffer_with_contents(
            device,
            "wgpu-split traced parameters",
            bytemuck::cast_slice(&d.params),
            4 * d.params.len() as u64,
            wgpu::BufferUsages::UNIFORM,
        )?;
        let invocations = u64::from(d.workgroups) * u64::from(WORKGROUP_SIZE);
        let windows = traced_windows(invocations, most, |window, per| {
            traced_window(self.splitter, window, per, |trace| {
                scoped(device, "tracing a permuted move", || {
                    self.command(d, &pipeline, &params, trace)
                })
            })
        })?;
        let bindings = d
            .bindings
            .iter()
            .map(|(number, b, range)| TracedBinding {
                binding: *number,
                buffer: self.buffer_of(*b).1,
                offset: range.start,
            })
            .collect();
        Ok(TracedDispatch {
            invocations,
            bindings,
            windows,
        })
    }

    /// The command running `d` through `pipeline`, its parameters in
    /// `params`, recording into `trace`.
    fn command(
        &self,
        d: &PermutedDispatch,
        pipeline: &wgpu::ComputePipeline,
        params: &wgpu::Buffer,
        trace: &wgpu::Buffer,
    ) -> wgpu::CommandBuffer {
        let device = self.splitter.device();
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: params.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: d.module.trace_binding(),
                resource: trace.as_entire_binding(),
            },
        ];
        entries.extend(
            d.bindings
                .iter()
                .map(|(number, b, range)| wgpu::BindGroupEntry {
                    binding: *number,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: self.buffer_of(*b).0,
                        offset: range.start,
                        size: wgpu::BufferSize::new(range.end - range.start),
                    }),
                }),
        );
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-split traced permuted move"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let grid = dispatch_grid(d.workgroups, self.splitter.limits());
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(grid[0], grid[1], 1);
        }
        encoder.finish()
    }
}

/// A traced run of `plan`: the tensor's buffer starts with `tensor`,
/// destination `i` with `destinations[i]` (zero past what is given).
fn traced_run(
    splitter: &GpuSplitter,
    plan: &SplitPlan,
    input: &[u8],
    contents: &[&[u8]],
    most: u64,
) -> Result<TracedRun> {
    let device = splitter.device();
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let input_size = plan.input_binding_bytes().max(16);
    let input_buffer =
        buffer_with_contents(device, "wgpu-split traced input", input, input_size, usage)?;
    let destinations = (0..plan.destination_count())
        .map(|i| {
            let size = plan.destination_bytes(i).next_multiple_of(4).max(16);
            let bytes = contents.get(i).copied().unwrap_or_default();
            buffer_with_contents(device, "wgpu-split traced destination", bytes, size, usage)
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let regions: Vec<BufferRegion<'_>> = destinations.iter().map(BufferRegion::whole).collect();
    let input_region = BufferRegion::new(&input_buffer, 0, plan.input_binding_bytes());
    let traced = match plan.staged_plans() {
        None => trace_plan(splitter, plan, &input_region, &regions, 0, most)?,
        Some((stage, unstage)) => {
            // The scratch arena, a buffer of its own (SCRATCH_BUFFER in
            // the trace), between the two plans.
            let size = plan.scratch_bytes().max(16);
            let scratch =
                buffer_with_contents(device, "wgpu-split traced scratch", &[], size, usage)?;
            let scratch_region = BufferRegion::new(&scratch, 0, plan.scratch_bytes());
            let into = [scratch_region];
            let stage_of = |traced: &mut Vec<TracedDispatch>| -> Result<()> {
                let mut more = trace_plan(splitter, stage, &input_region, &into, 0, most)?;
                for d in &mut more {
                    for b in d.bindings.iter_mut().skip(1) {
                        b.buffer = SCRATCH_BUFFER;
                    }
                }
                traced.extend(more);
                Ok(())
            };
            let unstage_of = |traced: &mut Vec<TracedDispatch>| -> Result<()> {
                let scratch = &scratch_region;
                traced.extend(trace_plan(
                    splitter,
                    unstage,
                    scratch,
                    &regions,
                    SCRATCH_BUFFER,
                    most,
                )?);
                Ok(())
            };
            let mut traced = Vec::new();
            // A split stages the input, then moves the scratch out; a
            // concat moves the pieces into the scratch first.
            if plan.direction() == Direction::Split {
                stage_of(&mut traced)?;
                unstage_of(&mut traced)?;
            } else {
                unstage_of(&mut traced)?;
                stage_of(&mut traced)?;
            }
            traced
        }
    };
    let destinations = destinations
        .iter()
        .map(|b| read(splitter, b))
        .collect::<Result<Vec<_>>>()?;
    Ok(TracedRun {
        dispatches: traced,
        destinations,
        tensor: read(splitter, &input_buffer)?,
    })
}

/// The traced dispatches of `plan` (not staged) from `input` into
/// `regions`, its source numbered `source` in the trace.
fn trace_plan(
    splitter: &GpuSplitter,
    plan: &SplitPlan,
    input_region: &BufferRegion<'_>,
    regions: &[BufferRegion<'_>],
    source: usize,
    most: u64,
) -> Result<Vec<TracedDispatch>> {
    let (plain_input, plain_destinations) = plain_regions(input_region, regions);
    let bound = plan.bind(&plain_input, &plain_destinations)?;
    let (keys, modules) = bound.shaders();
    let table = table_buffer(splitter.resources(), &bound)?;
    let table_bytes = bound.table();
    let mut traced = Vec::with_capacity(bound.dispatches.len());
    for (d, &module) in bound.dispatches.iter().zip(&modules) {
        let key = keys[module].clone().traced(true);
        let header: TableHeader = bytemuck::pod_read_unaligned(
            &table_bytes[d.table_bytes.start as usize..][..TableHeader::SIZE as usize],
        );
        let invocations = u64::from(header.invocations);
        let run = Dispatch {
            splitter,
            plan,
            key: &key,
            table: &table,
            dispatch: d,
            input: input_region,
            destinations: regions,
        };
        let windows = traced_windows(invocations, most, |window, per| run.traced(window, per))?;
        traced.push(TracedDispatch {
            invocations,
            bindings: bindings_of(d, source),
            windows,
        });
    }
    Ok(traced)
}

/// The traced windows of a dispatch of `invocations` ([`windows_of`]),
/// each run by `run(window, per)` keeping `per` records per invocation,
/// and again with room for all where an invocation made more.
fn traced_windows(
    invocations: u64,
    most: u64,
    run: impl Fn(&Range<u64>, u32) -> Result<(Vec<Vec<Access>>, u32)>,
) -> Result<Vec<(u64, Vec<Vec<Access>>)>> {
    let mut windows = Vec::new();
    for window in windows_of(invocations, most) {
        let mut per = FIRST_RECORDS;
        loop {
            let (records, needed) = run(&window, per)?;
            if needed <= per {
                windows.push((window.start, records));
                break;
            }
            per = needed;
        }
    }
    Ok(windows)
}

/// The invocation windows traced of a dispatch of `invocations`.
fn windows_of(invocations: u64, most: u64) -> Vec<Range<u64>> {
    if invocations <= most {
        return std::iter::once(0..invocations).collect();
    }
    let len = (most / 3).next_multiple_of(64).max(64);
    let middle = (invocations / 2 - len / 2) / 64 * 64;
    let last = (invocations - len) / 64 * 64;
    let mut starts = vec![0, middle, last];
    starts.dedup();
    starts
        .into_iter()
        .map(|s| s..(s + len).min(invocations))
        .collect()
}

/// Where a dispatch's bindings lie: the source in buffer `source` (the
/// input: 0), destination `i` in buffer `i + 1` (spare slots are never
/// accessed).
fn bindings_of(d: &BoundDispatch, source: usize) -> Vec<TracedBinding> {
    let mut bindings = vec![TracedBinding {
        binding: Bindings::SOURCE,
        buffer: source,
        offset: d.src.start,
    }];
    for (slot, bound) in d.dst.iter().enumerate() {
        if let SlotBinding::Destination { destination, bytes } = bound {
            bindings.push(TracedBinding {
                binding: Bindings::destination(slot as u32),
                buffer: destination + 1,
                offset: bytes.start,
            });
        }
    }
    bindings
}

/// One bound dispatch, ready to run in its trace variant.
struct Dispatch<'a> {
    splitter: &'a GpuSplitter,
    plan: &'a SplitPlan,
    key: &'a crate::plan::ShaderKey,
    table: &'a wgpu::Buffer,
    dispatch: &'a BoundDispatch,
    input: &'a BufferRegion<'a>,
    destinations: &'a [BufferRegion<'a>],
}

impl Dispatch<'_> {
    /// Runs the dispatch tracing `window`, keeping `per` records per
    /// invocation: each traced invocation's accesses, and the most records
    /// any invocation made.
    fn traced(&self, window: &Range<u64>, per: u32) -> Result<(Vec<Vec<Access>>, u32)> {
        let device = self.splitter.device();
        let resources = self.splitter.resources();
        traced_window(self.splitter, window, per, |trace| {
            scoped(device, "tracing a dispatch", || {
                let kernel = resources.pipeline(self.key);
                let group = bind_group(
                    resources,
                    &kernel.layout,
                    self.plan,
                    self.table,
                    self.dispatch,
                    self.input,
                    self.destinations,
                    Some(trace),
                );
                let mut encoder = device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, &group, &[]);
                    let [x, y] = self.dispatch.workgroups;
                    pass.dispatch_workgroups(x, y, 1);
                }
                encoder.finish()
            })
        })
    }
}

/// Runs the command `record(trace)` makes, tracing invocations `window`
/// into a trace buffer of `per` records each: each traced invocation's
/// accesses, and the most records any invocation made.
fn traced_window(
    splitter: &GpuSplitter,
    window: &Range<u64>,
    per: u32,
    record: impl FnOnce(&wgpu::Buffer) -> std::result::Result<wgpu::CommandBuffer, DeviceError>,
) -> Result<(Vec<Vec<Access>>, u32)> {
    let count = window.end - window.start;
    let device = splitter.device();
    let words = [window.start as u32, count as u32, per, 0];
    let size = HEADER_BYTES + count * u64::from(per) * 8;
    let trace = buffer_with_contents(
        device,
        "wgpu-split trace",
        bytemuck::cast_slice(&words),
        size,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    )?;
    let command = record(&trace)?;
    submit(device, splitter.queue(), "tracing a dispatch", [command])?;
    let bytes = read(splitter, &trace)?;
    let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
    let needed = words[3];
    let records = &words[(HEADER_BYTES / 4) as usize..];
    let accesses = (0..count as usize)
        .map(|t| {
            let kept = needed.min(per) as usize;
            records[t * per as usize * 2..][..kept * 2]
                .chunks_exact(2)
                .take_while(|r| r[0] != 0)
                .map(|r| Access::decode(r[0], r[1]))
                .collect()
        })
        .collect();
    Ok((accesses, needed))
}

/// A buffer's bytes, read back through a staging buffer (blocking).
fn read(splitter: &GpuSplitter, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
    if cfg!(target_arch = "wasm32") {
        return Err(DeviceError::Gpu {
            detail: "the access trace is a native tool: it waits for each traced dispatch, which the web cannot do".to_string(),
        }
        .into());
    }
    let device = splitter.device();
    let staging = scoped(device, "reading a traced buffer", || {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-split trace readback"),
            size: buffer.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
        splitter.queue().submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        staging
    })?;
    poll(
        device,
        wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(super::readback::READBACK_TIMEOUT),
        },
    )
    .map_err(|e| DeviceError::Gpu {
        detail: format!("waiting for a trace: {e}"),
    })?;
    Ok(read_mapped(device, &staging, "reading a trace")?)
}
