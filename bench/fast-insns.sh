#!/usr/bin/env bash
# Instructions one fast-path call executes inside strata, counted exactly by single-stepping
# it under gdb (this machine has no hardware counters, and valgrind cannot run a program
# under Syscall User Dispatch). For each configuration: start a getpid loop under strata,
# attach gdb to the program, step one call (the third, warm) from strata's entry back to the
# program, print the total and the functions it went through.
#
# Usage: bench/fast-insns.sh [STRATA...]   (default: target/release/strata)
#   FAST_INSNS_ONLY=TEXT    only the configurations whose name contains TEXT
#   FAST_INSNS_DETAIL=1     also the instructions per function, per configuration
# Deterministic: the same build gives the same counts run after run; compare builds side
# by side. Needs gdb and ptrace of one's own processes (kernel.yama.ptrace_scope <= 1 as root,
# 0 for an ordinary user).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
command -v gdb >/dev/null || { echo "fast-insns: gdb is not installed" >&2; exit 2; }
[ $# -gt 0 ] || set -- "$root/target/release/strata"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/getpid_libc" "$here/getpid_libc.c"
gcc -O2 -o "$tmp/getpid_loop" "$here/getpid_loop.c"

# name | loop | entry | strata options
configs=(
  "null, getpid()|getpid_libc|strata_fast_entry|--ext null"
  "null, syscall(3)|getpid_loop|strata_fast_entry|--ext null"
  "null x4, getpid()|getpid_libc|strata_fast_entry|--ext null --ext null --ext null --ext null"
  "ids (served), getpid()|getpid_libc|strata_fast_entry|--ext ids"
  "no layer, syscall(3)|getpid_loop|strata_fast_entry|"
  "no layer, getpid() (native trampoline)|getpid_libc|strata_native_entry|"
  "trace -o /dev/null, getpid()|getpid_libc|strata_fast_entry|--trace -o /dev/null"
)

count() { # STRATA LOOP ENTRY OPTS... -> "total" and per-function lines on stdout
  local s=$1 loop=$2 entry=$3; shift 3
  "$s" run "$@" -- "$tmp/$loop" 1000000000000 >/dev/null 2>&1 &
  local launcher=$! pid=""
  disown "$launcher" # (its end, by the kill below, is not news)
  for _ in $(seq 100); do
    pid=$(pgrep -P "$launcher" -f "$loop" | head -1 || true)
    [ -n "$pid" ] && break
    sleep 0.05
  done
  if [ -z "$pid" ]; then echo "INSNS n/a"; kill "$launcher" 2>/dev/null; return; fi
  sleep 0.2
  FAST_INSNS_ENTRY=$entry timeout 300 gdb -q -batch -nx -p "$pid" -x "$here/fast_insns_gdb.py" 2>/dev/null \
    | grep -E '^(INSNS|FUNC) ' || echo "INSNS n/a"
  kill "$pid" "$launcher" 2>/dev/null || true
}

printf '| configuration |'; for s in "$@"; do printf ' %s |' "$s"; done; echo
printf '|---|'; for _ in "$@"; do printf -- '---|'; done; echo
for c in "${configs[@]}"; do
  IFS='|' read -r name loop entry opts <<<"$c"
  case "$name" in *"${FAST_INSNS_ONLY:-}"*) ;; *) continue ;; esac
  printf '| %s |' "$name"
  for s in "$@"; do
    # shellcheck disable=SC2086
    count "$s" "$loop" "$entry" $opts >"$tmp/out"
    printf ' %s |' "$(awk '/^INSNS/{print $2}' "$tmp/out")"
    n=$((${n:-0} + 1))
    { echo "## $name, $s"; grep '^FUNC' "$tmp/out" | head -25; } >"$tmp/detail-$n"
  done
  echo
done
if [ -n "${FAST_INSNS_DETAIL:-}" ]; then
  for f in $(ls "$tmp"/detail-* | sort -t- -k2 -n); do echo; cat "$f"; done
fi
