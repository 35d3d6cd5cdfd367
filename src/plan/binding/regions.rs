//! The caller's regions as plain numbers, and every check an encode makes
//! of them before anything is recorded: count, usages, offsets, sizes,
//! extents, overlaps (the permuted plans compose theirs from
//! [`check_storage_region`] and [`first_overlap`]). Plain arithmetic, so the CPU emulator tests it; the
//! GPU side adds only what needs wgpu (mapped, destroyed, foreign buffers).

use crate::plan::binding::usages::{BufferRole, Usages};
use crate::plan::error::EncodeError;
use crate::plan::geometry::Direction;
use std::ops::Range;

use crate::plan::split_plan::SplitPlan;

/// A region of a caller's buffer, as plain numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainRegion {
    /// Which buffer: regions with the same number are in one buffer.
    pub buffer: usize,
    /// The buffer's size in bytes.
    pub buffer_size: u64,
    /// The buffer's usages.
    pub usages: Usages,
    /// Byte offset of the region in its buffer.
    pub offset: u64,
    /// Length of the region in bytes.
    pub size: u64,
}

impl PlainRegion {
    /// One past the region's last byte, if it fits `u64`.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.size)
    }
}

impl SplitPlan {
    /// Checks the caller's input region and destinations (one per output,
    /// or the arena) against the plan.
    ///
    /// # Errors
    ///
    /// In this order: [`EncodeError::RegionCount`]; for the input, then each
    /// non-empty destination: [`EncodeError::InputSharesBuffer`] (for a
    /// destination in the input's buffer that copies write or that overlaps
    /// the input), [`EncodeError::MissingUsage`], [`EncodeError::MisalignedOffset`],
    /// [`EncodeError::BufferTooSmall`], [`EncodeError::RegionOutsideBuffer`];
    /// then [`EncodeError::OverlappingRegions`].
    pub(crate) fn check_regions(
        &self,
        input: &PlainRegion,
        destinations: &[PlainRegion],
    ) -> Result<(), EncodeError> {
        let expected = self.destination_count();
        if destinations.len() != expected {
            return Err(EncodeError::RegionCount {
                expected,
                actual: destinations.len(),
            });
        }
        self.check_input(input)?;
        for (i, region) in destinations.iter().enumerate() {
            self.check_destination(i, region, input)?;
        }
        self.check_overlaps(destinations)
    }

    fn check_input(&self, input: &PlainRegion) -> Result<(), EncodeError> {
        let which = self.tensor_role();
        self.check_usages(which, input, self.input_usages())?;
        self.check_alignment(which, input.offset)?;
        // A concat's dispatches write the tensor's last word whole (its bits
        // past the tensor zero): its region holds that word.
        let concat = self.direction() == Direction::Concat;
        let needed = if concat && self.dispatch_count() > 0 {
            self.input_binding_bytes()
        } else {
            self.input_bytes()
        };
        if input.size < needed {
            return Err(EncodeError::BufferTooSmall {
                which,
                size: input.size,
                needed,
                why: format!(
                    "the packed {} {}",
                    self.element_type(),
                    if concat {
                        "output, rounded up to the word the concat writes last"
                    } else {
                        "input"
                    }
                ),
            });
        }
        // Dispatches bind the input rounded up to a word, which the buffer
        // (not necessarily the region: the extra bytes are read, never used)
        // holds.
        let bound = if self.dispatch_count() > 0 {
            self.input_binding_bytes()
        } else {
            self.input_bytes()
        };
        let size = bound.max(input.size);
        within_buffer(which, &PlainRegion { size, ..*input })
    }

    fn check_destination(
        &self,
        i: usize,
        region: &PlainRegion,
        input: &PlainRegion,
    ) -> Result<(), EncodeError> {
        let needed = self.destination_bytes(i);
        if needed == 0 {
            return Ok(()); // an empty output needs no bytes and is never written
        }
        let which = self.destination_role(i);
        if region.buffer == input.buffer {
            self.check_shared_with_input(i, region, input)?;
        }
        self.check_usages(which, region, self.destination_usages(i))?;
        self.check_alignment(which, region.offset)?;
        if region.size < needed {
            return Err(EncodeError::BufferTooSmall {
                which,
                size: region.size,
                needed,
                why: self.destination_size_reason(i, needed),
            });
        }
        within_buffer(which, region)
    }

    /// Destination `i` in the input's buffer: the dispatches may write it
    /// (they bind the source writable too, as WebGPU allows for bindings
    /// that do not overlap), copy commands may not, and its bytes may not
    /// overlap the input's.
    fn check_shared_with_input(
        &self,
        i: usize,
        region: &PlainRegion,
        input: &PlainRegion,
    ) -> Result<(), EncodeError> {
        let which = self.destination_role(i);
        let copied = self
            .copies()
            .iter()
            .any(|c| self.placement().destination_of(c.output) == i);
        if copied {
            return Err(EncodeError::InputSharesBuffer {
                which,
                why: "this plan copies into it, and copy_buffer_to_buffer cannot stay within \
                      one buffer (WebGPU and wgpu); plan with Strategy::Gather or use another \
                      buffer"
                    .to_string(),
            });
        }
        let input_end = input.offset + self.input_binding_bytes().max(input.size);
        let end = region.offset + region.size;
        if region.offset < input_end && input.offset < end {
            return Err(EncodeError::InputSharesBuffer {
                which,
                why: format!(
                    "its bytes {}..{end} overlap the input's {}..{input_end}",
                    region.offset, input.offset
                ),
            });
        }
        Ok(())
    }

