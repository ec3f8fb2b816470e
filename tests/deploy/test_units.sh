#!/bin/sh
# The systemd units: `systemd-analyze verify` on the generated tickplane.service and an instance
# of tickplane@.service, inside a staging root that holds the commands they run, plus checks of
# the settings the appliance depends on. A unit with a broken directive must make verify fail
# (so this test can fail).
#   test_units.sh BUILD_DEPLOY_DIR BINDIR TUNEDIR
# Exit 77 (skipped) when systemd-analyze is not installed.
set -eu
build=$1
bindir=$2
tunedir=$3

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "SKIP: systemd-analyze is not installed (apt-get install systemd)"
    exit 77
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# The root verify resolves everything in: the system's own units (targets the units order
# against), /bin/kill for ExecReload, and our commands at their install paths.
mkdir -p "$stage/usr/lib/systemd" "$stage/etc/systemd/system" "$stage/bin" \
         "$stage$bindir" "$stage$tunedir"
cp -r /usr/lib/systemd/system "$stage/usr/lib/systemd/"
cp /bin/kill "$stage/bin/"
cp "$build/tickplane-doctor" "$stage$bindir/"
cp "$build/reserve-hugepages.sh" "$stage$tunedir/"
chmod +x "$stage$tunedir/reserve-hugepages.sh" # install_mode applies at install time only
if [ -x "$build/../dataplane/daemon/tickplane" ]; then
    cp "$build/../dataplane/daemon/tickplane" "$stage$bindir/"
else
    # The daemon is built by dataplane/daemon; until it exists verify checks the path only.
    echo "note: daemon not built yet, a placeholder stands at $bindir/tickplane"
    printf '#!/bin/sh\nexit 1\n' >"$stage$bindir/tickplane"
    chmod +x "$stage$bindir/tickplane"
fi
cp "$build/tickplane.service" "$build/tickplane@.service" "$stage/etc/systemd/system/"

fail() {
    echo "FAIL: $*"
    exit 1
}

verify() {
    out=$(systemd-analyze --man=no verify --root="$stage" "$1" 2>&1) || fail "verify $1: $out"
    [ -z "$out" ] || fail "verify $1 complains: $out"
    echo "ok: systemd-analyze verify $1"
}

verify tickplane.service
verify tickplane@chicago.service

# The settings the appliance relies on, in both units.
for unit in "$build/tickplane.service" "$build/tickplane@.service"; do
    for want in 'User=tickplane' \
                'AmbientCapabilities=CAP_IPC_LOCK CAP_NET_ADMIN CAP_NET_RAW CAP_SYS_RAWIO' \
                'LimitMEMLOCK=infinity' 'CPUAffinity=0' 'Restart=on-failure' \
                "ExecStartPre=+$tunedir/reserve-hugepages.sh --config \${TICKPLANE_CONFIG}" \
                "ExecStartPre=-$bindir/tickplane-doctor --config \${TICKPLANE_CONFIG} --problems" \
                "ExecStart=$bindir/tickplane --config \${TICKPLANE_CONFIG}"; do
        grep -qF "$want" "$unit" || fail "$(basename "$unit") lacks '$want'"
    done
done
grep -q '^Environment=TICKPLANE_CONFIG=.*/tickplane/%i.json$' "$build/tickplane@.service" ||
    fail "the template does not take its config from the instance name"
grep -qx 'RuntimeDirectory=tickplane' "$build/tickplane.service" || fail "runtime directory"
grep -qx 'RuntimeDirectory=tickplane/%i' "$build/tickplane@.service" ||
    fail "template instances must not share (and remove) one runtime directory"

# verify must catch a broken unit, or the checks above prove nothing.
sed 's/^LimitMEMLOCK=infinity/LimitMEMLOCK=lots/' "$build/tickplane.service" \
    >"$stage/etc/systemd/system/broken.service"
if systemd-analyze --man=no verify --root="$stage" broken.service >/dev/null 2>&1 &&
   [ -z "$(systemd-analyze --man=no verify --root="$stage" broken.service 2>&1)" ]; then
    fail "verify accepted LimitMEMLOCK=lots"
fi
echo "ok: a broken unit is reported"
