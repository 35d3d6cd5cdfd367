#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod allocation;
mod calls;
mod concat;
mod concat_run;
mod element;
mod error;
mod moves;
mod permuted;
mod primitive;
mod splitter;
mod staging;

pub use allocation::SHARED_ALLOCATION_ABOVE;
pub use element::element_type;
pub use error::{BurnSplitError, Result};
pub use moves::{ConcatMove, SplitMove};
pub use primitive::SplitKind;
pub use splitter::BurnSplitter;
