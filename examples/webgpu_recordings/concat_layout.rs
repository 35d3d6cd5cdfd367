//! Where a concat recording's regions lie: the output in buffer 0 (alone,
//! exactly its size; or from byte 16 of a page with guard bytes after it),
//! the inputs (or the arena) in buffers of their own, in one page packed
//! at 4 or 16 bytes, or after the output in its page; inputs of one shape
//! may share one region (a tensor given several times). Pages hold guard
//! bytes: 16 before the first region, the gaps between regions, 64 after
//! the last.

use wgpu_split::ResolvedConcat;
use wgpu_split::plan::internals::PlainRegion;
use wgpu_split::plan::{ConcatPlan, Placement, Usages};

/// How the inputs of a concat recording are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConcatLayout {
    /// Each input (or the arena) in a buffer of its own.
    OwnBuffers,
    /// Every input in one page from byte 16, `step` bytes apart at least.
    Page(u64),
    /// The output at byte 16 of a page and every input after it, from one
    /// binding alignment (256) past its end, `step` bytes apart at least
    /// (plans without copies: a copy cannot stay inside one buffer).
    WithOutput(u64),
    /// Inputs of one shape share the first one's region (a tensor given
    /// several times): in a page at 16 bytes, or (`true`) after the output
    /// in its page.
    Aliased(bool),
}

/// The regions of a concat recording: the output's, one per concat input
/// (or the one arena) as an encode takes them, and per concat input the
/// input whose bytes it holds (itself, or the first of its shape where
/// regions are shared).
pub struct ConcatRegions {
    pub output: PlainRegion,
    pub inputs: Vec<PlainRegion>,
    pub holds: Vec<usize>,
}

impl ConcatLayout {
    /// The layouts of `plan`, by name: the output's page only for plans
    /// without copies, shared regions only where two inputs have one shape.
    pub fn all(plan: &ConcatPlan, concat: &ResolvedConcat) -> Vec<(&'static str, ConcatLayout)> {
        let mut layouts = vec![
            ("own buffers", ConcatLayout::OwnBuffers),
            ("page at 4", ConcatLayout::Page(4)),
            ("page at 16", ConcatLayout::Page(16)),
        ];
        let copies = plan.copy_count() > 0;
        if !copies {
            layouts.push(("output's page", ConcatLayout::WithOutput(16)));
        }
        let shared = (0..concat.input_shapes().len()).any(|k| first_of_shape(concat, k) != k);
        if shared && plan.placement() == Placement::Separate {
            layouts.push(("aliased", ConcatLayout::Aliased(false)));
            if !copies {
                layouts.push(("aliased in the output's page", ConcatLayout::Aliased(true)));
            }
        }
        layouts
    }
}

/// The first input that takes part and has input `k`'s shape (`k` itself
/// for one that takes no part).
fn first_of_shape(concat: &ResolvedConcat, k: usize) -> usize {
    let shapes = concat.input_shapes();
    let takes_part = |i: usize| concat.mirror_output(i).is_some();
    if !takes_part(k) {
        return k;
    }
    (0..k)
        .find(|&i| takes_part(i) && shapes[i] == shapes[k])
        .unwrap_or(k)
}

/// Usages no buffer lacks: a buffer needs one.
fn nonzero(u: Usages) -> Usages {
    if u.is_empty() {
        Usages {
            copy_dst: true,
            ..u
        }
    } else {
        u
    }
}

/// The regions of `plan` (planned for `concat`) in `layout`, each buffer
/// with exactly the usages the plan states.
pub fn concat_regions(
    plan: &ConcatPlan,
    concat: &ResolvedConcat,
    layout: ConcatLayout,
) -> ConcatRegions {
    let needs = plan.requirements();
    let count = concat.input_shapes().len();
    let arena = plan.placement() == Placement::Arena;
    let holds: Vec<usize> = match layout {
        ConcatLayout::Aliased(_) => (0..count).map(|k| first_of_shape(concat, k)).collect(),
        _ => (0..count).collect(),
    };
    // The regions to place: the arena, or every input that holds its own
    // bytes and takes part.
    let placed: Vec<usize> = if arena {
        vec![0]
    } else {
        (0..count)
            .filter(|&k| holds[k] == k && concat.mirror_output(k).is_some())
            .collect()
    };
    let binding = needs.output_region_bytes.next_multiple_of(4).max(4);
    let mut output = PlainRegion {
        buffer: 0,
        buffer_size: binding,
        usages: nonzero(needs.output_usages),
        offset: 0,
        size: needs.output_region_bytes,
    };
    let (in_output_page, step) = match layout {
        ConcatLayout::OwnBuffers => (false, 0),
        ConcatLayout::Page(step) => (false, step),
        ConcatLayout::WithOutput(step) => (true, step),
        ConcatLayout::Aliased(with_output) => (with_output, 16),
    };
    if layout != ConcatLayout::OwnBuffers {
        // The output from byte 16, guard bytes after it.
        output.offset = 16;
        output.buffer_size = 16 + binding + 64;
    }
    let mut regions: Vec<Option<PlainRegion>> = vec![None; count.max(1)];
    if layout == ConcatLayout::OwnBuffers {
        for (n, &k) in placed.iter().enumerate() {
            let size = needs.inputs[k].bytes;
            regions[k] = Some(PlainRegion {
                buffer: n + 1,
                buffer_size: size.max(4),
                usages: nonzero(needs.inputs[k].usages),
                offset: 0,
                size,
            });
        }
    } else {
        let step = step.max(needs.offset_alignment_bytes);
        let mut end = if in_output_page {
            (16 + binding).next_multiple_of(256) + 16
        } else {
            16
        };
        let mut usages = Usages::NONE;
        let mut offsets = Vec::new();
        for &k in &placed {
            offsets.push(end);
            end = (end + needs.inputs[k].bytes).next_multiple_of(step);
            usages = usages.union(needs.inputs[k].usages);
        }
        let page_size = end + 64;
        if in_output_page {
            output.buffer_size = page_size;
            usages = usages.union(needs.output_usages);
            output.usages = nonzero(usages);
        }
        for (&k, offset) in placed.iter().zip(offsets) {
            regions[k] = Some(PlainRegion {
                buffer: if in_output_page { 0 } else { 1 },
                buffer_size: page_size,
                usages: nonzero(usages),
                offset,
                size: needs.inputs[k].bytes,
            });
        }
    }
    // An input that takes no part: an empty region the encode ignores.
    let empty = PlainRegion {
        size: 0,
        offset: 0,
        ..output
    };
    let inputs = if arena {
        vec![regions[0].expect("the arena is placed")]
    } else {
        (0..count)
            .map(|k| regions[holds[k]].unwrap_or(empty))
            .collect()
    };
    ConcatRegions {
        output,
        inputs,
        holds,
    }
}
