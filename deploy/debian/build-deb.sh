#!/bin/sh
# Builds the tickplane Debian package from the source tree:
#
#   deploy/debian/build-deb.sh [OUTPUT_DIR]        (default: the top of the tree)
#
# Configures a release build with Debian paths (BUILD_DIR, default build-deb), installs it into
# a staging directory with `meson install --destdir`, adds the maintainer scripts and a control
# file whose Depends come from dpkg-shlibdeps, and packs it with dpkg-deb. No root needed.
# Install with: apt install ./tickplane_<version>_<arch>.deb (or dpkg -i).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top}
build=${BUILD_DIR:-$top/build-deb}
case $build in /*) ;; *) build=$top/$build ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

for tool in meson ninja dpkg-deb dpkg-shlibdeps dpkg-architecture python3; do
    command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing (apt-get install dpkg-dev meson)" >&2; exit 1; }
done

if [ ! -f "$build/build.ninja" ]; then
    # -O2 as everywhere else in the project (debugoptimized); the debug info is stripped at
    # install. Debian paths: /usr, /etc, /var, /usr/libexec/tickplane for the helper scripts.
    meson setup "$build" "$top" --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
        --buildtype=debugoptimized
fi
# Only what gets installed (tests and benchmarks are not part of the package). Regenerate the
# build first, so the list of targets knows about files added since the last configure.
ninja -C "$build" build.ninja >/dev/null
targets=$(meson introspect --targets "$build" | python3 -c '
import json, os, sys
print(" ".join(os.path.relpath(f, sys.argv[1]) for t in json.load(sys.stdin) if t["installed"]
               for f in t["filename"]))' "$build")
# shellcheck disable=SC2086
ninja -C "$build" $targets

stage=$(mktemp -d)
shl=$(mktemp -d)
trap 'rm -rf "$stage" "$shl"' EXIT
meson install -C "$build" --destdir "$stage" --no-rebuild --strip >/dev/null

version=$(meson introspect --projectinfo "$build" |
          python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)

# Shared-library dependencies of every ELF file in the package (dpkg-shlibdeps wants a
# debian/control beside it; a minimal one in a scratch dir does).
mkdir -p "$shl/debian"
printf 'Source: tickplane\n\nPackage: tickplane\nArchitecture: any\n' >"$shl/debian/control"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
elves=$(find "$stage" -type f -exec sh -c 'head -c 4 "$1" | grep -q "ELF"' _ {} \; -print)
shlibs=
if [ -n "$elves" ]; then
    # Libraries of this package itself (libtickplane) have no shlibs info yet: ignored.
    # shellcheck disable=SC2086
    shlibs=$(cd "$shl" && dpkg-shlibdeps -O --ignore-missing-info -l"$stage/usr/lib/$multiarch" \
                 $elves 2>"$shl/warnings" | sed -n 's/^shlibs:Depends=//p') || {
        cat "$shl/warnings" >&2
        exit 1
    }
    grep -v "should already be installed" "$shl/warnings" >&2 || true
fi

chmod 0755 "$stage" # mktemp made it 0700; it becomes / on install
docdir="$stage/usr/share/doc/tickplane"
mkdir -p "$docdir" "$stage/DEBIAN"
install -m 0644 "$here/copyright" "$docdir/copyright"
installed_kb=$(du -sk "$stage" | cut -f1)
# DPDK loads its drivers as plugins, which dpkg-shlibdeps cannot see: the mempool ring and the
# virtual devices tickplane uses are required, NIC drivers and dpdk-devbind.py recommended.
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_KB@/$installed_kb/" \
    -e "s/@SHLIBS@/${shlibs:+$shlibs, }/" "$here/control.in" >"$stage/DEBIAN/control"
for script in postinst prerm postrm; do
    install -m 0755 "$here/$script" "$stage/DEBIAN/$script"
done
# Every file under /etc is a conffile: an upgrade keeps the operator's edits.
(cd "$stage" && find etc -type f 2>/dev/null | sed 's|^|/|' | sort) >"$stage/DEBIAN/conffiles"
[ -s "$stage/DEBIAN/conffiles" ] || rm "$stage/DEBIAN/conffiles"

(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort |
     xargs md5sum) >"$stage/DEBIAN/md5sums"

deb="$out/tickplane_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
