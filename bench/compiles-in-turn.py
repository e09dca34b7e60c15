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
           new="$PWD/target/release/strata run --" \\
           empty="$PWD/target/release/strata run --policy $PWD/empty.toml --"
  (native is always measured; the tree is made in a temporary directory, where the drivers run:
  give absolute paths)
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import Drivers, build_driver, median_interval, ratios  # noqa: E402
from policy import build_setup, compile_commands  # noqa: E402  (run-policy.sh's build tree)


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
        tree = build_setup(work, 120)
        why = build_driver(work / "driver")
        if why:
            sys.exit(f"compiles-in-turn: compile_driver does not build: {why}")
        cmds = compile_commands(tree)
        (work / "cmds.txt").write_text("\n".join(cmds) + "\n")
        (tree / "out" / ".tmp").mkdir()
        drivers = Drivers(work / "driver", work / "cmds.txt", tree, dict(os.environ, TMPDIR=str(tree / "out" / ".tmp")))
        keys = list(configs)
        cpu = {k: {} for k in keys}
        try:
            for k, prefix in configs.items():
                drivers.start(k, prefix)
            for r, i, k, (status, cp, _) in drivers.in_turn(keys, a.rounds, len(cmds)):
                if status != 0:
                    sys.exit(f"compiles-in-turn: compile {i} under {k}: wait status {status}")
                cpu[k][(r, i)] = cp
        finally:
            drivers.close()
        print(f"bench/compiles-in-turn.py: {a.rounds} rounds of {len(cmds)} compiles; CPU per compile, "
              f"ratio to native's run of the same compile (median, 95% interval)")
        print(f"  {'native':12} {statistics.median(cpu['native'].values()) * 1e3:.1f} ms")
        for k in keys[1:]:
            rs = ratios(cpu[k], cpu["native"])
            lo, hi = median_interval(rs)
            print(f"  {k:12} x{statistics.median(rs):.4f} (x{lo:.4f}-x{hi:.4f}, {len(rs)} pairs)")
    finally:
        for d, _, _ in os.walk(work):  # the tree was made read-only
            os.chmod(d, 0o755)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
