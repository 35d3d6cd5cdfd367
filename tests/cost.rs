//! The planner knows the device it runs on: a cost model per adapter class,
//! robust choices, and calibration at run time whose result is plain data a
//! runtime stores and plans with.

mod common;

use std::time::Instant;

use common::{Rng, assert_outputs_equal, gpu, random_tensor};
use wgpu_split::gpu::ModelOrigin;
use wgpu_split::plan::{
    CostModel, DeviceClass, Kernel, PlanLimits, PlanOptions, SplitPlan, Strategy,
};
use wgpu_split::{ElementType, ResolvedSplit};

/// `model` with the given kernels' rates.
fn with_rates(model: CostModel, rates: &[(Kernel, f64)]) -> CostModel {
    let mut model = model;
    for &(kernel, rate) in rates {
        model.gather_bytes_per_second.set(kernel, rate);
    }
    model
}

fn auto_plan(model: CostModel, shape: &[usize], axis: usize, lengths: Vec<usize>) -> SplitPlan {
    let split = ResolvedSplit::new(shape, axis, lengths, true).unwrap();
    let options = PlanOptions::default().strategy(Strategy::Auto(model));
    SplitPlan::new(
        &split,
        ElementType::Float,
        &PlanLimits::WEBGPU_DEFAULT,
        &options,
    )
    .unwrap()
}

#[test]
fn the_kernel_is_the_one_the_model_says_is_fastest() {
    let kernel = |model: CostModel, shape: &[usize], lengths: Vec<usize>| {
        common::runs(&auto_plan(model, shape, 1, lengths))
    };
    // f32 [840, 10] split [5, 5]: runs of 160 bits in rows of 320, so row
    // blocks (4 rows), the funnel and words all fit.
    let both = || vec![5, 5];
    let m = CostModel::LAVAPIPE;
    let rate = |k| m.gather_bytes_per_second.get(k);
    assert_eq!(kernel(m, &[840, 10], both()), common::ROW_BLOCKS);
    // The funnel above row blocks: its per-layout form (row streams).
    let funnel_first = with_rates(m, &[(Kernel::RowBlocks, rate(Kernel::Funnel) / 2.0)]);
    assert_eq!(
        kernel(funnel_first, &[840, 10], both()),
        common::ROW_STREAMS
    );
    // A device where none beats the word kernel: words.
    let half_words = rate(Kernel::Words) / 2.0;
    let words_first = with_rates(
        m,
        &[
            (Kernel::RowBlocks, half_words),
            (Kernel::Funnel, half_words),
            (Kernel::RowWords, half_words),
        ],
    );
    assert_eq!(kernel(words_first, &[840, 10], both()), common::WORDS);
    // u8 rows of 4097 bytes split [2048, 2049]: both forms of the funnel
    // fit; the per-layout one (row streams: no lane crossing a run end) is
    // tried first on every model.
    let u8_plan = |model: CostModel| {
        let split = ResolvedSplit::new(&[64, 4097], 1, vec![2048, 2049], true).unwrap();
        let options = PlanOptions::default().strategy(Strategy::Auto(model));
        SplitPlan::new(
            &split,
            ElementType::Uint8,
            &PlanLimits::WEBGPU_DEFAULT,
            &options,
        )
        .unwrap()
    };
    let u8_plan = |model: CostModel| common::runs(&u8_plan(model));
    assert_eq!(u8_plan(m), common::ROW_STREAMS);
    for model in [
        CostModel::CONSERVATIVE,
        CostModel::DISCRETE_GPU,
        CostModel::INTEGRATED_GPU,
    ] {
        assert_eq!(u8_plan(model), common::ROW_STREAMS);
    }
    // Aligned runs take row copies (the vec4 kernel generated per layout)
    // on every model.
    assert_eq!(
        kernel(words_first, &[840, 12], vec![4, 8]),
        common::ROW_COPIES
    );
}

