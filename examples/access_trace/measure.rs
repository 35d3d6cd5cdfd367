//! Tracing one split (or the concat that mirrors it) under one class
//! model: the plan, a shrunk tensor
//! of its layout, the traced run checked against the host path, and the
//! coalescing figures at every warp width (shared by `access_trace`,
//! `tests/coalescing.rs` and `gpu_report`).

use wgpu_split::gpu::GpuSplitter;
use wgpu_split::gpu::trace::trace;
use wgpu_split::plan::coalescing::{Coalescing, SCRATCH_BUFFER, analyse_with_rows};
use wgpu_split::plan::{
    ConcatPlan, CostModel, Kernel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy,
};
use wgpu_split::{ElementType, HostTensor, ResolvedConcat, ResolvedSplit};

/// Warp widths: lavapipe's SIMD, Intel's, NVIDIA's and RDNA's, GCN's.
pub const WARPS: [u32; 4] = [8, 16, 32, 64];

/// How to trace: at most `rows` rows, `most` invocations a dispatch, the
/// kernel to force, whether to trace the concat that mirrors the split
/// (its inputs the split's outputs) instead, and the device limits plans
/// are made for (WebGPU's defaults: a browser's; a native device often
/// binds more destinations a dispatch).
#[derive(Debug, Clone, Copy)]
pub struct TraceOptions {
    pub rows: usize,
    pub most: u64,
    pub kernel: Option<Kernel>,
    pub concat: bool,
    pub limits: PlanLimits,
}

/// One case under one class model.
#[derive(Debug, serde::Serialize)]
pub struct Row {
    pub case: String,
    pub class: &'static str,
    pub kernel: String,
    /// The plan stages its outputs through the scratch arena.
    pub staged: bool,
    pub lanes: String,
    pub dispatches: usize,
    /// Working invocations of the full plan's dispatches.
    pub invocations: u64,
    /// Invocations of a vec4 copy of the bytes the split moves.
    pub copy_invocations: u64,
    /// Rows of the traced tensor (the full tensor's when not shrunk).
    pub traced_rows: usize,
    /// Bytes the traced run reads once at least: the traced tensor's for a
    /// split, its pieces' for a concat.
    pub read_bytes: u64,
    /// Every output byte of the traced run equals the host path's.
    pub exact: bool,
    pub by_warp: Vec<Coalescing>,
}

/// The options of a class model's plan for a compute pass (dispatches
/// only, the kernel the model ranks first).
fn options_of(model: CostModel, kernel: Option<Kernel>) -> PlanOptions {
    let mut options = PlanOptions::default()
        .strategy(Strategy::Auto(model))
        .placement(Placement::Separate)
        .in_compute_pass();
    options.kernel = kernel;
    options
}

/// The plan of a class model for a compute pass (dispatches only, the
/// kernel the model ranks first), under `limits`.
pub fn plan_of(
    model: CostModel,
    t: ElementType,
    split: &ResolvedSplit,
    kernel: Option<Kernel>,
    limits: &PlanLimits,
) -> wgpu_split::Result<SplitPlan> {
    let options = options_of(model, kernel);
    Ok(SplitPlan::new(split, t, limits, &options)?)
}

/// The plan of the concat that mirrors `split`, as [`plan_of`] plans.
pub fn concat_plan_of(
    model: CostModel,
    t: ElementType,
    split: &ResolvedSplit,
    kernel: Option<Kernel>,
    limits: &PlanLimits,
) -> Result<ConcatPlan, Box<dyn std::error::Error>> {
    let concat = ResolvedConcat::inverse_of(split).ok_or("a split that no concat mirrors")?;
    let options = options_of(model, kernel);
    Ok(ConcatPlan::new(&concat, t, limits, &options)?)
}

/// `split` with at most `rows` rows before its axis (the axis and what
/// follows it unchanged): the same layouts, fewer invocations to trace.
pub fn shrunk(split: &ResolvedSplit, rows: usize) -> wgpu_split::Result<ResolvedSplit> {
    let shape = split.input_shape();
    let outer: usize = shape[..split.axis()].iter().product();
    if outer <= rows {
        return Ok(split.clone());
    }
    let mut small = vec![rows];
    small.extend_from_slice(&shape[split.axis()..]);
    Ok(ResolvedSplit::from_windows(
        &small,
        1,
        split.windows().collect(),
        split.keep_axis(),
    )?)
}

