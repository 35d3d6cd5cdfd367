//! What a whole plan costs under a [`CostModel`]: every copy command and
//! every dispatch (its fixed cost, its bytes at its kernel's rate and the
//! share of the device its grid fills), and the host's time to record them.
//! The planner decides per output; this is how a runtime (or the docs)
//! compares whole plans: separate destinations, an arena, copies, views.

use crate::kernels::table::{TableEntry, TableHeader};
use crate::plan::choice::cost::CostModel;
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
        if let Some((stage, unstage)) = plan.staged_plans() {
            return PlanCost {
                device_seconds: self.plan_cost(stage).device_seconds
                    + self.plan_cost(unstage).device_seconds,
                host_seconds: self.host_seconds(plan.copy_count(), plan.dispatch_count() as u64),
            };
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
                let bytes = pass_bytes(plan.table(), &pass.table_bytes);
                let fill = self.fill(u64::from(pass.invocations));
                self.dispatch_seconds + 2.0 * bytes as f64 / (rate * fill)
            })
            .sum();
        PlanCost {
            device_seconds: copies + dispatches,
            host_seconds: self.host_seconds(plan.copy_count(), plan.dispatch_count() as u64),
        }
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