#[test]
fn gpu_models_plan_one_dispatch_where_lavapipe_copies_thousands_of_rows() {
    // f32 [4096, 4096] on the last axis into 4: 16,384 rows of 4 KiB.
    let lengths = || vec![1024; 4];
    for model in [
        CostModel::DISCRETE_GPU,
        CostModel::INTEGRATED_GPU,
        CostModel::CONSERVATIVE,
    ] {
        let plan = auto_plan(model, &[4096, 4096], 1, lengths());
        assert_eq!(
            (plan.dispatch_count(), plan.copy_count()),
            (1, 0),
            "{model:?}"
        );
    }
    // Where a copy command costs what it does on lavapipe (0.9 µs, memcpy
    // at 19 GB/s), the copies stay cheaper than a 4.3 GB/s gather.
    let plan = auto_plan(CostModel::LAVAPIPE, &[4096, 4096], 1, lengths());
    assert_eq!((plan.dispatch_count(), plan.copy_count()), (0, 16_384));
    // A few long runs: copies where the copy path is the fast one
    // (lavapipe's memcpy, and the unknown adapter's model), one dispatch
    // on the GPU models, whose copies run at 0.7 (discrete) and 0.9
    // (integrated) of the kernel's rate (docs/DEVICE.md, "Class models").
    for (class, expected) in [
        (DeviceClass::Software, (0, 4)),
        (DeviceClass::DiscreteGpu, (1, 0)),
        (DeviceClass::IntegratedGpu, (1, 0)),
        (DeviceClass::Unknown, (0, 4)),
    ] {
        let plan = auto_plan(CostModel::for_class(class), &[4096, 4096], 0, lengths());
        assert_eq!(
            (plan.dispatch_count(), plan.copy_count()),
            expected,
            "{class:?}"
        );
    }
}

#[test]
fn close_calls_lean_to_the_option_that_slows_down_less() {
    // Equal expected costs: the option with the smaller load factor wins.
    let steady = CostModel::robust_seconds(1.0, 1.2);
    let jumpy = CostModel::robust_seconds(1.0, 2.5);
    assert!(steady < jumpy);
    // A clearly faster option still wins despite a larger load factor.
    assert!(CostModel::robust_seconds(1.0, 2.5) < CostModel::robust_seconds(1.7, 1.2));
    // f32 [1024, 1024] into [512, 512]: 2,048 rows of 2 KiB. Copies of
    // 2 * 4 MiB at 8 GB/s plus 2,048 commands of 0.512 µs cost what a
    // 4 GB/s gather costs (2.1 ms); with equal expectations (and recording
    // free) the copies, which slow down less on a busy device, are chosen.
    let even = with_rates(
        CostModel {
            copy_bytes_per_second: 8e9,
            copy_command_seconds: 0.512e-6,
            host_copy_seconds: 0.0,
            host_dispatch_seconds: 0.0,
            ..CostModel::LAVAPIPE
        },
        &[(Kernel::Vec4, 4e9)],
    );
    let plan = auto_plan(even, &[1024, 1024], 1, vec![512, 512]);
    assert_eq!((plan.dispatch_count(), plan.copy_count()), (0, 2048));
    // A gather twice as fast wins although it slows down more.
    let faster = with_rates(even, &[(Kernel::Vec4, 8e9)]);
    let plan = auto_plan(faster, &[1024, 1024], 1, vec![512, 512]);
    assert_eq!((plan.dispatch_count(), plan.copy_count()), (1, 0));
}

#[test]
fn the_hosts_time_to_record_counts_against_many_commands() {
    // The even case above, with the host's recording time: 2,048 copy
    // commands at 1 µs each (what the issue measured inside burn; the class
    // models say 0.7 µs) tip the balance to the one dispatch.
    assert_eq!(CostModel::LAVAPIPE.host_copy_seconds, 0.7e-6);
    let even = with_rates(
        CostModel {
            copy_bytes_per_second: 8e9,
            copy_command_seconds: 0.512e-6,
            host_copy_seconds: 1e-6,
            ..CostModel::LAVAPIPE
        },
        &[(Kernel::Vec4, 4e9)],
    );
    let plan = auto_plan(even, &[1024, 1024], 1, vec![512, 512]);
    assert_eq!((plan.dispatch_count(), plan.copy_count()), (1, 0));
    // What the runtime waits for on the host, stated by the model.
    assert_eq!(even.host_seconds(2048, 0), 2048.0 * 1e-6);
    assert_eq!(even.host_seconds(0, 1), even.host_dispatch_seconds);
    // A model stored before host costs existed loads with the class's figures.
    #[cfg(feature = "serde")]
    {
        let mut stored = serde_json::to_value(CostModel::LAVAPIPE).unwrap();
        let fields = stored.as_object_mut().unwrap();
        assert!(fields.remove("host_copy_seconds").is_some());
        fields.remove("host_dispatch_seconds");
        let back: CostModel = serde_json::from_value(stored).unwrap();
        assert_eq!(back, CostModel::LAVAPIPE);
    }
}

