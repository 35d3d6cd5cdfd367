//! Lab of 2026-11-24 (`docs/journal/2026-11-24-row-copies.md`, "Its table:
//! uniform, read once, run starts compiled in"):
//! the row-copy module of a forced gather against hand-edited variants of it
//! and hand-written row copies, in rounds (every variant once per round),
//! medians of 31 rounds. Arguments name the cases: `qkv`, `axis1_4`, ...
//!
//! An example behind the `lab` feature (CI builds it; timings on a shared
//! machine mean nothing):
//!
//! ```text
//! cargo run --release --features lab --example lab_row_copy_table -- qkv axis1_4
//! ```
#[path = "../../examples/split_bench/gpu_timer.rs"]
#[allow(dead_code)] // split_bench's timer; labs use part of it
mod gpu_timer;

use gpu_timer::GpuTimer;
use wgpu_split::gpu::GpuContext;

struct Geo {
    name: &'static str,
    rows: u32,
    block: u32,
    outs: Vec<(u32, u32)>, // (offset in row, run) in vec4s
}

impl Geo {
    fn total(&self) -> u32 {
        self.outs.iter().map(|o| o.1).sum::<u32>() * self.rows
    }
    fn bases(&self) -> Vec<u32> {
        let mut b = 0;
        self.outs
            .iter()
            .map(|o| {
                let x = b;
                b += o.1 * self.rows;
                x
            })
            .collect()
    }
}

const HEAD: &str = "@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let wg = wid.y * n.x + wid.x;
    let g = wg * 256u + lid.x;
";

fn copy(g: &Geo) -> (String, u32) {
    let t = g.total();
    (
        format!("{HEAD}    if (g < {t}u) {{ dst[g] = src[g]; }}\n}}\n"),
        t,
    )
}

fn rows_k(g: &Geo, k: u32) -> (String, u32) {
    let widest = g.outs.iter().map(|o| o.1).max().unwrap();
    let per_row = widest.div_ceil(k);
    let mut s = format!(
        "{HEAD}    if (g >= {}u) {{ return; }}\n    let row = g / {per_row}u;\n    let part = g % {per_row}u;\n",
        g.rows * per_row
    );
    for (o, base) in g.outs.iter().zip(g.bases()) {
        let steps = o.1.div_ceil(per_row);
        s += &format!(
            "    {{ let u0 = part * {steps}u; let a = row * {}u + {}u + u0; let d = {base}u + row * {}u + u0;\n",
            g.block, o.0, o.1
        );
        for i in 0..steps {
            if steps * per_row == o.1 {
                s += &format!("      dst[d + {i}u] = src[a + {i}u];\n");
            } else {
                s += &format!(
                    "      if (u0 + {i}u < {}u) {{ dst[d + {i}u] = src[a + {i}u]; }}\n",
                    o.1
                );
            }
        }
        s += "    }\n";
    }
    s += "}\n";
    (s, g.rows * per_row)
}

/// Destination-driven: arena vec4 `v` of `steps` per lane, at `v = at(step)`.
/// A variant of the earlier runs, kept as measured.
#[allow(dead_code)]
fn dest(g: &Geo, steps: u32, interleaved: bool) -> (String, u32) {
    let t = g.total();
    let mut s = HEAD.to_string();
    s += "    var v = 0u;\n";
    for i in 0..steps {
        if interleaved {
            s += &format!("    v = wg * {}u + {i}u * 256u + lid.x;\n", 256 * steps);
        } else {
            s += &format!("    v = g * {steps}u + {i}u;\n");
        }
        s += &format!("    if (v < {t}u) {{\n");
        let bases = g.bases();
        for (j, (o, base)) in g.outs.iter().zip(&bases).enumerate() {
            let end = base + o.1 * g.rows;
            let cond = if j + 1 == g.outs.len() {
                "true".to_string()
            } else {
                format!("v < {end}u")
            };
            let kw = if j == 0 { "if" } else { "else if" };
            s += &format!(
                "      {kw} ({cond}) {{ let l = v - {base}u; let row = l / {r}u; let col = l - row * {r}u; dst[v] = src[row * {b}u + {off}u + col]; }}\n",
                r = o.1,
                b = g.block,
                off = o.0
            );
        }
        s += "    }\n";
    }
    s += "}\n";
    (s, t.div_ceil(steps))
}

/// Loads only the two fields of each entry the body reads.
fn fields(real: &str) -> String {
    let mut s = real.to_string();
    for j in 0..8 {
        s = s.replace(
            &format!("let e = bound_0(table.entries[{j}u]);"),
            &format!("let e_src_bit = table.entries[{j}u].src_bit + source_shift_bits(); let e_dst_unit = table.entries[{j}u].dst_unit + dst_shift_0(table.entries[{j}u].window_units);"),
        );
    }
    s.replace("(e.src_bit >> 7u)", "(e_src_bit >> 7u)")
        .replace("= e.dst_unit + row", "= e_dst_unit + row")
}

