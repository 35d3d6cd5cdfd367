//! Calibration on an idle and on a busy device: another thread keeps the
//! same queue full of 64 MiB copies while `gpu::calibrate` runs, timed by
//! timestamp queries and by the wall clock (a device without them, as on
//! the web). Prints each figure busy against idle, how long each
//! calibration took and the figures it reported unsteady; the contract is
//! that every figure is within 2x of the idle one or reported unsteady.
//!
//! `cargo bench --bench calibration`

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use wgpu_split::gpu::{Calibration, Figure, GpuContext};
use wgpu_split::plan::{CostModel, Kernel};

/// Every measured figure of a model, as seconds-like costs (rates
/// inverted, so "busy / idle" above 1 always means slower).
fn figures(model: &CostModel) -> Vec<(Figure, f64)> {
    let mut all = vec![
        (Figure::CopyBandwidth, 1.0 / model.copy_bytes_per_second),
        (Figure::CopyCommand, model.copy_command_seconds),
        (Figure::Dispatch, model.dispatch_seconds),
    ];
    for kernel in Kernel::ALL {
        all.push((
            Figure::Gather(kernel),
            1.0 / model.gather_bytes_per_second.get(kernel),
        ));
    }
    all
}

/// Keeps `ctx`'s queue busy with 64 MiB copies until `stop`.
fn keep_busy(ctx: GpuContext, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let buffer = |usage| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("busy"),
                size: 64 << 20,
                usage,
                mapped_at_creation: false,
            })
        };
        let (a, b) = (
            buffer(wgpu::BufferUsages::COPY_SRC),
            buffer(wgpu::BufferUsages::COPY_DST),
        );
        let mut submitted = 0;
        let mut previous = None;
        while !stop.load(Ordering::Relaxed) {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            for _ in 0..4 {
                encoder.copy_buffer_to_buffer(&a, 0, &b, 0, 64 << 20);
            }
            let index = ctx.queue.submit([encoder.finish()]);
            submitted += 1;
            // Two submissions in flight: the queue never runs dry.
            if let Some(previous) = previous.replace(index) {
                let _ = ctx.device.poll(wgpu::PollType::Wait {
                    submission_index: Some(previous),
                    timeout: None,
                });
            }
        }
        submitted
    })
}

fn timed(ctx: &GpuContext) -> (Calibration, f64) {
    let splitter = ctx.splitter().expect("a splitter");
    let started = Instant::now();
    let calibration = Calibration::measure(&splitter).expect("calibration");
    (calibration, started.elapsed().as_secs_f64())
}

fn main() {
    let wall = GpuContext::new_default().expect("a GPU adapter (mesa-vulkan-drivers)");
    let timestamps = pollster::block_on(GpuContext::request_with_features(
        wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
    ))
    .expect("a GPU adapter");
    let mut all_kept = true;
    for ctx in [&timestamps, &wall] {
        let (idle, idle_seconds) = timed(ctx);
        let stop = Arc::new(AtomicBool::new(false));
        let busy_thread = keep_busy(ctx.clone(), stop.clone());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (busy, busy_seconds) = timed(ctx);
        stop.store(true, Ordering::Relaxed);
        let submitted = busy_thread.join().unwrap();
        println!(
            "\n{:?}: idle calibration {idle_seconds:.2} s (unsteady {:?}); busy {busy_seconds:.2} s \
             (unsteady {:?}; the other thread submitted {submitted} x 256 MiB of copies)",
            idle.timing, idle.unsteady, busy.unsteady
        );
        println!("| figure | idle | busy | busy / idle | kept |");
        println!("|---|---:|---:|---:|---|");
        for ((figure, i), (_, b)) in figures(&idle.model).into_iter().zip(figures(&busy.model)) {
            let ratio = b / i;
            let reported = busy.unsteady.contains(&figure);
            let kept = (0.5..=2.0).contains(&ratio) || reported;
            all_kept &= kept;
            println!(
                "| {figure:?} | {i:.3e} | {b:.3e} | {ratio:.2} | {} |",
                if reported {
                    "reported unsteady"
                } else if kept {
                    "within 2x"
                } else {
                    "NO"
                }
            );
        }
    }
    println!(
        "\nevery figure within 2x of idle or reported unsteady: {}",
        if all_kept { "yes" } else { "NO" }
    );
}
