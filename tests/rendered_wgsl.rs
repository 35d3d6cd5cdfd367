//! What the GPU runs, readable without running anything: every kernel's
//! module in each of its forms for the form's first sample split (and the
//! concat mirroring it, for a kernel that moves concats), and for the first
//! sample of each code path a form's layouts take (row blocks' `looped`),
//! in both placements and both lane orders, rendered into
//! `shaders/rendered/` (`<kernel>[_<form>][_<path>]_<placement>_<lanes>.wgsl`,
//! the form named where a kernel has two) and checked against what the
//! crate renders today. `WGPU_SPLIT_BLESS=1 cargo test --test rendered_wgsl`
//! rewrites them after a deliberate change (review the diff).

use std::path::PathBuf;

use wgpu_split::plan::internals::{SamplePlan, sample_plans};
use wgpu_split::plan::{CostModel, Kernel, Placement, PlanLimits, PlanOptions, Strategy};

/// The rendered modules: (file name, WGSL).
fn rendered() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for kernel in Kernel::ALL {
        for placement in [Placement::Separate, Placement::Arena] {
            for model in [CostModel::LAVAPIPE, CostModel::DISCRETE_GPU] {
                let options = PlanOptions::default()
                    .strategy(Strategy::Auto(model))
                    .in_compute_pass()
                    .placement(placement);
                let plans = sample_plans(kernel, &PlanLimits::WEBGPU_DEFAULT, &options)
                    .unwrap_or_else(|e| panic!("{kernel} {placement:?}: {e}"));
                // The first sample of each form in each direction the kernel
                // moves, and of each code path a form's layouts take.
                let path =
                    |p: &SamplePlan| p.plan.generated_layouts().first().and_then(|l| l.path());
                let mut firsts: Vec<&SamplePlan> = Vec::new();
                for &form in kernel.forms() {
                    for sample in plans.iter().filter(|p| p.form == form) {
                        let seen = firsts.iter().any(|f| {
                            f.form == form && f.concat == sample.concat && path(f) == path(sample)
                        });
                        if !seen {
                            firsts.push(sample);
                        }
                    }
                }
                for sample in firsts {
                    let (split, t) = (&sample.split, sample.element_type);
                    let key = &sample.plan.shaders()[0];
                    let direction = if sample.concat { "_concat" } else { "" };
                    let form = if kernel.forms().len() > 1 {
                        format!("_{}", sample.form.name())
                    } else {
                        String::new()
                    };
                    let form = match path(sample) {
                        Some(path) => format!("{form}_{path}"),
                        None => form,
                    };
                    let name = format!(
                        "{}{form}{direction}_{}_{}.wgsl",
                        kernel.name(),
                        placement.name(),
                        model.lanes.name()
                    );
                    let what = if sample.concat {
                        "the concat mirroring the split of"
                    } else {
                        "split:"
                    };
                    let first = match path(sample) {
                        Some(path) => format!("the first sample of its {path} path"),
                        None => "the form's first sample".to_string(),
                    };
                    let header = format!(
                        "// Rendered by tests/rendered_wgsl.rs: kernel {kernel} ({} form), {} lanes, outputs {},\n\
                         // {what} {t} {:?} on axis {} into {:?} ({first}).\n\n",
                        sample.form.name(),
                        model.lanes.name(),
                        placement.name(),
                        split.input_shape(),
                        split.axis(),
                        split.lengths(),
                    );
                    files.push((name, header + &key.source()));
                }
            }
        }
    }
    files
}

#[test]
fn the_rendered_wgsl_is_what_the_crate_renders() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("shaders/rendered");
    let bless = std::env::var("WGPU_SPLIT_BLESS").as_deref() == Ok("1");
    let files = rendered();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let mut stale = Vec::new();
    for (name, text) in &files {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(on_disk) if on_disk == *text => {}
            _ => stale.push(name.clone()),
        }
    }
    let on_disk = std::fs::read_dir(&dir).map_or(0, |d| d.count());
    assert!(
        stale.is_empty() && on_disk == files.len(),
        "shaders/rendered/ is stale ({stale:?}, {on_disk} files for {}): run \
         WGPU_SPLIT_BLESS=1 cargo test --test rendered_wgsl and review the diff",
        files.len()
    );
}
