//! Row streams with striped lanes (GPUs): each output's entry owns a range
//! of invocations, one of the output's vec4s each, shifted out of its row's
//! run (the rest from the next row's where the vec4 crosses the run's end;
//! a short run's vec4 gathered word by word), so that consecutive lanes
//! touch consecutive vec4s of the output and, inside a row, of the input.

use super::row_streams::{RowStreams, WGSL};
use crate::plan::wgsl::{Variant, read_entries};

impl RowStreams {
    /// The striped body: each output's invocations on its consecutive
    /// vec4s (gathered word by word for a short run).
    pub(super) fn striped(&self, variant: &Variant) -> String {
        let streams: String = self
            .outputs
            .iter()
            .enumerate()
            .map(|(j, out)| {
                if out.is_short() {
                    return self.gather(j, variant, out);
                }
                WGSL.fill(
                    "striped_stream",
                    &[
                        ("unless_skipped", &variant.unless_skipped(j)),
                        ("j", &j),
                        ("run", &out.run_bits),
                        ("block", &self.block_bits),
                        ("gap", &(self.block_bits - out.run_bits)),
                        ("slot", &variant.placement.slot_of_entry(j)),
                    ],
                )
            })
            .collect();
        WGSL.fill(
            "striped_body",
            &[
                ("entries", &read_entries(variant, self.outputs.len())),
                ("streams", &streams),
            ],
        )
    }
}
