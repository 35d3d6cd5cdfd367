//! The compiled gather shader: one pipeline and bind group layout per
//! [`Kernel`], placement and number of destination slots (and per layout
//! for the generated kernels: row blocks, row streams), built on first use
//! and kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::plan::abi::wgsl_module;
use crate::plan::{GeneratedLayout, Kernel, Outputs, SplitPlan};

/// The WGSL source of the gather shader as compiled for outputs placed as
/// `outputs` with `slots` destination slots: `shaders/split.wgsl` with the
/// prelude Rust generates (constants, table, bindings, slot dispatchers)
/// and its per-slot part instantiated per slot ([`wgsl_module`]).
pub fn shader_source(outputs: Outputs, slots: u32) -> String {
    wgsl_module(outputs, slots, include_str!("../../shaders/split.wgsl"))
}

/// The WGSL module a plan's dispatches run: [`shader_source`] for its
/// placement and slot count, plus the generated entry point of a
/// [`Kernel::Rows`] or [`Kernel::Streams`] plan.
pub fn plan_shader_source(plan: &SplitPlan) -> String {
    module_source(
        plan.placement(),
        plan.destination_slots(),
        plan.generated_layout(),
    )
}

fn module_source(outputs: Outputs, slots: u32, generated: Option<&GeneratedLayout>) -> String {
    let mut source = shader_source(outputs, slots);
    if let Some(layout) = generated {
        source += &layout.wgsl(outputs == Outputs::Arena);
    }
    source
}

/// One compiled entry point with its bind group layout.
#[derive(Debug)]
pub(crate) struct CompiledKernel {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

/// Generated layouts whose pipelines are kept at most (each pipeline is a
/// module of its own): a model has a handful of split layouts; a workload
/// that cycles through more recompiles the least recently used instead of
/// growing without end.
pub(crate) const MAX_GENERATED_PIPELINES: usize = 32;

/// Pipelines by kernel, placement and slot count, compiled on first use.
/// Shader modules are per placement and slot count (the prelude declares
/// the slots); generated kernels have modules of their own, kept up to
/// [`MAX_GENERATED_PIPELINES`] layouts.
#[derive(Debug, Default)]
pub(crate) struct Kernels {
    modules: Mutex<HashMap<(Outputs, u32), wgpu::ShaderModule>>,
    pipelines: Mutex<HashMap<(Kernel, Outputs, u32), Arc<CompiledKernel>>>,
    generated: Mutex<GeneratedPipelines>,
}

/// Generated pipelines by layout (each layout's per placement and slot
/// count), with the tick of the layout's last use. Looked up by reference:
/// an encode hashes its plan's layout but copies nothing.
#[derive(Debug, Default)]
struct GeneratedPipelines {
    by_layout: HashMap<GeneratedLayout, (Vec<LayoutVariant>, u64)>,
    tick: u64,
}

/// One layout's pipeline for a placement and slot count.
type LayoutVariant = ((Outputs, u32), Arc<CompiledKernel>);

impl Kernels {
    /// The pipeline of `kernel` for outputs placed as `outputs` with `slots`
    /// destination slots (`generated`: the layout of a generated kernel's
    /// plan). Callers run this inside an error scope: a lost device fails
    /// here.
    pub fn get(
        &self,
        device: &wgpu::Device,
        kernel: Kernel,
        outputs: Outputs,
        slots: u32,
        generated: Option<&GeneratedLayout>,
    ) -> Arc<CompiledKernel> {
        if let Some(layout) = generated {
            return self.generated(device, outputs, slots, layout);
        }
        let key = (kernel, outputs, slots);
        if let Some(compiled) = lock(&self.pipelines).get(&key) {
            return compiled.clone();
        }
        let module = lock(&self.modules)
            .entry((outputs, slots))
            .or_insert_with(|| create_module(device, &shader_source(outputs, slots)))
            .clone();
        let compiled = Arc::new(compile(device, &module, outputs, kernel, slots));
        lock(&self.pipelines).insert(key, compiled.clone());
        compiled
    }

    /// The pipeline of a generated layout, compiled on first use; past
    /// [`MAX_GENERATED_PIPELINES`] layouts the least recently used one is
    /// dropped.
    fn generated(
        &self,
        device: &wgpu::Device,
        outputs: Outputs,
        slots: u32,
        layout: &GeneratedLayout,
    ) -> Arc<CompiledKernel> {
        let mut cache = lock(&self.generated);
        cache.tick += 1;
        let tick = cache.tick;
        if let Some((compiled, used)) = cache.by_layout.get_mut(layout) {
            *used = tick;
            if let Some((_, c)) = compiled.iter().find(|(k, _)| *k == (outputs, slots)) {
                return c.clone();
            }
        }
        let module = create_module(device, &module_source(outputs, slots, Some(layout)));
        let compiled = Arc::new(compile(device, &module, outputs, layout.kernel(), slots));
        if !cache.by_layout.contains_key(layout) && cache.by_layout.len() >= MAX_GENERATED_PIPELINES
        {
            let oldest = cache
                .by_layout
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                cache.by_layout.remove(&oldest);
            }
        }
        let (variants, _) = cache
            .by_layout
            .entry(layout.clone())
            .or_insert_with(|| (Vec::new(), tick));
        variants.push(((outputs, slots), compiled.clone()));
        compiled
    }

    /// Generated layouts whose pipelines are held (for tests of the bound).
    pub fn generated_pipelines(&self) -> usize {
        lock(&self.generated).by_layout.len()
    }
}

fn create_module(device: &wgpu::Device, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("wgpu-split gather"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// A poisoned lock still holds a consistent map (every insert is one call).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn compile(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    outputs: Outputs,
    kernel: Kernel,
    slots: u32,
) -> CompiledKernel {
    let entry = kernel.entry_point(outputs);
    let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let table = match outputs {
        Outputs::Arena => storage(0, true),
        Outputs::Separate => wgpu::BindGroupLayoutEntry {
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            ..storage(0, true)
        },
    };
    let mut entries = vec![table, storage(kernel.src_binding(), true)];
    entries.extend((0..slots).map(|slot| storage(kernel.dst_binding(slot, slots), false)));
    let label = format!("{entry} x{slots}");
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(&label),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&label),
        layout: Some(&pipeline_layout),
        module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    CompiledKernel { layout, pipeline }
}
