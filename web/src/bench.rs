//! The bench page's side in wasm: split_bench's cases (its splits, concats
//! and permuted moves, `examples/split_bench/`) planned by the crate on the
//! page's GPU, each checked against the host path before it is timed, and
//! timed beside a vec4 shader copy of the same bytes with the device's
//! timestamp queries (an empty pass's timestamp before the work and one
//! after; the work repeated in one submission until it spans milliseconds,
//! as browsers quantise timestamps). Where the adapter has no timestamp
//! queries the page times [`Bench::submit`] by its own clock (the crate
//! reads none). The page runs onnxruntime-web on the same `GPUDevice`
//! ([`Bench::gpu_device`]) with the case's input ([`Bench::input`]) and
//! checks it against the same host outputs ([`Bench::expected`]).
//!
//! The binding wall's shapes (`web/ortweb/wall.mjs`) run here too
//! ([`Bench::wall_case`]): what the crate does where onnxruntime-web's
//! one-shader Split and Concat break.

use wasm_bindgen::prelude::*;
use wgpu_split::gpu::{BufferRegion, Calibration, GpuSplitter};
use wgpu_split::plan::{ConcatPlan, PermutedConcatPlan, PermutedPlan, SplitPlan, Strategy};
use wgpu_split::{ElementType, HostTensor, PermutedConcat, ResolvedConcat, ResolvedSplit};

use crate::device::{Gpu, buffer_with, read};
use crate::rng::Rng;
use crate::suite::moves::undoing;

#[path = "../../examples/split_bench/cases.rs"]
#[allow(dead_code, missing_docs)]
mod split_cases;

#[path = "../../examples/webgpu_recordings/onnx_nodes.rs"]
mod onnx_nodes;
use onnx_nodes::{onnx_concat, onnx_split};

#[path = "../../examples/split_bench/permuted_cases.rs"]
#[allow(dead_code, missing_docs)]
mod permuted_cases;

fn js(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

/// One case as the page lists it, before it is prepared.
enum CaseSource {
    Split(split_cases::Case),
    Permuted(permuted_cases::Case),
}

impl CaseSource {
    fn name(&self) -> &'static str {
        match self {
            CaseSource::Split(c) => c.name,
            CaseSource::Permuted(c) => c.name,
        }
    }
}

/// What a prepared case records, with its buffers.
enum Move {
    Split {
        plan: SplitPlan,
        input: wgpu::Buffer,
        outputs: Vec<wgpu::Buffer>,
    },
    Concat {
        plan: ConcatPlan,
        inputs: Vec<wgpu::Buffer>,
        output: wgpu::Buffer,
    },
    Permuted {
        plan: PermutedPlan,
        input: wgpu::Buffer,
        outputs: Vec<wgpu::Buffer>,
    },
    PermutedConcat {
        plan: PermutedConcatPlan,
        inputs: Vec<wgpu::Buffer>,
        output: wgpu::Buffer,
    },
}

/// A case ready to run: its move, host inputs and expected outputs, and
/// the vec4 copy of as many bytes.
struct Prepared {
    moved: Move,
    inputs: Vec<HostTensor>,
    expected: Vec<HostTensor>,
    copy: CopyRun,
}

/// The vec4 shader copy of `bytes` (rounded up to 16): the reference a
/// plan is measured against.
struct CopyRun {
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    grid: (u32, u32),
}

const COPY_SHADER: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn copy(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let i = (group.y * groups.x + group.x) * 256u + lane;
  if (i < arrayLength(&dst)) {
    dst[i] = src[i];
  }
}";

impl CopyRun {
    fn new(gpu: &Gpu, bytes: u64) -> CopyRun {
        let device = &gpu.device;
        let size = bytes.next_multiple_of(16).max(16);
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench copy"),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let src = buffer(wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST);
        let dst = buffer(wgpu::BufferUsages::STORAGE);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("bench vec4 copy"),
            source: wgpu::ShaderSource::Wgsl(COPY_SHADER.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("bench vec4 copy"),
            layout: None,
            module: &module,
            entry_point: Some("copy"),
            compilation_options: Default::default(),
            cache: None,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: src.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: dst.as_entire_binding(),
                },
            ],
        });
        let groups = (size / 16).div_ceil(256) as u32;
        let max = device.limits().max_compute_workgroups_per_dimension;
        let rows = groups.div_ceil(max);
        CopyRun {
            pipeline,
            group,
            grid: (groups.div_ceil(rows), rows),
        }
    }

    fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
    }
}

