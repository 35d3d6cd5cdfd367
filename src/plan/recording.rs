//! What an encode records, as plain data: the buffers it touches, its shader
//! modules with their bind group layouts, and its commands (copies, then
//! dispatches with every binding as buffer, offset and size) and the table's
//! bytes. Built from the same [`BoundPlan`] the GPU path records from, so a
//! WebGPU implementation can replay it and validate exactly what the
//! splitter would record (the Dawn replay of `tests/dawn/`), or execute it
//! (the browser suite of `tests/browser/`).

use std::ops::Range;

use crate::kernels::shader::LayoutEntry;
use crate::kernels::wgsl::Bindings;
use crate::plan::binding::regions::PlainRegion;
use crate::plan::binding::usages::Usages;
use crate::plan::binding::{BoundPlan, SlotBinding};
use crate::plan::error::EncodeError;
use crate::plan::geometry::Direction;
use crate::plan::split_plan::SplitPlan;

/// The bytes of the splitter's spare buffer: one 16-byte binding per slot,
/// each at its own multiple of the largest storage offset alignment WebGPU
/// allows (256), so that no two spare bindings of a dispatch overlap.
pub const SPARE_BUFFER_BYTES: u64 = 32 * 256;

/// A buffer an encode touches: the caller's (input, destinations) or the
/// splitter's own (the table, the spare buffer).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RecordedBuffer {
    /// What it is, e.g. `"input"`, `"caller buffer 2"`, `"table"`.
    pub label: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its usages, by wgpu's names (`STORAGE`, `COPY_SRC`, `COPY_DST`,
    /// `UNIFORM`).
    pub usages: Vec<&'static str>,
}

/// A shader module the dispatches run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RecordedModule {
    /// Its WGSL source.
    pub wgsl: String,
    /// Its entry point.
    pub entry_point: &'static str,
    /// Its bind group layout (group 0).
    pub layout: Vec<LayoutEntry>,
}

/// One buffer binding of a dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RecordedBinding {
    /// The binding number.
    pub binding: u32,
    /// The buffer, an index into [`Recording::buffers`].
    pub buffer: usize,
    /// The bytes bound.
    pub offset: u64,
    /// Their length.
    pub size: u64,
}

/// One recorded command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(tag = "command", rename_all = "snake_case"))]
pub enum RecordedCommand {
    /// `copy_buffer_to_buffer`.
    Copy {
        /// The source buffer.
        src: usize,
        /// Its first byte.
        src_offset: u64,
        /// The destination buffer.
        dst: usize,
        /// Its first byte.
        dst_offset: u64,
        /// Bytes copied.
        size: u64,
    },
    /// A dispatch of a module, inside the encode's one compute pass.
    Dispatch {
        /// Its module, an index into [`Recording::modules`].
        module: usize,
        /// Its bind group 0.
        bindings: Vec<RecordedBinding>,
        /// Workgroups in x, y and z.
        workgroups: [u32; 3],
    },
}

/// Everything an encode of a plan records into given regions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Recording {
    /// The buffers: the caller's (by their region's buffer number), a
    /// staged plan's scratch arena, then the table and the spare buffer.
    pub buffers: Vec<RecordedBuffer>,
    /// The dispatches' modules, in the order they first run (none without
    /// dispatches).
    pub modules: Vec<RecordedModule>,
    /// Copies first, then the dispatches, as an encode records them.
    pub commands: Vec<RecordedCommand>,
    /// The bytes an encode uploads to the table buffer (its first bytes;
    /// the rest is zero): the plan's parameter tables, with the skipping
    /// copies of split passes appended where destinations would alias.
    pub table: Vec<u8>,
}

impl Recording {
    /// A recording of the caller's buffers under `regions` (by their
    /// region's buffer number), nothing recorded yet.
    pub(crate) fn of_regions<'r>(regions: impl Iterator<Item = &'r PlainRegion>) -> Recording {
        let mut buffers: Vec<RecordedBuffer> = Vec::new();
        for region in regions {
            if buffers.len() <= region.buffer {
                buffers.resize(
                    region.buffer + 1,
                    RecordedBuffer {
                        label: String::new(),
                        size: 0,
                        usages: Vec::new(),
                    },
                );
            }
            buffers[region.buffer] = RecordedBuffer {
                label: format!("caller buffer {}", region.buffer),
                size: region.buffer_size,
                usages: usage_names(region.usages),
            };
        }
        Recording {
            buffers,
            modules: Vec::new(),
            commands: Vec::new(),
            table: Vec::new(),
        }
    }
}

/// Where a recording's own buffers are: the table and the spare buffer.
struct RecordedAt {
    table: usize,
    spare: usize,
}

/// The usages as wgpu names them.
fn usage_names(usages: Usages) -> Vec<&'static str> {
    [
        (usages.storage, "STORAGE"),
        (usages.copy_src, "COPY_SRC"),
        (usages.copy_dst, "COPY_DST"),
    ]
    .into_iter()
    .filter(|(set, _)| *set)
    .map(|(_, name)| name)
    .collect()
}

