//! Buffer roles and usages as plain values: what errors name and what a
//! plan needs of a buffer. The GPU side converts [`Usages`] to
//! `wgpu::BufferUsages`.

use std::fmt;

use crate::kernels::work::Placement;

/// Which of an encode's buffers something is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BufferRole {
    /// The input tensor.
    Input,
    /// The arena of an arena plan.
    Arena,
    /// The destination region of output `n`.
    Output(usize),
    /// A readback buffer.
    Staging,
    /// The output tensor of a concat.
    ConcatOutput,
    /// The region of a concat's input `n`.
    ConcatInput(usize),
}

impl BufferRole {
    /// How errors name destination `index` of a plan placed so: output
    /// `index`'s region, or the arena.
    pub fn destination(placement: Placement, index: usize) -> BufferRole {
        if placement.is_shared() {
            BufferRole::Arena
        } else {
            BufferRole::Output(index)
        }
    }
}

impl fmt::Display for BufferRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferRole::Input => f.write_str("input"),
            BufferRole::Arena => f.write_str("arena"),
            BufferRole::Output(n) => write!(f, "output {n}"),
            BufferRole::Staging => f.write_str("staging"),
            BufferRole::ConcatOutput => f.write_str("concat output"),
            BufferRole::ConcatInput(n) => write!(f, "concat input {n}"),
        }
    }
}

/// Buffer usages a plan needs, as plain flags (`wgpu::BufferUsages` has the
/// same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Usages {
    /// Bound as a storage buffer by a dispatch.
    pub storage: bool,
    /// The source of a copy command.
    pub copy_src: bool,
    /// The destination of a copy command.
    pub copy_dst: bool,
}

impl Usages {
    /// No usage.
    pub const NONE: Usages = Usages {
        storage: false,
        copy_src: false,
        copy_dst: false,
    };

    /// Every usage of `self` or `other`.
    pub fn union(self, other: Usages) -> Usages {
        Usages {
            storage: self.storage || other.storage,
            copy_src: self.copy_src || other.copy_src,
            copy_dst: self.copy_dst || other.copy_dst,
        }
    }

    /// The usages of `self` that `have` lacks.
    pub fn missing_from(self, have: Usages) -> Usages {
        Usages {
            storage: self.storage && !have.storage,
            copy_src: self.copy_src && !have.copy_src,
            copy_dst: self.copy_dst && !have.copy_dst,
        }
    }

    /// True when no usage is set.
    pub fn is_empty(self) -> bool {
        self == Usages::NONE
    }
}

impl fmt::Display for Usages {
    /// `STORAGE | COPY_SRC`, as wgpu names them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = [
            (self.storage, "STORAGE"),
            (self.copy_src, "COPY_SRC"),
            (self.copy_dst, "COPY_DST"),
        ]
        .into_iter()
        .filter(|(set, _)| *set)
        .map(|(_, name)| name)
        .collect();
        f.write_str(&names.join(" | "))
    }
}
