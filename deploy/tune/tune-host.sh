#!/bin/sh
# Applies the host tuning that needs no reboot, for the data lcores of a tickplane config:
#
#   tune-host.sh --config /etc/tickplane/NAME.json [--persist] [--dry-run]
#   tune-host.sh --data-lcores 2-5 [--persist] [--dry-run]
#
#  - cpufreq governor "performance" on the data lcores
#  - every IRQ's affinity, and the default for new IRQs, on the other (housekeeping) cpus
#  - irqbalance told to leave the data lcores alone (IRQBALANCE_BANNED_CPULIST), if installed
#  - lockup watchdogs kept to the housekeeping cpus (kernel.watchdog_cpumask)
#  - vm.stat_interval = 10
#  - transparent hugepages: madvise (enabled and defrag)
# --persist also writes /etc/sysctl.d/90-tickplane.conf (the sysctls survive a reboot; the rest
# does not: run this script from a boot unit, or see docs/OPERATIONS.md for kernel parameters).
# What needs a reboot (isolcpus, nohz_full, rcu_nocbs, hugepages at boot, IOMMU) is only
# reported by tickplane-doctor. Idempotent. --root DIR works on a fake /proc and /sys (tests;
# no service is restarted then). Exit status: 0, 1 if a setting could not be applied, 2 usage.
set -eu

doctor=${TICKPLANE_DOCTOR:-@BINDIR@/tickplane-doctor}
root=
config=
lcores=
persist=0
dry=0

usage() {
    sed -n '2,21s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --config) config=${2:?}; shift 2 ;;
    --data-lcores) lcores=${2:?}; shift 2 ;;
    --persist) persist=1; shift ;;
    --dry-run) dry=1; shift ;;
    --root) root=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "tune-host: unknown argument '$1'" >&2; usage ;;
    esac
done

if [ -n "$config" ]; then
    lcores=$("$doctor" --config "$config" ${lcores:+--data-lcores "$lcores"} --show-lcores) || {
        echo "tune-host: $doctor could not read $config" >&2
        exit 2
    }
fi
# The doctor validates and normalizes the list (e.g. "3,2-2" -> "2-3").
lcores=$("$doctor" --data-lcores "${lcores:-}" --show-lcores 2>/dev/null) && [ -n "$lcores" ] || {
    echo "tune-host: give --config FILE or --data-lcores LIST (kernel cpu list syntax)" >&2
    exit 2
}

# Expands a kernel cpu list ("0-2,5") into one cpu per line.
expand() {
    tr ',' '\n' | awk -F- 'NF { last = (NF > 1) ? $2 : $1; for (c = $1; c <= last; c++) print c }'
}

online=$(expand <"$root/sys/devices/system/cpu/online")
data=$(echo "$lcores" | expand)
housekeeping=$(for c in $online; do echo "$data" | grep -qx "$c" || echo "$c"; done)
if [ -z "$housekeeping" ]; then
    echo "tune-host: every online cpu is a data lcore: nothing left for IRQs and the kernel" >&2
    exit 2
fi
# Back to the list syntax, and the kernel's hex mask in 32-bit groups ("1,00000003").
house_list=$(echo "$housekeeping" | awk '
    function range(a, b) { return a == b ? a : a "-" b }
    function add(r) { out = out (out == "" ? "" : ",") r }
    NR > 1 && $1 == last + 1 { last = $1; next }
    NR > 1 { add(range(first, last)) }
    { first = last = $1 }
    END { add(range(first, last)); print out }')
house_mask=$(echo "$housekeeping" | awk '
    BEGIN { top = 0 }
    { g = int($1 / 32); w[g] += 2 ^ ($1 % 32); if (g > top) top = g }
    END { s = sprintf("%x", w[top]); for (g = top - 1; g >= 0; g--) s = s sprintf(",%08x", w[g]); print s }')

failed=0

# Writes value into root/path unless it already holds it; reports what it did.
set_file() {
    path=$root$1
    value=$2
    [ -e "$path" ] || return 0
    current=$(cat "$path" 2>/dev/null || true)
    case $current in "$value" | *"[$value]"*) return 0 ;; esac
    if [ "$dry" -eq 1 ]; then
        echo "would set $1 = $value (now: $current)"
    elif echo "$value" >"$path" 2>/dev/null; then
        echo "set $1 = $value"
    else
        echo "tune-host: could not write $value to $1" >&2
        failed=1
    fi
}

for c in $data; do
    set_file "/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor" performance
done

for dir in "$root"/proc/irq/*/; do
    irq=$(basename "$dir")
    case $irq in *[!0-9]*) continue ;; esac
    [ -e "$dir/smp_affinity_list" ] || continue
    path=/proc/irq/$irq/smp_affinity_list
    [ "$(cat "$root$path")" = "$house_list" ] && continue
    # Some IRQs (per-cpu, managed) refuse: the kernel keeps them where they must be.
    if [ "$dry" -eq 1 ]; then
        echo "would set $path = $house_list"
    elif echo "$house_list" >"$root$path" 2>/dev/null; then
        echo "set $path = $house_list"
    else
        echo "note: IRQ $irq keeps its affinity (the kernel refused)"
    fi
done
set_file /proc/irq/default_smp_affinity "$house_mask"

if [ -e "$root/etc/default/irqbalance" ] || [ -x "$root/usr/sbin/irqbalance" ]; then
    conf=$root/etc/default/irqbalance
    line="IRQBALANCE_BANNED_CPULIST=$lcores"
    if ! grep -qx "$line" "$conf" 2>/dev/null; then
        if [ "$dry" -eq 1 ]; then
            echo "would set $line in /etc/default/irqbalance"
        else
            touch "$conf"
            sed -i '/^IRQBALANCE_BANNED_CPULIST=/d' "$conf"
            echo "$line" >>"$conf"
            echo "set $line in /etc/default/irqbalance"
            if [ -z "$root" ] && systemctl is-active --quiet irqbalance 2>/dev/null; then
                systemctl restart irqbalance
            fi
        fi
    fi
fi

set_file /proc/sys/kernel/watchdog_cpumask "$house_list"
set_file /proc/sys/vm/stat_interval 10
set_file /sys/kernel/mm/transparent_hugepage/enabled madvise
set_file /sys/kernel/mm/transparent_hugepage/defrag madvise

if [ "$persist" -eq 1 ]; then
    conf=$root/etc/sysctl.d/90-tickplane.conf
    want=$(printf '# Written by tickplane tune-host.sh for data lcores %s.\nkernel.watchdog_cpumask = %s\nvm.stat_interval = 10\n' "$lcores" "$house_list")
    if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
        if [ "$dry" -eq 1 ]; then
            echo "would write /etc/sysctl.d/90-tickplane.conf"
        else
            mkdir -p "$(dirname "$conf")"
            echo "$want" >"$conf"
            echo "wrote /etc/sysctl.d/90-tickplane.conf"
        fi
    fi
fi
exit "$failed"
