//! What encodes reuse: uploaded parameter tables. The cache holds only the
//! splitter's own table buffers, never a caller's buffer, so a runtime's
//! dropped tensors free their memory at once; bind groups (which hold the
//! buffers they bind) are created per encode and dropped with the recorded
//! commands.

use std::collections::HashMap;
use std::sync::Arc;

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

/// Uploaded tables by content hash, with the bytes to confirm a hit.
#[derive(Debug, Default)]
pub(crate) struct TableCache {
    entries: HashMap<u64, CachedTable>,
    bytes: u64,
    clock: u64,
}

#[derive(Debug)]
struct CachedTable {
    content: Vec<u8>,
    buffer: Arc<wgpu::Buffer>,
    last_used: u64,
}

impl TableCache {
    /// The cached buffer holding exactly `content`, if any.
    pub fn get(&mut self, key: u64, content: &[u8]) -> Option<Arc<wgpu::Buffer>> {
        self.clock += 1;
        let entry = self.entries.get_mut(&key)?;
        if entry.content != content {
            return None;
        }
        entry.last_used = self.clock;
        Some(entry.buffer.clone())
    }

    /// Keeps `buffer` (holding `content`) within the policy's budget.
    pub fn insert(
        &mut self,
        policy: CachePolicy,
        key: u64,
        content: &[u8],
        buffer: Arc<wgpu::Buffer>,
    ) {
        let CachePolicy::Bytes(budget) = policy else {
            return;
        };
        let size = content.len() as u64;
        if size > budget {
            return;
        }
        if let Some(old) = self.entries.remove(&key) {
            self.bytes -= old.content.len() as u64;
        }
        while self.bytes + size > budget {
            self.evict_oldest();
        }
        self.bytes += size;
        self.entries.insert(
            key,
            CachedTable {
                content: content.to_vec(),
                buffer,
                last_used: self.clock,
            },
        );
    }

    fn evict_oldest(&mut self) {
        let Some((&key, _)) = self.entries.iter().min_by_key(|(_, e)| e.last_used) else {
            return;
        };
        if let Some(old) = self.entries.remove(&key) {
            self.bytes -= old.content.len() as u64;
        }
    }

    /// Drops every table.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Bytes of tables held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
