//! From a plan and the caller's regions to concrete dispatches: which byte
//! ranges of the input and of each destination every dispatch binds, the
//! spare binding of each slot a dispatch leaves unused, and the table to
//! bind with them.
//!
//! WebGPU forbids two writable bindings of one dispatch that overlap in one
//! buffer (Dawn enforces it; wgpu 30 does not). Unused slots bind distinct
//! ranges of the spare buffer. Destinations packed closer than the binding
//! alignment in one buffer would overlap once their bindings start aligned
//! down. A table-driven plan then has its entries regrouped into
//! dispatches whose destinations do not overlap (`regroup`: about as many
//! dispatches as planned, one table of the same size); any other plan has
//! each such pass recorded as several dispatches of the same pipeline, each
//! writing destinations that do not overlap and leaving the others' entries
//! (`FLAG_SKIP`) to the next (`skipping`). Either table is a function of
//! the plan and of that grouping alone, which [`BoundPlan::table_identity`]
//! names, so a splitter uploads it once per plan and packing.
//!
//! A binding must start at a multiple of `min_storage_buffer_offset_alignment`
//! (256 bytes on WebGPU), but runtimes pack tensors at 4 or 16 bytes. So each
//! binding starts at the caller's offset aligned down and ends where its
//! window ends; the shader reads the difference off the binding's length
//! (`arrayLength` less the window's units, which the table holds). Tables
//! thus depend on the plan alone (and on the grouping, where destinations
//! would alias): one upload serves every offset. Plans keep one alignment
//! of room in every window for the difference.

pub(crate) mod copy_ends;
pub(crate) mod regions;
pub(crate) mod requirements;
pub(crate) mod usages;

mod regroup;
mod skipping;

use std::borrow::Cow;
use std::ops::Range;

use crate::kernels::shader::ShaderKey;
use crate::kernels::table::fingerprint;
use crate::plan::binding::regions::PlainRegion;
use crate::plan::binding::usages::BufferRole;
use crate::plan::error::EncodeError;
use crate::plan::geometry::Direction;
use crate::plan::geometry::{align_down, align_up};
use crate::plan::split_plan::SplitPlan;
use regroup::Regrouped;
use skipping::{Skipping, non_aliasing_groups};

/// What one destination slot of a dispatch binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotBinding {
    /// Destination `destination` (an output's region, or the arena): the
    /// bytes of its buffer bound (start aligned for binding).
    Destination {
        /// The destination.
        destination: usize,
        /// Bytes of its buffer bound.
        bytes: Range<u64>,
    },
    /// A slot the dispatch does not write: the splitter's spare buffer, at
    /// [`SplitPlan::spare_binding`].
    Spare,
}

/// One dispatch at concrete offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundDispatch {
    /// The plan's pass it runs (a regrouped dispatch: the pass of its first
    /// entry; every pass of a table-driven plan runs one module).
    pub pass: usize,
    /// Its table slice in [`BoundPlan::table`], in bytes.
    pub table_bytes: Range<u64>,
    /// The input bytes bound (start aligned for binding).
    pub src: Range<u64>,
    /// One binding per destination slot of the shader.
    pub dst: Vec<SlotBinding>,
    /// Workgroups in x and y (z is 1).
    pub workgroups: [u32; 2],
}

/// Where a bound plan's table comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TableSource {
    /// The plan's own table: no two destinations of a pass would alias.
    Plan,
    /// The plan's table with skipping copies of split passes appended.
    Skipping(Skipping),
    /// A table of its own, for the regrouped entries.
    Regrouped(Regrouped),
}

/// A plan bound to concrete regions: its dispatches, in recording order,
/// and the table they read (the plan's own, whatever the offsets, unless
/// destinations would alias: then one for the plan and that packing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPlan<'p> {
    /// The dispatches.
    pub dispatches: Vec<BoundDispatch>,
    /// True when a pass was split into dispatches that skip each other's
    /// entries: they run the module variant that tests `FLAG_SKIP`.
    pub skips: bool,
    /// True when the entries of a table-driven plan were regrouped into
    /// dispatches of their own (whose invocations are no pass's).
    pub regrouped: bool,
    /// True when a dispatch writes into the input's buffer: the source is
    /// bound `read_write` (WebGPU forbids one buffer bound read-only and
    /// writable in one dispatch, and allows writable bindings that do not
    /// overlap), in the module variant that declares it so.
    pub writable_source: bool,
    /// True when a binding starts before its caller's offset (an offset
    /// that is not a multiple of the binding alignment): the module variant
    /// that reads the shifts off the bindings' lengths.
    pub shifted: bool,
    plan: &'p SplitPlan,
    source: TableSource,
    table_len: u64,
}

