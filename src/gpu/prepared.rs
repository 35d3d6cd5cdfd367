//! [`PreparedSplit`]: a split ready to record inside the caller's own
//! compute pass, between two of its kernels.

/// A planned split bound to concrete buffers: its pipelines, one bind
/// group per dispatch and the workgroup counts, as
/// [`crate::gpu::GpuSplitter::prepare`] made them.
///
/// Recording it sets its own pipelines and bind group 0 on the pass; set
/// yours again before your next dispatch. The value holds its bind groups
/// and through them the buffers they bind, for as long as you keep it.
///
/// **It is bound to buffers, not to tensors.** Recorded again later, it
/// reads and writes the same byte ranges of the same buffers, whatever
/// they hold by then: a runtime whose pool recycles buffers (or page
/// slices) between steps would overwrite a tensor it has since handed to
/// another op. Prepare per step, from the regions the step's tensors have
/// (the pipeline and the table are cached; preparing costs the bind groups,
/// a few microseconds), and keep a `PreparedSplit` across steps only while
/// its input and outputs keep their buffers.
///
/// # Examples
///
/// ```no_run
/// # use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
/// # use wgpu_split::{ElementType, OnnxSplit};
/// # let ctx = GpuContext::new_default()?;
/// # let splitter = ctx.splitter()?;
/// # let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[8, 9])?;
/// // Dispatches only, so it can go inside a compute pass.
/// let in_pass = wgpu_split::plan::PlanOptions::default().in_compute_pass();
/// let plan = splitter.plan_with(&split, ElementType::Float, &in_pass)?;
/// # let input = RoundTrip::new(&splitter).create_input(&[0; 8 * 9 * 4])?;
/// # let outputs = RoundTrip::new(&splitter).create_destinations(&plan)?;
/// let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
/// // Per step, from this step's regions.
/// let prepared = splitter.prepare(&plan, BufferRegion::whole(&input), &regions)?;
/// let mut encoder = ctx.device.create_command_encoder(&Default::default());
/// {
///     let mut pass = encoder.begin_compute_pass(&Default::default());
///     // ... the runtime's own dispatches ...
///     prepared.record(&mut pass);
///     // ... more of the runtime's dispatches (set their pipeline again) ...
/// }
/// ctx.queue.submit([encoder.finish()]);
/// # Ok::<(), wgpu_split::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PreparedSplit {
    /// The pipelines the dispatches run (one, or one per group layout).
    pipelines: Vec<wgpu::ComputePipeline>,
    /// Per dispatch: its pipeline's index, its bind group, its workgroups.
    dispatches: Vec<(usize, wgpu::BindGroup, [u32; 2])>,
    /// Bytes of the table the dispatches read.
    table_bytes: u64,
}

/// What an encode of a plan into given regions records, known before
/// anything is recorded ([`crate::gpu::GpuSplitter::counts`],
/// [`PreparedSplit::counts`]).
///
/// The plan's own counts ([`crate::plan::SplitPlan::dispatch_count`],
/// [`crate::plan::SplitPlan::copy_count`], the length of its table) hold
/// for any regions whose dispatch bindings do not overlap. Destinations
/// packed closer than `min_storage_buffer_offset_alignment` in one buffer
/// would overlap once their bindings start aligned down (WebGPU forbids two
/// overlapping writable bindings in a dispatch), and the dispatches are
/// grouped so that none does: a table-driven plan deals its entries into
/// other dispatches (as many as planned for a page packed in output order,
/// at most one more per destination a binding alignment holds otherwise),
/// any other plan splits each such pass into a dispatch per group of
/// destinations that do not overlap. The table is then one for the plan
/// and that grouping, uploaded once while the cache keeps it, whatever the
/// offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EncodeCounts {
    /// Copy commands: always the plan's.
    pub copies: u64,
    /// Dispatches.
    pub dispatches: usize,
    /// Bytes of the parameter table the dispatches read.
    pub table_bytes: u64,
}

impl PreparedSplit {
    pub(crate) fn new(
        pipelines: Vec<wgpu::ComputePipeline>,
        dispatches: Vec<(usize, wgpu::BindGroup, [u32; 2])>,
        table_bytes: u64,
    ) -> Self {
        PreparedSplit {
            pipelines,
            dispatches,
            table_bytes,
        }
    }

    /// Nothing to dispatch (every output empty or copied).
    pub(crate) fn empty() -> Self {
        PreparedSplit::new(Vec::new(), Vec::new(), 0)
    }

    /// These dispatches, then `next`'s (a staged plan's two plans).
    pub(crate) fn then(mut self, next: PreparedSplit) -> Self {
        let base = self.pipelines.len();
        self.pipelines.extend(next.pipelines);
        self.dispatches.extend(
            next.dispatches
                .into_iter()
                .map(|(pipeline, group, grid)| (pipeline + base, group, grid)),
        );
        self.table_bytes += next.table_bytes;
        self
    }

    /// Dispatches [`PreparedSplit::record`] records.
    pub fn dispatch_count(&self) -> usize {
        self.dispatches.len()
    }

    /// What recording it records: its dispatches and the bytes of their
    /// table (no copies; see [`EncodeCounts`]).
    pub fn counts(&self) -> EncodeCounts {
        EncodeCounts {
            copies: 0,
            dispatches: self.dispatches.len(),
            table_bytes: self.table_bytes,
        }
    }

    /// Records every dispatch into `pass`, setting each one's pipeline
    /// where it changes. Dispatches of one pass run in order with their
    /// storage writes visible to the next (WebGPU's rule), which
    /// multi-dispatch plans rely on.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        let mut current = None;
        for (pipeline, group, [x, y]) in &self.dispatches {
            if current != Some(*pipeline) {
                pass.set_pipeline(&self.pipelines[*pipeline]);
                current = Some(*pipeline);
            }
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(*x, *y, 1);
        }
    }
}
