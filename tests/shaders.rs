//! Every kernel module the library compiles (the prelude Rust fills in,
//! then the kernel's own WGSL) validates with naga with no optional
//! capability, so it runs on every adapter; and the Rust/WGSL contract
//! cannot drift: the WGSL structs are reflected and every member's offset
//! and size must equal the Rust struct's, the bindings must be the binding
//! table's, the constants and workgroup sizes Rust's.

#[allow(dead_code)]
#[path = "../examples/webgpu_recordings/permuted_layouts.rs"]
mod permuted_layouts;

use std::mem::{offset_of, size_of};

use permuted_layouts::{concat_undoing as undoing, region};

use naga::valid::{Capabilities, ValidationFlags, Validator};
use wgpu_split::plan::ConcatPlan;
use wgpu_split::plan::internals::{
    BindingKind, FLAG_ALIGNED, FLAG_PAD, FLAG_SKIP, MAX_UNIFORM_ENTRIES, TableEntry, TableHeader,
    UNITS_PER_INVOCATION, WORKGROUP_SIZE,
};
use wgpu_split::plan::internals::{
    Bindings, ConcatRecord, GeneratedLayout, PermuteHeader, PermuteRecord, PlainRegion,
    RECORD_RANK, TILE, TileRecord,
};
use wgpu_split::plan::{
    CostModel, Form, Kernel, LaneOrder, Placement, PlanLimits, PlanOptions, ShaderKey, SplitPlan,
    Strategy,
};
use wgpu_split::plan::{PermutedConcatPlan, PermutedPlan};
use wgpu_split::{ElementType, ResolvedConcat, ResolvedSplit};
use wgpu_split::{PermutedSplit, PieceMove};

/// The table-driven kernels' modules: the arena (1 slot), and separate
/// destinations with 1, 2, WebGPU's default (7), lavapipe's (31) and the
/// most any device gets (32) slots.
fn table_driven_keys() -> Vec<ShaderKey> {
    let mut keys = Vec::new();
    for (kernel, lanes) in Kernel::ALL
        .into_iter()
        .flat_map(|k| [LaneOrder::Blocked, LaneOrder::Striped].map(|l| (k, l)))
    {
        keys.extend(ShaderKey::table_driven(kernel, Placement::Arena, 1, lanes));
        keys.extend(
            ShaderKey::table_driven(kernel, Placement::Arena, 1, lanes).map(|k| k.traced(true)),
        );
        for slots in [1, 2, 7, 31, 32] {
            let key = ShaderKey::table_driven(kernel, Placement::Separate, slots, lanes);
            keys.extend(key.clone().map(|k| k.traced(true)));
            // With separate destinations, also the variants that skip
            // entries (where destinations would alias), bind the source
            // writable (the input in an output's buffer) and read shifts off
            // the bindings (unaligned offsets), alone and together.
            keys.extend(key.clone().map(|k| k.skipping(true)));
            keys.extend(key.clone().map(|k| k.with_writable_source(true)));
            keys.extend(key.clone().map(|k| k.with_shifts(true)));
            keys.extend(key.clone().map(|k| {
                k.skipping(true)
                    .with_writable_source(true)
                    .with_shifts(true)
            }));
            keys.extend(key);
        }
    }
    keys
}

fn validated(source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    module
}

/// The module's one entry point, `split`, at the Rust workgroup size.
fn check_entry_point(module: &naga::Module, what: &str) {
    assert_eq!(module.entry_points.len(), 1, "{what}");
    let entry = &module.entry_points[0];
    assert_eq!(entry.name, "split", "{what}");
    assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1], "{what}");
}

/// The plans of `t` `shape` split on axis 1 with `kernel` forced, in both
/// placements and both lane orders (blocked by lavapipe's model, striped
/// by a GPU's), each module validated in every variant.
fn check_generated(kernel: Kernel, t: ElementType, shape: &[usize], lengths: Vec<usize>) {
    let models = [CostModel::LAVAPIPE, CostModel::DISCRETE_GPU];
    check_generated_with(&models, kernel, t, shape, lengths);
}

