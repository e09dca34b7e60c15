#!/usr/bin/env python3
"""What starting a program costs under each configuration, measured in turn.

One long-lived bench/compile_driver per configuration (natively, `strata run --`, `strata run
--policy FILE --`, and any CONFIG=COMMAND given); each command of the list is handed to every
configuration in turn (order rotated), ROUNDS times, so the runs being compared are milliseconds
apart. Prints, per command, native's median CPU (the command and what it waited for, from
wait4's rusage) and what each configuration adds to it (median of the paired differences).

With --pair A-B (names of two configurations), also the median of the paired differences A - B
and its 95% interval: how two builds of strata compare, start by start.

Usage: bench/starts-in-turn.py [--rounds N] [--policy FILE] [--strata PATH] [--cmd "COMMAND"]...
                               [--pair A-B]... [NAME=CONFIG_PREFIX]...
  default commands: a static program that only exits (built here), the same through
  bench/start_floor.c (natively: the floor of any in-process runtime's start), /bin/true,
  gcc --version, as --version, cc1 --version (those found)
  e.g. bench/starts-in-turn.py --pair strata-old old="/tmp/old/target/release/strata run --"
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import Drivers, build_driver, median_interval  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def default_commands(work):
    """A static program that only exits (built in `work`), the same started by bench/start_floor.c
    (the least an in-process runtime does at a start: read natively, beside exit_only alone),
    /bin/true, and gcc's programs' --version."""
    exit_only = work / "exit_only"
    (work / "exit_only.c").write_text(
        'void _start(void) { __asm__ volatile("mov $60, %eax; xor %edi, %edi; syscall"); }\n')
    subprocess.run(["gcc", "-O2", "-static", "-nostdlib", "-o", str(exit_only), str(work / "exit_only.c")],
                   check=True)
    floor = work / "start_floor"
    subprocess.run(["gcc", "-O2", "-static", "-nostdlib", "-fno-stack-protector", "-Wl,-Ttext-segment=0x10000000",
                    "-o", str(floor), str(Path(__file__).resolve().parent / "start_floor.c")], check=True)
    cmds = [str(exit_only), f"{floor} {exit_only}", "/bin/true", "gcc --version", "as --version"]
    cc1 = subprocess.run(["gcc", "-print-prog-name=cc1"], capture_output=True, text=True).stdout.strip()
    if cc1 and os.path.isabs(cc1):
        cmds.append(f"{cc1} --version")
    return [c for c in cmds if shutil.which(c.split()[0])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--policy", default=str(ROOT / "bench/policies/build.toml"))
    ap.add_argument("--strata", default=os.environ.get("STRATA") or str(ROOT / "target/release/strata"))
    ap.add_argument("--cmd", action="append", default=[], help="a command to start (words split on spaces)")
    ap.add_argument("--pair", action="append", default=[], help="A-B: the paired differences of two configurations")
    ap.add_argument("configs", nargs="*", help="NAME=PREFIX: another configuration")
    a = ap.parse_args()
    # (The drivers run in a temporary directory.)
    a.policy = str(Path(a.policy).resolve())
    if "/" in a.strata:
        a.strata = str(Path(a.strata).resolve())
    names = {"native", "strata", "policy"} | {c.partition("=")[0] for c in a.configs}
    pairs = [p.split("-", 1) for p in a.pair]
    for p in pairs:
        if len(p) != 2 or not set(p) <= names:
            sys.exit(f"starts-in-turn: --pair {'-'.join(p)}: not two of the configurations ({', '.join(sorted(names))})")
    work = Path(tempfile.mkdtemp(prefix="starts-"))
    try:
        why = build_driver(work / "driver")
        if why:
            sys.exit(f"starts-in-turn: compile_driver does not build: {why}")
        cmds = a.cmd or default_commands(work)
        (work / "cmds.txt").write_text("\n".join(cmds) + "\n")
        configs = {"native": [], "strata": [a.strata, "run", "--"],
                   "policy": [a.strata, "run", "--policy", a.policy, "--"]}
        for c in a.configs:
            name, _, prefix = c.partition("=")
            configs[name] = prefix.split()
        # A policy may allow executing only system directories (the static program here is then
        # n/a under it); the driver itself is what strata starts, which execute rules do not cover.
        (work / "out").mkdir()
        drivers = Drivers(work / "driver", work / "cmds.txt", work, dict(os.environ, TMPDIR=str(work / "out")))
        keys = list(configs)
        cpu = {k: {i: [] for i in range(len(cmds))} for k in keys}
        try:
            for k, prefix in configs.items():
                drivers.start(k, prefix)
            for _, i, k, (status, cp, _) in drivers.in_turn(keys, a.rounds, len(cmds)):
                # (A command the configuration refuses, as a policy may: n/a.)
                cpu[k][i].append(cp if status == 0 else None)
        finally:
            drivers.close()
        print(f"bench/starts-in-turn.py: {a.rounds} rounds; CPU per start (wait4 rusage), "
              f"median of the differences to native's run of the same round")

        def added(k, i):
            d = [x - y for x, y in zip(cpu[k][i], cpu["native"][i]) if x is not None and y is not None]
            return f"{k} {statistics.median(d) * 1e6:+.0f} us" if d else f"{k} n/a (refused)"

        for i, c in enumerate(cmds):
            nat = [x for x in cpu["native"][i] if x is not None]
            if not nat:
                print(f"  {c[:40]:40} fails natively")
                continue
            print(f"  {c[:40]:40} native {statistics.median(nat) * 1e3:.3f} ms  "
                  + "  ".join(added(k, i) for k in keys[1:]))
            for x, y in pairs:
                d = [p - q for p, q in zip(cpu[x][i], cpu[y][i]) if p is not None and q is not None]
                iv = median_interval(d)
                print(f"  {'':40} {x} - {y}: {statistics.median(d) * 1e6:+.1f} us" if d else f"  {'':40} {x} - {y}: n/a",
                      f"(95% interval {iv[0] * 1e6:+.1f} to {iv[1] * 1e6:+.1f} us)" if iv else "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
