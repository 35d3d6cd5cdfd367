//! The bench page's side in wasm (next).
