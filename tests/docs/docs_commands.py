#!/usr/bin/env python3
"""docs_commands.py SOURCE_ROOT BUILD_ROOT

The documents' commands, as a new user meets them, on a fresh copy of the tree (the files git
tracks, as CI checks them out) whose build/ is the build under test:

- README.md: every ```sh block runs, in order, as one bash script (-e -o pipefail), but for
  those marked `<!-- docs test: not run (why) -->` (the installs and the build itself, which this
  test stands on); then what the blocks promise is checked (the config valid, each symbol's
  current state, a book, the daemon's summary, a consumer built with the build tree's
  pkg-config file). As root the script gets a private /dev/shm and /tmp/tickplane-demo (a mount
  namespace), so a demo running beside it is not disturbed.
- every other document (docs/, the parts' README.md): every ```sh block's paths into the tree
  (build/..., tools/..., configs/...) exist, and every --option given to a tickplane program is
  one its --help lists. Those blocks install packages, need root, a NIC or minutes of
  benchmarking: they are checked, not run.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SRC, BUILD = sys.argv[1], sys.argv[2]
# The README's commands take some 20 s here at a load of 20; minutes when the load is higher.
README_BOUND_S = 600
NOT_RUN = '<!-- docs test: not run'
BLOCK = re.compile(r'(?:^(<!--[^\n]*-->)\n)?^```sh\n(.*?)^```', re.S | re.M)
TREE_PATH = re.compile(r'(?<![\w/.$-])((?:build|deploy|tools|configs|docs|client|codecs|dataplane|'
                       r'control|tests)/[\w./@+-]*[\w/])')
PROGRAMS = {
    'tickplane': 'dataplane/daemon/tickplane',
    'tickplanectl': 'tools/ctl/tickplanectl',
    'tickplane-top': 'client/examples/tickplane-top',
    'tickplane-dump': 'tools/dump/tickplane-dump',
    'tickplane-replay': 'tools/replay/tickplane-replay',
    'tickplane-sim': 'tools/sim/tickplane-sim',
    'tickplane-doctor': 'deploy/tickplane-doctor',
}
failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def fresh_copy(dst):
    """The tracked (and new, not ignored) files of the working tree, as a clone has them."""
    ls = subprocess.run(['git', '-C', SRC, 'ls-files', '-z', '--cached', '--others',
                         '--exclude-standard'], capture_output=True)
    if ls.returncode != 0:
        print('SKIP: %s is not a git checkout' % SRC)
        sys.exit(77)
    for rel in sorted(set(ls.stdout.decode().split('\0')) - {''}):
        src = os.path.join(SRC, rel)
        if not os.path.lexists(src):
            continue  # deleted in the working tree
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel), follow_symlinks=False)
    os.symlink(os.path.abspath(BUILD), os.path.join(dst, 'build'))


def blocks(path):
    with open(path) as f:
        text = f.read()
    return [(m.group(1) or '', m.group(2)) for m in BLOCK.finditer(text)]


def private_namespace():
    """unshare arguments for a mount namespace of our own, or [] where that is not possible."""
    if os.geteuid() != 0 or shutil.which('unshare') is None:
        return []
    if subprocess.run(['unshare', '--mount', 'true'], capture_output=True).returncode != 0:
        return []
    return ['unshare', '--mount', '--propagation', 'private']


def run_readme(clone):
    script = ['set -euo pipefail']
    for marker, body in blocks(os.path.join(clone, 'README.md')):
        if not marker.startswith(NOT_RUN):
            script.append(body)
    wrapper = ('mkdir -p /tmp/tickplane-demo && mount -t tmpfs tmpfs /dev/shm && '
               'mount -t tmpfs tmpfs /tmp/tickplane-demo && exec bash "$0"')
    path = os.path.join(clone, '.readme-commands.sh')
    with open(path, 'w') as f:
        f.write('\n'.join(script) + '\n')
    ns = private_namespace()
    cmd = ns + ['sh', '-c', wrapper, path] if ns else ['bash', path]
    p = subprocess.Popen(cmd, cwd=clone, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True, text=True)
    try:
        out, _ = p.communicate(timeout=README_BOUND_S)
    except subprocess.TimeoutExpired:
        out = ''
        fail("README commands still running after %d s" % README_BOUND_S)
    finally:
        try:  # a daemon a failed command left behind
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    if p.returncode != 0:
        print(out[-6000:])
        fail('README commands exited %d' % p.returncode)
        return
    expect = [
        ('the config check', r'configs/demo\.json: valid \('),
        ("AAAA's current state", r'(?m)^AAAA +bid +\d+ @ \d+\.\d{2,} +ask +\d+ @ \d+\.\d{2,} \(snapshot\)$'),
        ("AAAB's current state", r'(?m)^AAAB +bid .*\(snapshot\)$'),
        ('the consumers ran to their time', r'summary: stopped by time'),
        ("tickplanectl's book", r'(?m)^AAAA \(NASDAQ\)'),
        ('the instruments list', r'(?m)^NASDAQ +AAAB$'),
        ('the environment-variable consumer and the glob', r'(?m)^  AA\* +matched [1-9]\d* instruments$'),
        ('the consumer built with the build tree\'s pkg-config file', r'usage: tickplane-top \[--dir'),
    ]
    for what, pattern in expect:
        if not re.search(pattern, out):
            fail('README: %s not seen (%s)' % (what, pattern))
    if failures:
        print(out[-6000:])


def help_text(clone, program, cache={}):
    if program not in cache:
        exe = os.path.join(clone, 'build', PROGRAMS[program])
        r = subprocess.run([exe, '--help'], capture_output=True, text=True, timeout=30)
        cache[program] = r.stdout + r.stderr
    return cache[program]


def check_block(clone, doc, body):
    for line in body.replace('\\\n', ' ').splitlines():
        line = line.split(' #')[0]
        # `ninja -C build TARGET`: the targets are the build's files.
        top = 'build' if re.match(r'\s*ninja -C build\b', line) else ''
        for p in TREE_PATH.findall(line):
            if p != 'build' and not os.path.exists(os.path.join(clone, top, p)):
                fail('%s: %s does not exist (in: %s)' % (doc, p, line.strip()))
        words = line.split()
        for i, w in enumerate(words):
            name = os.path.basename(w)
            if name not in PROGRAMS or (w != name and not w.startswith('build/')):
                continue
            usage = help_text(clone, name)
            for opt in words[i + 1:]:
                if opt in ('|', '&&', ';', '>', '&'):
                    break
                opt = opt.split('=')[0]
                if opt.startswith('--') and not re.search(re.escape(opt) + r'\b', usage):
                    fail('%s: %s has no option %s (in: %s)' % (doc, name, opt, line.strip()))


def main():
    with tempfile.TemporaryDirectory(prefix='tp-docs-') as clone:
        fresh_copy(clone)
        run_readme(clone)
        docs = sorted(os.path.join(d, f) for d, _, fs in os.walk(clone)
                      if '/.' not in d and not d.startswith(os.path.join(clone, 'build'))
                      for f in fs if f.endswith('.md'))
        checked = 0
        for doc in docs:
            for _, body in blocks(doc):
                check_block(clone, os.path.relpath(doc, clone), body)
                checked += 1
        print('%d documents, %d command blocks checked' % (len(docs), checked))
    if failures:
        return 1
    print('ok: the README runs as written, the documents name what exists')
    return 0


if __name__ == '__main__':
    sys.exit(main())
