#!/usr/bin/env bash
# Instructions the policy layer spends at every process start (building the
# layer from the launcher's compiled text, which parses it, and computing its
# interest), counted by callgrind (repeatable here, unlike time):
# crates/cli/examples/policy_start_cost.rs does it N times; the count per
# start is the program's total over N, less its total with N = 0. Page faults
# are not in it (the example reuses one slot): bench/exec-cost.sh --policy
# measures a whole exec under a policy.
#
# Usage: bench/policy-start-cost.sh [--starts N] [--policy FILE] [TREE...]
#   FILE: a policy file or builtin:NAME (default bench/policies/build.toml)
#   TREE: a checkout of strata (default: this one). Each other tree gets a
#   copy of this one's example, so an older commit can be measured:
#   git worktree add /tmp/old REV && bench/policy-start-cost.sh /tmp/old .
set -euo pipefail
starts=1000 policy=
trees=()
while [ $# -gt 0 ]; do
    case "$1" in
        --starts) starts="$2"; shift 2 ;;
        --policy) policy="$2"; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) trees+=("$(cd "$1" && pwd)"); shift ;;
    esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ ${#trees[@]} -gt 0 ] || trees=("$root")
[ -n "$policy" ] || policy="$root/bench/policies/build.toml"
command -v valgrind >/dev/null || { echo "policy-start-cost.sh: valgrind is needed" >&2; exit 2; }
example=crates/cli/examples/policy_start_cost.rs
# build.toml's ./out is relative to where strata runs: run in a scratch
# directory that has one.
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir "$work/out"
count() { # instructions of one run: count TREE N
    (cd "$work" && valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$1/target/release/examples/policy_start_cost" "$policy" "$2" 2>&1) | awk '/Collected/{print $4}'
}
for t in "${trees[@]}"; do
    # Every tree runs the same example: this checkout's.
    [ "$t" = "$root" ] || { mkdir -p "$(dirname "$t/$example")" && cp "$root/$example" "$t/$example"; }
    (cd "$t" && cargo build -q --release -p strata-cli --example policy_start_cost)
done
echo "bench/policy-start-cost.sh: policy $policy, $starts starts, instructions per start (callgrind)"
printf '| tree | instructions per start |\n|---|---|\n'
for t in "${trees[@]}"; do
    base=$(count "$t" 0); all=$(count "$t" "$starts")
    [ -n "$base" ] && [ -n "$all" ] || { echo "policy-start-cost.sh: the example failed in $t" >&2; exit 1; }
    printf '| %s%s | %d |\n' "$(git -C "$t" rev-parse --short HEAD)" \
        "$(git -C "$t" diff --quiet HEAD -- crates || echo ' (modified)')" $(( (all - base) / starts ))
done
