//! The browser's WebGPU through wgpu: a device with WebGPU's default limits
//! (what a page gets unless it asks for more), and reading a buffer back
//! without blocking (the browser calls back once control returns to it).

use wgpu_split::gpu::GpuSplitter;

/// A device of the browser's adapter, its queue and a splitter on it.
pub struct Gpu {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device (WebGPU's default limits, timestamp queries where the
    /// adapter has them).
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// A splitter made with `GpuSplitter::new` (on the web: the class model).
    pub splitter: GpuSplitter,
}

impl Gpu {
    /// The browser's adapter and a new device on it with `limits` and, of
    /// `wanted`, what the adapter has.
    pub async fn new(limits: wgpu::Limits, wanted: wgpu::Features) -> Result<Gpu, String> {
        let (adapter, device, queue) = device(limits, wanted).await?;
        let splitter = GpuSplitter::new(&device, &queue).map_err(|e| e.to_string())?;
        Ok(Gpu {
            adapter,
            device,
            queue,
            splitter,
        })
    }

    /// One line naming the adapter.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!(
            "{} {} ({:?}, {:?})",
            info.vendor, info.name, info.backend, info.device_type
        )
    }
}

/// The browser's adapter and a new device on it.
pub async fn device(
    limits: wgpu::Limits,
    wanted: wgpu::Features,
) -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), String> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::BROWSER_WEBGPU,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions::default())
        .await
        .map_err(|e| format!("no WebGPU adapter: {e}"))?;
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            label: Some("wgpu-split web"),
            required_features: adapter.features() & wanted,
            required_limits: limits,
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        })
        .await
        .map_err(|e| format!("no device: {e}"))?;
    Ok((adapter, device, queue))
}

/// A buffer of `bytes` (padded with zeros to a word) with `usage` and
/// `COPY_SRC | COPY_DST`.
pub fn buffer_with(device: &wgpu::Device, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
    let size = (bytes.len() as u64).next_multiple_of(4).max(4);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("wgpu-split web"),
        size,
        usage: usage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: true,
    });
    buffer
        .slice(..)
        .get_mapped_range_mut()
        .expect("mapped at creation")
        .slice(..bytes.len())
        .copy_from_slice(bytes);
    buffer.unmap();
    buffer
}

/// Every byte of `buffer`, copied into a staging buffer and mapped: awaits
/// the browser's callback, never blocks.
pub async fn read(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
) -> Result<Vec<u8>, String> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("wgpu-split web readback"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    queue.submit([encoder.finish()]);
    let (sender, mapped) = futures_intrusive::channel::shared::oneshot_channel();
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |result| {
            let _ = sender.send(result);
        });
    mapped
        .receive()
        .await
        .ok_or("the map callback was dropped")?
        .map_err(|e| format!("mapping the readback: {e}"))?;
    let bytes = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| format!("reading the readback: {e}"))?
        .to_vec();
    staging.unmap();
    Ok(bytes)
}
