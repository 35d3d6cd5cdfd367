//! A plan's shader modules: the distinct modules its passes run, each
//! built once however many passes share it.

use crate::kernels::Kernel;
use crate::kernels::lanes::LaneOrder;
use crate::kernels::shader::ShaderKey;
use crate::kernels::work::Placement;
use crate::plan::geometry::Direction;
use crate::plan::passes::Pass;

/// The distinct modules of `passes`, in the order they first run, and per
/// pass the index of its module there. A generated module binds its own
/// pass's destinations, a table-driven one as many as the busiest pass.
/// Passes of one layout share a module: a key is built once per module,
/// not per pass (a plan may hold thousands of passes).
pub(crate) fn pass_modules(
    kernel: Kernel,
    placement: Placement,
    lanes: LaneOrder,
    direction: Direction,
    passes: &[Pass],
) -> (Vec<ShaderKey>, Vec<usize>) {
    let busiest = passes
        .iter()
        .map(|p| p.dst_windows.len())
        .max()
        .unwrap_or(0);
    let mut keys: Vec<ShaderKey> = Vec::new();
    let of_pass = passes
        .iter()
        .map(|pass| {
            let layout = pass.layout.as_ref();
            let slots = match layout {
                Some(_) => pass.dst_windows.len(),
                None => busiest,
            } as u32;
            let known = keys
                .iter()
                .position(|k| k.layout() == layout && k.slots() == slots);
            known.unwrap_or_else(|| {
                let key = ShaderKey::new(kernel, placement, slots, lanes, layout.cloned());
                keys.push(key.for_direction(direction));
                keys.len() - 1
            })
        })
        .collect();
    (keys, of_pass)
}
