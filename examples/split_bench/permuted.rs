//! The permuted-move cases (issue 39): each timed fused (one pass: split
//! and transposes together, `GpuSplitter::encode_permuted`) and as the
//! two passes a runtime runs without it: the splitter's own plan for the
//! plain split, then the permuted-move kernel transposing each piece (the
//! head merge: each piece transposed back, then the splitter's concat).
//! Every output is checked against the host path first. split_bench runs
//! them after its split and concat cases; `permute_bench` runs them alone.

use wgpu::util::DeviceExt;
use wgpu_split::gpu::{BufferRegion, GpuSplitter};
use wgpu_split::{PermutedConcat, PermutedSplit, PieceMove, ResolvedConcat, ResolvedSplit};

use super::gpu_timer::GpuTimer;
pub use super::permuted_cases::cases;

/// One case's medians, device milliseconds.
pub struct Timed {
    /// The case's name.
    pub name: &'static str,
    /// The fused move.
    pub fused_ms: f64,
    /// Split then transposes (transposes then concat).
    pub two_passes_ms: f64,
}

fn storage(gpu: &GpuSplitter, bytes: &[u8]) -> wgpu::Buffer {
    gpu.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("permute_bench"),
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        })
}

fn zeros(gpu: &GpuSplitter, bytes: u64) -> wgpu::Buffer {
    storage(gpu, &vec![0; bytes.next_multiple_of(4).max(4) as usize])
}

/// The whole tensor of `shape` moved as `m` (a transpose pass of its own).
fn transpose_of(shape: &[usize], m: &PieceMove) -> PermutedSplit {
    let whole = ResolvedSplit::new(shape, 0, vec![shape[0]], true).unwrap();
    PermutedSplit::new(whole, vec![m.clone()]).unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn read(gpu: &GpuSplitter, buffer: &wgpu::Buffer, bytes: usize) -> Vec<u8> {
    let staging = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    gpu.queue().submit([encoder.finish()]);
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.unwrap());
    gpu.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    staging.slice(..).get_mapped_range().unwrap()[..bytes].to_vec()
}

