#!/usr/bin/env bash
# Measures the cost of capturing system calls, side by side in one run:
#   workloads: a getpid loop (bench/getpid_loop.c), dd bs=1 (400k read/write calls),
#              /usr/bin/python3 -c pass (startup: mmap, openat, stat, ...)
#   variants:  native, strata run --ext null, strata run --ext count -o /dev/null,
#              strace -f -c -o /dev/null
# Variants are interleaved round by round; the report gives medians, ns per getpid
# call and ratios to native, and is written to bench/results/<date>-capture.md.
#
# Usage: bench/run.sh [--reps N] [--getpid-n N] [--no-strace] [--out FILE]
#   STRATA=/path/to/strata overrides target/release/strata.
# See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

# The exact command line, for the report (with the STRATA override if one was given).
cmd="bench/run.sh"
for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
if [ -n "${STRATA:-}" ]; then cmd="STRATA=$(printf '%q' "$STRATA") $cmd"; fi

build="$(mktemp -d "${TMPDIR:-/tmp}/strata-bench.XXXXXX")"
trap 'rm -rf "$build"' EXIT
gcc -O2 -Wall -o "$build/getpid_loop" "$here/getpid_loop.c"
gcc -O2 -Wall -o "$build/sud_floor" "$here/sud_floor.c"

python3 "$here/capture.py" \
    --root "$root" \
    --strata "${STRATA:-$root/target/release/strata}" \
    --getpid-loop "$build/getpid_loop" \
    --sud-floor "$build/sud_floor" \
    --command "$cmd" \
    "$@"
