//! The README's contract as one table over every move: each clause runs
//! for a split, a concat, a permuted split (heads with a kept piece) and a
//! permuted concat (heads merged) alike, through the same verbs. The
//! clauses that need a process of their own are in their own rooms:
//! memory flat over 10,000 encodes of distinct shapes with the caches
//! bounded (`tests/memory_every_move.rs`), encodes that create no buffer
//! (`tests/encode_buffers.rs`), every move's async round trip `Send`
//! (`tests/gpu.rs`), a lost device (`tests/device_loss.rs`).

mod common;

use common::{Rng, gpu, random_tensor, read_buffer, refused};
use wgpu_split::error::{DeviceError, EncodeError};
use wgpu_split::gpu::{BufferRegion, EncodeCounts, GpuContext, GpuSplitter};
use wgpu_split::plan::PlanOptions;
use wgpu_split::{ElementType, Error, HostTensor, PermutedConcat, ResolvedConcat, ResolvedSplit};

type Encode<'g> =
    Box<dyn Fn(&mut wgpu::CommandEncoder, BufferRegion, &[BufferRegion]) -> Result<(), Error> + 'g>;
type Counts<'g> = Box<dyn Fn(BufferRegion, &[BufferRegion]) -> Result<EncodeCounts, Error> + 'g>;
type Prepare<'g> = Box<dyn Fn(BufferRegion, &[BufferRegion]) -> Result<EncodeCounts, Error> + 'g>;

/// A move under test, seen through its regions: the one on its single
/// side (a split's input, a concat's output) and one per piece on the
/// other; `splits` says which side is written.
struct Case<'g> {
    name: &'static str,
    splits: bool,
    /// Bytes of the single side's region, and of each piece's.
    single: u64,
    each: Vec<u64>,
    /// The bytes read: the input's (a split), each input's (a concat).
    read: Vec<Vec<u8>>,
    /// What each written region must start with (the host path's bytes).
    want: Vec<Vec<u8>>,
    encode: Encode<'g>,
    counts: Counts<'g>,
    /// Prepares the move planned for the caller's compute pass, records it
    /// in one, and returns what it prepared.
    prepare: Prepare<'g>,
}

impl Case<'_> {
    /// The regions a test hands over (the single side's, then each
    /// piece's), numbered as the written ones: for a split the pieces, for
    /// a concat the single side.
    fn written(&self) -> Vec<usize> {
        if self.splits {
            (1..=self.each.len()).collect()
        } else {
            vec![0]
        }
    }

    fn sizes(&self) -> Vec<u64> {
        std::iter::once(self.single)
            .chain(self.each.iter().copied())
            .collect()
    }
}

