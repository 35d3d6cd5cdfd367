//! Checks, before anything is recorded, of what wgpu would otherwise report
//! only at `finish` or `submit`: a mapped or destroyed buffer, and buffers
//! that only copy commands touch belonging to another device. Buffers bound
//! by a dispatch are also checked by wgpu itself when their bind group is
//! created, inside error scopes, on every encode.
//!
//! What wgpu 30 gives no way to know is documented, not guessed: a
//! `map_async` still pending (its buffer reads as unmapped), and a buffer of
//! another `wgpu::Instance` whose id names a buffer of this one.

use super::error::DeviceError;
use super::region::BufferRegion;
use super::resources::Resources;
use super::scope::ErrorScope;
use crate::error::Result;
use crate::plan::binding::BoundPlan;
use crate::plan::{BufferRole, SplitPlan};

/// The buffers an encode uses, each once, with the role it is named by.
fn used_buffers<'a>(
    plan: &SplitPlan,
    input: &BufferRegion<'a>,
    destinations: &[BufferRegion<'a>],
) -> Vec<(BufferRole, BufferRegion<'a>)> {
    let mut used = vec![(plan.tensor_role(), *input)];
    for (i, region) in destinations.iter().enumerate() {
        if plan.destination_bytes(i) > 0 {
            used.push((plan.destination_role(i), *region));
        }
    }
    used.sort_by(|(_, a), (_, b)| a.buffer.cmp(b.buffer));
    used.dedup_by(|(_, a), (_, b)| a.buffer == b.buffer);
    used
}

/// A mapped, destroyed or invalid buffer cannot be used by the GPU, and
/// wgpu says so only at `submit` when nothing binds it. wgpu 30 has no
/// `Buffer::map_state`, but asking for a mapped range tells: it succeeds
/// while the buffer is mapped (the view is dropped at once) and fails with
/// "already been mapped" while the caller holds a writable view; it fails
/// with "not mapped" for a usable buffer; any other failure (destroyed, an
/// invalid buffer whose creation failed, one made on a lost device) is
/// wgpu's own reason, reported as it is. The reasons are wgpu's messages,
/// so `tests/buffer_checks.rs` pins every case.
///
/// On the web the browser answers for an unmapped buffer: its
/// `getMappedRange` throws an `OperationError` for a buffer that is not
/// mapped, and equally for one destroyed or pending (WebGPU reports no
/// more synchronously), so those pass here; a buffer destroyed on the web
/// is reported by the error scopes the async forms await, and by the
/// browser at `submit` otherwise (the web suite pins both).
fn check_usable(which: BufferRole, buffer: &wgpu::Buffer) -> Result<(), DeviceError> {
    if buffer.size() < 4 {
        return Ok(()); // too small for any region; the region checks refuse it
    }
    let message = match buffer.slice(0..4).get_mapped_range() {
        Ok(_view) => return Err(DeviceError::BufferMapped { which }),
        Err(e) => e.to_string(),
    };
    let unmapped = if cfg!(target_arch = "wasm32") {
        "OperationError"
    } else {
        "is not mapped"
    };
    if message.contains(unmapped) {
        Ok(())
    } else if message.contains("already been mapped") || message.contains("pending") {
        Err(DeviceError::BufferMapped { which })
    } else {
        Err(DeviceError::Gpu {
            detail: format!("the {which} buffer cannot be used: {}", message.trim()),
        })
    }
}

/// Every check of an encode that needs wgpu: no buffer mapped or
/// destroyed, and every buffer copy commands touch of this device.
pub(crate) fn probe_buffers(
    resources: &Resources,
    bound: &BoundPlan<'_>,
    input: &BufferRegion<'_>,
    destinations: &[BufferRegion<'_>],
) -> Result<()> {
    let plan = bound.plan();
    for (which, region) in used_buffers(plan, input, destinations) {
        check_usable(which, region.buffer)?;
    }
    if plan.copy_count() > 0 {
        probe_copies(resources, plan, input, destinations)?;
    }
    Ok(())
}

/// Records, for the first copy command of each copied destination, one
/// 4-byte copy from its source and one into its destination into a scratch encoder that is never submitted, and
/// finishes it inside error scopes: wgpu checks a copy's buffers'
/// device and usages when its encoder finishes, and nothing is written.
/// (Dispatch-bound buffers are validated by their bind groups.)
fn probe_copies(
    resources: &Resources,
    plan: &SplitPlan,
    input: &BufferRegion<'_>,
    destinations: &[BufferRegion<'_>],
) -> Result<()> {
    let scratch = &resources.spare;
    let scope = ErrorScope::open(&resources.device);
    let mut encoder = resources
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("wgpu-split probe (never submitted)"),
        });
    // The tensor is read by a split's copies, written by a concat's; each
    // copied destination the other way.
    let mut probed = vec![false; destinations.len()];
    for c in plan.copy_commands() {
        if std::mem::replace(&mut probed[c.destination], true) {
            continue;
        }
        let d = &destinations[c.destination];
        let ends = c.ends(
            plan.direction(),
            (input.buffer, input.offset),
            (d.buffer, d.offset),
        );
        for (k, &(buffer, offset)) in ends.iter().enumerate() {
            let (src, dst) = if k == 0 {
                ((buffer, offset), (scratch, 0))
            } else {
                ((scratch, 0), (buffer, offset))
            };
            encoder.copy_buffer_to_buffer(src.0, src.1, dst.0, dst.1, 4);
        }
    }
    drop(encoder.finish());
    Ok(scope.close("checking the copies' buffers", ())?)
}
