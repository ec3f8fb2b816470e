#!/usr/bin/env bash
# Configures (once) and builds tickplane in BUILD_DIR (default: build). Extra arguments go to
# `meson setup`, e.g. deploy/build.sh -Db_sanitize=address,undefined.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
    meson setup "$build_dir" "$@"
elif [ $# -gt 0 ]; then
    meson configure "$build_dir" "$@"
fi
ninja -C "$build_dir"
