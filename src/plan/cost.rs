//! The planner's cost model: what a copy command and the gather shader cost
//! on a device, chosen per adapter class, measured at run time by
//! [`crate::gpu::GpuSplitter::calibrate`], and stored as plain data.

use super::geometry::OutputGeometry;

/// What kind of adapter a cost model is for, from what wgpu reports
/// (`crate::gpu::device_class` maps an `AdapterInfo` to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceClass {
    /// A software rasteriser on the CPU: lavapipe, llvmpipe, SwiftShader,
    /// WARP. Copies are memcpy at host speed; shaders run on a few cores.
    Software,
    /// A discrete GPU: fast memory, copies as separate transfers.
    DiscreteGpu,
    /// An integrated GPU sharing system memory.
    IntegratedGpu,
    /// Anything else (virtual GPUs, unknown types).
    Unknown,
}

/// The planner's cost model.
///
/// Copies cost `count * copy_command_seconds + bytes / copy_bytes_per_second`;
/// a gather costs `bytes / gather_*_bytes_per_second` (by how its runs are
/// aligned) plus `dispatch_seconds`. Bandwidths count bytes read + written.
/// The load factors say how much slower each side can run while the device
/// is busy with other work; [`CostModel::robust_seconds`] uses them so that
/// a busy machine does not turn the choice into a 2x slower plan.
///
/// Plain data: it can be stored and loaded (`serde`, with the default
/// feature `serde`), and [`crate::gpu::GpuSplitter::calibrate`] measures one
/// for the device at hand.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{CostModel, DeviceClass};
///
/// // On a GPU the crate has not measured, copies must be long to be chosen.
/// let unknown = CostModel::for_class(DeviceClass::Unknown);
/// assert!(unknown.copy_command_seconds > 10.0 * CostModel::LAVAPIPE.copy_command_seconds);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CostModel {
    /// Copy bandwidth, bytes read + written per second.
    pub copy_bytes_per_second: f64,
    /// Fixed cost of one copy command, seconds.
    pub copy_command_seconds: f64,
    /// Gather bandwidth with vec4-aligned runs.
    pub gather_vec4_bytes_per_second: f64,
    /// Gather bandwidth with word-aligned runs.
    pub gather_word_bytes_per_second: f64,
    /// Gather bandwidth with runs that start or end mid-word.
    pub gather_bits_bytes_per_second: f64,
    /// Gather bandwidth of the funnel kernel: runs of at least 128 bits at
    /// any bit offset, in outputs of whole vec4s.
    pub gather_funnel_bytes_per_second: f64,
    /// Gather bandwidth of the row-block kernel: short runs, whole blocks
    /// of rows per invocation.
    pub gather_rows_bytes_per_second: f64,
    /// Gather bandwidth of the row-stream kernel: long runs at any bit
    /// offset, each invocation inside one row. A model stored before this
    /// field existed loads with 0, which never chooses the kernel.
    #[cfg_attr(feature = "serde", serde(default))]
    pub gather_streams_bytes_per_second: f64,
    /// Fixed cost of one dispatch, seconds.
    pub dispatch_seconds: f64,
    /// How many times slower copies can run on a busy device (at least 1).
    pub copy_load_factor: f64,
    /// How many times slower the gather can run on a busy device (at least 1).
    pub gather_load_factor: f64,
}

impl CostModel {
    /// Lavapipe (Mesa 22.3.6, LLVM 15) on a 2-core VM: medians of three
    /// release-build runs of [`crate::gpu::GpuSplitter::calibrate`]
    /// (`split_bench --calibrate`, 2026-11-22; see `docs/DEVICE.md`). The
    /// load factors were measured with both cores busy: the gather ran up
    /// to 3x slower, copies (memcpy) hardly slowed.
    pub const LAVAPIPE: CostModel = CostModel {
        copy_bytes_per_second: 18.4e9,
        copy_command_seconds: 0.34e-6,
        gather_vec4_bytes_per_second: 5.5e9,
        gather_word_bytes_per_second: 2.2e9,
        gather_bits_bytes_per_second: 2.1e9,
        gather_funnel_bytes_per_second: 5.7e9,
        gather_rows_bytes_per_second: 8.1e9,
        gather_streams_bytes_per_second: 6.3e9,
        dispatch_seconds: 61e-6,
        copy_load_factor: 1.2,
        gather_load_factor: 2.5,
    };

