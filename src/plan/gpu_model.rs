//! A GPU's time for a plan, predicted from what its access trace shows the
//! warps doing and from what a GPU's calibration measured its kernels
//! doing.
//!
//! The trace ([`crate::plan::coalescing`]) says, per byte a plan moves, how
//! many warp requests its lanes issue and how many 32-byte sectors those
//! touch ([`WarpWork`]). A calibration times each kernel on its probe
//! split ([`crate::gpu::Calibration`]), and the probe traced says the same
//! two figures for it. The model prices a plan's dispatch as its kernel's
//! probe priced its bytes, scaled by how much more work each byte takes:
//!
//! ```text
//! t = dispatches * d + bytes / rate(k) * max(requests/byte ÷ probe's, sectors/byte ÷ probe's)
//! ```
//!
//! where `d` is the calibration's fixed cost of one dispatch (its one-word
//! probe) and `rate(k)` the probe's bytes over its time less one `d`.
//! Nothing in it is fitted to the plans it predicts: the figures are the
//! probes', the work the trace's. A request with idle lanes (a looped row
//! block of 16 lanes in 256) moves fewer bytes, so a byte costs more
//! requests; a lane that walks bit fields to assemble a word issues more
//! requests per word. What the trace cannot see (arithmetic between
//! accesses, a table searched in uniform memory) the model does not price.

use crate::kernels::Kernel;
use crate::plan::coalescing::Coalescing;

/// The work a traced plan's warps do per byte they move (loads and
/// stores together).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarpWork {
    /// Warp requests per byte moved ([`Coalescing::requests_per_byte`]).
    pub requests_per_byte: f64,
    /// Sectors touched per byte moved ([`Coalescing::sectors_per_byte`]).
    pub sectors_per_byte: f64,
}

impl WarpWork {
    /// The work of a trace analysed at one warp width.
    pub fn of(c: &Coalescing) -> WarpWork {
        WarpWork {
            requests_per_byte: c.requests_per_byte(),
            sectors_per_byte: c.sectors_per_byte(),
        }
    }

    /// How many times `self`'s work per byte is `probe`'s: the larger of
    /// the two ratios (requests issued, sectors moved).
    pub fn over(&self, probe: &WarpWork) -> f64 {
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 1.0 };
        ratio(self.requests_per_byte, probe.requests_per_byte)
            .max(ratio(self.sectors_per_byte, probe.sectors_per_byte))
    }
}

/// One kernel as a calibration measured it: its probe's bytes (read and
/// written), its time, and the work its trace shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelProbe {
    /// The kernel.
    pub kernel: Kernel,
    /// Bytes the probe reads and writes (twice its input).
    pub moved_bytes: f64,
    /// The probe's seconds, as the calibration measured them (its bytes
    /// over the kernel's measured bandwidth).
    pub seconds: f64,
    /// Its trace's work per byte.
    pub work: WarpWork,
}

/// A predicted time: the dispatches' fixed costs and the bytes' time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Predicted {
    /// Fixed costs of the dispatches, seconds.
    pub fixed_seconds: f64,
    /// Moving the bytes, seconds.
    pub moving_seconds: f64,
    /// The plan's work per byte against its kernel's probe's.
    pub work_over_probe: f64,
}

impl Predicted {
    /// The whole time, seconds.
    pub fn seconds(&self) -> f64 {
        self.fixed_seconds + self.moving_seconds
    }
}

/// The model of one GPU: its dispatch cost and its kernels' probes.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuModel {
    /// Fixed cost of one dispatch, seconds (a calibration's one-word probe).
    pub dispatch_seconds: f64,
    /// The probes, one per kernel measured.
    pub probes: Vec<KernelProbe>,
}

impl GpuModel {
    /// The probe of `kernel`, if measured.
    pub fn probe(&self, kernel: Kernel) -> Option<&KernelProbe> {
        self.probes.iter().find(|p| p.kernel == kernel)
    }

    /// `kernel`'s bandwidth on its probe, bytes read + written per second,
    /// its time less one dispatch's fixed cost (a probe no longer than one
    /// dispatch's cost keeps its whole time).
    pub fn rate(&self, kernel: Kernel) -> Option<f64> {
        let p = self.probe(kernel)?;
        let net = p.seconds - self.dispatch_seconds;
        let net = if net > 0.0 { net } else { p.seconds };
        Some(p.moved_bytes / net)
    }

