//! Shared test helpers: a deliberately naive per-element split oracle that
//! shares no logic with the crate's run-based paths, and random tensors.

#![allow(dead_code)]

pub mod concat;
pub mod emulator;
#[path = "../../examples/webgpu_recordings/permuted_layouts.rs"]
pub mod permuted_layouts;

use wgpu_split::plan::{Form, Kernel};
use wgpu_split::{ElementType, HostTensor, ResolvedSplit};

/// A small deterministic PRNG (xorshift64*), so failures reproduce.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }

    /// Random lengths (zeros included) that sum to `dim`, `count >= 1` of them.
    pub fn lengths(&mut self, dim: usize, count: usize) -> Vec<usize> {
        let mut cuts: Vec<usize> = (0..count - 1).map(|_| self.below(dim + 1)).collect();
        cuts.sort();
        let mut prev = 0;
        let mut out = Vec::with_capacity(count);
        for c in cuts {
            out.push(c - prev);
            prev = c;
        }
        out.push(dim - prev);
        out
    }
}

/// A tensor of random contents. Sub-byte tensors get random bits in their
/// padding too, so a path that copies padding into outputs is caught.
pub fn random_tensor(rng: &mut Rng, element_type: ElementType, shape: &[usize]) -> HostTensor {
    let count: usize = shape.iter().product();
    match element_type.byte_len(count) {
        Some(len) => HostTensor::from_raw(element_type, shape, rng.bytes(len)).unwrap(),
        None => {
            let strings = (0..count)
                .map(|_| {
                    let n = rng.below(5);
                    rng.bytes(n)
                })
                .collect();
            HostTensor::from_byte_strings(shape, strings).unwrap()
        }
    }
}

/// Reads element `index` of a packed fixed-width buffer as its bytes
/// (sub-byte elements as one byte holding the value).
fn read_element(bytes: &[u8], bits: usize, index: usize) -> Vec<u8> {
    if bits >= 8 {
        let w = bits / 8;
        bytes[index * w..(index + 1) * w].to_vec()
    } else {
        let bit = index * bits;
        vec![(bytes[bit / 8] >> (bit % 8)) & ((1u8 << bits) - 1)]
    }
}

fn write_element(bytes: &mut [u8], bits: usize, index: usize, value: &[u8]) {
    if bits >= 8 {
        let w = bits / 8;
        bytes[index * w..(index + 1) * w].copy_from_slice(value);
    } else {
        let bit = index * bits;
        bytes[bit / 8] |= value[0] << (bit % 8);
    }
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The oracle: for every output element, compute its multi-index, map it to
/// the input's multi-index (axis coordinate + start) and copy that element.
pub fn naive_split(input: &HostTensor, split: &ResolvedSplit) -> Vec<HostTensor> {
    let shape = input.shape().to_vec();
    let axis = split.axis();
    let in_strides = strides(&shape);
    let mut outputs = Vec::new();
    for (i, (start, len)) in split.windows().enumerate() {
        let mut out_shape = shape.clone();
        out_shape[axis] = len;
        let out_strides = strides(&out_shape);
        let count: usize = out_shape.iter().product();
        let source_index = |flat: usize| -> usize {
            (0..shape.len())
                .map(|d| {
                    let coordinate = flat / out_strides[d] % out_shape[d];
                    let coordinate = if d == axis {
                        coordinate + start
                    } else {
                        coordinate
                    };
                    coordinate * in_strides[d]
                })
                .sum()
        };
        let final_shape = split.output_shape(i);
        let tensor = match input.element_type().bit_width() {
            Some(bits) => {
                let bits = bits as usize;
                let src = input.as_bytes().unwrap();
                let mut out = vec![0u8; (count * bits).div_ceil(8)];
                for flat in 0..count {
                    let value = read_element(src, bits, source_index(flat));
                    write_element(&mut out, bits, flat, &value);
                }
                HostTensor::from_raw(input.element_type(), &final_shape, out).unwrap()
            }
            None => {
                let src = input.byte_strings().unwrap();
                let out = (0..count)
                    .map(|flat| src[source_index(flat)].clone())
                    .collect();
                HostTensor::from_byte_strings(&final_shape, out).unwrap()
            }
        };
        outputs.push(tensor);
    }
    outputs
}

/// The checkout the tests read their data from: `WGPU_SPLIT_ROOT` where
/// set (the GPU bundle's copy of `tests/data`, `scripts/gpu_bundle.sh`,
/// where the test binaries run with no checkout), else this crate's.
pub fn repo_root() -> std::path::PathBuf {
    std::env::var_os("WGPU_SPLIT_ROOT")
        .map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), Into::into)
}