#[test]
fn adapters_map_to_classes_by_type_and_name() {
    let Some(gpu) = gpu("adapters_map_to_classes_by_type_and_name") else {
        return;
    };
    let info = gpu.device().adapter_info();
    let with = |name: &str, device_type| wgpu::AdapterInfo {
        name: name.to_string(),
        driver: String::new(),
        device_type,
        ..info.clone()
    };
    use wgpu::DeviceType as T;
    assert_eq!(
        DeviceClass::of_adapter(&with("llvmpipe (LLVM 15.0.6, 256 bits)", T::Cpu)),
        DeviceClass::Software
    );
    assert_eq!(
        DeviceClass::of_adapter(&with("SwiftShader Device (Subzero)", T::Other)),
        DeviceClass::Software
    );
    assert_eq!(
        DeviceClass::of_adapter(&with("Microsoft Basic Render Driver", T::Other)),
        DeviceClass::Software
    );
    assert_eq!(
        DeviceClass::of_adapter(&with("NVIDIA GeForce RTX 4090", T::DiscreteGpu)),
        DeviceClass::DiscreteGpu
    );
    assert_eq!(
        DeviceClass::of_adapter(&with("Intel(R) UHD Graphics 630", T::IntegratedGpu)),
        DeviceClass::IntegratedGpu
    );
    assert_eq!(
        DeviceClass::of_adapter(&with("Virtio-GPU", T::VirtualGpu)),
        DeviceClass::Unknown
    );
    // This machine's adapter, and the splitter's default model for it: the
    // class's on a GPU, measured at the start on a software adapter.
    println!(
        "this adapter: {} -> {:?}",
        info.name,
        DeviceClass::of_adapter(&info)
    );
    let expected = CostModel::for_class(DeviceClass::of_adapter(&info));
    match gpu.model_origin() {
        ModelOrigin::Class => assert_eq!(*gpu.strategy(), Strategy::Auto(expected)),
        origin => assert_eq!(
            DeviceClass::of_adapter(&info),
            DeviceClass::Software,
            "{origin:?}: only a software adapter measures at the start"
        ),
    }
}

/// A software adapter's kernels run on the host's cores, so their speed
/// against its copies follows the machine (issue 41: lavapipe's vec4 copy
/// 1.6 GB/s on one VM, 5-10 GB/s on another): the first splitter of the
/// process measures the adapter with a short calibration and plans with
/// it; later splitters on the same adapter reuse it.
#[test]
fn a_software_adapter_plans_with_what_it_measured_at_the_start() {
    let Some(gpu) = gpu("a_software_adapter_plans_with_what_it_measured_at_the_start") else {
        return;
    };
    let info = gpu.device().adapter_info();
    if DeviceClass::of_adapter(&info) != DeviceClass::Software {
        println!(
            "{} is not a software adapter: nothing measured at the start",
            info.name
        );
        assert_eq!(gpu.model_origin(), ModelOrigin::Class);
        return;
    }
    let ModelOrigin::MeasuredAtStart { seconds } = gpu.model_origin() else {
        panic!("a software adapter's splitter: {:?}", gpu.model_origin());
    };
    let Strategy::Auto(model) = *gpu.strategy() else {
        panic!("{:?}", gpu.strategy());
    };
    println!("measured at the start in {seconds:.2} s: {model:#?}");
    assert_ne!(
        model,
        CostModel::LAVAPIPE,
        "the measured model is not the class's"
    );
    let mut positive = vec![model.copy_bytes_per_second, model.dispatch_seconds];
    positive.extend(model.gather_bytes_per_second.iter().map(|(_, rate)| rate));
    assert!(
        positive.iter().all(|v| v.is_finite() && *v > 0.0),
        "{model:?}"
    );
    // Once per process: a splitter on a device of its own reuses it.
    let ctx = wgpu_split::gpu::GpuContext::new_default().unwrap();
    let again = wgpu_split::gpu::GpuSplitter::new(&ctx.device, &ctx.queue).unwrap();
    assert_eq!(
        again.model_origin(),
        ModelOrigin::MeasuredAtStart { seconds }
    );
    assert_eq!(*again.strategy(), Strategy::Auto(model));
    // A strategy given by the caller is said to be given.
    let given = again.with_strategy(Strategy::Auto(CostModel::LAVAPIPE));
    assert_eq!(given.model_origin(), ModelOrigin::Given);
}