pub fn trace_case(
    splitter: &GpuSplitter,
    name: &str,
    class: &'static str,
    model: CostModel,
    t: ElementType,
    split: &ResolvedSplit,
    options: TraceOptions,
) -> Result<Row, Box<dyn std::error::Error>> {
    let full = if options.concat {
        concat_plan_of(model, t, split, options.kernel, &options.limits)?
            .mirror()
            .clone()
    } else {
        plan_of(model, t, split, options.kernel, &options.limits)?
    };
    // The fewest rows from `options.rows` whose plan has the full one's
    // kernel and layouts (a layout may need the rows to divide into its
    // blocks as the full tensor's do).
    let mut shrunk_plan = None;
    for rows in options.rows..options.rows + 128 {
        let small_split = shrunk(split, rows)?;
        let (plan, concat) = if options.concat {
            let mut plan = concat_plan_of(model, t, &small_split, options.kernel, &options.limits)?;
            if plan.is_staged() != full.is_staged() {
                // As for a split: traced as the full plan runs.
                let concat = ResolvedConcat::inverse_of(&small_split).ok_or("no mirror")?;
                let staging = options_of(model, options.kernel).staging(full.is_staged());
                plan = ConcatPlan::new(&concat, t, &options.limits, &staging)?;
            }
            (plan.mirror().clone(), Some(plan))
        } else {
            let mut plan = plan_of(model, t, &small_split, options.kernel, &options.limits)?;
            if plan.is_staged() != full.is_staged() {
                // Fewer rows may not pay for staging: traced as the full
                // plan runs.
                let staging = options_of(model, options.kernel).staging(full.is_staged());
                plan = SplitPlan::new(&small_split, t, &options.limits, &staging)?;
            }
            (plan, None)
        };
        let (a, b) = (moving(&plan), moving(&full));
        if a.kernel() == b.kernel() && a.generated_layouts() == b.generated_layouts() {
            shrunk_plan = Some((small_split, plan, concat));
            break;
        }
    }
    let Some((small_split, plan, concat)) = shrunk_plan else {
        return Err(format!("{name}: the shrunk tensor plans another kernel or layout").into());
    };
    let bits = t.bit_width().ok_or("strings are not traced")? as u64;
    let moved: u64 = split
        .output_shapes()
        .iter()
        .map(|s| (s.iter().product::<usize>() as u64 * bits).div_ceil(8))
        .sum();
    let input = random_tensor(&small_split, t)?;
    let expected = input.split(&small_split)?;
    let read_bytes = if concat.is_some() {
        expected
            .iter()
            .map(|e| e.as_bytes().map_or(0, |b| b.len() as u64))
            .sum()
    } else {
        input.as_bytes()?.len() as u64
    };
    let (run, exact) = if let Some(concat) = concat {
        // The concat of the split's outputs is the tensor.
        let pieces: Vec<&[u8]> = expected
            .iter()
            .map(|e| e.as_bytes())
            .collect::<Result<_, _>>()?;
        let run = trace(splitter, &concat, &pieces, options.most)?;
        let bytes = input.as_bytes()?;
        let exact = run.tensor[..bytes.len()] == *bytes;
        (run, exact)
    } else {
        let run = trace(splitter, &plan, &[input.as_bytes()?], options.most)?;
        let exact = expected.iter().enumerate().all(|(i, e)| {
            let bytes = e.as_bytes().unwrap_or_default();
            let at = plan.outputs()[i].arena_offset_bytes as usize;
            let dst = &run.destinations[plan.placement().destination_of(i)];
            e.is_empty() || dst[at..at + bytes.len()] == *bytes
        });
        (run, exact)
    };
    // A staged plan's scratch: each output's runs back to back from its
    // arena offset.
    let scratch_starts: Vec<u64> = plan
        .staged_plans()
        .map(|(stage, _)| {
            stage
                .outputs()
                .iter()
                .map(|o| o.arena_offset_bytes)
                .collect()
        })
        .unwrap_or_default();
    let row_of = rows_of(&small_split, bits, scratch_starts);
    let by_warp = if plan.dispatch_count() == 0 {
        Vec::new()
    } else {
        WARPS
            .iter()
            .map(|&w| analyse_with_rows(&run.dispatches, w, &row_of))
            .collect()
    };
    Ok(Row {
        case: name.to_string(),
        class,
        kernel: full.runs().to_string(),
        staged: full.is_staged(),
        lanes: moving(&full)
            .shaders()
            .first()
            .map_or("-".to_string(), |k| k.lanes().name().to_string()),
        dispatches: full.dispatch_count(),
        invocations: [
            Some(&full),
            full.staged_plans().map(|s| s.0),
            full.staged_plans().map(|s| s.1),
        ]
        .into_iter()
        .flatten()
        .flat_map(|p| p.passes())
        .map(|p| u64::from(p.invocations))
        .sum(),
        copy_invocations: moved.div_ceil(16),
        traced_rows: small_split.input_shape()[..small_split.axis()]
            .iter()
            .product(),
        read_bytes,
        exact,
        by_warp,
    })
}

