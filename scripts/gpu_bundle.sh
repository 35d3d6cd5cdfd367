#!/usr/bin/env bash
# Builds the GPU bundle: one directory that a machine with a GPU and no
# Rust runs unattended (scripts/gpu_bundle/run.sh, copied in as run.sh).
#
#   scripts/gpu_bundle.sh OUT_DIR [--debug]
#
# OUT_DIR gets run.sh, payload.tar.xz (the stripped binaries of
# split_bench, lanes_bench, onnx_node_test, gpu_report, the burn
# integration's burn_bench and every GPU test binary; tests/data; the
# torch peer script; the commit) and debs/ (Debian's Vulkan and EGL loader
# packages, for machines that have a driver but no loader). Release builds
# unless --debug (CI's dry run reuses the dev builds of its test steps);
# a release bundle must stay within 60 MiB (what one device call carries).
set -euo pipefail
out=${1:?usage: scripts/gpu_bundle.sh OUT_DIR [--debug]}
profile=release
[[ ${2:-} == --debug ]] && profile=debug
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
out=$(cd "$out" && pwd)
cargo_profile=()
[[ $profile == release ]] && cargo_profile=(--release)

suites=(gpu concat_gpu destinations packed_pages stress device_loss buffer_checks caches
  coalescing concat_offsets cost executor memory onnx_models windows permuted_gpu permuted_trace)
examples=(split_bench lanes_bench onnx_node_test gpu_report)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/tests" "$stage/data/tests"

echo "gpu_bundle: building ($profile)"
cargo build "${cargo_profile[@]}" $(printf -- '--example %s ' "${examples[@]}")
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
for e in "${examples[@]}"; do cp "$target_dir/$profile/examples/$e" "$stage/bin/"; done

# Test binaries have hashed names: cargo says which file is which.
cargo test "${cargo_profile[@]}" --no-run --message-format=json $(printf -- '--test %s ' "${suites[@]}") |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in m["target"]["kind"]:
        shutil.copy(m["executable"], sys.argv[1] + "/" + m["target"]["name"])
' "$stage/tests"
for s in "${suites[@]}"; do [[ -x $stage/tests/$s ]] || { echo "gpu_bundle: no test binary for $s" >&2; exit 1; }; done

(
  cd integrations/burn
  cargo build "${cargo_profile[@]}" --example burn_bench
  burn_target=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  cp "$burn_target/$profile/examples/burn_bench" "$stage/bin/"
)

strip "$stage"/bin/* "$stage"/tests/*
cp -r tests/data "$stage/data/tests/data"
rm -f "$stage"/data/tests/data/onnx-models/skeletons/*.weights
cp scripts/torch_peer.py "$stage/"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo -dirty) ($profile)" >"$stage/COMMIT"

echo "gpu_bundle: compressing"
tar -C "$stage" -cf - . | xz -T2 -9 >"$out/payload.tar.xz"
cp scripts/gpu_bundle/run.sh "$out/run.sh"
chmod +x "$out/run.sh"

# The loaders (amd64: the GPU machines are x86-64), from Debian's archive
# through a private package list, as docs/DEVICE.md says.
rm -rf "$out/debs"
mkdir -p "$out/debs" /tmp/gpu-bundle-apt/partial
apt_options=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/gpu-bundle-apt)
apt-get "${apt_options[@]}" update -qq
(cd "$out/debs" && apt-get "${apt_options[@]}" download libvulkan1 libegl1 libglvnd0 -qq)

bytes=$(du -sb "$out" | cut -f1)
echo "gpu_bundle: $out holds $((bytes / 1024 / 1024)) MiB ($bytes bytes):"
ls -la "$out" "$out/debs"
if [[ $profile == release ]] && ((bytes > 60 * 1024 * 1024)); then
  echo "gpu_bundle: the release bundle is over 60 MiB" >&2
  exit 1
fi
