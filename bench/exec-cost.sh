#!/usr/bin/env bash
# What strata adds to starting a program: `sh -c` running /bin/true N times
# (default 300), natively and under each strata build given (default
# target/release/strata), rounds interleaved, pinned with `taskset -c 1`.
# Prints, per configuration, the median CPU time (perf stat task-clock, the
# whole process tree) and page faults per exec, and what each adds over
# native; then the same for a fork without exec (bench/fork_loop.c: fork, the
# child exits at once, wait; N times). Needs `perf` (software events only)
# and gcc.
#
# Usage: bench/exec-cost.sh [--rounds R] [--execs N] [STRATA...]
#   e.g. bench/exec-cost.sh /tmp/old/target/release/strata target/release/strata
set -euo pipefail
rounds=7 execs=300
builds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --execs) execs="$2"; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) builds+=("$1"); shift ;;
    esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/lib.sh"
default_builds
command -v perf >/dev/null || { echo "exec-cost.sh: perf is needed" >&2; exit 2; }
script="i=0; while [ \$i -lt $execs ]; do /bin/true; i=\$((i+1)); done"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -o "$tmp/fork_loop" "$root/bench/fork_loop.c"
one() { # prints "ms faults" for one run of the loop under "$@"
    cpu_faults "$@" /bin/sh -c "$script"
}
forks() { # the same for fork_loop
    cpu_faults "$@" "$tmp/fork_loop" "$execs"
}
declare -A ms faults fms ffaults
for r in $(seq "$rounds"); do
    read -r t f < <(one)
    ms[native]+="$t "; faults[native]+="$f "
    read -r t f < <(forks)
    fms[native]+="$t "; ffaults[native]+="$f "
    for b in "${builds[@]}"; do
        read -r t f < <(one "$b" run --)
        ms[$b]+="$t "; faults[$b]+="$f "
        read -r t f < <(forks "$b" run --)
        fms[$b]+="$t "; ffaults[$b]+="$f "
    done
done
echo "bench/exec-cost.sh: /bin/true x $execs under sh, $rounds interleaved rounds, medians"
cost_table exec "$execs" ms faults
echo
echo "bench/exec-cost.sh: fork_loop $execs (fork, the child exits, wait), same rounds, medians"
cost_table fork "$execs" fms ffaults
