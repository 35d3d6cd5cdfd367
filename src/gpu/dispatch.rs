//! Turning a plan and the caller's regions into dispatches: the table
//! uploaded (or reused), the pipeline, and one bind group per pass, all
//! created inside error scopes.

use std::sync::Arc;

use super::prepared::PreparedSplit;
use super::region::BufferRegion;
use super::scope::{buffer_with_contents, scoped};
use super::splitter::GpuSplitter;
use crate::error::Result;
use crate::plan::{BoundPlan, Pass, PassBindings, SplitPlan};

impl GpuSplitter {
    /// Pipeline, table and bind groups of every pass at the caller's offsets.
    pub(crate) fn prepare_dispatches(
        &self,
        plan: &SplitPlan,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> Result<PreparedSplit> {
        if plan.dispatch_count() == 0 {
            return Ok(PreparedSplit::empty());
        }
        let offsets: Vec<u64> = destinations.iter().map(|d| d.offset).collect();
        let bound = plan.bind(input.offset, &offsets)?;
        let table = self.table_buffer(plan, &bound)?;
        // A buffer from another device, a destroyed buffer or a lost device
        // fails here, inside the scopes.
        scoped(&self.device, "binding the split's buffers", || {
            let slots = plan.destination_slots();
            let kernel = self.kernels.get(
                &self.device,
                plan.kernel(),
                plan.placement(),
                slots,
                plan.generated_layout(),
            );
            let groups = plan
                .passes()
                .iter()
                .zip(&bound.passes)
                .map(|(pass, b)| {
                    let group =
                        self.bind_group(&kernel.layout, plan, &table, pass, b, input, destinations);
                    (group, pass.workgroups)
                })
                .collect();
            PreparedSplit::new(kernel.pipeline.clone(), groups)
        })
    }

    /// The table buffer for a bound plan, uploaded once per distinct table.
    fn table_buffer(&self, plan: &SplitPlan, bound: &BoundPlan<'_>) -> Result<Arc<wgpu::Buffer>> {
        let content: &[u8] = &bound.table;
        let key = match bound.table {
            std::borrow::Cow::Borrowed(_) => plan.table_fingerprint(),
            std::borrow::Cow::Owned(_) => crate::plan::fingerprint(content),
        };
        if let Some(buffer) = self.lock_tables().get(key, content) {
            return Ok(buffer);
        }
        let buffer = Arc::new(buffer_with_contents(
            &self.device,
            "wgpu-split table",
            content,
            content.len() as u64,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
        )?);
        self.lock_tables()
            .insert(self.policy, key, content, buffer.clone());
        Ok(buffer)
    }

    /// The bind group of one pass: the table slice, the input window and one
    /// window per destination slot (spare slots bind the splitter's own
    /// buffer).
    #[allow(clippy::too_many_arguments)]
    fn bind_group(
        &self,
        layout: &wgpu::BindGroupLayout,
        plan: &SplitPlan,
        table: &wgpu::Buffer,
        pass: &Pass,
        bound: &PassBindings,
        input: &BufferRegion<'_>,
        destinations: &[BufferRegion<'_>],
    ) -> wgpu::BindGroup {
        let binding = |buffer, range: &std::ops::Range<u64>| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: range.start,
                size: wgpu::BufferSize::new(range.end - range.start),
            })
        };
        let kernel = plan.kernel();
        let slots = plan.destination_slots();
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: binding(table, &pass.table_bytes),
            },
            wgpu::BindGroupEntry {
                binding: kernel.src_binding(),
                resource: binding(input.buffer, &bound.src),
            },
        ];
        let spare = 0..self.spare.size();
        for slot in 0..slots {
            let resource = match bound.dst.get(slot as usize) {
                Some((destination, range)) => binding(destinations[*destination].buffer, range),
                None => binding(&self.spare, &spare),
            };
            entries.push(wgpu::BindGroupEntry {
                binding: kernel.dst_binding(slot, slots),
                resource,
            });
        }
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-split pass"),
            layout,
            entries: &entries,
        })
    }
}
