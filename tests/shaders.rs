//! The shader as the library compiles it (Rust-generated constants followed by
//! `shaders/split.wgsl`) validates with naga with no optional capability, so
//! it runs on every adapter; and the Rust/WGSL contract cannot drift: the
//! WGSL structs are reflected and every member's offset and size must equal
//! the Rust struct's, the constants and workgroup sizes must be Rust's.

use std::mem::{offset_of, size_of};

use naga::valid::{Capabilities, ValidationFlags, Validator};
use wgpu_split::plan::internals::{
    FLAG_ALIGNED, FLAG_PAD, TableEntry, TableHeader, UNITS_PER_INVOCATION, WORKGROUP_SIZE,
};
use wgpu_split::plan::{
    CostModel, Kernel, Placement, PlanLimits, PlanOptions, SplitPlan, Strategy,
};
use wgpu_split::{ElementType, ResolvedSplit};

/// Modules the GPU path compiles: the arena (1 slot), and separate
/// destinations with WebGPU's default (7), lavapipe's (31) and the most any
/// device gets (32) slots.
fn every_module() -> Vec<(Placement, u32)> {
    let mut modules = vec![(Placement::Arena, 1)];
    modules.extend([1, 2, 7, 31, 32].map(|s| (Placement::Separate, s)));
    modules
}

fn module() -> naga::Module {
    module_with(Placement::Arena, 1)
}

fn module_with(outputs: Placement, slots: u32) -> naga::Module {
    validated(&wgpu_split::gpu::shader_source(outputs, slots))
}

fn validated(source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    module
}

#[test]
fn generated_row_block_kernels_validate() {
    // Short runs of several widths, in both placements, up to the largest
    // block (64 words).
    for (t, shape, lengths) in [
        (ElementType::Float16, vec![64, 6], vec![1, 2, 3]),
        (ElementType::Int4, vec![256, 7], vec![3, 4]),
        (ElementType::Float, vec![64, 16], vec![1, 14, 1]),
        (ElementType::Double, vec![8, 5], vec![2, 3]),
    ] {
        let split = ResolvedSplit::new(&shape, 1, lengths, true).unwrap();
        for outputs in [Placement::Separate, Placement::Arena] {
            let options = PlanOptions::default()
                .strategy(Strategy::Gather)
                .outputs(outputs);
            let plan = SplitPlan::new(&split, t, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
            assert_eq!(plan.kernel(), Kernel::RowBlocks, "{t} {shape:?}");
            let module = validated(&wgpu_split::gpu::plan_shader_source(&plan));
            let entry = module
                .entry_points
                .iter()
                .find(|e| e.name == Kernel::RowBlocks.entry_point(outputs))
                .expect("the row-block entry point");
            assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1]);
        }
    }
}

#[test]
fn generated_row_stream_kernels_validate() {
    // Long unaligned runs of several widths, in both placements: one, three
    // and five straddling outputs, more straddles than invocations per row.
    for (t, shape, lengths) in [
        (ElementType::Uint8, vec![16, 4097], vec![2048, 2049]),
        (ElementType::Int4, vec![32, 4099], vec![1000, 1000, 2099]),
        (ElementType::Uint8, vec![16, 90], vec![17, 17, 17, 17, 22]),
    ] {
        let split = ResolvedSplit::new(&shape, 1, lengths, true).unwrap();
        for outputs in [Placement::Separate, Placement::Arena] {
            let options = PlanOptions::default()
                .strategy(Strategy::Auto(CostModel::LAVAPIPE))
                .outputs(outputs);
            let plan = SplitPlan::new(&split, t, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
            assert_eq!(plan.kernel(), Kernel::RowStreams, "{t} {shape:?}");
            let module = validated(&wgpu_split::gpu::plan_shader_source(&plan));
            let entry = module
                .entry_points
                .iter()
                .find(|e| e.name == Kernel::RowStreams.entry_point(outputs))
                .expect("the row-stream entry point");
            assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1]);
        }
    }
}

/// `(name, offset, size)` of every member of the WGSL struct `name`, and the
/// struct's size.
fn wgsl_struct(module: &naga::Module, name: &str) -> (Vec<(String, u32, u32)>, u32) {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).unwrap();
    let (_, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no struct {name} in the shader"));
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct");
    };
    let members = members
        .iter()
        .map(|m| {
            let size = match module.types[m.ty].inner {
                // A runtime-sized array's size is its stride per element.
                naga::TypeInner::Array { stride, .. } => stride,
                _ => layouter[m.ty].size,
            };
            (m.name.clone().unwrap_or_default(), m.offset, size)
        })
        .collect();
    (members, *span)
}

