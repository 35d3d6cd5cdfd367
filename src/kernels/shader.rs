//! The one owner of "the WGSL module": a [`ShaderKey`] names a compiled
//! kernel (kernel, placement, destination slots and, for a generated
//! kernel, its layout) and renders its source; the GPU side keys its
//! pipeline cache on it.

use crate::kernels::lanes::LaneOrder;
use crate::kernels::table::{TableEntry, TableHeader};
use crate::kernels::wgsl::{Bindings, Variant, number_sites, prelude};
use crate::kernels::work::Direction;
use crate::kernels::work::Placement;
use crate::kernels::{GeneratedLayout, Kernel};

/// Most entries an arena's table holds as a uniform buffer (1.5 KiB).
pub const MAX_UNIFORM_ENTRIES: usize = 32;

/// What one compiled pipeline is: a kernel for a placement with a number of
/// destination slots, a lane order and a generated kernel's layout. Opaque:
/// it names a module ([`ShaderKey::label`]), identifies it
/// ([`ShaderKey::id`]) and renders it ([`ShaderKey::source`], with one entry
/// point, `split`); the splitter's pipeline cache is keyed on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShaderKey {
    kernel: Kernel,
    placement: Placement,
    slots: u32,
    lanes: LaneOrder,
    layout: Option<GeneratedLayout>,
    skips: bool,
    writable_source: bool,
    shifted: bool,
    traced: bool,
    direction: Direction,
}

impl ShaderKey {
    /// The key of a table-driven kernel (`layout` is `None`) or of a
    /// generated one (its layout).
    pub(crate) fn new(
        kernel: Kernel,
        placement: Placement,
        slots: u32,
        lanes: LaneOrder,
        layout: Option<GeneratedLayout>,
    ) -> Self {
        ShaderKey {
            kernel: layout.as_ref().map_or(kernel, GeneratedLayout::kernel),
            placement,
            slots,
            lanes,
            layout,
            skips: false,
            writable_source: false,
            shifted: false,
            traced: false,
            direction: Direction::Split,
        }
    }

    /// The same module moving the other way: a concat's reads its
    /// destination slots (the pieces) and writes its source (the tensor).
    pub(crate) fn for_direction(self, direction: Direction) -> Self {
        ShaderKey { direction, ..self }
    }

    analysis_pub! {
        /// The same module's access-trace variant: every load and store of
        /// the kernel also records what it touched into one more binding
        /// ([`Bindings::trace`]), for `crate::gpu::trace`. Never recorded by a
        /// plan.
        pub fn traced(self, traced: bool) -> Self {
            ShaderKey { traced, ..self }
        }
    }

    analysis_pub! {
        /// True for the access-trace variant.
        pub fn is_traced(&self) -> bool {
            self.traced
        }
    }

    analysis_pub! {
        /// How the module lays invocations over units.
        pub fn lanes(&self) -> LaneOrder {
            self.lanes
        }
    }

    analysis_pub! {
        /// The same module whose dispatches may skip table entries
        /// (`FLAG_SKIP`): the one an encode uses where two destinations'
        /// bindings would overlap.
        pub fn skipping(self, skips: bool) -> Self {
            ShaderKey { skips, ..self }
        }
    }

    analysis_pub! {
        /// The same module with the source bound `read_write`: the one an
        /// encode uses where a destination shares the input's buffer.
        pub fn with_writable_source(self, writable_source: bool) -> Self {
            ShaderKey {
                writable_source,
                ..self
            }
        }
    }

    analysis_pub! {
        /// The same module for bindings that may start before the caller's
        /// offsets (offsets that are not multiples of the binding alignment):
        /// the kernel reads each shift off its binding's length. Without it the
        /// shifts are compiled out.
        pub fn with_shifts(self, shifted: bool) -> Self {
            ShaderKey { shifted, ..self }
        }
    }

    analysis_pub! {
        /// The key of a kernel's table-driven form (`None` for a kernel without
        /// one: per-layout forms need a plan's layout).
        pub fn table_driven(
            kernel: Kernel,
            placement: Placement,
            slots: u32,
            lanes: LaneOrder,
        ) -> Option<Self> {
            kernel
                .is_table_driven()
                .then(|| ShaderKey::new(kernel, placement, slots, lanes, None))
        }
    }

    analysis_pub! {
        /// The kernel.
        pub fn kernel(&self) -> Kernel {
            self.kernel
        }
    }

    analysis_pub! {
        /// Where the outputs go.
        pub fn placement(&self) -> Placement {
            self.placement
        }
    }

    analysis_pub! {
        /// Destination bindings.
        pub fn slots(&self) -> u32 {
            self.slots
        }
    }

    analysis_pub! {
        /// The generated kernel's layout.
        pub fn layout(&self) -> Option<&GeneratedLayout> {
            self.layout.as_ref()
        }
    }

    analysis_pub! {
        /// True for a generated kernel (a module of its own per layout).
        pub fn is_generated(&self) -> bool {
            self.layout.is_some()
        }
    }

