//! Turning wgpu's asynchronous error reporting into typed errors where wgpu
//! allows it: resource creation runs inside validation and out-of-memory
//! error scopes. Nothing here blocks.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use super::error::DeviceError;

/// The pushed scopes of one step; [`Scopes::pop`] pops them (the pop takes
/// effect at once, wgpu's rule) and returns the future of their errors.
struct Scopes {
    validation: wgpu::ErrorScopeGuard,
    memory: wgpu::ErrorScopeGuard,
}

impl Scopes {
    fn push(device: &wgpu::Device) -> Self {
        Scopes {
            validation: device.push_error_scope(wgpu::ErrorFilter::Validation),
            memory: device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
        }
    }

    fn pop(self) -> impl Future<Output = Option<wgpu::Error>> {
        // Scopes are a stack: the memory scope, pushed last, pops first.
        let memory = self.memory.pop();
        let validation = self.validation.pop();
        async move { memory.await.or(validation.await) }
    }
}

fn to_error<T>(what: &str, error: Option<wgpu::Error>, value: T) -> Result<T, DeviceError> {
    match error {
        Some(e) => Err(DeviceError::Gpu {
            detail: format!("{what}: {e}"),
        }),
        None => Ok(value),
    }
}

/// Runs `f` inside validation and out-of-memory error scopes, so that wgpu
/// errors (a lost or destroyed device, a buffer of another device or a
/// destroyed buffer) become a typed [`DeviceError::Gpu`] instead of reaching
/// the uncaptured-error handler.
///
/// Never blocks: on native backends the scopes resolve at once and the
/// error is returned; where they resolve later (the web), the error goes to
/// the device's uncaptured-error handler as wgpu reports it, and this
/// returns `Ok`. Async callers use [`scoped_async`], which waits for them.
pub(crate) fn scoped<T>(
    device: &wgpu::Device,
    what: &str,
    f: impl FnOnce() -> T,
) -> Result<T, DeviceError> {
    let scopes = Scopes::push(device);
    let value = f();
    let mut popped = pin!(scopes.pop());
    match popped
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(error) => to_error(what, error, value),
        Poll::Pending => Ok(value),
    }
}

/// [`scoped`] for async callers: awaits the scopes' result (without
/// blocking) on every backend. `f` runs synchronously, so the scope guards
/// never live across an await.
pub(crate) async fn scoped_async<T>(
    device: &wgpu::Device,
    what: &str,
    f: impl FnOnce() -> T,
) -> Result<T, DeviceError> {
    let popped = {
        let scopes = Scopes::push(device);
        let value = f();
        (value, scopes.pop())
    };
    let (value, error) = popped;
    to_error(what, error.await, value)
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
) -> Result<wgpu::Buffer, DeviceError> {
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
            .map_err(|e| DeviceError::Gpu {
                detail: format!("{label}: {e}"),
            })?;
        view.slice(..contents.len()).copy_from_slice(contents);
    }
    buffer.unmap();
    Ok(buffer)
}
