#!/usr/bin/env bash
# What strata adds to a handled signal: bench/signal_loop.c sends itself
# SIGUSR1 N times (default 20000), natively and under each strata build given
# (default target/release/strata), rounds interleaved, pinned with
# `taskset -c 1`. Prints, per configuration, the median CPU time per signal
# (delivery, handler, rt_sigreturn) and what each adds over native.
#
# Usage: bench/signal-cost.sh [--rounds R] [--signals N] [STRATA...]
set -euo pipefail
rounds=7 n=20000
builds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --signals) n="$2"; shift 2 ;;
        -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
        *) builds+=("$1"); shift ;;
    esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/lib.sh"
default_builds
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -o "$tmp/signal_loop" "$root/bench/signal_loop.c"
declare -A ns
for r in $(seq "$rounds"); do
    ns[native]+="$(taskset -c 1 "$tmp/signal_loop" "$n") "
    for b in "${builds[@]}"; do
        ns[$b]+="$(taskset -c 1 "$b" run -- "$tmp/signal_loop" "$n") "
    done
done
nat=$(echo "${ns[native]}" | median)
echo "bench/signal-cost.sh: SIGUSR1 to itself x $n, $rounds interleaved rounds, medians"
printf '%-50s %14s %16s %10s\n' configuration "ns per signal" "added per signal" ratio
printf '%-50s %14.0f %16s %10s\n' native "$nat" "" ""
for b in "${builds[@]}"; do
    m=$(echo "${ns[$b]}" | median)
    awk -v n="$b run --" -v m="$m" -v nat="$nat" 'BEGIN{printf "%-50s %14.0f %+16.0f %9.2fx\n", n, m, m-nat, m/nat}'
done
