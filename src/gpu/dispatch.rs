//! Turning a bound plan into dispatches: the table uploaded (or reused),
//! the pipeline, and one bind group per pass, all created inside error
//! scopes.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use super::cache::{lock, table_cost};
use super::prepared::PreparedSplit;
use super::region::BufferRegion;
use super::resources::{CachedTable, Resources};
use super::scope::{ErrorScope, buffer_with_contents};
use crate::error::Result;
use crate::kernels::wgsl::Bindings;
use crate::plan::SplitPlan;
use crate::plan::binding::BoundDispatch;
use crate::plan::binding::BoundPlan;
use crate::plan::binding::SlotBinding;

/// Pipelines, table and bind groups of every dispatch of `bound`.
pub(crate) fn prepare_dispatches(
    resources: &Resources,
    bound: &BoundPlan<'_>,
    input: &BufferRegion<'_>,
    destinations: &[BufferRegion<'_>],
) -> Result<PreparedSplit> {
    if bound.dispatches.is_empty() {
        return Ok(PreparedSplit::empty());
    }
    let (keys, modules) = bound.shaders();
    let table = table_buffer(resources, bound)?;
    let device = &resources.device;
    // A buffer from another device, a destroyed buffer or a lost device
    // fails here, inside the scopes.
    let scope = ErrorScope::open(device);
    let kernels: Vec<_> = keys.iter().map(|key| resources.pipeline(key)).collect();
    let dispatches = bound
        .dispatches
        .iter()
        .zip(modules)
        .map(|(d, module)| {
            let group = bind_group(
                resources,
                &kernels[module].layout,
                bound.plan(),
                &table,
                d,
                input,
                destinations,
                None,
            );
            (module, group, d.workgroups)
        })
        .collect();
    let pipelines = kernels.iter().map(|k| k.pipeline.clone()).collect();
    let prepared = PreparedSplit::new(pipelines, dispatches, bound.table_len());
    Ok(scope.close("binding the split's buffers", prepared)?)
}

/// The table buffer for a bound plan: uploaded once per plan and packing
/// while kept, the table built only when it is not.
pub(crate) fn table_buffer(
    resources: &Resources,
    bound: &BoundPlan<'_>,
) -> Result<Arc<wgpu::Buffer>> {
    let (key, identity) = bound.table_identity();
    upload_table(resources, key, &identity, || bound.table())
}

/// The table buffer whose content `identity` determines, under `key` in
/// the cache: found by key and confirmed by identity, else `content` is
/// built, uploaded and kept within the policy's budget.
pub(crate) fn upload_table<'c>(
    resources: &Resources,
    key: u64,
    identity: &[u8],
    content: impl FnOnce() -> Cow<'c, [u8]>,
) -> Result<Arc<wgpu::Buffer>> {
    if let Some(cached) = lock(&resources.tables).get(&key)
        && cached.identity == identity
    {
        return Ok(cached.buffer.clone());
    }
    let content = content();
    let buffer = Arc::new(buffer_with_contents(
        &resources.device,
        "wgpu-split table",
        &content,
        content.len() as u64,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
    )?);
    let cost = table_cost(content.len() as u64, identity.len() as u64);
    if cost <= resources.policy.table_bytes {
        let cached = CachedTable {
            identity: identity.to_vec(),
            buffer: buffer.clone(),
        };
        lock(&resources.tables).insert(key, cached, cost, resources.policy.table_bytes);
    }
    Ok(buffer)
}

/// The bind group of one dispatch: the table slice, the input window and
/// one binding per destination slot (the splitter's spare buffer where the
/// dispatch writes none), and in a module's trace variant its trace buffer.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bind_group(
    resources: &Resources,
    layout: &wgpu::BindGroupLayout,
    plan: &SplitPlan,
    table: &wgpu::Buffer,
    dispatch: &BoundDispatch,
    input: &BufferRegion<'_>,
    destinations: &[BufferRegion<'_>],
    trace: Option<&wgpu::Buffer>,
) -> wgpu::BindGroup {
    let binding = |buffer, range: &Range<u64>| {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: range.start,
            size: wgpu::BufferSize::new(range.end - range.start),
        })
    };
    let mut entries = vec![
        wgpu::BindGroupEntry {
            binding: Bindings::TABLE,
            resource: binding(table, &dispatch.table_bytes),
        },
        wgpu::BindGroupEntry {
            binding: Bindings::SOURCE,
            resource: binding(input.buffer, &dispatch.src),
        },
    ];
    let spare_ranges: Vec<Range<u64>> = (0..dispatch.dst.len())
        .map(|s| plan.spare_binding(s))
        .collect();
    for (slot, bound) in dispatch.dst.iter().enumerate() {
        let resource = match bound {
            SlotBinding::Destination { destination, bytes } => {
                binding(destinations[*destination].buffer, bytes)
            }
            SlotBinding::Spare => binding(&resources.spare, &spare_ranges[slot]),
        };
        entries.push(wgpu::BindGroupEntry {
            binding: Bindings::destination(slot as u32),
            resource,
        });
    }
    if let Some(trace) = trace {
        entries.push(wgpu::BindGroupEntry {
            binding: Bindings::trace(dispatch.dst.len() as u32),
            resource: trace.as_entire_binding(),
        });
    }
    resources
        .device
        .create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-split dispatch"),
            layout,
            entries: &entries,
        })
}
