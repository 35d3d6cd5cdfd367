//! The browser suite: the crate compiled to wasm32 on the browser's WebGPU
//! (WebGPU's default limits), every check a named line, `N passed, M
//! failed` at the end.
//!
//! - [`moves`]: split, concat, permuted split and permuted concat of every
//!   element width the GPU path takes, through the async round trip and
//!   through `encode` into regions at offsets in pooled pages (guard bytes
//!   around them checked), past one dispatch's bindings; every byte
//!   compared with the host path run in the same wasm.
//! - [`conformance`]: expected bytes made elsewhere: the ONNX node tests
//!   (onnx's backend tests, `onnx.reference`, real models' nodes captured
//!   with onnxruntime), numpy's permuted moves, and the ONNX reader on the
//!   real models' bytes.
//! - [`paths`]: every other public path (the default context, each async
//!   form, a move prepared inside the caller's pass, the counts, caches).
//! - [`misuse`]: the typed errors (the blocking forms' on the web, the
//!   regions', mapped and destroyed buffers, a destroyed device), the
//!   splitter's start and the async calibration.

pub mod conformance;
pub mod misuse;
pub mod moves;
pub mod pages;
pub mod paths;

use std::collections::BTreeMap;

/// Bytes of the repository's test data, by path under `tests/data/` (the
/// page fetches them; the web has no file system).
#[derive(Debug, Default)]
pub struct Files(pub BTreeMap<String, Vec<u8>>);

impl Files {
    /// The file at `path`, or why not.
    pub fn get(&self, path: &str) -> Result<&[u8], String> {
        self.0
            .get(path)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("the page gave no file {path}"))
    }

    /// Paths under `dir/` (sorted).
    pub fn under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .keys()
            .map(String::as_str)
            .filter(move |p| p.starts_with(dir) && p.as_bytes().get(dir.len()) == Some(&b'/'))
    }
}

/// What the suite found: a line per check.
pub struct Report {
    /// `PASS name` or `FAIL name: why`, in order.
    pub lines: Vec<String>,
    /// Checks that passed.
    pub passed: usize,
    /// Checks that failed.
    pub failed: usize,
    on_line: Option<js_sys::Function>,
}

impl Report {
    /// An empty report calling `on_line` with each line as it is made.
    pub fn new(on_line: Option<js_sys::Function>) -> Self {
        Report {
            lines: Vec::new(),
            passed: 0,
            failed: 0,
            on_line,
        }
    }

    /// Records check `name`.
    pub fn check(&mut self, name: &str, result: Result<(), String>) {
        let line = match result {
            Ok(()) => {
                self.passed += 1;
                format!("PASS {name}")
            }
            Err(why) => {
                self.failed += 1;
                format!("FAIL {name}: {why}")
            }
        };
        if let Some(f) = &self.on_line {
            let _ = f.call1(&wasm_bindgen::JsValue::NULL, &line.as_str().into());
        }
        self.lines.push(line);
    }

    /// The report as JSON: the lines and the counts.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "lines": self.lines,
            "passed": self.passed,
            "failed": self.failed,
        })
        .to_string()
    }
}

/// `Err(format!(..))` unless `cond`.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return Err(format!($($why)+));
        }
    };
}

/// Any error as the check's reason.
pub fn why<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}
