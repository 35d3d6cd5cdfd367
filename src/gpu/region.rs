//! Regions of caller buffers, and the checks that turn misuse into typed
//! errors before wgpu sees anything.

use std::ops::Range;

use crate::error::{BufferRole, Error, Result};
use crate::plan::{Outputs, PlanLimits, SplitPlan};

/// A region of a caller's buffer: the buffer, a byte offset and a length.
/// A tensor in a buffer of its own is [`BufferRegion::whole`]; a slice of a
/// pooled page is [`BufferRegion::new`].
#[derive(Debug, Clone, Copy)]
pub struct BufferRegion<'a> {
    /// The buffer.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset of the region inside the buffer.
    pub offset: u64,
    /// Length of the region in bytes. The split never writes outside
    /// `[offset, offset + size)`.
    pub size: u64,
}

impl<'a> BufferRegion<'a> {
    /// The whole buffer.
    pub fn whole(buffer: &'a wgpu::Buffer) -> Self {
        BufferRegion {
            buffer,
            offset: 0,
            size: buffer.size(),
        }
    }

    /// `size` bytes of `buffer` from `offset`.
    pub fn new(buffer: &'a wgpu::Buffer, offset: u64, size: u64) -> Self {
        BufferRegion {
            buffer,
            offset,
            size,
        }
    }

    /// The part `range` of this region (relative to its offset), e.g. an
    /// output's [`crate::plan::PlannedOutput::arena_range`] in an arena.
    pub fn slice(&self, range: Range<u64>) -> Self {
        BufferRegion {
            buffer: self.buffer,
            offset: self.offset + range.start,
            size: range.end.saturating_sub(range.start),
        }
    }

    /// A storage binding of the region that a consumer kernel can use as it
    /// is: wgpu wants binding sizes in whole 4-byte words, so the size is
    /// rounded up (an f16 output of 18 bytes binds 20). The split's regions
    /// hold that word (see [`crate::plan::PlannedOutput::region_bytes`]).
    /// The offset must suit the consumer's binding
    /// (`min_storage_buffer_offset_alignment`).
    pub fn binding(&self) -> wgpu::BufferBinding<'a> {
        wgpu::BufferBinding {
            buffer: self.buffer,
            offset: self.offset,
            size: wgpu::BufferSize::new(self.size.div_ceil(4) * 4),
        }
    }

    fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.size)
    }
}

