//! wgpu-split against burn's own split and concat, on one device in one
//! process.
//!
//! For every case of the core crate's `split_bench` that burn's wgpu backend
//! can hold on this device: the host wall time from the call to the device
//! having finished (what a runtime waits for) of
//!
//! - `wgpu-split`: `BurnSplitter::split_as`, every output a burn
//!   tensor with a buffer of its own;
//! - `burn`: burn's own split (`narrow` per piece, what its `chunk`,
//!   `split` and `split_with_sizes` run), then burn's kernel that gives
//!   each piece a buffer of its own (`into_contiguous` for a strided view,
//!   `copy` for a dense one), which is what a burn tensor needs before a
//!   consumer may hold it apart from the input.
//!
//! Then the concat cases (`concat.rs`: YOLOv8's C2f channel concat,
//! attention's head merge, a batcher's stack): `BurnSplitter::cat` /
//! `stack` against burn's `Tensor::cat` / `Tensor::stack`, timed the same
//! way; and the attention-head cases (`heads.rs`): `split_heads` against
//! burn's split, reshape, `swap_dims` and contiguous copy, `merge_heads`
//! against its `swap_dims`, reshape and `cat`.
//!
//! Both are checked equal byte for byte before they are timed; runs
//! alternate between the two; medians are printed as markdown tables
//! and, with `--json PATH`, written as JSON.
//!
//! `cargo run --release --example burn_bench [-- --quick] [--runs N] [--json PATH]`

#[path = "../../../../examples/split_bench/cases.rs"]
#[allow(dead_code)]
mod cases;
mod concat;
mod heads;

use std::time::Instant;

use burn::tensor::{DType, Device, Float, Int, Tensor, TensorData};
use burn_cubecl::kernel::into_contiguous;
use wgpu_split::{ElementType, ResolvedSplit};
use wgpu_split_burn::{BurnSplitter, SplitKind};

struct Options {
    quick: bool,
    runs: usize,
    json: Option<String>,
}

fn options() -> Options {
    let mut o = Options {
        quick: false,
        runs: 15,
        json: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--runs" => o.runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--json" => o.json = Some(args.next().expect("--json PATH")),
            other => panic!("unknown argument {other}; see the example's docs"),
        }
    }
    o
}

/// Waits for everything burn and the split submitted on the device.
fn wait(device: &Device, wgpu_device: &wgpu::Device) {
    device.sync().expect("burn's device syncs");
    wgpu_device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("device idle");
}

use burn_cubecl::cubecl::wgpu::wgpu;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Row {
    name: &'static str,
    dtype: DType,
    /// Outputs of a split, inputs of a concat.
    outputs: usize,
    mib: f64,
    timing: Timing,
    floor_ms: f64,
}

impl Row {
    /// The row as JSON; `count` names its `outputs`.
    fn json(&self, count: &str) -> serde_json::Value {
        let t = &self.timing;
        let mut row = serde_json::json!({
            "name": self.name, "dtype": format!("{:?}", self.dtype), "mib": self.mib,
            "wgpu_split_ms": t.ours_ms, "wgpu_split_call_ms": t.call_ms,
            "burn_ms": t.burn_ms, "ratio": t.burn_ms / t.ours_ms,
            "one_copy_ms": self.floor_ms,
        });
        row[count] = self.outputs.into();
        row
    }
}

/// One `copy_buffer_to_buffer` of `bytes` between two buffers of the
/// device, timed like the two methods: the floor neither can go under.
fn copy_floor(
    device: &Device,
    wgpu_device: &wgpu::Device,
    queue: &wgpu::Queue,
    bytes: u64,
    runs: usize,
) -> f64 {
    let buffer = |usage| {
        wgpu_device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("burn_bench floor"),
            size: bytes.max(4).next_multiple_of(4),
            usage,
            mapped_at_creation: false,
        })
    };
    let src = buffer(wgpu::BufferUsages::COPY_SRC);
    let dst = buffer(wgpu::BufferUsages::COPY_DST);
    let mut times = Vec::new();
    for run in 0..runs + 3 {
        wait(device, wgpu_device);
        let t = Instant::now();
        let mut encoder = wgpu_device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, bytes.max(4).next_multiple_of(4));
        queue.submit([encoder.finish()]);
        wait(device, wgpu_device);
        if run >= 3 {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    median(times)
}

