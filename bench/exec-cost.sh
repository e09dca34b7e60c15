#!/usr/bin/env bash
# What strata adds to starting a program: `sh -c` running /bin/true N times
# (default 300), natively and under each strata build given (default
# target/release/strata), rounds interleaved, pinned with `taskset -c 1`.
# Prints, per configuration, the median CPU time (perf stat task-clock, the
# whole process tree) and page faults per exec, and what each adds over
# native; then the same for a fork without exec (bench/fork_loop.c: fork, the
# child exits at once, wait; N times), and for posix_spawn of /bin/true
# (bench/spawn_loop.c: how make and gcc start programs; N times). Needs
# `perf` (software events only) and gcc.
#
# With --policy FILE, each build also runs as `strata run --policy FILE --`
# (its own rows, in every table), and everything runs in a scratch
# directory that has an empty ./out (bench/policies/build.toml writes
# there). The loops run from the scratch directory under a policy too: its
# execute rules do not cover the program strata is started with
# (docs/policy.md); the programs that program starts (/bin/true) must be
# allowed.
#
# Usage: bench/exec-cost.sh [--rounds R] [--execs N] [--policy FILE] [STRATA...]
#   e.g. bench/exec-cost.sh /tmp/old/target/release/strata target/release/strata
#        bench/exec-cost.sh --policy bench/policies/build.toml
set -euo pipefail
rounds=7 execs=300 policy=
builds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --execs) execs="$2"; shift 2 ;;
        --policy) policy="$(realpath "$2" 2>/dev/null || echo "$2")"; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) builds+=("$1"); shift ;;
    esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/lib.sh"
default_builds
# Absolute: the runs happen in a scratch directory.
for i in "${!builds[@]}"; do builds[$i]="$(realpath "${builds[$i]}")"; done
command -v perf >/dev/null || { echo "exec-cost.sh: perf is needed" >&2; exit 2; }
script="i=0; while [ \$i -lt $execs ]; do /bin/true; i=\$((i+1)); done"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -o "$tmp/fork_loop" "$root/bench/fork_loop.c"
gcc -O2 -Wall -o "$tmp/spawn_loop" "$root/bench/spawn_loop.c"
mkdir "$tmp/out"
cd "$tmp"
if [ -n "$policy" ]; then
    for b in "${builds[@]}"; do
        "$b" run --policy "$policy" -- /bin/true ||
            { echo "exec-cost.sh: $b cannot run /bin/true under $policy" >&2; exit 2; }
    done
fi
forks() { cpu_faults "$@" "$tmp/fork_loop" "$execs"; }
fork_what="fork_loop $execs (fork, the child exits, wait)"
one() { # prints "ms faults" for one run of the loop under "$@"
    cpu_faults "$@" /bin/sh -c "$script"
}
# Configurations: a name and the strata command line before the program.
names=(native) cmds=("")
for b in "${builds[@]}"; do
    names+=("$b run --"); cmds+=("$b run --")
    [ -z "$policy" ] || { names+=("$b run --policy $(basename "$policy") --"); cmds+=("$b run --policy $policy --"); }
done
declare -A ms faults fms ffaults sms sfaults
for r in $(seq "$rounds"); do
    for i in "${!names[@]}"; do
        # shellcheck disable=SC2086 # the command line is words
        read -r t f < <(one ${cmds[$i]})
        ms[${names[$i]}]+="$t "; faults[${names[$i]}]+="$f "
        # shellcheck disable=SC2086
        read -r t f < <(forks ${cmds[$i]})
        fms[${names[$i]}]+="$t "; ffaults[${names[$i]}]+="$f "
        # shellcheck disable=SC2086
        read -r t f < <(cpu_faults ${cmds[$i]} "$tmp/spawn_loop" "$execs")
        sms[${names[$i]}]+="$t "; sfaults[${names[$i]}]+="$f "
    done
done
echo "bench/exec-cost.sh: /bin/true x $execs under sh, $rounds interleaved rounds, medians"
cost_table exec "$execs" ms faults
echo
echo "bench/exec-cost.sh: $fork_what, same rounds, medians"
cost_table fork "$execs" fms ffaults
echo
echo "bench/exec-cost.sh: spawn_loop $execs (posix_spawn of /bin/true, wait), same rounds, medians"
cost_table spawn "$execs" sms sfaults
