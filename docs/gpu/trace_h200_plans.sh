#!/usr/bin/env bash
# Regenerates docs/trace/h200-093c280.json: the access trace of the plans
# the NVIDIA H200 ran (docs/gpu/nvidia-h200.json, built at 093c280), and of
# the calibration probes whose figures the GPU model prices them with.
#
# It builds 093c280's access_trace with today's src/plan/coalescing.rs (a
# superset of 093c280's: it adds lanes per request and steps per lane), so
# the kernels traced are exactly the H200's, counted today's way.
# Every case plans as the H200's bench planned it (its report's plans are
# "plan_origin: Class"): the discrete class model, into one arena, with a
# binding as large as the H200's; tests/gpu_model.rs checks that each traced
# plan runs the kernel the H200's report names. Run from the checkout's
# root; takes ~3 minutes after a build of a few minutes.
#
# `trace_h200_plans.sh now` traces today's plans of the same cases instead
# (docs/trace/h200-cases-now.json): today's access_trace as it stands, the
# discrete class's plans for a compute pass into buffers of their own
# under WebGPU's default limits (the GPU-class plans split_bench runs),
# the probes today's.
set -euo pipefail
root=$(pwd)
work=$(mktemp -d)
mode=${1:-093c280}
if [ "$mode" = now ]; then
    trap 'rm -rf "$work"' EXIT
    cargo build -q --release --example access_trace
    bin=${H200_TRACE_BIN:-$root/target/release/examples/access_trace}
    here=$root
    limits=webgpu
    json=docs/trace/h200-cases-now.json
    label="$(git rev-parse --short HEAD)"
else
trap 'git -C "$root" worktree remove --force "$work/w" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/w" 093c280
cp src/plan/coalescing.rs "$work/w/src/plan/coalescing.rs"
# The H200 bound whole tensors that lavapipe's 128 MiB binding cuts into
# windows (its mrope plan: one dispatch): `--limits large` plans as the
# native limits but with a 2 GiB binding (the traces run shrunk tensors).
python3 - "$work/w/examples/access_trace/args.rs" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('"webgpu" => PlanLimits::WEBGPU_DEFAULT,', """"webgpu" => PlanLimits::WEBGPU_DEFAULT,
                    "large" => PlanLimits {
                        max_storage_buffer_binding_size: 1 << 31,
                        max_buffer_size: 1 << 40,
                        max_storage_buffers_per_shader_stage: 31,
                        ..PlanLimits::LAVAPIPE
                    },""", 1)
open(p, "w").write(s)
PY
# The H200's bench planned a split into one arena ("plan":
# Placement::Arena), which binds 1,000 outputs or 31 columns in one
# dispatch: so does the trace (a concat's inputs stay buffers of their own).
python3 - "$work/w/examples/access_trace/measure.rs" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("""    let options = options_of(model, kernel);
    Ok(SplitPlan::new(""", """    let options = options_of(model, kernel).placement(Placement::Arena);
    Ok(SplitPlan::new(""", 1)
open(p, "w").write(s)
PY
# H200_TRACE_BIN: a build of the above made before (skips the build).
bin=${H200_TRACE_BIN:-$root/target/h200-093c280/release/examples/access_trace}
if [ -z "${H200_TRACE_BIN:-}" ]; then
    (cd "$work/w" && CARGO_TARGET_DIR="$root/target/h200-093c280" \
        cargo build -q --release --example access_trace)
fi
here=$work/w
limits=large
json=docs/trace/h200-093c280.json
label=093c280
fi
out="$work/rows"
mkdir -p "$out"
# name | arguments (a split_bench case of 093c280 by name, or a split given
# whole) | arguments added for today's plans (M-RoPE's 201 MB pass WebGPU's
# binding: its windows' plan is traced at full size, no shrunk tensor
# having its layout)
while IFS='|' read -r name args now_args; do
    [ -z "$name" ] && continue
    [ "$mode" = now ] && args="$args $now_args"
    # shellcheck disable=SC2086
    (cd "$here" && "$bin" --limits "$limits" --json "$out/$name.json" $args > /dev/null)
    echo "$name" >> "$out/order"