/// burn's own split of `input` into `split`'s windows, each piece then
/// given a buffer of its own by burn's kernels.
fn burn_split<const D: usize, K: SplitKind>(
    input: &Tensor<D, K>,
    split: &ResolvedSplit,
) -> Vec<burn_cubecl::tensor::CubeTensor> {
    split
        .windows()
        .filter(|&(_, len)| len > 0) // burn's narrow refuses empty pieces; its split drops them
        .map(|(start, len)| {
            let piece = K::into_cube(input.clone().narrow(split.axis(), start, len))
                .expect("a wgpu tensor");
            if piece.is_contiguous() {
                piece.copy()
            } else {
                into_contiguous(piece)
            }
        })
        .collect()
}

fn bench<const D: usize, K: SplitKind>(
    splitter: &BurnSplitter,
    setup_device: &wgpu::Device,
    input: Tensor<D, K>,
    split: &ResolvedSplit,
    runs: usize,
) -> Timing {
    let device = input.device();
    // Equal byte for byte before anything is timed.
    let ours = splitter
        .split_as::<D, D, K, _>(input.clone(), split)
        .expect("the split runs");
    let theirs = burn_split(&input, split);
    let ours: Vec<_> = ours
        .into_iter()
        .filter(|t| t.shape().num_elements() > 0)
        .collect();
    assert_eq!(ours.len(), theirs.len());
    for (a, b) in ours.into_iter().zip(theirs) {
        let b: Tensor<D, K> = K::from_cube(b);
        assert_eq!(
            a.into_data().as_bytes(),
            b.into_data().as_bytes(),
            "wgpu-split and burn disagree"
        );
    }
    alternate(
        &device,
        setup_device,
        runs,
        || {
            splitter
                .split_as::<D, D, K, _>(input.clone(), split)
                .unwrap()
        },
        || burn_split(&input, split),
    )
}

/// Medians of `ours` and `theirs`, each timed from its call to the device
/// having finished, alternating, after three rounds of warm-up.
fn alternate<A, B>(
    device: &Device,
    wgpu_device: &wgpu::Device,
    runs: usize,
    ours: impl Fn() -> A,
    theirs: impl Fn() -> B,
) -> Timing {
    let (mut ours_ms, mut burn_ms, mut call_ms) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs + 3 {
        wait(device, wgpu_device);
        let t = Instant::now();
        let outputs = ours();
        let call = t.elapsed().as_secs_f64() * 1e3;
        wait(device, wgpu_device);
        let ours = t.elapsed().as_secs_f64() * 1e3;
        drop(outputs);
        wait(device, wgpu_device);
        let t = Instant::now();
        let outputs = theirs();
        // burn's calls may be lazy (fusion): the wait runs them.
        wait(device, wgpu_device);
        let burns = t.elapsed().as_secs_f64() * 1e3;
        drop(outputs);
        if run >= 3 {
            ours_ms.push(ours);
            burn_ms.push(burns);
            call_ms.push(call);
        }
    }
    Timing {
        ours_ms: median(ours_ms),
        burn_ms: median(burn_ms),
        call_ms: median(call_ms),
    }
}

/// Medians of one case, milliseconds.
struct Timing {
    /// wgpu-split, from the call to the device being done.
    ours_ms: f64,
    /// burn's split and copies (or its concat), the same way.
    burn_ms: f64,
    /// wgpu-split's call alone (plan, allocate, record, submit).
    call_ms: f64,
}

fn burn_dtype(element: ElementType) -> Result<DType, &'static str> {
    match element {
        ElementType::Float => Ok(DType::F32),
        ElementType::Float16 => Ok(DType::F16),
        ElementType::Uint8 => Ok(DType::U8),
        _ => Err("burn has no dtype of this width"),
    }
}

