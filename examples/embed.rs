//! Embedding the moves in a runtime's own command stream.
//!
//! A producer kernel writes a tensor into a buffer, the split is recorded into
//! the same encoder with each output into a buffer of its own, and a consumer
//! kernel binds one output as it is; then, with the same verbs, the outputs
//! are concatenated back into a buffer of their own and the tensor is split
//! into attention heads (a permuted split). One submission, readbacks at the
//! end, every byte checked against the host path. The device comes from the
//! caller's own instance and adapter.
//!
//! ```text
//! cargo run --release --example embed
//! ```

use std::process::ExitCode;

use wgpu_split::gpu::{BufferRegion, GpuSplitter, RoundTrip};
use wgpu_split::{ElementType, HostTensor, OnnxSplit, PermutedSplit, ResolvedConcat};

const ROWS: u32 = 300;
const COLS: u32 = 40;

/// The producer fills `u32` element `i` with a hash of `i`; the consumer
/// turns each element of its input into `x * 3 + 1` (wrapping).
const KERNELS: &str = r#"
@group(0) @binding(0) var<storage, read_write> produced: array<u32>;
@group(0) @binding(1) var<storage, read> consumed: array<u32>;
@group(0) @binding(2) var<storage, read_write> result: array<u32>;

@compute @workgroup_size(64)
fn produce(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&produced)) {
        produced[id.x] = id.x * 2654435761u ^ 0x9E3779B9u;
    }
}

@compute @workgroup_size(64)
fn consume(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&result)) {
        result[id.x] = consumed[id.x] * 3u + 1u;
    }
}
"#;