/// The node-test directories of `tests/data/<set>`, sorted.
pub fn data_dirs(set: &str) -> Vec<std::path::PathBuf> {
    let root = repo_root().join("tests/data").join(set);
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Runs node-test directories on the host path (splits and concats) and
/// returns the summary with the printed lines.
pub fn run_on_host(dirs: &[std::path::PathBuf]) -> (wgpu_split::onnx::node_test::Summary, String) {
    let mut out = Vec::new();
    let summary = wgpu_split::onnx::node_test::run_directories_with(
        dirs,
        wgpu_split::Operator::split_on_host,
        wgpu_split::ConcatOperator::concat_on_host,
        &mut out,
    )
    .unwrap();
    (summary, String::from_utf8(out).unwrap())
}

/// Asserts two output lists are equal bit for bit, naming the first difference.
pub fn assert_outputs_equal(expected: &[HostTensor], actual: &[HostTensor], context: &str) {
    assert_eq!(expected.len(), actual.len(), "{context}: output count");
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        assert_eq!(
            e.element_type(),
            a.element_type(),
            "{context}: output {i} type"
        );
        assert_eq!(e.shape(), a.shape(), "{context}: output {i} shape");
        if e != a {
            let detail = match (e.as_bytes(), a.as_bytes()) {
                (Ok(eb), Ok(ab)) => {
                    let at = eb.iter().zip(ab).position(|(x, y)| x != y).unwrap_or(0);
                    format!(
                        "first differing byte {at} of {}: expected {:#04x}, got {:#04x}",
                        eb.len(),
                        eb[at],
                        ab[at]
                    )
                }
                _ => format!(
                    "expected {:?}, got {:?}",
                    e.byte_strings(),
                    a.byte_strings()
                ),
            };
            panic!("{context}: output {i} {:?} differs: {detail}", e.shape());
        }
    }
}

/// The shared GPU splitter for tests. A test that needs a GPU calls this and
/// gets `None` only when `WGPU_SPLIT_ALLOW_NO_GPU=1` is set and no adapter
/// exists, after printing a visible SKIPPED line; otherwise a missing adapter
/// fails the test with the fix.
pub fn gpu(test: &str) -> Option<&'static wgpu_split::gpu::GpuSplitter> {
    use std::sync::OnceLock;
    use wgpu_split::gpu::{GpuContext, GpuSplitter};
    static GPU: OnceLock<Result<GpuSplitter, String>> = OnceLock::new();
    let result = GPU.get_or_init(|| {
        GpuContext::new_default()
            .and_then(|ctx| {
                eprintln!("wgpu-split tests: adapter {}", ctx.describe());
                ctx.splitter()
            })
            .map_err(|e| e.to_string())
    });
    match result {
        Ok(splitter) => Some(splitter),
        Err(e) if std::env::var("WGPU_SPLIT_ALLOW_NO_GPU").as_deref() == Ok("1") => {
            println!("SKIPPED {test}: {e} (WGPU_SPLIT_ALLOW_NO_GPU=1)");
            eprintln!("SKIPPED {test}: {e} (WGPU_SPLIT_ALLOW_NO_GPU=1)");
            None
        }
        Err(e) => panic!(
            "{test} needs a GPU adapter: {e}. Install one (apt-get install -y mesa-vulkan-drivers) \
             or set WGPU_SPLIT_ALLOW_NO_GPU=1 to skip GPU tests visibly."
        ),
    }
}

/// Plan limits with tiny windows (and optionally few workgroups per
/// dimension) that force multi-pass plans and 2-D grids on small tensors.
pub fn tiny(window: u64, max_groups: u32) -> wgpu_split::plan::PlanLimits {
    wgpu_split::plan::PlanLimits {
        min_storage_buffer_offset_alignment: 256,
        max_storage_buffer_binding_size: window,
        max_buffer_size: 256 << 20,
        max_compute_workgroups_per_dimension: max_groups,
        max_storage_buffers_per_shader_stage: 8,
        min_uniform_buffer_offset_alignment: 256,
        max_uniform_buffer_binding_size: 64 << 10,
    }
}

