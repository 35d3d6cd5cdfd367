//! The planner, without a GPU: arena layout, access unit, dispatch counts,
//! windows and grids within the limits, and the parameter table interpreted
//! bit by bit (the shader's contract) against the host path.

mod common;

use common::{Rng, random_tensor, tiny};
use proptest::prelude::*;
use wgpu_split::plan::abi::{TableEntry, TableHeader, UNITS_PER_INVOCATION, WORKGROUP_SIZE};
use wgpu_split::plan::{CostModel, Kernel, PlanLimits, SplitPlan, Strategy};
use wgpu_split::{ElementType, Error, HostTensor, OnnxSplitToSequence, ResolvedSplit, host};

/// Reads the table of every pass as the shader does and moves bits one at a
/// time; returns the arena. Asserts that no bit is written twice in one pass
/// by different invocations and that every access stays inside its windows.
fn emulate(plan: &SplitPlan, input: &[u8]) -> Vec<u8> {
    let mut arena = vec![0u8; plan.arena_bytes() as usize];
    let unit = plan.kernel().unit_bits();
    let get = |bytes: &[u8], bit: u64| (bytes[(bit / 8) as usize] >> (bit % 8)) & 1;
    for c in plan.copies() {
        assert!(
            c.size_bytes % 4 == 0
                && c.src_offset_bytes % 4 == 0
                && c.src_stride_bytes % 4 == 0
                && c.dst_offset_bytes % 4 == 0
        );
        for k in 0..c.count {
            let (src, dst) = (
                (c.src_offset_bytes + k * c.src_stride_bytes) as usize,
                (c.dst_offset_bytes + k * c.size_bytes) as usize,
            );
            arena[dst..dst + c.size_bytes as usize]
                .copy_from_slice(&input[src..src + c.size_bytes as usize]);
        }
    }
    for pass in plan.passes() {
        let table = &plan.table()[pass.table_bytes.start as usize..pass.table_bytes.end as usize];
        let header: TableHeader = bytemuck::pod_read_unaligned(&table[..16]);
        let entries: Vec<TableEntry> = bytemuck::pod_collect_to_vec(&table[16..]);
        assert_eq!(header.entry_count as usize, entries.len());
        assert_eq!(header.invocations, pass.invocations);
        let mut owned_units = std::collections::HashSet::new();
        let mut next_invocation = 0;
        for e in &entries {
            assert_eq!(
                e.first_invocation, next_invocation,
                "entries are sorted and dense"
            );
            let units = (u64::from(e.first_bit) + u64::from(e.len_bits)).div_ceil(unit);
            next_invocation += units.div_ceil(UNITS_PER_INVOCATION) as u32;
            for u in 0..units {
                assert!(
                    owned_units.insert(u64::from(e.dst_unit) + u),
                    "two invocations of one pass own the same unit"
                );
            }
            let src = &input[pass.src_window_bytes.start as usize..];
            let src_len_bits = (pass.src_window_bytes.end - pass.src_window_bytes.start) * 8;
            let dst_base = (pass.dst_window_bytes.start * 8) + u64::from(e.dst_unit) * unit;
            for b in 0..e.len_bits {
                // The shader's u32 arithmetic, wrapping included.
                let q = b + e.run_phase_bits;
                let s = e
                    .src_bit
                    .wrapping_add((q / e.run_bits) * e.block_bits)
                    .wrapping_add(q % e.run_bits);
                let s = u64::from(s);
                let b = u64::from(b);
                assert!(s < src_len_bits, "source bit outside the window");
                let d = dst_base + u64::from(e.first_bit) + b;
                assert!(
                    d < pass.dst_window_bytes.end * 8,
                    "destination bit outside the window"
                );
                arena[(d / 8) as usize] |= get(src, s) << (d % 8);
            }
        }
        assert_eq!(next_invocation, header.invocations);
    }
    arena
}

