#!/usr/bin/env bash
# What catching calls costs, with and without a sandbox policy: a getpid loop (bench/getpid_libc.c,
# a call nothing of strata wants), an mprotect loop (bench/mprotect_loop.c, a call strata's
# bottom handles) and an open loop (bench/open_loop.c: open and close a file, calls a policy's
# layer and its Landlock ruleset look at; per open and close) natively, under `strata run --` and under
# `strata run --policy bench/policies/build.toml --` for each strata build given (default
# target/release/strata); and bench/seccomp_on.c's floors for getpid (a seccomp filter, Syscall
# User Dispatch, both, a filter whose getpid verdict depends on the address). Rounds interleaved,
# pinned with `taskset -c 1`; CPU time of the process tree from `perf stat` (task-clock), N
# calls minus 0 calls, per call; medians over the rounds. Needs `perf` (software events).
#
# Usage: bench/capture-cost.sh [--rounds R] [--calls N] [STRATA...]
#   e.g. bench/capture-cost.sh /tmp/old/target/release/strata target/release/strata
set -euo pipefail
rounds=9 calls=3000000
builds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --calls) calls="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) builds+=("$1"); shift ;;
    esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/lib.sh"
default_builds
for i in "${!builds[@]}"; do builds[$i]="$(realpath "${builds[$i]}")"; done # (it runs elsewhere)
command -v perf >/dev/null || { echo "capture-cost.sh: perf is needed" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/getpid_libc" "$root/bench/getpid_libc.c"
gcc -O2 -o "$tmp/seccomp_on" "$root/bench/seccomp_on.c"
gcc -O2 -o "$tmp/mprotect_loop" "$root/bench/mprotect_loop.c"
gcc -O2 -o "$tmp/open_loop" "$root/bench/open_loop.c"
# build.toml's relative prefixes (./out) are relative to where strata runs.
mkdir -p "$tmp/out"
cd "$tmp"
policy="$root/bench/policies/build.toml"
ms() { cpu_faults "$@" | awk '{print $1}'; } # CPU ms of one run
declare -A per names
configs=(native floor-filter floor-dispatch floor-both floor-ip)
names[native]="getpid: native"
for m in filter dispatch both ip; do names[floor-$m]="getpid: seccomp_on $m (no strata)"; done
for i in "${!builds[@]}"; do
    configs+=("b$i" "b$i-policy")
    names[b$i]="getpid: ${builds[$i]} run --"
    names[b$i-policy]="getpid: ${builds[$i]} run --policy build.toml --"
done
for loop in mp:mprotect op:open+close; do # PREFIX:NAME of the other loops
    p=${loop%%:*} what=${loop#*:}
    configs+=("$p-native")
    names[$p-native]="$what: native"
    for i in "${!builds[@]}"; do
        configs+=("$p-b$i" "$p-b$i-policy")
        names[$p-b$i]="$what: ${builds[$i]} run --"
        names[$p-b$i-policy]="$what: ${builds[$i]} run --policy build.toml --"
    done
done
cmd() { # CONFIG N -> the command line
    local loop=./getpid_libc c=$1
    case "$c" in mp-*) loop=./mprotect_loop; c=${c#mp-} ;; op-*) loop=./open_loop; c=${c#op-} ;; esac
    case "$c" in
        native) echo "$loop $2" ;;
        floor-*) echo "./seccomp_on ${c#floor-} $2" ;;
        b*-policy) local i=${c#b}; i=${i%-policy}; echo "${builds[$i]} run --policy $policy -- $loop $2" ;;
        b*) echo "${builds[${c#b}]} run -- $loop $2" ;;
    esac
}
for c in "${configs[@]}"; do $(cmd "$c" 1000) >/dev/null 2>&1; done # (site caches, images)
for _ in $(seq "$rounds"); do
    for c in "${configs[@]}"; do
        n=$calls
        case "$c" in mp-*) n=$((calls / 10)) ;; op-*) n=$((calls / 20)) ;; esac # (natively a getpid is ~150 ns, an mprotect ~1.8 us, an open and close ~2.3 us)
        # shellcheck disable=SC2046
        t1=$(ms $(cmd "$c" "$n")); t0=$(ms $(cmd "$c" 0))
        per[$c]+="$(awk -v a="$t1" -v b="$t0" -v n="$n" 'BEGIN{printf "%.2f", (a-b)*1e6/n}') "
    done
done
echo "bench/capture-cost.sh: $rounds interleaved rounds, $calls getpid calls, $((calls / 10)) mprotect calls, $((calls / 20)) opens and closes; CPU ns per call (per open and close; medians), added over the same loop natively"
printf '%-80s %12s %12s\n' configuration "ns per call" "added"
for c in "${configs[@]}"; do
    v=$(echo "${per[$c]}" | median)
    case "$c" in
        mp-*) nat=$(echo "${per[mp-native]}" | median) ;;
        op-*) nat=$(echo "${per[op-native]}" | median) ;;
        *) nat=$(echo "${per[native]}" | median) ;;
    esac
    printf '%-80s %12.1f %+12.1f\n' "${names[$c]}" "$v" "$(awk -v a="$v" -v b="$nat" 'BEGIN{print a-b}')"
done
