//! A concat run in the emulator against the host path: the caller's
//! layouts (buffers of their own, a pooled page, a page packed at a step,
//! the output's page, inputs sharing one region), the output bit-exact and
//! its bytes past the tensor zero up to its region's end when the plan
//! dispatches, every other byte (the inputs, the guards) unchanged.

use wgpu_split::plan::{ConcatPlan, Placement};
use wgpu_split::{HostTensor, ResolvedConcat};

use super::super::Rng;
use super::{PlainRegion, emulate_concat, inside};

/// How the emulated caller lays out a concat's regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConcatLayout {
    /// The output, and every input (or the arena), in a buffer of its own
    /// at offset 0.
    OwnBuffers,
    /// Every input in one page at random offsets (multiples of the plan's
    /// offset alignment) with random gaps; the output at a random offset
    /// of another page.
    Pooled,
    /// Every input in one page from byte 16, `step` bytes apart at least
    /// (a runtime's pool); the output at byte 16 of another page.
    Packed(u64),
    /// The output and every input in one page: the inputs after the
    /// output, from one binding alignment past its end, with random gaps
    /// (plans without copies: a copy cannot stay in one buffer).
    WithOutput,
    /// Pooled, inputs of one shape sharing the first one's region: one
    /// tensor given several times (the check gives each the first's bytes).
    Aliased,
}

/// The first input that takes part and has input `k`'s shape (`k` itself
/// for one that takes no part).
fn first_of_shape(concat: &ResolvedConcat, k: usize) -> usize {
    let shapes = concat.input_shapes();
    let taking = |i: usize| concat.mirror_output(i).is_some();
    if !taking(k) {
        return k;
    }
    (0..k)
        .find(|&i| taking(i) && shapes[i] == shapes[k])
        .unwrap_or(k)
}

/// Runs `plan` (planned for `concat`) on `inputs` in the emulator with
/// `layout`, then checks the output bit-exactly against the host path,
/// its bytes past the tensor zero (when the plan dispatches), and every
/// byte outside the output's region unchanged. Returns the bound plan's
/// dispatch count.
pub fn check_emulated_concat(
    plan: &ConcatPlan,
    concat: &ResolvedConcat,
    inputs: &[HostTensor],
    layout: ConcatLayout,
    rng: &mut Rng,
    context: &str,
) -> usize {
    let needs = plan.requirements();
    let count = concat.input_shapes().len();
    let holds: Vec<usize> = (0..count)
        .map(|k| match layout {
            ConcatLayout::Aliased => first_of_shape(concat, k),
            _ => k,
        })
        .collect();
    let (mut memory, output) = output_page(plan, layout, rng);
    // The bytes each placed region holds: (region size, [(offset in it,
    // input)]).
    let arena = plan.placement() == Placement::Arena;
    let placed: Vec<(u64, Vec<(u64, usize)>)> = if arena {
        let at = plan.arena_offsets();
        let held = (0..count).filter_map(|k| at[k].map(|o| (o, k))).collect();
        vec![(needs.inputs[0].bytes, held)]
    } else {
        (0..count)
            .filter(|&k| holds[k] == k && concat.mirror_output(k).is_some())
            .map(|k| (needs.inputs[k].bytes, vec![(0, k)]))
            .collect()
    };
    let regions = place_inputs(plan, layout, &placed, &output, &mut memory, rng);
    for ((_, held), region) in placed.iter().zip(&regions) {
        for &(offset, k) in held {
            let bytes = inputs[k].as_bytes().unwrap();
            let at = (region.offset + offset) as usize;
            memory[region.buffer][at..at + bytes.len()].copy_from_slice(bytes);
        }
    }
    let encoded: Vec<PlainRegion> = if arena {
        regions
    } else {
        // An input that takes no part: an empty region, ignored.
        let mut by_input = vec![
            PlainRegion {
                buffer: 0,
                offset: 0,
                size: 0
            };
            count
        ];
        let mut next = regions.into_iter();
        for k in (0..count).filter(|&k| holds[k] == k && concat.mirror_output(k).is_some()) {
            by_input[k] = next.next().unwrap();
        }
        (0..count).map(|k| by_input[holds[k]]).collect()
    };
    let before = memory.clone();
    let dispatches = emulate_concat(plan, &mut memory, output, &encoded);
    let held: Vec<&HostTensor> = holds.iter().map(|&h| &inputs[h]).collect();
    let expected = HostTensor::concat(&held, concat).unwrap();
    let start = output.offset as usize;
    let end = start + needs.output_bytes as usize;
    assert!(
        memory[output.buffer][start..end] == *expected.as_bytes().unwrap(),
        "{context}: the output differs from the host concat's"
    );
    if needs.dispatches > 0 {
        let pad = &memory[output.buffer][end..(output.offset + output.size) as usize];
        assert!(
            pad.iter().all(|&b| b == 0),
            "{context}: bytes past the output {pad:?}"
        );
    }
    for (b, (after, before)) in memory.iter().zip(&before).enumerate() {
        let changed = (0..after.len()).find(|&at| {
            after[at] != before[at] && !(b == output.buffer && inside(&output, at as u64))
        });
        assert_eq!(
            changed, None,
            "{context}: a byte of buffer {b} outside the output changed"
        );
    }
    dispatches
}

