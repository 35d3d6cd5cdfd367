//! The layouts of the kernels generated per split geometry (row blocks and
//! row streams): one type for the planner to hand to the GPU side, which
//! compiles and caches a pipeline per layout.

use super::abi::Kernel;
use super::row_block::RowBlock;
use super::row_streams::RowStreams;

/// The layout a generated kernel is compiled for. It does not depend on the
/// row count or on where the caller's buffers start, so a runtime compiles
/// one per split node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GeneratedLayout {
    /// [`Kernel::Rows`]: blocks of whole short rows.
    RowBlock(RowBlock),
    /// [`Kernel::Streams`]: stretches of long runs inside one row.
    RowStreams(RowStreams),
}

impl GeneratedLayout {
    /// The kernel this layout generates.
    pub fn kernel(&self) -> Kernel {
        match self {
            GeneratedLayout::RowBlock(_) => Kernel::Rows,
            GeneratedLayout::RowStreams(_) => Kernel::Streams,
        }
    }

    /// Its WGSL entry point, appended to the gather shader's module (for
    /// an arena when `arena`, else for separate destinations).
    pub fn wgsl(&self, arena: bool) -> String {
        match self {
            GeneratedLayout::RowBlock(rb) => rb.wgsl(arena),
            GeneratedLayout::RowStreams(rs) => rs.wgsl(arena),
        }
    }

    /// Invocations of its one dispatch for `outer` rows.
    pub(crate) fn invocations(&self, outer: u64) -> u64 {
        match self {
            GeneratedLayout::RowBlock(rb) => rb.blocks(outer),
            GeneratedLayout::RowStreams(rs) => rs.invocations(outer),
        }
    }
}
