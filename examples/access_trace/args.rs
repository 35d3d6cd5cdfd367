//! The command line of `access_trace`: which splits to trace, how.

use wgpu_split::frameworks::{Burn, Candle, Numpy, Torch};
use wgpu_split::plan::{Kernel, PlanLimits};
use wgpu_split::{
    ElementType, OnnxSplit, OnnxSplitToSequence, OpenVinoSplit, OpenVinoVariadicSplit, ParamTensor,
    ResolvedSplit,
};

/// What to trace.
pub struct Options {
    /// One split of the command line, or `None`: every split_bench case.
    pub split: Option<(ElementType, Vec<usize>, ResolvedSplit)>,
    /// Trace at most this many rows (layouts do not depend on the row
    /// count, so a shrunk tensor has every warp's pattern).
    pub rows: usize,
    /// Trace at most this many invocations of a dispatch (in three windows).
    pub most: u64,
    pub json: Option<String>,
    /// Only the split_bench case of this name.
    pub case: Option<String>,
    /// The one kernel to plan with.
    pub kernel: Option<Kernel>,
    /// The sweep of shapes beyond split_bench's, instead of its cases.
    pub sweep: bool,
    /// Trace the concat that mirrors each split (its outputs joined back).
    pub concat: bool,
    /// Trace split_bench's permuted moves (heads, their merge, YOLOv8's
    /// distribution head) instead.
    pub permuted: bool,
    /// The limits plans are made for (`--limits webgpu|native|gpu`).
    pub limits: PlanLimits,
}

pub const USAGE: &str =
    "usage: access_trace [--rows N] [--most N] [--json PATH] [--case NAME] [--kernel NAME] [--sweep] [--concat] [--permuted]
       [--limits webgpu|native|gpu]
       [--dtype TYPE --shape D,D,.. --axis A --split SPEC]
SPEC: lengths:L,L,..  onnx18:N  seq  openvino.split:N  openvino.variadic:L,L,..
      torch.chunk:N  torch.split:N  torch.tensor_split:I,I,..  torch.unbind
      numpy.array_split:N  candle.chunk:N  burn.chunk:N";

fn list(text: &str) -> Result<Vec<i64>, String> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim().parse().map_err(|e| format!("{s}: {e}")))
        .collect()
}

fn dims(text: &str) -> Result<Vec<usize>, String> {
    list(text)?
        .into_iter()
        .map(|d| usize::try_from(d).map_err(|e| format!("{d}: {e}")))
        .collect()
}

/// The split `spec` names on `shape` along `axis`.
fn split_of(spec: &str, shape: &[usize], axis: i64) -> Result<ResolvedSplit, String> {
    let (name, arg) = spec.split_once(':').unwrap_or((spec, ""));
    let n = || arg.parse::<i64>().map_err(|e| format!("{spec}: {e}"));
    let err = |e: &dyn std::fmt::Display| format!("{spec}: {e}");
    let axis_param = ParamTensor::int64_scalar(axis);
    match name {
        "lengths" => {
            let lengths = dims(arg)?;
            let a = usize::try_from(axis).map_err(|e| err(&e))?;
            ResolvedSplit::new(shape, a, lengths, true).map_err(|e| err(&e))
        }
        "onnx18" => OnnxSplit::new(18, n()? as usize)
            .axis(axis)
            .num_outputs(n()?)
            .resolve(shape)
            .map_err(|e| err(&e)),
        "seq" => OnnxSplitToSequence::new(11)
            .axis(axis)
            .keepdims(0)
            .resolve(shape)
            .map_err(|e| err(&e)),
        "openvino.split" => OpenVinoSplit::new(axis_param, n()?)
            .resolve(shape)
            .map_err(|e| err(&e)),
        "openvino.variadic" => {
            OpenVinoVariadicSplit::new(axis_param, ParamTensor::int64_1d(&list(arg)?))
                .resolve(shape)
                .map_err(|e| err(&e))
        }
        "torch.chunk" => Torch::chunk(shape, n()?, axis).map_err(|e| err(&e)),
        "torch.split" => Torch::split(shape, n()?, axis).map_err(|e| err(&e)),
        "torch.tensor_split" => {
            Torch::tensor_split(shape, list(arg)?.as_slice(), axis).map_err(|e| err(&e))
        }
        "torch.unbind" => Torch::unbind(shape, axis).map_err(|e| err(&e)),
        "numpy.array_split" => Numpy::array_split(shape, n()?, axis).map_err(|e| err(&e)),
        "candle.chunk" => Candle::chunk(shape, n()? as usize, axis).map_err(|e| err(&e)),
        "burn.chunk" => {
            let a = usize::try_from(axis).map_err(|e| err(&e))?;
            Burn::chunk(shape, n()? as usize, a).map_err(|e| err(&e))
        }
        _ => Err(format!("unknown split {spec}\n{USAGE}")),
    }
}

pub fn parse() -> Result<Options, String> {
    let mut o = Options {
        split: None,
        rows: 256,
        most: 12_288,
        json: None,
        case: None,
        kernel: None,
        sweep: false,
        concat: false,
        permuted: false,
        limits: PlanLimits::WEBGPU_DEFAULT,
    };
    let (mut dtype, mut shape, mut axis, mut spec) = (None, None, 0i64, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--rows" => o.rows = value()?.parse().map_err(|e| format!("--rows: {e}"))?,
            "--most" => o.most = value()?.parse().map_err(|e| format!("--most: {e}"))?,
            "--json" => o.json = Some(value()?),
            "--case" => o.case = Some(value()?),
            "--sweep" => o.sweep = true,
            "--concat" => o.concat = true,
            "--permuted" => o.permuted = true,
            "--limits" => {
                o.limits = match value()?.as_str() {
                    "webgpu" => PlanLimits::WEBGPU_DEFAULT,
                    // Lavapipe's, less the storage binding the trace
                    // variant adds: 30 destinations a dispatch.
                    "native" => PlanLimits {
                        max_storage_buffers_per_shader_stage: PlanLimits::LAVAPIPE
                            .max_storage_buffers_per_shader_stage
                            - 1,
                        ..PlanLimits::LAVAPIPE
                    },
                    // A GPU's Vulkan limits (NVIDIA's bind far more than
                    // one dispatch's most destinations).
                    "gpu" => PlanLimits {
                        max_storage_buffers_per_shader_stage: 64,
                        ..PlanLimits::LAVAPIPE
                    },
                    other => return Err(format!("unknown limits {other}\n{USAGE}")),
                }
            }
            "--kernel" => {
                let name = value()?;
                o.kernel = Some(Kernel::from_name(&name).ok_or(format!("unknown kernel {name}"))?);
            }
            "--dtype" => {
                let name = value()?;
                let t = ElementType::ALL
                    .into_iter()
                    .find(|t| t.name() == name)
                    .ok_or(format!("unknown element type {name}"))?;
                dtype = Some(t);
            }
            "--shape" => shape = Some(dims(&value()?)?),
            "--axis" => axis = value()?.parse().map_err(|e| format!("--axis: {e}"))?,
            "--split" => spec = Some(value()?),
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if let Some(spec) = spec {
        let t = dtype.unwrap_or(ElementType::Float);
        let shape = shape.ok_or(format!("--split needs --shape\n{USAGE}"))?;
        let split = split_of(&spec, &shape, axis)?;
        o.split = Some((t, shape, split));
    }
    Ok(o)
}
