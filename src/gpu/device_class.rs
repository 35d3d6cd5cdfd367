//! The adapter class that picks a documented cost model when nothing was
//! measured.

use crate::plan::DeviceClass;

impl DeviceClass {
    /// The class of an adapter from what wgpu reports: software rasterisers by
    /// device type or by name (lavapipe, llvmpipe, SwiftShader, WARP), then
    /// wgpu's device type.
    pub fn of_adapter(info: &wgpu::AdapterInfo) -> DeviceClass {
        const SOFTWARE: [&str; 5] = [
            "llvmpipe",
            "lavapipe",
            "swiftshader",
            "microsoft basic render driver",
            "warp",
        ];
        let names = format!("{} {}", info.name, info.driver).to_lowercase();
        if info.device_type == wgpu::DeviceType::Cpu || SOFTWARE.iter().any(|s| names.contains(s)) {
            return DeviceClass::Software;
        }
        match info.device_type {
            wgpu::DeviceType::DiscreteGpu => DeviceClass::DiscreteGpu,
            wgpu::DeviceType::IntegratedGpu => DeviceClass::IntegratedGpu,
            _ => DeviceClass::Unknown,
        }
    }
}
