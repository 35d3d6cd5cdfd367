#!/usr/bin/env bash
# Builds a web crate for wasm32-unknown-unknown, then wasm-bindgen's
# `--target web` glue into CRATE_DIR/pkg: web/ (crate wgpu-split-web, the
# browser suite and the bench page's side in Rust) by default, or another
# (integrations/burn/web, the burn integration's browser suite).
#
#   web/build.sh [CRATE_DIR]          then: node web/serve.mjs
#   web/build.sh --serve [--port N]   builds web/, installs onnxruntime-web
#                                     (npm ci) if it is not, and serves the
#                                     pages: open http://127.0.0.1:N/bench.html
#
# What it needs, and where it finds it:
# - Debian's Rust for the web (apt-get install -y rustc-web cargo-web
#   rust-web-src): its cargo and rustc (/usr/bin) build std from the
#   rust-web-src sources (-Zbuild-std; no wasm32 standard library ships for
#   rustup's toolchain here). $WEB_CARGO / $WEB_RUSTC override them.
# - A wasm linker: rustup's rust-lld (any installed toolchain's), or
#   $CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER.
# - The wasm-bindgen CLI of the version web/Cargo.lock pins: $WASM_BINDGEN,
#   or one on the PATH of that version, or built once from crates.io's
#   source into ${WGPU_SPLIT_TOOLS:-~/.cache/wgpu-split} (about 2 minutes on
#   2 cores; its own lock pins a webpki-roots the registry lacks, so it is
#   moved to 1.0.10 first, and it is built without TLS, which the CLI
#   needs only to download test runners).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
crate_dir=$here
serve=false
port=8080
while (($#)); do
  case $1 in
    --serve) serve=true ;;
    --port) port=$2; shift ;;
    *) crate_dir=$1 ;;
  esac
  shift
done
web=$(cd "$crate_dir" && pwd)
out=$web/pkg
crate=$(awk -F'"' '/^name = / { print $2; exit }' "$web/Cargo.toml" | tr - _)

fail() { echo "web/build.sh: $*" >&2; exit 1; }

cargo_web=${WEB_CARGO:-/usr/bin/cargo}
rustc_web=${WEB_RUSTC:-/usr/bin/rustc}
[[ -x $cargo_web && -x $rustc_web ]] ||
  fail "no Debian Rust for the web at $cargo_web / $rustc_web: apt-get install -y rustc-web cargo-web rust-web-src"
sysroot=$("$rustc_web" --print sysroot)
[[ -d $sysroot/lib/rustlib/src/rust/library/std ]] ||
  fail "no std sources under $sysroot/lib/rustlib/src/rust: apt-get install -y rust-web-src"

linker=${CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER:-}
if [[ -z $linker ]]; then
  linker=$(compgen -G "${RUSTUP_HOME:-$HOME/.rustup}/toolchains/*/lib/rustlib/*/bin/rust-lld" | head -n 1 || true)
fi
[[ -n $linker && -x $linker ]] || fail "no wasm linker: install a rustup toolchain (its rust-lld) or set CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER"

version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' "$web/Cargo.lock")
[[ -n $version ]] || fail "web/Cargo.lock pins no wasm-bindgen"
bindgen=${WASM_BINDGEN:-}
if [[ -z $bindgen ]] && command -v wasm-bindgen >/dev/null && [[ $(wasm-bindgen --version) == "wasm-bindgen $version" ]]; then
  bindgen=$(command -v wasm-bindgen)
fi
tools=${WGPU_SPLIT_TOOLS:-$HOME/.cache/wgpu-split}
if [[ -z $bindgen ]]; then
  bindgen=$tools/wasm-bindgen-$version/wasm-bindgen
  if [[ ! -x $bindgen ]]; then
    echo "building wasm-bindgen $version (once, into $tools)"
    scratch=$(mktemp -d)
    # Fetch its source through a throwaway manifest (the host's cargo).
    mkdir -p "$scratch/fetch/src"
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nwasm-bindgen-cli = "=%s"\n' "$version" >"$scratch/fetch/Cargo.toml"
    touch "$scratch/fetch/src/lib.rs"
    cargo fetch --manifest-path "$scratch/fetch/Cargo.toml" >/dev/null
    src=$(compgen -G "${CARGO_HOME:-$HOME/.cargo}/registry/src/*/wasm-bindgen-cli-$version" | head -n 1)
    [[ -n $src ]] || fail "cargo fetch gave no wasm-bindgen-cli $version source"
    cp -r "$src" "$scratch/cli"
    (
      cd "$scratch/cli"
      if ! cargo metadata --locked --format-version 1 >/dev/null 2>&1; then
        cargo update -p webpki-roots --precise 1.0.10
      fi
      cargo build --release --locked --no-default-features --bin wasm-bindgen
    )
    mkdir -p "$(dirname "$bindgen")"
    cp "$scratch/cli/target/release/wasm-bindgen" "$bindgen"
    rm -rf "$scratch"
  fi
fi
[[ $("$bindgen" --version) == "wasm-bindgen $version" ]] || fail "$bindgen is not wasm-bindgen $version"

echo "building $web for wasm32 ($("$rustc_web" --version), std from source)"
(
  cd "$web"
  RUSTC_BOOTSTRAP=1 RUSTC="$rustc_web" RUSTDOC="${rustc_web%rustc}rustdoc" \
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$linker" \
    "$cargo_web" build --locked --release --target wasm32-unknown-unknown -Zbuild-std=std,panic_abort
)
rm -rf "$out"
"$bindgen" --target web --out-dir "$out" "$web/target/wasm32-unknown-unknown/release/$crate.wasm"
echo "web/build.sh: $(du -sh "$out/${crate}_bg.wasm" | cut -f1) of wasm in $out"
if $serve; then
  [[ -d $here/node_modules/onnxruntime-web ]] || (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
  exec node "$here/serve.mjs" --port "$port"
fi