/// Every case (`quick`: small sizes), or the one named `only`, timed over
/// `runs` alternating runs after a warm-up, each checked first.
pub fn bench(
    gpu: &GpuSplitter,
    timer: &GpuTimer,
    runs: usize,
    quick: bool,
    only: Option<&str>,
) -> Result<Vec<Timed>, Box<dyn std::error::Error>> {
    let mut rows = Vec::new();
    let mut rng = 0x39u64;
    for case in cases(quick)
        .into_iter()
        .filter(|c| only.is_none_or(|n| n == c.name))
    {
        let t = case.element_type;
        let (tensor, bytes) = case.input(&mut rng)?;
        let pieces = tensor.split_permuted(&case.split)?;
        let (f, w) = if !case.concat {
            let input = storage(gpu, &bytes);
            let plan = gpu.plan(&case.split, t)?;
            let outs: Vec<wgpu::Buffer> = (0..pieces.len())
                .map(|i| zeros(gpu, plan.output_region_bytes(i)))
                .collect();
            // The two passes: the plain split into pieces, each transposed.
            let plain = gpu.plan(case.split.split(), t)?;
            let mids: Vec<wgpu::Buffer> = plain
                .outputs()
                .iter()
                .map(|o| zeros(gpu, o.region_bytes))
                .collect();
            let moves: Vec<_> = (0..pieces.len())
                .map(|i| {
                    let m =
                        transpose_of(&case.split.split().output_shape(i), &case.split.moves()[i]);
                    gpu.plan(&m, t)
                })
                .collect::<Result<_, _>>()?;
            let outs2: Vec<wgpu::Buffer> = (0..pieces.len())
                .map(|i| zeros(gpu, moves[i].output_region_bytes(0)))
                .collect();
            let fused = |e: &mut wgpu::CommandEncoder| {
                let regions: Vec<BufferRegion<'_>> = outs.iter().map(BufferRegion::whole).collect();
                gpu.encode(e, &plan, BufferRegion::whole(&input), &regions)
                    .unwrap();
            };
            let two = |e: &mut wgpu::CommandEncoder| {
                let regions: Vec<BufferRegion<'_>> = mids.iter().map(BufferRegion::whole).collect();
                gpu.encode(e, &plain, BufferRegion::whole(&input), &regions)
                    .unwrap();
                // A piece kept as it is needs no second pass.
                for (i, m) in moves
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| !m.copies_output(0))
                {
                    gpu.encode(
                        e,
                        m,
                        BufferRegion::whole(&mids[i]),
                        &[BufferRegion::whole(&outs2[i])],
                    )
                    .unwrap();
                }
            };
            let timed = time(timer, runs, &fused, &two);
            for (i, p) in pieces.iter().enumerate() {
                let want = p.as_bytes()?;
                assert_eq!(
                    read(gpu, &outs[i], want.len()),
                    want,
                    "{}: fused output {i}",
                    case.name
                );
                let second = if moves[i].copies_output(0) {
                    &mids[i]
                } else {
                    &outs2[i]
                };
                assert_eq!(
                    read(gpu, second, want.len()),
                    want,
                    "{}: two passes output {i}",
                    case.name
                );
            }
            timed
        } else {
            // The head merge: the pieces back into the tensor.
            let merge = PermutedConcat::merge_heads(&case.split.output_shapes())?;
            let plan = gpu.plan(&merge, t)?;
            let inputs: Vec<wgpu::Buffer> = pieces
                .iter()
                .map(|p| storage(gpu, p.as_bytes().unwrap()))
                .collect();
            let out = zeros(gpu, plan.output_region_bytes());
            // Two passes: each piece transposed back, then the concat.
            let backs: Vec<_> = (0..pieces.len())
                .map(|i| {
                    let m = &merge.moves()[i];
                    let back = PieceMove::new(pieces[i].shape().to_vec(), m.perm().to_vec());
                    gpu.plan(&transpose_of(pieces[i].shape(), &back), t)
                })
                .collect::<Result<_, _>>()?;
            let mids: Vec<wgpu::Buffer> = backs
                .iter()
                .map(|b| zeros(gpu, b.output_region_bytes(0)))
                .collect();
            let shapes: Vec<Vec<usize>> =
                merge.moves().iter().map(|m| m.shape().to_vec()).collect();
            let cat = gpu.plan(&ResolvedConcat::new(&shapes, shapes[0].len() - 1)?, t)?;
            let out2 = zeros(gpu, cat.requirements().output_region_bytes);
            let fused = |e: &mut wgpu::CommandEncoder| {
                let regions: Vec<BufferRegion<'_>> =
                    inputs.iter().map(BufferRegion::whole).collect();
                gpu.encode(e, &plan, &regions, BufferRegion::whole(&out))
                    .unwrap();
            };
            let two = |e: &mut wgpu::CommandEncoder| {
                for (i, b) in backs.iter().enumerate() {
                    gpu.encode(
                        e,
                        b,
                        BufferRegion::whole(&inputs[i]),
                        &[BufferRegion::whole(&mids[i])],
                    )
                    .unwrap();
                }
                let regions: Vec<BufferRegion<'_>> = mids.iter().map(BufferRegion::whole).collect();
                gpu.encode(e, &cat, &regions, BufferRegion::whole(&out2))
                    .unwrap();
            };
            let timed = time(timer, runs, &fused, &two);
            assert_eq!(read(gpu, &out, bytes.len()), bytes, "{}: fused", case.name);
            assert_eq!(
                read(gpu, &out2, bytes.len()),
                bytes,
                "{}: two passes",
                case.name
            );
            timed
        };
        rows.push(Timed {
            name: case.name,
            fused_ms: f,
            two_passes_ms: w,
        });
    }
    Ok(rows)
}

/// Median device milliseconds of `fused` and `two`, alternating runs.
fn time(
    timer: &GpuTimer,
    runs: usize,
    fused: &dyn Fn(&mut wgpu::CommandEncoder),
    two: &dyn Fn(&mut wgpu::CommandEncoder),
) -> (f64, f64) {
    timer.warm_up(fused);
    timer.warm_up(two);
    let (mut f, mut w) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        f.push(timer.once(fused).0);
        w.push(timer.once(two).0);
    }
    (median(f) * 1e3, median(w) * 1e3)
}
