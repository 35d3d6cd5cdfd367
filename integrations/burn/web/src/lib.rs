//! wgpu-split-burn in a browser: burn's wgpu device made asynchronously on
//! the browser's WebGPU (`init_with_setup_async`), the integration's split,
//! chunk, split_with_sizes (past the arena's count), a split of a view, an
//! int split, cat, stack, split_heads and merge_heads, each checked byte for
//! byte against burn's own ops, every read through `into_data_async`
//! (nothing blocks), every call inside a validation scope of its own that
//! is awaited. `integrations/burn/web/suite.html` runs it; CI drives it with
//! `web/run_suite.mjs --root integrations/burn/web`.

use std::cell::RefCell;

use burn::tensor::wgpu::wgpu;
use burn::tensor::{Device, Int, Tensor, TensorData};
use wasm_bindgen::prelude::*;
use wgpu_split_burn::BurnSplitter;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(s: &str);
}

/// `log` records of warn and above to the browser console (cubecl reports
/// WGSL compile errors there only).
struct ConsoleLog;

impl log::Log for ConsoleLog {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            console_error(&format!(
                "log {} during '{}': {}",
                r.level(),
                current(),
                r.args()
            ));
        }
    }
    fn flush(&self) {}
}

static LOGGER: ConsoleLog = ConsoleLog;

thread_local! {
    /// The check running now (named in panic and error messages).
    static STEP: RefCell<String> = RefCell::new(String::from("init"));
}

fn step(name: &str) {
    STEP.with(|s| *s.borrow_mut() = name.to_string());
}

fn current() -> String {
    STEP.with(|s| s.borrow().clone())
}

/// The lines of the report and its counts.
struct Report {
    lines: Vec<String>,
    passed: usize,
    failed: usize,
    on_line: js_sys::Function,
}

impl Report {
    fn check(&mut self, name: &str, result: Result<String, String>) {
        let line = match result {
            Ok(detail) => {
                self.passed += 1;
                format!("PASS {name}: {detail}")
            }
            Err(why) => {
                self.failed += 1;
                format!("FAIL {name}: {why}")
            }
        };
        let _ = self.on_line.call1(&JsValue::NULL, &line.as_str().into());
        self.lines.push(line);
    }
}

/// Runs the integration's call `f` inside a validation scope of our own
/// and awaits it: the wgpu errors of the call itself (burn's work it
/// triggers included).
async fn scoped<T>(device: &wgpu::Device, f: impl FnOnce() -> T) -> (T, Option<String>) {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    (value, validation.pop().await.map(|e| e.to_string()))
}

/// Bytes, shape and dtype of a tensor, read asynchronously.
async fn read<const D: usize, K>(t: Tensor<D, K>) -> Result<TensorData, String>
where
    K: burn::tensor::kind::Basic,
{
    t.into_data_async()
        .await
        .map_err(|e| format!("into_data_async: {e:?}"))
}

/// `ours` against `burns`, byte for byte, and the call's scope error.
async fn compare<const D: usize, K>(
    ours: Vec<Tensor<D, K>>,
    burns: Vec<Tensor<D, K>>,
    scope_error: Option<String>,
) -> Result<String, String>
where
    K: burn::tensor::kind::Basic,
{
    if let Some(e) = scope_error {
        return Err(format!("a wgpu error in the call: {e}"));
    }
    if ours.len() != burns.len() {
        return Err(format!("{} outputs, burn's {}", ours.len(), burns.len()));
    }
    let n = ours.len();
    let mut bytes = 0;
    for (i, (a, b)) in ours.into_iter().zip(burns).enumerate() {
        let (a, b) = (read(a).await?, read(b).await?);
        if a.shape() != b.shape() || a.dtype() != b.dtype() || a.as_bytes() != b.as_bytes() {
            return Err(format!(
                "output {i}: {:?} {:?}, burn's {:?} {:?} (bytes equal: {})",
                a.shape(),
                a.dtype(),
                b.shape(),
                b.dtype(),
                a.as_bytes() == b.as_bytes()
            ));
        }
        bytes += a.as_bytes().len();
    }
    Ok(format!("{n} outputs, {bytes} bytes equal to burn's"))
}

