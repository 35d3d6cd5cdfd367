//! What each GPU and host method records or runs, checked against the
//! host path before it is timed, and the timing of one case.

use std::time::Instant;

use wgpu_split::gpu::{BufferRegion, GpuSplitter, RoundTrip};
use wgpu_split::plan::{ConcatPlan, CostModel, Placement, SplitPlan};
use wgpu_split::{HostTensor, ResolvedConcat, ResolvedSplit};

use crate::cases::Case;
use crate::gpu_timer::GpuTimer;
use crate::method::Method;
use crate::report::Row;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Random bytes for the input (a cheap xorshift; contents do not matter for
/// timing, only for the checks).
fn random_input(case: &Case) -> HostTensor {
    let count: usize = case.shape.iter().product();
    let len = case.element_type.byte_len(count).expect("fixed-width type");
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut bytes = Vec::with_capacity(len);
    while bytes.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(len);
    HostTensor::from_raw(case.element_type, &case.shape, bytes).expect("sized input")
}

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A case's input, its split and the host path's outputs; for a concat
/// case, the concat that joins those outputs back into the input.
struct Problem {
    input: HostTensor,
    split: ResolvedSplit,
    expected: Vec<HostTensor>,
    concat: Option<ResolvedConcat>,
    /// The input's bytes, padded to 16 so the vec4 shader copy reads it whole.
    padded: Vec<u8>,
    /// Bytes the split moves ([`moved_bytes`]).
    moved: u64,
    /// What the one-copy baselines copy: as many bytes as the split moves
    /// (its outputs; more than the input where pieces overlap, as in
    /// `tensor_split`), the input's bytes over and over, padded to 16.
    baseline: Vec<u8>,
}

/// Bytes a split moves: its outputs', or the input's where that is more
/// (outputs that leave part of the input unread).
fn moved_bytes(input: &HostTensor, expected: &[HostTensor]) -> Result<u64> {
    let mut outputs = 0;
    for t in expected {
        outputs += t.as_bytes()?.len() as u64;
    }
    Ok(outputs.max(input.as_bytes()?.len() as u64))
}

/// Every method's row for `case`: the GPU methods prepared, checked and
/// timed round-robin (so that all see the same machine noise), the best
/// forced strategy, then the host methods.
pub fn bench_case(
    splitter: &GpuSplitter,
    calibrated: Option<&CostModel>,
    timer: &GpuTimer,
    case: &Case,
    runs: usize,
) -> Result<Vec<Row>> {
    let input = random_input(case);
    let split = case.op.resolve(&case.shape)?;
    let expected = input.split(&split)?;
    let mut padded = input.as_bytes()?.to_vec();
    padded.resize(padded.len().div_ceil(16) * 16, 0);
    let bytes = moved_bytes(&input, &expected)?;
    let baseline: Vec<u8> = input
        .as_bytes()?
        .iter()
        .copied()
        .cycle()
        .take(bytes as usize)
        .chain(std::iter::repeat(0))
        .take(bytes.div_ceil(16) as usize * 16)
        .collect();
    let problem = Problem {
        input,
        split,
        expected,
        concat: case.concat()?,
        padded,
        moved: bytes,
        baseline,
    };
    let input_buffer = RoundTrip::new(splitter).create_input(&problem.padded)?;
    let baseline_buffer = RoundTrip::new(splitter).create_input(&problem.baseline)?;
    let mut rows = Vec::new();
    let mut prepared = Vec::new();
    for method in Method::GPU {
        if method == Method::View {
            rows.extend(time_views(splitter, case, &problem, &input_buffer, runs)?);
            continue;
        }
        let buffers = (&input_buffer, &baseline_buffer);
        if let Some(p) = prepare(splitter, calibrated, method, case, &problem, buffers)? {
            prepared.push(p);
        }
    }
    let times = time_round_robin(splitter, timer, &prepared, &input_buffer, runs);
    for (p, (samples, record)) in prepared.iter().zip(times) {
        let row = Row::new(
            case.name,
            p.method,
            bytes,
            median(samples.clone()),
            p.note(),
        );
        rows.push(row.recorded_in(record).sampled(samples));
    }
    // Report in the fixed method order, then the best forced strategy.
    rows.sort_by_key(|r| Method::GPU.iter().position(|m| *m == r.method));
    if let Some(best) = rows
        .iter()
        .filter(|r| Method::FORCED.contains(&r.method))
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
    {
        let note = format!("the faster forced strategy: {}", best.method);
        let row = Row::new(case.name, Method::BestFixed, bytes, best.seconds, note);
        rows.push(row.sampled(best.samples.clone()));
    }
    rows.extend(time_host(case, &problem, runs)?);
    Ok(rows)
}

/// A GPU method's work for `case`, checked against the host path; `None`
/// where the method does not apply (a copy of runs that are not words).
/// The splits read the input buffer, the one-copy baselines the baseline
/// buffer (as many bytes as the split moves).
fn prepare(
    splitter: &GpuSplitter,
    calibrated: Option<&CostModel>,
    method: Method,
    case: &Case,
    problem: &Problem,
    (input_buffer, baseline_buffer): (&wgpu::Buffer, &wgpu::Buffer),
) -> Result<Option<Prepared>> {
    let device = splitter.device();
    let size = problem.baseline.len() as u64;
    // A copy command per run: past this many the baseline only measures
    // how long wgpu takes to record them (the narrow shapes have millions).
    const MOST_COPIES: usize = 262_144;
    let split = &problem.split;
    let copies = split.input_shape()[..split.axis()]
        .iter()
        .product::<usize>()
        * split.output_shapes().len();
    if method == Method::PerOutputCopy && copies > MOST_COPIES {
        eprintln!(
            "    {method}: n/a: about {copies} copy commands, past the bench's {MOST_COPIES}"
        );
        return Ok(None);
    }
    let planned = method.plan_options(splitter, calibrated);
    let work = if let (Some((options, limits)), Some(concat)) = (&planned, &problem.concat) {
        // On the device's limits, through the splitter (its class model
        // ranks the kernels of a forced strategy, as a runtime's plans);
        // on other limits (the GPU classes'), as the strategy's model says.
        let planned = if limits == splitter.limits() {
            splitter.plan_with(concat, case.element_type, options)
        } else {
            ConcatPlan::new(concat, case.element_type, limits, options)
        };
        match planned {
            Ok(plan) => concat_work(splitter, plan, &problem.expected)?,
            Err(e) => {
                eprintln!("    {method}: n/a: {e}");
                return Ok(None);
            }
        }
    } else if let Some((options, limits)) = planned {
        let planned = if &limits == splitter.limits() {
            splitter.plan_with(&problem.split, case.element_type, &options)
        } else {
            SplitPlan::new(&problem.split, case.element_type, &limits, &options)
        };
        match planned {
            Ok(plan) => {
                let buffers = RoundTrip::new(splitter).create_destinations(&plan)?;
                Work::Plan(Box::new(plan), buffers)
            }
            Err(e) => {
                eprintln!("    {method}: n/a: {e}");
                return Ok(None);
            }
        }
    } else if method == Method::CopyLimit {
        let dst = storage_buffer(device, size);
        Work::Copy(baseline_buffer.clone(), dst, problem.moved.div_ceil(4) * 4)
    } else {
        let dst = storage_buffer(device, size);
        Work::Shader(ShaderCopy::new(device, baseline_buffer, &dst, size), dst)
    };
    let p = Prepared { method, work };
    let record = |e: &mut wgpu::CommandEncoder| p.record(splitter, input_buffer, e);
    match &p.work {
        Work::Plan(plan, buffers) => {
            check_plan(splitter, &record, buffers, plan, &problem.expected, method)?
        }
        Work::Concat(_, _, output) => {
            let bytes = run_and_read(splitter, &record, output)?;
            let want = problem.input.as_bytes()?;
            if &bytes[..want.len()] != want {
                return Err(format!("{method}: the concat differs from the tensor").into());
            }
        }
        Work::Copy(_, dst, _) | Work::Shader(_, dst) => {
            check_copy(splitter, &record, dst, &problem.baseline, method)?
        }
    }
    Ok(Some(p))
}

/// Wall seconds the device is kept busy before a case's rounds
/// ([`GpuTimer::hold_clocks`]).
const CLOCK_HOLD_SECONDS: f64 = 0.2;

/// Device seconds of each prepared method in every round, and its median
/// host seconds to record. Each round runs the methods in an order of its
/// own (a fixed pseudo-random shuffle), so no method always runs right
/// after the same one: what ran before decides what the host's caches
/// hold. With each round only rotated, `plan` always ran right after the
/// shader copy of another buffer and found the input out of cache: on
/// tensors of 3 MB (the YOLO heads) it timed 1.6-2x slower than `gather`,
/// the same commands (equal plans) that ran after another split.
fn time_round_robin(
    splitter: &GpuSplitter,
    timer: &GpuTimer,
    prepared: &[Prepared],
    input_buffer: &wgpu::Buffer,
    runs: usize,
) -> Vec<(Vec<f64>, f64)> {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); prepared.len()];
    let mut records: Vec<Vec<f64>> = vec![Vec::new(); prepared.len()];
    for p in prepared {
        timer.warm_up(&|e: &mut wgpu::CommandEncoder| p.record(splitter, input_buffer, e));
    }
    if let Some(p) = prepared.first() {
        timer.hold_clocks(
            &|e: &mut wgpu::CommandEncoder| p.record(splitter, input_buffer, e),
            CLOCK_HOLD_SECONDS,
        );
    }
    let mut order: Vec<usize> = (0..prepared.len()).collect();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    for _ in 0..runs {
        // Fisher-Yates with a xorshift: the same orders every run.
        for k in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(k, (state % (k as u64 + 1)) as usize);
        }
        for &i in &order {
            let p = &prepared[i];
            let (device, host) =
                timer.once(&|e: &mut wgpu::CommandEncoder| p.record(splitter, input_buffer, e));
            samples[i].push(device);
            records[i].push(host);
        }
    }
    samples
        .into_iter()
        .zip(records)
        .map(|(s, r)| (s, median(r)))
        .collect()
}