/// The four moves, each of f16 tensors, planned on `gpu`.
fn cases(gpu: &GpuSplitter) -> Vec<Case<'_>> {
    let t = ElementType::Float16;
    let mut rng = Rng::new(544);
    let in_pass = PlanOptions::default().in_compute_pass();
    let bytes = |tensors: &[HostTensor]| -> Vec<Vec<u8>> {
        tensors
            .iter()
            .map(|x| x.as_bytes().unwrap().to_vec())
            .collect()
    };
    let mut out = Vec::new();

    let input = random_tensor(&mut rng, t, &[6, 5, 12]);
    let split = ResolvedSplit::new(&[6, 5, 12], 2, vec![3, 8, 1], true).unwrap();
    let pieces = input.split(&split).unwrap();
    let plan = gpu.plan(&split, t).unwrap();
    let pass = gpu.plan_with(&split, t, &in_pass).unwrap();
    out.push(Case {
        name: "split",
        splits: true,
        single: plan.input_bytes(),
        each: (0..3).map(|i| plan.destination_bytes(i)).collect(),
        read: bytes(std::slice::from_ref(&input)),
        want: bytes(&pieces),
        encode: Box::new(move |e, s, each| gpu.encode(e, &plan, s, each)),
        counts: {
            let plan = pass.clone();
            Box::new(move |s, each| gpu.counts(&plan, s, each))
        },
        prepare: Box::new(move |s, each| Ok(gpu.prepare(&pass, s, each)?.counts())),
    });

    let concat = ResolvedConcat::inverse_of(&split).unwrap();
    let plan = gpu.plan(&concat, t).unwrap();
    let pass = gpu.plan_with(&concat, t, &in_pass).unwrap();
    let needs = plan.requirements();
    out.push(Case {
        name: "concat",
        splits: false,
        single: needs.output_region_bytes,
        each: needs.inputs.iter().map(|n| n.bytes).collect(),
        read: bytes(&pieces),
        want: bytes(std::slice::from_ref(&input)),
        encode: Box::new(move |e, s, each| gpu.encode(e, &plan, each, s)),
        counts: {
            let plan = pass.clone();
            Box::new(move |s, each| gpu.counts(&plan, each, s))
        },
        prepare: Box::new(move |s, each| Ok(gpu.prepare(&pass, each, s)?.counts())),
    });

    // Heads of a piece, and a piece kept as it is (a copy command where
    // the buffers take one).
    let heads = common::heads_and_a_kept_piece();
    let plan = gpu.plan(&heads, t).unwrap();
    let pass = gpu.plan_with(&heads, t, &in_pass).unwrap();
    out.push(Case {
        name: "permuted split",
        splits: true,
        single: plan.input_bytes(),
        each: (0..2).map(|i| plan.output_region_bytes(i)).collect(),
        read: bytes(std::slice::from_ref(&input)),
        want: bytes(&input.split_permuted(&heads).unwrap()),
        encode: Box::new(move |e, s, each| gpu.encode(e, &plan, s, each)),
        counts: {
            let plan = pass.clone();
            Box::new(move |s, each| gpu.counts(&plan, s, each))
        },
        prepare: Box::new(move |s, each| Ok(gpu.prepare(&pass, s, each)?.counts())),
    });

    let q = random_tensor(&mut rng, t, &[2, 3, 7, 4]);
    let k = random_tensor(&mut rng, t, &[2, 1, 7, 4]);
    let merge = PermutedConcat::merge_heads(&[q.shape(), k.shape()]).unwrap();
    let merged = HostTensor::concat_permuted(&[&q, &k], &merge).unwrap();
    let plan = gpu.plan(&merge, t).unwrap();
    let pass = gpu.plan_with(&merge, t, &in_pass).unwrap();
    out.push(Case {
        name: "permuted concat",
        splits: false,
        single: plan.output_region_bytes(),
        each: (0..2).map(|i| plan.input_bytes(i)).collect(),
        read: bytes(&[q, k]),
        want: bytes(std::slice::from_ref(&merged)),
        encode: Box::new(move |e, s, each| gpu.encode(e, &plan, each, s)),
        counts: {
            let plan = pass.clone();
            Box::new(move |s, each| gpu.counts(&plan, each, s))
        },
        prepare: Box::new(move |s, each| Ok(gpu.prepare(&pass, each, s)?.counts())),
    });
    out
}

const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);
const SENTINEL: u8 = 0xA5;

fn buffer(
    device: &wgpu::Device,
    size: u64,
    usage: wgpu::BufferUsages,
    mapped: bool,
) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: size.max(4).next_multiple_of(4),
        usage,
        mapped_at_creation: mapped,
    })
}

/// Every region in a buffer of its own, of exactly its size.
fn own_buffers(gpu: &GpuSplitter, case: &Case) -> Vec<wgpu::Buffer> {
    case.sizes()
        .iter()
        .map(|&s| buffer(gpu.device(), s, USAGE, false))
        .collect()
}

/// Calls `f` with the single side's region and the pieces' regions, each
/// whole in `buffers`.
fn regions(buffers: &[wgpu::Buffer]) -> (BufferRegion<'_>, Vec<BufferRegion<'_>>) {
    let all: Vec<BufferRegion> = buffers.iter().map(BufferRegion::whole).collect();
    (all[0], all[1..].to_vec())
}

