#!/usr/bin/env python3
"""CPU per compile under several configurations, measured in turn (two strata builds side by side,
or several policies).

Generates the build tree of bench/run-policy.sh (121 small C files), starts one long-lived
bench/compile_driver per configuration, and hands every compile to each configuration in turn
(order rotated), ROUNDS times: the runs being compared are milliseconds apart, so the machine's
drift falls on all of them alike. Prints, per configuration, the median ratio of its CPU per
compile (wait4's rusage: gcc, cc1, as) to native's run of the same compile, with a 95% interval.

Usage: bench/compiles-in-turn.py [--rounds N] NAME=PREFIX...
  e.g. bench/compiles-in-turn.py old="/tmp/old/target/release/strata run --" \\
           new="target/release/strata run --" \\
           empty="target/release/strata run --policy empty.toml --"
  (native is always measured; run from anywhere: the tree is made in a temporary directory)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import policy  # noqa: E402  (bench/policy.py: the tree and the interval)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("configs", nargs="+", help="NAME=PREFIX")
    a = ap.parse_args()
    configs = {"native": []}
    for c in a.configs:
        name, eq, prefix = c.partition("=")
        if not eq or name in configs:
            sys.exit(f"compiles-in-turn: expected NAME=PREFIX with a new name, got {c!r}")
        configs[name] = prefix.split()
    work = Path(tempfile.mkdtemp(prefix="compiles-"))
    try:
        tree = policy.build_setup(types.SimpleNamespace(work=work, a=types.SimpleNamespace(files=120)))
        driver = work / "driver"
        subprocess.run(["gcc", "-O2", "-Wall", "-o", str(driver), str(HERE / "compile_driver.c")], check=True)
        srcs = sorted((tree / "src").glob("*.c"))
        (work / "cmds.txt").write_text("".join(f"gcc -O2 -Wall -Iinclude -c -o out/{p.stem}.o src/{p.name}\n"
                                               for p in srcs))
        (tree / "out" / ".tmp").mkdir()
        env = dict(os.environ, TMPDIR=str(tree / "out" / ".tmp"))
        ds = {k: subprocess.Popen(pre + [str(driver), str(work / "cmds.txt")], cwd=tree, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
              for k, pre in configs.items()}
        keys = list(configs)
        cpu = {k: {} for k in keys}
        n = 0
        for r in range(a.rounds):
            for i in range(len(srcs)):
                order = keys[n % len(keys):] + keys[:n % len(keys)]
                n += 1
                for k in order:
                    ds[k].stdin.write(f"{i}\n")
                    ds[k].stdin.flush()
                    f = ds[k].stdout.readline().split()
                    if len(f) != 4:
                        sys.exit(f"compiles-in-turn: the {k} driver stopped")
                    if f[1] != "0":
                        sys.exit(f"compiles-in-turn: compile {i} under {k}: wait status {f[1]}")
                    cpu[k][(r, i)] = int(f[2])
        for p in ds.values():
            p.stdin.close()
            p.wait()
        print(f"bench/compiles-in-turn.py: {a.rounds} rounds of {len(srcs)} compiles; CPU per compile, "
              f"ratio to native's run of the same compile (median, 95% interval)")
        print(f"  {'native':12} {statistics.median(cpu['native'].values()) / 1e6:.1f} ms")
        for k in keys[1:]:
            rs = policy.ratios(cpu[k], cpu["native"])
            lo, hi = policy.median_interval(rs)
            print(f"  {k:12} x{statistics.median(rs):.4f} (x{lo:.4f}-x{hi:.4f}, {len(rs)} pairs)")
    finally:
        for d, _, _ in os.walk(work):  # the tree was made read-only
            os.chmod(d, 0o755)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