impl<'p> BoundPlan<'p> {
    /// The modules the dispatches run, distinct, in the order they first
    /// run, and per dispatch the index of its module in that list: each
    /// pass's module, in the variant that skips entries when a pass was
    /// split and that binds the source writable when a destination shares
    /// its buffer.
    pub fn shaders(&self) -> (Vec<ShaderKey>, Vec<usize>) {
        let (keys, of_pass) = self.plan.pass_modules();
        let keys = keys
            .iter()
            .map(|key| {
                key.clone()
                    .skipping(self.skips)
                    .with_writable_source(self.writable_source)
                    .with_shifts(self.shifted)
            })
            .collect();
        let of_dispatch = self.dispatches.iter().map(|d| of_pass[d.pass]).collect();
        (keys, of_dispatch)
    }

    /// The parameter table to upload: the plan's own (borrowed), or, where
    /// destinations would alias, the one for this packing (built now).
    pub fn table(&self) -> Cow<'p, [u8]> {
        match &self.source {
            TableSource::Plan => Cow::Borrowed(self.plan.table()),
            TableSource::Skipping(s) => Cow::Owned(s.table(self.plan)),
            TableSource::Regrouped(r) => Cow::Owned(r.table(self.plan)),
        }
    }

    /// The length of [`BoundPlan::table`] in bytes, known without building
    /// it.
    pub fn table_len(&self) -> u64 {
        self.table_len
    }

    /// The table's key in a cache and what determines it: the plan's
    /// [`SplitPlan::table_fingerprint`] and table, or for the table of a
    /// packing, the fingerprint of (and) the plan's table fingerprint and
    /// length with the grouping of its entries into dispatches. Equal
    /// identities give equal tables, so a cache confirms a hit on the
    /// identity without building the table.
    pub fn table_identity(&self) -> (u64, Cow<'p, [u8]>) {
        let recipe = match &self.source {
            TableSource::Plan => {
                return (
                    self.plan.table_fingerprint(),
                    Cow::Borrowed(self.plan.table()),
                );
            }
            TableSource::Skipping(s) => s.recipe(1),
            TableSource::Regrouped(r) => r.recipe(2),
        };
        let fp = self.plan.table_fingerprint();
        let len = self.plan.table().len() as u64;
        let mut words = vec![fp as u32, (fp >> 32) as u32, len as u32, (len >> 32) as u32];
        words.extend_from_slice(&recipe);
        let identity: Vec<u8> = bytemuck::cast_slice(&words).to_vec();
        (fingerprint(&identity), Cow::Owned(identity))
    }

    /// Dispatches an encode records.
    pub fn dispatch_count(&self) -> usize {
        self.dispatches.len()
    }

    /// The plan bound.
    pub fn plan(&self) -> &'p SplitPlan {
        self.plan
    }

    /// Every copy command of the encode, in order, as its source and
    /// destination `(buffer, offset)` and its size, given where the
    /// tensor's region and each destination's region are.
    pub fn copies<'a, B: Copy + 'a>(
        &'a self,
        tensor: (B, u64),
        destinations: &'a [(B, u64)],
    ) -> impl Iterator<Item = ([(B, u64); 2], u64)> + 'a {
        self.plan.copies_between(tensor, destinations)
    }
}

