#!/usr/bin/env bash
# Installs the Debian 12 packages that tickplane's build, tests, fuzzers and tools need.
# Idempotent: when everything is already installed it changes nothing and touches no network.
set -euo pipefail

packages=(
    build-essential clang lld llvm libclang-rt-14-dev meson ninja-build pkg-config python3
    libdpdk-dev dpdk libjansson-dev libcmocka-dev libpcap-dev
    iproute2 tshark valgrind clang-format help2man lintian
    python3-numpy python3-pandas python3-pytest python3-matplotlib
    dpdk-dev prometheus tmux  # dpdk-telemetry.py, promtool, a terminal for the live view's test
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
