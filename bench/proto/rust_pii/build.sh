#!/bin/sh
# Offline build of the ragpulse_pii extension (PyO3 0.17.3 + regex 1.7.1 from Debian's
# librust-*-dev source packages; .cargo/config.toml replaces crates.io with
# /usr/share/cargo/registry and sets net.offline). Target dir and the importable .so go
# to /tmp, never into the repo.
#   one-time: apt-get install -y --no-install-recommends librust-pyo3-dev librust-regex-dev librust-aho-corasick-dev
set -eu
cd "$(dirname "$0")"
TARGET=${TARGET:-/tmp/rust_pii_target}
OUT=${OUT:-/tmp/rust_pii_build}
export PYO3_PYTHON=${PYO3_PYTHON:-/work/main/.venv/bin/python}
CARGO=${CARGO:-/root/.cargo/bin/cargo}
"$CARGO" build --release -j2 --target-dir "$TARGET"
mkdir -p "$OUT"
SUFFIX=$("$PYO3_PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cp "$TARGET/release/libragpulse_pii.so" "$OUT/ragpulse_pii$SUFFIX"
echo "built $OUT/ragpulse_pii$SUFFIX"
