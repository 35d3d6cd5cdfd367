#!/usr/bin/env bash
# A device run (2026-11-28, run 2): before/after of the striped row copies and looped row
# blocks on issue 38's shapes, then the suites that ran past 60 s.
# Here: scripts/gpu_bundle.sh .bundle, and an older build's split_bench
# as .oldbin/split_bench_<commit>.xz (both ignored by .git/info/exclude);
# there, through the device tool with both carried, in the repository's
# root: `bash scripts/gpu_bundle/compare_run.sh` (about 4 minutes on an
# H200). Its logs: docs/gpu/nvidia-h200-run2-*.log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
w=$(mktemp -d); tar -xJf .bundle/payload.tar.xz -C "$w"
xz -dc .oldbin/split_bench_093c280.xz > "$w/bin/split_bench_old"; chmod +x "$w/bin/split_bench_old"
if ! ldconfig -p | grep -q libvulkan.so.1; then for d in .bundle/debs/*.deb; do dpkg -x "$d" /; done; ldconfig; fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[[ -f $icd ]] && export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
export XDG_RUNTIME_DIR=$w/xdg; mkdir -p -m700 "$XDG_RUNTIME_DIR"
export WGPU_SPLIT_ROOT=$w/data
cd "$w"
cases="f16_1048576x31_columns f32_1048576x31_columns cat_f16_1048576x31_columns bf16_3x262144x128_mrope u8_16384x3000_thirds f32_1x8400x85_yolov5 cat_f16_8x512x2304_qkv cat_f32_1x3x640x640_ch f32_4194304x4_unbind"
for round in 1 2; do
  for c in $cases; do
    for b in split_bench_old split_bench; do
      echo "=== round $round $b $c" >> "$OUT/bench.log"
      timeout 30 bin/$b --narrow --runs 15 --case "$c" >> "$OUT/bench.log" 2>&1
    done
  done
done
echo "bench done at $SECONDS s"
timeout 60 tests/executor --nocapture > "$OUT/executor.log" 2>&1; echo "executor rc=$? at $SECONDS s"
timeout 170 tests/stress --nocapture > "$OUT/stress.log" 2>&1 &
timeout 170 tests/device_loss --nocapture > "$OUT/device_loss.log" 2>&1 &
wait
echo "suites done at $SECONDS s"
grep -h "test result\|FAILED\|panicked" "$OUT"/*.log