#[test]
fn the_compiled_shader_validates_without_optional_capabilities() {
    for (outputs, slots) in every_module() {
        let module = module_with(outputs, slots);
        for kernel in Kernel::GENERIC {
            for outputs in [Placement::Arena, Placement::Separate] {
                let name = kernel.entry_point(outputs);
                let entry = module
                    .entry_points
                    .iter()
                    .find(|e| e.name == name)
                    .unwrap_or_else(|| panic!("no entry point {name}"));
                assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1], "{name}");
            }
        }
    }
}

#[test]
fn every_destination_slot_has_the_binding_rust_expects() {
    for (outputs, slots) in every_module() {
        let module = module_with(outputs, slots);
        let binding = |name: &str| {
            module
                .global_variables
                .iter()
                .find(|(_, g)| g.name.as_deref() == Some(name))
                .and_then(|(_, g)| g.binding.as_ref())
                .unwrap_or_else(|| panic!("no binding {name} with {slots} slots"))
                .binding
        };
        assert_eq!(binding("table"), 0);
        assert_eq!(binding("src_words"), Kernel::Words.src_binding());
        assert_eq!(binding("src_vec4"), Kernel::Vec4.src_binding());
        for slot in 0..slots {
            let words = binding(&format!("dst_words_{slot}"));
            let vec4 = binding(&format!("dst_vec4_{slot}"));
            assert_eq!(words, Kernel::Words.dst_binding(slot, slots));
            assert_eq!(vec4, Kernel::Vec4.dst_binding(slot, slots));
        }
    }
}

#[test]
fn the_table_entry_matches_rust_member_for_member() {
    let (members, size) = wgsl_struct(&module(), "Entry");
    let rust = [
        ("first_invocation", offset_of!(TableEntry, first_invocation)),
        ("dst_unit", offset_of!(TableEntry, dst_unit)),
        ("first_bit", offset_of!(TableEntry, first_bit)),
        ("len_bits", offset_of!(TableEntry, len_bits)),
        ("run_bits", offset_of!(TableEntry, run_bits)),
        ("block_bits", offset_of!(TableEntry, block_bits)),
        ("run_phase_bits", offset_of!(TableEntry, run_phase_bits)),
        ("src_bit", offset_of!(TableEntry, src_bit)),
        ("flags", offset_of!(TableEntry, flags)),
        ("dst_slot", offset_of!(TableEntry, dst_slot)),
        (
            "units_per_invocation",
            offset_of!(TableEntry, units_per_invocation),
        ),
    ];
    for (i, (name, offset)) in rust.iter().enumerate() {
        assert_eq!(
            (members[i].0.as_str(), members[i].1, members[i].2),
            (*name, *offset as u32, 4),
            "Entry member {i}"
        );
    }
    // The rest is padding, up to the Rust size.
    assert!(members[rust.len()..].iter().all(|m| m.0.starts_with("pad")));
    assert_eq!(size as usize, size_of::<TableEntry>());
}

#[test]
fn the_table_header_matches_rust_and_entries_follow_it() {
    for (outputs, slots) in every_module() {
        table_header_matches(&module_with(outputs, slots));
    }
}

fn table_header_matches(module: &naga::Module) {
    let (members, _) = wgsl_struct(module, "Table");
    let rust = [
        ("invocations", offset_of!(TableHeader, invocations), 4),
        ("entry_count", offset_of!(TableHeader, entry_count), 4),
    ];
    for (i, (name, offset, size)) in rust.iter().enumerate() {
        assert_eq!(
            (members[i].0.as_str(), members[i].1, members[i].2),
            (*name, *offset as u32, *size),
            "Table member {i}"
        );
    }
    let entries = members.last().unwrap();
    assert_eq!(
        (entries.0.as_str(), entries.1, entries.2),
        (
            "entries",
            size_of::<TableHeader>() as u32,
            size_of::<TableEntry>() as u32
        ),
        "entries start after the header, one TableEntry per element"
    );
}

#[test]
fn shared_constants_have_the_rust_values_and_are_defined_only_in_rust() {
    let module = module();
    let expected = [
        ("WORKGROUP_SIZE", u64::from(WORKGROUP_SIZE)),
        ("UNITS_PER_INVOCATION", UNITS_PER_INVOCATION),
        ("FLAG_PAD", u64::from(FLAG_PAD)),
        ("FLAG_ALIGNED", u64::from(FLAG_ALIGNED)),
    ];
    for (name, value) in expected {
        let (_, constant) = module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no constant {name}"));
        let literal = match module.global_expressions[constant.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => u64::from(v),
            ref other => panic!("{name} is {other:?}"),
        };
        assert_eq!(literal, value, "{name}");
        let file = include_str!("../shaders/split.wgsl");
        assert!(
            !file.contains(&format!("const {name}")),
            "{name} must come only from the generated header"
        );
    }
}
