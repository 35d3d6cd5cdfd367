#!/usr/bin/env bash
# The GPU bundle's entry point (copied into the bundle by
# scripts/gpu_bundle.sh): on a bare machine with a GPU driver and no cargo,
#
#   BUNDLE/run.sh REPORT_DIR [--quick] [--budget SECONDS]
#
# unpacks the payload, brings the Vulkan/EGL loaders where the machine has
# none (as root: dpkg -x into /), finds the NVIDIA ICD, prints the adapter
# and runs gpu_report, which writes REPORT_DIR/<adapter>.md and .json.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh REPORT_DIR [--quick] [--budget SECONDS]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/wgpu-split-bundle.XXXXXX")
tar -xJf "$here/payload.tar.xz" -C "$work" || { echo "run.sh: cannot unpack the payload" >&2; exit 2; }

if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1'; then
  echo "run.sh: no Vulkan loader here: unpacking the bundle's loader packages into /"
  for deb in "$here"/debs/*.deb; do dpkg -x "$deb" / || exit 2; done
  ldconfig
fi
if ! compgen -G '/usr/share/vulkan/icd.d/*.json' >/dev/null && ! compgen -G '/etc/vulkan/icd.d/*.json' >/dev/null; then
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/icd.d/nvidia_icd.json; do
    if [[ -f $icd ]]; then
      echo "run.sh: Vulkan ICD $icd"
      export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
      break
    fi
  done
fi
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[[ -f $egl ]] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
if [[ -z "${XDG_RUNTIME_DIR:-}" || ! -d "${XDG_RUNTIME_DIR}" ]]; then
  export XDG_RUNTIME_DIR="$work/xdg"
  mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L
echo "run.sh: bundle of commit $(cat "$work/COMMIT" 2>/dev/null || echo unknown)"

"$work/bin/gpu_report" --bundle "$work" --out "$out" "$@"
status=$?
rm -rf "$work"
exit $status
