//! `split_bench`: how close the crate's split gets to what the device can do.
//!
//! ```text
//! cargo run --release --example split_bench -- [--quick] [--runs N] [--case NAME]
//!                                              [--json PATH] [--plot PATH] [--calibrate]
//! ```
//!
//! For each case of a fixed suite it measures, on the default adapter and in
//! one process, the crate's planner (`plan`), the forced gather dispatch, two
//! naive baselines, the device's copy and shader limits for the same byte
//! count, the host path and a host memcpy. Every method's output is checked
//! against the host path before it is timed. Device time comes from timestamp
//! queries when the adapter has them (else submit + poll wall time); the
//! figure is the median of `--runs` (default 10) runs after a warm-up, in GB/s
//! counting bytes read + written.

mod gpu_timer;
mod plot;

use std::time::Instant;

use gpu_timer::GpuTimer;
use wgpu_split::gpu::{BufferRegion, GpuContext, GpuSplitter, device_class};
use wgpu_split::plan::{CostModel, Outputs, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{
    ElementType, HostTensor, OnnxSplit, OnnxSplitToSequence, Operator, ParamTensor, ResolvedSplit,
    host,
};

/// One benchmark case: a name (fixed), a tensor and a split.
struct Case {
    name: &'static str,
    element_type: ElementType,
    shape: Vec<usize>,
    op: Operator,
}

fn suite(quick: bool) -> Vec<Case> {
    let q = |full: usize, small: usize| if quick { small } else { full };
    let split_input = |lengths: &[i64]| ParamTensor::int64_1d(lengths);
    vec![
        Case {
            name: "f32_4096x4096_axis0_4",
            element_type: ElementType::Float,
            shape: vec![q(4096, 1024), q(4096, 1024)],
            op: OnnxSplit::new(13, 4).axis(0).into(),
        },
        Case {
            name: "f32_64x1024x256_axis1_4",
            element_type: ElementType::Float,
            shape: vec![q(64, 16), q(1024, 256), 256],
            op: OnnxSplit::new(13, 4).axis(1).into(),
        },
        Case {
            name: "f32_4096x4096_axis1_4",
            element_type: ElementType::Float,
            shape: vec![q(4096, 1024), q(4096, 1024)],
            op: OnnxSplit::new(13, 4).axis(-1).into(),
        },
        Case {
            name: "f16_1048576x6_axis1_123",
            element_type: ElementType::Float16,
            shape: vec![q(1_048_576, 262_144), 6],
            op: OnnxSplit::new(13, 3)
                .axis(1)
                .split_input(split_input(&[1, 2, 3]))
                .into(),
        },
        Case {
            name: "u8_4096x4097_axis1_2",
            element_type: ElementType::Uint8,
            shape: vec![q(4096, 1024), 4097],
            op: OnnxSplit::new(13, 2)
                .axis(1)
                .split_input(split_input(&[2048, 2049]))
                .into(),
        },
        Case {
            name: "i4_4096x4099_axis1_3",
            element_type: ElementType::Int4,
            shape: vec![q(4096, 1024), 4099],
            op: OnnxSplit::new(13, 3)
                .axis(1)
                .split_input(split_input(&[1000, 1000, 2099]))
                .into(),
        },
        Case {
            name: "f32_1000x4096_seq",
            element_type: ElementType::Float,
            shape: vec![q(1000, 250), 4096],
            op: OnnxSplitToSequence::new(11).axis(0).keepdims(0).into(),
        },
        // Realistic splits: attention QKV, a detection head both ways, and
        // a channel split of an image.
        Case {
            name: "f16_8x512x2304_qkv",
            element_type: ElementType::Float16,
            shape: vec![q(8, 2), 512, 2304],
            op: OnnxSplit::new(18, 3).axis(-1).num_outputs(3).into(),
        },
        Case {
            name: "f32_1x84x8400_yolo",
            element_type: ElementType::Float,
            shape: vec![1, 84, 8400],
            op: OnnxSplit::new(13, 2)
                .axis(1)
                .split_input(split_input(&[4, 80]))
                .into(),
        },
        Case {
            name: "f32_1x8400x84_yolo_t",
            element_type: ElementType::Float,
            shape: vec![1, 8400, 84],
            op: OnnxSplit::new(13, 2)
                .axis(-1)
                .split_input(split_input(&[4, 80]))
                .into(),
        },
        Case {
            name: "f32_1x3x640x640_ch",
            element_type: ElementType::Float,
            shape: vec![1, 3, 640, 640],
            op: OnnxSplit::new(13, 3).axis(1).into(),
        },
    ]
}

/// The methods, in report order.
const GPU_METHODS: [&str; 8] = [
    "plan",
    "destinations",
    "gather",
    "per_output_dispatch",
    "per_output_copy",
    "copy_limit",
    "shader_copy",
    "view",
];

/// The forced strategies `best_fixed` takes the fastest of.
const FORCED: [&str; 3] = ["gather", "per_output_dispatch", "per_output_copy"];

/// One measured figure.
#[derive(Debug, Clone)]
pub struct Row {
    case: String,
    method: String,
    bytes: u64,
    seconds: f64,
    gbps: f64,
    note: String,
}

struct Options {
    quick: bool,
    runs: usize,
    case: Option<String>,
    json: Option<String>,
    plot: Option<String>,
    calibrate: bool,
    report: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        runs: 10,
        case: None,
        json: None,
        plot: None,
        calibrate: false,
        report: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match a.as_str() {
            "--quick" => o.quick = true,
            "--calibrate" => o.calibrate = true,
            "--report" => o.report = true,
            "--runs" => {
                o.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?;
                if o.runs < 10 {
                    return Err("--runs must be at least 10".into());
                }
            }
            "--case" => o.case = Some(value("--case")?),
            "--json" => o.json = Some(value("--json")?),
            "--plot" => o.plot = Some(value("--plot")?),
            "-h" | "--help" => {
                return Err("usage: split_bench [--quick] [--runs N] [--case NAME] [--json PATH] [--plot PATH] [--calibrate] [--report]".into());
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(o)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("split_bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let options = parse_args()?;
    let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
    let ctx = pollster::block_on(GpuContext::request_with_features(wanted))?;
    let splitter = ctx.splitter()?;
    let timer = GpuTimer::new(&ctx.device, &ctx.queue);
    let info = ctx.adapter.get_info();
    println!("adapter: {}", ctx.describe());
    println!(
        "timing: {}, median of {} runs after a warm-up",
        timer.kind(),
        options.runs
    );
    let class = device_class(&info);
    let default_model = CostModel::for_class(class);
    println!("device class: {class:?}; the planner's default model: {default_model:?}");
    let calibrated = if options.calibrate || options.report {
        let started = Instant::now();
        let model = splitter.calibrate()?;
        println!(
            "calibrated in {:.2} s (GpuSplitter::calibrate): {model:?}",
            started.elapsed().as_secs_f64()
        );
        Some(model)
    } else {
        None
    };
    if options.calibrate {
        return Ok(());
    }
    let json = options
        .json
        .clone()
        .or_else(|| options.report.then(|| "split_report.json".to_string()));
    let cases: Vec<Case> = suite(options.quick)
        .into_iter()
        .filter(|c| options.case.as_deref().is_none_or(|n| n == c.name))
        .collect();
    if cases.is_empty() {
        return Err("no case matches --case".into());
    }
    let started = Instant::now();
    // When the run began, in the JSON and the plot's caption.
    let started_utc = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut rows = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        eprintln!(
            "[{}/{}] {} {:?} ({:.0} s elapsed)",
            i + 1,
            cases.len(),
            case.name,
            case.shape,
            started.elapsed().as_secs_f64()
        );
        rows.extend(bench_case(&splitter, &timer, case, options.runs)?);
    }
    print_table(&rows);
    if let Some(path) = &json {
        let device = serde_json::json!({
            "name": info.name,
            "backend": format!("{:?}", info.backend),
            "device_type": format!("{:?}", info.device_type),
            "driver": info.driver,
            "driver_info": info.driver_info,
            "class": format!("{class:?}"),
            "default_cost_model": default_model,
            "calibrated_cost_model": calibrated,
            "timing": timer.kind(),
            "runs": options.runs,
            "quick": options.quick,
            "started": started_utc,
        });
        let results: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "case": r.case, "method": r.method, "bytes": r.bytes,
                    "seconds": r.seconds, "gbps": r.gbps,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "device": device,
            "results": results,
            "summary": summary_json(&rows),
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)?;
        println!("wrote {path}");
    }
    if let Some(path) = &options.plot {
        plot::bar_chart(&rows, path, &format!("{}, {started_utc}", info.name))?;
        println!("wrote {path}");
    }
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn row(case: &str, method: &str, bytes: u64, seconds: f64, note: impl Into<String>) -> Row {
    Row {
        case: case.to_string(),
        method: method.to_string(),
        bytes,
        seconds,
        gbps: 2.0 * bytes as f64 / seconds / 1e9,
        note: note.into(),
    }
}

fn bench_case(
    splitter: &GpuSplitter,
    timer: &GpuTimer,
    case: &Case,
    runs: usize,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let device = splitter.device();
    let input = random_input(case);
    let split = case.op.resolve(&case.shape)?;
    let expected = host::split(&input, &split)?;
    let bytes = input.as_bytes()?.len() as u64;
    // Padded to 16 bytes so the vec4 shader copy can read it whole.
    let mut padded = input.as_bytes()?.to_vec();
    padded.resize(padded.len().div_ceil(16) * 16, 0);
    let input_buffer = splitter.create_input(&padded)?;
    let mut rows = Vec::new();

    // Prepare and check every GPU method first, then time them round-robin,
    // so that all of them see the same machine noise.
    let mut prepared: Vec<Prepared> = Vec::new();
    for method in GPU_METHODS {
        // Every method but `destinations` writes one arena, as before.
        let arena = PlanOptions::default().outputs(Outputs::Arena);
        let options = match method {
            "plan" => Some(arena.strategy(*splitter.strategy())),
            "destinations" => Some(PlanOptions::default().strategy(*splitter.strategy())),
            "gather" => Some(arena.strategy(Strategy::Gather)),
            "per_output_dispatch" => Some(arena.strategy(Strategy::GatherPerOutput)),
            "per_output_copy" => Some(arena.strategy(Strategy::Copy)),
            _ => None,
        };
        let work = if let Some(options) = options {
            match splitter.plan_with(&split, case.element_type, splitter.plan_limits(), &options) {
                Ok(plan) => {
                    let buffers = match plan.placement() {
                        Outputs::Arena => vec![splitter.create_arena(&plan)?],
                        _ => splitter.create_output_buffers(&plan)?,
                    };
                    Work::Plan(Box::new(plan), buffers)
                }
                Err(e) => {
                    eprintln!("    {method}: n/a: {e}");
                    continue;
                }
            }
        } else {
            match method {
                "copy_limit" => Work::Copy(
                    storage_buffer(device, padded.len() as u64),
                    bytes.div_ceil(4) * 4,
                ),
                "shader_copy" => {
                    let dst = storage_buffer(device, padded.len() as u64);
                    let kernel = ShaderCopy::new(device, &input_buffer, &dst, padded.len() as u64);
                    Work::Shader(kernel, dst)
                }
                "view" => {
                    if let Some(row) = time_views(
                        splitter,
                        case,
                        &split,
                        &input,
                        &input_buffer,
                        &expected,
                        runs,
                    )? {
                        rows.push(row);
                    }
                    continue;
                }
                _ => unreachable!("{method}"),
            }
        };
        let p = Prepared { method, work };
        let record = |e: &mut wgpu::CommandEncoder| p.record(splitter, &input_buffer, e);
        match &p.work {
            Work::Plan(plan, buffers) => {
                check_plan(splitter, &record, buffers, plan, &expected, method)?
            }
            Work::Copy(dst, _) | Work::Shader(_, dst) => {
                check_copy(splitter, &record, dst, input.as_bytes()?, method)?
            }
        }
        prepared.push(p);
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); prepared.len()];
    for p in &prepared {
        timer.warm_up(&|e: &mut wgpu::CommandEncoder| p.record(splitter, &input_buffer, e));
    }
    // Each round starts one method later, so no method always runs right
    // after the same one (the first of a round measured up to 25 % slower
    // than the same commands timed later in the round).
    for round in 0..runs {
        for k in 0..prepared.len() {
            let i = (round + k) % prepared.len();
            let p = &prepared[i];
            samples[i].push(
                timer.once(&|e: &mut wgpu::CommandEncoder| p.record(splitter, &input_buffer, e)),
            );
        }
    }
    for (p, times) in prepared.iter().zip(samples) {
        let note = match &p.work {
            Work::Plan(plan, _) => format!(
                "{} dispatch, {} copies",
                plan.dispatch_count(),
                plan.copy_count()
            ),
            Work::Copy(..) => "one copy command".to_string(),
            Work::Shader(..) => "vec4 compute copy".to_string(),
        };
        rows.push(row(case.name, p.method, bytes, median(times), note));
    }
    // Report in the fixed method order, then the best forced strategy.
    rows.sort_by_key(|r| GPU_METHODS.iter().position(|m| *m == r.method));
    if let Some(best) = rows
        .iter()
        .filter(|r| FORCED.contains(&r.method.as_str()))
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
    {
        let note = format!("the faster forced strategy: {}", best.method);
        rows.push(row(case.name, "best_fixed", bytes, best.seconds, note));
    }

    // Host methods: preallocated outputs, as a runtime would reuse them.
    let mut outputs: Vec<Vec<u8>> = expected
        .iter()
        .map(|t| vec![0u8; t.as_bytes().map_or(0, <[u8]>::len)])
        .collect();
    let time_host = |outputs: &mut Vec<Vec<u8>>| {
        let mut slices: Vec<&mut [u8]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
        let t = Instant::now();
        host::split_into(&input, &split, &mut slices).expect("host split");
        t.elapsed().as_secs_f64()
    };
    time_host(&mut outputs);
    for (o, e) in outputs.iter().zip(&expected) {
        if o.as_slice() != e.as_bytes()? {
            return Err(format!("{}: host path differs from host::split", case.name).into());
        }
    }
    let src = input.as_bytes()?;
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
    // Interleaved, like the GPU methods.
    let (mut host_times, mut memcpy_times) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        host_times.push(time_host(&mut outputs));
        memcpy_times.push(memcpy(&mut dst));
    }
    rows.push(row(
        case.name,
        "host",
        bytes,
        median(host_times),
        "split_into, all cores",
    ));
    rows.push(row(
        case.name,
        "host_memcpy",
        bytes,
        median(memcpy_times),
        "one memcpy",
    ));
    Ok(rows)
}

/// What one GPU method records.
enum Work {
    /// A split plan and its arena, or one buffer per output.
    Plan(Box<SplitPlan>, Vec<wgpu::Buffer>),
    /// One copy command of the given size into the buffer.
    Copy(wgpu::Buffer, u64),
    /// The vec4 copy kernel and its destination.
    Shader(ShaderCopy, wgpu::Buffer),
}

struct Prepared {
    method: &'static str,
    work: Work,
}

impl Prepared {
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
                match plan.placement() {
                    Outputs::Arena => splitter.encode_arena(encoder, plan, input, regions[0]),
                    _ => splitter.encode(encoder, plan, input, &regions),
                }
                .expect("encode")
            }
            Work::Copy(dst, size) => encoder.copy_buffer_to_buffer(input, 0, dst, 0, *size),
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
    split: &ResolvedSplit,
    input: &HostTensor,
    input_buffer: &wgpu::Buffer,
    expected: &[HostTensor],
    runs: usize,
) -> Result<Option<Row>, Box<dyn std::error::Error>> {
    let device = splitter.device();
    let plan = splitter.plan(split, case.element_type)?;
    let Some(views) = plan.input_views() else {
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
    Ok(Some(row(
        case.name,
        "view",
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
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
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
    method: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let read: Vec<Vec<u8>> = buffers
        .iter()
        .map(|b| run_and_read(splitter, record, b))
        .collect::<Result<_, _>>()?;
    for (i, (output, e)) in plan.outputs().iter().zip(expected).enumerate() {
        let (bytes, start) = match plan.placement() {
            Outputs::Arena => (&read[0], output.arena_offset_bytes),
            _ => (&read[i], 0),
        };
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
    method: &str,
) -> Result<(), Box<dyn std::error::Error>> {
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

fn print_table(rows: &[Row]) {
    println!();
    println!(
        "{:<26} {:<20} {:>9} {:>10} {:>8}  note",
        "case", "method", "ms", "GB/s", "ratio"
    );
    for r in rows {
        let reference = if r.method.starts_with("host") {
            "host_memcpy"
        } else {
            "copy_limit"
        };
        let base = rows
            .iter()
            .find(|b| b.case == r.case && b.method == reference)
            .map_or(f64::NAN, |b| b.gbps);
        println!(
            "{:<26} {:<20} {:>9.3} {:>10.2} {:>8.2}  {}",
            r.case,
            r.method,
            r.seconds * 1e3,
            r.gbps,
            r.gbps / base,
            r.note
        );
    }
    println!();
    println!(
        "ratio: to copy_limit for GPU methods, to host_memcpy for host methods; GB/s counts bytes read + written."
    );
    print_summary(rows);
}

/// GB/s of `method` on `case`.
fn gbps(rows: &[Row], case: &str, method: &str) -> Option<f64> {
    rows.iter()
        .find(|r| r.case == case && r.method == method)
        .map(|r| r.gbps)
}

/// The ratios the targets are stated in: (column, numerator, denominator).
const RATIOS: [(&str, &str, &str); 5] = [
    ("plan/best_fixed", "plan", "best_fixed"),
    ("destinations/plan", "destinations", "plan"),
    ("plan/copy_limit", "plan", "copy_limit"),
    ("plan/shader_copy", "plan", "shader_copy"),
    ("host/host_memcpy", "host", "host_memcpy"),
];

fn cases_of(rows: &[Row]) -> Vec<&str> {
    let mut cases: Vec<&str> = rows.iter().map(|r| r.case.as_str()).collect();
    cases.dedup();
    cases
}

fn ratio(rows: &[Row], case: &str, a: &str, b: &str) -> Option<f64> {
    Some(gbps(rows, case, a)? / gbps(rows, case, b)?)
}

/// The ratios the targets are stated in, one line per case.
fn print_summary(rows: &[Row]) {
    println!();
    print!("{:<26}", "case");
    for (name, ..) in RATIOS {
        print!(" {name:>18}");
    }
    println!();
    for case in cases_of(rows) {
        print!("{case:<26}");
        for (_, a, b) in RATIOS {
            match ratio(rows, case, a, b) {
                Some(r) => print!(" {r:>18.2}"),
                None => print!(" {:>18}", "n/a"),
            }
        }
        println!();
    }
}

/// The summary ratios as JSON, per case.
fn summary_json(rows: &[Row]) -> serde_json::Value {
    cases_of(rows)
        .into_iter()
        .map(|case| {
            let ratios: serde_json::Map<String, serde_json::Value> = RATIOS
                .iter()
                .map(|(name, a, b)| (name.to_string(), serde_json::json!(ratio(rows, case, a, b))))
                .collect();
            (case.to_string(), serde_json::Value::Object(ratios))
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}