/// All entries read before the first copy.
fn hoist(real: &str, n: usize) -> String {
    let mut s = real.to_string();
    let mut top = String::new();
    for j in 0..n {
        s = s.replacen(
            &format!("let e = bound_0(table.entries[{j}u]);"),
            &format!("let e = e{j};"),
            1,
        );
        top += &format!("    let e{j} = bound_0(table.entries[{j}u]);\n");
    }
    s.replacen("    let row = g /", &format!("{top}    let row = g /"), 1)
}

fn uni(s: &str, g: &Geo) -> String {
    s.replace(
        "entries: array<Entry>,",
        &format!("entries: array<Entry, {}>,", g.outs.len()),
    )
    .replace("var<storage, read> table", "var<uniform> table")
}

fn part_consts(s: &str, g: &Geo, src: bool, dst: bool) -> String {
    let mut s = s.to_string();
    for (j, (o, base)) in g.outs.iter().zip(g.bases()).enumerate() {
        let mut line = String::new();
        if src {
            line += &format!("let e_src_bit = {}u;", o.0 * 128);
        } else {
            line += &format!("let e_src_bit = e{j}.src_bit;");
        }
        if dst {
            line += &format!("let e_dst_unit = {base}u;");
        } else {
            line += &format!("let e_dst_unit = e{j}.dst_unit;");
        }
        s = s.replacen(&format!("let e = e{j};"), &line, 1);
    }
    s.replace("(e.src_bit >> 7u)", "(e_src_bit >> 7u)")
        .replace("= e.dst_unit + row", "= e_dst_unit + row")
}

fn src_rel(s: &str, g: &Geo) -> String {
    let mut s = s.to_string();
    for (j, o) in g.outs.iter().enumerate().skip(1) {
        s = s.replacen(
            &format!("let e_src_bit = e{j}.src_bit;"),
            &format!(
                "let e_src_bit = e0.src_bit + {}u;",
                (o.0 - g.outs[0].0) * 128
            ),
            1,
        );
    }
    s
}

/// The entries' two fields as constants.
fn consts(real: &str, g: &Geo) -> String {
    let mut s = real.to_string();
    for (j, (o, base)) in g.outs.iter().zip(g.bases()).enumerate() {
        s = s.replacen(
            &format!("let e = bound_0(table.entries[{j}u]);"),
            &format!("let e_src_bit = {}u; let e_dst_unit = {base}u;", o.0 * 128),
            1,
        );
    }
    s.replace("(e.src_bit >> 7u)", "(e_src_bit >> 7u)")
        .replace("= e.dst_unit + row", "= e_dst_unit + row")
}

struct Kernel {
    name: String,
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    groups: [u32; 2],
}

