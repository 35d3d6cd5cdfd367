//! Where a recording's regions lie: the input in buffer 0, the
//! destinations in buffers of their own (exactly their size), in one page
//! packed at 4 or 16 bytes, or after the input in its own page. Pages hold
//! guard bytes: 16 before the first region, the gaps between regions, 64
//! after the last.

use wgpu_split::plan::internals::PlainRegion;
use wgpu_split::plan::{SplitPlan, Usages};

/// How the destinations of a recording are laid out.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// Each destination in a buffer of its own.
    OwnBuffers,
    /// Every destination in one page from byte 16, `step` bytes apart at
    /// least.
    Page(u64),
    /// The input at byte 16 of a page and every destination after it,
    /// from one binding alignment (256) past its end, `step` bytes apart
    /// at least (plans without copies).
    WithInput(u64),
}

impl Layout {
    /// The layouts of `plan`, by name: the input's page only for plans
    /// without copies (a copy cannot stay inside one buffer).
    pub fn all(plan: &SplitPlan) -> Vec<(&'static str, Layout)> {
        let mut layouts = vec![
            ("own buffers", Layout::OwnBuffers),
            ("page at 4", Layout::Page(4)),
            ("page at 16", Layout::Page(16)),
        ];
        if plan.copy_count() == 0 {
            layouts.push(("input's page", Layout::WithInput(16)));
        }
        layouts
    }
}

/// The regions of `plan` in `layout`: the input in buffer 0, destinations
/// in buffers of their own or one page, each buffer with exactly the usages
/// the plan states.
pub fn regions(plan: &SplitPlan, layout: Layout) -> (PlainRegion, Vec<PlainRegion>) {
    let nonzero = |u: Usages| {
        if u.is_empty() {
            Usages {
                copy_dst: true,
                ..u
            }
        } else {
            u
        }
    };
    let input_size = plan.input_binding_bytes().max(4);
    let mut input = PlainRegion {
        buffer: 0,
        buffer_size: input_size,
        usages: nonzero(plan.input_usages()),
        offset: 0,
        size: plan.input_bytes(),
    };
    let count = plan.destination_count();
    let destinations = match layout {
        Layout::OwnBuffers => (0..count)
            .map(|i| {
                let size = plan.destination_bytes(i);
                PlainRegion {
                    buffer: i + 1,
                    buffer_size: size.max(4),
                    usages: nonzero(plan.destination_usages(i)),
                    offset: 0,
                    size,
                }
            })
            .collect(),
        Layout::Page(step) | Layout::WithInput(step) => {
            let step = step.max(plan.offset_alignment_bytes());
            let with_input = matches!(layout, Layout::WithInput(_));
            let mut end = if with_input {
                (16 + input_size).next_multiple_of(256) + 16
            } else {
                16
            };
            let mut usages = Usages::NONE;
            let mut offsets = Vec::with_capacity(count);
            for i in 0..count {
                offsets.push(end);
                end = (end + plan.destination_bytes(i)).next_multiple_of(step);
                usages = usages.union(plan.destination_usages(i));
            }
            // The guard after the last region.
            let page_size = end + 64;
            if with_input {
                input.offset = 16;
                input.buffer_size = page_size;
                usages = usages.union(plan.input_usages());
                input.usages = nonzero(usages);
            }
            (0..count)
                .map(|i| PlainRegion {
                    buffer: if with_input { 0 } else { 1 },
                    buffer_size: page_size,
                    usages: nonzero(usages),
                    offset: offsets[i],
                    size: plan.destination_bytes(i),
                })
                .collect()
        }
    };
    (input, destinations)
}