fn ramp<const D: usize>(shape: [usize; D], device: &Device) -> Tensor<D> {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|i| (i as f32) * 0.25 - 1000.0).collect();
    Tensor::from_data(TensorData::new(values, shape), device)
}

/// burn alone, before any splitter: its split and its matmul against the
/// host's (so that a failure below is the integration's).
async fn burn_alone(device: &Device) -> Result<String, String> {
    let w = ramp([2, 16, 192], device);
    for p in w.clone().split(64, 2) {
        read(p).await?;
    }
    let got = read(w.clone().matmul(w.swap_dims(1, 2))).await?;
    let got = got.as_slice::<f32>().map_err(|e| format!("{e:?}"))?;
    let a: Vec<f32> = (0..2 * 16 * 192)
        .map(|i| (i as f32) * 0.25 - 1000.0)
        .collect();
    let mut worst = 0f64;
    for b in 0..2 {
        for i in 0..16 {
            for j in 0..16 {
                let acc: f64 = (0..192)
                    .map(|k| a[(b * 16 + i) * 192 + k] as f64 * a[(b * 16 + j) * 192 + k] as f64)
                    .sum();
                let rel = ((got[(b * 16 + i) * 16 + j] as f64 - acc) / acc.abs().max(1.0)).abs();
                worst = worst.max(rel);
            }
        }
    }
    // A float matmul, so a tolerance: this checks burn, not us.
    if worst < 1e-4 {
        Ok(format!("matmul within {worst:.1e} of the host's"))
    } else {
        Err(format!("burn's matmul is {worst:e} off the host's"))
    }
}

