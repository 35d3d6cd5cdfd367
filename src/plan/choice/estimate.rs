//! What a whole plan costs under a [`CostModel`]: every copy command and
//! every dispatch (its fixed cost, its bytes at its kernel's rate and the
//! share of the device its grid fills), and the host's time to record them.
//! The planner decides per output; this is how a runtime (or the docs)
//! compares whole plans: separate destinations, an arena, copies, views.
//! [`CostModel::traffic_seconds`] counts what each pass loads too (whole
//! sectors of the rows it reads): what the planner weighs staging by.

use crate::kernels::table::{TableEntry, TableHeader};
use crate::plan::choice::cost::CostModel;
use crate::plan::passes::Pass;
use crate::plan::split_plan::SplitPlan;

/// A plan's modeled cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PlanCost {
    /// Device seconds: copies, then dispatches.
    pub device_seconds: f64,
    /// Host seconds to record the commands.
    pub host_seconds: f64,
}

impl PlanCost {
    /// Device and host seconds together (what a runtime waits for when it
    /// records and submits at once).
    pub fn total_seconds(&self) -> f64 {
        self.device_seconds + self.host_seconds
    }
}

impl CostModel {
    /// The modeled cost of `plan` on a device this model describes.
    ///
    /// ```
    /// use wgpu_split::plan::{CostModel, PlanLimits, PlanOptions, SplitPlan, Strategy};
    /// use wgpu_split::{ElementType, OnnxSplitToSequence};
    ///
    /// // 1,000 rows of 16 KiB into buffers of their own: 143 dispatches
    /// // under WebGPU's limits; copies would be 1,000 commands.
    /// let split = OnnxSplitToSequence::new(11).resolve(&[1000, 4096]).unwrap();
    /// let model = CostModel::DISCRETE_GPU;
    /// let plan = |strategy| {
    ///     let options = PlanOptions::default().strategy(strategy);
    ///     SplitPlan::new(&split, ElementType::Float, &PlanLimits::WEBGPU_DEFAULT, &options)
    /// };
    /// let gathered = model.plan_cost(&plan(Strategy::Auto(model)).unwrap());
    /// let copied = model.plan_cost(&plan(Strategy::Copy).unwrap());
    /// assert!(gathered.total_seconds() < copied.total_seconds());
    /// ```
    pub fn plan_cost(&self, plan: &SplitPlan) -> PlanCost {
        let written =
            |p: &SplitPlan, pass: &Pass| 2.0 * pass_bytes(p.table(), &pass.table_bytes) as f64;
        PlanCost {
            device_seconds: self.device_seconds(plan, &written),
            host_seconds: self.host_seconds(plan.copy_count(), plan.dispatch_count() as u64),
        }
    }

    /// Modeled device seconds of `plan` counting the bytes each pass loads
    /// as well as those it writes: on a GPU (striped lanes) a pass of
    /// narrow pieces of every row loads whole 32-byte sectors of every row
    /// it reads, so plans that take several such passes pay for the input
    /// each time. What the planner weighs staging by.
    ///
    /// ```
    /// use wgpu_split::plan::{CostModel, PlanLimits, PlanOptions, SplitPlan};
    /// use wgpu_split::{ElementType, OnnxSplit};
    ///
    /// // 2^20 rows of 31 one-element f16 columns under WebGPU's limits.
    /// let split = OnnxSplit::new(18, 31).axis(1).num_outputs(31).resolve(&[1 << 20, 31]).unwrap();
    /// let plan = |staging| {
    ///     let options = PlanOptions::default().staging(staging);
    ///     SplitPlan::new(&split, ElementType::Float16, &PlanLimits::WEBGPU_DEFAULT, &options)
    /// };
    /// let model = CostModel::DISCRETE_GPU;
    /// let staged = model.traffic_seconds(&plan(true).unwrap());
    /// let reread = model.traffic_seconds(&plan(false).unwrap());
    /// assert!(staged < reread);
    /// ```
    pub fn traffic_seconds(&self, plan: &SplitPlan) -> f64 {
        let traffic = |p: &SplitPlan, pass: &Pass| {
            let (loaded, written) = pass_traffic(p.table(), pass);
            (loaded + written) as f64
        };
        self.device_seconds(plan, &traffic)
    }

