#!/usr/bin/env bash
# What one `strata run` costs: `strata run -- /bin/true`, natively and under each strata
# build given (default target/release/strata), rounds interleaved, pinned with
# `taskset -c 1`. Each round runs each configuration N times (default 30) under
# `perf stat -r N` and takes its mean CPU time (task-clock: launcher, runtime and program)
# and page faults; the table shows the medians over the rounds and what each adds over
# native. Two unrecorded runs per build come first, so that what a build keeps across runs
# (the site cache, text images) is in place, as for a user's second run. Needs `perf`
# (software events only).
#
# Usage: bench/start-cost.sh [--rounds R] [--runs N] [STRATA...]
#   e.g. bench/start-cost.sh /tmp/old/target/release/strata target/release/strata
set -euo pipefail
rounds=7 runs=30
builds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) builds+=("$1"); shift ;;
    esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/lib.sh"
default_builds
command -v perf >/dev/null || { echo "start-cost.sh: perf is needed" >&2; exit 2; }
one() { # prints "ms faults": the means of N runs of /bin/true under "$@"
    cpu_faults -r "$runs" "$@" /bin/true
}
for b in "${builds[@]}"; do "$b" run -- /bin/true; "$b" run -- /bin/true; done
declare -A ms faults
names=(native)
for b in "${builds[@]}"; do names+=("$b run --"); done
for _ in $(seq "$rounds"); do
    read -r t f < <(one)
    ms[native]+="$t "; faults[native]+="$f "
    for b in "${builds[@]}"; do
        read -r t f < <(one "$b" run --)
        ms[$b run --]+="$t "; faults[$b run --]+="$f "
    done
done
echo "bench/start-cost.sh: strata run -- /bin/true, $rounds interleaved rounds of $runs runs, medians of the rounds' means"
cost_table run 1 ms faults
