//! The planner's cost model: what a copy command and each kernel cost on a
//! device, chosen per adapter class, measured at run time by
//! [`crate::gpu::Calibration::measure`], and stored as plain data.

use crate::kernels::lanes::LaneOrder;
use crate::kernels::{
    DISCRETE_GPU_BYTES_PER_SECOND, INTEGRATED_GPU_BYTES_PER_SECOND, Kernel, Order,
};
use crate::plan::geometry::OutputGeometry;

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

/// Each kernel's bandwidth in bytes read + written per second, by kernel.
/// Stored by kernel name (`{"words": 2.2e9, "vec4": 5.5e9, ...}`); a kernel
/// missing from a stored model has 0, which never chooses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelRates([f64; Kernel::ALL.len()]);

impl KernelRates {
    /// The documented rates of every kernel on a class of adapter.
    pub const fn of_class(class: DeviceClass) -> KernelRates {
        let mut rates = [0.0; Kernel::ALL.len()];
        let mut i = 0;
        while i < rates.len() {
            let r = Kernel::ALL[i].spec().rates;
            rates[i] = match class {
                DeviceClass::Software => r.software,
                DeviceClass::DiscreteGpu => r.discrete,
                DeviceClass::IntegratedGpu => r.integrated,
                DeviceClass::Unknown => r.unknown,
            };
            i += 1;
        }
        KernelRates(rates)
    }

    /// Every rate 0.
    pub const ZERO: KernelRates = KernelRates([0.0; Kernel::ALL.len()]);

    /// `kernel`'s bandwidth.
    pub fn get(&self, kernel: Kernel) -> f64 {
        self.0[kernel.index()]
    }

    /// Sets `kernel`'s bandwidth.
    pub fn set(&mut self, kernel: Kernel, bytes_per_second: f64) {
        self.0[kernel.index()] = bytes_per_second;
    }

    /// Every kernel with its bandwidth.
    pub fn iter(&self) -> impl Iterator<Item = (Kernel, f64)> + '_ {
        Kernel::ALL.into_iter().zip(self.0)
    }
}

/// The planner's cost model.
///
/// Copies cost `count * copy_command_seconds + bytes / copy_bytes_per_second`;
/// a gather costs `bytes / rate` (the rate of the kernel that would move the
/// output) plus `dispatch_seconds`. Bandwidths count bytes read + written.
/// Recording costs the host `host_copy_seconds` per copy command and
/// `host_dispatch_seconds` per dispatch (wgpu validates and tracks every
/// command as it is recorded), which a runtime waits for as much as for the
/// device, so the planner adds them ([`CostModel::host_seconds`]).
/// The load factors say how much slower each side can run while the device
/// is busy with other work; [`CostModel::robust_seconds`] uses them so that
/// a busy machine does not turn the choice into a 2x slower plan.
///
/// Plain data: it can be stored and loaded (`serde`, with the default
/// feature `serde`; models stored before the rates were keyed by kernel
/// still load), and [`crate::gpu::Calibration::measure`] measures one for the device
/// at hand.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{CostModel, DeviceClass};
///
/// // On a GPU the crate has not measured, copies must be long to be chosen.
/// let unknown = CostModel::for_class(DeviceClass::Unknown);
/// assert!(unknown.copy_command_seconds > 10.0 * CostModel::LAVAPIPE.copy_command_seconds);
/// // Every kernel has a documented bandwidth on every class.
/// assert!(unknown.gather_bytes_per_second.iter().all(|(_, rate)| rate > 0.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Copy bandwidth, bytes read + written per second.
    pub copy_bytes_per_second: f64,
    /// Fixed cost of one copy command, seconds.
    pub copy_command_seconds: f64,
    /// Each kernel's bandwidth.
    pub gather_bytes_per_second: KernelRates,
    /// Fixed cost of one dispatch, seconds.
    pub dispatch_seconds: f64,
    /// How many times slower copies can run on a busy device (at least 1).
    pub copy_load_factor: f64,
    /// How many times slower the gather can run on a busy device (at least 1).
    pub gather_load_factor: f64,
    /// Host seconds to record one copy command.
    pub host_copy_seconds: f64,
    /// Host seconds to record one dispatch (with its bind group).
    pub host_dispatch_seconds: f64,
    /// How the kernels lay their invocations over units on this device.
    pub lanes: LaneOrder,
    /// Invocations the device keeps in flight at once (its cores times the
    /// threads each holds); a dispatch of fewer runs at that fraction of
    /// its kernel's bandwidth. 0: not modeled (every dispatch at full
    /// bandwidth).
    pub resident_invocations: f64,
}

/// Host seconds wgpu 30 takes to record, finish and submit one
/// `copy_buffer_to_buffer`: 0.7 µs, measured on this crate's CI machine
/// (`split_bench`'s `record ms`: 16,384 copies 10.8-12.8 ms from the
/// encoder's creation to `submit` returning, one dispatch 0.12-0.17 ms;
/// `docs/DEVICE.md`). A property of the host and wgpu, so every class
/// model carries it.
const HOST_COPY_SECONDS: f64 = 0.7e-6;