fn check_plan(plan: &SplitPlan, input: &HostTensor, split: &ResolvedSplit, context: &str) {
    let limits = plan.limits();
    let window = limits.max_storage_buffer_binding_size.min(1 << 28);
    let align = u64::from(limits.min_storage_buffer_offset_alignment);
    for pass in plan.passes() {
        for w in [&pass.src_window_bytes, &pass.dst_window_bytes] {
            assert!(
                w.end - w.start <= window && w.start % align == 0 && (w.end - w.start) % 4 == 0,
                "{context}: window {w:?}"
            );
        }
        assert!(pass.src_window_bytes.end <= plan.input_binding_bytes());
        assert!(pass.dst_window_bytes.end <= plan.arena_bytes());
        assert_eq!(pass.table_bytes.start % align, 0);
        let [x, y] = pass.workgroups;
        let max = limits.max_compute_workgroups_per_dimension;
        assert!(x <= max && y <= max, "{context}: grid {x} x {y}");
        let groups = u64::from(pass.invocations).div_ceil(u64::from(WORKGROUP_SIZE));
        assert!(
            u64::from(x) * u64::from(y) >= groups,
            "{context}: grid covers the work"
        );
        assert!(
            u64::from(x) * u64::from(y) < groups + u64::from(y),
            "{context}: grid is tight"
        );
    }
    let mut end = 0;
    for slot in plan.outputs() {
        assert_eq!(slot.offset_bytes % align, 0);
        assert!(slot.offset_bytes >= end, "slots do not overlap");
        end = slot.offset_bytes + slot.len_bytes;
    }
    assert!(plan.arena_bytes() >= end && plan.arena_bytes().is_multiple_of(4));
    let mut padded = input.as_bytes().unwrap().to_vec();
    padded.resize(plan.input_binding_bytes() as usize, 0);
    let arena = emulate(plan, &padded);
    let expected = host::split(input, split).unwrap();
    for (i, (slot, e)) in plan.outputs().iter().zip(&expected).enumerate() {
        assert_eq!(slot.shape, e.shape());
        assert_eq!(
            &arena[slot.offset_bytes as usize..(slot.offset_bytes + slot.len_bytes) as usize],
            e.as_bytes().unwrap(),
            "{context}: output {i}"
        );
    }
}

#[test]
fn one_dispatch_under_the_limits() {
    let mut rng = Rng::new(41);
    for limits in [PlanLimits::LAVAPIPE, PlanLimits::WEBGPU_DEFAULT] {
        for element_type in [
            ElementType::Int2,
            ElementType::Int4,
            ElementType::Uint8,
            ElementType::Float16,
            ElementType::Float,
            ElementType::Complex128,
        ] {
            for shape in [vec![7], vec![3, 5, 7], vec![64, 64], vec![2, 3, 4, 5, 6, 1]] {
                for axis in 0..shape.len() {
                    let count = 1 + rng.below(4);
                    let lengths = rng.lengths(shape[axis], count);
                    let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
                    let plan = SplitPlan::new(&split, element_type, &limits).unwrap();
                    let nonempty = plan.outputs().iter().any(|s| s.len_bytes > 0);
                    assert_eq!(plan.dispatch_count(), usize::from(nonempty));
                    let input = random_tensor(&mut rng, element_type, &shape);
                    check_plan(
                        &plan,
                        &input,
                        &split,
                        &format!("{element_type} {shape:?} axis {axis}"),
                    );
                }
            }
        }
    }
}

#[test]
fn arena_slots_are_aligned_for_direct_binding() {
    let split = ResolvedSplit::new(&[3, 10], 1, vec![1, 2, 7], true).unwrap();
    let plan = SplitPlan::new(&split, ElementType::Int4, &PlanLimits::WEBGPU_DEFAULT).unwrap();
    let offsets: Vec<u64> = plan.outputs().iter().map(|s| s.offset_bytes).collect();
    assert_eq!(offsets, [0, 256, 512]);
    let lens: Vec<u64> = plan.outputs().iter().map(|s| s.len_bytes).collect();
    assert_eq!(lens, [2, 3, 11]); // 3, 6 and 21 nibbles
    assert_eq!(plan.arena_bytes(), 524);
    assert_eq!(plan.outputs()[1].range(), 256..259);
}

#[test]
fn the_access_unit_is_the_widest_that_divides_everything() {
    let unit = |shape: &[usize], axis, lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
        SplitPlan::new(&split, t, &PlanLimits::LAVAPIPE)
            .unwrap()
            .kernel()
    };
    assert_eq!(
        unit(&[4096, 4096], 0, vec![1024; 4], ElementType::Float),
        Kernel::Vec4
    );
    assert_eq!(
        unit(&[4096, 4096], 1, vec![1024; 4], ElementType::Float),
        Kernel::Vec4
    );
    assert_eq!(
        unit(&[8, 6], 1, vec![4, 2], ElementType::Float),
        Kernel::Words
    );
    assert_eq!(
        unit(&[8, 32], 1, vec![16, 16], ElementType::Uint8),
        Kernel::Vec4
    );
    assert_eq!(
        unit(&[8, 33], 1, vec![16, 17], ElementType::Uint8),
        Kernel::Words
    );
    // One row (outer = 1): only the runs and offsets matter.
    assert_eq!(
        unit(&[1, 36], 1, vec![33, 3], ElementType::Float),
        Kernel::Words
    );
    assert_eq!(
        unit(&[1, 36], 1, vec![4, 32], ElementType::Float),
        Kernel::Vec4
    );
}

