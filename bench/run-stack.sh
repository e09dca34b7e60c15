#!/usr/bin/env bash
# Measures the cost of the extension stack, side by side in one run (bench/stack.py):
#   1. per-layer cost: getpid loop natively and under 0, 1, 4, 16 `--ext null` layers
#   2. tracing every call of dd bs=1: strata --trace against strace -f (with and
#      without --seccomp-bpf), also pinned to one CPU (taskset)
#   3. path mapping: an import-heavy python3 and `tar cf /dev/null` through
#      `--map` against proot -b (installed with apt-get when missing, if possible),
#      also pinned to one CPU
#   4. composition: --trace + --map as two layers against a monolithic tracemap layer
#      (a placeholder row while strata has none)
# Writes bench/results/<date>-stack.md. About 8 minutes on 2 cores, most of it unpinned strace.
#
# Usage: bench/run-stack.sh [--only 1,2,3,4] [--getpid-n N] [--layer-rounds N]
#            [--trace-rounds N] [--strace-free-rounds N] [--map-rounds N] [--tree-copies N] [--tracemap SPEC]
#            [--timer auto|hyperfine|python] [--out FILE]
#   STRATA=/path/to/strata overrides target/release/strata.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

# The exact command line, for the report (with the STRATA override if one was given).
cmd="bench/run-stack.sh"
for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
if [ -n "${STRATA:-}" ]; then cmd="STRATA=$(printf '%q' "$STRATA") $cmd"; fi

if ! command -v proot >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y proot >/dev/null 2>&1 || echo "run-stack.sh: apt-get install proot failed; proot rows will be n/a" >&2
fi

exec python3 "$here/stack.py" \
    --root "$root" \
    --strata "${STRATA:-$root/target/release/strata}" \
    --command "$cmd" \
    "$@"
