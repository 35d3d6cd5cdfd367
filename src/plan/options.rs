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
    /// Whether to stage the outputs through the splitter's scratch arena
    /// ([`crate::plan::SplitPlan::is_staged`]): `None` (the default) lets
    /// the cost model weigh it where separate destinations take several
    /// dispatches; `Some(true)` stages wherever it applies (a split into
    /// separate destinations past one dispatch's, none copied), `Some(false)`
    /// never.
    pub staging: Option<bool>,
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

    /// Stages the outputs through the splitter's scratch arena wherever it
    /// applies (`true`), or never (`false`), instead of as the cost model
    /// weighs it.
    ///
    /// ```
    /// use wgpu_split::plan::{PlanLimits, PlanOptions, SplitPlan};
    /// use wgpu_split::{ElementType, OnnxSplit};
    ///
    /// // 31 one-element columns: five dispatches under WebGPU's limits,
    /// // each loading every row, or one pass into the scratch and copies out.
    /// let split = OnnxSplit::new(18, 31).axis(1).num_outputs(31).resolve(&[512, 31]).unwrap();
    /// let limits = PlanLimits::WEBGPU_DEFAULT;
    /// let staged = PlanOptions::default().staging(true);
    /// let plan = SplitPlan::new(&split, ElementType::Float16, &limits, &staged).unwrap();
    /// assert!(plan.is_staged());
    /// assert_eq!(plan.requirements().scratch_bytes, plan.scratch_bytes());
    /// let plain = PlanOptions::default().staging(false);
    /// let plan = SplitPlan::new(&split, ElementType::Float16, &limits, &plain).unwrap();
    /// assert_eq!((plan.is_staged(), plan.scratch_bytes()), (false, 0));
    /// ```
    pub fn staging(mut self, staging: bool) -> Self {
        self.staging = Some(staging);
        self
    }
}
