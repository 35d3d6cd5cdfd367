//! Regions at offsets in pooled pages, as a runtime's allocator packs
//! tensors: random gaps between them, every other byte a guard that must
//! come back untouched.

use crate::ensure;
use crate::rng::Rng;

/// What every byte outside the regions starts as (and must stay).
pub const GUARD: u8 = 0xA5;

/// Regions packed in one page.
#[derive(Debug, Clone)]
pub struct Page {
    /// Each region's offset.
    pub offsets: Vec<u64>,
    /// Each region's size.
    pub sizes: Vec<u64>,
    /// The page's size.
    pub size: u64,
}

impl Page {
    /// Regions of `sizes` bytes, each at a multiple of `align` with zero to
    /// two `align`s between them (and before the first, after the last).
    pub fn pack(sizes: &[u64], align: u64, rng: &mut Rng) -> Page {
        let align = align.max(4);
        let mut end = align * (1 + rng.below(2) as u64);
        let offsets = sizes
            .iter()
            .map(|&s| {
                let start = end.next_multiple_of(align) + align * rng.below(3) as u64;
                end = start + s;
                start
            })
            .collect();
        Page {
            offsets,
            sizes: sizes.to_vec(),
            size: (end + 2 * align).next_multiple_of(4),
        }
    }

    /// The page's bytes with `contents[i]` at region `i`'s offset, guards
    /// elsewhere.
    pub fn fill(&self, contents: &[&[u8]]) -> Vec<u8> {
        let mut page = vec![GUARD; self.size as usize];
        for (&at, bytes) in self.offsets.iter().zip(contents) {
            page[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
        }
        page
    }

    /// `got` (the page read back) holds `expected[i]` at region `i`, zeros
    /// for the rest of each non-empty region, and guards everywhere else.
    pub fn check_written(&self, got: &[u8], expected: &[&[u8]]) -> Result<(), String> {
        ensure!(got.len() as u64 >= self.size, "the page came back short");
        let mut owned = vec![false; got.len()];
        for (i, ((&at, &size), want)) in self
            .offsets
            .iter()
            .zip(&self.sizes)
            .zip(expected)
            .enumerate()
        {
            let at = at as usize;
            if size == 0 {
                continue;
            }
            let region = &got[at..at + size as usize];
            if let Some(k) = region[..want.len()]
                .iter()
                .zip(*want)
                .position(|(a, b)| a != b)
            {
                return Err(format!(
                    "region {i}: byte {k} of {} is {:#04x}, expected {:#04x}",
                    want.len(),
                    region[k],
                    want[k]
                ));
            }
            if let Some(k) = region[want.len()..].iter().position(|&b| b != 0) {
                return Err(format!(
                    "region {i}: byte {} past the output (of {size}) is {:#04x}, not zero",
                    want.len() + k,
                    region[want.len() + k]
                ));
            }
            owned[at..at + size as usize]
                .iter_mut()
                .for_each(|o| *o = true);
        }
        if let Some(k) = (0..got.len()).find(|&k| !owned[k] && got[k] != GUARD) {
            return Err(format!(
                "byte {k} outside every region was written ({:#04x})",
                got[k]
            ));
        }
        Ok(())
    }
}