    /// Why destination `i` needs `needed` bytes.
    fn destination_size_reason(&self, i: usize, needed: u64) -> String {
        if self.placement().is_shared() {
            return "the arena plan's size".to_string();
        }
        let len = self.outputs()[i].len_bytes;
        if needed == len {
            "the packed output".to_string()
        } else {
            format!("{len} bytes rounded up to the 4-byte word the split writes")
        }
    }

    /// The buffer has every usage the plan needs of it; the error says why.
    fn check_usages(
        &self,
        which: BufferRole,
        region: &PlainRegion,
        needed: Usages,
    ) -> Result<(), EncodeError> {
        let missing = needed.missing_from(region.usages);
        if missing.is_empty() {
            return Ok(());
        }
        let why = if missing.storage {
            format!(
                "this plan binds it as storage in {} dispatch(es); create it with STORAGE",
                self.dispatch_count()
            )
        } else {
            let direction = if missing.copy_src { "from" } else { "into" };
            format!(
                "this plan records {} copy command(s) {direction} it; add the usage, or plan with Strategy::Gather (dispatches only)",
                self.copy_count()
            )
        };
        Err(EncodeError::MissingUsage {
            which,
            missing,
            why,
        })
    }

    fn check_alignment(&self, which: BufferRole, offset: u64) -> Result<(), EncodeError> {
        let alignment = self.offset_alignment_bytes();
        if offset.is_multiple_of(alignment) {
            return Ok(());
        }
        Err(EncodeError::MisalignedOffset {
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

    /// No two non-empty destination regions share a byte (a concat reads
    /// its pieces: they may, as `torch.cat([x, x])` does).
    fn check_overlaps(&self, destinations: &[PlainRegion]) -> Result<(), EncodeError> {
        if self.direction() == Direction::Concat {
            return Ok(());
        }
        let used = destinations
            .iter()
            .enumerate()
            .filter(|(i, _)| self.destination_bytes(*i) > 0);
        match first_overlap(used.map(|(i, r)| (i, r.buffer, r.offset..r.end().unwrap_or(u64::MAX))))
        {
            Some((first, second)) => Err(EncodeError::OverlappingRegions { first, second }),
            None => Ok(()),
        }
    }
}

/// The first two of `spans` (each its number, its buffer and its bytes),
/// by buffer then start, that share a byte: sorted so, any two that do
/// make a neighbouring pair that does.
pub(crate) fn first_overlap(
    spans: impl Iterator<Item = (usize, usize, Range<u64>)>,
) -> Option<(usize, usize)> {
    let mut spans: Vec<_> = spans.filter(|(_, _, r)| !r.is_empty()).collect();
    spans.sort_by_key(|(_, buffer, r)| (*buffer, r.start));
    spans
        .windows(2)
        .find(|p| p[0].1 == p[1].1 && overlap(&p[0].2, &p[1].2))
        .map(|p| (p[0].0, p[1].0))
}

/// The region lies inside its buffer.
fn within_buffer(which: BufferRole, region: &PlainRegion) -> Result<(), EncodeError> {
    if region.end().is_some_and(|end| end <= region.buffer_size) {
        return Ok(());
    }
    Err(EncodeError::RegionOutsideBuffer {
        which,
        offset: region.offset,
        size: region.size,
        buffer_size: region.buffer_size,
    })
}

/// True when two byte ranges share a byte.
pub(crate) fn overlap(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

/// One region a permuted move binds as storage: its usage, its offset a
/// whole word, at least `needed` bytes, and `bound` bytes from its offset
/// inside its buffer.
pub(crate) fn check_storage_region(
    which: BufferRole,
    region: &PlainRegion,
    needed: u64,
    bound: u64,
    why: impl Fn() -> String,
) -> Result<(), EncodeError> {
    if !region.usages.storage {
        return Err(EncodeError::MissingUsage {
            which,
            missing: Usages {
                storage: true,
                copy_src: false,
                copy_dst: false,
            },
            why:
                "a permuted move binds it as a storage buffer; create it with BufferUsages::STORAGE"
                    .into(),
        });
    }
    if !region.offset.is_multiple_of(4) {
        return Err(EncodeError::MisalignedOffset {
            which,
            offset: region.offset,
            alignment: 4,
            why: "a permuted move reads and writes 32-bit words",
        });
    }
    if region.size < needed {
        return Err(EncodeError::BufferTooSmall {
            which,
            size: region.size,
            needed,
            why: why(),
        });
    }
    let size = bound.max(region.size);
    within_buffer(which, &PlainRegion { size, ..*region })
}