/// The plan that moves the input: a staged plan's stage, or the plan.
fn moving(plan: &SplitPlan) -> &SplitPlan {
    plan.staged_plans().map_or(plan, |(stage, _)| stage)
}

/// The row a byte of a traced buffer lies in: input rows in buffer 0,
/// output `i`'s rows (runs) in buffer `i + 1`, and in a staged plan's
/// scratch ([`SCRATCH_BUFFER`]) output `i`'s runs from `scratch_starts[i]`
/// (numbered after the rows of the outputs before it).
pub fn rows_of(
    split: &ResolvedSplit,
    bits: u64,
    scratch_starts: Vec<u64>,
) -> impl Fn(usize, u64) -> u64 {
    let shape = split.input_shape();
    let inner: u64 = shape[split.axis() + 1..]
        .iter()
        .map(|&d| d as u64)
        .product();
    let block_bits = shape[split.axis()] as u64 * inner * bits;
    let runs: Vec<u64> = split
        .lengths()
        .iter()
        .map(|&l| (l as u64 * inner * bits).max(1))
        .collect();
    let outer = split.input_shape()[..split.axis()]
        .iter()
        .map(|&d| d as u64)
        .product::<u64>();
    move |buffer, byte| match buffer {
        0 => byte * 8 / block_bits.max(1),
        SCRATCH_BUFFER => {
            let i = scratch_starts.partition_point(|&s| s <= byte).max(1) - 1;
            i as u64 * outer + (byte - scratch_starts[i]) * 8 / runs[i]
        }
        b => byte * 8 / runs[b - 1],
    }
}

/// A tensor of `split`'s input shape with pseudo-random bits.
pub fn random_tensor(
    split: &ResolvedSplit,
    t: ElementType,
) -> Result<HostTensor, Box<dyn std::error::Error>> {
    let count: usize = split.input_shape().iter().product();
    let len = t.byte_len(count).ok_or("no packed length")?;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    Ok(HostTensor::from_raw(t, split.input_shape(), bytes)?)
}

/// The targets of a GPU-class plan at W = 32 and 64 that `row` misses
/// (`docs/DEVICE.md`, "Access patterns"): load and store sectors and
/// lines at most 1.15x the ideal (one more per row a request touches), the
/// warps' footprint at most 1.05x (one more sector per row a warp touches
/// in a buffer), and, where the split moves 64 KiB or more (issue 38's
/// floor), at least half the invocations of a vec4 copy. Empty: every target met.
pub fn missed(row: &Row) -> Vec<String> {
    let mut missed = Vec::new();
    for c in row.by_warp.iter().filter(|c| c.warp >= 32) {
        let w = c.warp;
        if !c.loads.within(1.15) {
            missed.push(format!("loads@{w}"));
        }
        if !c.stores.within(1.15) {
            missed.push(format!("stores@{w}"));
        }
        if !c.footprint_within(1.05) {
            missed.push(format!("footprint@{w}"));
        }
    }
    if row.copy_invocations * 16 >= 1 << 16 && row.invocations * 2 < row.copy_invocations {
        missed.push("invocations".to_string());
    }
    missed
}

