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
    taskset -c 1 perf stat -r "$runs" -x, -e task-clock,minor-faults "$@" /bin/true 2>&1 >/dev/null |
        awk -F, '$3=="task-clock"{t=$1} $3=="minor-faults"{f=$1} END{print t, f}'
}
for b in "${builds[@]}"; do "$b" run -- /bin/true; "$b" run -- /bin/true; done
declare -A ms faults
for _ in $(seq "$rounds"); do
    read -r t f < <(one)
    ms[native]+="$t "; faults[native]+="$f "
    for b in "${builds[@]}"; do
        read -r t f < <(one "$b" run --)
        ms[$b]+="$t "; faults[$b]+="$f "
    done
done
nm=$(echo "${ms[native]}" | median); nf=$(echo "${faults[native]}" | median)
printf '%-50s %12s %14s %10s %14s\n' "strata run -- /bin/true" "CPU ms" "added ms" "faults" "added faults"
for n in native "${builds[@]}"; do
    m=$(echo "${ms[$n]}" | median); f=$(echo "${faults[$n]}" | median)
    awk -v n="$n" -v m="$m" -v f="$f" -v nm="$nm" -v nf="$nf" 'BEGIN{
        if (n == "native") printf "%-50s %12.3f %14s %10.1f %14s\n", n, m, "", f, "";
        else printf "%-50s %12.3f %+14.3f %10.1f %+14.1f\n", n, m, m-nm, f, f-nf }'
done
echo "($rounds rounds of $runs runs each; medians of the rounds' means)"
