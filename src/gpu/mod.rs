//! GPU execution: a [`GpuSplitter`] compiles the kernels and records a
//! planned move into the caller's command encoder
//! ([`GpuSplitter::encode`]) or compute pass ([`GpuSplitter::prepare`]),
//! reading the caller's regions and writing the caller's regions. Every
//! move (a split, a concat, a permuted split, a permuted concat) takes the
//! same five verbs: `plan`, `plan_with`, `encode`, `prepare` and `counts`
//! ([`Move`], [`MovePlan`]); a split reads one region and writes one per
//! output, a concat the mirror. It submits nothing and reads nothing back;
//! [`RoundTrip`] is the convenience path that does, and
//! [`Calibration::measure`] measures the device's [`crate::plan::CostModel`].
//!
//! # Examples
//!
//! A split, the concat back and a split into attention heads, recorded
//! into one encoder with the same verbs:
//!
//! ```no_run
//! use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
//! use wgpu_split::{ElementType, HostTensor, PermutedSplit, ResolvedConcat, ResolvedSplit};
//!
//! let ctx = GpuContext::new_default()?;
//! let splitter = ctx.splitter()?;
//! let t = ElementType::Float16;
//! let input = HostTensor::from_raw(t, &[1, 8, 96], vec![0; 1536])?;
//! let source = RoundTrip::new(&splitter).create_input(input.as_bytes()?)?;
//! let buffer = |bytes: u64| RoundTrip::new(&splitter).create_input(&vec![0; bytes as usize]);
//!
//! // Q, K and V of 32 columns each.
//! let split = ResolvedSplit::new(&[1, 8, 96], 2, vec![32; 3], true)?;
//! let plan = splitter.plan(&split, t)?;
//! let qkv = (0..3).map(|i| buffer(plan.destination_bytes(i))).collect::<Result<Vec<_>, _>>()?;
//! let qkv: Vec<BufferRegion> = qkv.iter().map(BufferRegion::whole).collect();
//! let mut encoder = splitter.device().create_command_encoder(&Default::default());
//! splitter.encode(&mut encoder, &plan, BufferRegion::whole(&source), &qkv)?;
//!
//! // The mirror: Q, K and V concatenated back.
//! let concat = ResolvedConcat::inverse_of(&split).expect("outputs");
//! let back_plan = splitter.plan(&concat, t)?;
//! let back = buffer(back_plan.requirements().output_region_bytes)?;
//! splitter.encode(&mut encoder, &back_plan, &qkv, BufferRegion::whole(&back))?;
//!
//! // Q, K and V as heads of 8: [1, 4, 8, 8] each, known before recording.
//! let heads = PermutedSplit::split_heads(&[1, 8, 96], &[32; 3], 8)?;
//! let heads_plan = splitter.plan(&heads, t)?;
//! let out = (0..3).map(|i| buffer(heads_plan.output_region_bytes(i))).collect::<Result<Vec<_>, _>>()?;
//! let out: Vec<BufferRegion> = out.iter().map(BufferRegion::whole).collect();
//! let counts = splitter.counts(&heads_plan, BufferRegion::whole(&source), &out)?;
//! splitter.encode(&mut encoder, &heads_plan, BufferRegion::whole(&source), &out)?;
//! splitter.queue().submit([encoder.finish()]);
//! # let _ = counts;
//! # Ok::<(), wgpu_split::Error>(())
//! ```

mod blocking;
mod cache;
mod calibrate;
mod calibration_timer;
mod checks;
mod concat_round_trip;
mod context;
mod device_class;
mod dispatch;
pub(crate) mod error;
mod moves;
mod permuted;
mod pipelines;
#[cfg(not(target_arch = "wasm32"))]
mod poller;
mod prepared;
mod readback;
mod region;
mod resources;
mod round_trip;
mod scope;
mod splitter;
mod splitter_cache;
mod start;
#[cfg(feature = "analysis")]
pub mod trace;

pub use cache::{CachePolicy, CacheUsage};
pub use calibrate::{Calibration, Figure, Timing};
pub use context::GpuContext;
pub use moves::{Move, MovePlan};
#[cfg(not(target_arch = "wasm32"))]
pub use poller::Poller;
pub use prepared::{EncodeCounts, PreparedSplit};
pub use region::BufferRegion;
pub use round_trip::{HostInput, RoundTrip};
pub use splitter::{GpuSplitter, ModelOrigin};
pub use splitter_cache::SplitterCache;