/// The sweep of shapes beyond split_bench's (`tests/coalescing.rs` holds
/// every GPU-class plan of it to the targets): every element width on an
/// odd short row, word runs at odd offsets, 1 to 100 outputs, rows shorter
/// than a warp, outputs of one element.
pub fn sweep() -> Vec<(String, ElementType, ResolvedSplit)> {
    use wgpu_split::frameworks::{Numpy, Torch};
    use wgpu_split::{OnnxSplit, OnnxSplitToSequence};
    let mut splits = Vec::new();
    let mut add =
        |name: String, t: ElementType, split: ResolvedSplit| splits.push((name, t, split));
    let lengths = |shape: &[usize], lengths: &[usize]| {
        ResolvedSplit::new(shape, 1, lengths.to_vec(), true).expect("a sweep split")
    };
    // Every width on rows of 37 elements split [5, 32], and on rows of
    // whole vec4s for the wide ones.
    for t in [
        ElementType::Int2,
        ElementType::Int4,
        ElementType::Uint8,
        ElementType::Float16,
        ElementType::Float,
        ElementType::Double,
        ElementType::Complex128,
    ] {
        add(
            format!("{t} [512, 37] [5, 32]"),
            t,
            lengths(&[512, 37], &[5, 32]),
        );
        add(
            format!("{t} [256, 1024] [300, 724]"),
            t,
            lengths(&[256, 1024], &[300, 724]),
        );
    }
    // Word runs at odd offsets: rows of 7 words, and of 4,097.
    let f32 = ElementType::Float;
    add(
        "f32 [512, 7] [3, 4]".into(),
        f32,
        lengths(&[512, 7], &[3, 4]),
    );
    add(
        "f32 [64, 4097] [1, 2047, 2049]".into(),
        f32,
        lengths(&[64, 4097], &[1, 2047, 2049]),
    );
    // 1 to 100 outputs.
    for n in [1, 2, 7, 8, 100] {
        let seq = OnnxSplitToSequence::new(11)
            .resolve(&[n, 1024])
            .expect("a sequence");
        add(format!("f32 [{n}, 1024] seq"), f32, seq);
    }
    let chunks = Torch::chunk(&[64, 700], 100, 1).expect("torch.chunk");
    add("f32 [64, 700] torch.chunk(100)".into(), f32, chunks);
    let qkv = OnnxSplit::new(18, 3)
        .num_outputs(3)
        .axis(-1)
        .resolve(&[2, 64, 2304]);
    add(
        "f16 [2, 64, 2304] qkv".into(),
        ElementType::Float16,
        qkv.expect("qkv"),
    );
    // Rows shorter than a warp's bytes.
    add(
        "f32 [4096, 20] [4, 16]".into(),
        f32,
        lengths(&[4096, 20], &[4, 16]),
    );
    add(
        "u8 [4096, 6] [1, 2, 3]".into(),
        ElementType::Uint8,
        lengths(&[4096, 6], &[1, 2, 3]),
    );
    let bools = Numpy::array_split(&[300, 77], 5, 1).expect("numpy.array_split");
    add(
        "bool [300, 77] array_split(5)".into(),
        ElementType::Bool,
        bools,
    );
    // Outputs of one element.
    let unbind = Torch::unbind(&[1, 100], 1).expect("torch.unbind");
    add("f32 [1, 100] unbind".into(), f32, unbind);
    add(
        "f16 [3, 5] [1; 5]".into(),
        ElementType::Float16,
        lengths(&[3, 5], &[1; 5]),
    );
    // Issue 38's categories that one dispatch binds (WebGPU's 7
    // destinations): one-element pieces on the last axis, rotary sections
    // and halves that are not whole vec4s, pieces of 1-3 bytes beside
    // long ones, rows of odd lengths.
    let unbind = Torch::unbind(&[4096, 4], 1).expect("torch.unbind");
    add("f32 [4096, 4] unbind".into(), f32, unbind);
    let unbind = Torch::unbind(&[2048, 3, 4], 2).expect("torch.unbind");
    add("f32 [2048, 3, 4] unbind(2)".into(), f32, unbind);
    let mrope = ResolvedSplit::new(&[3, 4096, 128], 2, vec![16, 24, 24, 16, 24, 24], true)
        .expect("M-RoPE sections");
    add(
        "bf16 [3, 4096, 128] M-RoPE".into(),
        ElementType::BFloat16,
        mrope,
    );
    add(
        "f16 [4096, 64] [16, 24, 24]".into(),
        ElementType::Float16,
        lengths(&[4096, 64], &[16, 24, 24]),
    );
    add(
        "i8 [2048, 1023] [511, 1, 511]".into(),
        ElementType::Int8,
        lengths(&[2048, 1023], &[511, 1, 511]),
    );
    add(
        "u8 [4096, 259] [1, 2, 256]".into(),
        ElementType::Uint8,
        lengths(&[4096, 259], &[1, 2, 256]),
    );
    add(
        "i8 [4096, 33] [1, 2, 30]".into(),
        ElementType::Int8,
        lengths(&[4096, 33], &[1, 2, 30]),
    );
    add(
        "bf16 [4096, 131] [3, 128]".into(),
        ElementType::BFloat16,
        lengths(&[4096, 131], &[3, 128]),
    );
    add(
        "u8 [4096, 3000] thirds".into(),
        ElementType::Uint8,
        lengths(&[4096, 3000], &[1000; 3]),
    );
    // More pieces than a dispatch binds under WebGPU's limits, narrow ones
    // of every row, large enough that the class models stage them.
    add(
        "f16 [65536, 31] columns".into(),
        ElementType::Float16,
        lengths(&[65536, 31], &[1; 31]),
    );
    add(
        "f16 [32768, 64] columns".into(),
        ElementType::Float16,
        lengths(&[32768, 64], &[1; 64]),
    );
    add(
        "u8 [262144, 40] [1, 3, 1, 3, ..]".into(),
        ElementType::Uint8,
        lengths(&[262144, 40], &[1, 3].repeat(10)),
    );
    // Issue 38's own columns past a dispatch's destinations, of 64 KiB and
    // more but small enough that one more pass costs the class models more
    // than loading the rows again (re-read, not staged).
    add(
        "f16 [4096, 31] columns".into(),
        ElementType::Float16,
        lengths(&[4096, 31], &[1; 31]),
    );
    add(
        "f32 [4096, 31] columns".into(),
        f32,
        lengths(&[4096, 31], &[1; 31]),
    );
    splits
}
