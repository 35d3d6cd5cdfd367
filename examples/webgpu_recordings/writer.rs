//! The suite as it is written: every recording's JSON entry (its
//! operator, buffers, modules by index, commands, regions and contents),
//! the modules each once, the bytes the contents name.

use std::collections::HashMap;

use serde_json::{Value, json};
use wgpu_split::plan::internals::{RecordedModule, Recording};

use super::contents::{Blobs, Guard, Placed, contents};

/// The suite as it is written: the recordings' JSON entries, their bytes
/// and their modules, each written once (modules are shared by many
/// recordings).
pub struct Writer<'r> {
    blobs: Blobs,
    guard: Guard,
    modules: Vec<&'r RecordedModule>,
    /// Each module's place, by its source, entry point and layout (one
    /// source serves several entry points: the permuted concat's `main`
    /// and `clear`).
    index: HashMap<(&'r str, &'static str, String), usize>,
    entries: Vec<Value>,
}

impl<'r> Writer<'r> {
    /// A suite whose caller buffers are all among `recordings`'.
    pub fn new<'a>(recordings: impl Iterator<Item = &'a Recording>) -> Writer<'r> {
        let mut blobs = Blobs::default();
        let max_buffer = recordings
            .flat_map(|r| r.buffers.iter().map(|b| b.size))
            .max()
            .unwrap_or(0);
        let guard = Guard::new(&mut blobs, max_buffer);
        Writer {
            blobs,
            guard,
            modules: Vec::new(),
            index: HashMap::new(),
            entries: Vec::new(),
        }
    }

    /// Adds a recording of `operator` ("split" or "concat"), its tensors
    /// `placed`.
    pub fn push(
        &mut self,
        operator: &'static str,
        name: &str,
        recording: &'r Recording,
        placed: Placed<'_>,
    ) {
        let n = self.entries.len();
        let c = contents(&mut self.blobs, &self.guard, n, recording, placed);
        let used: Vec<usize> = recording
            .modules
            .iter()
            .map(|m| {
                let key = (m.wgsl.as_str(), m.entry_point, format!("{:?}", m.layout));
                *self.index.entry(key).or_insert_with(|| {
                    self.modules.push(m);
                    self.modules.len() - 1
                })
            })
            .collect();
        self.entries.push(json!({
            "name": name,
            "operator": operator,
            "buffers": recording.buffers,
            "modules": used,
            "commands": recording.commands,
            "regions": c.regions,
            "contents": c.buffers,
        }));
    }
}

impl Writer<'_> {
    /// The modules, each once, in the order first used.
    pub fn modules(&self) -> &[&RecordedModule] {
        &self.modules
    }

    /// The recordings' entries.
    pub fn entries(&self) -> &[Value] {
        &self.entries
    }

    /// The bytes every entry's segments name.
    pub fn into_bytes(self) -> Vec<u8> {
        self.blobs.into_bytes()
    }
}
