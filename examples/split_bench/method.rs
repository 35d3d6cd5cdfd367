//! The methods split_bench times, by name.

use wgpu_split::gpu::GpuSplitter;
use wgpu_split::plan::{CostModel, Placement, PlanLimits, PlanOptions, Strategy};

/// One way of moving a case's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// What `GpuSplitter::plan` chooses with the adapter class's cost model,
    /// into one arena.
    Plan,
    /// The same into one buffer per output.
    Destinations,
    /// Dispatches only (`Strategy::Gather`), into one arena.
    Gather,
    /// One dispatch per output: a naive baseline.
    PerOutputDispatch,
    /// One copy command per run: a naive baseline.
    PerOutputCopy,
    /// One `copy_buffer_to_buffer` of the same bytes: the device's copy
    /// limit.
    CopyLimit,
    /// A plain vec4 compute copy of the same bytes: the device's shader
    /// limit.
    ShaderCopy,
    /// Bindings of the input instead of copies, where every output is one
    /// range of it.
    View,
    /// What `CostModel::DISCRETE_GPU` plans under WebGPU's default limits,
    /// into one buffer per output: on lavapipe, the kernels a discrete GPU
    /// would run.
    GpuDiscrete,
    /// The same with `CostModel::INTEGRATED_GPU`.
    GpuIntegrated,
    /// What the model `calibrate()` measured at the start of the run plans,
    /// into one arena (as `plan`).
    PlanCalibrated,
    /// The fastest of the forced strategies.
    BestFixed,
    /// `HostTensor::split_into` on preallocated buffers.
    Host,
    /// One host memcpy of the same bytes.
    HostMemcpy,
}

impl Method {
    /// The GPU methods, in report order.
    pub const GPU: [Method; 11] = [
        Method::Plan,
        Method::Destinations,
        Method::GpuDiscrete,
        Method::GpuIntegrated,
        Method::PlanCalibrated,
        Method::Gather,
        Method::PerOutputDispatch,
        Method::PerOutputCopy,
        Method::CopyLimit,
        Method::ShaderCopy,
        Method::View,
    ];

    /// The forced strategies `best_fixed` takes the fastest of.
    pub const FORCED: [Method; 3] = [
        Method::Gather,
        Method::PerOutputDispatch,
        Method::PerOutputCopy,
    ];

    /// The columns of the README table.
    pub const TABLE: [Method; 9] = [
        Method::Plan,
        Method::Destinations,
        Method::Gather,
        Method::PerOutputDispatch,
        Method::PerOutputCopy,
        Method::CopyLimit,
        Method::ShaderCopy,
        Method::Host,
        Method::HostMemcpy,
    ];

    const ALL: [Method; 14] = [
        Method::Plan,
        Method::Destinations,
        Method::GpuDiscrete,
        Method::GpuIntegrated,
        Method::PlanCalibrated,
        Method::Gather,
        Method::PerOutputDispatch,
        Method::PerOutputCopy,
        Method::CopyLimit,
        Method::ShaderCopy,
        Method::View,
        Method::BestFixed,
        Method::Host,
        Method::HostMemcpy,
    ];

    /// Its name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Method::Plan => "plan",
            Method::Destinations => "destinations",
            Method::Gather => "gather",
            Method::PerOutputDispatch => "per_output_dispatch",
            Method::PerOutputCopy => "per_output_copy",
            Method::CopyLimit => "copy_limit",
            Method::ShaderCopy => "shader_copy",
            Method::View => "view",
            Method::GpuDiscrete => "gpu_discrete",
            Method::GpuIntegrated => "gpu_integrated",
            Method::PlanCalibrated => "plan_calibrated",
            Method::BestFixed => "best_fixed",
            Method::Host => "host",
            Method::HostMemcpy => "host_memcpy",
        }
    }

    /// The method called `name`.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// True for the host methods (their ratios are to `host_memcpy`).
    pub fn is_host(self) -> bool {
        matches!(self, Method::Host | Method::HostMemcpy)
    }

    /// How a method that plans a split plans it: the options and the
    /// limits (the device's, or WebGPU's defaults for the GPU-class
    /// methods). `None` for methods that do not plan, and for
    /// `plan_calibrated` without a calibrated model.
    pub fn plan_options(
        self,
        splitter: &GpuSplitter,
        calibrated: Option<&CostModel>,
    ) -> Option<(PlanOptions, PlanLimits)> {
        let arena = PlanOptions::default().placement(Placement::Arena);
        let per_output = PlanOptions::default();
        let webgpu = PlanLimits::WEBGPU_DEFAULT;
        let options = match self {
            Method::GpuDiscrete => {
                return Some((
                    per_output.strategy(Strategy::Auto(CostModel::DISCRETE_GPU)),
                    webgpu,
                ));
            }
            Method::GpuIntegrated => {
                return Some((
                    per_output.strategy(Strategy::Auto(CostModel::INTEGRATED_GPU)),
                    webgpu,
                ));
            }
            Method::PlanCalibrated => arena.strategy(Strategy::Auto(*calibrated?)),
            Method::Plan => arena.strategy(*splitter.strategy()),
            Method::Destinations => per_output.strategy(*splitter.strategy()),
            Method::Gather => arena.strategy(Strategy::Gather),
            Method::PerOutputDispatch => arena.strategy(Strategy::GatherPerOutput),
            Method::PerOutputCopy => arena.strategy(Strategy::Copy),
            _ => return None,
        };
        Some((options, *splitter.limits()))
    }
}

impl std::fmt::Display for Method {
    /// Its name, padded to the width a format asks for (`{:<19}`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}