fn run_case<K: SplitKind>(
    splitter: &BurnSplitter,
    wgpu_device: &wgpu::Device,
    shape: &[usize],
    dtype: DType,
    split: &ResolvedSplit,
    runs: usize,
) -> Timing {
    let device = splitter.device();
    let count: usize = shape.iter().product();
    let bytes: Vec<u8> = (0..count * dtype.size())
        .map(|i| (i * 7 % 251) as u8 & 0x3f)
        .collect();
    macro_rules! ranked {
        ($d:literal) => {{
            let dims: [usize; $d] = shape.try_into().unwrap();
            let x: Tensor<$d, K> = Tensor::from_data(
                TensorData::from_bytes_vec(bytes, dims, dtype),
                (device, dtype),
            );
            bench::<$d, K>(splitter, wgpu_device, x, split, runs)
        }};
    }
    match shape.len() {
        2 => ranked!(2),
        3 => ranked!(3),
        4 => ranked!(4),
        r => panic!("no case of rank {r}"),
    }
}

fn main() {
    let o = options();
    let (device, setup) = Device::wgpu_options()
        .init_with_setup()
        .expect("a GPU adapter for burn; on Debian/Ubuntu: apt-get install -y mesa-vulkan-drivers");
    let info = setup.adapter.get_info();
    let splitter = BurnSplitter::new(&device, &setup).expect("splitter");
    let fusion = cfg!(feature = "fusion");
    println!(
        "adapter: {} ({:?}); burn 0.22.1, fusion {}; {} runs per method, medians",
        info.name,
        info.backend,
        if fusion { "on" } else { "off" },
        o.runs
    );
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for case in cases::suite(o.quick) {
        let dtype = match burn_dtype(case.element_type) {
            Ok(d) if device.supports_dtype(d) => d,
            Ok(d) => {
                skipped.push((
                    case.name,
                    format!("burn's wgpu backend on this device has no {d:?}"),
                ));
                continue;
            }
            Err(why) => {
                skipped.push((case.name, why.to_string()));
                continue;
            }
        };
        let resolved = case.op.resolve(&case.shape).expect("case resolves");
        // The same windows with the axis kept (SplitToSequence keepdims 0
        // only drops a length-1 axis from each output's shape).
        let split = ResolvedSplit::from_windows(
            &case.shape,
            resolved.axis(),
            resolved.windows().collect(),
            true,
        )
        .unwrap();
        let timing = if dtype.is_float() {
            run_case::<Float>(&splitter, &setup.device, &case.shape, dtype, &split, o.runs)
        } else {
            run_case::<Int>(&splitter, &setup.device, &case.shape, dtype, &split, o.runs)
        };
        let bytes = case.shape.iter().product::<usize>() * dtype.size();
        let floor_ms = copy_floor(&device, &setup.device, &setup.queue, bytes as u64, o.runs);
        print_line(case.name, &timing, floor_ms);
        rows.push(Row {
            name: case.name,
            dtype,
            outputs: split.output_count(),
            mib: bytes as f64 / (1 << 20) as f64,
            timing,
            floor_ms,
        });
    }
    let concat_rows = run_concats(&splitter, &setup, &o, &mut skipped);
    let head_rows = run_heads(&splitter, &setup, &o, &mut skipped);
    print_table("split case", "outputs", &rows);
    print_table("concat case", "inputs", &concat_rows);
    print_table("heads case", "pieces", &head_rows);
    for (name, why) in &skipped {
        println!("skipped `{name}`: {why}");
    }
    if let Some(path) = o.json {
        let json = serde_json::json!({
            "adapter": info.name,
            "backend": format!("{:?}", info.backend),
            "burn": "0.22.1",
            "fusion": fusion,
            "runs": o.runs,
            "quick": o.quick,
            "cases": rows.iter().map(|r| r.json("outputs")).collect::<Vec<_>>(),
            "concat_cases": concat_rows.iter().map(|r| r.json("inputs")).collect::<Vec<_>>(),
            "head_cases": head_rows.iter().map(|r| r.json("pieces")).collect::<Vec<_>>(),
            "skipped": skipped.iter().map(|(n, w)| serde_json::json!({"name": n, "why": w})).collect::<Vec<_>>(),
        });
        if let Some(dir) = std::path::Path::new(&path).parent() {
            std::fs::create_dir_all(dir).ok();
        }
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).expect("write JSON");
        println!("wrote {path}");
    }
}

