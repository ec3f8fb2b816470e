#!/bin/sh
# libtickplane.so exports exactly the functions its public headers declare, all in the version
# node of its version script; the bus, views and control link inside it stay private.
#   test_exports.sh LIBTICKPLANE_SO VERSION_SCRIPT HEADER...
set -eu
lib=$1
map=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
    echo "test_exports: $*" >&2
    exit 1
}

node=$(sed -n 's/^\([A-Z0-9_]*\) {$/\1/p' "$map")
[ -n "$node" ] || fail "no version node in $map"
sed -n '/^global:/,/^local:/s/^ *\([a-z_][a-z0-9_]*\);$/\1/p' "$map" | sort >"$work/map"
[ -s "$work/map" ] || fail "no global symbols in $map"
cat "$@" | grep -o '\btp_[a-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | sort -u \
    >"$work/headers"
nm -D --defined-only "$lib" | awk '{print $3}' | grep -vx "$node" >"$work/exported.raw"
sed 's/@.*//' "$work/exported.raw" | sort >"$work/exported"

grep -v "@@$node\$" "$work/exported.raw" >"$work/unversioned" &&
    fail "exported outside $node: $(tr '\n' ' ' <"$work/unversioned")"
cmp -s "$work/map" "$work/headers" ||
    fail "version script vs headers: $(diff "$work/map" "$work/headers" | grep '^[<>]' | tr '\n' ' ')"
cmp -s "$work/exported" "$work/map" ||
    fail "exported vs version script: $(diff "$work/exported" "$work/map" | grep '^[<>]' | tr '\n' ' ')"
echo "test_exports: $(wc -l <"$work/exported") functions, all in $node"
