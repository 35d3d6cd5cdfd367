//! Concats on the GPU: a [`ConcatPlan`] is its mirror split run backwards,
//! so the splitter records it as it records a split, with the output's
//! region where a split's input goes and the inputs' regions (in the
//! mirror's order) where its destinations go.

use super::prepared::PreparedSplit;
use super::region::BufferRegion;
use super::splitter::GpuSplitter;
use crate::element::ElementType;
use crate::error::Result;
use crate::plan::{ConcatPlan, PlanError, PlanOptions};
use crate::semantics::ResolvedConcat;

impl GpuSplitter {
    /// Plans `concat` of `element_type` inputs for this device, each input
    /// in a region of its own, with the splitter's strategy.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wgpu_split::gpu::{BufferRegion, GpuContext, RoundTrip};
    /// use wgpu_split::{ElementType, OnnxConcat};
    ///
    /// let ctx = GpuContext::new_default()?;
    /// let splitter = ctx.splitter()?;
    /// let concat = OnnxConcat::new(13).axis(-1).resolve(&[[8, 64, 64]; 8])?;
    /// let plan = splitter.plan_concat(&concat, ElementType::Float16)?;
    /// # let round_trip = RoundTrip::new(&splitter);
    /// # let inputs: Vec<wgpu::Buffer> = (0..8)
    /// #     .map(|_| round_trip.create_input(&[0; 8 * 64 * 64 * 2]))
    /// #     .collect::<Result<_, _>>()?;
    /// # let output = round_trip.create_input(&[0; 8 * 64 * 512 * 2])?;
    /// let regions: Vec<BufferRegion> = inputs.iter().map(BufferRegion::whole).collect();
    /// let mut encoder = ctx.device.create_command_encoder(&Default::default());
    /// splitter.encode_concat(&mut encoder, &plan, &regions, BufferRegion::whole(&output))?;
    /// ctx.queue.submit([encoder.finish()]);
    /// # Ok::<(), wgpu_split::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The [`PlanError`]s of [`ConcatPlan::new`].
    pub fn plan_concat(
        &self,
        concat: &ResolvedConcat,
        element_type: ElementType,
    ) -> std::result::Result<ConcatPlan, PlanError> {
        self.plan_concat_with(concat, element_type, &PlanOptions::default())
    }

    /// Plans a concat for recording inside the caller's compute pass
    /// ([`GpuSplitter::prepare_concat`]): dispatches only.
    ///
    /// # Errors
    ///
    /// The [`PlanError`]s of [`ConcatPlan::new`].
    pub fn plan_concat_for_pass(
        &self,
        concat: &ResolvedConcat,
        element_type: ElementType,
    ) -> std::result::Result<ConcatPlan, PlanError> {
        let options = PlanOptions::default().in_compute_pass();
        self.plan_concat_with(concat, element_type, &options)
    }

    /// Plans a concat with options for this device (see
    /// [`GpuSplitter::plan_with`]).
    ///
    /// # Errors
    ///
    /// The [`PlanError`]s of [`ConcatPlan::new`].
    pub fn plan_concat_with(
        &self,
        concat: &ResolvedConcat,
        element_type: ElementType,
        options: &PlanOptions,
    ) -> std::result::Result<ConcatPlan, PlanError> {
        let options = PlanOptions {
            strategy: Some(options.strategy.unwrap_or(*self.strategy())),
            ..*options
        };
        ConcatPlan::with_model(concat, element_type, self.limits(), &options, self.model())
    }

    /// Records the concat into `encoder`: its copy commands, then its
    /// dispatches in one compute pass. `inputs` holds one region per
    /// concat input, in order (one that takes no part, or an empty one, is
    /// ignored and may be empty), or for an arena plan the one arena;
    /// `output` receives the packed output. Nothing outside `output` is
    /// written, nothing in the inputs is; nothing is submitted. The inputs
    /// may share bytes (`torch.cat([x, x])`).
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::encode`], the regions named as the concat names
    /// them ([`crate::plan::BufferRole::ConcatInput`],
    /// [`crate::plan::BufferRole::ConcatOutput`]).
    pub fn encode_concat(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &ConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<()> {
        self.encode(encoder, plan.mirror(), output, &plan.destinations(inputs)?)
    }

    /// Prepares a concat that needs only dispatches for recording inside
    /// the caller's own compute pass (see [`GpuSplitter::prepare`]).
    ///
    /// # Errors
    ///
    /// As [`GpuSplitter::prepare`].
    pub fn prepare_concat(
        &self,
        plan: &ConcatPlan,
        inputs: &[BufferRegion<'_>],
        output: BufferRegion<'_>,
    ) -> Result<PreparedSplit> {
        self.prepare(plan.mirror(), output, &plan.destinations(inputs)?)
    }
}