/// [`check_generated`] with the lane orders of `models` only.
fn check_generated_with(
    models: &[CostModel],
    kernel: Kernel,
    t: ElementType,
    shape: &[usize],
    lengths: Vec<usize>,
) {
    let split = ResolvedSplit::new(shape, 1, lengths, true).unwrap();
    for (placement, &model) in [Placement::Separate, Placement::Arena]
        .into_iter()
        .flat_map(|p| models.iter().map(move |m| (p, m)))
    {
        let options = PlanOptions::default()
            .strategy(Strategy::Auto(model))
            .in_compute_pass()
            .kernel(kernel)
            .form(Form::PerLayout)
            .placement(placement);
        let plan = SplitPlan::new(&split, t, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
        assert_eq!(plan.kernel(), kernel, "{t} {shape:?}");
        let key = plan
            .shaders()
            .into_iter()
            .next()
            .expect("a plan with dispatches");
        assert!(key.is_generated());
        let every = key
            .clone()
            .skipping(true)
            .with_writable_source(true)
            .with_shifts(true);
        for key in [
            key.clone(),
            key.clone().skipping(true),
            key.with_shifts(true),
            every,
        ] {
            let module = validated(&key.source());
            check_entry_point(&module, &format!("{kernel} {t} {shape:?}"));
            check_bindings(&module, &key);
        }
    }
}

#[test]
fn every_table_driven_module_validates_without_optional_capabilities() {
    for key in table_driven_keys() {
        let module = validated(&key.source());
        check_entry_point(&module, &format!("{key:?}"));
    }
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
        check_generated(Kernel::RowBlocks, t, &shape, lengths);
    }
}

/// Row blocks join concats (striped lanes, the looped form): whole-word
/// pieces (a word stored a field), sub-word ones (or-ed into a cleared
/// tile), one-element columns, each in every variant, the skipping one
/// keeping a mask of what it placed.
#[test]
fn generated_row_block_concats_validate() {
    for (t, shape, lengths) in [
        (ElementType::Float16, vec![64, 6], vec![1, 2, 3]),
        (ElementType::Float, vec![64, 85], vec![4, 1, 80]),
        (ElementType::Int4, vec![256, 7], vec![3, 4]),
        (ElementType::Float16, vec![64, 7], vec![1; 7]),
    ] {
        let split = ResolvedSplit::new(&shape, 1, lengths, true).unwrap();
        let concat = ResolvedConcat::inverse_of(&split).unwrap();
        for placement in [Placement::Separate, Placement::Arena] {
            let options = PlanOptions::default()
                .strategy(Strategy::Auto(CostModel::DISCRETE_GPU))
                .kernel(Kernel::RowBlocks)
                .placement(placement);
            let plan = ConcatPlan::new(&concat, t, &PlanLimits::WEBGPU_DEFAULT, &options)
                .unwrap_or_else(|e| panic!("{t} {shape:?}: {e}"));
            let key = plan.mirror().shaders().into_iter().next().unwrap();
            for key in [
                key.clone(),
                key.clone().skipping(true),
                key.with_shifts(true),
            ] {
                let module = validated(&key.source());
                check_entry_point(&module, &format!("row_blocks concat {t} {shape:?}"));
                check_bindings(&module, &key);
            }
        }
    }
}

#[test]
fn generated_row_copy_kernels_validate() {
    // Vec4-aligned runs, equal and unequal, one row and many, in both
    // placements.
    for (t, shape, lengths) in [
        (ElementType::Float, vec![64, 64], vec![16, 32, 16]),
        (ElementType::Float16, vec![16, 2304], vec![768; 3]),
        (ElementType::Float, vec![1, 4096], vec![1024; 4]),
    ] {
        check_generated(Kernel::Vec4, t, &shape, lengths);
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
        check_generated(Kernel::Funnel, t, &shape, lengths);
    }
    // Short runs of whole words beside long ones (YOLOv5's head).
    for (t, shape, lengths) in [
        (ElementType::Float, vec![16, 85], vec![4, 1, 80]),
        (ElementType::Int4, vec![32, 520], vec![8, 512]),
    ] {
        check_generated(Kernel::Funnel, t, &shape, lengths);
    }
    // With striped lanes, short runs at any bit offset (a byte, an f16 at
    // an odd element) beside long ones.
    for (t, shape, lengths) in [
        (ElementType::Int8, vec![64, 1023], vec![511, 1, 511]),
        (ElementType::Float16, vec![64, 1000], vec![499, 1, 500]),
    ] {
        check_generated_with(
            &[CostModel::DISCRETE_GPU],
            Kernel::Funnel,
            t,
            &shape,
            lengths,
        );
    }
}

