//! GPU execution: a [`GpuSplitter`] owns the cached pipelines and records a
//! planned split into the caller's command encoder, reading the caller's input
//! buffer and writing the caller's arena buffer. It submits nothing and reads
//! nothing back; [`GpuSplitter::split`] is the convenience path that does.

mod convenience;

pub use convenience::{GpuContext, READBACK_TIMEOUT};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::plan::{AccessUnit, PlanLimits, SplitPlan, Strategy};
use crate::semantics::ResolvedSplit;

/// The WGSL source of the gather shader.
pub const SHADER_SOURCE: &str = include_str!("../../shaders/split.wgsl");

/// A region of a caller's buffer: the buffer and a byte offset into it.
#[derive(Debug, Clone, Copy)]
pub struct BufferRegion<'a> {
    /// The buffer.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset of the tensor (or arena) inside it.
    pub offset: u64,
}

impl<'a> BufferRegion<'a> {
    /// The whole buffer from offset 0.
    pub fn whole(buffer: &'a wgpu::Buffer) -> Self {
        BufferRegion { buffer, offset: 0 }
    }
}

/// Runs `f` inside validation and out-of-memory error scopes, so that wgpu
/// errors (a lost or destroyed device, a buffer from another device) become
/// a typed [`Error::Gpu`] instead of reaching the uncaptured-error handler.
/// On native backends the scopes resolve at once.
pub(crate) fn scoped<T>(device: &wgpu::Device, what: &str, f: impl FnOnce() -> T) -> Result<T> {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let value = f();
    let memory = pollster::block_on(memory.pop());
    let validation = pollster::block_on(validation.pop());
    match memory.or(validation) {
        Some(e) => Err(Error::Gpu {
            detail: format!("{what}: {e}"),
        }),
        None => Ok(value),
    }
}

/// A buffer created mapped and filled with `contents` (padded with zeros to
/// `size`); unlike `DeviceExt::create_buffer_init` it reports a lost device
/// as an error instead of panicking.
pub(crate) fn buffer_with_contents(
    device: &wgpu::Device,
    label: &str,
    contents: &[u8],
    size: u64,
    usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer> {
    let buffer = scoped(device, label, || {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: true,
        })
    })?;
    {
        let mut view = buffer
            .slice(..)
            .get_mapped_range_mut()
            .map_err(|e| Error::Gpu {
                detail: format!("{label}: {e}"),
            })?;
        view.slice(..contents.len()).copy_from_slice(contents);
    }
    buffer.unmap();
    Ok(buffer)
}

/// One compiled entry point with its bind group layout.
#[derive(Debug)]
struct Kernel {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    src_binding: u32,
    dst_binding: u32,
}

impl Kernel {
    fn new(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        entry: &str,
        src: u32,
        dst: u32,
    ) -> Self {
        let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(entry),
            entries: &[storage(0, true), storage(src, true), storage(dst, false)],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(entry),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&pipeline_layout),
            module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        Kernel {
            layout,
            pipeline,
            src_binding: src,
            dst_binding: dst,
        }
    }
}

/// Splits tensors that live in GPU buffers.
///
/// Built once per device; it caches the shader module, bind group layouts and
/// pipelines, and is `Send + Sync`, so one splitter serves every thread.
///
/// # Examples
///
/// ```no_run
/// use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter};
/// use wgpu_split::{ElementType, OnnxSplit};
///
/// let ctx = GpuContext::new_default()?;
/// let splitter = GpuSplitter::new(&ctx.device, &ctx.queue)?;
/// let split = OnnxSplit::new(18, 2).axis(1).num_outputs(2).resolve(&[64, 10])?;
/// let plan = splitter.plan(&split, ElementType::Float16)?;
/// # let input = splitter.create_arena(&plan)?;
/// let arena = splitter.create_arena(&plan)?;
/// let mut encoder = ctx.device.create_command_encoder(&Default::default());
/// splitter.encode(&mut encoder, &plan, BufferRegion::whole(&input), BufferRegion::whole(&arena))?;
/// ctx.queue.submit([encoder.finish()]);
/// // Output 1 lives at plan.outputs()[1].range() inside `arena`.
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug)]
pub struct GpuSplitter {
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: PlanLimits,
    strategy: Strategy,
    words: Kernel,
    vec4: Kernel,
    cache: Mutex<EncodeCache>,
}