done <<'CASES'
f32_4096x4096_axis0_4|--case f32_4096x4096_axis0_4
f32_64x1024x256_axis1_4|--case f32_64x1024x256_axis1_4
f32_4096x4096_axis1_4|--case f32_4096x4096_axis1_4
f16_1048576x6_axis1_123|--case f16_1048576x6_axis1_123
u8_4096x4097_axis1_2|--case u8_4096x4097_axis1_2
i4_4096x4099_axis1_3|--case i4_4096x4099_axis1_3
f32_1000x4096_seq|--case f32_1000x4096_seq
f16_8x512x2304_qkv|--case f16_8x512x2304_qkv
f32_1x84x8400_yolo|--case f32_1x84x8400_yolo
f32_1x8400x84_yolo_t|--case f32_1x8400x84_yolo_t
f32_1x3x640x640_ch|--case f32_1x3x640x640_ch
f32_4096x4097_odd_words|--case f32_4096x4097_odd_words
f32_1x8400x85_yolov5|--case f32_1x8400x85_yolov5
f32_4096x1024_tensor_split|--case f32_4096x1024_tensor_split
cat_f32_1x64x80x80_x3_c2f|--concat --dtype float --shape 1,192,80,80 --axis 1 --split onnx18:3
cat_f16_8x8x512x64_heads|--concat --dtype float16 --shape 8,512,512 --axis 2 --split onnx18:8
cat_f32_1000x4096_seq|--concat --case f32_1000x4096_seq
cat_f32_4096x4096_axis0_4|--concat --case f32_4096x4096_axis0_4
cat_f32_64x1024x256_axis1_4|--concat --case f32_64x1024x256_axis1_4
cat_f32_4096x4096_axis1_4|--concat --case f32_4096x4096_axis1_4
cat_f16_1048576x6_axis1_123|--concat --case f16_1048576x6_axis1_123
cat_u8_4096x4097_axis1_2|--concat --case u8_4096x4097_axis1_2
cat_i4_4096x4099_axis1_3|--concat --case i4_4096x4099_axis1_3
cat_f16_8x512x2304_qkv|--concat --case f16_8x512x2304_qkv
cat_f32_1x84x8400_yolo|--concat --case f32_1x84x8400_yolo
cat_f32_1x8400x84_yolo_t|--concat --case f32_1x8400x84_yolo_t
cat_f32_1x3x640x640_ch|--concat --case f32_1x3x640x640_ch
cat_f32_4096x4097_odd_words|--concat --case f32_4096x4097_odd_words
cat_f32_1x8400x85_yolov5|--concat --case f32_1x8400x85_yolov5
f16_1048576x31_columns|--dtype float16 --shape 1048576,31 --axis 1 --split onnx18:31
f32_1048576x31_columns|--dtype float --shape 1048576,31 --axis 1 --split onnx18:31
cat_f16_1048576x31_columns|--concat --dtype float16 --shape 1048576,31 --axis 1 --split onnx18:31
bf16_3x262144x128_mrope|--dtype bfloat16 --shape 3,262144,128 --axis 2 --split lengths:16,24,24,16,24,24|--rows 786432
f32_4194304x4_unbind|--dtype float --shape 4194304,4 --axis 1 --split onnx18:4
u8_16384x3000_thirds|--dtype uint8 --shape 16384,3000 --axis 1 --split onnx18:3
i8_32768x1023_511_1_511|--dtype int8 --shape 32768,1023 --axis 1 --split lengths:511,1,511
probe:vec4|--kernel vec4 --dtype float --shape 1024,4096 --axis 1 --split lengths:1024,1024,1024,1024
probe:words|--kernel words --dtype float --shape 1023,4096 --axis 1 --split lengths:1023,1025,1024,1024
probe:funnel|--kernel funnel --dtype uint8 --shape 2048,4097 --axis 1 --split lengths:2048,2049
probe:row_words|--kernel row_words --dtype float --shape 1024,1025 --axis 1 --split lengths:512,513
probe:row_blocks|--kernel row_blocks --dtype float16 --shape 1048576,6 --axis 1 --split lengths:1,2,3
probe:concat_words|--concat --kernel concat_words --dtype uint8 --shape 8192,37 --axis 1 --split lengths:5,32
CASES
python3 - "$out" "$label" "$limits" > "$json" <<'PY'
import json, sys, os
out, label, limits = sys.argv[1:4]
rows = []
for name in open(os.path.join(out, "order")).read().split():
    got = json.load(open(os.path.join(out, name + ".json")))
    row = next(r for r in got if r["class"] == "discrete")
    row["case"] = name
    row["by_warp"] = [c for c in row["by_warp"] if c["warp"] in (32, 64)]
    rows.append(row)
print(json.dumps({"commit": label, "traced_with": label + "'s access_trace, today's coalescing.rs",
                  "class": "discrete", "limits": {"large": "lavapipe's, 2 GiB binding, splits into an arena"}.get(limits, limits),
                  "rows": rows}, indent=1))
PY
echo "wrote $json ($(python3 -c 'import json,sys;print(len(json.load(open(sys.argv[1]))["rows"]))' "$json") rows)"