#[test]
fn arena_tables_of_row_copies_and_row_streams_are_uniform_up_to_32_entries() {
    let table_of = |t, shape: &[usize], lengths: Vec<usize>, kernel| {
        let split = ResolvedSplit::new(shape, 1, lengths, true).unwrap();
        let options = PlanOptions::default()
            .strategy(Strategy::Gather)
            .placement(Placement::Arena);
        let (kernel, form) = kernel;
        let options = options.kernel(kernel).form(form);
        let plan = SplitPlan::new(&split, t, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
        assert_eq!((plan.kernel(), plan.form()), (kernel, form));
        let key = plan.shaders().into_iter().next().unwrap();
        check_bindings(&validated(&key.source()), &key);
        let layout = key.bind_group_layout();
        let table = *layout
            .iter()
            .find(|e| e.binding == Bindings::TABLE)
            .unwrap();
        (table.kind, table.min_binding_size)
    };
    let entries = |n: u64| TableHeader::SIZE + n * TableEntry::SIZE;
    // QKV: three entries, read from a uniform buffer.
    assert_eq!(
        table_of(
            ElementType::Float16,
            &[16, 2304],
            vec![768; 3],
            (Kernel::Vec4, Form::PerLayout)
        ),
        (BindingKind::Uniform, entries(3))
    );
    // Row streams: 32 outputs of 17 bytes in a uniform table, 33 in storage.
    let n = MAX_UNIFORM_ENTRIES;
    let streams = |outputs: usize| {
        table_of(
            ElementType::Uint8,
            &[16, 17 * outputs],
            vec![17; outputs],
            (Kernel::Funnel, Form::PerLayout),
        )
    };
    assert_eq!(streams(n), (BindingKind::Uniform, entries(n as u64)));
    assert_eq!(streams(n + 1), (BindingKind::ReadOnlyStorage, entries(1)));
    // The table-driven kernels keep a storage table in an arena.
    assert_eq!(
        table_of(
            ElementType::Float,
            &[16, 64],
            vec![16; 4],
            (Kernel::Vec4, Form::Table)
        )
        .0,
        BindingKind::ReadOnlyStorage
    );
}

/// Every binding of the module is the binding table's: the table, the
/// source and one destination per slot, of the kernel's unit.
fn check_bindings(module: &naga::Module, key: &ShaderKey) {
    let binding = |name: &str| {
        module
            .global_variables
            .iter()
            .find(|(_, g)| g.name.as_deref() == Some(name))
            .and_then(|(_, g)| g.binding.as_ref())
            .unwrap_or_else(|| panic!("no binding {name} in {key:?}"))
            .binding
    };
    let unit = if key.kernel().unit_bits() == 128 {
        "vec4"
    } else {
        "words"
    };
    assert_eq!(binding("table"), Bindings::TABLE);
    // The table's address space is the bind group layout's kind.
    let space = module
        .global_variables
        .iter()
        .find(|(_, g)| g.name.as_deref() == Some("table"))
        .map(|(_, g)| g.space)
        .unwrap();
    let layout = key.bind_group_layout();
    let table = layout
        .iter()
        .find(|e| e.binding == Bindings::TABLE)
        .unwrap();
    match table.kind {
        BindingKind::Uniform => assert_eq!(space, naga::AddressSpace::Uniform, "{key:?}"),
        _ => assert!(
            matches!(space, naga::AddressSpace::Storage { .. }),
            "{key:?}"
        ),
    }
    assert_eq!(binding(&format!("src_{unit}")), Bindings::SOURCE);
    for slot in 0..key.slots() {
        let dst = binding(&format!("dst_{unit}_{slot}"));
        assert_eq!(dst, Bindings::destination(slot), "{key:?}");
    }
    let bound = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.binding.is_some());
    let trace = u32::from(key.is_traced());
    assert_eq!(bound.count() as u32, 2 + key.slots() + trace, "{key:?}");
}