/// The concat cases burn's wgpu backend holds on this device, timed.
fn run_concats(
    splitter: &BurnSplitter,
    setup: &burn_cubecl::cubecl::wgpu::WgpuSetup,
    o: &Options,
    skipped: &mut Vec<(&'static str, String)>,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for case in concat::suite(o.quick) {
        if !splitter.device().supports_dtype(case.dtype) {
            let why = format!("burn's wgpu backend on this device has no {:?}", case.dtype);
            skipped.push((case.name, why));
            continue;
        }
        let timing = concat::run(splitter, &setup.device, &case, o.runs);
        let bytes = case.bytes() as u64;
        let floor_ms = copy_floor(
            splitter.device(),
            &setup.device,
            &setup.queue,
            bytes,
            o.runs,
        );
        print_line(case.name, &timing, floor_ms);
        rows.push(Row {
            name: case.name,
            dtype: case.dtype,
            outputs: case.shapes.len(),
            mib: bytes as f64 / (1 << 20) as f64,
            timing,
            floor_ms,
        });
    }
    rows
}

/// The attention-head cases burn's wgpu backend holds on this device,
/// timed.
fn run_heads(
    splitter: &BurnSplitter,
    setup: &burn_cubecl::cubecl::wgpu::WgpuSetup,
    o: &Options,
    skipped: &mut Vec<(&'static str, String)>,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for case in heads::suite(o.quick) {
        if !splitter.device().supports_dtype(case.dtype) {
            let why = format!("burn's wgpu backend on this device has no {:?}", case.dtype);
            skipped.push((case.name, why));
            continue;
        }
        let timing = heads::run::<Float>(splitter, &setup.device, &case, o.runs);
        let bytes = case.bytes() as u64;
        let floor_ms = copy_floor(
            splitter.device(),
            &setup.device,
            &setup.queue,
            bytes,
            o.runs,
        );
        print_line(case.name, &timing, floor_ms);
        rows.push(Row {
            name: case.name,
            dtype: case.dtype,
            outputs: case.widths.len(),
            mib: bytes as f64 / (1 << 20) as f64,
            timing,
            floor_ms,
        });
    }
    rows
}

/// One case's medians, as they come.
fn print_line(name: &str, t: &Timing, floor_ms: f64) {
    println!(
        "{name:<28} {:>8.3} ms (call {:.3})  burn {:>8.3} ms  {:>5.1}x  one copy {floor_ms:.3} ms",
        t.ours_ms,
        t.call_ms,
        t.burn_ms,
        t.burn_ms / t.ours_ms,
    );
}

/// `rows` as a markdown table; `count` names the rows' `outputs`.
fn print_table(case: &str, count: &str, rows: &[Row]) {
    println!(
        "\n| {case} | dtype | {count} | MiB | wgpu-split ms (call) | burn ms | burn / wgpu-split | one copy ms | burn / one copy |\n|---|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in rows {
        let t = &r.timing;
        println!(
            "| `{}` | {:?} | {} | {:.1} | {:.2} ({:.2}) | {:.2} | **{:.1}x** | {:.2} | {:.1}x |",
            r.name,
            r.dtype,
            r.outputs,
            r.mib,
            t.ours_ms,
            t.call_ms,
            t.burn_ms,
            t.burn_ms / t.ours_ms,
            r.floor_ms,
            t.burn_ms / r.floor_ms
        );
    }
}
