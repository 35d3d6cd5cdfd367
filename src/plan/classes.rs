//! The published figures the GPU class models rest on
//! ([`crate::docs::device`], "Class models"): what a plain vec4 kernel
//! copies on each class, from which every kernel's rate on it is a share.

/// What a plain vec4 kernel copies on [`crate::plan::CostModel::DISCRETE_GPU`], bytes
/// read + written per second: 0.8 of the 360-384 GB/s peak of an RTX 3060
/// or RX 6700 XT ([`crate::docs::device`], "Class models").
pub const DISCRETE_GPU_BYTES_PER_SECOND: f64 = 300e9;

/// What a plain vec4 kernel copies on [`crate::plan::CostModel::INTEGRATED_GPU`]: 0.8
/// of the 68-100 GB/s of the LPDDR4X and LPDDR5 systems of Apple M1-M3,
/// Intel Iris Xe and Radeon 680M.
pub const INTEGRATED_GPU_BYTES_PER_SECOND: f64 = 60e9;

/// What a plain vec4 kernel is assumed to copy on an adapter nothing is
/// known of ([`crate::plan::CostModel::CONSERVATIVE`]).
pub const UNKNOWN_GPU_BYTES_PER_SECOND: f64 = 20e9;