/// The host methods, on preallocated outputs as a runtime would reuse
/// them, interleaved like the GPU methods.
fn time_host(case: &Case, problem: &Problem, runs: usize) -> Result<Vec<Row>> {
    let (input, split, expected) = (&problem.input, &problem.split, &problem.expected);
    let mut outputs: Vec<Vec<u8>> = expected
        .iter()
        .map(|t| vec![0u8; t.as_bytes().map_or(0, <[u8]>::len)])
        .collect();
    let pieces: Vec<&HostTensor> = expected.iter().collect();
    let mut joined = vec![0u8; input.as_bytes()?.len()];
    let time_split = |outputs: &mut Vec<Vec<u8>>, joined: &mut Vec<u8>| {
        let t = Instant::now();
        if let Some(concat) = &problem.concat {
            HostTensor::concat_into(&pieces, concat, joined).expect("host concat");
        } else {
            let mut slices: Vec<&mut [u8]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
            input.split_into(split, &mut slices).expect("host split");
        }
        t.elapsed().as_secs_f64()
    };
    time_split(&mut outputs, &mut joined);
    if problem.concat.is_some() {
        if joined.as_slice() != input.as_bytes()? {
            return Err(format!("{}: host concat differs from the tensor", case.name).into());
        }
    } else {
        for (o, e) in outputs.iter().zip(expected) {
            if o.as_slice() != e.as_bytes()? {
                return Err(
                    format!("{}: host path differs from HostTensor::split", case.name).into(),
                );
            }
        }
    }
    // As many bytes as the split moves, like the GPU baselines.
    let bytes = problem.moved;
    let src = &problem.baseline[..bytes as usize];
    let mut dst = vec![0u8; src.len()];
    let memcpy = |dst: &mut [u8]| {
        let t = Instant::now();
        dst.copy_from_slice(std::hint::black_box(src));
        std::hint::black_box(&dst);
        t.elapsed().as_secs_f64()
    };
    memcpy(&mut dst);
    if dst.as_slice() != src {
        return Err("host memcpy differs".into());
    }
    let (mut host_times, mut memcpy_times) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        host_times.push(time_split(&mut outputs, &mut joined));
        memcpy_times.push(memcpy(&mut dst));
    }
    Ok(vec![
        Row::new(
            case.name,
            Method::Host,
            bytes,
            median(host_times),
            if problem.concat.is_some() {
                "concat_into, all cores"
            } else {
                "split_into, all cores"
            },
        ),
        Row::new(
            case.name,
            Method::HostMemcpy,
            bytes,
            median(memcpy_times),
            "one memcpy",
        ),
    ])
}

