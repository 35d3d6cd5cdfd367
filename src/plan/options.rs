//! [`PlanOptions`]: how to plan a split, beside what it is planned for.

use crate::kernels::work::Placement;
use crate::kernels::{Form, Kernel};
use crate::plan::choice::strategy::Strategy;

/// How to plan: the strategy, where the outputs go, whether the plan is
/// recorded inside the caller's compute pass, and optionally the one kernel
/// to use.
///
/// # Examples
///
/// ```
/// use wgpu_split::plan::{Placement, PlanOptions, Strategy};
///
/// let options = PlanOptions::default().strategy(Strategy::Gather);
/// assert_eq!(options.placement, Placement::default());
/// // Dispatches only, the kernel still chosen by the cost model.
/// assert!(PlanOptions::default().in_compute_pass().compute_pass);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlanOptions {
    /// How each output moves; `None` takes the splitter's strategy
    /// ([`crate::gpu::GpuSplitter::strategy`]), or [`Strategy::default`]
    /// when planning without a splitter.
    pub strategy: Option<Strategy>,
    /// Where the outputs go (default: each into a region of its own).
    pub placement: Placement,
    /// The one kernel to plan with (for benchmarks and calibration);
    /// `None` lets the cost model choose.
    pub kernel: Option<Kernel>,
    /// The one form to plan with (for benchmarks and tests: a kernel's
    /// per-layout form is otherwise tried before its table-driven one);
    /// `None` tries each form the kernel has.
    pub form: Option<Form>,
    /// For recording inside the caller's compute pass
    /// ([`crate::gpu::GpuSplitter::prepare`]): every output through the
    /// kernels, no copy command, the kernel chosen by the strategy's cost
    /// model as usual.
    pub compute_pass: bool,
}

impl PlanOptions {
    /// Sets the strategy.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = Some(strategy);
        self
    }

    /// Sets where the outputs go.
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// Plans for recording inside a compute pass: dispatches only (see
    /// [`PlanOptions::compute_pass`]).
    pub fn in_compute_pass(mut self) -> Self {
        self.compute_pass = true;
        self
    }

    /// Forces one kernel: planning fails with
    /// [`crate::error::PlanError::KernelDoesNotFit`] where it cannot move the outputs.
    pub fn kernel(mut self, kernel: Kernel) -> Self {
        self.kernel = Some(kernel);
        self
    }

    /// Forces one form of every kernel tried (with [`PlanOptions::kernel`],
    /// one form of one kernel): planning fails with
    /// [`crate::error::PlanError::KernelDoesNotFit`] where it cannot move the outputs.
    pub fn form(mut self, form: Form) -> Self {
        self.form = Some(form);
        self
    }
}
