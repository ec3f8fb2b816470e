#!/usr/bin/env bash
# The books_floor benchmark: bench_books_floor over the 5 M-message ITCH day (2000 symbols,
# seed 1), which is made here on first use and kept in DIR (157 MB), not by the build. A file
# older than the simulator is made again.
# usage: floor.sh SIM BENCH_BOOKS_FLOOR DIR [bench_books_floor options...]
set -euo pipefail
sim=$1 floor=$2 dir=$3
shift 3
file="$dir/itch-5m-2000.bin"
mkdir -p "$dir"
if [ ! -e "$file" ] || [ "$sim" -nt "$file" ]; then
    "$sim" itch --seed 1 --symbols 2000 --messages 5000000 --binaryfile "$file.part" >&2
    mv "$file.part" "$file"
fi
exec "$floor" "$@" "$file"