/// The bytes one pass binds at concrete offsets: the input's, and per slot
/// the destination and its bytes.
pub(super) struct PassBytes {
    src: Range<u64>,
    dst: Vec<(usize, Range<u64>)>,
}
impl SplitPlan {
    analysis_pub! {
        /// Checks the caller's input region and destinations (one per output,
        /// or the arena) and binds the plan to them: what each dispatch binds,
        /// and the table it reads. Nothing is built that depends on more than
        /// the regions' numbers: a table for a packing is built only when
        /// asked for ([`BoundPlan::table`]). A staged plan's own bound plan
        /// checks the caller's regions and holds no dispatch: its two plans
        /// ([`SplitPlan::staged_plans`]) bind to the scratch and the
        /// regions, as an encode binds them.
        ///
        /// # Errors
        ///
        /// Every [`EncodeError`] of a region the plan cannot use: count,
        /// buffers shared with the input, usages, offsets, sizes, extents and
        /// overlaps, in that order.
        pub fn bind(
            &self,
            input: &PlainRegion,
            destinations: &[PlainRegion],
        ) -> Result<BoundPlan<'_>, EncodeError> {
            self.check_regions(input, destinations)?;
            let (passes, shifted) = self.pass_bytes(input, destinations);
            let writable_source = self.check_source_bindings(&passes, input, destinations)?;
            // A concat reads its pieces: read-only bindings may alias, unless a
            // piece shares the tensor's buffer (then all are bound writable).
            let reads_only = self.direction() == Direction::Concat && !writable_source;
            let groups: Vec<Vec<Vec<usize>>> = passes
                .iter()
                .map(|p| match reads_only {
                    true => vec![(0..p.dst.len()).collect()],
                    false => non_aliasing_groups(&p.dst, destinations),
                })
                .collect();
            let mut bound = BoundPlan {
                dispatches: Vec::new(),
                skips: false,
                regrouped: false,
                writable_source,
                shifted,
                plan: self,
                source: TableSource::Plan,
                table_len: self.table().len() as u64,
            };
            let aliasing = groups.iter().any(|g| g.len() > 1);
            let regrouped = aliasing
                .then(|| Regrouped::new(self, &passes, input, destinations, writable_source))
                .flatten();
            if let Some(regrouped) = regrouped {
                (bound.dispatches, bound.table_len) = regrouped.dispatches(self, &passes, input);
                bound.regrouped = true;
                bound.source = TableSource::Regrouped(regrouped);
            } else {
                let (dispatches, skipping, table_len) = Skipping::dispatches(self, passes, &groups);
                bound.dispatches = dispatches;
                bound.table_len = table_len;
                if aliasing {
                    bound.skips = true;
                    bound.source = TableSource::Skipping(skipping);
                }
            }
            Ok(bound)
        }
    }

    /// The bytes every pass binds at the regions' offsets, and whether a
    /// binding starts before its offset.
    fn pass_bytes(
        &self,
        input: &PlainRegion,
        destinations: &[PlainRegion],
    ) -> (Vec<PassBytes>, bool) {
        let align = self.limits().alignment_bytes();
        let mut shifted = false;
        let passes = self
            .passes()
            .iter()
            .map(|pass| {
                let src_start = input.offset + pass.src_window_bytes.start;
                shifted |= !src_start.is_multiple_of(align);
                let dst = pass
                    .dst_windows
                    .iter()
                    .map(|w| {
                        let start = destinations[w.destination].offset + w.bytes.start;
                        let end = start + (w.bytes.end - w.bytes.start);
                        shifted |= !start.is_multiple_of(align);
                        (w.destination, align_down(start, align)..end)
                    })
                    .collect();
                PassBytes {
                    src: align_down(src_start, align)..input.offset + pass.src_window_bytes.end,
                    dst,
                }
            })
            .collect();
        (passes, shifted)
    }

    /// The slot bindings of a dispatch of pass `pass`'s module that writes
    /// `written` (per slot: its destination and bytes) in its first slots;
    /// the rest bind the spare buffer.
    fn slot_bindings(
        &self,
        pass: usize,
        mut written: impl FnMut(usize) -> Option<(usize, Range<u64>)>,
    ) -> Vec<SlotBinding> {
        (0..self.pass_slots(pass) as usize)
            .map(|slot| match written(slot) {
                Some((destination, bytes)) => SlotBinding::Destination { destination, bytes },
                None => SlotBinding::Spare,
            })
            .collect()
    }

    /// Destinations in the input's buffer: their bindings may not overlap
    /// the source's (which start aligned down, so regions that do not
    /// overlap still may). Returns whether any dispatch binds one.
    fn check_source_bindings(
        &self,
        passes: &[PassBytes],
        input: &PlainRegion,
        destinations: &[PlainRegion],
    ) -> Result<bool, EncodeError> {
        let mut shared = false;
        for pass in passes {
            for (destination, bytes) in &pass.dst {
                if destinations[*destination].buffer != input.buffer {
                    continue;
                }
                shared = true;
                if bytes.start < pass.src.end && pass.src.start < bytes.end {
                    let align = self.limits().alignment_bytes();
                    return Err(EncodeError::InputSharesBuffer {
                        which: BufferRole::destination(self.placement(), *destination),
                        why: format!(
                            "bindings start at offsets aligned down to {align} bytes, so the \
                             input's binding {:?} overlaps its binding {bytes:?}; keep the \
                             two regions {align} bytes apart, or use another buffer",
                            pass.src
                        ),
                    });
                }
            }
        }
        Ok(shared)
    }

    /// The bytes of the splitter's spare buffer that unused destination
    /// slot `slot` binds: 16 bytes at a multiple of 256 (WebGPU's largest
    /// storage offset alignment) of its own, so that no two spare bindings
    /// of a dispatch overlap.
    pub fn spare_binding(&self, slot: usize) -> Range<u64> {
        let start = slot as u64 * 256;
        start..start + 16
    }
}

/// Where a table of `len` bytes may append a slice: the next multiple of
/// the plan's table alignment.
fn next_slice(plan: &SplitPlan, len: u64) -> u64 {
    align_up(len, plan.limits().table_alignment_bytes())
}