/// Timestamp queries, where the device has them.
struct Stamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
}

/// split_bench's cases on the page's GPU.
#[wasm_bindgen]
pub struct Bench {
    gpu: Gpu,
    sources: Vec<CaseSource>,
    prepared: Option<(usize, Prepared)>,
    stamps: Option<Stamps>,
}

#[wasm_bindgen]
impl Bench {
    /// A device of the browser's adapter with the adapter's limits (so
    /// split_bench's full sizes fit on a GPU) and its timestamp queries;
    /// `quick`: split_bench's quick sizes (CI's), else its full ones;
    /// `calibrate`: plan with what `Calibration::measure_async` measures on
    /// this device (needs timestamp queries), else with the adapter class's
    /// model, as a splitter on the web starts.
    pub async fn create(quick: bool, calibrate: bool) -> Result<Bench, JsValue> {
        let adapter_limits = {
            let (adapter, ..) =
                crate::device::device(wgpu::Limits::default(), wgpu::Features::empty())
                    .await
                    .map_err(js)?;
            adapter.limits()
        };
        let mut gpu = Gpu::new(adapter_limits, wgpu::Features::TIMESTAMP_QUERY)
            .await
            .map_err(js)?;
        if calibrate {
            let calibration = Calibration::measure_async(&gpu.splitter)
                .await
                .map_err(js)?;
            gpu.splitter = GpuSplitter::new(&gpu.device, &gpu.queue)
                .map_err(js)?
                .with_strategy(Strategy::Auto(calibration.model));
        }
        let mut sources: Vec<CaseSource> = split_cases::suite(quick)
            .into_iter()
            .chain(split_cases::concat_suite(quick))
            .chain(split_cases::narrow_suite(quick))
            .map(CaseSource::Split)
            .collect();
        sources.extend(
            permuted_cases::cases(quick)
                .into_iter()
                .map(CaseSource::Permuted),
        );
        let stamps = gpu
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| Stamps {
                set: gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("bench"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                }),
                resolve: gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("bench timestamps"),
                    size: 16,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
            });
        Ok(Bench {
            gpu,
            sources,
            prepared: None,
            stamps,
        })
    }

    /// The cases' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.sources.iter().map(|c| c.name().to_string()).collect()
    }

    /// The device's `GPUDevice` (for onnxruntime-web on the same device).
    pub fn gpu_device(&self) -> JsValue {
        #[cfg(target_arch = "wasm32")]
        return self
            .gpu
            .device
            .as_webgpu()
            .map_or(JsValue::NULL, |d| JsValue::from(d.clone()));
        #[cfg(not(target_arch = "wasm32"))]
        JsValue::NULL
    }

    /// How the splitter plans: `"class model"` or `"calibrated"`.
    pub fn model(&self) -> String {
        match self.gpu.splitter.model_origin() {
            wgpu_split::gpu::ModelOrigin::Given => {
                "calibrated (Calibration::measure_async)".to_string()
            }
            other => format!("{other:?}").to_lowercase() + " model",
        }
    }

    /// Whether the device times with timestamp queries ([`Bench::time`]);
    /// else the page times [`Bench::submit`].
    pub fn has_timestamps(&self) -> bool {
        self.stamps.is_some()
    }

    /// Prepares case `index` (dropping the one before): its input made
    /// from a seed, its plan (halved along the first dimension until it
    /// plans on this device), buffers and expected outputs. Returns what
    /// the page shows and needs as JSON: name, kind, element type, shape,
    /// bytes moved, dispatches and copies, and the one-node ONNX model it
    /// is (`onnx`, null with why not).
    pub fn prepare(&mut self, index: usize) -> Result<String, JsValue> {
        self.prepared = None;
        let source = self.sources.get(index).ok_or_else(|| js("no such case"))?;
        let seed = 0x5eed_0000 + index as u32;
        let (prepared, info) = match source {
            CaseSource::Split(case) => prepare_split(&self.gpu, case, seed)?,
            CaseSource::Permuted(case) => prepare_permuted(&self.gpu, case, seed)?,
        };
        self.prepared = Some((index, prepared));
        Ok(info.to_string())
    }

    /// Runs the prepared case once and compares every output byte with the
    /// host path's: `"exact"`, or what differs.
    pub async fn check(&self) -> Result<String, JsValue> {
        let (_, p) = self
            .prepared
            .as_ref()
            .ok_or_else(|| js("prepare a case first"))?;
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        p.record(&self.gpu, &mut encoder)?;
        self.gpu.queue.submit([encoder.finish()]);
        let (device, queue) = (&self.gpu.device, &self.gpu.queue);
        for (i, (buffer, want)) in p.output_buffers().iter().zip(&p.expected).enumerate() {
            let got = read(device, queue, buffer).await.map_err(js)?;
            let want = want.as_bytes().map_err(js)?;
            if let Some(k) = got[..want.len()].iter().zip(want).position(|(a, b)| a != b) {
                return Ok(format!("output {i}: byte {k} differs"));
            }
        }
        Ok("exact".to_string())
    }

    /// GPU seconds of `repeats` runs of the prepared case's plan (`copy`:
    /// of the vec4 shader copy instead) in one submission, between two
    /// timestamps; `None` without timestamp queries.
    pub async fn time(&self, copy: bool, repeats: u32) -> Result<Option<f64>, JsValue> {
        let Some(stamps) = &self.stamps else {
            return Ok(None);
        };
        let (_, p) = self
            .prepared
            .as_ref()
            .ok_or_else(|| js("prepare a case first"))?;
        let device = &self.gpu.device;
        let mut encoder = device.create_command_encoder(&Default::default());
        stamp(&mut encoder, &stamps.set, Some(0), None);
        for _ in 0..repeats.max(1) {
            if copy {
                p.copy.record(&mut encoder);
            } else {
                p.record(&self.gpu, &mut encoder)?;
            }
        }
        stamp(&mut encoder, &stamps.set, None, Some(1));
        encoder.resolve_query_set(&stamps.set, 0..2, &stamps.resolve, 0);
        self.gpu.queue.submit([encoder.finish()]);
        let bytes = read(device, &self.gpu.queue, &stamps.resolve)
            .await
            .map_err(js)?;
        let ticks: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let period = f64::from(self.gpu.queue.get_timestamp_period());
        Ok(Some(
            ticks[1].saturating_sub(ticks[0]) as f64 * period * 1e-9,
        ))
    }

    /// Submits `repeats` runs of the prepared case (`copy`: of the copy)
    /// and resolves once the queue has done them: the page's clock times
    /// it where there are no timestamp queries.
    pub async fn submit(&self, copy: bool, repeats: u32) -> Result<(), JsValue> {
        let (_, p) = self
            .prepared
            .as_ref()
            .ok_or_else(|| js("prepare a case first"))?;
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        for _ in 0..repeats.max(1) {
            if copy {
                p.copy.record(&mut encoder);
            } else {
                p.record(&self.gpu, &mut encoder)?;
            }
        }
        self.gpu.queue.submit([encoder.finish()]);
        let (sender, done) = futures_intrusive::channel::shared::oneshot_channel();
        self.gpu.queue.on_submitted_work_done(move || {
            let _ = sender.send(());
        });
        done.receive()
            .await
            .ok_or_else(|| js("the queue's callback was dropped"))
    }

    /// The prepared case's input `k`, packed (for onnxruntime-web).
    pub fn input(&self, k: usize) -> Result<Vec<u8>, JsValue> {
        let (_, p) = self
            .prepared
            .as_ref()
            .ok_or_else(|| js("prepare a case first"))?;
        let t = p.inputs.get(k).ok_or_else(|| js("no such input"))?;
        Ok(t.as_bytes().map_err(js)?.to_vec())
    }

    /// The host path's output `k` of the prepared case, packed.
    pub fn expected(&self, k: usize) -> Result<Vec<u8>, JsValue> {
        let (_, p) = self
            .prepared
            .as_ref()
            .ok_or_else(|| js("prepare a case first"))?;
        let t = p.expected.get(k).ok_or_else(|| js("no such output"))?;
        Ok(t.as_bytes().map_err(js)?.to_vec())
    }

    /// Drops the prepared case's buffers.
    pub fn release(&mut self) {
        self.prepared = None;
    }

    /// A binding-wall shape (`web/ortweb/wall.mjs`) through the crate on
    /// this device: a float32 `Split` of `input_shape` into `lengths` along
    /// `axis`, or (`lengths` empty) a `Concat` of `count` inputs of
    /// `input_shape`, inputs numbered 1, 2, 3... as the wall's; every
    /// output compared with the host path's. JSON: status (`exact` or the
    /// difference), dispatches, copies.
    pub async fn wall_case(
        &self,
        input_shape: Vec<usize>,
        axis: usize,
        lengths: Vec<usize>,
        count: usize,
    ) -> Result<String, JsValue> {
        let (device, queue, splitter) = (&self.gpu.device, &self.gpu.queue, &self.gpu.splitter);
        let numbered = |shape: &[usize], from: usize| -> Result<HostTensor, JsValue> {
            let n: usize = shape.iter().product();
            let values: Vec<f32> = (from..from + n).map(|v| v as f32).collect();
            HostTensor::from_slice(shape, &values).map_err(js)
        };
        let t = ElementType::Float;
        let (status, dispatches, copies) = if lengths.is_empty() {
            let shapes = vec![input_shape.clone(); count];
            let concat = ResolvedConcat::new(&shapes, axis).map_err(js)?;
            let per: usize = input_shape.iter().product();
            let inputs = (0..count)
                .map(|k| numbered(&input_shape, 1 + k * per))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&HostTensor> = inputs.iter().collect();
            let want = HostTensor::concat(&refs, &concat).map_err(js)?;
            let plan = splitter.plan(&concat, t).map_err(js)?;
            let needs = plan.requirements();
            let buffers: Vec<wgpu::Buffer> = inputs
                .iter()
                .map(|i| {
                    buffer_with(
                        device,
                        i.as_bytes().unwrap_or(&[]),
                        wgpu::BufferUsages::STORAGE,
                    )
                })
                .collect();
            let output = buffer_with(
                device,
                &vec![0; needs.output_region_bytes as usize],
                wgpu::BufferUsages::STORAGE,
            );
            let regions: Vec<BufferRegion> = buffers.iter().map(BufferRegion::whole).collect();
            let mut encoder = device.create_command_encoder(&Default::default());
            splitter
                .encode(&mut encoder, &plan, &regions, BufferRegion::whole(&output))
                .map_err(js)?;
            queue.submit([encoder.finish()]);
            let got = read(device, queue, &output).await.map_err(js)?;
            let want = want.as_bytes().map_err(js)?;
            let status = if &got[..want.len()] == want {
                "exact"
            } else {
                "differs"
            };
            (status, needs.dispatches, needs.copies)
        } else {
            let input = numbered(&input_shape, 1)?;
            let split = ResolvedSplit::new(&input_shape, axis, lengths, true).map_err(js)?;
            let want = input.split(&split).map_err(js)?;
            let plan = splitter.plan(&split, t).map_err(js)?;
            let needs = plan.requirements();
            let source = buffer_with(
                device,
                input.as_bytes().map_err(js)?,
                wgpu::BufferUsages::STORAGE,
            );
            let outputs: Vec<wgpu::Buffer> = plan
                .outputs()
                .iter()
                .map(|o| {
                    buffer_with(
                        device,
                        &vec![0; o.region_bytes as usize],
                        wgpu::BufferUsages::STORAGE,
                    )
                })
                .collect();
            let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();
            let mut encoder = device.create_command_encoder(&Default::default());
            splitter
                .encode(&mut encoder, &plan, BufferRegion::whole(&source), &regions)
                .map_err(js)?;
            queue.submit([encoder.finish()]);
            let mut status = "exact";
            for (b, w) in outputs.iter().zip(&want) {
                let got = read(device, queue, b).await.map_err(js)?;
                let w = w.as_bytes().map_err(js)?;
                if &got[..w.len()] != w {
                    status = "differs";
                }
            }
            (status, needs.dispatches, needs.copies)
        };
        Ok(
            serde_json::json!({"status": status, "dispatches": dispatches, "copies": copies})
                .to_string(),
        )
    }
}

