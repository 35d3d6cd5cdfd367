//! What tests and tools need of the plan's insides: the table ABI, the
//! passes and their bindings, the generated layouts, the shader keys'
//! variants. Not part of the supported API: it changes with the kernels.

pub use super::binding::{BoundDispatch, BoundPlan, SlotBinding};
pub use super::classes::{
    DISCRETE_GPU_BYTES_PER_SECOND, INTEGRATED_GPU_BYTES_PER_SECOND, UNKNOWN_GPU_BYTES_PER_SECOND,
};
pub use super::kernel_choice::MAX_GROUP_MODULES;
pub use super::kernels::{
    COPY_VEC4S, CopyOutput, GeneratedLayout, MAX_COPY_OUTPUTS, MAX_ROW_BLOCK_BITS,
    MIN_WORKING_PERCENT, Piece, RowBlock, RowCopies, RowOutput, RowStreams, STREAM_VEC4S,
    StreamOutput,
};
pub use super::passes::{DstWindow, Pass};
pub use super::recording::{
    RecordedBinding, RecordedBuffer, RecordedCommand, RecordedModule, Recording, SPARE_BUFFER_BYTES,
};
pub use super::regions::Region;
pub use super::shader::{BindingKind, LayoutEntry, MAX_UNIFORM_ENTRIES};
pub use super::table::fingerprint;
pub use super::table::{
    FLAG_ALIGNED, FLAG_PAD, FLAG_SKIP, TableEntry, TableHeader, UNITS_PER_INVOCATION,
    WORKGROUP_SIZE,
};
pub use super::wgsl::Bindings;

use super::kernels::Kernel;
use crate::element::ElementType;
use crate::semantics::ResolvedSplit;

/// The file of `kernel`'s template under `shaders/`.
pub fn template_file(kernel: Kernel) -> &'static str {
    kernel.spec().template.file()
}

/// The sample splits `kernel`'s spec lists: splits it plans when forced, in
/// both placements. Every suite of modules (the naga validation, the Dawn
/// replay, the access trace, the rendered WGSL) iterates them, so a kernel
/// in the table is in every suite.
pub fn samples(kernel: Kernel) -> Vec<(ResolvedSplit, ElementType)> {
    kernel
        .samples()
        .map(|s| (s.resolve(), s.element_type))
        .collect()
}