/// The regions of a move laid in two pooled pages (the read side's and
/// the written side's), each at a word offset 12 bytes after the last,
/// every page byte a sentinel first; the moves write their regions and
/// nothing else, bit for bit the host path's.
#[test]
fn every_move_writes_its_regions_and_nothing_else_in_pooled_pages() {
    let Some(gpu) = gpu("every_move_writes_its_regions_and_nothing_else_in_pooled_pages") else {
        return;
    };
    for case in cases(gpu) {
        let sizes = case.sizes();
        let written = case.written();
        // Region k's offset in its side's page.
        let mut ends = [4u64, 4u64];
        let mut placed = Vec::new();
        for (k, &size) in sizes.iter().enumerate() {
            let page = usize::from(written.contains(&k));
            let offset = ends[page];
            ends[page] = (offset + size + 12).next_multiple_of(4);
            placed.push((page, offset, size));
        }
        let pages: Vec<wgpu::Buffer> = ends
            .iter()
            .map(|&end| buffer(gpu.device(), end + 64, USAGE, false))
            .collect();
        let mut contents: Vec<Vec<u8>> = pages
            .iter()
            .map(|p| vec![SENTINEL; p.size() as usize])
            .collect();
        let read_regions = (0..sizes.len()).filter(|k| !written.contains(k));
        for (k, bytes) in read_regions.zip(&case.read) {
            let (page, offset, _) = placed[k];
            contents[page][offset as usize..offset as usize + bytes.len()].copy_from_slice(bytes);
        }
        for (page, bytes) in pages.iter().zip(&contents) {
            gpu.queue().write_buffer(page, 0, bytes);
        }
        let all: Vec<BufferRegion> = placed
            .iter()
            .map(|&(page, offset, size)| BufferRegion::new(&pages[page], offset, size))
            .collect();
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        (case.encode)(&mut encoder, all[0], &all[1..])
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        gpu.queue().submit([encoder.finish()]);
        let got = read_buffer(gpu, &pages[1]);
        for (j, &k) in written.iter().enumerate() {
            let (_, offset, size) = placed[k];
            let at = offset as usize;
            let want = &case.want[j];
            assert_eq!(
                &got[at..at + want.len()],
                &want[..],
                "{}: region {k}",
                case.name
            );
            contents[1][at..at + size as usize].copy_from_slice(&got[at..at + size as usize]);
        }
        assert_eq!(
            got, contents[1],
            "{}: a byte outside the written regions changed",
            case.name
        );
        assert_eq!(
            read_buffer(gpu, &pages[0]),
            contents[0],
            "{}: the read side changed",
            case.name
        );
    }
}

/// Regions a move cannot take are typed errors before anything is
/// recorded (the encoder submits clean, wgpu sees nothing): too few
/// regions, a written region too small, outside its buffer, at an offset
/// that is not a word's, in a buffer without `STORAGE`, or overlapping
/// another region of the move.
#[test]
fn every_move_refuses_regions_it_cannot_take_before_recording() {
    let Some(gpu) = gpu("every_move_refuses_regions_it_cannot_take_before_recording") else {
        return;
    };
    for case in cases(gpu) {
        let buffers = own_buffers(gpu, &case);
        let (single, each) = regions(&buffers);
        let name = case.name;
        let encode = |single: BufferRegion, each: &[BufferRegion]| {
            refused(gpu, |enc| (case.encode)(enc, single, each).unwrap_err())
        };
        // One piece's region missing.
        let e = encode(single, &each[..each.len() - 1]);
        assert!(
            matches!(e, Error::Encode(EncodeError::RegionCount { .. })),
            "{name}: {e}"
        );
        // A written region: one word short, past its buffer's end, at a
        // half-word offset, in a buffer without STORAGE.
        let k = case.written()[0];
        let with = |k: usize, region: BufferRegion<'_>| {
            let mut all: Vec<BufferRegion> = std::iter::once(single)
                .chain(each.iter().copied())
                .collect();
            all[k] = region;
            encode(all[0], &all[1..])
        };
        let size = case.sizes()[k];
        let e = with(k, BufferRegion::new(&buffers[k], 0, size - 4));
        assert!(
            matches!(e, Error::Encode(EncodeError::BufferTooSmall { .. })),
            "{name}: {e}"
        );
        let e = with(k, BufferRegion::new(&buffers[k], 4, size));
        assert!(
            matches!(e, Error::Encode(EncodeError::RegionOutsideBuffer { .. })),
            "{name}: {e}"
        );
        let wide = buffer(gpu.device(), size + 8, USAGE, false);
        let e = with(k, BufferRegion::new(&wide, 2, size));
        assert!(
            matches!(e, Error::Encode(EncodeError::MisalignedOffset { .. })),
            "{name}: {e}"
        );
        let copy_only = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let unbound = buffer(gpu.device(), size, copy_only, false);
        let e = with(k, BufferRegion::whole(&unbound));
        assert!(
            matches!(e, Error::Encode(EncodeError::MissingUsage { .. })),
            "{name}: {e}"
        );
        // A written region over another region of the move, in one buffer.
        let other = if k == 0 { 1 } else { 0 };
        let shared = buffer(gpu.device(), case.sizes()[other].max(size), USAGE, false);
        let mut all: Vec<BufferRegion> = std::iter::once(single)
            .chain(each.iter().copied())
            .collect();
        all[k] = BufferRegion::new(&shared, 0, size);
        all[other] = BufferRegion::new(&shared, 0, case.sizes()[other]);
        let e = encode(all[0], &all[1..]);
        assert!(
            matches!(
                e,
                Error::Encode(
                    EncodeError::OverlappingRegions { .. } | EncodeError::InputSharesBuffer { .. }
                )
            ),
            "{name}: {e}"
        );
    }
}

