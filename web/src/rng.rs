//! Pseudo-random inputs: xorshift32, the same generator the recordings'
//! page uses, so a case's bytes are a seed and a length.

use wgpu_split::{ElementType, HostTensor};

/// xorshift32 from a nonzero seed.
#[derive(Debug, Clone)]
pub struct Rng(u32);

impl Rng {
    /// A generator from `seed` (0 is taken as 1).
    pub fn new(seed: u32) -> Self {
        Rng(seed.max(1))
    }

    /// The next 32 bits.
    pub fn next_u32(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// `len` bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| (self.next_u32() >> 24) as u8).collect()
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.next_u32() as usize % n
    }

    /// A tensor of `element_type` and `shape` with random bits (sub-byte
    /// types: the bits past the last element of the last byte zero, as the
    /// host path keeps them).
    pub fn tensor(&mut self, element_type: ElementType, shape: &[usize]) -> HostTensor {
        let count: usize = shape.iter().product();
        let len = element_type.byte_len(count).unwrap_or_default();
        let mut bytes = self.bytes(len);
        let bits = element_type.bit_width().unwrap_or(8) as usize;
        let used = count * bits;
        if !used.is_multiple_of(8)
            && let Some(last) = bytes.last_mut()
        {
            *last &= (1u8 << (used % 8)) - 1;
        }
        HostTensor::from_raw(element_type, shape, bytes).expect("a tensor of its own length")
    }
}