#[test]
fn calibration_measures_the_device_and_its_model_plans_exact_splits() {
    let Some(gpu) = gpu("calibration_measures_the_device_and_its_model_plans_exact_splits") else {
        return;
    };
    let started = Instant::now();
    let calibration = wgpu_split::gpu::Calibration::measure(gpu).unwrap();
    let took = started.elapsed();
    println!("calibrated in {took:?}: {calibration:#?}");
    // The shared test device has no timestamp queries: the wall clock,
    // whose resolution is the spread of empty submissions.
    assert_eq!(calibration.timing, wgpu_split::gpu::Timing::WallClock);
    assert!(
        calibration.resolution_seconds.is_finite() && calibration.resolution_seconds >= 1e-6,
        "{}",
        calibration.resolution_seconds
    );
    // Unsteady figures (a busy machine) hold the class's values.
    let class = CostModel::for_class(DeviceClass::of_adapter(&gpu.device().adapter_info()));
    if calibration
        .unsteady
        .contains(&wgpu_split::gpu::Figure::Dispatch)
    {
        assert_eq!(calibration.model.dispatch_seconds, class.dispatch_seconds);
    }
    assert_eq!(
        calibration.trusted().is_some(),
        calibration.unsteady.is_empty()
    );
    let model = calibration.model;
    let mut positive = vec![
        model.copy_bytes_per_second,
        model.copy_command_seconds,
        model.dispatch_seconds,
        model.host_copy_seconds,
        model.host_dispatch_seconds,
    ];
    positive.extend(model.gather_bytes_per_second.iter().map(|(_, rate)| rate));
    assert!(
        positive.iter().all(|v| v.is_finite() && *v > 0.0),
        "{model:?}"
    );
    // A guard against a hang, not a speed target (that is split_bench's).
    assert!(took.as_secs() < 30, "calibration took {took:?}");
    // Plan with it: the splitter runs exact splits with the measured model.
    let splitter = wgpu_split::gpu::GpuSplitter::new(gpu.device(), gpu.queue())
        .unwrap()
        .with_strategy(Strategy::Auto(model));
    let mut rng = Rng::new(71);
    for (shape, axis, lengths) in [
        (vec![256, 1024], 1, vec![256, 768]),
        (vec![1024, 6], 1, vec![1, 2, 3]),
        (vec![64, 64], 0, vec![32, 32]),
    ] {
        let input = random_tensor(&mut rng, ElementType::Float16, &shape);
        let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
        let actual = common::round_trip(&splitter).run(&split, &input).unwrap();
        assert_outputs_equal(&input.split(&split).unwrap(), &actual, "calibrated");
    }
}