/// What [`GpuSplitter::encode`] reuses across calls with the same plan and
/// buffers: the uploaded parameter tables and the bind groups. Bounded: past
/// its caps it is cleared, so it cannot grow without limit (and it holds the
/// buffers it binds alive only until then).
#[derive(Debug, Default)]
struct EncodeCache {
    tables: HashMap<u64, (Vec<u8>, Arc<wgpu::Buffer>)>,
    bind_groups: HashMap<BindKey, Arc<wgpu::BindGroup>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BindKey {
    table: u64,
    pass: usize,
    unit_vec4: bool,
    input: wgpu::Buffer,
    input_offset: u64,
    arena: wgpu::Buffer,
    arena_offset: u64,
}

const MAX_CACHED_TABLES: usize = 64;
const MAX_CACHED_BIND_GROUPS: usize = 1024;

impl GpuSplitter {
    /// Compiles the gather shader for `device` (handles are cloned; wgpu
    /// devices are reference-counted).
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device is lost or rejects the shader.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> {
        let (module, words, vec4) = scoped(device, "compiling the gather shader", || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("wgpu-split gather"),
                source: wgpu::ShaderSource::Wgsl(SHADER_SOURCE.into()),
            });
            let words = Kernel::new(device, &module, "split_words", 1, 2);
            let vec4 = Kernel::new(device, &module, "split_vec4", 3, 4);
            (module, words, vec4)
        })?;
        drop(module);
        let l = device.limits();
        Ok(GpuSplitter {
            device: device.clone(),
            queue: queue.clone(),
            limits: PlanLimits {
                min_storage_buffer_offset_alignment: l.min_storage_buffer_offset_alignment,
                max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
                max_buffer_size: l.max_buffer_size,
                max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
            },
            strategy: Strategy::Auto(Default::default()),
            words,
            vec4,
            cache: Mutex::new(EncodeCache::default()),
        })
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The device limits plans are made for.
    pub fn plan_limits(&self) -> &PlanLimits {
        &self.limits
    }

    /// The same splitter with another default [`Strategy`] for
    /// [`GpuSplitter::plan`] (the default is [`Strategy::Auto`] with
    /// [`crate::plan::CostModel::LAVAPIPE`]; use a calibrated model for other
    /// adapters, or [`Strategy::Gather`] for buffers without copy usages).
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The strategy [`GpuSplitter::plan`] uses.
    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// Plans `split` of an `element_type` tensor for this device with the
    /// splitter's strategy.
    ///
    /// # Errors
    ///
    /// The errors of [`SplitPlan::with_strategy`].
    pub fn plan(&self, split: &ResolvedSplit, element_type: ElementType) -> Result<SplitPlan> {
        SplitPlan::with_strategy(split, element_type, &self.limits, &self.strategy)
    }

    /// Plans with an explicit strategy and limits at most the device's (for
    /// instance tiny windows, to exercise multi-pass plans on small tensors).
    ///
    /// # Errors
    ///
    /// [`Error::PlanMismatch`] when `limits` does not fit within the device's,
    /// and the errors of [`SplitPlan::with_strategy`].
    pub fn plan_with(
        &self,
        split: &ResolvedSplit,
        element_type: ElementType,
        limits: &PlanLimits,
        strategy: &Strategy,
    ) -> Result<SplitPlan> {
        if !limits.fits_within(&self.limits) {
            return Err(Error::PlanMismatch {
                detail: format!("{limits:?} exceeds the device's {:?}", self.limits),
            });
        }
        SplitPlan::with_strategy(split, element_type, limits, strategy)
    }

    /// A buffer of [`SplitPlan::arena_size`] bytes (at least 4) with the
    /// usages the split and a readback need (`STORAGE | COPY_SRC | COPY_DST`).
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device is lost or out of memory.
    pub fn create_arena(&self, plan: &SplitPlan) -> Result<wgpu::Buffer> {
        scoped(&self.device, "creating the arena", || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split arena"),
                size: plan.arena_size().max(4),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// A storage buffer holding `bytes`, padded with zeros to a multiple of 4
    /// (`STORAGE | COPY_SRC | COPY_DST`).
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device is lost or out of memory.
    pub fn create_input(&self, bytes: &[u8]) -> Result<wgpu::Buffer> {
        buffer_with_contents(
            &self.device,
            "wgpu-split input",
            bytes,
            (bytes.len() as u64).div_ceil(4).max(1) * 4,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        )
    }

    /// Drops every cached parameter table and bind group (and with them the
    /// references they hold to caller buffers).
    pub fn clear_cache(&self) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.tables.clear();
        cache.bind_groups.clear();
    }

    /// Records the split into `encoder`: reads `input` (the packed tensor,
    /// [`SplitPlan::input_binding_bytes`] bytes from its offset) and writes every
    /// output into `arena` at its [`SplitPlan::outputs`] offset. Records
    /// [`SplitPlan::copy_count`] copy commands and [`SplitPlan::dispatch_count`]
    /// dispatches, each in its own compute pass; submits nothing.
    ///
    /// # Errors
    ///
    /// Caught before wgpu sees them: [`Error::PlanMismatch`] for a plan made
    /// for other limits, [`Error::InputIsArena`], [`Error::MissingUsage`]
    /// (`STORAGE` when the plan dispatches, `COPY_SRC` on the input and
    /// `COPY_DST` on the arena when it copies), [`Error::MisalignedOffset`] (offsets must be
    /// multiples of `min_storage_buffer_offset_alignment`),
    /// [`Error::BufferTooSmall`].
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
    ) -> Result<()> {
        self.encode_with(encoder, plan, input, arena, true)
    }

    /// [`GpuSplitter::encode`], optionally without remembering the bind
    /// groups (for one-off buffers, which the cache would otherwise keep alive).
    pub(crate) fn encode_with(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
        remember: bool,
    ) -> Result<()> {
        self.check(plan, input, arena)?;
        for c in plan.copies() {
            for k in 0..c.count {
                encoder.copy_buffer_to_buffer(
                    input.buffer,
                    input.offset + c.src_offset + k * c.src_stride,
                    arena.buffer,
                    arena.offset + c.dst_offset + k * c.size,
                    c.size,
                );
            }
        }
        if plan.passes().is_empty() {
            return Ok(());
        }
        let kernel = match plan.unit() {
            AccessUnit::Vec4 => &self.vec4,
            AccessUnit::Word => &self.words,
        };
        // One cache lock and one table lookup per encode, not per pass.
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let table = self.table_buffer(&mut cache, plan)?;
        let mut bind_groups = Vec::with_capacity(plan.passes().len());
        for index in 0..plan.passes().len() {
            let group = self.bind_group(
                &mut cache, &table, plan, kernel, index, input, arena, remember,
            )?;
            bind_groups.push(group);
        }
        drop(cache);
        for (pass, bind_group) in plan.passes().iter().zip(bind_groups) {
            // One compute pass per dispatch: a later pass may complete words an
            // earlier one started, and pass boundaries order the storage writes.
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("wgpu-split"),
                timestamp_writes: None,
            });
            cpass.set_pipeline(&kernel.pipeline);
            cpass.set_bind_group(0, bind_group.as_ref(), &[]);
            cpass.dispatch_workgroups(pass.workgroups[0], pass.workgroups[1], 1);
        }
        Ok(())
    }

    /// The table buffer for `plan`, uploaded once per distinct table.
    fn table_buffer(&self, cache: &mut EncodeCache, plan: &SplitPlan) -> Result<Arc<wgpu::Buffer>> {
        let key = plan.table_fingerprint();
        if let Some((bytes, buffer)) = cache.tables.get(&key)
            && bytes.as_slice() == plan.table()
        {
            return Ok(buffer.clone());
        }
        if cache.tables.len() >= MAX_CACHED_TABLES {
            cache.tables.clear();
            cache.bind_groups.clear();
        }
        let buffer = Arc::new(buffer_with_contents(
            &self.device,
            "wgpu-split table",
            plan.table(),
            plan.table().len() as u64,
            wgpu::BufferUsages::STORAGE,
        )?);
        cache
            .tables
            .insert(key, (plan.table().to_vec(), buffer.clone()));
        Ok(buffer)
    }

    /// The bind group of pass `index`: from the cache, or created (and
    /// remembered when `remember` is set).
    #[allow(clippy::too_many_arguments)]
    fn bind_group(
        &self,
        cache: &mut EncodeCache,
        table: &wgpu::Buffer,
        plan: &SplitPlan,
        kernel: &Kernel,
        index: usize,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
        remember: bool,
    ) -> Result<Arc<wgpu::BindGroup>> {
        let key = BindKey {
            table: plan.table_fingerprint(),
            pass: index,
            unit_vec4: plan.unit() == AccessUnit::Vec4,
            input: input.buffer.clone(),
            input_offset: input.offset,
            arena: arena.buffer.clone(),
            arena_offset: arena.offset,
        };
        if let Some(group) = cache.bind_groups.get(&key) {
            return Ok(group.clone());
        }
        if cache.bind_groups.len() >= MAX_CACHED_BIND_GROUPS {
            cache.bind_groups.clear();
        }
        let pass = &plan.passes()[index];
        let binding = |buffer, offset, range: &std::ops::Range<u64>| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: offset + range.start,
                size: wgpu::BufferSize::new(range.end - range.start),
            })
        };
        // A buffer from another device, or a lost device, fails here.
        let group = scoped(&self.device, "binding the split's buffers", || {
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-split pass"),
                layout: &kernel.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: binding(table, 0, &pass.table),
                    },
                    wgpu::BindGroupEntry {
                        binding: kernel.src_binding,
                        resource: binding(input.buffer, input.offset, &pass.src_window),
                    },
                    wgpu::BindGroupEntry {
                        binding: kernel.dst_binding,
                        resource: binding(arena.buffer, arena.offset, &pass.dst_window),
                    },
                ],
            })
        })?;
        let group = Arc::new(group);
        if remember {
            cache.bind_groups.insert(key, group.clone());
        }
        Ok(group)
    }

    fn check(
        &self,
        plan: &SplitPlan,
        input: BufferRegion<'_>,
        arena: BufferRegion<'_>,
    ) -> Result<()> {
        if !plan.limits().fits_within(&self.limits) {
            return Err(Error::PlanMismatch {
                detail: format!(
                    "planned for {:?}, which this device's {:?} does not allow",
                    plan.limits(),
                    self.limits
                ),
            });
        }
        if input.buffer == arena.buffer {
            return Err(Error::InputIsArena);
        }
        let alignment = u64::from(self.limits.min_storage_buffer_offset_alignment);
        let copies = !plan.copies().is_empty();
        let gathers = !plan.passes().is_empty();
        for (which, region, needed, copy_usage) in [
            (
                "input",
                input,
                plan.input_binding_bytes(),
                wgpu::BufferUsages::COPY_SRC,
            ),
            (
                "arena",
                arena,
                plan.arena_size(),
                wgpu::BufferUsages::COPY_DST,
            ),
        ] {
            let usage = region.buffer.usage();
            for (wanted, flag, name) in [
                (gathers, wgpu::BufferUsages::STORAGE, "STORAGE"),
                (
                    copies,
                    copy_usage,
                    if which == "input" {
                        "COPY_SRC"
                    } else {
                        "COPY_DST"
                    },
                ),
            ] {
                if wanted && !usage.contains(flag) {
                    return Err(Error::MissingUsage {
                        which,
                        missing: name.to_string(),
                    });
                }
            }
            if region.offset % alignment != 0 {
                return Err(Error::MisalignedOffset {
                    which,
                    offset: region.offset,
                    alignment,
                });
            }
            let size = region.buffer.size();
            if region
                .offset
                .checked_add(needed)
                .is_none_or(|end| end > size)
            {
                return Err(Error::BufferTooSmall {
                    which,
                    size,
                    offset: region.offset,
                    needed,
                });
            }
        }
        Ok(())
    }
}
