//! The permuted moves' access trace: every dispatch a GPU-class permuted
//! plan records (WebGPU's default limits, striped lanes) runs in its
//! module's trace variant on the adapter at hand (gathers of words and
//! vec4s, tiles of whole and packed elements, the concat's zeroing), every
//! output checked bit for bit against the host path, and the recorded
//! loads and stores grouped as warps of W = 32 and 64 would issue them
//! (`plan::coalescing`): issue 39's targets, loads and stores at most 1.15x
//! the ideal sectors per request (or, where a request covers at most two
//! rows, 1.15x with one sector and line more per row, as the split kernels
//! are held: a row that starts inside a sector cannot do better) and input
//! and output bytes each moved once, on attention's heads (GPT-2, grouped-query), their merge, YOLOv8's
//! distribution head and transposes of the fastest axis. Where the model of
//! `permuted_access.rs` reasons from the views, this reads what the WGSL
//! did.

mod common;

use common::{Rng, concat_undoing, random_tensor};
use wgpu_split::gpu::trace::{TracedRun, trace};
use wgpu_split::plan::coalescing::{Coalescing, Requests, analyse_with_rows};
use wgpu_split::plan::{PermutedConcatPlan, PermutedPlan, PlanLimits};
use wgpu_split::{ElementType, HostTensor, PermutedConcat, PermutedSplit};

/// Every invocation traced (the cases are small enough).
const WHOLE: u64 = 1 << 20;

/// What one traced move did at one warp width.
struct Traced {
    name: String,
    warp: u32,
    c: Coalescing,
    /// Bytes the kernels had to read (copy commands move the rest).
    read_bytes: u64,
    /// Bytes the kernels had to write, whole words.
    written_bytes: u64,
}

impl Traced {
    fn loads(&self) -> f64 {
        self.c.loads.sector_ratio()
    }

    fn stores(&self) -> f64 {
        self.c.stores.sector_ratio()
    }

    /// Sectors loaded (each once per dispatch) over the bytes' own.
    fn reads(&self) -> f64 {
        self.c.loaded_bytes as f64 / self.read_bytes.next_multiple_of(32) as f64
    }

    fn print(&self) {
        eprintln!(
            "{} W={}: loads {:.3}, stores {:.3} sectors per request over the ideal; \
             input read {:.3}x, output written {:.3}x ({} dispatches)",
            self.name,
            self.warp,
            self.loads(),
            self.stores(),
            self.reads(),
            self.c.stores.bytes as f64 / self.written_bytes as f64,
            self.c.dispatches,
        );
    }

    /// Issue 39's targets: 1.15x the ideal sectors per request, or where
    /// requests cover at most two rows each (a tile's stretches), 1.15x
    /// with one sector and line more per row (a lane-per-row gather's
    /// requests touch a row per lane: no allowance for them); each byte
    /// read once (whole sectors) and written once.
    fn assert_targets(&self) {
        self.print();
        assert!(self.c.traced_whole, "{}: traced in windows", self.name);
        let coalesced =
            |r: &Requests| r.sector_ratio() <= 1.15 || (r.within(1.15) && r.rows <= 2 * r.requests);
        assert!(
            coalesced(&self.c.loads) && coalesced(&self.c.stores),
            "{} W={}: loads {:.3} / stores {:.3} over 1.15x (rows {} / {})",
            self.name,
            self.warp,
            self.loads(),
            self.stores(),
            self.c.loads.rows,
            self.c.stores.rows
        );
        assert!(
            self.reads() <= 1.0 + 1e-9,
            "{} W={}: input read {:.3}x",
            self.name,
            self.warp,
            self.reads()
        );
        assert_eq!(
            self.c.stores.bytes, self.written_bytes,
            "{}: output bytes written more or less than once",
            self.name
        );
    }
}

/// Traces `split` of a random tensor of `t` under a GPU-class plan, checks
/// every output against the host path, and analyses the trace at W = 32
/// and 64.
fn traced_split(name: &str, split: &PermutedSplit, t: ElementType) -> Vec<Traced> {
    let gpu = common::gpu("permuted_trace").expect("an adapter");
    let plan = PermutedPlan::new(split, t, &PlanLimits::WEBGPU_DEFAULT).unwrap();
    let mut rng = Rng::new(39);
    let input = random_tensor(&mut rng, t, split.split().input_shape());
    let run = trace(gpu, &plan, &[input.as_bytes().unwrap()], WHOLE).unwrap();
    let expected = input.split_permuted(split).unwrap();
    let bits = u64::from(t.bit_width().unwrap());
    let (mut read_bytes, mut written_bytes) = (0, 0);
    let mut rows = vec![row_bits(input.shape(), bits)];
    for (i, e) in expected.iter().enumerate() {
        rows.push(row_bits(e.shape(), bits));
        let bytes = e.as_bytes().unwrap();
        let got = &run.destinations[i];
        assert_eq!(&got[..bytes.len()], bytes, "{name}: output {i}");
        if !plan.copies_output(i) {
            let elements = e.shape().iter().product::<usize>() as u64;
            read_bytes += (elements * bits).div_ceil(8);
            written_bytes += (elements * bits).div_ceil(32) * 4;
        }
    }
    analysed(name, &run, read_bytes, written_bytes, &rows)
}