/// A mapped, destroyed or foreign buffer given to any move is a typed
/// error before anything is recorded (the encoder submits clean, nothing
/// fails at submit, no panic under wgpu's default handler), on either side.
#[test]
fn every_move_refuses_mapped_destroyed_and_foreign_buffers_before_recording() {
    let Some(gpu) = gpu("every_move_refuses_mapped_destroyed_and_foreign_buffers_before_recording")
    else {
        return;
    };
    let ctx = GpuContext::new_default().unwrap();
    let (other, _) = pollster::block_on(ctx.adapter.request_device(&Default::default())).unwrap();
    for case in cases(gpu) {
        let buffers = own_buffers(gpu, &case);
        let name = case.name;
        for k in 0..case.sizes().len() {
            let size = case.sizes()[k];
            let with = |region: BufferRegion<'_>| {
                let (single, each) = regions(&buffers);
                let mut all: Vec<BufferRegion> = std::iter::once(single).chain(each).collect();
                all[k] = region;
                refused(gpu, |enc| {
                    (case.encode)(enc, all[0], &all[1..]).unwrap_err()
                })
            };
            let mapped = buffer(gpu.device(), size, USAGE, true);
            let e = with(BufferRegion::whole(&mapped));
            assert!(
                matches!(e, Error::Device(DeviceError::BufferMapped { .. })),
                "{name} {k}: {e}"
            );
            let destroyed = buffer(gpu.device(), size, USAGE, false);
            destroyed.destroy();
            let e = with(BufferRegion::whole(&destroyed));
            assert!(
                matches!(&e, Error::Device(DeviceError::Gpu { detail }) if detail.contains("destroyed")),
                "{name} {k}: {e}"
            );
            let foreign = buffer(&other, size, USAGE, false);
            let e = with(BufferRegion::whole(&foreign));
            assert!(
                matches!(e, Error::Device(DeviceError::Gpu { .. })),
                "{name} {k}: {e}"
            );
        }
        // And the usable buffers still encode.
        let (single, each) = regions(&buffers);
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        (case.encode)(&mut encoder, single, &each).unwrap();
        gpu.queue().submit([encoder.finish()]);
    }
}

/// What a move records is known before recording: `counts` equals what
/// `prepare` makes for the caller's pass, for every move.
#[test]
fn every_move_counts_what_it_records_before_recording() {
    let Some(gpu) = gpu("every_move_counts_what_it_records_before_recording") else {
        return;
    };
    for case in cases(gpu) {
        let buffers = own_buffers(gpu, &case);
        let (single, each) = regions(&buffers);
        let counts = (case.counts)(single, &each).unwrap();
        assert!(counts.dispatches >= 1, "{}", case.name);
        assert_eq!(
            (case.prepare)(single, &each).unwrap(),
            counts,
            "{}",
            case.name
        );
    }
}
