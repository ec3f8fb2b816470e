#!/bin/sh
# reserve-hugepages.sh on a fake /sys (--root): per-node reservation, idempotence, never
# lowering a pool, the config-driven plan (ports' NUMA nodes via tickplane-doctor), refusal
# by the kernel, and usage errors.
#   test_reserve_hugepages.sh SCRIPT DOCTOR CONFIGS_DIR
set -u
script=$1
doctor=$2
configs=$3

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

fail() {
    echo "FAIL: $*"
    exit 1
}

# The build tree's script runs the build's doctor by itself (the installed one /usr/bin's).
unset TICKPLANE_DOCTOR
[ "$(sed -n 's/^doctor=${TICKPLANE_DOCTOR:-\(.*\)}$/\1/p' "$1")" -ef "$doctor" ] ||
    fail "$1 does not default to $doctor"

pool() { # node size -> pool dir
    echo "$root/sys/devices/system/node/node$1/hugepages/hugepages-$2"
}

for n in 0 1; do
    for size in 2048kB 1048576kB; do
        mkdir -p "$(pool $n $size)"
        echo 0 >"$(pool $n $size)/nr_hugepages"
    done
done
echo 0-1 >"$root/sys/devices/system/node/online"
mkdir -p "$root/proc"
printf 'MemTotal: 1000 kB\nHugepagesize:       2048 kB\n' >"$root/proc/meminfo"

run() {
    out=$(sh "$script" --root "$root" "$@" 2>&1)
    rc=$?
}

nr() { cat "$(pool "$1" "$2")/nr_hugepages"; }

# One node, the kernel's default page size (2 MiB from /proc/meminfo): 512 MiB = 256 pages.
run --node 1 --mb 512
[ $rc -eq 0 ] || fail "reserve node 1: rc $rc: $out"
[ "$(nr 1 2048kB)" = 256 ] || fail "node 1 has $(nr 1 2048kB) pages, want 256"
[ "$(nr 0 2048kB)" = 0 ] || fail "node 0 touched"

# Idempotent, and never lowers a pool someone may use.
run --node 1 --mb 512
[ $rc -eq 0 ] && echo "$out" | grep -q "nothing to do" || fail "second run: $out"
run --node 1 --mb 100
[ "$(nr 1 2048kB)" = 256 ] || fail "pool lowered to $(nr 1 2048kB)"

# Every online node; an explicit page size (1 GiB pages, rounded up).
run --mb 1500 --size 1048576kB
[ $rc -eq 0 ] || fail "all nodes: $out"
[ "$(nr 0 1048576kB)" = 2 ] && [ "$(nr 1 1048576kB)" = 2 ] || fail "1G pools: $(nr 0 1048576kB) $(nr 1 1048576kB)"

# From a config: the port 0000:3b:00.0 of production.json sits on node 0 here; 4096 MiB asked.
mkdir -p "$root/sys/bus/pci/devices/0000:3b:00.0" "$root/sys/bus/pci/devices/0000:3b:00.1"
echo 0 >"$root/sys/bus/pci/devices/0000:3b:00.0/numa_node"
echo 0 >"$root/sys/bus/pci/devices/0000:3b:00.1/numa_node"
run --config "$configs/production.json"
[ $rc -eq 0 ] || fail "config plan: $out"
[ "$(nr 0 2048kB)" = 2048 ] || fail "node 0 has $(nr 0 2048kB) pages, want 2048 for 4096 MiB"
run --config "$configs/demo.json"
[ $rc -eq 0 ] && echo "$out" | grep -q "without hugepages" || fail "demo (no_huge): $out"

# The kernel refuses (a pool file that cannot be written stands for fragmented memory).
rm -rf "$(pool 0 2048kB)"
mkdir -p "$(pool 0 2048kB)/nr_hugepages"
run --node 0 --mb 8192
[ $rc -ne 0 ] || fail "refusal not reported: $out"

# Usage errors.
for args in "--mb" "--mb lots" "--node x --mb 1" "--size 2M --mb 1" "--bogus" \
            "--config $configs/demo.json --mb 1"; do
    # shellcheck disable=SC2086
    run $args
    [ $rc -eq 2 ] || fail "'$args' gave rc $rc: $out"
done
echo "ok"
