//! The compiled gather shader: one pipeline and bind group layout per
//! [`Kernel`], looked up by kernel.

use std::collections::BTreeMap;

use crate::plan::Kernel;
use crate::plan::abi::wgsl_constants;

/// The WGSL source of the gather shader as compiled: the constants Rust
/// generates ([`wgsl_constants`]) followed by `shaders/split.wgsl`.
pub fn shader_source() -> String {
    format!(
        "{}\n{}",
        wgsl_constants(),
        include_str!("../../shaders/split.wgsl")
    )
}

/// One compiled entry point with its bind group layout.
#[derive(Debug)]
pub(crate) struct CompiledKernel {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

/// Every kernel of the shader, compiled for one device.
#[derive(Debug)]
pub(crate) struct Kernels(BTreeMap<Kernel, CompiledKernel>);

impl Kernels {
    /// Compiles the shader module and one pipeline per kernel.
    pub fn compile(device: &wgpu::Device) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("wgpu-split gather"),
            source: wgpu::ShaderSource::Wgsl(shader_source().into()),
        });
        Kernels(
            Kernel::ALL
                .iter()
                .map(|&k| (k, compile_kernel(device, &module, k)))
                .collect(),
        )
    }

    /// The compiled form of `kernel`.
    pub fn get(&self, kernel: Kernel) -> &CompiledKernel {
        // compile() builds every kernel of Kernel::ALL.
        &self.0[&kernel]
    }
}

fn compile_kernel(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    kernel: Kernel,
) -> CompiledKernel {
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
    let entry = kernel.entry_point();
    let (src, dst) = kernel.bindings();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(entry),
        entries: &[storage(0, true), storage(src, true), storage(dst, false)],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(entry),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&pipeline_layout),
        module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    CompiledKernel { layout, pipeline }
}
