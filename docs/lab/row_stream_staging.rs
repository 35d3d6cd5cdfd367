//! Lab of 2026-11-24 (`docs/journal/2026-11-24-shapes-and-row-streams.md`, "Row streams through workgroup memory"):
//! u8 [4096, 4097] split [2048, 2049] into two buffers, as the row-stream
//! module runs it against a hand-written kernel that stages each input row in
//! workgroup memory (coalesced vec4 loads, a barrier, then consecutive lanes
//! funnel-shift consecutive output vec4s out of it), the same kernel reading
//! the input directly (no stage, no barrier: lanes interleaved on consecutive
//! vec4s), and a plain vec4 copy of the same bytes, interleaved in rounds.
//! Cost only: the hand-written kernel skips the vec4s that straddle two rows.
//!
//! An example behind the `lab` feature (CI builds it; timings on a shared
//! machine mean nothing):
//!
//! ```text
//! cargo run --release --features lab --example lab_row_stream_staging
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

const SHARED: &str = "@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst0: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst1: array<vec4<u32>>;
var<workgroup> row_vec4s: array<vec4<u32>, 260>;

fn funnel(a: vec4<u32>, b: vec4<u32>, bit: u32) -> vec4<u32> {
    let words = bit >> 5u;
    let bits = bit & 31u;
    var x0 = a;
    var x1 = b;
    if (words >= 2u) { x0 = vec4<u32>(a.z, a.w, b.x, b.y); x1 = vec4<u32>(b.z, b.w, 0u, 0u); }
    if ((words & 1u) != 0u) { x0 = vec4<u32>(x0.y, x0.z, x0.w, x1.x); x1 = vec4<u32>(x1.y, x1.z, x1.w, 0u); }
    if (bits == 0u) { return x0; }
    let next = vec4<u32>(x0.y, x0.z, x0.w, x1.x);
    return (x0 >> vec4<u32>(bits)) | (next << vec4<u32>(32u - bits));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x;
    let l = lid.x;
    let s = row * 4097u * 8u;
    let a0 = s >> 7u;
    let off = s & 127u;
    row_vec4s[l] = src[a0 + l];
    if (l < 4u) { row_vec4s[256u + l] = src[min(a0 + 256u + l, arrayLength(&src) - 1u)]; }
    workgroupBarrier();
    if (l < 128u) {
        let b = off + l * 128u;
        dst0[row * 128u + l] = funnel(row_vec4s[b >> 7u], row_vec4s[(b >> 7u) + 1u], b & 127u);
    } else {
        let q = row * 16392u;
        let first = (q + 127u) >> 7u;
        let end = (q + 16392u) >> 7u;
        let u = first + (l - 128u);
        if (u < end) {
            let b = off + 16384u + (u * 128u - q);
            dst1[u] = funnel(row_vec4s[b >> 7u], row_vec4s[(b >> 7u) + 1u], b & 127u);
        }
    }
}";

fn main() {
    let ctx = pollster::block_on(GpuContext::request_with_features(
        wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
    ))
    .unwrap();
    let dev = &ctx.device;
    let splitter = ctx.splitter().unwrap();
    let timer = GpuTimer::new(dev, &ctx.queue);
    let split = ResolvedSplit::new(&[4096, 4097], 1, vec![2048, 2049], true).unwrap();
    let auto = PlanOptions::default().strategy(Strategy::Auto(CostModel::DISCRETE_GPU));
    let plan = SplitPlan::new(
        &split,
        ElementType::Uint8,
        &PlanLimits::WEBGPU_DEFAULT,
        &auto,
    )
    .unwrap();
    let input_bytes = plan.input_binding_bytes();
    let input = RoundTrip::new(&splitter)
        .create_input(&vec![0x3C; input_bytes as usize])
        .unwrap();
    let outs = RoundTrip::new(&splitter)
        .create_destinations(&plan)
        .unwrap();
    let module = |code: &str| {
        dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(code.into()),
        })
    };
    let pipeline = |code: &str| {
        dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module(code),
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    // The same kernel reading the input directly: no stage, no barrier.
    let direct_wgsl = SHARED
        .replace("var<workgroup> row_vec4s: array<vec4<u32>, 260>;\n", "")
        .replace(
            "    row_vec4s[l] = src[a0 + l];\n    if (l < 4u) { row_vec4s[256u + l] = src[min(a0 + 256u + l, arrayLength(&src) - 1u)]; }\n    workgroupBarrier();\n",
            "",
        )
        .replace("row_vec4s[b >> 7u]", "src[a0 + (b >> 7u)]")
        .replace("row_vec4s[(b >> 7u) + 1u]", "src[min(a0 + (b >> 7u) + 1u, arrayLength(&src) - 1u)]");
    assert!(
        !direct_wgsl.contains("row_vec4s"),
        "every staged read replaced"
    );
    let (copy_p, shared_p, direct_p) = (pipeline(COPY), pipeline(SHARED), pipeline(&direct_wgsl));
    let bytes = input_bytes.div_ceil(16) * 16;
    let scratch = dev.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let copy_bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &copy_p.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: scratch.as_entire_binding(),
            },
        ],
    });
    let shared_bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &shared_p.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: outs[0].as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: outs[1].as_entire_binding(),
            },
        ],
    });
    let direct_bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &direct_p.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: outs[0].as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: outs[1].as_entire_binding(),
            },
        ],
    });
    let groups = (bytes / 16).div_ceil(256) as u32;
    let ys = groups.div_ceil(65535);
    let copy = |e: &mut wgpu::CommandEncoder| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&copy_p);
        p.set_bind_group(0, &copy_bind, &[]);
        p.dispatch_workgroups(groups.div_ceil(ys), ys, 1);
    };
    let shared = |e: &mut wgpu::CommandEncoder| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&shared_p);
        p.set_bind_group(0, &shared_bind, &[]);
        p.dispatch_workgroups(4096, 1, 1);
    };
    let direct = |e: &mut wgpu::CommandEncoder| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&direct_p);
        p.set_bind_group(0, &direct_bind, &[]);
        p.dispatch_workgroups(4096, 1, 1);
    };
    let regions: Vec<BufferRegion> = outs.iter().map(BufferRegion::whole).collect();
    let streams = |e: &mut wgpu::CommandEncoder| {
        splitter
            .encode(e, &plan, BufferRegion::whole(&input), &regions)
            .unwrap();
    };
    for r in [
        &copy as &dyn Fn(&mut wgpu::CommandEncoder),
        &shared,
        &direct,
        &streams,
    ] {
        timer.warm_up(r);
    }
    let (mut tc, mut ts, mut tr, mut td) = (vec![], vec![], vec![], vec![]);
    for _ in 0..31 {
        tc.push(timer.once(&copy).0);
        ts.push(timer.once(&shared).0);
        td.push(timer.once(&direct).0);
        tr.push(timer.once(&streams).0);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (c, s, r, d) = (med(&mut tc), med(&mut ts), med(&mut tr), med(&mut td));
    println!(
        "{} | copy {:.3} ms | workgroup-staged {:.3} ms ({:.2} of copy) | interleaved, no stage {:.3} ms ({:.2}) | row streams {:.3} ms ({:.2})",
        plan.kernel(),
        c * 1e3,
        s * 1e3,
        c / s,
        d * 1e3,
        c / d,
        r * 1e3,
        c / r
    );
}
