//! Regions of caller buffers, and what the planner's checks need of them
//! (plain numbers: a buffer number, sizes, usages).

use std::collections::HashMap;
use std::ops::Range;

use crate::plan::Usages;
use crate::plan::binding::regions::PlainRegion;

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
    ///
    /// `None` for an empty region (an empty output): WebGPU has no empty
    /// binding, and a binding without a size would take the rest of the
    /// buffer.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # let ctx = wgpu_split::gpu::GpuContext::new_default()?;
    /// # let page = ctx.device.create_buffer(&wgpu::BufferDescriptor {
    /// #     label: None, size: 256, usage: wgpu::BufferUsages::STORAGE, mapped_at_creation: false });
    /// use wgpu_split::gpu::BufferRegion;
    ///
    /// let half = BufferRegion::new(&page, 0, 18).binding().unwrap();
    /// assert_eq!(half.size.map(u64::from), Some(20));
    /// assert!(BufferRegion::new(&page, 64, 0).binding().is_none());
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    pub fn binding(&self) -> Option<wgpu::BufferBinding<'a>> {
        Some(wgpu::BufferBinding {
            buffer: self.buffer,
            offset: self.offset,
            size: Some(wgpu::BufferSize::new(self.size.div_ceil(4) * 4)?),
        })
    }
}

/// The usages of a wgpu buffer, as the planner names them.
pub(crate) fn usages_of(buffer: &wgpu::Buffer) -> Usages {
    let usage = buffer.usage();
    Usages {
        storage: usage.contains(wgpu::BufferUsages::STORAGE),
        copy_src: usage.contains(wgpu::BufferUsages::COPY_SRC),
        copy_dst: usage.contains(wgpu::BufferUsages::COPY_DST),
    }
}

/// The wgpu usages of planner usages.
impl From<Usages> for wgpu::BufferUsages {
    fn from(usages: Usages) -> wgpu::BufferUsages {
        let mut flags = wgpu::BufferUsages::empty();
        for (set, flag) in [
            (usages.storage, wgpu::BufferUsages::STORAGE),
            (usages.copy_src, wgpu::BufferUsages::COPY_SRC),
            (usages.copy_dst, wgpu::BufferUsages::COPY_DST),
        ] {
            if set {
                flags |= flag;
            }
        }
        flags
    }
}

/// An encode's input and destinations as plain regions for the planner's
/// checks: buffers are numbered so that regions of one buffer share a
/// number.
pub(crate) fn plain_regions<'a>(
    input: &BufferRegion<'a>,
    destinations: &[BufferRegion<'a>],
) -> (PlainRegion, Vec<PlainRegion>) {
    // wgpu buffers hash and compare by their id, not by their mutable state.
    #[allow(clippy::mutable_key_type)]
    let mut buffers: HashMap<&wgpu::Buffer, usize> = HashMap::new();
    let mut plain = |r: &BufferRegion<'a>| {
        let next = buffers.len();
        let buffer = *buffers.entry(r.buffer).or_insert(next);
        PlainRegion {
            buffer,
            buffer_size: r.buffer.size(),
            usages: usages_of(r.buffer),
            offset: r.offset,
            size: r.size,
        }
    };
    let input = plain(input);
    let destinations = destinations.iter().map(&mut plain).collect();
    (input, destinations)
}