/// What one GPU method records.
enum Work {
    /// A split plan and its arena, or one buffer per output.
    Plan(Box<SplitPlan>, Vec<wgpu::Buffer>),
    /// A concat plan, its inputs (one buffer each, or the arena) and its
    /// output.
    Concat(Box<ConcatPlan>, Vec<wgpu::Buffer>, wgpu::Buffer),
    /// One copy command of the given size from the first buffer into the
    /// second.
    Copy(wgpu::Buffer, wgpu::Buffer, u64),
    /// The vec4 copy kernel and its destination.
    Shader(ShaderCopy, wgpu::Buffer),
}

/// What a note adds for a plan staged through the scratch arena.
fn staged(is_staged: bool) -> &'static str {
    if is_staged { ", staged" } else { "" }
}

struct Prepared {
    method: Method,
    work: Work,
}

impl Prepared {
    /// What the table says of the work.
    fn note(&self) -> String {
        match &self.work {
            Work::Plan(plan, _) if plan.dispatch_count() > 0 => format!(
                "{} dispatch, {} copies, {} kernel{}",
                plan.dispatch_count(),
                plan.copy_count(),
                plan.runs(),
                staged(plan.is_staged())
            ),
            Work::Plan(plan, _) => format!("0 dispatch, {} copies", plan.copy_count()),
            Work::Concat(plan, ..) if plan.dispatch_count() > 0 => format!(
                "{} dispatch, {} copies, {} kernel{}",
                plan.dispatch_count(),
                plan.copy_count(),
                plan.runs(),
                staged(plan.is_staged())
            ),
            Work::Concat(plan, ..) => format!("0 dispatch, {} copies", plan.copy_count()),
            Work::Copy(..) => "one copy command".to_string(),
            Work::Shader(..) => "vec4 compute copy".to_string(),
        }
    }

