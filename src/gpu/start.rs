//! How a splitter starts ([`GpuSplitter::new`]): with the documented cost
//! model of its adapter's class, or on a software adapter with one a short
//! calibration measured, once per process and adapter. Calibration plans
//! and encodes with a splitter, so the choice is made here, above both.

use super::blocking::Stopwatch;
use super::calibrate::calibrate_at_start;
use super::splitter::GpuSplitter;
use crate::error::Result;
use crate::plan::{CostModel, DeviceClass};

impl GpuSplitter {
    /// A splitter for `device` (handles are cloned; wgpu devices are
    /// reference-counted). The table-driven kernels are compiled now for
    /// one destination, so a device that rejects them fails here rather
    /// than in the middle of a runtime's step; the others on first use.
    ///
    /// It plans with its adapter's class model, except on a software
    /// adapter (device type CPU): there the first splitter of the process
    /// runs a short calibration on `device` (0.31-0.41 s on lavapipe, 0.6 s
    /// when a figure read unsteadily and it measured twice, 0.8 s
    /// with Mesa's shader cache cold; about 190 MiB of host memory
    /// meanwhile; later splitters on the adapter reuse it) and plans with
    /// what it measured ([`crate::gpu::ModelOrigin::MeasuredAtStart`]).
    /// GPU adapters never calibrate here, and nothing does on the web
    /// (`wasm32`), where the calibration's waits would block: a splitter
    /// there plans with its class's model; await
    /// [`crate::gpu::Calibration::measure_async`] and plan with what it
    /// measured ([`GpuSplitter::with_strategy`]) for a measured one.
    ///
    /// # Errors
    ///
    /// [`crate::error::DeviceError::Gpu`] when the device is lost or rejects
    /// a kernel.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> {
        let splitter = GpuSplitter::with_class_model(device, queue)?;
        let software = DeviceClass::of_adapter(&device.adapter_info()) == DeviceClass::Software;
        if !software || cfg!(target_arch = "wasm32") {
            return Ok(splitter);
        }
        Ok(match software_model(&splitter) {
            Some((model, seconds)) => splitter.measured_at_start(model, seconds),
            None => splitter,
        })
    }
}

/// The model a splitter made on a software adapter (lavapipe, llvmpipe,
/// SwiftShader, WARP) plans with, and the seconds it took: [`Calibration::measure`]
/// with 3 timed runs per figure instead of 9 (the copy probes 4 times a
/// round), measured again when a figure read unsteadily
/// ([`calibrate_at_start`]), once per process and adapter (later
/// splitters reuse it). A software adapter's kernels run on
/// the host's cores, so their speed against its copies (memcpy) follows
/// the machine: lavapipe's vec4 shader copy ran at 5-10 GB/s on one
/// 2-core VM and 1.6 GB/s on another of the same kind, where the copy
/// command ran at 10-20 GB/s on both, and `CostModel::LAVAPIPE` chose
/// kernels at half the speed of the copies there (issue 41). `None` when
/// the device failed meanwhile (the class's model is used, and the next
/// splitter tries again).
fn software_model(splitter: &GpuSplitter) -> Option<(CostModel, f64)> {
    static MEASURED: std::sync::Mutex<Vec<(String, CostModel, f64)>> =
        std::sync::Mutex::new(Vec::new());
    let info = splitter.device().adapter_info();
    let key = format!(
        "{:?} {} {} {}",
        info.backend, info.name, info.driver, info.driver_info
    );
    // Held while measuring: two splitters made at once would time each
    // other's work.
    let mut measured = MEASURED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, model, seconds)) = measured.iter().find(|(k, ..)| *k == key) {
        return Some((*model, *seconds));
    }
    let started = Stopwatch::start();
    let calibration = calibrate_at_start(splitter).ok()?;
    let seconds = started.seconds()?;
    measured.push((key, calibration.model, seconds));
    Some((calibration.model, seconds))
}
