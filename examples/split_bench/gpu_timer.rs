//! Device time of recorded work: timestamp queries written around it inside
//! the encoder when the adapter has them, else submit + poll wall time.

use std::time::Instant;

struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    period_ns: f64,
}

pub struct GpuTimer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    queries: Option<Queries>,
}

const WARM_UP_RUNS: usize = 2;

impl GpuTimer {
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let needed =
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let queries = device.features().contains(needed).then(|| Queries {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp readback"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            period_ns: f64::from(queue.get_timestamp_period()),
        });
        GpuTimer {
            device: device.clone(),
            queue: queue.clone(),
            queries,
        }
    }

    pub fn kind(&self) -> &'static str {
        if self.queries.is_some() {
            "timestamp queries"
        } else {
            "submit + poll wall time"
        }
    }

    /// Runs `record` a few times untimed (pipeline JIT, caches).
    pub fn warm_up(&self, record: &dyn Fn(&mut wgpu::CommandEncoder)) {
        for _ in 0..WARM_UP_RUNS {
            self.once(record);
        }
    }

    /// Keeps the device busy with `record`, 32 runs a submission, for
    /// `seconds` of wall time: a GPU idle while the host prepared the case
    /// (a host split of millions of pieces takes seconds) runs at its idle
    /// clocks, and runs of microseconds do not raise them. On an H200 the
    /// same case timed 1,289 µs in a fresh process and 376 µs in the next
    /// round (its shader copy 163 and 67 µs).
    pub fn hold_clocks(&self, record: &dyn Fn(&mut wgpu::CommandEncoder), seconds: f64) {
        let started = Instant::now();
        while started.elapsed().as_secs_f64() < seconds {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            for _ in 0..32 {
                record(&mut encoder);
            }
            self.queue.submit([encoder.finish()]);
            let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        }
    }

    /// Seconds of one run of `record`: on the device, and on the host
    /// from the encoder's creation to `submit` returning (recording,
    /// `finish` and `submit`: wgpu validates and encodes the commands
    /// then, which is the host time a runtime waits for).
    pub fn once(&self, record: &dyn Fn(&mut wgpu::CommandEncoder)) -> (f64, f64) {
        let host = Instant::now();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        if let Some(q) = &self.queries {
            encoder.write_timestamp(&q.set, 0);
            record(&mut encoder);
            encoder.write_timestamp(&q.set, 1);
            encoder.resolve_query_set(&q.set, 0..2, &q.resolve, 0);
            encoder.copy_buffer_to_buffer(&q.resolve, 0, &q.readback, 0, 16);
            self.queue.submit([encoder.finish()]);
            let host = host.elapsed().as_secs_f64();
            q.readback
                .slice(..)
                .map_async(wgpu::MapMode::Read, |r| r.expect("map timestamps"));
            self.device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("poll");
            let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(
                &q.readback.slice(..).get_mapped_range().expect("mapped"),
            );
            q.readback.unmap();
            let device = ticks[1].saturating_sub(ticks[0]) as f64 * q.period_ns * 1e-9;
            (device, host)
        } else {
            record(&mut encoder);
            let start = Instant::now();
            self.queue.submit([encoder.finish()]);
            let host = host.elapsed().as_secs_f64();
            self.device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("poll");
            (start.elapsed().as_secs_f64(), host)
        }
    }
}
