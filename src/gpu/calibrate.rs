//! Calibration at run time: the device's copy rate, every kernel's rate and
//! the fixed costs, measured in about a second, as a [`CostModel`] a
//! runtime can store and plan with.

use std::time::Instant;

use super::device_class::device_class;
use super::error::DeviceError;
use super::region::BufferRegion;
use super::round_trip::RoundTrip;
use super::scope::scoped;
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::{CostModel, Kernel, KernelRates, Placement, PlanOptions, SplitPlan, Strategy};
use crate::semantics::ResolvedSplit;

/// Measurements per quantity (the median is kept), after one warm-up.
const RUNS: usize = 5;

/// Times recorded work: timestamp queries around it when the device has
/// them, else the wall time of submit + wait less that of an empty submit.
struct Timer<'a> {
    splitter: &'a GpuSplitter,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    overhead: f64,
}

impl<'a> Timer<'a> {
    fn new(splitter: &'a GpuSplitter) -> Result<Self> {
        let device = splitter.device();
        let needed =
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let queries = if device.features().contains(needed) {
            Some(scoped(device, "creating timestamp queries", || {
                let buffer = |usage| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("wgpu-split calibration timestamps"),
                        size: 16,
                        usage,
                        mapped_at_creation: false,
                    })
                };
                (
                    device.create_query_set(&wgpu::QuerySetDescriptor {
                        label: Some("wgpu-split calibration"),
                        ty: wgpu::QueryType::Timestamp,
                        count: 2,
                    }),
                    buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
                    buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
                )
            })?)
        } else {
            None
        };
        let mut timer = Timer {
            splitter,
            queries,
            overhead: 0.0,
        };
        if timer.queries.is_none() {
            timer.overhead = timer.median(&|_| Ok(()))?;
        }
        Ok(timer)
    }

    /// Median seconds of `record` over [`RUNS`] runs after a warm-up.
    fn median(&self, record: &dyn Fn(&mut wgpu::CommandEncoder) -> Result<()>) -> Result<f64> {
        let mut times = (0..=RUNS)
            .map(|_| self.once(record))
            .collect::<Result<Vec<f64>>>()?;
        times.remove(0);
        times.sort_by(f64::total_cmp);
        Ok((times[RUNS / 2] - self.overhead).max(1e-9))
    }

    fn once(&self, record: &dyn Fn(&mut wgpu::CommandEncoder) -> Result<()>) -> Result<f64> {
        let device = self.splitter.device();
        let mut encoder = device.create_command_encoder(&Default::default());
        if let Some((set, resolve, _)) = &self.queries {
            encoder.write_timestamp(set, 0);
            record(&mut encoder)?;
            encoder.write_timestamp(set, 1);
            encoder.resolve_query_set(set, 0..2, resolve, 0);
        } else {
            record(&mut encoder)?;
        }
        if let Some((_, resolve, readback)) = &self.queries {
            encoder.copy_buffer_to_buffer(resolve, 0, readback, 0, 16);
        }
        let started = Instant::now();
        self.splitter.queue().submit([encoder.finish()]);
        self.wait()?;
        let wall = started.elapsed().as_secs_f64();
        let Some((_, _, readback)) = &self.queries else {
            return Ok(wall);
        };
        readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.wait()?;
        let ticks: Vec<u64> =
            bytemuck::pod_collect_to_vec(&readback.slice(..).get_mapped_range().map_err(|e| {
                DeviceError::Gpu {
                    detail: format!("reading timestamps: {e}"),
                }
            })?);
        readback.unmap();
        let period = f64::from(self.splitter.queue().get_timestamp_period());
        Ok(ticks[1].saturating_sub(ticks[0]) as f64 * period * 1e-9)
    }

    fn wait(&self) -> Result<()> {
        self.splitter
            .device()
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(super::READBACK_TIMEOUT),
            })
            .map(|_| ())
            .map_err(|e| {
                DeviceError::Gpu {
                    detail: format!("calibrating: {e}"),
                }
                .into()
            })
    }
}