/// An empty compute pass writing timestamp `beginning` as it begins and
/// `end` as it ends.
fn stamp(
    encoder: &mut wgpu::CommandEncoder,
    set: &wgpu::QuerySet,
    beginning: Option<u32>,
    end: Option<u32>,
) {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some("bench timestamp"),
        timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: beginning,
            end_of_pass_write_index: end,
        }),
    });
}

/// A region of each whole buffer.
fn whole(buffers: &[wgpu::Buffer]) -> Vec<BufferRegion<'_>> {
    buffers.iter().map(BufferRegion::whole).collect()
}

impl Prepared {
    fn record(&self, gpu: &Gpu, encoder: &mut wgpu::CommandEncoder) -> Result<(), JsValue> {
        let splitter = &gpu.splitter;
        match &self.moved {
            Move::Split {
                plan,
                input,
                outputs,
            } => {
                let regions: Vec<BufferRegion> = outputs
                    .iter()
                    .enumerate()
                    .map(|(i, b)| BufferRegion::new(b, 0, plan.destination_bytes(i)))
                    .collect();
                splitter.encode(
                    encoder,
                    plan,
                    BufferRegion::new(input, 0, plan.input_bytes()),
                    &regions,
                )
            }
            Move::Concat {
                plan,
                inputs,
                output,
            } => splitter.encode(encoder, plan, &whole(inputs), BufferRegion::whole(output)),
            Move::Permuted {
                plan,
                input,
                outputs,
            } => splitter.encode(
                encoder,
                plan,
                BufferRegion::new(input, 0, plan.input_bytes()),
                &whole(outputs),
            ),
            Move::PermutedConcat {
                plan,
                inputs,
                output,
            } => {
                let regions: Vec<BufferRegion> = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, b)| BufferRegion::new(b, 0, plan.input_bytes(i)))
                    .collect();
                splitter.encode(encoder, plan, &regions, BufferRegion::whole(output))
            }
        }
        .map_err(js)
    }

    /// The buffers holding output `i` at offset 0, in output order.
    fn output_buffers(&self) -> Vec<&wgpu::Buffer> {
        match &self.moved {
            Move::Split { outputs, .. } | Move::Permuted { outputs, .. } => {
                outputs.iter().collect()
            }
            Move::Concat { output, .. } | Move::PermutedConcat { output, .. } => vec![output],
        }
    }
}

