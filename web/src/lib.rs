//! wgpu-split compiled to `wasm32-unknown-unknown` and run on a browser's
//! WebGPU, as a WebGPU inference engine in Rust embeds it.
//!
//! - [`run_suite`]: the browser suite (`web/suite.html`, run by
//!   `web/run_suite.mjs` in CI): the four moves of every element width,
//!   the ONNX tests' and numpy's expected bytes, the typed errors.
//! - The bench page (`web/bench.html`): split_bench's cases timed on the
//!   page's GPU beside onnxruntime-web ([`bench`]).
//!
//! `web/build.sh` builds it (std from source, then `wasm-bindgen --target
//! web`); the pages import `pkg/wgpu_split_web.js`.

pub mod bench;
pub mod device;
pub mod rng;
pub mod suite;

use wasm_bindgen::prelude::*;

/// The repository's test data for the suite, added by the page file by
/// file (path under `tests/data/`, bytes).
#[wasm_bindgen]
#[derive(Default)]
pub struct TestData(suite::Files);

#[wasm_bindgen]
impl TestData {
    /// No files yet.
    #[wasm_bindgen(constructor)]
    pub fn new() -> TestData {
        TestData::default()
    }

    /// Adds the file at `path`.
    pub fn add(&mut self, path: String, bytes: Vec<u8>) {
        self.0.0.insert(path, bytes);
    }
}

/// Runs the browser suite on a new device of the browser's adapter with
/// WebGPU's default limits (and timestamp queries where the adapter has
/// them), calling `on_line` with each `PASS`/`FAIL` line; resolves to the
/// report as JSON (`lines`, `passed`, `failed`, `adapter`).
#[wasm_bindgen]
pub async fn run_suite(data: TestData, on_line: js_sys::Function) -> Result<String, JsValue> {
    let gpu = device::Gpu::new(wgpu::Limits::default(), wgpu::Features::TIMESTAMP_QUERY)
        .await
        .map_err(|e| JsValue::from_str(&e))?;
    let mut report = suite::Report::new(Some(on_line));
    suite::moves::run(&gpu, &mut report).await;
    suite::paths::run(&gpu, &mut report).await;
    suite::conformance::run(&gpu, &data.0, &mut report).await;
    suite::misuse::run(&gpu, &mut report).await;
    let mut json: serde_json::Value =
        serde_json::from_str(&report.to_json()).map_err(|e| JsValue::from_str(&e.to_string()))?;
    json["adapter"] = gpu.describe().into();
    Ok(json.to_string())
}
