#!/usr/bin/env bash
# Builds strata and runs it on real programs: `ls -la /` with every system
# call counted (like `strace -c`), a Python one-liner that starts a thread
# and a child process, traced (like `strace -f`, file calls only), and `cat`
# of a file seen through a path mapping (like `proot -b`), and how calls reached
# strata (rewritten sites or traps) with getpid served in-process. Installs the Rust toolchain's build needs if
# they are missing (a C linker; Rust itself comes with the machine image).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cc >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc; else echo "need a C linker (gcc)" >&2; exit 1; fi
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "need cargo (Rust 1.80 or later); see https://rustup.rs" >&2; exit 1
fi
cargo build --release --quiet
S=target/release/strata
echo "+ $S run --ext count -- ls -la /"
"$S" run --ext count -- ls -la /
echo "+ $S run --trace=%file,%process -- python3 -c '...thread and subprocess...'"
"$S" run --trace=%file,%process -- python3 -c 'import threading, subprocess
t = threading.Thread(target=print, args=("hello from a thread",)); t.start(); t.join()
print(subprocess.run(["echo", "hello from a child process"], capture_output=True, text=True).stdout, end="")'
echo "+ $S run --ext ids --fast-stats -- python3 -c 'import os; print(os.getpid() == os.getpid())'"
"$S" run --ext ids --fast-stats -- python3 -c 'import os; print(os.getpid() == os.getpid())'
echo "+ $S run --map /greeting=$PWD/README.md:ro -- cat /greeting   (first lines)"
"$S" run --map "/greeting=$PWD/README.md:ro" -- sh -c 'head -3 /greeting; echo x >> /greeting || true'
