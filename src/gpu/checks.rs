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

/// A buffer an encode uses, with the role errors name it by.
pub(crate) type Used<'a> = (BufferRole, &'a wgpu::Buffer);

/// The two ends of a copy command an encode records: (buffer, offset) of
/// its source, then of its destination.
pub(crate) type CopyEnds<'a> = [(&'a wgpu::Buffer, u64); 2];

/// The buffers a split's encode uses (its tensor and each non-empty
/// destination), and the ends of the first copy command into or out of
/// each copied destination.
fn split_uses<'a>(
    plan: &SplitPlan,
    input: &BufferRegion<'a>,
    destinations: &[BufferRegion<'a>],
) -> (Vec<Used<'a>>, Vec<CopyEnds<'a>>) {
    let mut used = vec![(plan.tensor_role(), input.buffer)];
    for (i, region) in destinations.iter().enumerate() {
        if plan.destination_bytes(i) > 0 {
            used.push((plan.destination_role(i), region.buffer));
        }
    }
    let mut probed = vec![false; destinations.len()];
    let mut copies = Vec::new();
    for c in plan.copy_commands() {
        if std::mem::replace(&mut probed[c.destination], true) {
            continue;
        }
        let d = &destinations[c.destination];
        copies.push(c.ends(
            plan.direction(),
            (input.buffer, input.offset),
            (d.buffer, d.offset),
        ));
    }
    (used, copies)
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

/// Every check of a split's (or concat's) encode that needs wgpu: no
/// buffer mapped or destroyed, and every buffer copy commands touch of this
/// device.
pub(crate) fn probe_buffers(
    resources: &Resources,
    bound: &BoundPlan<'_>,
    input: &BufferRegion<'_>,
    destinations: &[BufferRegion<'_>],
) -> Result<()> {
    let (used, copies) = split_uses(bound.plan(), input, destinations);
    probe(resources, used, &copies)
}

/// The checks every move's encode makes before it records anything: each
/// buffer in `used` (once, named by its first role) neither mapped nor
/// destroyed nor invalid ([`check_usable`]), and, where the encode records
/// copy commands, their buffers of this device ([`probe_copies`]); the
/// buffers dispatches bind are validated by their bind groups, inside the
/// encode's error scope.
pub(crate) fn probe(
    resources: &Resources,
    mut used: Vec<Used<'_>>,
    copies: &[CopyEnds<'_>],
) -> Result<()> {
    used.sort_by_key(|&(_, buffer)| buffer);
    used.dedup_by(|(_, a), (_, b)| a == b);
    for (which, buffer) in used {
        check_usable(which, buffer)?;
    }
    if !copies.is_empty() {
        probe_copies(resources, copies)?;
    }
    Ok(())
}

/// Records, for each pair of ends, one 4-byte copy from its source and one
/// into its destination into a scratch encoder that is never submitted,
/// and finishes it inside error scopes: wgpu checks a copy's buffers'
/// device and usages when its encoder finishes, and nothing is written.
fn probe_copies(resources: &Resources, copies: &[CopyEnds<'_>]) -> Result<()> {
    let scratch = &resources.spare;
    let scope = ErrorScope::open(&resources.device);
    let mut encoder = resources
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("wgpu-split probe (never submitted)"),
        });
    for &[(source, from), (destination, to)] in copies {
        encoder.copy_buffer_to_buffer(source, from, scratch, 0, 4);
        encoder.copy_buffer_to_buffer(scratch, 0, destination, to, 4);
    }
    drop(encoder.finish());
    Ok(scope.close("checking the copies' buffers", ())?)
}
