//! A small ML runtime embedding the split the way real ones do.
//!
//! The runtime owns its instance, adapter, device and queue (created with
//! WebGPU's default limits, so what runs here runs on every WebGPU adapter),
//! keeps its tensors in a pool of separate buffers and of sub-allocated
//! pages with guard bytes around every slice, and records each step of its
//! model into one compute pass. The step here is the attention QKV split:
//!
//! producer kernel -> f16 [8, 512, 2304] -> Split (last axis, 3 equal) ->
//! Q, K, V in three pooled tensors -> consumer kernel reading K
//!
//! with the split recorded inside the runtime's own compute pass, between the
//! producer and the consumer, as one dispatch. Everything is checked
//! bit-exactly against the host path, and every guard byte must be intact.
//!
//! ```text
//! cargo run --release --example runtime
//! ```

use std::process::ExitCode;

use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::plan::{PlanOptions, Strategy};
use wgpu_split::{ElementType, HostTensor, OnnxSplit};

const SHAPE: [usize; 3] = [8, 512, 2304];
/// Guard bytes around every pooled slice, filled with `GUARD`.
const GUARD_BYTES: u64 = 256;
const GUARD: u8 = 0xEE;
const PAGE_BYTES: u64 = 32 << 20;

/// The runtime's kernels: the producer writes element pair `i` (one u32 of
/// two f16) as a hash of `i`; the consumer turns each word of K into
/// `x ^ 0x5bd1e995`.
const KERNELS: &str = r#"
@group(0) @binding(0) var<storage, read_write> produced: array<u32>;
@group(0) @binding(1) var<storage, read> consumed: array<u32>;
@group(0) @binding(2) var<storage, read_write> result: array<u32>;

@compute @workgroup_size(256)
fn produce(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.y * n.x * 256u + id.x;
    if (i < arrayLength(&produced)) {
        produced[i] = (i * 2654435761u) ^ (i >> 7u);
    }
}

@compute @workgroup_size(256)
fn consume(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.y * n.x * 256u + id.x;
    if (i < arrayLength(&result)) {
        result[i] = consumed[i] ^ 0x5bd1e995u;
    }
}
"#;

fn producer_words(count: usize) -> Vec<u32> {
    (0..count as u32)
        .map(|i| i.wrapping_mul(2654435761) ^ (i >> 7))
        .collect()
}

/// A tensor's home: a whole pool buffer, or a slice of a page.
#[derive(Clone, Copy)]
struct Slot {
    buffer: usize,
    offset: u64,
    size: u64,
}

/// The runtime's memory: size-bucketed separate buffers and 32 MiB pages
/// sub-allocated at 256-byte boundaries, every slice between guard bytes.
struct Pool {
    device: wgpu::Device,
    queue: wgpu::Queue,
    buffers: Vec<wgpu::Buffer>,
    page_used: Vec<(usize, u64)>,
}

impl Pool {
    const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
        .union(wgpu::BufferUsages::COPY_SRC)
        .union(wgpu::BufferUsages::COPY_DST);

    fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        Pool {
            device: device.clone(),
            queue: queue.clone(),
            buffers: Vec::new(),
            page_used: Vec::new(),
        }
    }

    fn guarded_buffer(&mut self, size: u64, label: &str) -> usize {
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: Self::USAGE,
            mapped_at_creation: false,
        });
        self.queue
            .write_buffer(&buffer, 0, &vec![GUARD; size as usize]);
        self.buffers.push(buffer);
        self.buffers.len() - 1
    }

    /// A tensor in a buffer of its own, rounded up to a power-of-two bucket
    /// (the bytes past the tensor are guards too).
    fn separate(&mut self, bytes: u64) -> Slot {
        let bucket = bytes.next_power_of_two().max(256);
        let buffer = self.guarded_buffer(bucket, "pool buffer");
        Slot {
            buffer,
            offset: 0,
            size: bytes,
        }
    }

    /// A tensor in a page, between guard bytes.
    fn sub_allocate(&mut self, bytes: u64) -> Slot {
        let fits = |used: u64| used + GUARD_BYTES + bytes + GUARD_BYTES <= PAGE_BYTES;
        let page = match self.page_used.iter().position(|&(_, used)| fits(used)) {
            Some(p) => p,
            None => {
                let buffer = self.guarded_buffer(PAGE_BYTES, "pool page");
                self.page_used.push((buffer, 0));
                self.page_used.len() - 1
            }
        };
        let (buffer, used) = self.page_used[page];
        let offset = (used + GUARD_BYTES).next_multiple_of(256);
        self.page_used[page].1 = offset + bytes;
        Slot {
            buffer,
            offset,
            size: bytes,
        }
    }

    fn region(&self, slot: Slot) -> BufferRegion<'_> {
        BufferRegion::new(&self.buffers[slot.buffer], slot.offset, slot.size)
    }

    fn read(&self, buffer: usize) -> Vec<u8> {
        let source = &self.buffers[buffer];
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: source.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(source, 0, &staging, 0, source.size());
        self.queue.submit([encoder.finish()]);
        staging
            .slice(..)
            .map_async(wgpu::MapMode::Read, |r| r.expect("map the readback buffer"));
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
        staging
            .slice(..)
            .get_mapped_range()
            .expect("mapped")
            .to_vec()
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("runtime: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime's own device: its instance, adapter, device and queue, with
/// WebGPU's default limits.
fn device() -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), Box<dyn std::error::Error>> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("runtime"),
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))?;
    Ok((adapter, device, queue))
}

