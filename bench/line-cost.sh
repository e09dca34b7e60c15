#!/usr/bin/env bash
# Instructions the trace extension spends formatting one line, counted by
# callgrind (repeatable here, unlike time): crates/ext-trace/examples/line_cost.rs
# formats each kind of line N times; the count per line is the program's
# total over N, less its count with N = 0.
#
# Usage: bench/line-cost.sh [--lines N] [TREE...]
#   TREE: a checkout of strata (default: this one). Each other tree gets a
#   copy of this one's example, so an older commit can be measured:
#   git worktree add /tmp/old REV && bench/line-cost.sh /tmp/old .
set -euo pipefail
lines=100000
trees=()
while [ $# -gt 0 ]; do
    case "$1" in
        --lines) lines="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) trees+=("$(cd "$1" && pwd)"); shift ;;
    esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ ${#trees[@]} -gt 0 ] || trees=("$root")
command -v valgrind >/dev/null || { echo "line-cost.sh: valgrind is needed" >&2; exit 2; }
example=crates/ext-trace/examples/line_cost.rs
kinds=("read(0, \"\\0\", 1) = 1 (dd)" "write(1, \"\\0\", 1) = 1 (dd)" "write of 40 bytes of text"
       "openat of a path" "close failing with EBADF" "mmap")
count() { # instructions of one run: count TREE N KIND
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1/target/release/examples/line_cost" "$2" "$3" 2>&1 |
        awk '/Collected/{print $4}'
}
printf '| line |'; for t in "${trees[@]}"; do printf ' %s%s |' "$(git -C "$t" rev-parse --short HEAD)" "$(git -C "$t" diff --quiet HEAD -- crates || echo ' (modified)')"; done; echo
printf '|---|'; for _ in "${trees[@]}"; do printf -- '---|'; done; echo
for t in "${trees[@]}"; do
    # Every tree formats the same lines: this checkout's example.
    [ "$t" = "$root" ] || { mkdir -p "$(dirname "$t/$example")" && cp "$root/$example" "$t/$example"; }
    (cd "$t" && cargo build -q --release -p strata-ext-trace --example line_cost)
done
for k in "${!kinds[@]}"; do
    printf '| %s |' "${kinds[$k]}"
    for t in "${trees[@]}"; do
        base=$(count "$t" 0 "$k"); all=$(count "$t" "$lines" "$k")
        printf ' %d |' $(( (all - base) / lines ))
    done
    echo
done