    fn record(
        &self,
        splitter: &GpuSplitter,
        input: &wgpu::Buffer,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        match &self.work {
            Work::Plan(plan, buffers) => {
                let input = BufferRegion::whole(input);
                let regions: Vec<BufferRegion> = buffers.iter().map(BufferRegion::whole).collect();
                splitter
                    .encode(encoder, &**plan, input, &regions)
                    .expect("encode")
            }
            Work::Concat(plan, inputs, output) => {
                let regions: Vec<BufferRegion> = inputs.iter().map(BufferRegion::whole).collect();
                let output = BufferRegion::whole(output);
                splitter
                    .encode(encoder, &**plan, &regions, output)
                    .expect("encode")
            }
            Work::Copy(src, dst, size) => encoder.copy_buffer_to_buffer(src, 0, dst, 0, *size),
            Work::Shader(kernel, _) => kernel.record(encoder),
        }
    }
}

/// The view method: checks that each view holds its output's bytes and times
/// what a view costs a runtime (one binding per output). `None` where views
/// do not apply.
fn time_views(
    splitter: &GpuSplitter,
    case: &Case,
    problem: &Problem,
    input_buffer: &wgpu::Buffer,
    runs: usize,
) -> Result<Option<Row>> {
    let (input, expected) = (&problem.input, &problem.expected);
    let device = splitter.device();
    let views = match &problem.concat {
        Some(concat) => splitter.plan(concat, case.element_type)?.output_views(),
        None => splitter
            .plan(&problem.split, case.element_type)?
            .input_views(),
    };
    let Some(views) = views else {
        return Ok(None);
    };
    for (v, e) in views.iter().zip(expected) {
        let range = v.start as usize..v.end as usize;
        if &input.as_bytes()?[range] != e.as_bytes()? {
            return Err(format!("{}: view differs from the host path", case.name).into());
        }
    }
    let layout = view_layout(device);
    let times: Vec<f64> = (0..runs + 1)
        .map(|_| {
            let t = Instant::now();
            let groups: Vec<_> = views
                .iter()
                .map(|v| view_bind_group(device, &layout, input_buffer, v))
                .collect();
            drop(groups);
            t.elapsed().as_secs_f64()
        })
        .skip(1)
        .collect();
    let bytes = input.as_bytes()?.len() as u64;
    Ok(Some(Row::new(
        case.name,
        Method::View,
        bytes,
        median(times),
        "zero-copy bindings",
    )))
}

