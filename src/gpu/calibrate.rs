//! Calibration at run time: the device's copy and gather rates and fixed
//! costs, measured in about a second, as a [`CostModel`] a runtime can store
//! and plan with.

use std::time::Instant;

use super::device_class::device_class;
use super::region::BufferRegion;
use super::scope::scoped;
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::plan::{CostModel, Kernel, Outputs, PlanOptions, SplitPlan, Strategy};
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
        let device = &splitter.device;
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
        let device = &self.splitter.device;
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
        self.splitter.queue.submit([encoder.finish()]);
        self.wait()?;
        let wall = started.elapsed().as_secs_f64();
        let Some((_, _, readback)) = &self.queries else {
            return Ok(wall);
        };
        readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.wait()?;
        let ticks: Vec<u64> =
            bytemuck::pod_collect_to_vec(&readback.slice(..).get_mapped_range().map_err(|e| {
                Error::Gpu {
                    detail: format!("reading timestamps: {e}"),
                }
            })?);
        readback.unmap();
        let period = f64::from(self.splitter.queue.get_timestamp_period());
        Ok(ticks[1].saturating_sub(ticks[0]) as f64 * period * 1e-9)
    }

    fn wait(&self) -> Result<()> {
        self.splitter
            .device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(super::READBACK_TIMEOUT),
            })
            .map(|_| ())
            .map_err(|e| Error::Gpu {
                detail: format!("calibrating: {e}"),
            })
    }
}

/// One calibration problem: a split planned with a strategy into an arena.
struct Probe {
    plan: SplitPlan,
    input: wgpu::Buffer,
    arena: wgpu::Buffer,
}

impl GpuSplitter {
    fn calibration_probe(
        &self,
        shape: &[usize],
        axis: usize,
        lengths: Vec<usize>,
        element_type: ElementType,
        strategy: Strategy,
    ) -> Result<Probe> {
        let split = ResolvedSplit::new(shape, axis, lengths, true)?;
        let options = PlanOptions::default()
            .strategy(strategy)
            .outputs(Outputs::Arena);
        let plan = self.plan_with(&split, element_type, &self.limits, &options)?;
        Ok(Probe {
            input: self.create_input(&vec![0x5A; plan.input_binding_bytes() as usize])?,
            arena: self.create_arena(&plan)?,
            plan,
        })
    }

    fn time_probe(&self, timer: &Timer<'_>, probe: &Probe) -> Result<f64> {
        timer.median(&|encoder| {
            self.encode_arena(
                encoder,
                &probe.plan,
                BufferRegion::whole(&probe.input),
                BufferRegion::whole(&probe.arena),
            )
        })
    }

    /// Measures this device's [`CostModel`] in about a second (blocking;
    /// the device is polled): a 16 MiB copy (bandwidth), 4,096 copies of
    /// 1 KiB (the fixed cost of a command), 16 MiB gathers with vec4-aligned,
    /// word-aligned and mid-word runs, through the funnel, in row blocks and
    /// in row streams, and a one-word dispatch (its fixed
    /// cost). Timestamp queries are used when the device has them, else wall
    /// time. The load factors are not measured (that needs a busy machine):
    /// they are those of the device's class.
    ///
    /// Store the result and plan with it:
    /// `splitter.with_strategy(Strategy::Auto(model))`.
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device fails or is lost.
    pub fn calibrate(&self) -> Result<CostModel> {
        let timer = Timer::new(self)?;
        let words = 4 << 20; // 16 MiB of f32
        let (copy, f32_t, u8_t) = (Strategy::Copy, ElementType::Float, ElementType::Uint8);
        let one_copy = self.calibration_probe(&[words], 0, vec![words], f32_t, copy)?;
        let t_copy = self.time_probe(&timer, &one_copy)?;
        let copy_bw = 2.0 * (words * 4) as f64 / t_copy;
        let many = self.calibration_probe(&[2048, 512], 1, vec![256, 256], f32_t, copy)?;
        let t_many = self.time_probe(&timer, &many)?;
        let commands = many.plan.copy_count() as f64;
        let command = ((t_many - 2.0 * (2048 * 512 * 4) as f64 / copy_bw) / commands).max(0.0);
        let bandwidth = |shape: &[usize], lengths: Vec<usize>, t, kernel| -> Result<f64> {
            let strategy = Strategy::Auto(favouring(kernel));
            let probe = self.calibration_probe(shape, 1, lengths, t, strategy)?;
            if probe.plan.kernel() != kernel {
                return Err(Error::Internal {
                    detail: format!("calibration probe took {:?}", probe.plan.kernel()),
                });
            }
            Ok(2.0 * probe.plan.input_bytes() as f64 / self.time_probe(&timer, &probe)?)
        };
        let vec4 = bandwidth(&[1024, 4096], vec![1024; 4], f32_t, Kernel::Vec4)?;
        // 1023 rows: outputs of partial vec4s, which the funnel does not take.
        let word = bandwidth(
            &[1023, 4096],
            vec![1023, 1025, 1024, 1024],
            f32_t,
            Kernel::Words,
        )?;
        let bits = bandwidth(&[1023, 4097 * 4], vec![8193, 8195], u8_t, Kernel::Words)?;
        let funnel = bandwidth(&[1024, 4097 * 4], vec![8193, 8195], u8_t, Kernel::Funnel)?;
        let streams = bandwidth(&[1024, 4097 * 4], vec![8193, 8195], u8_t, Kernel::Streams)?;
        let f16_t = ElementType::Float16;
        let rows = bandwidth(&[1 << 20, 6], vec![1, 2, 3], f16_t, Kernel::Rows)?;
        let tiny = self.calibration_probe(&[2, 2], 1, vec![1, 1], f32_t, Strategy::Gather)?;
        let dispatch = self.time_probe(&timer, &tiny)?;
        let class = CostModel::for_class(device_class(&self.device.adapter_info()));
        Ok(CostModel {
            copy_bytes_per_second: copy_bw,
            copy_command_seconds: command,
            gather_vec4_bytes_per_second: vec4,
            gather_word_bytes_per_second: word,
            gather_bits_bytes_per_second: bits,
            gather_funnel_bytes_per_second: funnel,
            gather_rows_bytes_per_second: rows,
            gather_streams_bytes_per_second: streams,
            dispatch_seconds: dispatch,
            ..class
        })
    }
}

/// A model under which everything is gathered and `kernel` comes first
/// wherever it fits (the other table-chosen kernels are never taken; vec4
/// still goes first where runs align, words last).
fn favouring(kernel: Kernel) -> CostModel {
    let mut model = CostModel {
        copy_bytes_per_second: 1.0,
        copy_command_seconds: 1.0,
        gather_funnel_bytes_per_second: 0.0,
        gather_rows_bytes_per_second: 0.0,
        gather_streams_bytes_per_second: 0.0,
        ..CostModel::CONSERVATIVE
    };
    let fastest = 1e15;
    match kernel {
        Kernel::Funnel => model.gather_funnel_bytes_per_second = fastest,
        Kernel::Rows => model.gather_rows_bytes_per_second = fastest,
        Kernel::Streams => model.gather_streams_bytes_per_second = fastest,
        _ => {}
    }
    model
}
