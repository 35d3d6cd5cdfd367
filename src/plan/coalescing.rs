//! How a GPU would serve a plan's memory accesses, from an access trace:
//! the loads and stores every traced invocation made, in order
//! ([`TracedDispatch`], recorded on any adapter by `crate::gpu::trace`), are
//! grouped as a warp of `W` consecutive invocations issues them (one
//! request per static access site and iteration), and each request is
//! counted in 32-byte sectors and 128-byte lines against the ideal for the
//! bytes it moves ([`Coalescing`]). Pure data: tests feed it traces of
//! their own.

use std::collections::{HashMap, HashSet};

/// One request being gathered: a store (else a load), and each lane's
/// buffer, byte and width.
type Request = (bool, Vec<(usize, u64, u32)>);

/// One warp's footprint in one buffer: the sectors, the 4-byte words and
/// the rows it touched.
type Footprint = (HashSet<u64>, HashSet<u64>, HashSet<u64>);

/// One load or store of an invocation, as its module's trace variant
/// records it (`shaders/prelude.wgsl`, fragment `record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Access {
    /// The access site: its number in the module's source.
    pub site: u32,
    /// A store (else a load).
    pub store: bool,
    /// The binding accessed.
    pub binding: u32,
    /// Bytes accessed (4 or 16).
    pub bytes: u32,
    /// The element accessed, in units of `bytes` from the binding's start.
    pub unit: u32,
}

impl Access {
    /// The access a trace record `(code, unit)` describes:
    /// `code = site << 11 | log2(bytes) << 8 | binding << 1 | store`.
    pub fn decode(code: u32, unit: u32) -> Access {
        Access {
            site: code >> 11,
            store: code & 1 == 1,
            binding: (code >> 1) & 0x7f,
            bytes: 1 << ((code >> 8) & 7),
            unit,
        }
    }
}

/// The buffer number a trace gives a staged plan's scratch arena
/// ([`crate::plan::SplitPlan::is_staged`]): loads of it are counted apart
/// from the input's ([`Coalescing::scratch_loaded_bytes`]).
pub const SCRATCH_BUFFER: usize = usize::MAX;

/// Where a dispatch's binding lies: which buffer, from which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TracedBinding {
    /// The binding number.
    pub binding: u32,
    /// The buffer it binds (any numbering that tells buffers apart).
    pub buffer: usize,
    /// Its first byte in the buffer.
    pub offset: u64,
}

/// The traced invocations of one dispatch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TracedDispatch {
    /// Invocations that do work in the dispatch.
    pub invocations: u64,
    /// Its bindings.
    pub bindings: Vec<TracedBinding>,
    /// Runs of consecutive traced invocations: the first one's index, and
    /// each one's accesses in program order.
    pub windows: Vec<(u64, Vec<Vec<Access>>)>,
}

/// Warp requests of one kind (loads or stores), summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Requests {
    /// Requests: (warp, site, iteration) with at least one active lane.
    pub requests: u64,
    /// 32-byte sectors the requests touched.
    pub sectors: u64,
    /// Sectors the same bytes need, contiguous and aligned.
    pub ideal_sectors: u64,
    /// 128-byte lines the requests touched.
    pub lines: u64,
    /// Lines the same bytes need.
    pub ideal_lines: u64,
    /// Distinct bytes the requests moved.
    pub bytes: u64,
    /// Rows the requests touched (per request, the distinct rows of its
    /// lanes, by the caller's row function, [`analyse_with_rows`]): each
    /// may cost one sector and one line more than its bytes need, since a
    /// run at an odd offset cannot start on a sector and a row boundary
    /// breaks the bytes' contiguity.
    pub rows: u64,
    /// Lanes that took part, summed over the requests (a request of a
    /// full warp counts `W`; one whose other lanes sat idle or had left
    /// their loop counts fewer).
    pub lanes: u64,
}

impl Requests {
    /// Sectors per request.
    pub fn sectors_per_request(&self) -> f64 {
        self.sectors as f64 / self.requests.max(1) as f64
    }