#[test]
fn every_destination_slot_has_the_binding_rust_expects() {
    for key in table_driven_keys() {
        check_bindings(&validated(&key.source()), &key);
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
fn the_table_entry_matches_rust_member_for_member() {
    let rust = [
        offset_of!(TableEntry, first_invocation),
        offset_of!(TableEntry, dst_unit),
        offset_of!(TableEntry, first_bit),
        offset_of!(TableEntry, len_bits),
        offset_of!(TableEntry, run_bits),
        offset_of!(TableEntry, block_bits),
        offset_of!(TableEntry, run_phase_bits),
        offset_of!(TableEntry, src_bit),
        offset_of!(TableEntry, flags),
        offset_of!(TableEntry, dst_slot),
        offset_of!(TableEntry, units_per_invocation),
        offset_of!(TableEntry, window_units),
    ];
    for key in table_driven_keys() {
        let (members, size) = wgsl_struct(&validated(&key.source()), "Entry");
        assert_eq!(members.len(), rust.len());
        for (i, (name, offset)) in TableEntry::FIELDS.iter().zip(rust).enumerate() {
            assert_eq!(
                (members[i].0.as_str(), members[i].1, members[i].2),
                (*name, offset as u32, 4),
                "Entry member {i}"
            );
        }
        assert_eq!(size as usize, size_of::<TableEntry>());
    }
}

#[test]
fn the_table_header_matches_rust_and_entries_follow_it() {
    for key in table_driven_keys() {
        let (members, _) = wgsl_struct(&validated(&key.source()), "Table");
        let rust = [
            ("invocations", offset_of!(TableHeader, invocations)),
            ("entry_count", offset_of!(TableHeader, entry_count)),
            (
                "source_window_units",
                offset_of!(TableHeader, source_window_units),
            ),
        ];
        for (i, (name, offset)) in rust.iter().enumerate() {
            assert_eq!(
                (members[i].0.as_str(), members[i].1, members[i].2),
                (*name, *offset as u32, 4),
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
        // The table binding of the layout holds at least the header and an
        // entry per uniform slot (the bind group layout's minimum size).
        let entries_bound = if key.placement() == Placement::Separate {
            u64::from(key.slots())
        } else {
            1
        };
        assert_eq!(
            key.min_table_bytes(),
            (size_of::<TableHeader>() + size_of::<TableEntry>()) as u64
                + (entries_bound - 1) * size_of::<TableEntry>() as u64
        );
    }
}

/// Every template file under `shaders/`.
fn templates() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn shared_constants_have_the_rust_values_and_are_defined_only_in_rust() {
    let expected = [
        ("WORKGROUP_SIZE", u64::from(WORKGROUP_SIZE)),
        ("UNITS_PER_INVOCATION", UNITS_PER_INVOCATION),
        ("FLAG_PAD", u64::from(FLAG_PAD)),
        ("FLAG_ALIGNED", u64::from(FLAG_ALIGNED)),
        ("FLAG_SKIP", u64::from(FLAG_SKIP)),
    ];
    for key in table_driven_keys() {
        let module = validated(&key.source());
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
        }
    }
    // The templates name the constants; only the prelude defines them, from
    // holes Rust fills.
    for (file, text) in templates() {
        for (name, _) in expected {
            for line in text
                .lines()
                .filter(|l| l.contains(&format!("const {name}")))
            {
                assert!(
                    file == "prelude.wgsl" && line.contains("{{"),
                    "shaders/{file}: {line}"
                );
            }
        }
    }
}

#[test]
fn templates_are_wgsl_with_named_holes_and_no_rust_escapes() {
    // Every kernel has its template, and the templates are plain WGSL: holes
    // are `{{name}}`, fragments start with `//#fragment`, nothing is
    // escaped for Rust's format strings.
    let files: Vec<String> = templates().into_iter().map(|(f, _)| f).collect();
    for kernel in Kernel::ALL {
        let forms = wgpu_split::plan::internals::template_files(kernel);
        // A per-layout form that moves both ways may have a template per
        // direction (the funnel's row streams and concat streams): at
        // least one per form, at most one per form and direction, no file
        // twice.
        let (least, most) = (
            kernel.forms().len(),
            kernel.forms().len()
                * [kernel.moves_splits(), kernel.moves_concats()]
                    .iter()
                    .filter(|&&moves| moves)
                    .count(),
        );
        assert!(
            (least..=most).contains(&forms.len()),
            "{kernel}: {} templates for {least} forms",
            forms.len()
        );
        let mut distinct = forms.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), forms.len(), "{kernel}: {forms:?}");
        for file in forms {
            assert!(
                files.iter().any(|f| f == file),
                "{kernel}: {file} in {files:?}"
            );
        }
    }
    for (file, text) in templates() {
        assert!(!text.contains("\\n"), "shaders/{file}");
        for line in text.lines() {
            let holes = line.matches("{{").count();
            assert_eq!(holes, line.matches("}}").count(), "shaders/{file}: {line}");
        }
    }
}

#[test]
fn row_streams_skip_only_stretches_that_can_lie_past_a_row() {
    // (shape, lengths, whether each output's stretch may be empty): YOLOv5's
    // box is one vec4 per row shared by three invocations, so two of them
    // skip it, loads included; full stretches keep a `true` test.
    for (t, shape, lengths, empty) in [
        (
            ElementType::Float,
            vec![16, 85],
            vec![4, 1, 80],
            vec![true, false, false],
        ),
        (
            ElementType::Uint8,
            vec![16, 4097],
            vec![2048, 2049],
            vec![false, false],
        ),
    ] {
        let split = ResolvedSplit::new(&shape, 1, lengths, true).unwrap();
        // Blocked lanes (lavapipe's): stretches per invocation.
        let options = PlanOptions::default()
            .strategy(Strategy::Auto(CostModel::LAVAPIPE))
            .in_compute_pass()
            .kernel(Kernel::Funnel)
            .form(Form::PerLayout);
        let plan = SplitPlan::new(&split, t, &PlanLimits::WEBGPU_DEFAULT, &options).unwrap();
        let Some(GeneratedLayout::RowStreams(rs)) = plan.generated_layouts().first().copied()
        else {
            panic!("{shape:?}: no row-stream layout");
        };
        let may_be_empty: Vec<bool> = rs
            .outputs
            .iter()
            .map(|o| !o.is_short() && o.may_be_empty(rs.per_row))
            .collect();
        assert_eq!(may_be_empty, empty, "{shape:?}");
        let source = plan.shaders()[0].source();
        let streamed = rs.outputs.iter().filter(|o| !o.is_short()).count();
        let guarded = empty.iter().filter(|&&e| e).count();
        assert_eq!(source.matches("if (u0 < end) {").count(), guarded);
        assert_eq!(source.matches("if (true) {").count(), streamed - guarded);
    }
}

#[test]
fn every_kernels_sample_modules_validate_in_both_lane_orders() {
    // A kernel in the table is in this suite: its spec's samples, forced, in
    // every direction it moves, both placements and both lane orders, each module in every variant
    // (skipping, writable source, shifts, traced) validated with naga.
    let models = [CostModel::LAVAPIPE, CostModel::DISCRETE_GPU];
    for kernel in Kernel::ALL {
        for placement in [Placement::Separate, Placement::Arena] {
            for model in models {
                let options = PlanOptions::default()
                    .strategy(Strategy::Auto(model))
                    .in_compute_pass()
                    .placement(placement);
                let plans = wgpu_split::plan::internals::sample_plans(
                    kernel,
                    &PlanLimits::WEBGPU_DEFAULT,
                    &options,
                )
                .unwrap_or_else(|e| panic!("{kernel} {placement:?}: {e}"));
                for sample in plans {
                    let plan = sample.plan;
                    assert_eq!(plan.shaders()[0].lanes(), model.lanes);
                    for key in plan.shaders() {
                        for key in [
                            key.clone(),
                            key.clone()
                                .skipping(true)
                                .with_writable_source(true)
                                .with_shifts(true),
                            key.traced(true),
                        ] {
                            let module = validated(&key.source());
                            check_entry_point(&module, &format!("{key:?}"));
                            check_bindings(&module, &key);
                        }
                    }
                }
            }
        }
    }
}

/// A region of buffer `buffer` (of its own, every usage) for a recording.
fn plain(buffer: usize, size: u64) -> PlainRegion {
    region(buffer, size.next_multiple_of(4), 0, size)
}

/// The permuted moves' modules as their recordings compile them: gathers
/// of a split (words and elements) and of a concat (with its `clear`),
/// and tiles of both.
fn permuted_modules() -> Vec<(String, String)> {
    let limits = PlanLimits::WEBGPU_DEFAULT;
    let mut out = Vec::new();
    for (t, lanes) in [
        (ElementType::Float, LaneOrder::Blocked),
        (ElementType::Int4, LaneOrder::Blocked),
        (ElementType::Float, LaneOrder::Striped),
    ] {
        // Attention's heads, and a transpose of the fastest axis (tiles
        // where lanes are striped).
        let heads = PermutedSplit::split_heads(&[2, 64, 3 * 4 * 16], &[64; 3], 16).unwrap();
        let transpose = PermutedSplit::new(
            ResolvedSplit::new(&[64, 96], 1, vec![64, 32], true).unwrap(),
            vec![
                PieceMove::new(vec![64, 64], vec![1, 0]),
                PieceMove::new(vec![64, 32], vec![1, 0]),
            ],
        )
        .unwrap();
        for split in [heads, transpose] {
            let plan = PermutedPlan::new(&split, t, &limits).unwrap().lanes(lanes);
            let outputs: Vec<PlainRegion> = (0..split.output_count())
                .map(|i| plain(i + 1, plan.output_region_bytes(i)))
                .collect();
            let recording = plan
                .recording(&plain(0, plan.input_bytes()), &outputs)
                .unwrap();
            let concat = undoing(&split);
            let concat_plan = PermutedConcatPlan::new(&concat, t, &limits)
                .unwrap()
                .lanes(lanes);
            let inputs: Vec<PlainRegion> = (0..split.output_count())
                .map(|i| plain(i + 1, concat_plan.input_bytes(i)))
                .collect();
            let back = concat_plan
                .recording(&inputs, &plain(0, concat_plan.output_region_bytes()))
                .unwrap();
            for m in recording.modules.iter().chain(&back.modules) {
                out.push((m.wgsl.clone(), m.entry_point.to_string()));
            }
        }
    }
    out
}

/// The value of the WGSL constant `name` of `module`.
fn wgsl_const(module: &naga::Module, name: &str) -> Option<u32> {
    module.constants.iter().find_map(|(_, c)| {
        if c.name.as_deref() != Some(name) {
            return None;
        }
        match module.global_expressions[c.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => Some(v),
            _ => panic!("{name} is no u32 literal"),
        }
    })
}

/// The permuted moves' parameters are Rust's `#[repr(C)]` records: every
/// word a module reads is named by a constant, and each constant,
/// reflected from the compiled module, is the Rust field's word (the
/// header's, and the gather's, the concat's or the tile's record); the
/// sizes are the structs'; every entry point runs `WORKGROUP_SIZE`
/// invocations.
#[test]
fn permuted_records_match_rust_member_for_member() {
    let w = |bytes: usize| (bytes / 4) as u32;
    let header = [
        ("H_RECORDS", w(offset_of!(PermuteHeader, records))),
        (
            "H_UNITS_PER_INVOCATION",
            w(offset_of!(PermuteHeader, units_per_invocation)),
        ),
        ("H_CLEAR_WORDS", w(offset_of!(PermuteHeader, clear_words))),
        ("H_CLEAR_SHIFT", w(offset_of!(PermuteHeader, clear_shift))),
        ("HEADER", w(size_of::<PermuteHeader>())),
        ("RANK", RECORD_RANK as u32),
        ("WORKGROUP_SIZE", WORKGROUP_SIZE),
    ];
    let gather = [
        ("RECORD", w(size_of::<PermuteRecord>())),
        ("R_FIRST", w(offset_of!(PermuteRecord, first))),
        ("R_WORDS", w(offset_of!(PermuteRecord, words))),
        ("R_ELEMENTS", w(offset_of!(PermuteRecord, elements))),
        ("R_MODE", w(offset_of!(PermuteRecord, mode))),
        ("R_BITS", w(offset_of!(PermuteRecord, bits))),
        ("R_RANK", w(offset_of!(PermuteRecord, rank))),
        ("R_OFFSET", w(offset_of!(PermuteRecord, offset))),
        ("R_SRC_SHIFT", w(offset_of!(PermuteRecord, src_shift))),
        ("R_DST_SHIFT", w(offset_of!(PermuteRecord, dst_shift))),
        ("R_DIMS", w(offset_of!(PermuteRecord, dims))),
        ("R_STRIDES", w(offset_of!(PermuteRecord, strides))),
    ];
    let concat = [
        ("RECORD", w(size_of::<ConcatRecord>())),
        ("R_FIRST", w(offset_of!(ConcatRecord, first))),
        ("R_WORDS", w(offset_of!(ConcatRecord, words))),
        ("R_ELEMENTS", w(offset_of!(ConcatRecord, elements))),
        ("R_MODE", w(offset_of!(ConcatRecord, mode))),
        ("R_BITS", w(offset_of!(ConcatRecord, bits))),
        ("R_READ_RANK", w(offset_of!(ConcatRecord, read_rank))),
        ("R_READ_OFFSET", w(offset_of!(ConcatRecord, read_offset))),
        ("R_PIECE_SHIFT", w(offset_of!(ConcatRecord, piece_shift))),
        ("R_DST_SHIFT", w(offset_of!(ConcatRecord, dst_shift))),
        ("R_WRITE_RANK", w(offset_of!(ConcatRecord, write_rank))),
        ("R_WRITE_OFFSET", w(offset_of!(ConcatRecord, write_offset))),
        ("R_READ_DIMS", w(offset_of!(ConcatRecord, read_dims))),
        ("R_WRITE_DIMS", w(offset_of!(ConcatRecord, write_dims))),
    ];
    // The concat reads each view's strides RANK words after its dims.
    assert_eq!(
        offset_of!(ConcatRecord, read_strides) - offset_of!(ConcatRecord, read_dims),
        4 * RECORD_RANK
    );
    assert_eq!(
        offset_of!(ConcatRecord, write_strides) - offset_of!(ConcatRecord, write_dims),
        4 * RECORD_RANK
    );
    let tile = [
        ("RECORD", w(size_of::<TileRecord>())),
        ("R_FIRST", w(offset_of!(TileRecord, first))),
        ("R_WORKGROUPS", w(offset_of!(TileRecord, workgroups))),
        ("R_TILES_READ", w(offset_of!(TileRecord, tiles_read))),
        ("R_TILES_WRITE", w(offset_of!(TileRecord, tiles_write))),
        ("R_READ_AXIS", w(offset_of!(TileRecord, read_axis))),
        ("R_WRITE_AXIS", w(offset_of!(TileRecord, write_axis))),
        ("R_RANK", w(offset_of!(TileRecord, rank))),
        ("R_READ_AT", w(offset_of!(TileRecord, read_at))),
        ("R_WRITE_AT", w(offset_of!(TileRecord, write_at))),
        ("R_READ_SHIFT", w(offset_of!(TileRecord, read_shift))),
        ("R_WRITE_SHIFT", w(offset_of!(TileRecord, write_shift))),
        ("R_DIMS", w(offset_of!(TileRecord, dims))),
        ("R_READ_STRIDES", w(offset_of!(TileRecord, read_strides))),
        ("R_WRITE_STRIDES", w(offset_of!(TileRecord, write_strides))),
        ("TILE", TILE),
    ];
    let mut seen = [0; 3];
    for (wgsl, entry_point) in permuted_modules() {
        let module = validated(&wgsl);
        let record = wgsl_const(&module, "RECORD").expect("a RECORD constant");
        let (kind, fields): (usize, &[(&str, u32)]) = match record as usize * 4 {
            n if n == size_of::<PermuteRecord>() => (0, &gather),
            n if n == size_of::<ConcatRecord>() => (1, &concat),
            n if n == size_of::<TileRecord>() => (2, &tile),
            n => panic!("a record of {n} bytes"),
        };
        seen[kind] += 1;
        for &(name, want) in header.iter().chain(fields) {
            assert_eq!(
                wgsl_const(&module, name),
                Some(want),
                "{name} of {entry_point}"
            );
        }
        let entry = module
            .entry_points
            .iter()
            .find(|e| e.name == entry_point)
            .unwrap();
        assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1]);
    }
    assert!(
        seen.iter().all(|&n| n > 0),
        "every record kind compiled: {seen:?}"
    );
    // The templates read no record word by number.
    for file in ["permute.wgsl", "permute_tile.wgsl"] {
        let text = std::fs::read_to_string(format!("shaders/{file}")).unwrap();
        for line in text.lines() {
            // The arguments of each call of `p` (not of `group(`, ...).
            let calls = line.match_indices("p(").filter(|&(at, _)| {
                at == 0
                    || !line.as_bytes()[at - 1].is_ascii_alphanumeric()
                        && line.as_bytes()[at - 1] != b'_'
            });
            for (at, _) in calls {
                let arg = line[at + 2..].split(')').next().unwrap();
                assert!(
                    !arg.split(" + ")
                        .any(|t| t.trim_end_matches('u').parse::<u32>().is_ok()),
                    "{file}: a word read by number: {line}"
                );
            }
        }
    }
}
