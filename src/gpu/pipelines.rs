//! Compiled kernels: one pipeline and bind group layout per [`ShaderKey`]
//! (kernel, placement, destination slots and a generated kernel's layout)
//! or [`PermuteModule`] (a permuted move's destinations, element width,
//! lane order and kernel), built on first use and kept. Table-driven
//! kernels have a handful of keys per device and are kept for good;
//! generated kernels compile per layout and permuted moves per module, so
//! at most [`crate::gpu::CachePolicy::generated_pipelines`] of those are
//! kept together, the least recently used dropped past that.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::cache::{BoundedCache, lock};
use crate::kernels::permute_module::PermuteModule;
use crate::kernels::shader::{BindingKind, LayoutEntry};
use crate::plan::ShaderKey;

/// One compiled kernel with its bind group layout.
#[derive(Debug)]
pub(crate) struct CompiledKernel {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

/// What a pipeline compiled per use is compiled for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Compiled {
    /// A generated kernel's layout.
    Layout(ShaderKey),
    /// A permuted move's module.
    Permute(PermuteModule),
}

/// The compiled kernels of one device, by key.
#[derive(Debug, Default)]
pub(crate) struct Pipelines {
    table_driven: Mutex<HashMap<ShaderKey, Arc<CompiledKernel>>>,
    generated: Mutex<BoundedCache<Compiled, Arc<CompiledKernel>>>,
}

impl Pipelines {
    /// The pipeline of `key`, compiled on first use and, for a generated
    /// kernel, kept among at most `kept_generated`. Callers run this inside
    /// an error scope: a lost device fails here.
    pub fn get(
        &self,
        device: &wgpu::Device,
        key: &ShaderKey,
        kept_generated: u64,
    ) -> Arc<CompiledKernel> {
        if key.is_generated() {
            let mut cache = lock(&self.generated);
            let compiled = Compiled::Layout(key.clone());
            if let Some(kernel) = cache.get(&compiled) {
                return kernel.clone();
            }
            let kernel = Arc::new(compile(device, key));
            cache.insert(compiled, kernel.clone(), 1, kept_generated);
            return kernel;
        }
        let mut cache = lock(&self.table_driven);
        cache
            .entry(key.clone())
            .or_insert_with(|| Arc::new(compile(device, key)))
            .clone()
    }

    /// The pipeline of a permuted move's `module` (over the module's
    /// explicit bind group layout, the one its recordings declare), compiled on first use and kept
    /// among the `kept` generated pipelines. Callers run this inside an
    /// error scope.
    pub fn permute(
        &self,
        device: &wgpu::Device,
        module: &PermuteModule,
        kept: u64,
    ) -> Arc<CompiledKernel> {
        let mut cache = lock(&self.generated);
        let compiled = Compiled::Permute(*module);
        if let Some(kernel) = cache.get(&compiled) {
            return kernel.clone();
        }
        let label = format!("wgpu-split permute {module:?}");
        let layout = bind_group_layout(device, module.layout(), &label);
        let source = module.source();
        let kernel = Arc::new(pipeline(
            device,
            &label,
            &source,
            module.entry_point(),
            layout,
        ));
        cache.insert(compiled, kernel.clone(), 1, kept);
        kernel
    }

    /// Pipelines of generated kernels and permuted moves held.
    pub fn generated(&self) -> usize {
        lock(&self.generated).len()
    }

    /// Drops the generated kernels' pipelines.
    pub fn clear_generated(&self) {
        lock(&self.generated).clear();
    }

    /// Keeps at most `kept` generated pipelines, the most recently used.
    pub fn shrink_generated(&self, kept: u64) {
        lock(&self.generated).shrink_to(kept);
    }
}

/// The bind group layout of `entries` (a module's own, as its key or the
/// permuted module names them: what the recordings bind too).
fn bind_group_layout(
    device: &wgpu::Device,
    entries: Vec<LayoutEntry>,
    label: &str,
) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = entries
        .into_iter()
        .map(|e| wgpu::BindGroupLayoutEntry {
            binding: e.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match e.kind {
                    BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
                    BindingKind::ReadOnlyStorage => {
                        wgpu::BufferBindingType::Storage { read_only: true }
                    }
                    BindingKind::Storage => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: wgpu::BufferSize::new(e.min_binding_size),
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

fn compile(device: &wgpu::Device, key: &ShaderKey) -> CompiledKernel {
    let label = format!(
        "wgpu-split {} {} x{}",
        key.kernel(),
        key.placement().name(),
        key.slots()
    );
    let layout = bind_group_layout(device, key.bind_group_layout(), &label);
    pipeline(device, &label, &key.source(), key.entry_point(), layout)
}

/// The compute pipeline of `source`'s `entry_point` over `layout`, the
/// module's explicit bind group layout.
fn pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry_point: &str,
    layout: wgpu::BindGroupLayout,
) -> CompiledKernel {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(entry_point),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    CompiledKernel { layout, pipeline }
}