    /// Ideal sectors per request.
    pub fn ideal_per_request(&self) -> f64 {
        self.ideal_sectors as f64 / self.requests.max(1) as f64
    }

    /// Lanes taking part per request (`W` when every lane of every warp
    /// does).
    pub fn lanes_per_request(&self) -> f64 {
        self.lanes as f64 / self.requests.max(1) as f64
    }

    /// Sectors against the ideal (1.0: coalesced).
    pub fn sector_ratio(&self) -> f64 {
        self.sectors as f64 / self.ideal_sectors.max(1) as f64
    }

    /// Lines against the ideal.
    pub fn line_ratio(&self) -> f64 {
        self.lines as f64 / self.ideal_lines.max(1) as f64
    }

    /// True when the requests touch at most `ratio` times the ideal sectors
    /// and lines, one more of each allowed per row a request touches.
    pub fn within(&self, ratio: f64) -> bool {
        let allowed = |ideal: u64| ratio * ideal as f64 + self.rows as f64;
        self.sectors as f64 <= allowed(self.ideal_sectors) + 1e-9
            && self.lines as f64 <= allowed(self.ideal_lines) + 1e-9
    }
}

/// How a warp of `warp` lanes would serve a trace.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Coalescing {
    /// Lanes per warp.
    pub warp: u32,
    /// The loads.
    pub loads: Requests,
    /// The stores.
    pub stores: Requests,
    /// Distinct sectors each warp touched over its whole work, summed over
    /// the warps (per buffer and kind): what DRAM moves when a warp's
    /// sectors stay cached until it is done with them.
    pub footprint_sectors: u64,
    /// The sectors the distinct bytes of each warp need, summed.
    pub footprint_ideal: u64,
    /// The rows each warp touched in each buffer, summed (each may cost
    /// one partial sector at either end).
    pub footprint_rows: u64,
    /// Bytes of the sectors each dispatch loads, each sector counted once
    /// per dispatch (what DRAM moves when a GPU's L2 keeps what one
    /// dispatch has read until it ends), summed over the dispatches: a plan
    /// of `k` dispatches that each read every row loads its input `k`
    /// times. Exact only where every dispatch is traced whole
    /// ([`Coalescing::traced_whole`]): a dispatch traced in windows counts
    /// its windows' sectors only.
    pub loaded_bytes: u64,
    /// The part of [`Coalescing::loaded_bytes`] loaded from a staged plan's
    /// scratch arena ([`SCRATCH_BUFFER`]).
    pub scratch_loaded_bytes: u64,
    /// Every invocation of every dispatch is in the trace (no windows).
    pub traced_whole: bool,
    /// Invocations of the dispatches (working ones), summed.
    pub invocations: u64,
    /// Invocations in the trace (all of them where
    /// [`Coalescing::traced_whole`]).
    pub traced_invocations: u64,
    /// Dispatches.
    pub dispatches: usize,
}

impl Coalescing {
    /// Distinct sectors per warp against the ideal (1.0: every sector a
    /// warp touches is used whole).
    pub fn footprint(&self) -> f64 {
        self.footprint_sectors as f64 / self.footprint_ideal.max(1) as f64
    }

    /// Bytes the dispatches load of the tensor a split reads (what they
    /// load in all, [`Coalescing::loaded_bytes`], less a staged plan's
    /// scratch) against `input_bytes` (1.0: every input byte loaded once).
    /// `None` where a dispatch was traced in windows.
    pub fn reads(&self, input_bytes: u64) -> Option<f64> {
        let loaded = self.loaded_bytes - self.scratch_loaded_bytes;
        self.traced_whole
            .then(|| loaded as f64 / input_bytes.max(1) as f64)
    }

    /// Bytes the dispatches load in all, the scratch included, against
    /// `input_bytes`: a staged plan's traffic (about 2.0). `None` where a
    /// dispatch was traced in windows.
    pub fn all_reads(&self, input_bytes: u64) -> Option<f64> {
        self.traced_whole
            .then(|| self.loaded_bytes as f64 / input_bytes.max(1) as f64)
    }