    /// The time of `dispatches` dispatches of `kernel` that move
    /// `moved_bytes` (read + written) doing `work` per byte. `None` for a
    /// kernel the model has no probe of.
    pub fn predict(
        &self,
        kernel: Kernel,
        dispatches: usize,
        moved_bytes: f64,
        work: &WarpWork,
    ) -> Option<Predicted> {
        let probe = self.probe(kernel)?;
        let over = work.over(&probe.work);
        Some(Predicted {
            fixed_seconds: dispatches as f64 * self.dispatch_seconds,
            moving_seconds: moved_bytes / self.rate(kernel)? * over,
            work_over_probe: over,
        })
    }

    /// The time of one dispatch of `kernel` moving `moved_bytes` (read +
    /// written) at its probe's work per byte: with the vec4 kernel, the
    /// shader copy a plan is judged against.
    pub fn at_probe_work(&self, kernel: Kernel, moved_bytes: f64) -> Option<Predicted> {
        let work = self.probe(kernel)?.work;
        self.predict(kernel, 1, moved_bytes, &work)
    }
}

/// Spearman's rank correlation of `a` and `b` (ties take their mean rank):
/// 1.0 when they order the items alike.
pub fn rank_correlation(a: &[f64], b: &[f64]) -> f64 {
    fn ranks(v: &[f64]) -> Vec<f64> {
        let mut order: Vec<usize> = (0..v.len()).collect();
        order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        let mut r = vec![0.0; v.len()];
        let mut i = 0;
        while i < order.len() {
            let mut j = i;
            while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
                j += 1;
            }
            for &k in &order[i..=j] {
                r[k] = (i + j) as f64 / 2.0;
            }
            i = j + 1;
        }
        r
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len().min(rb.len()) as f64;
    let mean = (n - 1.0) / 2.0;
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        ab += (x - mean) * (y - mean);
        aa += (x - mean) * (x - mean);
        bb += (y - mean) * (y - mean);
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    ab / (aa * bb).sqrt()
}

#[cfg(test)]
mod tests {
    use super::{GpuModel, KernelProbe, WarpWork, rank_correlation};
    use crate::kernels::Kernel;

    /// Two kernels of the table (the model is the same for any).
    const MEASURED: Kernel = Kernel::ALL[0];
    const UNMEASURED: Kernel = Kernel::ALL[1];

    fn model() -> GpuModel {
        let work = WarpWork {
            requests_per_byte: 1.0 / 512.0,
            sectors_per_byte: 1.0 / 32.0,
        };
        GpuModel {
            dispatch_seconds: 5e-6,
            probes: vec![KernelProbe {
                kernel: MEASURED,
                moved_bytes: 2e6,
                seconds: 6e-6,
                work,
            }],
        }
    }

    #[test]
    fn a_plan_with_its_probes_work_moves_at_its_probes_rate_past_the_fixed_cost() {
        let m = model();
        assert!((m.rate(MEASURED).unwrap() - 2e12).abs() < 1.0);
        let copy = m.at_probe_work(MEASURED, 4e6).unwrap();
        assert_eq!(copy.fixed_seconds, 5e-6);
        assert!((copy.moving_seconds - 2e-6).abs() < 1e-15);
        assert_eq!(m.predict(UNMEASURED, 1, 4e6, &m.probes[0].work), None);
    }

    #[test]
    fn idle_lanes_or_wasted_sectors_cost_their_ratio() {
        let m = model();
        // Half the lanes idle: twice the requests per byte.
        let idle = WarpWork {
            requests_per_byte: 2.0 / 512.0,
            sectors_per_byte: 1.0 / 32.0,
        };
        let p = m.predict(MEASURED, 2, 4e6, &idle).unwrap();
        assert_eq!(p.work_over_probe, 2.0);
        assert_eq!(p.fixed_seconds, 10e-6);
        // Three times the sectors outweigh twice the requests.
        let scattered = WarpWork {
            sectors_per_byte: 3.0 / 32.0,
            ..idle
        };
        assert_eq!(scattered.over(&m.probes[0].work), 3.0);
    }

    #[test]
    fn rank_correlation_is_one_for_the_same_order_and_minus_one_reversed() {
        let a = [1.0, 5.0, 3.0, 10.0];
        assert!((rank_correlation(&a, &[2.0, 50.0, 4.0, 51.0]) - 1.0).abs() < 1e-12);
        assert!((rank_correlation(&a, &[4.0, 1.0, 2.0, 0.0]) + 1.0).abs() < 1e-12);
        // Ties share a rank.
        let tied = rank_correlation(&[1.0, 1.0, 2.0], &[1.0, 2.0, 3.0]);
        assert!(tied > 0.8 && tied < 1.0, "{tied}");
    }
}
