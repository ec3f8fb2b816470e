#!/bin/sh
# Builds the Debian packages with deploy/debian/build-deb.sh and checks them: lintian reports no
# error; tickplane's metadata, dependencies, conffiles, maintainer scripts, a manual page for
# every program and every file the appliance needs at its Debian path; libtickplane0's shared
# library (not executable), shlibs and ldconfig trigger; libtickplane-dev's header, static
# library and pkg-config file, with which a consumer compiles and links; the checksums.
#   test_deb.sh SOURCE_ROOT WORK_DIR
set -eu
src=$1
work=$2

fail() {
    echo "FAIL: $*"
    exit 1
}

for tool in dpkg-deb dpkg-shlibdeps lintian help2man; do
    command -v $tool >/dev/null || fail "$tool is not installed (bash deploy/install-deps.sh)"
done

mkdir -p "$work/out"
rm -f "$work/out"/*.deb
BUILD_DIR="$work/build" sh "$src/deploy/debian/build-deb.sh" "$work/out" >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log"; fail "build-deb.sh failed"; }
version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)
arch=$(dpkg --print-architecture)
deb=$work/out/tickplane_${version}_${arch}.deb
lib=$work/out/libtickplane0_${version}_${arch}.deb
dev=$work/out/libtickplane-dev_${version}_${arch}.deb
for d in "$deb" "$lib" "$dev"; do
    grep -qx "$d" "$work/build.log" || fail "build-deb.sh did not build $d"
done
echo "built $deb $lib $dev"

# Errors fail the test; warnings are printed. Exit status 1 is "errors found", more is lintian's
# own failure.
rc=0
lintian --tag-display-limit 0 "$deb" "$lib" "$dev" >"$work/lintian.log" 2>&1 || rc=$?
grep -v '^running with root' "$work/lintian.log" || true
[ $rc -le 1 ] || fail "lintian failed (exit status $rc)"
if [ $rc -eq 1 ] || grep -q '^E: ' "$work/lintian.log"; then
    fail "lintian reports errors"
fi

info=$(dpkg-deb -I "$deb")
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = tickplane ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version $(field Version), meson says $version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture $(field Architecture)"
for dep in adduser libjansson4 libc6 librte-mempool-ring23 librte-net-pcap23; do
    field Depends | grep -q "$dep" || fail "Depends lacks $dep: $(field Depends)"
done
for script in postinst prerm postrm conffiles md5sums; do
    echo "$info" | grep -q " $script" || fail "no $script in the control archive"
done

ctl=$(mktemp -d)
trap 'rm -rf "$ctl"' EXIT
dpkg-deb -e "$deb" "$ctl/DEBIAN"
grep -qx /etc/tickplane/tickplane.json "$ctl/DEBIAN/conffiles" || fail "conffiles: $(cat "$ctl/DEBIAN/conffiles")"
for script in postinst prerm postrm; do
    sh -n "$ctl/DEBIAN/$script" || fail "$script is not valid sh"
done
grep -q "adduser --system" "$ctl/DEBIAN/postinst" || fail "postinst does not create the user"

contents=$(dpkg-deb -c "$deb")
has() { # mode-prefix path
    echo "$contents" | grep -q "^$1 .* \./$2\$" || fail "package lacks $2 ($1)"
}
for program in tickplane tickplanectl tickplane-doctor tickplane-top tickplane-dump \
    tickplane-replay tickplane-sim; do
    has '-rwxr-xr-x root/root' "usr/bin/$program"
    has '-rw-r--r-- root/root' "usr/share/man/man1/$program.1.gz"
done
has '-rw-r--r-- root/root' usr/share/doc/tickplane/changelog.gz
echo "$contents" | grep -q 'libtickplane\|usr/include' && fail "tickplane holds library files"
has 'drwxr-xr-x root/root' ''
has '-rwxr-xr-x root/root' usr/bin/tickplane-doctor
has '-rwxr-xr-x root/root' usr/libexec/tickplane/reserve-hugepages.sh
has '-rwxr-xr-x root/root' usr/libexec/tickplane/tune-host.sh
has '-rw-r--r-- root/root' usr/lib/systemd/system/tickplane.service
has '-rw-r--r-- root/root' usr/lib/systemd/system/tickplane@.service
has '-rw-r--r-- root/root' usr/lib/udev/rules.d/60-tickplane-vfio.rules
has '-rw-r--r-- root/root' usr/share/doc/tickplane/copyright
has '-rw-r--r-- root/root' etc/tickplane/tickplane.json
has '-rw-r--r-- root/root' usr/share/tickplane/configs/production.json
if [ -f "$src/dataplane/daemon/main.c" ]; then
    has '-rwxr-xr-x root/root' usr/bin/tickplane
fi
if [ -f "$src/docs/OPERATIONS.md" ]; then
    has '-rw-r--r-- root/root' usr/share/doc/tickplane/OPERATIONS.md
    has '-rw-r--r-- root/root' usr/share/doc/tickplane/CONFIG.md
fi

# The units point at Debian paths, and every file matches its checksum.
files=$(mktemp -d)
dpkg-deb -x "$deb" "$files"
grep -q '^ExecStart=/usr/bin/tickplane --config ${TICKPLANE_CONFIG}$' \
    "$files/usr/lib/systemd/system/tickplane.service" || fail "ExecStart path"
grep -q '^Environment=TICKPLANE_CONFIG=/etc/tickplane/%i.json$' \
    "$files/usr/lib/systemd/system/tickplane@.service" || fail "template config path"
grep -q 'doctor=${TICKPLANE_DOCTOR:-/usr/bin/tickplane-doctor}' \
    "$files/usr/libexec/tickplane/reserve-hugepages.sh" || fail "script's doctor path"
(cd "$files" && md5sum --quiet -c "$ctl/DEBIAN/md5sums") || fail "md5sums do not match"
rm -rf "$files"

# The library package: the shared library, not executable, its shlibs, symbols and the ldconfig
# trigger.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib_contents=$(dpkg-deb -c "$lib")
echo "$lib_contents" | grep -q "^-rw-r--r-- .* \./usr/lib/$multiarch/libtickplane\.so\.$version\$" ||
    fail "libtickplane0 lacks libtickplane.so.$version (0644): $lib_contents"
echo "$lib_contents" | grep -q "\./usr/lib/$multiarch/libtickplane\.so\.0 -> " ||
    fail "libtickplane0 lacks the soname link"
libctl=$(mktemp -d)
dpkg-deb -e "$lib" "$libctl"
grep -qx "libtickplane 0 libtickplane0 (>= $version)" "$libctl/shlibs" || fail "shlibs: $(cat "$libctl/shlibs")"
grep -qx "activate-noawait ldconfig" "$libctl/triggers" || fail "no ldconfig trigger"
grep -qx "libtickplane.so.0 libtickplane0 #MINVER#" "$libctl/symbols" || fail "no symbols file"
grep -q "^ tp_attach@LIBTICKPLANE_0 " "$libctl/symbols" || fail "symbols lacks tp_attach"
rm -rf "$libctl"
dpkg-deb -f "$dev" Depends | grep -q "libtickplane0 (= $version)" || fail "libtickplane-dev Depends"

# The development package: a consumer compiles and links with its pkg-config file alone.
root=$(mktemp -d)
trap 'rm -rf "$ctl" "$root"' EXIT
dpkg-deb -x "$lib" "$root"
dpkg-deb -x "$dev" "$root"
for f in usr/include/tickplane/tickplane.h "usr/lib/$multiarch/libtickplane.a" \
    "usr/lib/$multiarch/pkgconfig/libtickplane.pc"; do
    [ -f "$root/$f" ] || fail "libtickplane-dev lacks $f"
done
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$root/usr/lib/$multiarch/pkgconfig \
            pkg-config --cflags --libs libtickplane) || fail "pkg-config refuses libtickplane.pc"
# shellcheck disable=SC2086
cc -o "$root/top" "$src/client/examples/tickplane_top.c" $flags ||
    fail "a consumer does not build with: $flags"
LD_LIBRARY_PATH=$root/usr/lib/$multiarch "$root/top" --help | grep -q '^usage: tickplane-top' ||
    fail "the consumer does not run"
echo "ok: $(echo "$contents" | wc -l) entries in tickplane, a consumer built against libtickplane-dev"