fn groups(words: u64) -> (u32, u32) {
    let groups = words.div_ceil(256);
    let rows = groups.div_ceil(65535);
    (groups.div_ceil(rows) as u32, rows as u32)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (adapter, device, queue) = device()?;
    println!(
        "adapter: {} ({:?})",
        adapter.get_info().name,
        adapter.get_info().backend
    );
    let splitter = GpuSplitter::new(&device, &queue)?;
    let mut pool = Pool::new(&device, &queue);

    // The model's node: ONNX Split-18, last axis, three equal outputs.
    let op = OnnxSplit::new(18, 3).axis(-1).num_outputs(3);
    let split = op.resolve(&SHAPE)?;
    // Dispatches only, so the split can go inside the runtime's compute pass.
    let options = PlanOptions::default().strategy(Strategy::Gather);
    let plan = splitter.plan_with(&split, ElementType::Float16, &options)?;
    let input_bytes = plan.input_bytes();
    let input = pool.separate(input_bytes);
    let qkv: Vec<Slot> = plan
        .outputs()
        .iter()
        .map(|o| pool.sub_allocate(o.region_bytes))
        .collect();
    let k_bytes = plan.outputs()[1].len_bytes;
    // A kernel cannot read and write one buffer in a dispatch (WebGPU), so the
    // consumer writes into a buffer of its own.
    let result = pool.separate(k_bytes);

    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("runtime kernels"),
        source: wgpu::ShaderSource::Wgsl(KERNELS.into()),
    });
    let pipeline = |entry: &str| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let (produce, consume) = (pipeline("produce"), pipeline("consume"));
    let produce_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("produce"),
        layout: &produce.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(
                pool.region(input).binding().expect("a non-empty tensor"),
            ),
        }],
    });
    // The consumer binds K where the runtime keeps it.
    let consume_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("consume"),
        layout: &consume.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(
                    pool.region(qkv[1]).binding().expect("a non-empty tensor"),
                ),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Buffer(
                    pool.region(result).binding().expect("a non-empty tensor"),
                ),
            },
        ],
    });
    let outputs: Vec<BufferRegion> = qkv.iter().map(|&s| pool.region(s)).collect();
    let prepared = splitter.prepare(&plan, pool.region(input), &outputs)?;

    // One step of the model: one compute pass, three kernels.
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&produce);
        pass.set_bind_group(0, &produce_bind, &[]);
        let (x, y) = groups(input_bytes / 4);
        pass.dispatch_workgroups(x, y, 1);
        prepared.record(&mut pass);
        pass.set_pipeline(&consume);
        pass.set_bind_group(0, &consume_bind, &[]);
        let (x, y) = groups(k_bytes / 4);
        pass.dispatch_workgroups(x, y, 1);
    }
    queue.submit([encoder.finish()]);

    let slots: Vec<Slot> = [input, result]
        .into_iter()
        .chain(qkv.iter().copied())
        .collect();
    let guards = check(&pool, &plan, &slots, &op.into())?;
    println!(
        "runtime: OK: produce -> QKV split ({} dispatch inside the runtime's compute pass, WebGPU default limits) -> consume K; Q, K, V and K's consumer bit-exact against the host path; {} guard bytes intact",
        prepared.dispatch_count(),
        guards,
    );
    Ok(())
}

/// Every tensor bit-exact against the host path, every guard byte intact;
/// returns the number of guard bytes checked. `slots` are the input, the
/// consumer's result, then Q, K and V.
fn check(
    pool: &Pool,
    plan: &wgpu_split::plan::SplitPlan,
    slots: &[Slot],
    op: &wgpu_split::Operator,
) -> Result<u64, Box<dyn std::error::Error>> {
    let (input, result, qkv) = (slots[0], slots[1], &slots[2..]);
    if plan.dispatch_count() != 1 {
        return Err(format!(
            "the QKV split took {} dispatches, not 1",
            plan.dispatch_count()
        )
        .into());
    }
    let words = producer_words((plan.input_bytes() / 4) as usize);
    let tensor = HostTensor::from_raw(
        ElementType::Float16,
        &SHAPE,
        bytemuck::cast_slice(&words).to_vec(),
    )?;
    let expected = op.split_on_host(&tensor)?;
    let memory: Vec<Vec<u8>> = (0..pool.buffers.len()).map(|b| pool.read(b)).collect();
    let bytes = |s: Slot| &memory[s.buffer][s.offset as usize..(s.offset + s.size) as usize];
    if bytes(input) != tensor.as_bytes()? {
        return Err("the producer's tensor differs".into());
    }
    for (i, (slot, e)) in qkv.iter().zip(&expected).enumerate() {
        if &bytes(*slot)[..e.as_bytes()?.len()] != e.as_bytes()? {
            return Err(format!("output {i} differs from the host path").into());
        }
    }
    let k: Vec<u32> = bytemuck::pod_collect_to_vec(expected[1].as_bytes()?);
    let consumed: Vec<u32> = k.iter().map(|x| x ^ 0x5bd1_e995).collect();
    if bytes(result) != bytemuck::cast_slice::<u32, u8>(&consumed) {
        return Err("the consumer of K read other bytes than the split wrote".into());
    }
    let mut guards = 0;
    for (b, page) in memory.iter().enumerate() {
        for (at, &byte) in page.iter().enumerate() {
            let owned = slots
                .iter()
                .any(|s| s.buffer == b && (s.offset..s.offset + s.size).contains(&(at as u64)));
            if owned {
                continue;
            }
            if byte != GUARD {
                return Err(format!("guard byte {at} of pool buffer {b} was overwritten").into());
            }
            guards += 1;
        }
    }
    Ok(guards)
}