/// Host seconds to record one dispatch with its bind group: about 2 µs
/// of CPU in wgpu (gfx-rs/wgpu#5766, #2659; `docs/DEVICE.md`).
const HOST_DISPATCH_SECONDS: f64 = 2e-6;

impl CostModel {
    /// Lavapipe (Mesa 22.3.6, LLVM 15) on a 2-core VM: medians of three
    /// release-build calibrations (2026-11-22; see `docs/DEVICE.md`). The
    /// load factors were measured with both cores busy: the gather ran up
    /// to 3x slower, copies (memcpy) hardly slowed.
    pub const LAVAPIPE: CostModel = CostModel {
        copy_bytes_per_second: 18.4e9,
        copy_command_seconds: 0.34e-6,
        gather_bytes_per_second: KernelRates::of_class(DeviceClass::Software),
        dispatch_seconds: 61e-6,
        copy_load_factor: 1.2,
        gather_load_factor: 2.5,
        host_copy_seconds: HOST_COPY_SECONDS,
        host_dispatch_seconds: HOST_DISPATCH_SECONDS,
        lanes: LaneOrder::Blocked,
        resident_invocations: 0.0,
    };

    /// A discrete GPU: a mainstream card (RTX 3060, RX 6700 XT class).
    /// Not measured here (no GPU on the machines this crate is built on);
    /// each figure rests on a published one ([`crate::docs::device`],
    /// "Class models", with its sources):
    ///
    /// - a plain vec4 kernel copies at `DISCRETE_GPU_BYTES_PER_SECOND` (300 GB/s),
    ///   0.8 of a 360-384 GB/s memory's peak, counting bytes read and
    ///   written; each kernel at the share of it its access pattern allows
    ///   (`KernelRates`, ranked by the access trace);
    /// - copy commands run at 0.7 of that: NVIDIA's copy path is slower
    ///   than a kernel copy (H20: 2 against 3.3 TB/s; H100 local copies
    ///   2.6-3.0 TB/s of a 3.35 TB/s peak), and Mesa's RADV runs every copy
    ///   of 4 KiB or more as an internal compute dispatch;
    /// - a dispatch costs 5 µs and so does a copy command (a null CUDA
    ///   kernel's 3 µs, a 2.5 µs small device-to-device copy, and the
    ///   barrier wgpu 30 records between dispatches that write storage; an
    ///   estimate: calibrate on the device);
    /// - the device holds 65,536 invocations in flight (28-40 SMs or CUs of
    ///   1,536-2,048 threads); lanes are striped (warps of 32);
    /// - recording costs the host 0.7 µs per copy and 2 µs per dispatch.
    pub const DISCRETE_GPU: CostModel = CostModel {
        copy_bytes_per_second: 0.7 * DISCRETE_GPU_BYTES_PER_SECOND,
        copy_command_seconds: 5e-6,
        gather_bytes_per_second: KernelRates::of_class(DeviceClass::DiscreteGpu),
        dispatch_seconds: 5e-6,
        copy_load_factor: 1.5,
        gather_load_factor: 1.5,
        host_copy_seconds: HOST_COPY_SECONDS,
        host_dispatch_seconds: HOST_DISPATCH_SECONDS,
        lanes: LaneOrder::Striped,
        resident_invocations: 65_536.0,
    };

    /// An integrated GPU (shared system memory: Apple M1, Intel Iris Xe,
    /// Radeon 680M class). Not measured here; the same kinds of facts as
    /// [`CostModel::DISCRETE_GPU`]: a vec4 kernel copies at
    /// `INTEGRATED_GPU_BYTES_PER_SECOND` (60 GB/s) (0.8 of 68-100 GB/s), copies at
    /// 0.9 of that (on shared memory both are bound by the same bus, and
    /// the copy engines of integrated parts are the shader cores: RADV's
    /// compute copies, Intel's blitter-less render path), 10 µs per
    /// dispatch and per copy command (slower host CPUs, Metal's encoder
    /// switches; an estimate), 12,288 invocations in flight.
    pub const INTEGRATED_GPU: CostModel = CostModel {
        copy_bytes_per_second: 0.9 * INTEGRATED_GPU_BYTES_PER_SECOND,
        copy_command_seconds: 10e-6,
        gather_bytes_per_second: KernelRates::of_class(DeviceClass::IntegratedGpu),
        dispatch_seconds: 10e-6,
        copy_load_factor: 1.5,
        gather_load_factor: 1.5,
        host_copy_seconds: HOST_COPY_SECONDS,
        host_dispatch_seconds: HOST_DISPATCH_SECONDS,
        lanes: LaneOrder::Striped,
        resident_invocations: 12_288.0,
    };

