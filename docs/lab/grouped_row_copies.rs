//! Lab of 2026-11-24 (`docs/journal/2026-11-24-groups.md`, "More than 7 outputs"):
//! splits into more than WebGPU's 7 destinations per dispatch, into one
//! buffer per output, as DISCRETE_GPU plans them (row copies, row streams or
//! row blocks, one module per group shape) against the same split forced onto
//! the table-driven kernel the plan took before groups (vec4 for aligned
//! runs, the funnel for runs at bit offsets, words for short rows) and a
//! plain vec4 compute copy of the same bytes, interleaved in rounds that
//! start one method later each time.
//!
//! An example behind the `lab` feature (CI builds it; timings on a shared
//! machine mean nothing):
//!
//! ```text
//! cargo run --release --features lab --example lab_grouped_row_copies
//! ```
#[path = "../../examples/split_bench/gpu_timer.rs"]
#[allow(dead_code)] // split_bench's timer; labs use part of it
mod gpu_timer;
use gpu_timer::GpuTimer;
use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
use wgpu_split::plan::{CostModel, Kernel, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

const COPY: &str = "@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = (wid.y * n.x + wid.x) * 256u + lid.x;
    if (i < arrayLength(&dst)) { dst[i] = src[i]; }
}";

const ROUNDS: usize = 31;

fn main() {
    use ElementType::*;
    let ctx = pollster::block_on(GpuContext::request_with_features(
        wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
    ))
    .unwrap();
    let dev = &ctx.device;
    let splitter = ctx.splitter().unwrap();
    let timer = GpuTimer::new(dev, &ctx.queue);
    let cases: Vec<(ElementType, Vec<usize>, usize, Vec<usize>)> = vec![
        (Float, vec![512, 4096], 1, vec![512; 8]),
        (Float, vec![2048, 2048], 1, vec![64; 32]),
        (Float, vec![2048, 2048], 1, vec![32; 64]),
        (Float16, vec![2048, 2048], 1, vec![128; 16]),
        (Float, vec![1000, 4096], 0, vec![1; 1000]),
        (
            Uint8,
            vec![4096, 4097],
            1,
            [vec![455; 8], vec![457]].concat(),
        ),
        (Float16, vec![2048, 2050], 1, vec![205; 10]),
        (Float, vec![1 << 20, 8], 1, vec![1; 8]),
        (Float16, vec![1 << 20, 12], 1, vec![1; 12]),
    ];
    let limits = PlanLimits::WEBGPU_DEFAULT;
    for (t, shape, axis, lengths) in cases {
        let split = ResolvedSplit::new(&shape, axis, lengths.clone(), true).unwrap();
        let auto = PlanOptions::default().strategy(Strategy::Auto(CostModel::DISCRETE_GPU));
        let grouped = SplitPlan::new(&split, t, &limits, &auto).unwrap();
        // Before groups: the table-driven form of the same kernel (the
        // funnel's, the vec4 kernel's), or words for row blocks.
        let before = match grouped.kernel() {
            Kernel::RowBlocks => Kernel::Words,
            kernel => kernel,
        };
        let table = auto.kernel(before).form(wgpu_split::plan::Form::Table);
        let vec4 = SplitPlan::new(&split, t, &limits, &table).unwrap();
        let input_bytes = grouped.input_binding_bytes();
        let input = RoundTrip::new(&splitter)
            .create_input(&vec![0x3C; input_bytes as usize])
            .unwrap();
        let outs = RoundTrip::new(&splitter)
            .create_destinations(&grouped)
            .unwrap();
        let bytes = input_bytes.div_ceil(16) * 16;
        let mk = |usage| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        let (a, b) = (
            mk(wgpu::BufferUsages::STORAGE),
            mk(wgpu::BufferUsages::STORAGE),
        );
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(COPY.into()),
        });
        let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: a.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: b.as_entire_binding(),
                },
            ],
        });
        let groups = (bytes / 16).div_ceil(256) as u32;
        let ys = groups.div_ceil(65535);
        let copy = |e: &mut wgpu::CommandEncoder| {
            let mut p = e.begin_compute_pass(&Default::default());
            p.set_pipeline(&pipeline);
            p.set_bind_group(0, &bind, &[]);
            p.dispatch_workgroups(groups.div_ceil(ys), ys, 1);
        };
        let regions: Vec<BufferRegion> = outs.iter().map(BufferRegion::whole).collect();
        let run_grouped = |e: &mut wgpu::CommandEncoder| {
            splitter
                .encode(e, &grouped, BufferRegion::whole(&input), &regions)
                .unwrap();
        };
        let run_vec4 = |e: &mut wgpu::CommandEncoder| {
            splitter
                .encode(e, &vec4, BufferRegion::whole(&input), &regions)
                .unwrap();
        };
        let compile = std::time::Instant::now();
        timer.warm_up(&run_grouped);
        let compile_ms = compile.elapsed().as_secs_f64() * 1e3;
        timer.warm_up(&copy);
        timer.warm_up(&run_vec4);
        // Each round starts one method later (the first of a round can
        // measure slower than the same commands later in it).
        let methods: [&dyn Fn(&mut wgpu::CommandEncoder); 3] = [&copy, &run_grouped, &run_vec4];
        let mut times = vec![Vec::new(); 3];
        for round in 0..ROUNDS {
            for k in 0..3 {
                let i = (round + k) % 3;
                times[i].push(timer.once(methods[i]).0);
            }
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let [c, g, v] = [0, 1, 2].map(|i| med(&mut times[i]));
        println!(
            "| {t} {shape:?} axis {axis} into {} | {}, {} dispatches, {} modules | {:.2} | {before} {:.2} | {:.0} ms |",
            lengths.len(),
            grouped.kernel(),
            grouped.dispatch_count(),
            grouped.shaders().len(),
            c / g,
            c / v,
            compile_ms,
        );
    }
}