/// One calibration problem: a split planned into an arena, with its
/// buffers.
struct Probe {
    plan: SplitPlan,
    input: wgpu::Buffer,
    arena: wgpu::Buffer,
}

impl Probe {
    /// `split` planned as `options` say, into an arena, with its buffers.
    fn new(
        splitter: &GpuSplitter,
        split: &ResolvedSplit,
        element_type: ElementType,
        options: PlanOptions,
    ) -> Result<Probe> {
        let options = options.placement(Placement::Arena);
        let plan = splitter.plan_with(split, element_type, &options)?;
        let buffers = RoundTrip::new(splitter);
        Ok(Probe {
            input: buffers.create_input(&vec![0x5A; plan.input_binding_bytes() as usize])?,
            arena: buffers.create_destinations(&plan)?.remove(0),
            plan,
        })
    }

    fn time(&self, splitter: &GpuSplitter, timer: &Timer<'_>) -> Result<f64> {
        timer.median(&|encoder| {
            splitter.encode(
                encoder,
                &self.plan,
                BufferRegion::whole(&self.input),
                &[BufferRegion::whole(&self.arena)],
            )
        })
    }
}

/// Measures `splitter`'s device as a [`CostModel`] in about a second
/// (blocking; the device is polled): a 16 MiB copy (bandwidth), 4,096
/// copies of 1 KiB (the fixed cost of a command), each kernel on the split
/// its module names as its probe (16 MiB or so, the kernel forced), and a
/// one-word dispatch (its fixed cost). Timestamp queries are used when the
/// device has them, else wall time. The load factors are not measured (that
/// needs a busy machine): they are those of the device's class.
///
/// Store the result and plan with it:
/// `splitter.with_strategy(Strategy::Auto(model))`.
///
/// # Errors
///
/// [`DeviceError::Gpu`] when the device fails or is lost.
pub fn calibrate(splitter: &GpuSplitter) -> Result<CostModel> {
    let timer = Timer::new(splitter)?;
    let f32_t = ElementType::Float;
    let copy = PlanOptions::default().strategy(Strategy::Copy);
    let words = 4 << 20; // 16 MiB of f32
    let whole = ResolvedSplit::new(&[words], 0, vec![words], true)?;
    let t_copy = Probe::new(splitter, &whole, f32_t, copy)?.time(splitter, &timer)?;
    let copy_bw = 2.0 * (words * 4) as f64 / t_copy;
    let rows = ResolvedSplit::new(&[2048, 512], 1, vec![256, 256], true)?;
    let many = Probe::new(splitter, &rows, f32_t, copy)?;
    let t_many = many.time(splitter, &timer)?;
    let commands = many.plan.copy_count() as f64;
    let command = ((t_many - 2.0 * (2048 * 512 * 4) as f64 / copy_bw) / commands).max(0.0);
    let mut rates = KernelRates::ZERO;
    for kernel in Kernel::ALL {
        let p = kernel.spec().probe;
        let split = ResolvedSplit::new(p.shape, p.axis, p.lengths.to_vec(), true)?;
        let options = PlanOptions::default()
            .strategy(Strategy::Gather)
            .kernel(kernel);
        let probe = Probe::new(splitter, &split, p.element_type, options)?;
        let seconds = probe.time(splitter, &timer)?;
        rates.set(kernel, 2.0 * probe.plan.input_bytes() as f64 / seconds);
    }
    let tiny = ResolvedSplit::new(&[2, 2], 1, vec![1, 1], true)?;
    let gather = PlanOptions::default().strategy(Strategy::Gather);
    let dispatch = Probe::new(splitter, &tiny, f32_t, gather)?.time(splitter, &timer)?;
    let class = CostModel::for_class(device_class(&splitter.device().adapter_info()));
    Ok(CostModel {
        copy_bytes_per_second: copy_bw,
        copy_command_seconds: command,
        gather_bytes_per_second: rates,
        dispatch_seconds: dispatch,
        ..class
    })
}
