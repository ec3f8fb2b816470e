#!/bin/sh
# Reserves hugepages per NUMA node for tickplane, and makes a hugetlbfs mount DPDK can use.
#
#   reserve-hugepages.sh --config /etc/tickplane/NAME.json [--group tickplane]
#   reserve-hugepages.sh --node 1 --mb 4096 [--size 1048576kB]
#   reserve-hugepages.sh --mb 1024            (every online node)
#
# With --config, the nodes and sizes come from `tickplane-doctor --config FILE --hugepage-plan`
# (the NUMA node of each PCI port, the memory the config asks EAL for); a config that runs
# without hugepages (eal.no_huge) needs nothing.
#
# Idempotent: a node that already has enough pages is left alone, and pages are never taken
# away (another process may be using them). Exits 1 if the kernel would not give enough pages
# (memory too fragmented: reserve them at boot instead, see docs/OPERATIONS.md), 2 on bad usage.
# --root DIR works on a fake /sys under DIR (tests); mounting is then skipped.
set -eu

doctor=${TICKPLANE_DOCTOR:-@BINDIR@/tickplane-doctor}
root=
config=
node=all
mb=
size=
group=
mount_point=/dev/hugepages

usage() {
    sed -n '2,17s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --config) config=${2:?}; shift 2 ;;
    --node) node=${2:?}; shift 2 ;;
    --mb) mb=${2:?}; shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --group) group=${2:?}; shift 2 ;;
    --mount) mount_point=${2:?}; shift 2 ;;
    --root) root=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "reserve-hugepages: unknown argument '$1'" >&2; usage ;;
    esac
done

is_number() {
    case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

# The kernel's default hugepage size (what EAL uses unless told otherwise), e.g. 2048kB.
if [ -z "$size" ]; then
    size=$(awk '/^Hugepagesize:/ { print $2 "kB" }' "$root/proc/meminfo" 2>/dev/null || true)
    [ -n "$size" ] || size=2048kB
fi
case $size in *kB) ;; *) echo "reserve-hugepages: --size wants NNNkB, got '$size'" >&2; exit 2 ;; esac
page_kb=${size%kB}
is_number "$page_kb" && [ "$page_kb" -gt 0 ] || { echo "reserve-hugepages: bad --size '$size'" >&2; exit 2; }

# The pool directory of one node (or the global pool on a kernel without NUMA).
pool_dir() {
    if [ -d "$root/sys/devices/system/node/node$1" ]; then
        echo "$root/sys/devices/system/node/node$1/hugepages/hugepages-$size"
    else
        echo "$root/sys/kernel/mm/hugepages/hugepages-$size"
    fi
}

online_nodes() {
    if [ -r "$root/sys/devices/system/node/online" ]; then
        # "0-1,3" -> 0 1 3
        tr ',' '\n' <"$root/sys/devices/system/node/online" |
            awk -F- '{ last = (NF > 1) ? $2 : $1; for (n = $1; n <= last; n++) print n }'
    else
        echo 0
    fi
}

failed=0

# Raises node $1's pool to at least $2 MiB.
reserve() {
    n=$1
    want_mb=$2
    dir=$(pool_dir "$n")
    if [ ! -d "$dir" ]; then
        echo "reserve-hugepages: node $n has no $size pool ($dir); is that page size enabled?" >&2
        failed=1
        return
    fi
    want=$(( (want_mb * 1024 + page_kb - 1) / page_kb ))
    have=$(cat "$dir/nr_hugepages")
    if [ "$have" -ge "$want" ]; then
        echo "reserve-hugepages: node $n has $have x $size (want $want): nothing to do"
        return
    fi
    echo "$want" >"$dir/nr_hugepages" 2>/dev/null || true
    got=$(cat "$dir/nr_hugepages")
    if [ "$got" -lt "$want" ]; then
        echo "reserve-hugepages: node $n: asked for $want x $size, the kernel gave $got" \
             "(fragmented memory: reserve at boot with hugepagesz=/hugepages= on the kernel command line)" >&2
        failed=1
    else
        echo "reserve-hugepages: node $n: $have -> $got x $size"
    fi
}

if [ -n "$config" ]; then
    [ -z "$mb" ] || { echo "reserve-hugepages: give --config or --mb, not both" >&2; exit 2; }
    plan=$("$doctor" --config "$config" ${root:+--root "$root"} --hugepage-plan) || {
        echo "reserve-hugepages: $doctor could not read $config" >&2
        exit 2
    }
    if [ -z "$plan" ]; then
        echo "reserve-hugepages: $config runs without hugepages: nothing to reserve"
        exit 0
    fi
    echo "$plan" | while read -r n want_mb; do
        [ -n "$n" ] || continue
        reserve "$n" "$want_mb"
        [ "$failed" -eq 0 ] || exit 1
    done || failed=1
else
    is_number "$mb" || { echo "reserve-hugepages: --mb N (MiB) is required without --config" >&2; exit 2; }
    if [ "$node" = all ]; then
        for n in $(online_nodes); do reserve "$n" "$mb"; done
    else
        is_number "$node" || { echo "reserve-hugepages: bad --node '$node'" >&2; exit 2; }
        reserve "$node" "$mb"
    fi
fi

# A hugetlbfs mount for the page size, writable by the daemon's group (DPDK creates its page
# files there; the bus may live there too). Only on the real root.
if [ -z "$root" ]; then
    if ! awk -v mp="$mount_point" '$2 == mp && $3 == "hugetlbfs" { found = 1 } END { exit !found }' /proc/mounts; then
        mkdir -p "$mount_point"
        mount -t hugetlbfs -o "pagesize=${page_kb}K" nodev "$mount_point"
        echo "reserve-hugepages: mounted hugetlbfs ($size) on $mount_point"
    fi
    if [ -n "$group" ]; then
        chgrp "$group" "$mount_point"
        chmod 1775 "$mount_point" # group may create files; only owners remove theirs
    fi
fi
exit "$failed"
