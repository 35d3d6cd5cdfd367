//! The compiled gather shader: one pipeline and bind group layout per
//! [`Kernel`] and number of destination slots, built on first use and kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::plan::abi::wgsl_module;
use crate::plan::{Kernel, Outputs};

/// The WGSL source of the gather shader as compiled for outputs placed as
/// `outputs` with `slots` destination slots: `shaders/split.wgsl` with the
/// prelude Rust generates (constants, table, bindings, slot dispatchers)
/// and its per-slot part instantiated per slot ([`wgsl_module`]).
pub fn shader_source(outputs: Outputs, slots: u32) -> String {
    wgsl_module(outputs, slots, include_str!("../../shaders/split.wgsl"))
}

/// One compiled entry point with its bind group layout.
#[derive(Debug)]
pub(crate) struct CompiledKernel {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

/// Pipelines by kernel and slot count, compiled on first use. Shader
/// modules are per slot count (the prelude declares the slots).
#[derive(Debug, Default)]
pub(crate) struct Kernels {
    modules: Mutex<HashMap<(Outputs, u32), wgpu::ShaderModule>>,
    pipelines: Mutex<HashMap<(Kernel, Outputs, u32), Arc<CompiledKernel>>>,
}

impl Kernels {
    /// The pipeline of `kernel` for outputs placed as `outputs` with `slots`
    /// destination slots. Callers run this inside an error scope: a lost
    /// device fails here.
    pub fn get(
        &self,
        device: &wgpu::Device,
        kernel: Kernel,
        outputs: Outputs,
        slots: u32,
    ) -> Arc<CompiledKernel> {
        let key = (kernel, outputs, slots);
        if let Some(compiled) = lock(&self.pipelines).get(&key) {
            return compiled.clone();
        }
        let module = lock(&self.modules)
            .entry((outputs, slots))
            .or_insert_with(|| {
                device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some("wgpu-split gather"),
                    source: wgpu::ShaderSource::Wgsl(shader_source(outputs, slots).into()),
                })
            })
            .clone();
        let compiled = Arc::new(compile(device, &module, outputs, kernel, slots));
        lock(&self.pipelines).insert(key, compiled.clone());
        compiled
    }
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