#[test]
fn multi_pass_plans_cover_every_bit_once() {
    let mut rng = Rng::new(42);
    for (element_type, shape, axis, lengths, window) in [
        (ElementType::Float, vec![64, 100], 1, vec![30, 70], 4096),
        (
            ElementType::Uint8,
            vec![3, 9001],
            1,
            vec![4500, 1, 4500],
            2048,
        ),
        (ElementType::Uint8, vec![6, 2001], 1, vec![1001, 1000], 4096),
        (ElementType::Int4, vec![5, 3001], 1, vec![1501, 1500], 2048),
        (
            ElementType::Uint2,
            vec![3, 30001],
            1,
            vec![15001, 15000],
            2048,
        ),
        (ElementType::Float, vec![40000], 0, vec![10000, 30000], 4096),
    ] {
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let plan = SplitPlan::new(&split, element_type, &tiny(window, 65535)).unwrap();
        assert!(plan.dispatch_count() > 1);
        let input = random_tensor(&mut rng, element_type, &shape);
        check_plan(&plan, &input, &split, &format!("{element_type} {shape:?}"));
    }
}

#[test]
fn grids_stay_within_the_workgroup_limit() {
    let split = ResolvedSplit::new(&[400_012], 0, vec![200_001, 200_011], true).unwrap();
    for max in [3, 10, 65535] {
        let plan = SplitPlan::new(&split, ElementType::Uint8, &tiny(128 << 20, max)).unwrap();
        let input = random_tensor(&mut Rng::new(43), ElementType::Uint8, &[400_012]);
        check_plan(&plan, &input, &split, &format!("max {max}"));
        if max == 10 {
            assert_eq!(plan.dispatch_count(), 1);
            assert!(plan.passes()[0].workgroups[1] > 1, "a 2-D grid");
        }
    }
}

#[test]
fn tables_past_the_uniform_limit_are_still_one_dispatch() {
    let split = OnnxSplitToSequence::new(11).resolve(&[100_000, 2]).unwrap();
    let plan = SplitPlan::new(&split, ElementType::Float, &PlanLimits::LAVAPIPE).unwrap();
    assert_eq!(plan.outputs().len(), 100_000);
    assert_eq!(plan.dispatch_count(), 1);
    assert_eq!(plan.table().len(), 16 + 48 * 100_000);
}

#[test]
fn plans_past_the_device_are_errors() {
    let split = ResolvedSplit::new(&[4], 0, vec![4], true).unwrap();
    assert_eq!(
        SplitPlan::new(&split, ElementType::String, &PlanLimits::LAVAPIPE),
        Err(Error::NotOnGpu {
            element_type: ElementType::String
        })
    );
    let huge = ResolvedSplit::new(&[1 << 40], 0, vec![1 << 40], true).unwrap();
    assert!(matches!(
        SplitPlan::new(&huge, ElementType::Float, &PlanLimits::LAVAPIPE),
        Err(Error::TooLargeForDevice { what: "input", .. })
    ));
    // The input fits, but 1,000 outputs padded to 256 bytes each do not.
    let many = OnnxSplitToSequence::new(11).resolve(&[1000]).unwrap();
    let limits = PlanLimits {
        max_buffer_size: 64 << 10,
        ..PlanLimits::WEBGPU_DEFAULT
    };
    assert!(matches!(
        SplitPlan::new(&many, ElementType::Uint8, &limits),
        Err(Error::TooLargeForDevice { what: "arena", .. })
    ));
}

#[test]
fn limits_a_device_allows() {
    let device = PlanLimits::LAVAPIPE;
    assert!(PlanLimits::WEBGPU_DEFAULT.fits_within(&device));
    assert!(tiny(4096, 7).fits_within(&device));
    assert!(!device.fits_within(&PlanLimits::WEBGPU_DEFAULT));
    let odd = PlanLimits {
        min_storage_buffer_offset_alignment: 48,
        ..device
    };
    assert!(!odd.fits_within(&device));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_plans_with_small_windows_match_the_host_path(
        t in 0..ElementType::ALL.len(),
        shape in prop::collection::vec(1usize..40, 1..=4),
        axis_seed in any::<usize>(),
        count in 1usize..5,
        window_kib in 1u64..6,
        max_groups in 1u32..5,
        seed in any::<u64>(),
    ) {
        let element_type = ElementType::ALL[t];
        prop_assume!(element_type != ElementType::String);
        let axis = axis_seed % shape.len();
        let mut rng = Rng::new(seed);
        let lengths = rng.lengths(shape[axis], count);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let plan = SplitPlan::new(&split, element_type, &tiny(window_kib * 1024, max_groups)).unwrap();
        let input = random_tensor(&mut rng, element_type, &shape);
        check_plan(&plan, &input, &split, "random");
    }
}