    /// An adapter the crate knows nothing of: never thousands of small
    /// copies where one dispatch does the job (a copy command is assumed to
    /// cost 20 µs), GPU lanes, and kernels at the shares of
    /// 20 GB/s (`UNKNOWN_GPU_BYTES_PER_SECOND`) their access patterns allow.
    pub const CONSERVATIVE: CostModel = CostModel {
        copy_bytes_per_second: 50e9,
        copy_command_seconds: 20e-6,
        gather_bytes_per_second: KernelRates::of_class(DeviceClass::Unknown),
        dispatch_seconds: 20e-6,
        copy_load_factor: 1.5,
        gather_load_factor: 1.5,
        host_copy_seconds: HOST_COPY_SECONDS,
        host_dispatch_seconds: HOST_DISPATCH_SECONDS,
        lanes: LaneOrder::Striped,
        resident_invocations: 0.0,
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

    /// `kernels`, in the order they are tried: those ranked first whenever
    /// they fit, then the ones ranked by bandwidth, fastest first (ties keep
    /// [`Kernel::ALL`]'s order) and only if at least as fast as the last
    /// kernel, then the last kernel, which moves anything.
    pub(crate) fn order(&self, kernels: impl IntoIterator<Item = Kernel>) -> Vec<Kernel> {
        let kernels: Vec<Kernel> = kernels.into_iter().collect();
        let of = |order: Order| {
            kernels
                .iter()
                .copied()
                .filter(move |k| k.spec().order == order)
        };
        let floor = of(Order::Last)
            .map(|k| self.gather_bytes_per_second.get(k))
            .fold(0.0, f64::max);
        let mut by_rate: Vec<Kernel> = of(Order::ByRate)
            .filter(|&k| self.gather_bytes_per_second.get(k) >= floor)
            .collect();
        let rate = |k: &Kernel| self.gather_bytes_per_second.get(*k);
        by_rate.sort_by(|a, b| rate(b).total_cmp(&rate(a)));
        of(Order::First)
            .chain(by_rate)
            .chain(of(Order::Last))
            .collect()
    }

    /// Host seconds to record `copies` copy commands and `dispatches`
    /// dispatches: what the runtime waits for before the device starts.
    ///
    /// ```
    /// use wgpu_split::plan::CostModel;
    ///
    /// let m = CostModel::LAVAPIPE;
    /// // 16,384 copies cost the host far more than one dispatch does.
    /// assert!(m.host_seconds(16_384, 0) > 1000.0 * m.host_seconds(0, 1));
    /// ```
    pub fn host_seconds(&self, copies: u64, dispatches: u64) -> f64 {
        copies as f64 * self.host_copy_seconds + dispatches as f64 * self.host_dispatch_seconds
    }

    /// Modeled device seconds to copy `count` runs of `size_bytes` bytes.
    pub(crate) fn copy_seconds(&self, count: u64, size_bytes: u64) -> f64 {
        count as f64 * self.copy_command_seconds
            + 2.0 * (count * size_bytes) as f64 / self.copy_bytes_per_second
    }

    /// The share of its kernel's bandwidth a dispatch of `invocations`
    /// reaches: all of it from [`CostModel::resident_invocations`] up.
    pub fn fill(&self, invocations: u64) -> f64 {
        if self.resident_invocations <= 0.0 {
            return 1.0;
        }
        (invocations as f64 / self.resident_invocations).clamp(1e-3, 1.0)
    }

    /// Invocations a dispatch of `bits` launches on this device: one per
    /// vec4, or per stretch of vec4s with blocked lanes.
    pub(crate) fn invocations_for(&self, bits: u64) -> u64 {
        bits.div_ceil(128)
            .div_ceil(self.lanes.units_per_invocation())
    }

    /// Modeled seconds to gather one output with this geometry in a
    /// dispatch of `invocations`, at the bandwidth of the first kernel (in
    /// [`CostModel::order`]) that would move it on its own.
    pub(crate) fn gather_seconds(&self, g: &OutputGeometry, invocations: u64) -> f64 {
        let alone = Kernel::ALL
            .into_iter()
            .filter(|k| (k.spec().prices_output)(g));
        let bandwidth = self
            .order(alone)
            .first()
            .map_or(0.0, |&k| self.gather_bytes_per_second.get(k));
        2.0 * g.total_bits.div_ceil(8) as f64 / (bandwidth * self.fill(invocations))
    }

    /// [`CostModel::copy_seconds`] weighed for load, plus the host's time
    /// to record the commands (the host does not slow with the device).
    pub(crate) fn copy_robust_seconds(&self, count: u64, size_bytes: u64) -> f64 {
        Self::robust_seconds(self.copy_seconds(count, size_bytes), self.copy_load_factor)
            + self.host_seconds(count, 0)
    }

    /// [`CostModel::gather_seconds`] weighed for load.
    pub(crate) fn gather_robust_seconds(&self, g: &OutputGeometry, invocations: u64) -> f64 {
        Self::robust_seconds(self.gather_seconds(g, invocations), self.gather_load_factor)
    }
}

impl Default for CostModel {
    /// [`CostModel::CONSERVATIVE`]: the splitter picks the model of its
    /// device's class; a model made without a device assumes nothing.
    fn default() -> Self {
        Self::CONSERVATIVE
    }
}