/// A zeroed storage buffer of `bytes` (at least 4).
fn zeroed(gpu: &Gpu, bytes: u64) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench"),
        size: bytes.next_multiple_of(4).max(4),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn upload(gpu: &Gpu, t: &HostTensor) -> Result<wgpu::Buffer, JsValue> {
    Ok(buffer_with(
        &gpu.device,
        t.as_bytes().map_err(js)?,
        wgpu::BufferUsages::STORAGE,
    ))
}

/// A split_bench case, halved along its first dimension until it plans.
fn prepare_split(
    gpu: &Gpu,
    case: &split_cases::Case,
    seed: u32,
) -> Result<(Prepared, serde_json::Value), JsValue> {
    let splitter = &gpu.splitter;
    let t = case.element_type;
    let mut shape = case.shape.clone();
    loop {
        let split = case.op.resolve(&shape).map_err(js)?;
        let concat = case.concat().map_err(js)?.map(|_| {
            let c = case.concat.as_ref().expect("a concat case");
            c.resolve(&split.output_shapes())
        });
        let fits = match &concat {
            Some(c) => {
                let c = c.as_ref().map_err(js)?;
                splitter.plan(c, t).map(|_| ()).map_err(js)
            }
            None => splitter.plan(&split, t).map(|_| ()).map_err(js),
        };
        if let Err(e) = fits {
            if shape[0] > 1 {
                shape[0] /= 2;
                continue;
            }
            return Err(e);
        }
        let input = Rng::new(seed).tensor(t, &shape);
        let pieces = input.split(&split).map_err(js)?;
        return match concat {
            None => {
                let plan = splitter.plan(&split, t).map_err(js)?;
                let moved: u64 = pieces
                    .iter()
                    .map(|p| p.as_bytes().map_or(0, |b| b.len() as u64))
                    .sum();
                let outputs = (0..plan.destination_count())
                    .map(|i| zeroed(gpu, plan.destination_bytes(i)))
                    .collect();
                let info = serde_json::json!({
                    "name": case.name, "kind": "split", "element_type": t.to_string(), "shape": shape,
                    "moved": moved.max(plan.input_bytes()), "dispatches": plan.dispatch_count(),
                    "copies": plan.copy_count(), "onnx": onnx_split(&split),
                });
                Ok((
                    Prepared {
                        moved: Move::Split {
                            input: upload(gpu, &input)?,
                            outputs,
                            plan,
                        },
                        copy: CopyRun::new(gpu, moved),
                        inputs: vec![input],
                        expected: pieces,
                    },
                    info,
                ))
            }
            Some(concat) => {
                let concat = concat.map_err(js)?;
                let plan = splitter.plan(&concat, t).map_err(js)?;
                let needs = plan.requirements();
                let refs: Vec<&HostTensor> = pieces.iter().collect();
                let output = HostTensor::concat(&refs, &concat).map_err(js)?;
                let moved = needs.output_bytes;
                let inputs = pieces
                    .iter()
                    .map(|p| upload(gpu, p))
                    .collect::<Result<_, _>>()?;
                let info = serde_json::json!({
                    "name": case.name, "kind": "concat", "element_type": t.to_string(), "shape": shape,
                    "moved": moved, "dispatches": needs.dispatches, "copies": needs.copies,
                    "onnx": onnx_concat(&concat),
                });
                Ok((
                    Prepared {
                        moved: Move::Concat {
                            inputs,
                            output: zeroed(gpu, needs.output_region_bytes),
                            plan,
                        },
                        copy: CopyRun::new(gpu, moved),
                        inputs: pieces,
                        expected: vec![output],
                    },
                    info,
                ))
            }
        };
    }
}

