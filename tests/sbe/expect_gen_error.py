#!/usr/bin/env python3
"""expect_gen_error.py GENERATOR SCHEMA OUT EXPECTED: the generator must refuse SCHEMA with exit
status 1 and a one-line message containing EXPECTED (not crash, not write a header)."""

import os
import subprocess
import sys

gen, schema, out, expected = sys.argv[1:5]
if os.path.exists(out):
    os.remove(out)
r = subprocess.run([sys.executable, gen, schema, out], capture_output=True, text=True)
ok = (r.returncode == 1 and r.stderr.startswith('sbe_c_gen: ') and expected in r.stderr and
      'Traceback' not in r.stderr and not os.path.exists(out))
print('exit %d, stderr: %s' % (r.returncode, r.stderr.strip()))
sys.exit(0 if ok else 1)
