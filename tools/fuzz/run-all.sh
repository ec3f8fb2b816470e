#!/usr/bin/env bash
# Builds every libFuzzer target (clang, ASan+UBSan) and runs each for N seconds (default 30) on
# its seed corpus in tests/fuzz/corpus/<target>/. Any crash, leak or sanitizer report fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
build_dir=build-fuzz
if [ ! -f "$build_dir/build.ninja" ]; then
    # -Dfuzz=true also instruments every library for coverage (meson.build).
    CC=clang meson setup "$build_dir" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
fi
ninja -C "$build_dir"

mapfile -t targets < <(find "$build_dir" -maxdepth 5 -type f -executable -name 'fuzz_*' | sort)
if [ ${#targets[@]} -eq 0 ]; then
    echo "fuzz: no fuzz targets were built" >&2
    exit 1
fi
for target in "${targets[@]}"; do
    name=$(basename "$target")
    seeds=tests/fuzz/corpus/$name
    work=$(mktemp -d)
    [ -d "$seeds" ] && cp -r "$seeds"/. "$work"/
    echo "fuzz: $name for ${seconds}s ($(ls "$work" | wc -l) seeds)"
    UBSAN_OPTIONS=halt_on_error=1 "$target" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$build_dir/$name-" "$work" 2>"$build_dir/$name.log" ||
        { tail -50 "$build_dir/$name.log"; echo "fuzz: $name FAILED" >&2; exit 1; }
    grep -E '^stat::(number_of_executed_units|new_units_added)' "$build_dir/$name.log" |
        sed "s/^/fuzz: $name /" || true
    rm -rf "$work"
done
