//! Turning wgpu's asynchronous error reporting into typed errors where wgpu
//! allows it: resource creation runs inside validation and out-of-memory
//! error scopes.

use crate::error::{Error, Result};

/// Runs `f` inside validation and out-of-memory error scopes, so that wgpu
/// errors (a lost or destroyed device, a buffer from another device) become
/// a typed [`Error::Gpu`] instead of reaching the uncaptured-error handler.
/// On native backends the scopes resolve at once.
pub(crate) fn scoped<T>(device: &wgpu::Device, what: &str, f: impl FnOnce() -> T) -> Result<T> {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let value = f();
    let memory = pollster::block_on(memory.pop());
    let validation = pollster::block_on(validation.pop());
    match memory.or(validation) {
        Some(e) => Err(Error::Gpu {
            detail: format!("{what}: {e}"),
        }),
        None => Ok(value),
    }
}

/// A buffer created mapped and filled with `contents` (padded with zeros to
/// `size`); unlike `DeviceExt::create_buffer_init` it reports a lost device
/// as an error instead of panicking.
pub(crate) fn buffer_with_contents(
    device: &wgpu::Device,
    label: &str,
    contents: &[u8],
    size: u64,
    usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer> {
    let buffer = scoped(device, label, || {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: true,
        })
    })?;
    {
        let mut view = buffer
            .slice(..)
            .get_mapped_range_mut()
            .map_err(|e| Error::Gpu {
                detail: format!("{label}: {e}"),
            })?;
        view.slice(..contents.len()).copy_from_slice(contents);
    }
    buffer.unmap();
    Ok(buffer)
}
