//! Turning wgpu's asynchronous error reporting into typed errors where wgpu
//! allows it: every wgpu call of the crate that reports to the device's
//! error sink (creating resources, recording, `finish`, `submit`,
//! `map_async`, `unmap`) runs inside validation, out-of-memory and internal
//! error scopes, so that a device destroyed or lost on another thread
//! midway gives a typed [`DeviceError`] and never reaches the
//! uncaptured-error handler (whose default panics). Calls that return
//! their errors (`get_mapped_range`, `poll`) map them. Nothing here blocks
//! but the crate's own polls and its reads of mapped memory, which exclude
//! each other ([`poll`], [`read_mapped`]).

use std::future::Future;
use std::pin::pin;
use std::sync::RwLock;
use std::task::{Context, Poll, Waker};

use super::error::DeviceError;

/// The pushed scopes of one step; [`Scopes::pop`] pops them (the pop takes
/// effect at once, wgpu's rule) and returns the future of their errors.
/// (A lost device itself is no error of a scope: wgpu reports it through
/// the device-lost callback, and the calls that follow fail validation.)
struct Scopes {
    validation: wgpu::ErrorScopeGuard,
    memory: wgpu::ErrorScopeGuard,
    internal: wgpu::ErrorScopeGuard,
}

impl Scopes {
    fn push(device: &wgpu::Device) -> Self {
        Scopes {
            validation: device.push_error_scope(wgpu::ErrorFilter::Validation),
            memory: device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
            internal: device.push_error_scope(wgpu::ErrorFilter::Internal),
        }
    }

    fn pop(self) -> impl Future<Output = Option<wgpu::Error>> {
        // Scopes are a stack: the last pushed pops first.
        let internal = self.internal.pop();
        let memory = self.memory.pop();
        let validation = self.validation.pop();
        async move { internal.await.or(memory.await).or(validation.await) }
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
    let scope = ErrorScope::open(device);
    let value = f();
    scope.close(what, value)
}

/// [`scoped`] written in line: [`ErrorScope::open`], the step's wgpu calls,
/// then [`ErrorScope::close`] with the step's value. For a step whose
/// calls belong with the code around them (an encode's, which reads the
/// caller's regions) rather than in a closure handed here.
#[must_use = "close the scope to learn the step's errors"]
pub(crate) struct ErrorScope(Scopes);

impl ErrorScope {
    /// Pushes the scopes: every wgpu call until [`ErrorScope::close`]
    /// reports to them.
    pub(crate) fn open(device: &wgpu::Device) -> Self {
        ErrorScope(Scopes::push(device))
    }

    /// Pops the scopes: `value`, or the typed error of the step `what`
    /// (never blocks, as [`scoped`]).
    pub(crate) fn close<T>(self, what: &str, value: T) -> Result<T, DeviceError> {
        let mut popped = pin!(self.0.pop());
        match popped
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(error) => to_error(what, error, value),
            Poll::Pending => Ok(value),
        }
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
    unmap(device, &buffer, label)?;
    Ok(buffer)
}

/// `buffer.unmap()` inside error scopes: a buffer destroyed meanwhile (with
/// its device) is a typed error.
pub(crate) fn unmap(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    what: &str,
) -> Result<(), DeviceError> {
    scoped(device, what, || buffer.unmap())
}

/// Submits `commands` inside error scopes: a command buffer that failed
/// (its encoder used a destroyed buffer) or a lost device is a typed error.
pub(crate) fn submit(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    what: &str,
    commands: impl IntoIterator<Item = wgpu::CommandBuffer>,
) -> Result<wgpu::SubmissionIndex, DeviceError> {
    scoped(device, what, || queue.submit(commands))
}

/// Asks for all of `buffer` to be mapped for reading, inside error scopes;
/// `done` gets wgpu's result (wgpu calls it with an error too when the
/// request fails).
pub(crate) fn map_read(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    what: &str,
    done: impl FnOnce(Result<(), wgpu::BufferAsyncError>) + wgpu::WasmNotSend + 'static,
) -> Result<(), DeviceError> {
    scoped(device, what, || {
        buffer.slice(..).map_async(wgpu::MapMode::Read, done)
    })
}

/// Held by every poll the crate makes (shared) and by every read of mapped
/// memory it makes (alone). wgpu 30 frees a buffer's memory when its device
/// has been destroyed and a poll then releases its resources, even while a
/// view of the mapping is alive (gfx-rs/wgpu#10256; on GL the read then
/// dies of SIGSEGV: `docs/lab/mapped_view_destroy.rs`), so a device
/// destroyed on another thread must never be polled by the crate (its
/// [`crate::gpu::Poller`], another thread's blocking read) while one of its
/// reads copies out. Polls made outside the crate cannot take part: that is
/// wgpu's race, said in the README's limits.
static MAPPED_READS: RwLock<()> = RwLock::new(());

/// `device.poll(poll_type)`, never while the crate reads mapped memory.
pub(crate) fn poll(
    device: &wgpu::Device,
    poll_type: wgpu::PollType,
) -> Result<wgpu::PollStatus, wgpu::PollError> {
    let _polling = MAPPED_READS.read().unwrap_or_else(|e| e.into_inner());
    device.poll(poll_type)
}

/// Copies all of `buffer`'s mapped range out and unmaps it (inside error
/// scopes), while no poll of the crate can free the mapping; `what` names
/// the read in errors. Blocks while a poll of the crate runs.
pub(crate) fn read_mapped(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    what: &str,
) -> Result<Vec<u8>, DeviceError> {
    let _reading = MAPPED_READS.write().unwrap_or_else(|e| e.into_inner());
    copy_out(device, buffer, what)
}

/// [`read_mapped`] for async callers: never blocks; while a poll of the
/// crate runs (another thread's blocking wait, a `Poller`'s poll) it
/// yields to the executor and tries again. The lock is taken and released
/// inside [`try_read_mapped`], never held across an await, so the future
/// stays `Send` (a runtime spawns it on a multi-threaded executor).
pub(crate) async fn read_mapped_async(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    what: &str,
) -> Result<Vec<u8>, DeviceError> {
    loop {
        if let Some(read) = try_read_mapped(device, buffer, what) {
            return read;
        }
        YieldNow(false).await;
    }
}

/// [`read_mapped`] unless a poll of the crate holds the lock (`None`).
fn try_read_mapped(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    what: &str,
) -> Option<Result<Vec<u8>, DeviceError>> {
    let _reading = match MAPPED_READS.try_write() {
        Ok(reading) => reading,
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    Some(copy_out(device, buffer, what))
}

/// The copy itself, under the lock.
fn copy_out(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    what: &str,
) -> Result<Vec<u8>, DeviceError> {
    let bytes = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| DeviceError::Gpu {
            detail: format!("{what}: {e}"),
        })?
        .to_vec();
    unmap(device, buffer, what)?;
    Ok(bytes)
}

/// Pending once (waking its task at once), then ready: lets the executor
/// run its other tasks.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