    /// Lanes taking part per request, loads and stores together.
    pub fn lanes_per_request(&self) -> f64 {
        (self.loads.lanes + self.stores.lanes) as f64
            / (self.loads.requests + self.stores.requests).max(1) as f64
    }

    /// Loads and stores per traced invocation: the steps of a lane's
    /// loops (each iteration of an access site is one).
    pub fn steps_per_lane(&self) -> f64 {
        (self.loads.lanes + self.stores.lanes) as f64 / self.traced_invocations.max(1) as f64
    }

    /// Warp requests (loads and stores) per byte they move: the work a
    /// warp issues per byte, 1/512 for a warp of 32 lanes moving a vec4
    /// each, more where lanes sit idle or move less than a vec4.
    pub fn requests_per_byte(&self) -> f64 {
        (self.loads.requests + self.stores.requests) as f64
            / (self.loads.bytes + self.stores.bytes).max(1) as f64
    }

    /// Sectors the requests touch per byte they move (1/32 when
    /// coalesced).
    pub fn sectors_per_byte(&self) -> f64 {
        (self.loads.sectors + self.stores.sectors) as f64
            / (self.loads.bytes + self.stores.bytes).max(1) as f64
    }

    /// True when the warps' footprint is at most `ratio` times the ideal,
    /// one more sector allowed per row a warp touches in a buffer.
    pub fn footprint_within(&self, ratio: f64) -> bool {
        self.footprint_sectors as f64
            <= ratio * self.footprint_ideal as f64 + self.footprint_rows as f64 + 1e-9
    }
}

/// [`analyse_with_rows`] with no rows: no boundary is counted.
pub fn analyse(dispatches: &[TracedDispatch], warp: u32) -> Coalescing {
    analyse_with_rows(dispatches, warp, &|_, _| 0)
}

/// What the accesses of `dispatches` cost a GPU whose warps have `warp`
/// lanes: requests grouped by (warp, site, iteration of the site in each
/// lane), counted in sectors and lines against the ideal, and each warp's
/// footprint. `row_of(buffer, byte)` names the row a byte lies in.
pub fn analyse_with_rows(
    dispatches: &[TracedDispatch],
    warp: u32,
    row_of: &dyn Fn(usize, u64) -> u64,
) -> Coalescing {
    let mut out = Coalescing {
        warp,
        dispatches: dispatches.len(),
        traced_whole: true,
        ..Coalescing::default()
    };
    for d in dispatches {
        out.invocations += d.invocations;
        let place = |a: &Access| {
            let b = d
                .bindings
                .iter()
                .find(|b| b.binding == a.binding)
                .unwrap_or_else(|| panic!("the trace names binding {} unbound", a.binding));
            (b.buffer, b.offset + u64::from(a.unit) * u64::from(a.bytes))
        };
        // (warp, site, iteration) -> (store, [(buffer, byte, bytes)]).
        let mut requests: HashMap<(u64, u32, u32), Request> = HashMap::new();
        // (warp, buffer, store) -> (sectors, 4-byte words, rows).
        let mut footprints: HashMap<(u64, usize, bool), Footprint> = HashMap::new();
        // Every (buffer, sector) the dispatch loads.
        let mut loaded: HashSet<(usize, u64)> = HashSet::new();
        for (first, invocations) in &d.windows {
            for (i, accesses) in invocations.iter().enumerate() {
                let w = (first + i as u64) / u64::from(warp);
                let mut iteration: HashMap<u32, u32> = HashMap::new();
                for a in accesses {
                    let k = iteration.entry(a.site).or_default();
                    let (buffer, byte) = place(a);
                    let request = requests.entry((w, a.site, *k)).or_default();
                    request.0 = a.store;
                    request.1.push((buffer, byte, a.bytes));
                    *k += 1;
                    let (sectors, words, rows) =
                        footprints.entry((w, buffer, a.store)).or_default();
                    sectors.insert(byte / 32);
                    words.extend((byte / 4..(byte + u64::from(a.bytes)) / 4).map(|w| w * 4));
                    rows.insert(row_of(buffer, byte));
                    if !a.store {
                        let end = (byte + u64::from(a.bytes)).div_ceil(32);
                        loaded.extend((byte / 32..end).map(|s| (buffer, s)));
                    }
                }
            }
        }
        let traced: u64 = d.windows.iter().map(|(_, w)| w.len() as u64).sum();
        out.traced_whole &= traced >= d.invocations;
        out.traced_invocations += traced;
        out.loaded_bytes += loaded.len() as u64 * 32;
        out.scratch_loaded_bytes +=
            loaded.iter().filter(|(b, _)| *b == SCRATCH_BUFFER).count() as u64 * 32;
        for (store, lanes) in requests.values() {
            let kind = if *store {
                &mut out.stores
            } else {
                &mut out.loads
            };
            count_request(kind, lanes, row_of);
        }
        for (sectors, words, rows) in footprints.values() {
            out.footprint_sectors += sectors.len() as u64;
            out.footprint_ideal += (words.len() as u64 * 4).div_ceil(32);
            out.footprint_rows += rows.len() as u64;
        }
    }
    out
}

