//! Staging: where burn's pool puts the outputs in the input's own page,
//! copy commands cannot read the input (a copy cannot stay within one
//! buffer). If the device's plan copies and the model says one more copy
//! of the whole input into a buffer of the splitter's own, followed by
//! that plan, beats the dispatch-only plan, the input goes through it.
//! A concat whose output burn put in an input's page is the mirror: the
//! copying plan writes the output into the staging buffer, and one more
//! copy moves it into burn's allocation.
//! On lavapipe, where a copy runs at 3-5x a kernel's speed, it does for
//! splits and concats of a few long runs; on GPUs the class models plan
//! dispatches and never stage.

use std::sync::Mutex;

use burn_cubecl::cubecl::wgpu::wgpu;
use wgpu_split::plan::{CostModel, SplitPlan};

/// True when staging `bytes` (a split's input, a concat's output) and
/// running `copying` costs less than running `dispatched` under `model`
/// (for a concat, the plans' mirror splits).
pub(crate) fn pays(
    model: &CostModel,
    copying: &SplitPlan,
    dispatched: &SplitPlan,
    bytes: u64,
) -> bool {
    let stage = model.copy_command_seconds
        + 2.0 * bytes as f64 / model.copy_bytes_per_second
        + model.host_seconds(1, 0);
    model.plan_cost(copying).total_seconds() + stage < model.plan_cost(dispatched).total_seconds()
}

/// The splitter's staging buffer: grown to the largest tensor staged,
/// reused by every split and concat (the queue runs them in order), freed
/// by [`crate::BurnSplitter::release_staging`]. A storage buffer too: a
/// copying plan may also dispatch for some of its pieces.
#[derive(Default)]
pub(crate) struct Staging(Mutex<Option<wgpu::Buffer>>);

impl Staging {
    /// A buffer of at least `bytes`.
    pub(crate) fn buffer(&self, device: &wgpu::Device, bytes: u64) -> wgpu::Buffer {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match &*held {
            Some(b) if b.size() >= bytes => b.clone(),
            _ => {
                // Powers of two, so that growing is rare, but never past
                // what the device allows (a staged tensor fits, as burn
                // allocated it).
                let size = bytes
                    .next_power_of_two()
                    .min(device.limits().max_buffer_size)
                    .max(bytes)
                    .max(256);
                let b = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("wgpu-split-burn staging"),
                    size,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                *held = Some(b.clone());
                b
            }
        }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> u64 {
        let held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        held.as_ref().map_or(0, wgpu::Buffer::size)
    }

    /// Drops the buffer (wgpu frees it once no submission uses it).
    pub(crate) fn release(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}
