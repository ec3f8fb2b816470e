#!/usr/bin/env python3
"""tickplane-doctor's command line: exit status, argument errors, JSON output, on a fake root
and on this machine (where most checks must say SKIP or WARN with a reason, not crash)."""
import json
import os
import subprocess
import sys
import tempfile

DOCTOR = sys.argv[1]
CONFIGS = sys.argv[2]  # the repository's configs/ directory
NAMES = ["cpu_isolation", "nohz_full", "rcu_nocbs", "cpu_governor", "irqbalance", "irq_affinity",
         "watchdog", "vm_stat_interval", "clocksource", "tsc_invariant", "thp", "hugepages",
         "memlock", "nic_driver", "numa_locality"]


def run(*args):
    p = subprocess.run([DOCTOR, *args], capture_output=True, text=True, timeout=20)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def write(root, path, text):
    full = root + path
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def report(out):
    doc = json.loads(out)
    check([c["name"] for c in doc["checks"]] == NAMES, "all checks, in order")
    for c in doc["checks"]:
        check(c["status"] in ("PASS", "SKIP", "WARN", "FAIL"), "status " + c["status"])
        check(c["detail"] != "", c["name"] + " says what it found")
        check((c["fix"] != "") == (c["status"] in ("WARN", "FAIL")), c["name"] + " fix iff problem")
    return doc, {c["name"]: c for c in doc["checks"]}


# Usage errors exit 2 and name the bad value.
for args, word in ((["--pci", "zz:00.0"], "zz:00.0"), (["--data-lcores", "5-1"], "5-1"),
                   (["--hugepages-mb", "lots"], "lots"), (["--bogus"], "usage")):
    rc, _, err = run(*args)
    check(rc == 2 and word in err, "usage error for %s (rc %d, %r)" % (args, rc, err))

with tempfile.TemporaryDirectory() as root:
    # An empty root: nothing readable, so checks skip with reasons; no hugepages is a FAIL (exit 1).
    rc, out, _ = run("--root", root, "--data-lcores", "2-3", "--json")
    doc, by = report(out)
    check(rc == 1 and doc["summary"]["FAIL"] == 1 and by["hugepages"]["status"] == "FAIL",
          "empty root fails only on hugepages")
    check(by["cpu_isolation"]["status"] == "SKIP", "isolation skips without /proc/cmdline")

    # Hugepages reserved and mounted: no FAIL left, exit 0.
    write(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "512\n")
    write(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "512\n")
    write(root, "/proc/mounts", "nodev /dev/hugepages hugetlbfs rw 0 0\n")
    rc, out, _ = run("--root", root, "--data-lcores", "2-3", "--hugepages-mb", "512", "--json")
    doc, by = report(out)
    check(rc == 0 and by["hugepages"]["status"] == "PASS", "hugepages pass, exit 0")
    rc, out, _ = run("--root", root, "--hugepages-mb", "2048", "--json")
    check(rc == 1 and "need 2048 MiB" in json.loads(out)["checks"][11]["detail"], "2 GiB is too much")

    # A short PCI address is normalized; a missing device is a FAIL with the lspci fix.
    rc, out, _ = run("--root", root, "--pci", "3B:00.0,0000:af:00.1", "--json")
    doc, by = report(out)
    check(rc == 1 and "no PCI device 0000:3b:00.0" in by["nic_driver"]["detail"], "pci normalized")

    # Text output: problems only shows no PASS line, the full one ends with the summary.
    rc, out, _ = run("--root", root, "--problems")
    check("PASS" not in out and "FAIL  hugepages" not in out, "problems-only text")
    rc, out, _ = run("--root", root)
    check(out.rstrip().splitlines()[-1].startswith("summary: "), "summary line")

# --config: lcores, ports and memory come from the config; later flags override it.
with tempfile.TemporaryDirectory() as root:
    write(root, "/proc/cmdline", "root=/dev/sda1 isolcpus=3\n")
    write(root, "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "1\n")
    write(root, "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", "1\n")
    write(root, "/proc/mounts", "nodev /dev/hugepages hugetlbfs rw 0 0\n")
    prod = os.path.join(CONFIGS, "production.json")
    rc, out, _ = run("--root", root, "--config", prod, "--json")
    doc, by = report(out)
    check("not data lcores 2" in by["cpu_isolation"]["detail"], "data lcore 2 from the config")
    check("need 4096 MiB" in by["hugepages"]["detail"], "eal.memory_mb is the hugepage need")
    check("0000:3b:00.0" in by["nic_driver"]["detail"], "PCI ports from the config")
    rc, out, _ = run("--root", root, "--config", prod, "--data-lcores", "3", "--json")
    doc, by = report(out)
    check(by["cpu_isolation"]["status"] == "PASS", "--data-lcores overrides the config")
    rc, out, _ = run("--root", root, "--config", os.path.join(CONFIGS, "demo.json"), "--json")
    doc, by = report(out)
    check(by["hugepages"]["status"] == "WARN" and "no_huge" in by["hugepages"]["detail"],
          "demo config runs without hugepages")
    check(by["nic_driver"]["status"] == "SKIP", "demo config has no PCI port")
    bad = os.path.join(root, "bad.json")
    write(root, "/bad.json", '{"eal": {"lcores": "0-1"}, "bogus": 1}')
    rc, _, err = run("--config", bad)
    check(rc == 2 and "is not a valid config" in err and "bogus" in err, "invalid config: %r" % err)

# This machine: the checks run and explain themselves whatever the host has.
rc, out, _ = run("--data-lcores", "1", "--json")
doc, by = report(out)
check(rc == (1 if doc["summary"]["FAIL"] else 0), "exit status follows the FAIL count")
print("doctor on this host:", doc["summary"])