/// The async calibration (the only one on the web) on a device with
/// WebGPU's `timestamp-query` alone: each probe bracketed by an empty
/// pass's timestamps, awaited while a `Poller` drives the device.
#[test]
fn the_async_calibration_times_with_pass_timestamps_alone() {
    // The shared splitter says whether there is an adapter (and skips
    // visibly, or fails with the fix, where there is none).
    if gpu("the_async_calibration_times_with_pass_timestamps_alone").is_none() {
        return;
    }
    let ctx = pollster::block_on(wgpu_split::gpu::GpuContext::request_with_features(
        wgpu::Features::TIMESTAMP_QUERY,
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    // Every adapter CI runs on (lavapipe, a GPU) has timestamp queries.
    assert_eq!(
        ctx.device.features(),
        wgpu::Features::TIMESTAMP_QUERY,
        "{}",
        ctx.describe()
    );
    let splitter = ctx.splitter().unwrap();
    let _poller = wgpu_split::gpu::Poller::new(&ctx.device);
    let calibration =
        pollster::block_on(wgpu_split::gpu::Calibration::measure_async(&splitter)).unwrap();
    println!("{calibration:#?}");
    assert_eq!(calibration.timing, wgpu_split::gpu::Timing::Timestamps);
    let model = calibration.model;
    let mut positive = vec![model.copy_bytes_per_second, model.dispatch_seconds];
    positive.extend(model.gather_bytes_per_second.iter().map(|(_, rate)| rate));
    assert!(
        positive.iter().all(|v| v.is_finite() && *v > 0.0),
        "{model:?}"
    );
    // The measured model plans exact splits.
    let splitter = splitter.with_strategy(Strategy::Auto(model));
    let input = random_tensor(&mut Rng::new(5), ElementType::Float16, &[64, 100]);
    let split = ResolvedSplit::new(&[64, 100], 1, vec![30, 70], true).unwrap();
    let actual = common::round_trip(&splitter).run(&split, &input).unwrap();
    assert_outputs_equal(&input.split(&split).unwrap(), &actual, "async-calibrated");
}

#[cfg(feature = "serde")]
#[test]
fn a_cost_model_is_plain_data_that_round_trips() {
    let model = CostModel {
        copy_command_seconds: 1.25e-6,
        ..CostModel::LAVAPIPE
    };
    let text = serde_json::to_string(&model).unwrap();
    let back: CostModel = serde_json::from_str(&text).unwrap();
    assert_eq!(back, model);
    assert!(text.contains("\"copy_command_seconds\":1.25e-6"), "{text}");
    // Rates are stored by kernel name.
    assert!(text.contains("\"funnel\":6300000000.0"), "{text}");
    // A model stored before rates were keyed by kernel (one field per
    // kernel, and no row-stream field before that kernel existed) still
    // loads, with the missing kernel's rate 0 (never chosen).
    let old = r#"{"copy_bytes_per_second":18.4e9,"copy_command_seconds":0.34e-6,
        "gather_vec4_bytes_per_second":5.5e9,"gather_word_bytes_per_second":2.2e9,
        "gather_bits_bytes_per_second":2.1e9,"gather_funnel_bytes_per_second":5.7e9,
        "gather_rows_bytes_per_second":8.1e9,"dispatch_seconds":61e-6,
        "copy_load_factor":1.2,"gather_load_factor":2.5}"#;
    let back: CostModel = serde_json::from_str(old).unwrap();
    let rates = back.gather_bytes_per_second;
    assert_eq!(rates.get(Kernel::Funnel), 5.7e9);
    assert_eq!(rates.get(Kernel::Vec4), 5.5e9);
    assert_eq!(rates.get(Kernel::RowBlocks), 8.1e9);
    assert_eq!(rates.get(Kernel::Words), 2.2e9);
    assert_eq!(
        CostModel {
            gather_bytes_per_second: model.gather_bytes_per_second,
            ..back
        },
        CostModel::LAVAPIPE
    );
    // A model stored before the vec4 kernel took the row copies and the
    // funnel the row streams as their per-layout forms: each merged
    // kernel's rate is its per-layout form's (what its probe measures now),
    // a former name stored 0 (never chosen) aside.
    let merged = r#"{"copy_bytes_per_second":18.4e9,"copy_command_seconds":0.34e-6,
        "gather_bytes_per_second":{"words":2.2e9,"row_copies":8.0e9,"row_words":4.8e9,
        "vec4":5.5e9,"row_blocks":8.1e9,"funnel":5.7e9,"row_streams":0.0,
        "concat_words":1.3e9},
        "dispatch_seconds":61e-6,"copy_load_factor":1.2,"gather_load_factor":2.5}"#;
    let rates = serde_json::from_str::<CostModel>(merged)
        .unwrap()
        .gather_bytes_per_second;
    assert_eq!(rates.get(Kernel::Vec4), 8.0e9);
    assert_eq!(rates.get(Kernel::Funnel), 5.7e9);
    assert_eq!(rates.get(Kernel::RowWords), 4.8e9);
}