/// Runs the checks, calling `on_line` with each `PASS`/`FAIL` line;
/// resolves to the report as JSON (`lines`, `passed`, `failed`, `adapter`).
#[wasm_bindgen]
pub async fn run_suite(on_line: js_sys::Function) -> Result<String, JsValue> {
    let _ = log::set_logger(&LOGGER).map(|()| log::set_max_level(log::LevelFilter::Warn));
    std::panic::set_hook(Box::new(|info| {
        console_error(&format!("panic during '{}': {info}", current()));
    }));
    let (device, setup) = Device::wgpu_options()
        .init_with_setup_async()
        .await
        .map_err(|e| JsValue::from_str(&format!("init_with_setup_async: {e:?}")))?;
    let info = setup.adapter.get_info();
    let adapter = format!(
        "{:?} {:?}, burn {} {}",
        info.backend,
        info.device_type,
        if cfg!(feature = "fusion") {
            "fusion"
        } else {
            "CubeBackend"
        },
        if cfg!(feature = "autotune") {
            "autotune"
        } else {
            "no autotune"
        },
    );
    let mut report = Report {
        lines: Vec::new(),
        passed: 0,
        failed: 0,
        on_line,
    };
    step("burn alone");
    report.check(
        "burn alone: split, matmul, into_data_async",
        burn_alone(&device).await,
    );

    step("BurnSplitter::new");
    let dev = setup.device.clone();
    let (splitter, error) = scoped(&dev, || BurnSplitter::new(&device, &setup)).await;
    let splitter = match (splitter, error) {
        (Ok(s), None) => s,
        (s, e) => {
            let why = format!("{:?}; scope error {e:?}", s.err());
            report.check("BurnSplitter::new", Err(why));
            return Ok(json(&report, &adapter));
        }
    };
    report.check(
        "BurnSplitter::new plans with its class model on the web",
        match splitter.splitter().model_origin() {
            wgpu_split::gpu::ModelOrigin::Class => Ok("class model".to_string()),
            other => Err(format!("{other:?}")),
        },
    );
    // One integration call inside our own validation scope, awaited; a
    // typed error of the call fails its check.
    macro_rules! check {
        ($name:expr, $call:expr, $burns:expr) => {{
            step($name);
            let (value, error) = scoped(&dev, || $call).await;
            let result = match value {
                Ok(ours) => compare(ours, $burns, error).await,
                Err(e) => Err(format!("{e}")),
            };
            report.check($name, result);
        }};
    }

    let x = ramp([2, 16, 192], &device);
    check!(
        "split [2,16,192] by 64 on dim 2",
        splitter.split(x.clone(), 64, 2),
        x.clone().split(64, 2)
    );
    check!(
        "chunk 3 on dim -1",
        splitter.chunk(x.clone(), 3, -1),
        x.clone().chunk(3, 2)
    );
    step("chunk, then burn's matmul of q and k");
    let score = |v: Vec<Tensor<3>>| -> Result<Vec<Tensor<3>>, String> {
        let [q, k, _]: [Tensor<3>; 3] = v.try_into().map_err(|_| "not 3 chunks".to_string())?;
        Ok(vec![q.matmul(k.swap_dims(1, 2))])
    };
    let consumed = match splitter.chunk(x.clone(), 3, -1) {
        Ok(ours) => match (score(ours), score(x.clone().chunk(3, 2))) {
            (Ok(a), Ok(b)) => compare(a, b, None).await,
            (Err(e), _) | (_, Err(e)) => Err(e),
        },
        Err(e) => Err(e.to_string()),
    };
    report.check("burn's matmul of the chunks", consumed);
    let y = ramp([40, 8, 3], &device);
    check!(
        "split_with_sizes [1; 40] on dim 0 (the arena)",
        splitter.split_with_sizes(y.clone(), &[1; 40], 0),
        y.split_with_sizes(vec![1; 40], 0)
    );
    let t = ramp([24, 10], &device).transpose();
    check!(
        "split of a transposed view by 4 on dim 1",
        splitter.split(t.clone(), 4, 1),
        t.split(4, 1)
    );
    let i = Tensor::<2, Int>::from_data(
        TensorData::new((0..60i32).collect::<Vec<_>>(), [6, 10]),
        &device,
    );
    check!(
        "split of an int tensor by 3 on dim 1",
        splitter.split(i.clone(), 3, 1),
        i.split(3, 1)
    );
    let heads: Vec<Tensor<3>> = (0..8).map(|_| ramp([2, 16, 64], &device)).collect();
    check!(
        "cat 8 x [2,16,64] on dim -1",
        splitter.cat(heads.clone(), -1).map(|t| vec![t]),
        vec![Tensor::cat(heads.clone(), 2)]
    );
    check!(
        "stack 8 x [2,16,64] on dim 0",
        splitter.stack::<3, 4, _>(heads.clone(), 0).map(|t| vec![t]),
        vec![Tensor::stack::<4>(heads, 0)]
    );
    let qkv = ramp([2, 16, 192], &device);
    let burns: Vec<Tensor<4>> = qkv
        .clone()
        .split_with_sizes(vec![64; 3], 2)
        .into_iter()
        .map(|p| p.reshape([2, 16, 4, 16]).swap_dims(1, 2))
        .collect();
    check!(
        "split_heads [2,16,192] into 3 x [2,4,16,16]",
        splitter.split_heads(qkv.clone(), &[64; 3], 16),
        burns.clone()
    );
    check!(
        "merge_heads back to [2,16,192]",
        splitter.merge_heads(burns).map(|t| vec![t]),
        vec![qkv]
    );
    step("done");
    Ok(json(&report, &adapter))
}

fn json(report: &Report, adapter: &str) -> String {
    serde_json::json!({
        "lines": report.lines,
        "passed": report.passed,
        "failed": report.failed,
        "adapter": adapter,
    })
    .to_string()
}
