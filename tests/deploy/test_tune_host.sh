#!/bin/sh
# tune-host.sh on a fake untuned host (--root): tickplane-doctor fails or warns before, the
# runtime checks pass after; --dry-run changes nothing; a second run changes nothing;
# --persist writes the sysctl file; usage errors.
#   test_tune_host.sh SCRIPT DOCTOR CONFIGS_DIR
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
[ "$(sed -n 's/^doctor=${TICKPLANE_DOCTOR:-\(.*\)}$/\1/p' "$script")" -ef "$doctor" ] ||
    fail "$script does not default to $doctor"

put() { # path content
    mkdir -p "$(dirname "$root$1")"
    printf '%s\n' "$2" >"$root$1"
}

# Three cpus: 0-1 housekeeping, 2 the data lcore of configs/production.json.
put /sys/devices/system/cpu/online 0-2
for c in 0 1 2; do
    put /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor schedutil
done
put /proc/irq/24/smp_affinity_list 0-2
put /proc/irq/25/smp_affinity_list 2
put /proc/irq/default_smp_affinity 7
put /proc/sys/kernel/watchdog 1
put /proc/sys/kernel/nmi_watchdog 0
put /proc/sys/kernel/watchdog_cpumask 0-2
put /proc/sys/vm/stat_interval 1
put /sys/kernel/mm/transparent_hugepage/enabled '[always] madvise never'
put /sys/kernel/mm/transparent_hugepage/defrag '[always] defer defer+madvise madvise never'
put /etc/default/irqbalance '# irqbalance settings
IRQBALANCE_BANNED_CPULIST=7'

statuses() { # "<check> <status>" lines of the doctor on the fake root, data lcore 2
    "$doctor" --root "$root" --data-lcores 2 --json |
        python3 -c 'import json, sys; [print(c["name"], c["status"]) for c in json.load(sys.stdin)["checks"]]'
}

runtime_checks="cpu_governor irq_affinity watchdog vm_stat_interval thp"
now=$(statuses)
for check in $runtime_checks; do
    echo "$now" | grep -qx "$check PASS" && fail "$check passes before tuning"
done

sum() { find "$root" -type f -exec cat {} + | md5sum; }
before=$(sum)
out=$(sh "$script" --root "$root" --data-lcores 2 --dry-run 2>&1) || fail "dry run: $out"
[ "$(sum)" = "$before" ] || fail "--dry-run changed files"
echo "$out" | grep -q "would set /proc/irq/24/smp_affinity_list = 0-1" || fail "dry run output: $out"

out=$(sh "$script" --root "$root" --config "$configs/production.json" --persist 2>&1) || fail "tune: $out"
now=$(statuses)
for check in $runtime_checks; do
    echo "$now" | grep -qx "$check PASS" || fail "$check after tuning: $now; $out"
done
[ "$(cat "$root/proc/irq/default_smp_affinity")" = 3 ] || fail "default_smp_affinity"
[ "$(cat "$root/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor")" = schedutil ] ||
    fail "a housekeeping cpu's governor was changed"
grep -qx 'IRQBALANCE_BANNED_CPULIST=2' "$root/etc/default/irqbalance" || fail "irqbalance ban"
[ "$(grep -c '^IRQBALANCE_BANNED_CPULIST=' "$root/etc/default/irqbalance")" = 1 ] || fail "old ban kept"
grep -q '^# irqbalance settings' "$root/etc/default/irqbalance" || fail "irqbalance comments lost"
grep -qx 'kernel.watchdog_cpumask = 0-1' "$root/etc/sysctl.d/90-tickplane.conf" || fail "sysctl file"
grep -qx 'vm.stat_interval = 10' "$root/etc/sysctl.d/90-tickplane.conf" || fail "sysctl file"

after=$(sum)
out=$(sh "$script" --root "$root" --data-lcores 2 --persist 2>&1) || fail "second run: $out"
[ "$(sum)" = "$after" ] && [ -z "$out" ] || fail "second run changed something: $out"

for args in "" "--data-lcores 0-2" "--data-lcores 9-2" "--bogus"; do
    # shellcheck disable=SC2086
    sh "$script" --root "$root" $args >/dev/null 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "'$args' gave rc $rc"
done
echo ok