impl SplitPlan {
    analysis_pub! {
        /// What an encode of this plan into `destinations` records, as plain
        /// data: it binds the plan as an encode does ([`SplitPlan::bind`]).
        ///
        /// # Errors
        ///
        /// The [`EncodeError`]s of the regions.
        pub fn recording(
            &self,
            input: &PlainRegion,
            destinations: &[PlainRegion],
        ) -> Result<Recording, EncodeError> {
            let mut buffers =
                Recording::of_regions(std::iter::once(input).chain(destinations)).buffers;
            // A staged plan's scratch arena (the splitter's) comes after the
            // caller's buffers; the table and the spare buffer come last.
            let scratch = self.is_staged().then(|| {
                buffers.push(RecordedBuffer {
                    label: "scratch".to_string(),
                    size: self.scratch_bytes().max(4),
                    usages: vec!["STORAGE", "COPY_SRC", "COPY_DST"],
                });
                self.scratch_region(buffers.len() - 1)
            });
            let (table, spare) = (buffers.len(), buffers.len() + 1);
            let mut recording = Recording {
                buffers,
                modules: Vec::new(),
                commands: Vec::new(),
                table: Vec::new(),
            };
            let at = RecordedAt { table, spare };
            match (self.staged_plans(), scratch) {
                (Some((stage, unstage)), Some(scratch)) => {
                    self.check_regions(input, destinations)?;
                    if self.direction() == Direction::Split {
                        stage.record_into(&mut recording, &at, input, &[scratch], false)?;
                        unstage.record_into(&mut recording, &at, &scratch, destinations, true)?;
                    } else {
                        // A concat: the pieces into the scratch first.
                        unstage.record_into(&mut recording, &at, &scratch, destinations, false)?;
                        stage.record_into(&mut recording, &at, input, &[scratch], false)?;
                    }
                }
                _ => self.record_into(&mut recording, &at, input, destinations, false)?,
            }
            recording.buffers.push(RecordedBuffer {
                label: "table".to_string(),
                size: (recording.table.len() as u64).max(16),
                usages: vec!["STORAGE", "UNIFORM"],
            });
            recording.buffers.push(RecordedBuffer {
                label: "spare".to_string(),
                size: SPARE_BUFFER_BYTES,
                usages: vec!["STORAGE", "COPY_SRC", "COPY_DST"],
            });
            Ok(recording)
        }
    }

    /// Appends what an encode of this plan (not staged) records between
    /// `input` and `destinations` to `recording`: its modules, its copies
    /// (before its dispatches, or after them with `copies_last`) and its
    /// table, at the next table offset the limits allow.
    fn record_into(
        &self,
        recording: &mut Recording,
        at: &RecordedAt,
        input: &PlainRegion,
        destinations: &[PlainRegion],
        copies_last: bool,
    ) -> Result<(), EncodeError> {
        let bound = self.bind(input, destinations)?;
        let table_start = if recording.table.is_empty() {
            0
        } else {
            (recording.table.len() as u64).next_multiple_of(self.limits().table_alignment_bytes())
        };
        let copies = self.recorded_copies(input, destinations);
        let (keys, modules) = bound.shaders();
        let module_base = recording.modules.len();
        let modules: Vec<usize> = modules.iter().map(|m| m + module_base).collect();
        let mut dispatches =
            self.recorded_dispatches(&bound, &modules, input, destinations, at.table, at.spare);
        for d in &mut dispatches {
            if let RecordedCommand::Dispatch { bindings, .. } = d {
                bindings[0].offset += table_start;
            }
        }
        if copies_last {
            recording.commands.extend(dispatches);
            recording.commands.extend(copies);
        } else {
            recording.commands.extend(copies);
            recording.commands.extend(dispatches);
        }
        recording
            .modules
            .extend(keys.iter().map(|key| RecordedModule {
                wgsl: key.source(),
                entry_point: key.entry_point(),
                layout: key.bind_group_layout(),
            }));
        let table = bound.table();
        if !table.is_empty() {
            recording.table.resize(table_start as usize, 0);
            recording.table.extend_from_slice(&table);
        }
        Ok(())
    }

    fn recorded_copies(
        &self,
        input: &PlainRegion,
        destinations: &[PlainRegion],
    ) -> Vec<RecordedCommand> {
        self.copy_commands()
            .map(|c| {
                let d = &destinations[c.destination];
                let [(src, src_offset), (dst, dst_offset)] = c.ends(
                    self.direction(),
                    (input.buffer, input.offset),
                    (d.buffer, d.offset),
                );
                RecordedCommand::Copy {
                    src,
                    src_offset,
                    dst,
                    dst_offset,
                    size: c.size,
                }
            })
            .collect()
    }

    /// The dispatches of `bound`, each naming its module (`modules`, per
    /// dispatch).
    fn recorded_dispatches(
        &self,
        bound: &BoundPlan<'_>,
        modules: &[usize],
        input: &PlainRegion,
        destinations: &[PlainRegion],
        table: usize,
        spare: usize,
    ) -> Vec<RecordedCommand> {
        let binding = |binding, buffer, bytes: &Range<u64>| RecordedBinding {
            binding,
            buffer,
            offset: bytes.start,
            size: bytes.end - bytes.start,
        };
        bound
            .dispatches
            .iter()
            .zip(modules)
            .map(|(d, &module)| {
                let mut bindings = vec![
                    binding(Bindings::TABLE, table, &d.table_bytes),
                    binding(Bindings::SOURCE, input.buffer, &d.src),
                ];
                for (slot, bound) in d.dst.iter().enumerate() {
                    let number = Bindings::destination(slot as u32);
                    bindings.push(match bound {
                        SlotBinding::Destination { destination, bytes } => {
                            binding(number, destinations[*destination].buffer, bytes)
                        }
                        SlotBinding::Spare => binding(number, spare, &self.spare_binding(slot)),
                    });
                }
                RecordedCommand::Dispatch {
                    module,
                    bindings,
                    workgroups: [d.workgroups[0], d.workgroups[1], 1],
                }
            })
            .collect()
    }
}