    analysis_pub! {
        /// The smallest table binding the module accepts: the header and the
        /// uniform table's entries, or the storage table's first entry.
        pub fn min_table_bytes(&self) -> u64 {
            let entries = self.uniform_entries().unwrap_or(1);
            TableHeader::SIZE + u64::from(entries) * TableEntry::SIZE
        }
    }

    /// The entries of a uniform table, or `None` for a read-only storage
    /// table of any length. Separate destinations take a uniform table of
    /// one entry per slot; a generated module whose table is one entry per
    /// output ([`GeneratedLayout::output_entries`]) takes one in an
    /// arena too, up to [`MAX_UNIFORM_ENTRIES`] (on lavapipe the row-copy
    /// kernel ran 3-5 % faster so, `docs/DEVICE.md`; a GPU's constant cache
    /// serves a table every lane reads at one address).
    pub(crate) fn uniform_entries(&self) -> Option<u32> {
        match (&self.layout, self.placement) {
            (_, Placement::Separate) => Some(self.slots.max(1)),
            (Some(layout), Placement::Arena) => layout
                .output_entries()
                .filter(|&n| n <= MAX_UNIFORM_ENTRIES)
                .map(|n| n.max(1) as u32),
            (None, Placement::Arena) => None,
        }
    }

    /// A name for logs and GPU debuggers: the kernel, its lane order, where
    /// the outputs go and its destination slots (e.g. `row_copies striped
    /// separate x4`), the module's variants after it.
    pub fn label(&self) -> String {
        let mut label = format!(
            "{} {} {} {} x{}",
            self.kernel,
            self.direction.name(),
            self.lanes.name(),
            self.placement.name(),
            self.slots
        );
        for (on, variant) in [
            (self.skips, "skipping"),
            (self.writable_source, "writable-source"),
            (self.shifted, "shifted"),
            (self.traced, "traced"),
        ] {
            if on {
                label += " ";
                label += variant;
            }
        }
        label
    }

    /// A stable id of the module: a 64-bit FNV-1a hash of its WGSL source,
    /// the same on every machine and in every process for the same module
    /// (a key for a runtime's own pipeline cache).
    pub fn id(&self) -> u64 {
        crate::kernels::table::fingerprint(self.source().as_bytes())
    }

    /// The module's entry point.
    pub fn entry_point(&self) -> &'static str {
        "split"
    }

    /// The WGSL source: the prelude, then the kernel's code, every access
    /// site numbered.
    pub fn source(&self) -> String {
        let spec = self.kernel.spec();
        let variant = Variant {
            placement: self.placement,
            slots: self.slots,
            uniform_entries: self.uniform_entries(),
            skips: self.skips,
            writable_source: self.writable_source,
            shifted: self.shifted,
            lanes: self.lanes,
            traced: self.traced,
            direction: self.direction,
        };
        let code = match (&self.layout, spec.moves.table) {
            (Some(layout), _) => layout.generated().wgsl(&variant),
            (None, Some(table)) => (table.wgsl)(&variant),
            (None, None) => {
                unreachable!("a key without a layout is a table-driven form's (ShaderKey::new)")
            }
        };
        number_sites(&(prelude(spec.name, spec.unit_bits, &variant) + &code))
    }
}

/// How a binding of a bind group layout is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum BindingKind {
    /// A uniform buffer.
    Uniform,
    /// A read-only storage buffer.
    ReadOnlyStorage,
    /// A writable storage buffer.
    Storage,
}

/// One entry of a bind group layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LayoutEntry {
    /// The binding number.
    pub binding: u32,
    /// How it is bound.
    pub kind: BindingKind,
    /// The smallest buffer binding it accepts, in bytes.
    pub min_binding_size: u64,
}

impl ShaderKey {
    analysis_pub! {
        /// The module's bind group layout: the parameter table (uniform or
        /// read-only storage, see `uniform_entries`), the source
        /// (read-only, or writable in that variant) and one writable
        /// destination per slot.
        pub fn bind_group_layout(&self) -> Vec<LayoutEntry> {
            let table = if self.uniform_entries().is_some() {
                BindingKind::Uniform
            } else {
                BindingKind::ReadOnlyStorage
            };
            let unit = self.kernel().unit_bits() / 8;
            let kind = |written: bool| {
                if written {
                    BindingKind::Storage
                } else {
                    BindingKind::ReadOnlyStorage
                }
            };
            let mut entries = vec![
                LayoutEntry {
                    binding: Bindings::TABLE,
                    kind: table,
                    min_binding_size: self.min_table_bytes(),
                },
                LayoutEntry {
                    binding: Bindings::SOURCE,
                    kind: kind(self.direction == Direction::Concat || self.writable_source),
                    min_binding_size: unit,
                },
            ];
            // A split writes its slots; a concat reads them (writable where a
            // piece shares the tensor's buffer).
            let slots_written = self.direction == Direction::Split || self.writable_source;
            entries.extend((0..self.slots()).map(|slot| LayoutEntry {
                binding: Bindings::destination(slot),
                kind: kind(slots_written),
                min_binding_size: unit,
            }));
            if self.traced {
                entries.push(LayoutEntry {
                    binding: Bindings::trace(self.slots),
                    kind: BindingKind::Storage,
                    // The header and one record.
                    min_binding_size: 24,
                });
            }
            entries
        }
    }
}