/// Checks an encode's buffers against the plan and the device: limits,
/// region count, usages, offsets, sizes, overlaps.
///
/// # Errors
///
/// [`Error::PlanMismatch`], [`Error::RegionCount`], [`Error::MissingUsage`],
/// [`Error::MisalignedOffset`], [`Error::BufferTooSmall`],
/// [`Error::RegionOutsideBuffer`], [`Error::InputSharesBuffer`],
/// [`Error::OverlappingRegions`].
pub(crate) fn check_encode(
    device_limits: &PlanLimits,
    plan: &SplitPlan,
    input: &BufferRegion<'_>,
    destinations: &[BufferRegion<'_>],
) -> Result<()> {
    if !plan.limits().fits_within(device_limits) {
        return Err(Error::PlanMismatch {
            detail: format!(
                "planned for {:?}, which this device's {device_limits:?} does not allow",
                plan.limits()
            ),
        });
    }
    if destinations.len() != plan.destination_count() {
        return Err(Error::RegionCount {
            expected: plan.destination_count(),
            actual: destinations.len(),
        });
    }
    check_input(plan, input)?;
    for (i, region) in destinations.iter().enumerate() {
        check_destination(plan, i, region, input)?;
    }
    check_overlaps(plan, destinations)
}

/// Usages, alignment, size and extent of the input region.
fn check_input(plan: &SplitPlan, input: &BufferRegion<'_>) -> Result<()> {
    let which = BufferRole::Input;
    check_usages(plan, which, input.buffer, plan.input_usages())?;
    check_alignment(plan, which, input.offset)?;
    if input.size < plan.input_bytes() {
        return Err(Error::BufferTooSmall {
            which,
            size: input.size,
            needed: plan.input_bytes(),
            why: format!("the packed {} input", plan.element_type()),
        });
    }
    // Dispatches bind the input rounded up to a word, which the buffer (not
    // necessarily the region: the extra bytes are read, never used) holds.
    let bound = if plan.dispatch_count() > 0 {
        plan.input_binding_bytes()
    } else {
        plan.input_bytes()
    };
    let end = input.offset.checked_add(bound.max(input.size));
    if end.is_none_or(|end| end > input.buffer.size()) {
        return Err(Error::RegionOutsideBuffer {
            which,
            offset: input.offset,
            size: bound.max(input.size),
            buffer_size: input.buffer.size(),
        });
    }
    Ok(())
}

/// Usages, alignment, size and extent of destination `i`, which must not
/// share the input's buffer.
fn check_destination(
    plan: &SplitPlan,
    i: usize,
    region: &BufferRegion<'_>,
    input: &BufferRegion<'_>,
) -> Result<()> {
    let needed = plan.destination_bytes(i);
    if needed == 0 {
        return Ok(()); // an empty output needs no bytes and is never written
    }
    let which = destination_role(plan, i);
    if region.buffer == input.buffer {
        return Err(Error::InputSharesBuffer { which });
    }
    check_usages(plan, which, region.buffer, plan.destination_usages(i))?;
    check_alignment(plan, which, region.offset)?;
    if region.size < needed {
        let why = match plan.placement() {
            Outputs::Arena => "the arena plan's size".to_string(),
            Outputs::Separate => {
                let len = plan.outputs()[i].len_bytes;
                if needed == len {
                    "the packed output".to_string()
                } else {
                    format!("{len} bytes rounded up to the 4-byte word the split writes")
                }
            }
        };
        return Err(Error::BufferTooSmall {
            which,
            size: region.size,
            needed,
            why,
        });
    }
    if region.end().is_none_or(|end| end > region.buffer.size()) {
        return Err(Error::RegionOutsideBuffer {
            which,
            offset: region.offset,
            size: region.size,
            buffer_size: region.buffer.size(),
        });
    }
    Ok(())
}

fn destination_role(plan: &SplitPlan, i: usize) -> BufferRole {
    match plan.placement() {
        Outputs::Separate => BufferRole::Output(i),
        Outputs::Arena => BufferRole::Arena,
    }
}

/// The buffer has every usage the plan needs of it; the error says why.
fn check_usages(
    plan: &SplitPlan,
    which: BufferRole,
    buffer: &wgpu::Buffer,
    needed: wgpu::BufferUsages,
) -> Result<()> {
    let missing = needed - buffer.usage();
    if missing.is_empty() {
        return Ok(());
    }
    let why = if missing.contains(wgpu::BufferUsages::STORAGE) {
        format!(
            "this plan binds it as storage in {} dispatch(es); create it with STORAGE",
            plan.dispatch_count()
        )
    } else {
        let direction = if which == BufferRole::Input {
            "from"
        } else {
            "into"
        };
        format!(
            "this plan records {} copy command(s) {direction} it; add the usage, or plan with Strategy::Gather (dispatches only)",
            plan.copy_count()
        )
    };
    Err(Error::MissingUsage {
        which,
        missing: usage_names(missing),
        why,
    })
}

fn check_alignment(plan: &SplitPlan, which: BufferRole, offset: u64) -> Result<()> {
    let alignment = plan.offset_alignment_bytes();
    if offset.is_multiple_of(alignment) {
        return Ok(());
    }
    Err(Error::MisalignedOffset {
        which,
        offset,
        alignment,
        why: if alignment == 16 {
            "this plan moves 16-byte units"
        } else {
            "copies and storage bindings start on 4-byte words"
        },
    })
}

/// No two non-empty destination regions share a byte.
fn check_overlaps(plan: &SplitPlan, destinations: &[BufferRegion<'_>]) -> Result<()> {
    let mut used: Vec<(usize, &BufferRegion<'_>)> = destinations
        .iter()
        .enumerate()
        .filter(|(i, _)| plan.destination_bytes(*i) > 0)
        .collect();
    used.sort_by(|(_, a), (_, b)| a.buffer.cmp(b.buffer).then(a.offset.cmp(&b.offset)));
    for pair in used.windows(2) {
        let ((i, a), (j, b)) = (pair[0], pair[1]);
        if a.buffer == b.buffer && a.end().is_none_or(|end| end > b.offset) {
            return Err(Error::OverlappingRegions {
                first: i,
                second: j,
            });
        }
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