/// Bits of a row (the innermost dimension) of a tensor of `shape`.
fn row_bits(shape: &[usize], bits: u64) -> u64 {
    (shape.last().copied().unwrap_or(1).max(1) as u64) * bits
}

/// [`traced_split`] of a concat of random inputs.
fn traced_concat(name: &str, concat: &PermutedConcat, t: ElementType) -> Vec<Traced> {
    let gpu = common::gpu("permuted_trace").expect("an adapter");
    let plan = PermutedConcatPlan::new(concat, t, &PlanLimits::WEBGPU_DEFAULT).unwrap();
    let mut rng = Rng::new(93);
    let inputs: Vec<HostTensor> = concat
        .input_shapes()
        .iter()
        .map(|shape| random_tensor(&mut rng, t, shape))
        .collect();
    let bytes: Vec<&[u8]> = inputs.iter().map(|h| h.as_bytes().unwrap()).collect();
    let run = trace(gpu, &plan, &bytes, WHOLE).unwrap();
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let expected = HostTensor::concat_permuted(&refs, concat).unwrap();
    let out = expected.as_bytes().unwrap();
    assert_eq!(&run.tensor[..out.len()], out, "{name}: output");
    let read_bytes = bytes.iter().map(|b| b.len() as u64).sum();
    let bits = u64::from(t.bit_width().unwrap());
    let rows: Vec<u64> = std::iter::once(expected.shape())
        .chain(inputs.iter().map(HostTensor::shape))
        .map(|shape| row_bits(shape, bits))
        .collect();
    let written = out.len().next_multiple_of(4) as u64;
    analysed(name, &run, read_bytes, written, &rows)
}

/// `run` analysed at W = 32 and 64, rows of `rows[b]` bits in buffer `b`.
fn analysed(
    name: &str,
    run: &TracedRun,
    read_bytes: u64,
    written_bytes: u64,
    rows: &[u64],
) -> Vec<Traced> {
    let row_of = |buffer: usize, byte: u64| byte * 8 / rows[buffer];
    [32, 64]
        .into_iter()
        .map(|warp| Traced {
            name: name.to_string(),
            warp,
            c: analyse_with_rows(&run.dispatches, warp, &row_of),
            read_bytes,
            written_bytes,
        })
        .collect()
}

#[test]
fn heads_their_merge_and_a_detection_head_are_coalesced_in_the_trace() {
    // split_bench's cases, fewer tokens (the DFL's class scores kept: a
    // copy command), and the merges back.
    let mut rows = Vec::new();
    let cases = common::heads_cases();
    for (name, split, t) in &cases {
        rows.extend(traced_split(name, split, *t));
    }
    let f16 = ElementType::Float16;
    let merge = PermutedConcat::merge_heads(&[[2, 12, 64, 64]; 3]).unwrap();
    rows.extend(traced_concat("merge heads f16", &merge, f16));
    rows.extend(traced_concat(
        "gqa merge f16",
        &concat_undoing(&cases[1].1),
        f16,
    ));
    for r in &rows {
        r.assert_targets();
    }
}

#[test]
fn transposes_of_the_fastest_axis_are_coalesced_in_the_trace_of_their_tiles() {
    // layout_cdla's piece and attention's K^T (`common::tile_cases`). K^T
    // with S = 100 f32 writes rows of 400 bytes, every other one starting
    // inside a sector: 1.115x / 1.160x the bytes' own sectors at W = 32 /
    // 64, as `permuted_access.rs` models it, within 1.15x with the sector
    // a row starting mid-sector costs.
    for (name, split, t, _) in common::tile_cases(760) {
        let plan = PermutedPlan::new(&split, t, &PlanLimits::WEBGPU_DEFAULT).unwrap();
        assert!(
            (0..split.output_count()).any(|i| plan.moves_through_tiles(i)),
            "{name}: nothing tiled"
        );
        for r in traced_split(name, &split, t) {
            r.assert_targets();
        }
        let concat = concat_undoing(&split);
        for r in traced_concat(&format!("{name}, undone"), &concat, t) {
            r.assert_targets();
        }
    }
}

#[test]
fn moves_of_elements_inside_words_are_exact_in_the_trace_and_counted() {
    // Heads of 6 bytes (u8) and of 6 int4 nibbles: runs that end inside a
    // word, assembled element by element (a split: every output word
    // stored once), ORed element by element into words a zeroing dispatch
    // cleared first (their merge). Exact; their loads are what they are (a
    // lane's elements lie in several runs), so only stores are counted.
    for t in [ElementType::Uint8, ElementType::Int4] {
        let split = PermutedSplit::split_heads(&[2, 16, 3 * 4 * 6], &[24; 3], 6).unwrap();
        for r in traced_split(&format!("heads of 6 {t:?}"), &split, t) {
            r.print();
            assert_eq!(r.c.stores.bytes, r.written_bytes, "{}", r.name);
        }
        let merge = concat_undoing(&split);
        let per_word = 32 / u64::from(t.bit_width().unwrap());
        for r in traced_concat(&format!("merge of 6 {t:?}"), &merge, t) {
            r.print();
            assert_eq!(r.c.dispatches, 2, "{}: the zeroing, the gather", r.name);
            // Each word zeroed once, then ORed once per element (each
            // element's store a request of its own words).
            assert!(
                r.c.stores.bytes > r.written_bytes
                    && r.c.stores.bytes <= r.written_bytes * (1 + per_word),
                "{}",
                r.name
            );
        }
    }
}