/// A permuted case (a split into heads, or the merge that undoes it).
fn prepare_permuted(
    gpu: &Gpu,
    case: &permuted_cases::Case,
    seed: u32,
) -> Result<(Prepared, serde_json::Value), JsValue> {
    let splitter = &gpu.splitter;
    let t = case.element_type;
    let input = Rng::new(seed).tensor(t, case.split.split().input_shape());
    let pieces = input.split_permuted(&case.split).map_err(js)?;
    let moved = input.as_bytes().map_err(js)?.len() as u64;
    let shape = case.split.split().input_shape().to_vec();
    if case.concat {
        let concat: PermutedConcat = undoing(&case.split).map_err(js)?;
        let plan = splitter.plan(&concat, t).map_err(js)?;
        let inputs = pieces
            .iter()
            .map(|p| upload(gpu, p))
            .collect::<Result<_, _>>()?;
        let info = serde_json::json!({
            "name": case.name, "kind": "permuted concat", "element_type": t.to_string(), "shape": shape,
            "moved": moved, "dispatches": null, "copies": null,
            "onnx": {"op": null, "why": "a Transpose + Reshape + Concat chain, not one node"},
        });
        let output = zeroed(gpu, plan.output_region_bytes());
        Ok((
            Prepared {
                moved: Move::PermutedConcat {
                    plan,
                    inputs,
                    output,
                },
                copy: CopyRun::new(gpu, moved),
                inputs: pieces,
                expected: vec![input],
            },
            info,
        ))
    } else {
        let plan = splitter.plan(&case.split, t).map_err(js)?;
        let outputs = (0..pieces.len())
            .map(|i| zeroed(gpu, plan.output_region_bytes(i)))
            .collect();
        let info = serde_json::json!({
            "name": case.name, "kind": "permuted split", "element_type": t.to_string(), "shape": shape,
            "moved": moved, "dispatches": null, "copies": null,
            "onnx": {"op": null, "why": "a Split + Reshape + Transpose chain, not one node"},
        });
        Ok((
            Prepared {
                moved: Move::Permuted {
                    input: upload(gpu, &input)?,
                    outputs,
                    plan,
                },
                copy: CopyRun::new(gpu, moved),
                inputs: vec![input],
                expected: pieces,
            },
            info,
        ))
    }
}