fn main() {
    let ctx = pollster::block_on(GpuContext::request_with_features(
        wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
    ))
    .unwrap();
    let dev = &ctx.device;
    let timer = GpuTimer::new(dev, &ctx.queue);
    let which: Vec<String> = std::env::args().skip(1).collect();
    let geos = [
        Geo {
            name: "qkv",
            rows: 4096,
            block: 288,
            outs: vec![(0, 96), (96, 96), (192, 96)],
        },
        Geo {
            name: "axis1_4",
            rows: 4096,
            block: 1024,
            outs: (0..4).map(|i| (i * 256, 256)).collect(),
        },
        Geo {
            name: "64x1024x256",
            rows: 64,
            block: 16384,
            outs: (0..4).map(|i| (i * 4096, 4096)).collect(),
        },
        Geo {
            name: "yolo_t",
            rows: 8400,
            block: 21,
            outs: vec![(0, 1), (1, 20)],
        },
    ];
    for geo in geos
        .iter()
        .filter(|g| which.is_empty() || which.iter().any(|w| w == g.name))
    {
        let in_bytes = u64::from(geo.rows * geo.block) * 16;
        let out_bytes = u64::from(geo.total()) * 16;
        let src = dev.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: in_bytes.max(out_bytes),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let dst = dev.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: out_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let real = wgpu_split::plan::SplitPlan::new(
            &wgpu_split::ResolvedSplit::new(
                &[geo.rows as usize, geo.block as usize * 4],
                1,
                geo.outs.iter().map(|o| o.1 as usize * 4).collect(),
                true,
            )
            .unwrap(),
            wgpu_split::ElementType::Float,
            &wgpu_split::plan::PlanLimits::WEBGPU_DEFAULT,
            &wgpu_split::plan::PlanOptions::default()
                .placement(wgpu_split::plan::Placement::Arena)
                .strategy(wgpu_split::plan::Strategy::Gather),
        )
        .unwrap()
        .shaders()[0]
            .source();
        let widest = geo.outs.iter().map(|o| o.1).max().unwrap();
        let inv = geo.rows * widest.div_ceil(2);
        let mut words: Vec<u32> = vec![inv, geo.outs.len() as u32, 0, 0];
        for (o, base) in geo.outs.iter().zip(geo.bases()) {
            words.extend([0, base, 0, 0, 0, 0, 0, o.0 * 128, 0, 0, 0, 0]);
        }
        let table = dev.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: words.len() as u64 * 4,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::UNIFORM
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        ctx.queue
            .write_buffer(&table, 0, bytemuck::cast_slice(&words));
        let real_const = real.replace("g >= table.invocations", &format!("g >= {inv}u"));
        let variants: Vec<(String, (String, u32))> = vec![
            ("real".into(), (real.replace("fn split(", "fn main("), inv)),
            (
                "real_const".into(),
                (real_const.replace("fn split(", "fn main("), inv),
            ),
            (
                "real_fixed".into(),
                (
                    real.replace("fn split(", "fn main(").replace(
                        "entries: array<Entry>,",
                        &format!("entries: array<Entry, {}>,", geo.outs.len()),
                    ),
                    inv,
                ),
            ),
            (
                "real_uniform".into(),
                (
                    real.replace("fn split(", "fn main(")
                        .replace(
                            "entries: array<Entry>,",
                            &format!("entries: array<Entry, {}>,", geo.outs.len()),
                        )
                        .replace("var<storage, read> table", "var<uniform> table"),
                    inv,
                ),
            ),
            (
                "real_hoist".into(),
                (
                    hoist(&real, geo.outs.len()).replace("fn split(", "fn main("),
                    inv,
                ),
            ),
            (
                "real_hoist_u".into(),
                (
                    hoist(&real, geo.outs.len())
                        .replace("fn split(", "fn main(")
                        .replace(
                            "entries: array<Entry>,",
                            &format!("entries: array<Entry, {}>,", geo.outs.len()),
                        )
                        .replace("var<storage, read> table", "var<uniform> table"),
                    inv,
                ),
            ),
            (
                "hu_src_const".into(),
                (
                    part_consts(&uni(&hoist(&real, geo.outs.len()), geo), geo, true, false)
                        .replace("fn split(", "fn main("),
                    inv,
                ),
            ),
            (
                "hu_dst_const".into(),
                (
                    part_consts(&uni(&hoist(&real, geo.outs.len()), geo), geo, false, true)
                        .replace("fn split(", "fn main("),
                    inv,
                ),
            ),
            (
                "hs_src_const".into(),
                (
                    part_consts(&hoist(&real, geo.outs.len()), geo, true, false)
                        .replace("fn split(", "fn main("),
                    inv,
                ),
            ),
            (
                "hu_src_rel".into(),
                (
                    src_rel(
                        &part_consts(&uni(&hoist(&real, geo.outs.len()), geo), geo, false, false),
                        geo,
                    )
                    .replace("fn split(", "fn main("),
                    inv,
                ),
            ),
            (
                "hs_src_rel".into(),
                (
                    src_rel(
                        &part_consts(&hoist(&real, geo.outs.len()), geo, false, false),
                        geo,
                    )
                    .replace("fn split(", "fn main("),
                    inv,
                ),
            ),
            (
                "real_fields".into(),
                (fields(&real).replace("fn split(", "fn main("), inv),
            ),
            (
                "real_consts".into(),
                (consts(&real, geo).replace("fn split(", "fn main("), inv),
            ),
            ("copy".into(), copy(geo)),
            ("rows2".into(), rows_k(geo, 2)),
            ("rows1".into(), rows_k(geo, 1)),
        ];
        let kernels: Vec<Kernel> = variants
            .into_iter()
            .map(|(name, (wgsl, inv))| {
                let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: None,
                    source: wgpu::ShaderSource::Wgsl(wgsl.into()),
                });
                let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                });
                let bufs: Vec<&wgpu::Buffer> = if name.starts_with("real")
                    || name.starts_with("hu_")
                    || name.starts_with("hs_")
                {
                    vec![&table, &src, &dst]
                } else {
                    vec![&src, &dst]
                };
                let entries: Vec<wgpu::BindGroupEntry> = bufs
                    .iter()
                    .enumerate()
                    .map(|(i, b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: b.as_entire_binding(),
                    })
                    .collect();
                let bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &entries,
                });
                let groups = inv.div_ceil(256);
                let ys = groups.div_ceil(65535);
                Kernel {
                    name,
                    pipeline,
                    bind,
                    groups: [groups.div_ceil(ys), ys],
                }
            })
            .collect();
        let mut times: Vec<Vec<f64>> = vec![vec![]; kernels.len()];
        for k in &kernels {
            timer.warm_up(&|e| rec(e, k));
        }
        for _ in 0..31 {
            for (i, k) in kernels.iter().enumerate() {
                times[i].push(timer.once(&|e| rec(e, k)).0);
            }
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let base = med(&mut times[0]);
        print!("{:<14}", geo.name);
        for (k, t) in kernels.iter().zip(times.iter_mut()) {
            let m = med(t);
            print!(" {}={:.2}ms({:.2})", k.name, m * 1e3, base / m);
        }
        println!();
    }
}

fn rec(e: &mut wgpu::CommandEncoder, k: &Kernel) {
    let mut pass = e.begin_compute_pass(&Default::default());
    pass.set_pipeline(&k.pipeline);
    pass.set_bind_group(0, &k.bind, &[]);
    pass.dispatch_workgroups(k.groups[0], k.groups[1], 1);
}
