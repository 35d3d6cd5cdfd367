//! What a plan needs of the caller's buffers, known before anything is
//! encoded, in one value ([`Requirements`]): the input's bytes and usages,
//! each destination's bytes and usages, the alignment of every offset, and
//! the commands an encode records.

use crate::plan::binding::usages::{BufferRole, Usages};
use crate::plan::geometry::Direction;
use crate::plan::split_plan::SplitPlan;

/// What a plan needs of the caller's buffers and what it records
/// ([`SplitPlan::requirements`]), known before anything is encoded.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{PlanLimits, PlanOptions, SplitPlan, Strategy};
/// use wgpu_split::{ElementType, OnnxSplit};
///
/// let split = OnnxSplit::new(18, 3).axis(1).num_outputs(3).resolve(&[8, 12]).unwrap();
/// let options = PlanOptions::default().strategy(Strategy::Gather);
/// let plan = SplitPlan::new(&split, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
/// let needs = plan.requirements();
/// assert_eq!(needs.destinations.len(), 3);
/// assert_eq!(needs.destinations[0].bytes, 8 * 4 * 4);
/// assert!(needs.input_usages.storage && needs.destinations[0].usages.storage);
/// assert_eq!((needs.dispatches, needs.copies), (1, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirements {
    /// Bytes the input region must hold (the packed input).
    pub input_bytes: u64,
    /// Bytes of the input's buffer the plan may bind from the input's
    /// offset: the input rounded up to a word (read, never used).
    pub input_binding_bytes: u64,
    /// The usages the input's buffer needs.
    pub input_usages: Usages,
    /// One per destination an encode takes: one per output, or the arena.
    pub destinations: Vec<DestinationRequirement>,
    /// The multiple every offset (input and destinations) must be: 16 when
    /// dispatches move vec4 units, else 4.
    pub offset_alignment_bytes: u64,
    /// Dispatches an encode records.
    pub dispatches: usize,
    /// Copy commands an encode records.
    pub copies: u64,
    /// Bytes of scratch the splitter provides (and keeps under its
    /// [`crate::gpu::CachePolicy`]) for a staged plan: 0 for any other
    /// ([`SplitPlan::is_staged`]).
    pub scratch_bytes: u64,
}

/// What one destination needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DestinationRequirement {
    /// Which it is (an output, or the arena).
    pub role: BufferRole,
    /// Bytes its region must hold from its offset (an empty output: 0).
    pub bytes: u64,
    /// The usages its buffer needs (none for an empty output).
    pub usages: Usages,
}

impl SplitPlan {
    /// What the plan needs of the caller's buffers and what an encode of it
    /// records, in one value.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            input_bytes: self.input_bytes(),
            input_binding_bytes: self.input_binding_bytes(),
            input_usages: self.input_usages(),
            destinations: (0..self.destination_count())
                .map(|i| DestinationRequirement {
                    role: self.destination_role(i),
                    bytes: self.destination_bytes(i),
                    usages: self.destination_usages(i),
                })
                .collect(),
            offset_alignment_bytes: self.offset_alignment_bytes(),
            dispatches: self.dispatch_count(),
            copies: self.copy_count(),
            scratch_bytes: self.scratch_bytes(),
        }
    }

    analysis_pub! {
        /// Destinations an encode takes: one per output, or one arena.
        pub fn destination_count(&self) -> usize {
            self.placement().destination_count(self.outputs().len())
        }
    }

    analysis_pub! {
        /// The multiple every offset (input and destinations) must be: 16 bytes
        /// when the dispatches move vec4 units, else 4 (copies and word
        /// bindings). Unlike bindings, offsets need not be multiples of
        /// `min_storage_buffer_offset_alignment`.
        pub fn offset_alignment_bytes(&self) -> u64 {
            if let Some((stage, unstage)) = self.staged_plans() {
                return stage
                    .offset_alignment_bytes()
                    .max(unstage.offset_alignment_bytes());
            }
            if self.kernel().unit_bits() == 128 && self.dispatch_count() > 0 {
                16
            } else {
                4
            }
        }
    }

    analysis_pub! {
        /// The usages the input's buffer needs: storage when the plan
        /// dispatches, copy source when it copies (copy destination for a
        /// concat, which writes the tensor).
        pub fn input_usages(&self) -> Usages {
            if let Some((stage, _)) = self.staged_plans() {
                return stage.input_usages();
            }
            let copies = self.copy_count() > 0;
            let concat = self.direction() == Direction::Concat;
            Usages {
                storage: self.dispatch_count() > 0,
                copy_src: copies && !concat,
                copy_dst: copies && concat,
            }
        }
    }

    analysis_pub! {
        /// The usages output `index`'s destination needs: storage when the
        /// gather writes it, copy destination when it is copied, nothing when it
        /// is empty. For an arena plan, the arena's are the union over outputs
        /// ([`SplitPlan::destination_usages`]).
        pub fn output_usages(&self, index: usize) -> Usages {
            if let Some((_, unstage)) = self.staged_plans() {
                return unstage.output_usages(index);
            }
            let copied = !self.is_gathered(index) && self.copies().iter().any(|c| c.output == index);
            let concat = self.direction() == Direction::Concat;
            Usages {
                storage: self.is_gathered(index),
                copy_src: copied && concat,
                copy_dst: copied && !concat,
            }
        }
    }

    analysis_pub! {
        /// The usages destination `index` needs: output `index`'s, or for the
        /// arena the union over every output.
        pub fn destination_usages(&self, index: usize) -> Usages {
            if !self.placement().is_shared() {
                return self.output_usages(index);
            }
            (0..self.outputs().len())
                .map(|i| self.output_usages(i))
                .fold(Usages::NONE, Usages::union)
        }
    }

    analysis_pub! {
        /// Bytes destination `index` must hold from its offset: the output's
        /// [`crate::plan::PlannedOutput::region_bytes`], or the arena size.
        pub fn destination_bytes(&self, index: usize) -> u64 {
            if self.placement().is_shared() {
                return self.arena_bytes();
            }
            self.outputs().get(index).map_or(0, |o| o.region_bytes)
        }
    }
}
