#!/usr/bin/env bash
# Measures what a sandbox policy costs (`strata run --policy`), side by side in one run
# (bench/policy.py), against native, `strata run` without a policy, bubblewrap and firejail:
#   1. web: lighttpd serving a generated static directory (4 KiB index.html, 64 KiB big.bin)
#      on 127.0.0.1:PORT (a free port), loaded by `wrk -t2 -c16 -d10s` from the same machine;
#      policy bench/policies/web.toml (a copy with the chosen port); python3 -m http.server
#      when lighttpd is unusable
#   2. build: `make -j2` of a generated tree of 120 small C files into ./out; policy
#      bench/policies/build.toml; plus a confinement check (what each sandbox let through)
#   3. compiles: the same tree's 121 compiles handed to every configuration in turn, one
#      long-lived driver per configuration (bench/compile_driver.c), CPU per compile paired
#      with native's run of the same compile: resolves a few percent, which whole builds
#      (spread 20-45% here) cannot
#   4. requests: the web servers of every configuration running at once, each on its own
#      port, loaded in turn by short wrk runs (2 s) for 15 rounds: paired, seconds apart
# Installs wrk, lighttpd, bubblewrap and firejail with apt-get when missing (as root); a tool
# that cannot be installed or cannot run in this container is left out, with the reason in
# the report. The strata --policy rows are n/a until strata accepts --policy.
# The build runs with TMPDIR=./out/.tmp in every configuration (see bench/policies/build.toml).
# Writes bench/results/<date>-policy.md. About 18 minutes on 2 cores (web: 5 configurations
# x 3 rounds x 2 files x 10 s; build: 5 configurations x 8 runs of ~2.5 s; compiles: 5
# configurations x 5 rounds x 121 compiles of ~40 ms; requests: 5 configurations x 15
# rounds x 2 files x 2 s).
#
# Usage: bench/run-policy.sh [--only web,build,compiles,requests] [--rounds N] [--duration S] [--sizes 4k,64k]
#            [--warmup S] [--threads N] [--connections N] [--pin server=1,wrk=0|none] [--server auto|lighttpd|python]
#            [--build-rounds N] [--compile-rounds N] [--turn-rounds N] [--turn-duration S] [--files N] [--jobs N] [--build-pin CPU] [--disturbed F] [--retries N] [--quiet-wait S]
#            [--quiet-budget S] [--workdir DIR] [--out FILE]
#   STRATA=/path/to/strata overrides target/release/strata.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

# The exact command line, for the report (with the STRATA override if one was given).
cmd="bench/run-policy.sh"
for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
if [ -n "${STRATA:-}" ]; then cmd="STRATA=$(printf '%q' "$STRATA") $cmd"; fi

notes=()
updated=0
install() {  # install TOOL PACKAGE: apt-get install when TOOL is missing; a note when that fails
    local tool=$1 pkg=$2 log
    command -v "$tool" >/dev/null && return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        notes+=(--install-note "$tool is missing and cannot be installed here (needs root and apt-get)")
        return 0
    fi
    log=$(mktemp)
    echo "run-policy.sh: apt-get install -y $pkg" >&2
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >"$log" 2>&1; then
        if [ $updated = 0 ]; then  # a stale package list: update once and try again
            updated=1
            apt-get update -q >/dev/null 2>&1 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >"$log" 2>&1 || true
        fi
    fi
    if ! command -v "$tool" >/dev/null; then
        notes+=(--install-note "apt-get install $pkg failed: $(tail -n 2 "$log" | tr '\n' ' ')")
        echo "run-policy.sh: could not install $pkg; its rows will be n/a" >&2
    fi
    rm -f "$log"
}
install wrk wrk
install lighttpd lighttpd
install bwrap bubblewrap
install firejail firejail

# the system python (3.11: tomllib), not a pyenv shim
py=/usr/bin/python3
[ -x "$py" ] || py=python3

exec "$py" "$here/policy.py" \
    --root "$root" \
    --strata "${STRATA:-$root/target/release/strata}" \
    --command "$cmd" \
    ${notes[@]+"${notes[@]}"} \
    "$@"