    /// A discrete GPU. Not measured here (no GPU on the machines this crate
    /// is built on): conservative round figures for current desktop parts,
    /// stated so that copies win only when they are few and long. Each copy
    /// is a separate transfer with its own latency (10 µs assumed); one
    /// gather dispatch runs near memory bandwidth. Calibrate on the device
    /// for real figures.
    pub const DISCRETE_GPU: CostModel = CostModel {
        copy_bytes_per_second: 400e9,
        copy_command_seconds: 10e-6,
        gather_vec4_bytes_per_second: 300e9,
        gather_word_bytes_per_second: 200e9,
        gather_bits_bytes_per_second: 150e9,
        gather_funnel_bytes_per_second: 250e9,
        gather_rows_bytes_per_second: 250e9,
        gather_streams_bytes_per_second: 250e9,
        dispatch_seconds: 10e-6,
        copy_load_factor: 1.5,
        gather_load_factor: 1.5,
    };

    /// An integrated GPU (shared system memory). Not measured here; round
    /// figures as for [`CostModel::DISCRETE_GPU`].
    pub const INTEGRATED_GPU: CostModel = CostModel {
        copy_bytes_per_second: 60e9,
        copy_command_seconds: 10e-6,
        gather_vec4_bytes_per_second: 40e9,
        gather_word_bytes_per_second: 30e9,
        gather_bits_bytes_per_second: 20e9,
        gather_funnel_bytes_per_second: 35e9,
        gather_rows_bytes_per_second: 35e9,
        gather_streams_bytes_per_second: 35e9,
        dispatch_seconds: 15e-6,
        copy_load_factor: 1.5,
        gather_load_factor: 1.5,
    };

    /// An adapter the crate knows nothing of: never thousands of small
    /// copies where one dispatch does the job (a copy command is assumed to
    /// cost 20 µs, the gather a third of the copy bandwidth).
    pub const CONSERVATIVE: CostModel = CostModel {
        copy_bytes_per_second: 50e9,
        copy_command_seconds: 20e-6,
        gather_vec4_bytes_per_second: 20e9,
        gather_word_bytes_per_second: 15e9,
        gather_bits_bytes_per_second: 10e9,
        gather_funnel_bytes_per_second: 15e9,
        gather_rows_bytes_per_second: 16e9,
        gather_streams_bytes_per_second: 15e9,
        dispatch_seconds: 20e-6,
        copy_load_factor: 1.5,
        gather_load_factor: 1.5,
    };

    /// The documented model of an adapter class (software rasterisers get
    /// [`CostModel::LAVAPIPE`], the one software rasteriser measured).
    pub fn for_class(class: DeviceClass) -> CostModel {
        match class {
            DeviceClass::Software => Self::LAVAPIPE,
            DeviceClass::DiscreteGpu => Self::DISCRETE_GPU,
            DeviceClass::IntegratedGpu => Self::INTEGRATED_GPU,
            DeviceClass::Unknown => Self::CONSERVATIVE,
        }
    }

    /// The seconds an option is charged: its expected cost scaled by the
    /// square root of its load factor, halfway (geometrically) between an
    /// idle and a busy device. When two options are close, the one whose
    /// busy case is better wins; a clearly faster option still wins.
    pub fn robust_seconds(expected: f64, load_factor: f64) -> f64 {
        expected * load_factor.max(1.0).sqrt()
    }

    /// Modeled seconds to copy `count` runs of `size_bytes` bytes.
    pub(crate) fn copy_seconds(&self, count: u64, size_bytes: u64) -> f64 {
        count as f64 * self.copy_command_seconds
            + 2.0 * (count * size_bytes) as f64 / self.copy_bytes_per_second
    }

    /// Modeled seconds to gather one output with this geometry, at the
    /// bandwidth of the kernel that would move it alone.
    pub(crate) fn gather_seconds(&self, g: &OutputGeometry) -> f64 {
        let bandwidth = if g.is_aligned_to(128, 2) {
            self.gather_vec4_bytes_per_second
        } else if g.run_bits >= 128 && g.total_bits.is_multiple_of(128) {
            self.gather_funnel_bytes_per_second
                .max(self.gather_streams_bytes_per_second)
        } else if g.is_aligned_to(32, 2) {
            self.gather_word_bytes_per_second
        } else {
            self.gather_bits_bytes_per_second
        };
        2.0 * g.total_bits.div_ceil(8) as f64 / bandwidth
    }

    /// [`CostModel::copy_seconds`] weighed for load.
    pub(crate) fn copy_robust_seconds(&self, count: u64, size_bytes: u64) -> f64 {
        Self::robust_seconds(self.copy_seconds(count, size_bytes), self.copy_load_factor)
    }

    /// [`CostModel::gather_seconds`] weighed for load.
    pub(crate) fn gather_robust_seconds(&self, g: &OutputGeometry) -> f64 {
        Self::robust_seconds(self.gather_seconds(g), self.gather_load_factor)
    }
}

impl Default for CostModel {
    /// [`CostModel::CONSERVATIVE`]: the splitter picks the model of its
    /// device's class; a model made without a device assumes nothing.
    fn default() -> Self {
        Self::CONSERVATIVE
    }
}
