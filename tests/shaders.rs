//! Every WGSL file in `shaders/` parses and validates with naga, with no
//! optional capability (no f16, int64, subgroups), so it runs on every adapter.

use naga::valid::{Capabilities, ValidationFlags, Validator};

#[test]
fn shaders_validate_without_optional_capabilities() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "wgsl") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
        Validator::new(ValidationFlags::all(), Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
        let entries: Vec<&str> = module
            .entry_points
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert!(
            entries.contains(&"split_words") && entries.contains(&"split_vec4"),
            "{entries:?}"
        );
        checked += 1;
    }
    assert_eq!(checked, 1);
}

#[test]
fn the_library_embeds_the_shader_file() {
    let on_disk = include_str!("../shaders/split.wgsl");
    assert_eq!(wgpu_split::gpu::SHADER_SOURCE, on_disk);
}