/// Reads a whole buffer back through a staging buffer.
pub fn read_buffer(gpu: &wgpu_split::gpu::GpuSplitter, buffer: &wgpu::Buffer) -> Vec<u8> {
    let staging = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    gpu.queue().submit([encoder.finish()]);
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.unwrap());
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    staging.slice(..).get_mapped_range().unwrap().to_vec()
}

/// Runs `call`, which must fail with a typed error before wgpu sees
/// anything: no validation error reaches the device, and the encoder still
/// finishes and submits cleanly. Returns the error.
pub fn refused(
    gpu: &wgpu_split::gpu::GpuSplitter,
    call: impl FnOnce(&mut wgpu::CommandEncoder) -> wgpu_split::Error,
) -> wgpu_split::Error {
    let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let e = call(&mut encoder);
    gpu.queue().submit([encoder.finish()]);
    assert!(
        pollster::block_on(scope.pop()).is_none(),
        "wgpu saw the mistake: {e}"
    );
    e
}

/// Makes a random split of some form for an element type and output count.
pub type SplitGenerator = fn(&mut Rng, ElementType, usize) -> ResolvedSplit;

/// A cost model under which every output is gathered and the funnel
/// kernel comes first wherever it fits (as on lavapipe, whose model ranks
/// it first too, but without ever choosing copies): its per-layout form
/// (row streams) where that takes the outputs, else its table-driven form;
/// with [`Form::Table`] forced ([`funnel_first`]), the table-driven form.
pub fn streams_first() -> wgpu_split::plan::CostModel {
    let mut model = wgpu_split::plan::CostModel {
        copy_bytes_per_second: 1.0,
        copy_command_seconds: 1.0,
        ..wgpu_split::plan::CostModel::LAVAPIPE
    };
    model
        .gather_bytes_per_second
        .set(wgpu_split::plan::Kernel::Funnel, 1e15);
    model
}

/// A cost model under which every output is gathered and the row-block
/// kernel comes first wherever it fits: the row-block tests' ranking,
/// whatever a calibration on a busy machine measured.
pub fn row_blocks_first() -> wgpu_split::plan::CostModel {
    let mut model = streams_first();
    model
        .gather_bytes_per_second
        .set(wgpu_split::plan::Kernel::RowBlocks, 2e15);
    model
}

/// Options under which the table-driven funnel comes first wherever it
/// fits ([`streams_first`] with the table-driven forms forced): every model
/// ranks row streams above it where both fit, so the funnel's own tests ask
/// for it.
pub fn funnel_first() -> wgpu_split::plan::PlanOptions {
    wgpu_split::plan::PlanOptions::default()
        .strategy(wgpu_split::plan::Strategy::Auto(streams_first()))
        .form(Form::Table)
}

/// What a plan runs: its kernel and the form of it (the tests name them
/// by the access pattern: [`ROW_COPIES`], [`VEC4_TABLE`], ...).
pub fn runs(plan: &wgpu_split::plan::SplitPlan) -> (Kernel, Form) {
    (plan.kernel(), plan.form())
}

/// The word kernel.
pub const WORDS: (Kernel, Form) = (Kernel::Words, Form::Table);
/// The vec4 kernel's per-layout form: row copies.
pub const ROW_COPIES: (Kernel, Form) = (Kernel::Vec4, Form::PerLayout);
/// The vec4 kernel's table-driven form.
pub const VEC4_TABLE: (Kernel, Form) = (Kernel::Vec4, Form::Table);
/// The row-word kernel.
pub const ROW_WORDS: (Kernel, Form) = (Kernel::RowWords, Form::PerLayout);
/// The row-block kernel.
pub const ROW_BLOCKS: (Kernel, Form) = (Kernel::RowBlocks, Form::PerLayout);
/// The funnel kernel's per-layout form: row streams.
pub const ROW_STREAMS: (Kernel, Form) = (Kernel::Funnel, Form::PerLayout);
/// The funnel kernel's table-driven form.
pub const FUNNEL_TABLE: (Kernel, Form) = (Kernel::Funnel, Form::Table);
/// The concat-word kernel.
pub const CONCAT_WORDS: (Kernel, Form) = (Kernel::ConcatWords, Form::PerLayout);

