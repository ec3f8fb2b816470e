"""`BINARY --version` prints "NAME VERSION (commit C)" on stdout and exits 0, with the version the
build was configured with: usage: check_version.py NAME BINARY VERSION"""
import re
import subprocess
import sys

name, binary, version = sys.argv[1:4]
p = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
want = r"^%s %s \(commit ([0-9a-f]{7,40}|unknown)\)\n$" % (re.escape(name), re.escape(version))
if p.returncode != 0 or not re.match(want, p.stdout):
    print("FAIL: %s --version: exit %d, stdout %r, stderr %r" %
          (binary, p.returncode, p.stdout, p.stderr))
    sys.exit(1)
print("PASS " + p.stdout.strip())
