//! Lab of 2026-11-28 (`docs/journal/2026-11-28-gl-device-loss.md`): wgpu 30
//! frees a mapped buffer's memory when the buffer or its device is
//! destroyed, even while a `BufferView` of it is alive, so safe code reads
//! freed memory. Plain wgpu, one thread, no wgpu-split:
//!
//! 1. map a 1 MiB `MAP_READ` buffer and take its `BufferView`;
//! 2. `device.destroy()` and `device.poll(..)` (wgpu-core's `maintain`
//!    sees the invalid device and destroys every buffer, this one included);
//! 3. read the view.
//!
//! ```text
//! cargo run --features lab --example lab_mapped_view_destroy [-- buffer]
//! WGPU_BACKEND=gl cargo run --features lab --example lab_mapped_view_destroy
//! ```
//!
//! On llvmpipe through GL (Mesa 22.3.6) step 3 dies of SIGSEGV: the GL
//! backend's `destroy_buffer` deletes the GL buffer and Mesa unmaps its
//! storage. On lavapipe (Vulkan) the freed memory stays addressable and the
//! read returns whatever is there. `buffer` destroys the buffer instead of
//! the device (`Buffer::destroy`, same outcome). Upstream: gfx-rs/wgpu#10256
//! ("Can `get_mapped_range` be used safely?", open) and the pull request
//! that makes destroy wait for or refuse live views (#10307, open).

fn main() {
    let destroy_buffer = std::env::args().nth(1).as_deref() == Some("buffer");
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("an adapter (apt-get install -y mesa-vulkan-drivers)");
    println!("adapter: {:?}", adapter.get_info());
    let (device, _queue) =
        pollster::block_on(adapter.request_device(&Default::default())).expect("a device");
    const SIZE: u64 = 1 << 20;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("mapped"),
        size: SIZE,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    buffer.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapped"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("map completes");
    let view = buffer.slice(..).get_mapped_range().expect("a view");
    println!("mapped view: {} bytes, first {}", view.len(), view[0]);
    if destroy_buffer {
        buffer.destroy();
        println!("buffer destroyed while its view is alive");
    } else {
        device.destroy();
        let _ = device.poll(wgpu::PollType::Poll);
        println!("device destroyed and polled while the view is alive");
    }
    // Safe code: a read of every byte of the view.
    let sum: u64 = view.iter().map(|&b| u64::from(b)).sum();
    println!("read the view after the destruction: sum {sum} (no crash on this backend)");
}