/// `options` with one kernel in one of its forms forced.
pub fn forced(
    options: wgpu_split::plan::PlanOptions,
    (kernel, form): (Kernel, Form),
) -> wgpu_split::plan::PlanOptions {
    options.kernel(kernel).form(form)
}

/// Every kernel in each of its forms, in table order.
pub fn kernel_forms() -> Vec<(Kernel, Form)> {
    wgpu_split::plan::internals::kernel_forms()
}

/// Resident memory of this process in bytes (Linux).
pub fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// Waits until the device has run everything submitted.
pub fn wait_idle(gpu: &wgpu_split::gpu::GpuSplitter) {
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
}

/// A fresh input and fresh destinations (one per output, or the arena),
/// `plan` encoded into them, submitted, run and dropped.
pub fn encode_fresh(gpu: &wgpu_split::gpu::GpuSplitter, plan: &wgpu_split::plan::SplitPlan) {
    use wgpu_split::gpu::BufferRegion;
    let input = round_trip(gpu)
        .create_input(&vec![7u8; plan.input_bytes() as usize])
        .unwrap();
    let destinations = round_trip(gpu).create_destinations(plan).unwrap();
    let regions: Vec<BufferRegion> = destinations.iter().map(BufferRegion::whole).collect();
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    gpu.encode(&mut encoder, plan, BufferRegion::whole(&input), &regions)
        .unwrap();
    gpu.queue().submit([encoder.finish()]);
    wait_idle(gpu);
}

/// The round trip (host tensor in, host tensors out) through `gpu`.
/// Encodes `plan` from `input` into `destinations` and submits it.
pub fn encode_and_submit(
    gpu: &wgpu_split::gpu::GpuSplitter,
    plan: &wgpu_split::plan::SplitPlan,
    input: wgpu_split::gpu::BufferRegion<'_>,
    destinations: &[wgpu_split::gpu::BufferRegion<'_>],
) -> Result<(), wgpu_split::Error> {
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    gpu.encode(&mut encoder, plan, input, destinations)?;
    gpu.queue().submit([encoder.finish()]);
    Ok(())
}

pub fn round_trip(gpu: &wgpu_split::gpu::GpuSplitter) -> wgpu_split::gpu::RoundTrip<'_> {
    wgpu_split::gpu::RoundTrip::new(gpu)
}

