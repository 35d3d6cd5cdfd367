//! What encodes reuse, bounded: one least-recently-used cache type for the
//! uploaded parameter tables and the compiled pipelines of generated
//! kernels. Only the splitter's own objects are kept, never a caller's
//! buffer, so a runtime's dropped tensors free their memory at once.

use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

use lru::LruCache;

/// How many bytes of uploaded parameter tables a splitter keeps for reuse.
///
/// Tables depend on the plan and on the caller's offsets modulo the binding
/// alignment, so a runtime that encodes the same nodes at the same offsets
/// uploads each table once. Only the splitter's own buffers are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CachePolicy {
    /// Upload the table on every encode and keep nothing.
    Off,
    /// Keep tables up to this many bytes in all; past it the least recently
    /// used are dropped.
    Bytes(u64),
}

impl Default for CachePolicy {
    /// 16 MiB of tables: about 350,000 outputs' worth of plans.
    fn default() -> Self {
        CachePolicy::Bytes(16 << 20)
    }
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
        while self.cost + cost > budget {
            match self.entries.pop_lru() {
                Some((_, (_, dropped))) => self.cost -= dropped,
                None => break,
            }
        }
        self.cost += cost;
        self.entries.put(key, (value, cost));
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