#[test]
fn strategies_move_the_same_bits() {
    let mut rng = Rng::new(44);
    let limits = PlanLimits::LAVAPIPE;
    for (t, shape, axis, lengths) in [
        (ElementType::Float, vec![64, 40], 1, vec![8, 32]),
        (ElementType::Float, vec![64, 40], 0, vec![16, 48]),
        (ElementType::Uint8, vec![8, 64], 1, vec![4, 60]),
        (ElementType::Int4, vec![4, 64], 1, vec![8, 56]),
        (ElementType::Complex128, vec![3, 5, 2], 1, vec![0, 5]),
    ] {
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let input = random_tensor(&mut rng, t, &shape);
        for strategy in [
            Strategy::Gather,
            Strategy::GatherPerOutput,
            Strategy::Copy,
            Strategy::Auto(CostModel::LAVAPIPE),
        ] {
            let plan = SplitPlan::with_strategy(&split, t, &limits, &strategy).unwrap();
            check_plan(
                &plan,
                &input,
                &split,
                &format!("{t} {shape:?} {strategy:?}"),
            );
            let nonempty = plan.outputs().iter().filter(|s| s.len_bytes > 0).count();
            match strategy {
                Strategy::Gather => assert_eq!(plan.dispatch_count(), 1),
                Strategy::GatherPerOutput => assert_eq!(plan.dispatch_count(), nonempty),
                Strategy::Copy => {
                    assert_eq!((plan.dispatch_count(), plan.copies().len()), (0, nonempty))
                }
                Strategy::Auto(_) => assert!(plan.dispatch_count() <= 1),
            }
        }
    }
}

#[test]
fn copy_needs_four_byte_runs() {
    let split = ResolvedSplit::new(&[4, 6], 1, vec![1, 5], true).unwrap();
    let e = SplitPlan::with_strategy(
        &split,
        ElementType::Uint8,
        &PlanLimits::LAVAPIPE,
        &Strategy::Copy,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotCopyable {
                output: 0,
                run_bits: 8,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn the_cost_model_copies_long_runs_and_gathers_short_ones() {
    let auto = Strategy::Auto(CostModel::LAVAPIPE);
    let plan = |shape: &[usize], axis, lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
        SplitPlan::with_strategy(&split, t, &PlanLimits::LAVAPIPE, &auto).unwrap()
    };
    // Axis 0 of a large tensor: one long copy per output, no dispatch.
    let p = plan(&[4096, 4096], 0, vec![1024; 4], ElementType::Float);
    assert_eq!((p.dispatch_count(), p.copy_count()), (0, 4));
    // Middle axis: 64 rows of 256 KiB runs per output, still copies.
    let p = plan(&[64, 1024, 256], 1, vec![256; 4], ElementType::Float);
    assert_eq!((p.dispatch_count(), p.copy_count()), (0, 256));
    // Sub-word runs cannot be copied.
    let p = plan(&[1 << 20, 6], 1, vec![1, 2, 3], ElementType::Float16);
    assert_eq!((p.dispatch_count(), p.copy_count()), (1, 0));
    // Many tiny aligned runs: the gather dispatch is cheaper than 2^20 commands.
    let p = plan(&[1 << 20, 8], 1, vec![4, 4], ElementType::Float);
    assert_eq!((p.dispatch_count(), p.copy_count()), (1, 0));
}

#[test]
fn views_are_offered_where_outputs_are_contiguous_and_bindable() {
    let limits = PlanLimits::LAVAPIPE; // 32-byte alignment
    let views = |shape: &[usize], axis, lengths: Vec<usize>, t| {
        let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
        SplitPlan::new(&split, t, &limits).unwrap().input_views()
    };
    assert_eq!(
        views(&[8, 4], 0, vec![2, 6], ElementType::Float),
        Some(vec![0..32, 32..128])
    );
    assert_eq!(
        views(&[1, 16], 1, vec![8, 8], ElementType::Float),
        Some(vec![0..32, 32..64])
    );
    // Offsets that are not bindable, and splits along a later axis.
    assert_eq!(views(&[8, 4], 0, vec![1, 7], ElementType::Float), None);
    assert_eq!(views(&[8, 4], 1, vec![2, 2], ElementType::Float), None);
    // A sequence along axis 0 of 8-float rows.
    let split = OnnxSplitToSequence::new(11).resolve(&[3, 8]).unwrap();
    let v = SplitPlan::new(&split, ElementType::Float, &limits)
        .unwrap()
        .input_views();
    assert_eq!(v, Some(vec![0..32, 32..64, 64..96]));
}