/// Adds one request (its lanes' buffer, byte and width) to `kind`.
fn count_request(
    kind: &mut Requests,
    lanes: &[(usize, u64, u32)],
    row_of: &dyn Fn(usize, u64) -> u64,
) {
    let sectors: HashSet<(usize, u64)> = lanes
        .iter()
        .flat_map(|&(buffer, byte, bytes)| {
            (byte / 32..(byte + u64::from(bytes)).div_ceil(32)).map(move |s| (buffer, s))
        })
        .collect();
    let lines: HashSet<(usize, u64)> = sectors.iter().map(|&(b, s)| (b, s / 4)).collect();
    let words: HashSet<(usize, u64)> = lanes
        .iter()
        .flat_map(|&(buffer, byte, bytes)| {
            (byte / 4..(byte + u64::from(bytes)) / 4).map(move |w| (buffer, w))
        })
        .collect();
    let rows: HashSet<(usize, u64)> = lanes
        .iter()
        .map(|&(b, byte, _)| (b, row_of(b, byte)))
        .collect();
    let bytes = words.len() as u64 * 4;
    kind.requests += 1;
    kind.sectors += sectors.len() as u64;
    kind.lines += lines.len() as u64;
    kind.ideal_sectors += bytes.div_ceil(32);
    kind.ideal_lines += bytes.div_ceil(128);
    kind.bytes += bytes;
    kind.rows += rows.len() as u64;
    kind.lanes += lanes.len() as u64;
}

#[cfg(test)]
mod tests {
    use super::{Access, TracedBinding, TracedDispatch, analyse};

    /// A dispatch whose invocation `g` loads source unit `load(g)` and
    /// stores destination unit `g`, vec4s.
    fn copy(invocations: u64, load: impl Fn(u64) -> u32) -> TracedDispatch {
        let access = |site, store, binding, unit| Access {
            site,
            store,
            binding,
            bytes: 16,
            unit,
        };
        TracedDispatch {
            invocations,
            bindings: vec![
                TracedBinding {
                    binding: 1,
                    buffer: 0,
                    offset: 0,
                },
                TracedBinding {
                    binding: 2,
                    buffer: 1,
                    offset: 0,
                },
            ],
            windows: vec![(
                0,
                (0..invocations)
                    .map(|g| vec![access(0, false, 1, load(g)), access(1, true, 2, g as u32)])
                    .collect(),
            )],
        }
    }

