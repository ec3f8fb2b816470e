#!/usr/bin/env python3
"""compare_schemas.py SHIPPED.h REFERENCE.h

Checks that the codec generated from tickplane's MDP3 schema lays out the wire exactly as the
codec generated from CME's own schema: every constant of the shipped header (template ids, block
lengths, field offsets, since-versions, group block lengths, null/min/max values, enum values, set
bits, composite offsets) must exist in the reference header with the same value. The shipped
schema is a subset, so the reference may have more.
"""

import re
import sys

DEFINE = re.compile(r'^#define\s+([A-Z0-9_]+)\s+(.+?)\s*$')
ENUM_VALUE = re.compile(r'^\s+([A-Z0-9_]+)\s*=\s*(-?\d+),\s*$')


def constants(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = DEFINE.match(line) or ENUM_VALUE.match(line)
            if m:
                out[m.group(1)] = m.group(2)
    return out


def main(shipped_path, reference_path):
    shipped = constants(shipped_path)
    reference = constants(reference_path)
    templates = sorted(k for k in shipped if k.endswith('_TEMPLATE_ID'))
    if len(templates) < 15:
        print('shipped header has only %d templates' % len(templates))
        return 1
    errors = 0
    for name, value in sorted(shipped.items()):
        if name not in reference:
            print('missing in the reference: %s' % name)
            errors += 1
        elif reference[name] != value:
            print('%s: shipped %s, reference %s' % (name, value, reference[name]))
            errors += 1
    print('%d templates, %d constants compared, %d differences' %
          (len(templates), len(shipped), errors))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
