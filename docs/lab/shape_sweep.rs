//! Lab of 2026-11-24 (`docs/journal/2026-11-24-shapes-and-row-streams.md`, "Shapes beyond split_bench"):
//! what the DISCRETE_GPU model plans under WebGPU's limits, into one buffer
//! per output, against a plain vec4 compute copy of the same bytes, on shapes
//! beyond split_bench's, in rounds.
//!
//! An example behind the `lab` feature (CI builds it; timings on a shared
//! machine mean nothing):
//!
//! ```text
//! cargo run --release --features lab --example lab_shape_sweep
//! ```
#[path = "../../examples/split_bench/gpu_timer.rs"]
#[allow(dead_code)] // split_bench's timer; labs use part of it
mod gpu_timer;
use gpu_timer::GpuTimer;
use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
use wgpu_split::plan::{CostModel, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

const COPY: &str = "@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = (wid.y * n.x + wid.x) * 256u + lid.x;
    if (i < arrayLength(&dst)) { dst[i] = src[i]; }
}";

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
        (Float, vec![4096, 1000], 1, vec![500, 500]),
        (Float, vec![4096, 1001], 1, vec![500, 501]),
        (Float16, vec![4096, 1000], 1, vec![333, 667]),
        (BFloat16, vec![32, 128, 3072], 2, vec![1024; 3]),
        (Float, vec![1, 256, 64, 64], 1, vec![128, 128]),
        (Int8, vec![4096, 4096], 1, vec![1024; 4]),
        (Float, vec![2048, 2048], 1, vec![64; 32]),
        (Float, vec![2048, 2048], 1, vec![32; 64]),
        (Double, vec![1024, 1536], 1, vec![512; 3]),
        (Float, vec![8192, 12], 1, vec![4, 4, 4]),
        (Float16, vec![4096, 4095], 1, vec![1365; 3]),
    ];
    let model = CostModel::DISCRETE_GPU;
    for (t, shape, axis, lengths) in cases {
        let split = ResolvedSplit::new(&shape, axis, lengths.clone(), true).unwrap();
        let options = PlanOptions::default().strategy(Strategy::Auto(model));
        let plan = SplitPlan::new(&split, t, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
        let input_bytes = plan.input_binding_bytes();
        let input = RoundTrip::new(&splitter)
            .create_input(&vec![0x3C; input_bytes as usize])
            .unwrap();
        let outs = RoundTrip::new(&splitter)
            .create_destinations(&plan)
            .unwrap();
        let moved: u64 = plan
            .outputs()
            .iter()
            .map(|o| o.len_bytes)
            .sum::<u64>()
            .max(input_bytes);
        let bytes = moved.div_ceil(16) * 16;
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
        let split_rec = |e: &mut wgpu::CommandEncoder| {
            splitter
                .encode(e, &plan, BufferRegion::whole(&input), &regions)
                .unwrap();
        };
        timer.warm_up(&copy);
        timer.warm_up(&split_rec);
        let (mut tc, mut ts) = (vec![], vec![]);
        for _ in 0..31 {
            tc.push(timer.once(&copy).0);
            ts.push(timer.once(&split_rec).0);
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (c, s) = (med(&mut tc), med(&mut ts));
        println!(
            "| {t} {shape:?} axis {axis} {lengths:?} | {} | {} dispatches, {} copies | {:.3} | {:.3} | {:.2} |",
            plan.kernel(),
            plan.dispatch_count(),
            plan.copy_count(),
            s * 1e3,
            c * 1e3,
            c / s
        );
    }
}
