//! A page of results on its way back to the host: the round trip records
//! its commands and a copy of the page into a staging buffer, submits, and
//! asks for the staging buffer to be mapped; the bytes come back when wgpu
//! calls back (awaited, after the blocking forms have polled for it).

use std::time::Duration;

use super::blocking::Wait;
use super::error::DeviceError;
use super::scope::{map_read, poll, read_mapped_async, scoped_async};
use crate::error::{Error, Result};

/// [`RoundTrip::READBACK_TIMEOUT`](super::RoundTrip::READBACK_TIMEOUT).
pub(crate) const READBACK_TIMEOUT: Duration = Duration::from_secs(120);

type MapResult = std::result::Result<(), wgpu::BufferAsyncError>;

/// Submitted work whose page is on its way back.
pub(super) struct InFlight {
    device: wgpu::Device,
    staging: wgpu::Buffer,
    submission: wgpu::SubmissionIndex,
    mapped: futures_intrusive::channel::shared::OneshotReceiver<MapResult>,
}

impl InFlight {
    /// Records `record`, then a copy of `page` into a staging buffer,
    /// submits (all inside error scopes, `what` naming the work) and asks
    /// for the staging buffer to be mapped.
    pub(super) async fn submit(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: &wgpu::Buffer,
        what: &str,
        record: impl FnOnce(&mut wgpu::CommandEncoder) -> Result<()>,
    ) -> Result<InFlight> {
        let (staging, submission) = scoped_async(device, what, || {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu-split readback"),
                size: page.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("wgpu-split convenience"),
            });
            record(&mut encoder)?;
            encoder.copy_buffer_to_buffer(page, 0, &staging, 0, page.size());
            Ok::<_, Error>((staging, queue.submit([encoder.finish()])))
        })
        .await??;
        let (sender, mapped) = futures_intrusive::channel::shared::oneshot_channel();
        map_read(
            device,
            &staging,
            "mapping the readback buffer",
            move |result| {
                // The receiver only goes away if the future was dropped.
                let _ = sender.send(result);
            },
        )?;
        Ok(InFlight {
            device: device.clone(),
            staging,
            submission,
            mapped,
        })
    }

    /// Awaits the map callback and copies the page out; with
    /// [`Wait::Poll`] (the blocking forms) it first polls the device until
    /// the work is done, at most [`crate::gpu::RoundTrip::READBACK_TIMEOUT`]
    /// (`what` names the work in that error).
    pub(super) async fn read(self, what: &str, wait: Wait) -> Result<Vec<u8>> {
        if wait == Wait::Poll {
            poll(
                &self.device,
                wgpu::PollType::Wait {
                    submission_index: Some(self.submission.clone()),
                    timeout: Some(READBACK_TIMEOUT),
                },
            )
            .map_err(|e| DeviceError::Gpu {
                detail: format!("waiting for the {what}: {e}"),
            })?;
        }
        let mapped = self
            .mapped
            .receive()
            .await
            .ok_or_else(|| DeviceError::Gpu {
                detail: "the map callback was dropped".to_string(),
            })?;
        mapped.map_err(|e| DeviceError::Gpu {
            detail: format!("mapping the readback buffer: {e}"),
        })?;
        Ok(read_mapped_async(&self.device, &self.staging, "reading the readback buffer").await?)
    }
}