    #[test]
    fn consecutive_lanes_on_consecutive_vec4s_touch_the_ideal_sectors() {
        let c = analyse(&[copy(256, |g| g as u32)], 32);
        assert_eq!(
            (c.loads.requests, c.loads.sectors, c.loads.ideal_sectors),
            (8, 128, 128)
        );
        assert_eq!((c.stores.lines, c.stores.ideal_lines), (32, 32));
        assert_eq!(c.footprint(), 1.0);
        assert_eq!(c.loads.lanes_per_request(), 32.0);
        assert_eq!(c.lanes_per_request(), 32.0);
        assert_eq!(c.steps_per_lane(), 2.0);
        // 16 requests (8 loads, 8 stores) for 8 KiB: one per 512 bytes.
        assert_eq!(c.requests_per_byte(), 1.0 / 512.0);
        assert_eq!(c.sectors_per_byte(), 1.0 / 32.0);
    }

    #[test]
    fn idle_lanes_are_fewer_lanes_per_request_and_more_requests_per_byte() {
        // 24 invocations on warps of 32: one request of 24 lanes a site.
        let c = analyse(&[copy(24, |g| g as u32)], 32);
        assert_eq!((c.loads.requests, c.loads.lanes), (1, 24));
        assert_eq!(c.loads.lanes_per_request(), 24.0);
        assert_eq!(c.requests_per_byte(), 2.0 / (2.0 * 24.0 * 16.0));
    }

    #[test]
    fn lanes_two_vec4s_apart_touch_twice_the_sectors() {
        // Each lane loads every other vec4: 32 sectors for 16 sectors' bytes.
        let c = analyse(&[copy(64, |g| 2 * g as u32)], 32);
        assert_eq!(c.loads.requests, 2);
        assert_eq!(c.loads.sector_ratio(), 2.0);
        assert_eq!(c.loads.line_ratio(), 2.0);
        assert_eq!(c.stores.sector_ratio(), 1.0);
        // At warp 8 the same lanes are still 2x.
        assert_eq!(
            analyse(&[copy(64, |g| 2 * g as u32)], 8)
                .loads
                .sector_ratio(),
            2.0
        );
    }

    #[test]
    fn a_site_in_a_loop_is_one_request_per_iteration() {
        let mut d = copy(32, |g| g as u32);
        for (_, invocations) in &mut d.windows {
            for (g, accesses) in invocations.iter_mut().enumerate() {
                accesses.push(Access {
                    site: 0,
                    store: false,
                    binding: 1,
                    bytes: 16,
                    unit: 32 + g as u32,
                });
            }
        }
        let c = analyse(&[d], 32);
        assert_eq!((c.loads.requests, c.loads.sectors), (2, 32));
    }

    #[test]
    fn each_dispatch_loads_its_sectors_once_and_dispatches_add_up() {
        // 64 lanes each loading vec4 g (1 KiB): once per dispatch, however
        // many times a dispatch's lanes load the same sector.
        let once = analyse(&[copy(64, |g| g as u32)], 32);
        assert_eq!(once.loaded_bytes, 1024);
        assert_eq!(once.reads(1024), Some(1.0));
        let twice_in_one = analyse(&[copy(64, |g| (g / 2) as u32)], 32);
        assert_eq!(twice_in_one.loaded_bytes, 512);
        // Three dispatches that each read the whole input load it three times.
        let three = analyse(&vec![copy(64, |g| g as u32); 3], 32);
        assert_eq!(three.reads(1024), Some(3.0));
    }

    #[test]
    fn a_windowed_trace_does_not_say_what_a_plan_reads() {
        // 4 of 16 warps traced: the sectors of the others are unknown.
        let mut d = copy(128, |g| g as u32);
        d.invocations = 512;
        let c = analyse(&[d], 32);
        assert!(!c.traced_whole);
        assert_eq!(c.reads(8192), None);
    }

    #[test]
    fn records_decode_as_the_prelude_encodes_them() {
        let code = (9 << 11) | (4 << 8) | (3 << 1) | 1;
        let a = Access::decode(code, 77);
        assert_eq!(
            (a.site, a.store, a.binding, a.bytes, a.unit),
            (9, true, 3, 16, 77)
        );
    }
}
