//! Storing and loading a [`CostModel`] (feature `serde`): kernel rates by
//! kernel name, and models stored before the rates were keyed by kernel
//! (one `gather_<kind>_bytes_per_second` field per kernel) still load.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::kernels::Kernel;
use crate::kernels::lanes::LaneOrder;
use crate::plan::choice::cost::{CostModel, KernelRates};

impl Serialize for KernelRates {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let by_name: BTreeMap<&str, f64> = self.iter().map(|(k, r)| (k.name(), r)).collect();
        by_name.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for KernelRates {
    /// Unknown names are ignored (a model stored by a newer version with a
    /// kernel this one lacks); the rest as `rates_by_name` reads them.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let by_name = BTreeMap::<String, f64>::deserialize(deserializer)?;
        Ok(rates_by_name(|name| by_name.get(name).copied()))
    }
}

/// Every kernel's rate from `stored` (a rate by name, `None` where none
/// was stored): a kernel's former name (its per-layout form's, before
/// kernels merged) takes precedence over its own unless stored as 0 (never
/// chosen); a kernel stored under neither inherits ([`inherit`]).
fn rates_by_name(stored: impl Fn(&str) -> Option<f64>) -> KernelRates {
    let mut rates = KernelRates::ZERO;
    let mut missing = Vec::new();
    for kernel in Kernel::ALL {
        let spec = kernel.spec();
        let former = spec.per_layout_name.and_then(&stored);
        match former.filter(|&r| r > 0.0).or_else(|| stored(spec.name)) {
            Some(rate) => rates.set(kernel, rate),
            None => missing.push(kernel),
        }
    }
    inherit(rates, &missing)
}

/// `rates` with each kernel of `missing` (a model stored before it
/// existed) given the rate of the kernel its spec inherits from, or 0 (which
/// never chooses it) when it inherits from none.
fn inherit(mut rates: KernelRates, missing: &[Kernel]) -> KernelRates {
    for &kernel in missing {
        let rate = kernel.spec().inherits.map_or(0.0, |from| rates.get(from));
        rates.set(kernel, rate);
    }
    rates
}

/// A cost model as stored: today's form, or the fields of the form before
/// rates were keyed by kernel.
#[derive(Serialize, Deserialize)]
struct Stored {
    copy_bytes_per_second: f64,
    copy_command_seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gather_bytes_per_second: Option<KernelRates>,
    dispatch_seconds: f64,
    copy_load_factor: f64,
    gather_load_factor: f64,
    // Models stored before host costs were modeled get the class figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host_copy_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host_dispatch_seconds: Option<f64>,
    // Models stored before lane orders keep the blocked stretches they
    // were measured with.
    #[serde(default)]
    lanes: LaneOrder,
    // Models stored before the grid was modeled: not modeled.
    #[serde(default)]
    resident_invocations: f64,
    // The earlier form, read only.
    #[serde(default, skip_serializing)]
    gather_vec4_bytes_per_second: Option<f64>,
    #[serde(default, skip_serializing)]
    gather_word_bytes_per_second: Option<f64>,
    #[serde(default, skip_serializing)]
    gather_funnel_bytes_per_second: Option<f64>,
    #[serde(default, skip_serializing)]
    gather_rows_bytes_per_second: Option<f64>,
    #[serde(default, skip_serializing)]
    gather_streams_bytes_per_second: Option<f64>,
}

impl Serialize for CostModel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Stored {
            copy_bytes_per_second: self.copy_bytes_per_second,
            copy_command_seconds: self.copy_command_seconds,
            gather_bytes_per_second: Some(self.gather_bytes_per_second),
            dispatch_seconds: self.dispatch_seconds,
            copy_load_factor: self.copy_load_factor,
            gather_load_factor: self.gather_load_factor,
            host_copy_seconds: Some(self.host_copy_seconds),
            host_dispatch_seconds: Some(self.host_dispatch_seconds),
            lanes: self.lanes,
            resident_invocations: self.resident_invocations,
            gather_vec4_bytes_per_second: None,
            gather_word_bytes_per_second: None,
            gather_funnel_bytes_per_second: None,
            gather_rows_bytes_per_second: None,
            gather_streams_bytes_per_second: None,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CostModel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = Stored::deserialize(deserializer)?;
        let rates = s.gather_bytes_per_second.unwrap_or_else(|| {
            // The old fields by the names of the kernels they held (the
            // table names its kernels; this file reads it by name).
            let stored = [
                ("words", s.gather_word_bytes_per_second),
                ("vec4", s.gather_vec4_bytes_per_second),
                ("funnel", s.gather_funnel_bytes_per_second),
                ("row_blocks", s.gather_rows_bytes_per_second),
                ("row_streams", s.gather_streams_bytes_per_second),
            ];
            // A field stored without a value counts as absent.
            rates_by_name(|name| stored.iter().find(|(n, _)| *n == name)?.1)
        });
        Ok(CostModel {
            copy_bytes_per_second: s.copy_bytes_per_second,
            copy_command_seconds: s.copy_command_seconds,
            gather_bytes_per_second: rates,
            dispatch_seconds: s.dispatch_seconds,
            copy_load_factor: s.copy_load_factor,
            gather_load_factor: s.gather_load_factor,
            host_copy_seconds: s
                .host_copy_seconds
                .unwrap_or(CostModel::CONSERVATIVE.host_copy_seconds),
            host_dispatch_seconds: s
                .host_dispatch_seconds
                .unwrap_or(CostModel::CONSERVATIVE.host_dispatch_seconds),
            lanes: s.lanes,
            resident_invocations: s.resident_invocations,
        })
    }
}
