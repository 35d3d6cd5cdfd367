//! The methods split_bench times, by name.

use wgpu_split::gpu::GpuSplitter;
use wgpu_split::plan::{Placement, PlanOptions, Strategy};

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
    /// The fastest of the forced strategies.
    BestFixed,
    /// `host::split_into` on preallocated buffers.
    Host,
    /// One host memcpy of the same bytes.
    HostMemcpy,
}

impl Method {
    /// The GPU methods, in report order.
    pub const GPU: [Method; 8] = [
        Method::Plan,
        Method::Destinations,
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

    const ALL: [Method; 11] = [
        Method::Plan,
        Method::Destinations,
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

    /// How a method that plans a split plans it.
    pub fn plan_options(self, splitter: &GpuSplitter) -> Option<PlanOptions> {
        let arena = PlanOptions::default().placement(Placement::Arena);
        Some(match self {
            Method::Plan => arena.strategy(*splitter.strategy()),
            Method::Destinations => PlanOptions::default().strategy(*splitter.strategy()),
            Method::Gather => arena.strategy(Strategy::Gather),
            Method::PerOutputDispatch => arena.strategy(Strategy::GatherPerOutput),
            Method::PerOutputCopy => arena.strategy(Strategy::Copy),
            _ => return None,
        })
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
