#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install dependencies, build, run every test
# (unit, conformance, integration). Run as root, or as a user with sudo for the installs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
meson test -C "${BUILD_DIR:-build}" --print-errorlogs --num-processes 2
