#!/bin/sh
# Builds tickplane's Debian packages from the source tree:
#
#   deploy/debian/build-deb.sh [OUTPUT_DIR]        (default: the top of the tree)
#
# Configures a release build with Debian paths (BUILD_DIR, default build-deb), installs it into
# a staging directory with `meson install --destdir` and splits it into three packages:
#   tickplane         the daemon, the tools and their manual pages, units, scripts, configs;
#   libtickplane0     the shared library (its shlibs and symbols files, the ldconfig trigger);
#   libtickplane-dev  the header, the static library, the .so link and the pkg-config file.
# Each gets the copyright file and the changelog (deploy/debian/changelog, whose version must be
# meson's), md5sums, and Depends from dpkg-shlibdeps; dpkg-deb packs them. No root needed.
# Prints the path of each package built. Install with: apt install ./tickplane_<version>_<arch>.deb
# ./libtickplane0_... (or dpkg -i).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top}
build=${BUILD_DIR:-$top/build-deb}
case $build in /*) ;; *) build=$top/$build ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

for tool in meson ninja dpkg-deb dpkg-shlibdeps dpkg-gensymbols dpkg-architecture python3; do
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
work=$(mktemp -d)
trap 'rm -rf "$stage" "$work"' EXIT
meson install -C "$build" --destdir "$stage" --no-rebuild --strip >/dev/null

version=$(meson introspect --projectinfo "$build" |
          python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
changelog_version=$(sed -n '1s/^tickplane (\([^)]*\)).*/\1/p' "$here/changelog")
[ "$changelog_version" = "$version" ] || {
    echo "build-deb: deploy/debian/changelog is at $changelog_version, meson at $version" >&2
    exit 1
}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=usr/lib/$multiarch
soname=$(objdump -p "$stage/$libdir/libtickplane.so" | sed -n 's/^ *SONAME *//p')
[ "$soname" = libtickplane.so.0 ] || { echo "build-deb: libtickplane's soname is $soname" >&2; exit 1; }

# The split: the library's files, the development files, and everything else for tickplane.
move() { # package path...
    pkg=$1
    shift
    for p in "$@"; do
        mkdir -p "$work/$pkg/$(dirname "$p")"
        mv "$stage/$p" "$work/$pkg/$p"
    done
}
move libtickplane0 "$libdir/$soname" "$libdir/$(readlink "$stage/$libdir/$soname")"
move libtickplane-dev usr/include "$libdir/libtickplane.so" "$libdir/libtickplane.a" \
    "$libdir/pkgconfig"
rmdir "$stage/$libdir" "$stage/usr/lib" 2>/dev/null || true
mv "$stage" "$work/tickplane"
mkdir "$stage"
find "$work/libtickplane0/$libdir" -type f -exec chmod 0644 {} + # a library is not a program
printf 'libtickplane 0 libtickplane0 (>= %s)\n' "$version" >"$work/shlibs"

# Shared-library dependencies of a package's ELF files (dpkg-shlibdeps wants a debian/control
# beside it; a minimal one in a scratch dir does).
mkdir -p "$work/shl/debian"
printf 'Source: tickplane\n\nPackage: tickplane\nArchitecture: any\n' >"$work/shl/debian/control"
cp "$work/shlibs" "$work/shl/debian/shlibs.local"
shlibs_of() { # root
    elves=$(find "$1" -type f -exec sh -c 'head -c 4 "$1" | grep -q "ELF"' _ {} \; -print)
    [ -n "$elves" ] || return 0
    # shellcheck disable=SC2086
    (cd "$work/shl" && dpkg-shlibdeps -O -l"$work/libtickplane0/$libdir" $elves \
         2>"$work/shl/warnings" | sed -n 's/^shlibs:Depends=//p') || {
        cat "$work/shl/warnings" >&2
        exit 1
    }
    grep -v "should already be installed" "$work/shl/warnings" >&2 || true
}

# One control stanza of control.in.
stanza() { # package
    awk -v pkg="$1" 'BEGIN { RS = ""; ORS = "\n" } $0 ~ "^Package: " pkg "\n" { print }' \
        "$here/control.in"
}

for pkg in tickplane libtickplane0 libtickplane-dev; do
    root=$work/$pkg
    chmod 0755 "$root"
    docdir="$root/usr/share/doc/$pkg"
    mkdir -p "$docdir" "$root/DEBIAN"
    install -m 0644 "$here/copyright" "$docdir/copyright"
    gzip -9n <"$here/changelog" >"$docdir/changelog.gz" # a native package's changelog
    chmod 0644 "$docdir/changelog.gz"
    find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9nf {} + 2>/dev/null || true
    shlibs=$(shlibs_of "$root")
    installed_kb=$(du -sk "$root" | cut -f1)
    # DPDK loads its drivers as plugins, which dpkg-shlibdeps cannot see: the mempool ring and
    # the virtual devices tickplane uses are required, NIC drivers and dpdk-devbind.py
    # recommended.
    stanza "$pkg" | sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" \
        -e "s/@INSTALLED_KB@/$installed_kb/" -e "s/@SHLIBS@\$/$shlibs/" \
        -e "s/@SHLIBS@/${shlibs:+$shlibs, }/" >"$root/DEBIAN/control"
    (cd "$root" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort |
         xargs md5sum) >"$root/DEBIAN/md5sums"
done

for script in postinst prerm postrm; do
    install -m 0755 "$here/$script" "$work/tickplane/DEBIAN/$script"
done
# Every file under /etc is a conffile: an upgrade keeps the operator's edits.
(cd "$work/tickplane" && find etc -type f 2>/dev/null | sed 's|^|/|' | sort) \
    >"$work/tickplane/DEBIAN/conffiles"
[ -s "$work/tickplane/DEBIAN/conffiles" ] || rm "$work/tickplane/DEBIAN/conffiles"
install -m 0644 "$work/shlibs" "$work/libtickplane0/DEBIAN/shlibs"
# The library's symbols: the built library must export exactly what libtickplane0.symbols lists
# (-c4: a symbol added or lost fails the build; client/libtickplane.map decides the exports).
(cd "$work/shl" && dpkg-gensymbols -plibtickplane0 -v"$version" -P"$work/libtickplane0" \
     -e"$work/libtickplane0/$libdir/$soname" -I"$here/libtickplane0.symbols" \
     -O"$work/libtickplane0/DEBIAN/symbols" -c4 >&2) ||
    { echo "build-deb: libtickplane's exports differ from libtickplane0.symbols" >&2; exit 1; }
chmod 0644 "$work/libtickplane0/DEBIAN/symbols"
echo "activate-noawait ldconfig" >"$work/libtickplane0/DEBIAN/triggers"
chmod 0644 "$work/libtickplane0/DEBIAN/triggers"

for pkg in tickplane libtickplane0 libtickplane-dev; do
    deb="$out/${pkg}_${version}_${arch}.deb"
    dpkg-deb --root-owner-group -Zxz --build "$work/$pkg" "$deb" >/dev/null
    echo "$deb"
done