/// A split the funnel kernel takes, for element type `t` (2 to 128 bits):
/// runs of at least 128 bits at odd lengths (so most start and end mid-word),
/// on the middle axis of `[outer, dim, inner]`, with `outer` a multiple of
/// what makes every output and the input whole vec4s. Zero-length outputs
/// are allowed (they are not gathered).
pub fn funnel_split(rng: &mut Rng, t: ElementType, count: usize) -> ResolvedSplit {
    let width = t.bit_width().expect("a GPU element type") as usize;
    let inner = 1 + rng.below(3);
    // outer * width * inner is then a multiple of 128 for any run length.
    let outer = (128 / gcd(128, width * inner)) * (1 + rng.below(2));
    let shortest = 128usize.div_ceil(width * inner);
    let lengths: Vec<usize> = (0..count)
        .map(|_| {
            if rng.below(8) == 0 {
                0
            } else {
                shortest + rng.below(24)
            }
        })
        .collect();
    let mut lengths = lengths;
    if lengths.iter().all(|&l| l == 0) {
        lengths[0] = shortest;
    }
    let dim = lengths.iter().sum();
    ResolvedSplit::new(&[outer, dim, inner], 1, lengths, true).unwrap()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// One element type of each GPU width (2 to 128 bits).
pub fn one_type_per_width() -> [ElementType; 7] {
    [
        ElementType::Uint2,
        ElementType::Int4,
        ElementType::Uint8,
        ElementType::Float16,
        ElementType::Float,
        ElementType::Double,
        ElementType::Complex128,
    ]
}

/// A split the row-block kernel takes, for element type `t`: short runs at
/// odd lengths on the middle axis of `[outer, dim, inner]`, a block small
/// enough for registers, `outer` a multiple of the rows that make every
/// output's share of a block whole vec4s (128 rows covers every width).
pub fn row_block_split(rng: &mut Rng, t: ElementType, count: usize) -> ResolvedSplit {
    let width = t.bit_width().expect("a GPU element type") as usize;
    let inner = 1 + rng.below(2);
    let lengths: Vec<usize> = (0..count).map(|_| rng.below(4)).collect();
    let mut lengths = lengths;
    if lengths.iter().all(|&l| l == 0) {
        lengths[0] = 1;
    }
    let dim: usize = lengths.iter().sum();
    // Rows per block: 128 / gcd(128, bits) for the row and every run.
    let mut rows = 1;
    for bits in lengths
        .iter()
        .map(|l| l * inner * width)
        .chain([dim * inner * width])
    {
        if bits > 0 {
            let need = 128 / gcd(128, bits);
            rows = rows / gcd(rows, need) * need;
        }
    }
    let outer = rows * (1 + rng.below(3));
    ResolvedSplit::new(&[outer, dim, inner], 1, lengths, true).unwrap()
}

/// The oracle of a piece's move: `piece` (row-major) reshaped to `shape`
/// and permuted by `perm`, element by element: output element `o` (a
/// multi-index of the permuted shape) is the element at the factored index
/// `f` with `f[perm[j]] = o[j]`, whose row-major position in `shape` is the
/// piece's.
pub fn naive_move(piece: &HostTensor, shape: &[usize], perm: &[usize]) -> HostTensor {
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let (factored, out) = (strides(shape), strides(&out_shape));
    let count: usize = out_shape.iter().product();
    let source = |flat: usize| -> usize {
        (0..perm.len())
            .map(|j| flat / out[j] % out_shape[j] * factored[perm[j]])
            .sum()
    };
    match piece.element_type().bit_width() {
        Some(bits) => {
            let bits = bits as usize;
            let src = piece.as_bytes().unwrap();
            let mut bytes = vec![0u8; (count * bits).div_ceil(8)];
            for flat in 0..count {
                write_element(
                    &mut bytes,
                    bits,
                    flat,
                    &read_element(src, bits, source(flat)),
                );
            }
            HostTensor::from_raw(piece.element_type(), &out_shape, bytes).unwrap()
        }
        None => {
            let src = piece.byte_strings().unwrap();
            let strings = (0..count).map(|flat| src[source(flat)].clone()).collect();
            HostTensor::from_byte_strings(&out_shape, strings).unwrap()
        }
    }
}

/// A random factoring of `piece` (each dimension cut into one to three
/// factors, 1s inserted now and then; now and then the whole piece merged
/// first, which only a piece lying in one stretch of the input takes) and
/// a random permutation of it.
pub fn random_move(rng: &mut Rng, piece: &[usize]) -> wgpu_split::PieceMove {
    let merged = [piece.iter().product::<usize>()];
    let piece = if rng.below(5) == 0 {
        &merged[..]
    } else {
        piece
    };
    let mut shape = Vec::new();
    for &d in piece {
        if rng.below(4) == 0 {
            shape.push(1);
        }
        let divisors: Vec<usize> = (1..=d).filter(|k| d > 0 && d.is_multiple_of(*k)).collect();
        if d > 1 && rng.below(2) == 0 {
            let a = divisors[rng.below(divisors.len())];
            let rest = d / a;
            let rest_divisors: Vec<usize> =
                (1..=rest).filter(|k| rest.is_multiple_of(*k)).collect();
            let b = rest_divisors[rng.below(rest_divisors.len())];
            shape.extend([a, b, rest / b]);
        } else {
            shape.push(d);
        }
    }
    let mut perm: Vec<usize> = (0..shape.len()).collect();
    for i in (1..perm.len()).rev() {
        perm.swap(i, rng.below(i + 1));
    }
    wgpu_split::PieceMove::new(shape, perm)
}

/// The permuted concat that undoes a split (shared with the recordings;
/// not every test uses it).
#[allow(unused_imports)]
pub use permuted_layouts::concat_undoing;

/// Issue 39's access cases at fewer tokens: GPT-2's QKV into heads of 64
/// (f16), a grouped-query QKV (32 + 8 + 8 heads of 128, f16), YOLOv8's
/// distribution head over 840 anchors (f32; its class scores kept).
pub fn heads_cases() -> [(&'static str, wgpu_split::PermutedSplit, ElementType); 3] {
    use wgpu_split::{PermutedSplit, PieceMove};
    let f16 = ElementType::Float16;
    let gpt2 = PermutedSplit::split_heads(&[2, 64, 2304], &[768; 3], 64).unwrap();
    let gqa = PermutedSplit::split_heads(&[1, 64, 48 * 128], &[4096, 1024, 1024], 128).unwrap();
    let dfl = PermutedSplit::new(
        ResolvedSplit::new(&[1, 144, 840], 1, vec![64, 80], true).unwrap(),
        vec![
            PieceMove::new(vec![1, 4, 16, 840], vec![0, 2, 1, 3]),
            PieceMove::keep(&[1, 80, 840]),
        ],
    )
    .unwrap();
    [
        ("gpt2 qkv f16", gpt2, f16),
        ("gqa qkv f16", gqa, f16),
        ("yolov8 dfl f32", dfl, ElementType::Float),
    ]
}

/// layout_cdla's `[1, 32, width]` piece of `[1, 42, width]` transposed as
/// `(0, 2, 1)` (the fastest axis across the output's rows), its
/// `[1, 10, width]` piece kept.
pub fn cdla_transpose(width: usize) -> wgpu_split::PermutedSplit {
    use wgpu_split::PieceMove;
    wgpu_split::PermutedSplit::new(
        ResolvedSplit::new(&[1, 42, width], 1, vec![10, 32], true).unwrap(),
        vec![
            PieceMove::keep(&[1, 10, width]),
            PieceMove::new(vec![1, 32, width], vec![0, 2, 1]),
        ],
    )
    .unwrap()
}

/// Attention's K as `[B, H, D, S]`: each of Q, K and V of a
/// `[2, s, 3·h·d]` projection moved so that S is the fastest axis.
pub fn k_transposed(s: usize, h: usize, d: usize) -> wgpu_split::PermutedSplit {
    wgpu_split::PermutedSplit::new(
        ResolvedSplit::new(&[2, s, 3 * h * d], 2, vec![h * d; 3], true).unwrap(),
        vec![wgpu_split::PieceMove::new(vec![2, s, h, d], vec![0, 2, 3, 1]); 3],
    )
    .unwrap()
}

/// Issue 39's transposes of the fastest axis, which GPUs move through
/// tiles, with the sectors per request each is held to: layout_cdla's
/// piece (`cdla_width` columns) and attention's K^T in f32, f64, f16 and
/// u8 at 1.15x; K^T with S = 100 f32 at 1.20x (rows of 400 bytes, no whole
/// sectors: each tile's rows straddle one sector more than their bytes
/// need, 1.12x at W = 32 and 1.16x at W = 64).
pub fn tile_cases(
    cdla_width: usize,
) -> Vec<(&'static str, wgpu_split::PermutedSplit, ElementType, f64)> {
    let f32_t = ElementType::Float;
    vec![
        ("layout_cdla f32", cdla_transpose(cdla_width), f32_t, 1.15),
        ("K^T f32 S=128 D=64", k_transposed(128, 4, 64), f32_t, 1.15),
        (
            "K^T f64 S=96 D=32",
            k_transposed(96, 2, 32),
            ElementType::Double,
            1.15,
        ),
        (
            "K^T f16 S=128 D=64",
            k_transposed(128, 4, 64),
            ElementType::Float16,
            1.15,
        ),
        (
            "K^T u8 S=96 D=32",
            k_transposed(96, 2, 32),
            ElementType::Uint8,
            1.15,
        ),
        ("K^T f32 S=100 D=48", k_transposed(100, 2, 48), f32_t, 1.20),
    ]
}

/// A permuted split of a `[6, 5, 12]` tensor on its last axis: 8 columns
/// as heads of 4 (`[6, 2, 5, 4]`, heads ahead of the sequence) and 4 kept
/// as they are (a copy command where the buffers take one).
pub fn heads_and_a_kept_piece() -> wgpu_split::PermutedSplit {
    wgpu_split::PermutedSplit::new(
        ResolvedSplit::new(&[6, 5, 12], 2, vec![8, 4], true).unwrap(),
        vec![
            wgpu_split::PieceMove::new(vec![6, 5, 2, 4], vec![0, 2, 1, 3]),
            wgpu_split::PieceMove::keep(&[6, 5, 4]),
        ],
    )
    .unwrap()
}
