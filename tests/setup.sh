#!/usr/bin/env bash
# Installs what strata's integration tests (tests/test_real.py, tests/test_cpython.py)
# and its benchmark (bench/run.sh) need, on a Debian 12 machine, as root.
#
# Idempotent: when everything is already there it touches nothing (no apt-get update),
# so a rerun takes well under a second. It prints what it found and what it did.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export PATH="$PATH:/usr/local/go/bin"

missing=()          # Debian packages to install
say() { printf 'setup: %s\n' "$*"; }

need_cmd() {        # need_cmd COMMAND PACKAGE
    if command -v "$1" >/dev/null 2>&1; then say "have $1 ($(command -v "$1"))"
    else say "missing $1 -> $2"; missing+=("$2"); fi
}
need_file() {       # need_file PATH PACKAGE
    if [ -e "$1" ]; then say "have $1"
    else say "missing $1 -> $2"; missing+=("$2"); fi
}

need_cmd strace strace
need_file /usr/bin/python3.11 python3.11
need_file /usr/bin/python3 python3
# The regression tests themselves (the stub /usr/lib/python3.11/test/ of libpython3.11-stdlib
# holds only regrtest and support; test_os.py comes with the testsuite package).
need_file /usr/lib/python3.11/test/test_os.py libpython3.11-testsuite
need_cmd xz xz-utils
need_cmd tar tar
need_cmd find findutils
need_cmd sort coreutils
need_cmd bash bash
need_cmd gcc gcc
need_cmd make make
# Source-file mode and javac both need the JDK's compiler module, so the headless JDK
# (which depends on the headless JRE) rather than only the JRE.
need_cmd java openjdk-17-jdk-headless
need_cmd javac openjdk-17-jdk-headless
need_cmd node nodejs
if command -v go >/dev/null 2>&1; then say "have go ($(command -v go))"
else say "missing go -> golang-go"; missing+=(golang-go); fi
need_cmd runuser util-linux

want_hyperfine=0
if command -v hyperfine >/dev/null 2>&1; then say "have hyperfine"; else want_hyperfine=1; fi

if [ "$(id -u)" != 0 ] && { [ ${#missing[@]} -gt 0 ] || [ $want_hyperfine = 1 ]; }; then
    say "not root: cannot install ${missing[*]:-} (hyperfine optional)"; exit 1
fi

if [ ${#missing[@]} -gt 0 ] || [ $want_hyperfine = 1 ]; then
    say "apt-get update"
    apt-get update -qq
    if [ ${#missing[@]} -gt 0 ]; then
        # shellcheck disable=SC2207
        pkgs=($(printf '%s\n' "${missing[@]}" | sort -u))
        say "apt-get install -y --no-install-recommends ${pkgs[*]}"
        apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
    fi
    if [ $want_hyperfine = 1 ]; then
        if apt-cache show hyperfine >/dev/null 2>&1; then
            say "apt-get install -y --no-install-recommends hyperfine"
            apt-get install -y -qq --no-install-recommends hyperfine || say "hyperfine install failed (optional; bench falls back to Python timing)"
        else
            say "hyperfine not available from apt (optional; bench falls back to Python timing)"
        fi
    fi
else
    say "all packages present: apt skipped"
fi

# pytest, for whichever python3 runs the test suite.
if python3 -c 'import pytest' >/dev/null 2>&1; then
    say "have pytest ($(python3 -c 'import pytest; print(pytest.__version__)'))"
elif [ "$(readlink -f "$(command -v python3)")" = /usr/bin/python3.11 ]; then
    # Debian's own interpreter is "externally managed" (PEP 668): use Debian's package.
    say "apt-get install -y --no-install-recommends python3-pytest"
    apt-get install -y -qq --no-install-recommends python3-pytest
else
    say "python3 -m pip install pytest"
    python3 -m pip install -q pytest
fi

say "done"
