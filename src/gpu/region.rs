//! Regions of caller buffers, and the checks that turn misuse into typed
//! errors before wgpu sees anything.

use crate::error::{Error, Result};
use crate::plan::{PlanLimits, SplitPlan};

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

/// Checks an encode's buffers against the plan and the device.
///
/// # Errors
///
/// [`Error::PlanMismatch`], [`Error::InputIsArena`], [`Error::MissingUsage`],
/// [`Error::MisalignedOffset`], [`Error::BufferTooSmall`].
pub(crate) fn check_encode(
    device_limits: &PlanLimits,
    plan: &SplitPlan,
    input: BufferRegion<'_>,
    arena: BufferRegion<'_>,
) -> Result<()> {
    if !plan.limits().fits_within(device_limits) {
        return Err(Error::PlanMismatch {
            detail: format!(
                "planned for {:?}, which this device's {device_limits:?} does not allow",
                plan.limits()
            ),
        });
    }
    if input.buffer == arena.buffer {
        return Err(Error::InputIsArena);
    }
    let alignment = u64::from(device_limits.min_storage_buffer_offset_alignment);
    let (copies, gathers) = (!plan.copies().is_empty(), !plan.passes().is_empty());
    let wanted = |copy_usage| {
        let mut usage = wgpu::BufferUsages::empty();
        if gathers {
            usage |= wgpu::BufferUsages::STORAGE;
        }
        if copies {
            usage |= copy_usage;
        }
        usage
    };
    for (which, region, needed, usage) in [
        (
            "input",
            input,
            plan.input_binding_bytes(),
            wanted(wgpu::BufferUsages::COPY_SRC),
        ),
        (
            "arena",
            arena,
            plan.arena_bytes(),
            wanted(wgpu::BufferUsages::COPY_DST),
        ),
    ] {
        check_region(which, region, needed, usage, alignment)?;
    }
    Ok(())
}

/// One region: usages, offset alignment and size.
fn check_region(
    which: &'static str,
    region: BufferRegion<'_>,
    needed: u64,
    usage: wgpu::BufferUsages,
    alignment: u64,
) -> Result<()> {
    let missing = usage - region.buffer.usage();
    if !missing.is_empty() {
        return Err(Error::MissingUsage {
            which,
            missing: usage_names(missing),
        });
    }
    if !region.offset.is_multiple_of(alignment) {
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
    Ok(())
}

/// `STORAGE | COPY_SRC`-style names of usage flags.
pub(crate) fn usage_names(usage: wgpu::BufferUsages) -> String {
    usage
        .iter_names()
        .map(|(name, _)| name)
        .collect::<Vec<_>>()
        .join(" | ")
}
