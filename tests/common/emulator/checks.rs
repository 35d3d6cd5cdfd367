//! A split run in the emulator against the host path: the caller's
//! layouts (buffers of their own, a pooled page, the input's page), every
//! output bit-exact, its padding zero, every other byte unchanged.

use wgpu_split::plan::SplitPlan;
use wgpu_split::{HostTensor, ResolvedSplit};

use super::super::Rng;
use super::{PlainRegion, SENTINEL, emulate, inside};

/// How the emulated caller lays out its buffers.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// Every destination in a buffer of its own, at offset 0.
    OwnBuffers,
    /// Every destination in one shared page, at random offsets (multiples of
    /// the plan's offset alignment) with random gaps; the input in another
    /// page at a random offset.
    Pooled,
    /// The input and every destination in one page: the destinations after
    /// the input, from one binding alignment past its end (bindings start
    /// aligned down, and the input's may not overlap theirs), with random
    /// gaps. For plans without copies (a copy cannot stay in one buffer).
    WithInput,
}

/// Runs `plan` on `input` in the emulator with `layout`, then checks every
/// output bit-exactly against the host path, the padding bytes of each
/// region zero, and every byte outside the regions still its sentinel.
pub fn check_emulated(
    plan: &SplitPlan,
    input: &HostTensor,
    split: &ResolvedSplit,
    layout: Layout,
    rng: &mut Rng,
    context: &str,
) {
    let align = plan.offset_alignment_bytes();
    let gap = |rng: &mut Rng| rng.below(4) as u64 * align;
    let bytes = input.as_bytes().unwrap();
    // The input page: random bytes before, the tensor, random bytes after.
    let input_offset = gap(rng);
    let mut input_page = rng.bytes(input_offset as usize);
    input_page.extend_from_slice(bytes);
    input_page.extend(rng.bytes(64));
    let mut memory = vec![input_page];
    let input_region = PlainRegion {
        buffer: 0,
        offset: input_offset,
        size: bytes.len() as u64,
    };
    let mut destinations = Vec::new();
    let mut page_end = 0;
    if let Layout::WithInput = layout {
        let binding_alignment = plan.limits().min_storage_buffer_offset_alignment as u64;
        page_end = (input_offset + bytes.len() as u64).next_multiple_of(4) + binding_alignment;
    }
    for i in 0..plan.destination_count() {
        let size = plan.destination_bytes(i);
        let region = match layout {
            Layout::OwnBuffers => {
                memory.push(vec![SENTINEL; size as usize]);
                PlainRegion {
                    buffer: memory.len() - 1,
                    offset: 0,
                    size,
                }
            }
            Layout::Pooled | Layout::WithInput => {
                let offset = page_end + gap(rng);
                page_end = offset + size;
                PlainRegion {
                    buffer: if let Layout::WithInput = layout { 0 } else { 1 },
                    offset,
                    size,
                }
            }
        };
        destinations.push(region);
    }
    match layout {
        Layout::Pooled => memory.insert(1, vec![SENTINEL; (page_end + 64) as usize]),
        Layout::WithInput => memory[0].resize((page_end + 64) as usize, SENTINEL),
        Layout::OwnBuffers => {}
    }
    let before = memory.clone();
    emulate(plan, &mut memory, input_region, &destinations);
    let input_bytes = input_offset as usize..input_offset as usize + bytes.len();
    assert_eq!(
        memory[0][input_bytes.clone()],
        before[0][input_bytes],
        "{context}: the input is never written"
    );
    let expected = input.split(split).unwrap();
    for (i, (o, e)) in plan.outputs().iter().zip(&expected).enumerate() {
        assert_eq!(o.shape, e.shape(), "{context}: output {i} shape");
        let region = destinations[plan.placement().destination_of(i)];
        let start = region.offset + o.arena_offset_bytes;
        let got = &memory[region.buffer][start as usize..(start + o.len_bytes) as usize];
        assert_eq!(got, e.as_bytes().unwrap(), "{context}: output {i}");
        let pad = &memory[region.buffer]
            [(start + o.len_bytes) as usize..(start + o.region_bytes) as usize];
        assert!(
            pad.iter().all(|&b| b == 0),
            "{context}: output {i} padding {pad:?}"
        );
    }
    for (b, (after, before)) in memory.iter().zip(&before).enumerate() {
        for (at, (x, y)) in after.iter().zip(before).enumerate() {
            let covered = destinations
                .iter()
                .any(|r| r.buffer == b && inside(r, at as u64));
            assert!(
                covered || x == y,
                "{context}: sentinel byte {at} of buffer {b} changed"
            );
        }
    }
}
