#!/bin/sh
# Offline build of one Rust prototype's extension:
#   sh bench/proto/build.sh <folder> [extra cargo build options]   e.g. rust_pii, rust_source_policy
# The crate in bench/proto/<folder> (PyO3 0.17.3 + regex 1.7.1 from Debian's librust-*-dev
# source packages; the folder's .cargo/config.toml replaces crates.io with
# /usr/share/cargo/registry and sets net.offline) is built in release mode with 2 jobs. The
# target dir (/tmp/<folder>_target) and the importable .so (/tmp/<folder>_build/<crate><EXT_SUFFIX>)
# go to /tmp, never into the repo; TARGET, OUT, PYO3_PYTHON and CARGO override the defaults.
#   one-time: apt-get install -y --no-install-recommends librust-pyo3-dev librust-regex-dev librust-aho-corasick-dev
set -eu
FOLDER=${1:?usage: sh bench/proto/build.sh <prototype folder, e.g. rust_pii> [cargo options]}
shift
cd "$(dirname "$0")/$FOLDER"
CRATE=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
TARGET=${TARGET:-/tmp/${FOLDER}_target}
OUT=${OUT:-/tmp/${FOLDER}_build}
export PYO3_PYTHON=${PYO3_PYTHON:-/work/main/.venv/bin/python}
CARGO=${CARGO:-/root/.cargo/bin/cargo}
"$CARGO" build --release -j2 --target-dir "$TARGET" "$@"
mkdir -p "$OUT"
SUFFIX=$("$PYO3_PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cp "$TARGET/release/lib$CRATE.so" "$OUT/$CRATE$SUFFIX"
echo "built $OUT/$CRATE$SUFFIX"