    /// Bytes the passes of `plan` (not staged) load, as
    /// [`CostModel::traffic_seconds`] models them: each pass's sectors of
    /// the rows it reads, summed over the passes.
    pub(crate) fn loaded_bytes(plan: &SplitPlan) -> u64 {
        plan.passes()
            .iter()
            .map(|pass| pass_traffic(plan.table(), pass).0)
            .sum()
    }

    /// Device seconds of `plan` (of a staged plan, its two plans'): every
    /// copy command, and every dispatch's fixed cost and the bytes
    /// `moved` says it moves, at its kernel's rate and the share of the
    /// device its grid fills.
    fn device_seconds(&self, plan: &SplitPlan, moved: &dyn Fn(&SplitPlan, &Pass) -> f64) -> f64 {
        if let Some((stage, unstage)) = plan.staged_plans() {
            return self.device_seconds(stage, moved) + self.device_seconds(unstage, moved);
        }
        let copies: f64 = plan
            .copies()
            .iter()
            .map(|c| self.copy_seconds(c.count, c.size_bytes))
            .sum();
        let rate = self.gather_bytes_per_second.get(plan.kernel());
        let dispatches: f64 = plan
            .passes()
            .iter()
            .map(|pass| {
                let fill = self.fill(u64::from(pass.invocations));
                self.dispatch_seconds + moved(plan, pass) / (rate * fill)
            })
            .sum();
        copies + dispatches
    }
}

/// Bytes a pass writes: its table entries' lengths.
fn pass_bytes(table: &[u8], range: &std::ops::Range<u64>) -> u64 {
    let slice = &table[range.start as usize..range.end as usize];
    let header: TableHeader = bytemuck::pod_read_unaligned(&slice[..TableHeader::SIZE as usize]);
    slice[TableHeader::SIZE as usize..]
        .chunks_exact(TableEntry::SIZE as usize)
        .take(header.entry_count as usize)
        .map(|e| u64::from(bytemuck::pod_read_unaligned::<TableEntry>(e).len_bits).div_ceil(8))
        .sum()
}

/// A sector: what a memory request moves at least (32 bytes on GPUs).
const SECTOR_BYTES: u64 = 32;

/// The bytes a pass loads and writes, as modeled: per entry, whole sectors
/// of every row it reads (one more for a run that does not start on one),
/// at most a whole block a row, or for one stretch its bytes; the pass at
/// most its source window.
fn pass_traffic(table: &[u8], pass: &Pass) -> (u64, u64) {
    let slice = &table[pass.table_bytes.start as usize..pass.table_bytes.end as usize];
    let header: TableHeader = bytemuck::pod_read_unaligned(&slice[..TableHeader::SIZE as usize]);
    let (mut loaded, mut written) = (0u64, 0u64);
    for e in slice[TableHeader::SIZE as usize..]
        .chunks_exact(TableEntry::SIZE as usize)
        .take(header.entry_count as usize)
    {
        let e: TableEntry = bytemuck::pod_read_unaligned(e);
        let len = u64::from(e.len_bits).div_ceil(8);
        written += len;
        let (run, block) = (u64::from(e.run_bits) / 8, u64::from(e.block_bits) / 8);
        let rows = u64::from(e.len_bits).div_ceil(u64::from(e.run_bits).max(1));
        // One stretch (a chunk inside one run, or runs back to back): its
        // bytes, whose sectors its neighbours in the pass share.
        loaded += if block == 0 || run == 0 || run >= block || rows <= 1 {
            len
        } else {
            rows * block.min(run.next_multiple_of(SECTOR_BYTES) + SECTOR_BYTES)
        };
    }
    let window = pass.src_window_bytes.end - pass.src_window_bytes.start;
    (loaded.min(window), written)
}
