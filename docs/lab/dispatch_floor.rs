//! Lab of 2026-11-24 (`docs/journal/2026-11-24-groups.md`, "The dispatch floor of `seq`"):
//! what 143 dispatches cost on this device before they move a byte, against
//! the seq split's grouped plan and a plain copy of its bytes, in rounds.
//!
//! An example behind the `lab` feature (CI builds it; timings on a shared
//! machine mean nothing):
//!
//! ```text
//! cargo run --release --features lab --example lab_dispatch_floor
//! ```
#[path = "../../examples/split_bench/gpu_timer.rs"]
#[allow(dead_code)] // split_bench's timer; labs use part of it
mod gpu_timer;
use gpu_timer::GpuTimer;
use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
use wgpu_split::plan::{CostModel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy};
use wgpu_split::{ElementType, ResolvedSplit};

const TOUCH: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> d1: array<u32>;
@group(0) @binding(2) var<storage, read_write> d2: array<u32>;
@group(0) @binding(3) var<storage, read_write> d3: array<u32>;
@group(0) @binding(4) var<storage, read_write> d4: array<u32>;
@group(0) @binding(5) var<storage, read_write> d5: array<u32>;
@group(0) @binding(6) var<storage, read_write> d6: array<u32>;
@group(0) @binding(7) var<storage, read_write> d7: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x == 0u) {
        let v = src[0];
        d1[0] = v; d2[0] = v; d3[0] = v; d4[0] = v; d5[0] = v; d6[0] = v; d7[0] = v;
    }
}";

const COPY: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let i = (w.y * n.x + w.x) * 64u + l;
    if (i < arrayLength(&dst)) { dst[i] = src[i]; }
}";

fn main() {
    let ctx = pollster::block_on(GpuContext::request_with_features(
        wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
    ))
    .unwrap();
    let device = &ctx.device;
    let splitter = ctx.splitter().unwrap();
    let timer = GpuTimer::new(device, &ctx.queue);
    // The seq case: f32 [1000, 4096] into 1,000 rows, as gpu_discrete plans it.
    let split = ResolvedSplit::new(&[1000, 4096], 0, vec![1; 1000], false).unwrap();
    let options = PlanOptions::default()
        .strategy(Strategy::Auto(CostModel::DISCRETE_GPU))
        .placement(Placement::Separate);
    let plan = SplitPlan::new(
        &split,
        ElementType::Float,
        &PlanLimits::WEBGPU_DEFAULT,
        &options,
    )
    .unwrap();
    let dispatches = plan.dispatch_count();
    println!(
        "seq plan: {dispatches} dispatches, {} copies, {}",
        plan.copy_count(),
        plan.kernel()
    );
    let bytes = plan.input_bytes();
    let input = RoundTrip::new(&splitter)
        .create_input(&vec![7u8; bytes as usize])
        .unwrap();
    let outs = RoundTrip::new(&splitter)
        .create_destinations(&plan)
        .unwrap();
    let storage = |size| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    };
    let pipeline = |src: &str| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(src.into()),
            }),
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let touch = pipeline(TOUCH);
    // One bind group per dispatch, on the plan's own output buffers.
    let groups: Vec<wgpu::BindGroup> = outs
        .chunks(7)
        .map(|c| {
            let mut entries = vec![wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            }];
            for k in 0..7 {
                let b = &c[k.min(c.len() - 1)];
                entries.push(wgpu::BindGroupEntry {
                    binding: k as u32 + 1,
                    resource: b.as_entire_binding(),
                });
            }
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &touch.get_bind_group_layout(0),
                entries: &entries,
            })
        })
        .collect();
    let copy = pipeline(COPY);
    let dst = storage(bytes);
    let copy_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &copy.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: dst.as_entire_binding(),
            },
        ],
    });
    let vec4s = (bytes / 16) as u32;
    let wg = vec4s.div_ceil(64);
    let (gx, gy) = if wg > 65535 {
        (65535, wg.div_ceil(65535))
    } else {
        (wg, 1)
    };
    type Record<'a> = Box<dyn Fn(&mut wgpu::CommandEncoder) + 'a>;
    let methods: Vec<(&str, Record)> = vec![
        (
            "seq plan (gpu_discrete)",
            Box::new(|e: &mut wgpu::CommandEncoder| {
                let regions: Vec<BufferRegion> = outs.iter().map(BufferRegion::whole).collect();
                splitter
                    .encode(e, &plan, BufferRegion::whole(&input), &regions)
                    .unwrap();
            }),
        ),
        (
            "143 one-workgroup dispatches, 7 buffers each",
            Box::new(|e: &mut wgpu::CommandEncoder| {
                let mut pass = e.begin_compute_pass(&Default::default());
                pass.set_pipeline(&touch);
                for g in groups.iter().take(dispatches) {
                    pass.set_bind_group(0, g, &[]);
                    pass.dispatch_workgroups(1, 1, 1);
                }
            }),
        ),
        (
            "143 one-workgroup dispatches, one bind group",
            Box::new(|e: &mut wgpu::CommandEncoder| {
                let mut pass = e.begin_compute_pass(&Default::default());
                pass.set_pipeline(&touch);
                pass.set_bind_group(0, &groups[0], &[]);
                for _ in 0..dispatches {
                    pass.dispatch_workgroups(1, 1, 1);
                }
            }),
        ),
        (
            "one vec4 compute copy of the same bytes",
            Box::new(|e: &mut wgpu::CommandEncoder| {
                let mut pass = e.begin_compute_pass(&Default::default());
                pass.set_pipeline(&copy);
                pass.set_bind_group(0, &copy_group, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }),
        ),
    ];
    for (_, m) in &methods {
        timer.warm_up(m.as_ref());
    }
    let mut t = vec![Vec::new(); methods.len()];
    for round in 0..31 {
        for k in 0..methods.len() {
            let i = (round + k) % methods.len();
            t[i].push(timer.once(methods[i].1.as_ref()).0);
        }
    }
    let copy_ms: Vec<f64> = t[3].clone();
    for (i, (name, _)) in methods.iter().enumerate() {
        let mut d = t[i].clone();
        d.sort_by(f64::total_cmp);
        let mut r: Vec<f64> = t[i].iter().zip(&copy_ms).map(|(a, c)| c / a).collect();
        r.sort_by(f64::total_cmp);
        println!(
            "{name:48} median {:.3} ms ({:.1} us per dispatch), copy / this per round {:.2}",
            d[15] * 1e3,
            d[15] / dispatches as f64 * 1e6,
            r[15]
        );
    }
}
