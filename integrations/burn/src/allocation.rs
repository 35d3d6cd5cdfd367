//! Where the outputs go in burn's memory: one allocation from burn's pool
//! per output, or, for many outputs, one arena allocation sliced into the
//! outputs (burn's own split hands out views of one allocation the same
//! way); a concat's output is one allocation of its own.

use burn_cubecl::cubecl::client::Client;
use burn_cubecl::cubecl::server::{Handle, ServerError};
use burn_cubecl::cubecl::wgpu::{AutoCompiler, WgpuServer, wgpu};
use wgpu_split::gpu::BufferRegion;
use wgpu_split::plan::{ConcatRequirements, SplitPlan};

use crate::error::{BurnSplitError, Result};

/// Above this many outputs they share one arena allocation, planned with
/// the arena placement (one dispatch for any number of outputs). Each
/// allocation of its own costs an allocation and a blocking lookup on
/// burn's server thread, about 30 µs per output on lavapipe (1,000 outputs
/// took 30 ms to hand out); the price of sharing is that the arena lives
/// until the last of its outputs is dropped.
pub const SHARED_ALLOCATION_ABOVE: usize = 16;

/// burn's wgpu server: the storage `get_resource` reads from.
type Server = WgpuServer<AutoCompiler>;

/// A buffer range burn handed out, kept in place while held (cubecl's
/// `ManagedResource`: the allocation is neither freed nor handed out
/// again until it is dropped).
pub(crate) struct Guard {
    /// The page.
    pub buffer: wgpu::Buffer,
    /// Where the range starts in it.
    pub offset: u64,
    _held: Box<dyn Send>,
}

pub(crate) fn runtime(e: ServerError) -> BurnSplitError {
    BurnSplitError::Runtime {
        detail: e.to_string(),
    }
}

/// The buffer range under `handle`. `get_resource` first runs burn's queued
/// work on the streams that own the buffer (submitting it), so what is
/// recorded after it comes after that work on the queue.
pub(crate) fn resource(client: &Client, handle: &Handle) -> Result<Guard> {
    let held = client
        .get_resource::<Server>(handle.clone())
        .map_err(runtime)?;
    let r = held.resource();
    Ok(Guard {
        buffer: r.buffer.clone(),
        offset: r.offset,
        _held: Box::new(held),
    })
}

/// The outputs' handles and the guards of the memory under them.
pub(crate) struct Outputs {
    /// One handle per output, for the tensors handed back.
    pub handles: Vec<Handle>,
    /// The allocations: one per output, or the one arena.
    pub guards: Vec<Guard>,
}

impl Outputs {
    /// One allocation from `client`'s pool per output, of `plan`'s region
    /// bytes (a plan with separate destinations).
    pub(crate) fn separate(client: &Client, plan: &SplitPlan) -> Result<Outputs> {
        let handles: Vec<Handle> = plan
            .outputs()
            .iter()
            .map(|o| client.empty(o.region_bytes as usize))
            .collect();
        let guards = handles
            .iter()
            .map(|h| resource(client, h))
            .collect::<Result<_>>()?;
        Ok(Outputs { handles, guards })
    }

    /// One allocation of an arena plan's size, each output a slice of it at
    /// the plan's offset (aligned to `min_storage_buffer_offset_alignment`,
    /// so burn's kernels bind the slices as they bind its own views).
    pub(crate) fn arena(client: &Client, plan: &SplitPlan) -> Result<Outputs> {
        let total = plan.arena_bytes().max(4);
        let arena = client.empty(total as usize);
        let guards = vec![resource(client, &arena)?];
        let handles = plan
            .outputs()
            .iter()
            .map(|o| {
                arena
                    .clone()
                    .offset_start(o.arena_offset_bytes)
                    .offset_end(total - o.arena_offset_bytes - o.region_bytes)
            })
            .collect();
        Ok(Outputs { handles, guards })
    }

    /// The destination regions an encode of `plan` takes.
    pub(crate) fn regions(&self, plan: &SplitPlan) -> Vec<BufferRegion<'_>> {
        let needs = plan.requirements();
        self.guards
            .iter()
            .zip(&needs.destinations)
            .map(|(g, d)| BufferRegion::new(&g.buffer, g.offset, d.bytes))
            .collect()
    }
}

/// A concat's output: its handle and the guard of the memory under it.
pub(crate) struct ConcatOutput {
    /// The handle, for the tensor handed back.
    pub handle: Handle,
    /// The allocation.
    pub guard: Guard,
}

impl ConcatOutput {
    /// One allocation from `client`'s pool for the output `needs` describes,
    /// rounded up to a word: it holds the region any plan of the concat
    /// writes (a dispatch writes the last word whole) and the words a copy
    /// from the staging buffer writes.
    pub(crate) fn new(client: &Client, needs: &ConcatRequirements) -> Result<ConcatOutput> {
        let bytes = needs.output_region_bytes.max(needs.output_bytes);
        let handle = client.empty(bytes.next_multiple_of(4) as usize);
        let guard = resource(client, &handle)?;
        Ok(ConcatOutput { handle, guard })
    }

    /// The region an encode writes the output into.
    pub(crate) fn region(&self, needs: &ConcatRequirements) -> BufferRegion<'_> {
        BufferRegion::new(
            &self.guard.buffer,
            self.guard.offset,
            needs.output_region_bytes,
        )
    }
}
