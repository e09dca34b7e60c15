#!/usr/bin/env bash
# Measures the fast path (rewritten syscall sites, docs/design/fast-path.md §13), side by
# side in one run (bench/fast.py):
#   1. getpid loops (getpid() and syscall(3)): native, --rewrite=off --ext null, --ext null,
#      null ×4 and ×16 (slope per layer), calls no layer wants (--ext map:/tmp=/tmp and no
#      layer: getpid() skips strata through a native trampoline, syscall(3) enters strata),
#      the short-circuit --ext ids (getpid served in-process); ns per call
#   2. tracing every call of dd bs=1: native, --trace -o FILE (and with --rewrite=off),
#      strace -f -o FILE
#   3. python3 -c pass: native, --ext null, --rewrite=off --ext null, no layer
#   4. trap share of real programs (ls, tar cz, python3, bash, gcc, dd, node, java when
#      installed) from one --fast-stats run each (n/a without the flag)
#   5. floors: bench/sud_on.c (the dispatch-on floor: getpid with Syscall User Dispatch on,
#      nothing trapping), bench/rsb_depth.c (getpid at call depth 0/4/8), bench/sud_floor.c
#      (a trap round trip), bench/fast_floor.c (flags, xmm, fxsave/xsave save and restore)
# Every command is pinned with `taskset -c 1` (--cpu N or none to change that). Writes
# bench/results/<date>-fastpath.md. About 4-5 minutes on 2 cores with a working fast path
# (the getpid rounds are 2.5 of them, strace's dd runs most of the dd minute); much longer on
# a build where every call traps.
#
# Usage: bench/run-fast.sh [--only getpid,dd,python,share,floor] [--getpid-n N]
#            [--getpid-rounds N] [--dd-rounds N] [--python-rounds N] [--floor-runs N] [--cpu N|none]
#            [--timer auto|hyperfine|python] [--out FILE]
#   STRATA=/path/to/strata overrides target/release/strata.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

# The exact command line, for the report (with the STRATA override if one was given).
cmd="bench/run-fast.sh"
for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
if [ -n "${STRATA:-}" ]; then cmd="STRATA=$(printf '%q' "$STRATA") $cmd"; fi

exec python3 "$here/fast.py" \
    --root "$root" \
    --strata "${STRATA:-$root/target/release/strata}" \
    --command "$cmd" \
    "$@"