fn storage_buffer(device: &wgpu::Device, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench destination"),
        size,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Runs `record` once and returns the first `len` bytes of `buffer`.
fn run_and_read(
    splitter: &GpuSplitter,
    record: &dyn Fn(&mut wgpu::CommandEncoder),
    buffer: &wgpu::Buffer,
) -> Result<Vec<u8>> {
    let device = splitter.device();
    // Clear first, so a method that writes nothing cannot pass on stale data.
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.clear_buffer(buffer, 0, None);
    record(&mut encoder);
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench readback"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    splitter.queue().submit([encoder.finish()]);
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map readback"));
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let bytes = staging.slice(..).get_mapped_range()?.to_vec();
    Ok(bytes)
}

fn check_plan(
    splitter: &GpuSplitter,
    record: &dyn Fn(&mut wgpu::CommandEncoder),
    buffers: &[wgpu::Buffer],
    plan: &SplitPlan,
    expected: &[HostTensor],
    method: Method,
) -> Result<()> {
    let read: Vec<Vec<u8>> = buffers
        .iter()
        .map(|b| run_and_read(splitter, record, b))
        .collect::<Result<_>>()?;
    for (i, (output, e)) in plan.outputs().iter().zip(expected).enumerate() {
        let bytes = &read[plan.placement().destination_of(i)];
        let start = output.arena_offset_bytes;
        let got = &bytes[start as usize..(start + output.len_bytes) as usize];
        if got != e.as_bytes()? {
            return Err(format!("{method}: output {i} differs from the host path").into());
        }
    }
    Ok(())
}

fn check_copy(
    splitter: &GpuSplitter,
    record: &dyn Fn(&mut wgpu::CommandEncoder),
    dst: &wgpu::Buffer,
    src: &[u8],
    method: Method,
) -> Result<()> {
    let bytes = run_and_read(splitter, record, dst)?;
    if &bytes[..src.len()] != src {
        return Err(format!("{method}: copy differs from the input").into());
    }
    Ok(())
}

/// A plain vec4<u32> compute copy: the device's shader limit.
struct ShaderCopy {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    groups: [u32; 2],
}

const SHADER_COPY: &str = r#"
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn copy(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = (wid.y * n.x + wid.x) * 256u + lid.x;
    if (i < arrayLength(&dst)) {
        dst[i] = src[i];
    }
}
"#;

impl ShaderCopy {
    fn new(device: &wgpu::Device, src: &wgpu::Buffer, dst: &wgpu::Buffer, size: u64) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("shader_copy"),
            source: wgpu::ShaderSource::Wgsl(SHADER_COPY.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("shader_copy"),
            layout: None,
            module: &module,
            entry_point: Some("copy"),
            compilation_options: Default::default(),
            cache: None,
        });
        let binding = |buffer| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: 0,
                size: wgpu::BufferSize::new(size),
            })
        };
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("shader_copy"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: binding(src),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: binding(dst),
                },
            ],
        });
        let groups = (size / 16).div_ceil(256);
        let rows = groups.div_ceil(65535);
        ShaderCopy {
            pipeline,
            bind_group,
            groups: [groups.div_ceil(rows) as u32, rows as u32],
        }
    }

    fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.groups[0], self.groups[1], 1);
    }
}

fn view_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("view"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    })
}

fn view_bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    input: &wgpu::Buffer,
    range: &std::ops::Range<u64>,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("view"),
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: input,
                offset: range.start,
                size: wgpu::BufferSize::new((range.end - range.start).div_ceil(4) * 4),
            }),
        }],
    })
}

/// A concat plan's work: its inputs (the split's outputs) uploaded, one
/// buffer each or at the arena's offsets in one, and an output buffer of
/// the region it needs.
fn concat_work(splitter: &GpuSplitter, plan: ConcatPlan, pieces: &[HostTensor]) -> Result<Work> {
    let round_trip = RoundTrip::new(splitter);
    let needs = plan.requirements();
    let inputs = match plan.placement() {
        Placement::Arena => {
            let mut arena = vec![0u8; needs.inputs[0].bytes as usize];
            for (piece, at) in pieces.iter().zip(plan.arena_offsets()) {
                let bytes = piece.as_bytes()?;
                if let Some(at) = at {
                    arena[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
                }
            }
            vec![round_trip.create_input(&arena)?]
        }
        Placement::Separate => pieces
            .iter()
            .map(|p| round_trip.create_input(p.as_bytes()?))
            .collect::<wgpu_split::Result<_>>()?,
    };
    let output = storage_buffer(
        splitter.device(),
        needs.output_region_bytes.next_multiple_of(4).max(4),
    );
    Ok(Work::Concat(Box::new(plan), inputs, output))
}