/// Buffer 0, random bytes, holding the output's region (exactly the
/// region in `OwnBuffers`, else from a random or the 16th byte, with
/// guard bytes after it).
fn output_page(
    plan: &ConcatPlan,
    layout: ConcatLayout,
    rng: &mut Rng,
) -> (Vec<Vec<u8>>, PlainRegion) {
    let needs = plan.requirements();
    let align = needs.offset_alignment_bytes;
    let offset = match layout {
        ConcatLayout::OwnBuffers => 0,
        ConcatLayout::Packed(_) => 16u64.next_multiple_of(align),
        _ => rng.below(4) as u64 * align,
    };
    let size = needs.output_region_bytes;
    let page = (offset + size).next_multiple_of(4)
        + if layout == ConcatLayout::OwnBuffers {
            0
        } else {
            64
        };
    let output = PlainRegion {
        buffer: 0,
        offset,
        size,
    };
    (vec![rng.bytes(page.max(4) as usize)], output)
}

/// Places regions of the sizes `placed` gives as `layout` says (in
/// buffers after the output's, or after the output in its page), every
/// page's other bytes random; returns them in order.
fn place_inputs(
    plan: &ConcatPlan,
    layout: ConcatLayout,
    placed: &[(u64, Vec<(u64, usize)>)],
    output: &PlainRegion,
    memory: &mut Vec<Vec<u8>>,
    rng: &mut Rng,
) -> Vec<PlainRegion> {
    let align = plan.requirements().offset_alignment_bytes;
    if layout == ConcatLayout::OwnBuffers {
        return placed
            .iter()
            .map(|&(size, _)| {
                memory.push(rng.bytes(size.next_multiple_of(4).max(4) as usize));
                PlainRegion {
                    buffer: memory.len() - 1,
                    offset: 0,
                    size,
                }
            })
            .collect();
    }
    let with_output = layout == ConcatLayout::WithOutput;
    let binding_alignment = u64::from(plan.mirror().limits().min_storage_buffer_offset_alignment);
    let mut end = match layout {
        ConcatLayout::WithOutput => {
            (output.offset + output.size).next_multiple_of(4) + binding_alignment
        }
        _ => 16u64.next_multiple_of(align),
    };
    let buffer = if with_output { 0 } else { 1 };
    let mut regions = Vec::new();
    for &(size, _) in placed {
        let offset = match layout {
            ConcatLayout::Packed(step) => end.next_multiple_of(step.max(align)),
            _ => end.next_multiple_of(align) + rng.below(4) as u64 * align,
        };
        end = offset + size;
        regions.push(PlainRegion {
            buffer,
            offset,
            size,
        });
    }
    let page = end.next_multiple_of(4) as usize + 64;
    if with_output {
        let more = page.saturating_sub(memory[0].len());
        let tail = rng.bytes(more);
        memory[0].extend(tail);
    } else {
        memory.push(rng.bytes(page));
    }
    regions
}
