#!/bin/sh
# Builds the Debian package with deploy/debian/build-deb.sh and checks what it holds
# (dpkg-deb -I / -c): metadata, dependencies, conffiles, maintainer scripts, every file the
# appliance needs at its Debian path, and the checksums.
#   test_deb.sh SOURCE_ROOT WORK_DIR
set -eu
src=$1
work=$2

fail() {
    echo "FAIL: $*"
    exit 1
}

for tool in dpkg-deb dpkg-shlibdeps; do
    command -v $tool >/dev/null || { echo "SKIP: $tool not installed (apt-get install dpkg-dev)"; exit 77; }
done

mkdir -p "$work/out"
rm -f "$work/out"/*.deb
BUILD_DIR="$work/build" sh "$src/deploy/debian/build-deb.sh" "$work/out" >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log"; fail "build-deb.sh failed"; }
deb=$(tail -n 1 "$work/build.log")
[ -f "$deb" ] || fail "no package built ($deb)"
echo "built $deb"

info=$(dpkg-deb -I "$deb")
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = tickplane ] || fail "Package: $(field Package)"
version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)
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
echo "ok: $(echo "$contents" | wc -l) entries"