fn producer_values() -> Vec<u32> {
    (0..ROWS * COLS)
        .map(|i| i.wrapping_mul(2654435761) ^ 0x9E37_79B9)
        .collect()
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("embed: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The caller's own instance, adapter, device and queue.
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    let info = adapter.get_info();
    println!(
        "adapter: {} ({:?}, {:?})",
        info.name, info.backend, info.device_type
    );
    let device = &device;
    let splitter = GpuSplitter::new(device, &queue)?;

    // The split the runtime's model asks for: Split-18, axis 1, 3 outputs of
    // 14, 14 and 12 columns. We consume output 1.
    let op = OnnxSplit::new(18, 3).axis(1).num_outputs(3);
    let split = op.resolve(&[ROWS as usize, COLS as usize])?;
    let plan = splitter.plan(&split, ElementType::Uint32)?;
    let consumed = &plan.outputs()[1];
    let consumed_words = consumed.len_bytes / 4;
    // One buffer per output, as the runtime keeps its tensors.
    let outputs = RoundTrip::new(&splitter).create_destinations(&plan)?;
    let regions: Vec<BufferRegion> = outputs.iter().map(BufferRegion::whole).collect();

    let storage = wgpu::BufferUsages::STORAGE;
    // The producer writes it as storage; the split reads it as the plan
    // says (copy commands read it as a copy source).
    let reads = wgpu::BufferUsages::from(plan.requirements().input_usages);
    let tensor = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("produced tensor"),
        size: u64::from(ROWS * COLS) * 4,
        usage: storage | reads,
        mapped_at_creation: false,
    });
    let result = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("consumer result"),
        size: consumed.len_bytes,
        usage: storage | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });

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
            resource: tensor.as_entire_binding(),
        }],
    });
    // The consumer binds output 1 as it is.
    let consume_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("consume"),
        layout: &consume.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(
                    regions[1].binding().expect("a non-empty tensor"),
                ),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: result.as_entire_binding(),
            },
        ],
    });

    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&produce);
        pass.set_bind_group(0, &produce_bind, &[]);
        pass.dispatch_workgroups((ROWS * COLS).div_ceil(64), 1, 1);
    }
    splitter.encode(&mut encoder, &plan, BufferRegion::whole(&tensor), &regions)?;
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&consume);
        pass.set_bind_group(0, &consume_bind, &[]);
        pass.dispatch_workgroups((consumed_words as u32).div_ceil(64), 1, 1);
    }
    // The mirror move with the same verbs: the three outputs concatenated
    // back into a buffer of their own.
    let concat = ResolvedConcat::inverse_of(&split).ok_or("a split with outputs")?;
    let concat_plan = splitter.plan(&concat, ElementType::Uint32)?;
    let back = buffer(device, concat_plan.requirements().output_region_bytes);
    splitter.encode(
        &mut encoder,
        &concat_plan,
        &regions,
        BufferRegion::whole(&back),
    )?;
    // A permuted split: the tensor as [1, ROWS, COLS] split into two halves
    // of columns, each into heads of 10: [1, 2, ROWS, 10] each.
    let heads = PermutedSplit::split_heads(&[1, ROWS as usize, COLS as usize], &[20, 20], 10)?;
    let heads_plan = splitter.plan(&heads, ElementType::Uint32)?;
    let head_buffers: Vec<wgpu::Buffer> = (0..2)
        .map(|i| buffer(device, heads_plan.output_region_bytes(i)))
        .collect();
    let head_regions: Vec<BufferRegion> = head_buffers.iter().map(BufferRegion::whole).collect();
    let source = BufferRegion::whole(&tensor);
    let heads_counts = splitter.counts(&heads_plan, source, &head_regions)?;
    splitter.encode(&mut encoder, &heads_plan, source, &head_regions)?;
    queue.submit([encoder.finish()]);

    // The same pipeline on the host.
    let input = HostTensor::from_slice(&[ROWS as usize, COLS as usize], &producer_values())?;
    let outputs = wgpu_split::Operator::from(op).split_on_host(&input)?;
    let expected: Vec<u32> = outputs[1]
        .to_vec::<u32>()?
        .iter()
        .map(|x| x.wrapping_mul(3).wrapping_add(1))
        .collect();
    let gpu_result: Vec<u32> = bytemuck::pod_collect_to_vec(&read(device, &queue, &result)?);
    if gpu_result != expected {
        return Err(format!(
            "consumer result differs from the host path ({} vs {} words)",
            gpu_result.len(),
            expected.len()
        )
        .into());
    }
    if read(device, &queue, &back)?[..input.as_bytes()?.len()] != *input.as_bytes()? {
        return Err("the concat back differs from the produced tensor".into());
    }
    let input_3d = HostTensor::from_slice(&[1, ROWS as usize, COLS as usize], &producer_values())?;
    for (i, want) in input_3d.split_permuted(&heads)?.iter().enumerate() {
        let want = want.as_bytes()?;
        if read(device, &queue, &head_buffers[i])?[..want.len()] != *want {
            return Err(format!("heads output {i} differs from the host path").into());
        }
    }
    println!(
        "embed: OK: produce -> split ({} dispatch, {} copies) -> consume output 1 {:?} in its own buffer, {} words checked; \
         concat back ({} dispatches) and heads {:?} ({} dispatches) exact",
        plan.dispatch_count(),
        plan.copy_count(),
        consumed.shape,
        expected.len(),
        concat_plan.requirements().dispatches,
        heads.output_shape(0),
        heads_counts.dispatches,
    );
    Ok(())
}

/// A buffer of `size` bytes (at least 4) that kernels and copies read and
/// write (a plan may move a piece by a copy command).
fn buffer(device: &wgpu::Device, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: size.max(4).next_multiple_of(4),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// `buffer`'s bytes, copied to a mappable buffer and read (this blocks: a
/// native example; on the web a runtime awaits `map_async`).
fn read(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &readback, 0, buffer.size());
    let submission = queue.submit([encoder.finish()]);
    let slice = readback.slice(..);
    slice.map_async(wgpu::MapMode::Read, |r| r.expect("map the readback buffer"));
    device.poll(wgpu::PollType::Wait {
        submission_index: Some(submission),
        timeout: Some(wgpu_split::gpu::RoundTrip::READBACK_TIMEOUT),
    })?;
    let bytes = slice.get_mapped_range()?.to_vec();
    Ok(bytes)
}
