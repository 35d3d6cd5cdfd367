//! What encodes reuse, bounded: one least-recently-used cache type for the
//! uploaded parameter tables and the compiled pipelines of generated
//! kernels. Only the splitter's own objects are kept, never a caller's
//! buffer, so a runtime's dropped tensors free their memory at once.

use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

use lru::LruCache;

/// What a splitter keeps for reuse, within bounds the caller sets.
///
/// * Uploaded parameter tables: one per plan (a table depends on the plan
///   alone, never on the caller's offsets), and one per plan and packing
///   where destinations packed closer than the binding alignment would
///   alias (the table of that grouping of the plan's entries, whatever the
///   offsets), bounded by the memory they take
///   ([`CacheUsage::table_bytes`]); past it the least recently used is
///   dropped, and its plan builds and uploads it again on its next encode
///   (a buffer creation: about 20 µs on lavapipe).
/// * Compiled pipelines of generated kernels (row blocks, row streams): one
///   per split layout; and the permuted moves' (one per destination count,
///   element width, lane order and kernel), bounded the same way, each
///   family at most [`CachePolicy::generated_pipelines`]. Past the bound the least recently used is dropped
///   and compiles again on its next encode: about 5.6 ms to build and
///   48 ms at its first execution on lavapipe, every time, so a workload
///   that cycles through more layouts than the bound pays that on every
///   encode. Set the bound above the layouts a model uses, and warm them
///   up ahead of time with [`crate::gpu::SplitterCache::warm_up`].
///   (Table-driven kernels are a handful of pipelines per device, always
///   kept.)
///
/// Only the splitter's own objects are held, never a caller's buffer.
///
/// # Examples
///
/// ```
/// use wgpu_split::gpu::CachePolicy;
///
/// let policy = CachePolicy::default().generated_pipelines(128);
/// assert_eq!(policy.table_bytes, 16 << 20);
/// assert_eq!(CachePolicy::NONE.table_bytes(0).table_bytes, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CachePolicy {
    /// Memory the kept tables may take, in bytes, counted as
    /// [`CacheUsage::table_bytes`] counts it; 0 keeps none (every encode
    /// uploads its table).
    pub table_bytes: u64,
    /// Compiled pipelines of generated kernels and of the permuted moves
    /// kept, together; 0 keeps none.
    pub generated_pipelines: u64,
    /// The largest scratch arena kept for staged plans
    /// ([`crate::plan::SplitPlan::is_staged`]), in bytes: an encode that
    /// needs more makes one of its own, which wgpu frees once the work
    /// that uses it is done; 0 keeps none.
    pub scratch_bytes: u64,
}

impl CachePolicy {
    /// Memory a kept table costs besides its bytes: wgpu's buffer object,
    /// the driver's allocation and the cache's entry. About 2 KiB per buffer
    /// on lavapipe (see `docs/DEVICE.md`); counted so that the table budget
    /// bounds real memory, not only table bytes.
    pub const TABLE_OVERHEAD_BYTES: u64 = TABLE_OVERHEAD_BYTES;

    /// Keeps nothing: every encode uploads its table and compiles its
    /// generated kernel (for measurements).
    pub const NONE: CachePolicy = CachePolicy {
        table_bytes: 0,
        generated_pipelines: 0,
        scratch_bytes: 0,
    };

    /// The same policy with a memory bound for tables.
    pub fn table_bytes(mut self, bytes: u64) -> Self {
        self.table_bytes = bytes;
        self
    }

    /// The same policy with a bound on generated pipelines.
    pub fn generated_pipelines(mut self, count: u64) -> Self {
        self.generated_pipelines = count;
        self
    }
}

impl Default for CachePolicy {
    /// 16 MiB of tables (about 10,000 plans of three outputs, or one plan
    /// of 170,000 outputs), 32 generated pipelines and a scratch arena of
    /// up to 256 MiB.
    fn default() -> Self {
        CachePolicy {
            table_bytes: 16 << 20,
            generated_pipelines: 32,
            scratch_bytes: 256 << 20,
        }
    }
}

/// What a splitter's cache holds ([`crate::gpu::SplitterCache::usage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheUsage {
    /// Tables kept.
    pub tables: usize,
    /// The memory they take, in bytes: per table its device buffer (rounded
    /// up to 256 bytes), the host copy that confirms a hit (the plan's
    /// table, or for a packing's table what determines it), and
    /// [`CachePolicy::TABLE_OVERHEAD_BYTES`] of wgpu's and the driver's bookkeeping.
    pub table_bytes: u64,
    /// Compiled pipelines of generated kernels and of the permuted moves
    /// kept.
    pub generated_pipelines: usize,
    /// Bytes of the scratch arena kept for staged plans (0: none).
    pub scratch_bytes: u64,
}

/// [`CachePolicy::TABLE_OVERHEAD_BYTES`].
const TABLE_OVERHEAD_BYTES: u64 = 2048;

/// The memory a kept table of `len` bytes takes, with the `identity` bytes
/// that confirm a hit ([`CacheUsage::table_bytes`]).
pub(crate) fn table_cost(len: u64, identity: u64) -> u64 {
    len.next_multiple_of(256) + identity + TABLE_OVERHEAD_BYTES
}

/// Values by key, each with a cost, kept within a budget: inserting past it
/// drops the least recently used entries (each in O(1)).
#[derive(Debug)]
pub(crate) struct BoundedCache<K: Hash + Eq, V> {
    entries: LruCache<K, (V, u64)>,
    cost: u64,
}

impl<K: Hash + Eq, V> Default for BoundedCache<K, V> {
    fn default() -> Self {
        BoundedCache {
            entries: LruCache::unbounded(),
            cost: 0,
        }
    }
}

impl<K: Hash + Eq, V> BoundedCache<K, V> {
    /// The value of `key`, now the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|(value, _)| value)
    }

    /// Keeps `value` under `key` at `cost` within `budget`, dropping the
    /// least recently used entries as needed; a value that costs more than
    /// the whole budget is not kept.
    pub fn insert(&mut self, key: K, value: V, cost: u64, budget: u64) {
        if let Some((_, old)) = self.entries.pop(&key) {
            self.cost -= old;
        }
        if cost > budget {
            return;
        }
        self.shrink_to(budget - cost);
        self.cost += cost;
        self.entries.put(key, (value, cost));
    }

    /// Drops the least recently used entries until the cost is within
    /// `budget`.
    pub fn shrink_to(&mut self, budget: u64) {
        while self.cost > budget {
            match self.entries.pop_lru() {
                Some((_, (_, dropped))) => self.cost -= dropped,
                None => break,
            }
        }
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.cost = 0;
    }

    /// The summed cost of the entries held.
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// The entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A poisoned lock still guards a consistent cache (every change is one
/// call), so it is used as it is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
