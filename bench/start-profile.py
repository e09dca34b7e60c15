#!/usr/bin/env python3
"""Where the time and the page faults of a program start go, natively and under strata.

Starts a static program that only exits N times through bench/compile_driver (as posix_spawn
does it), natively and under `strata run --` (or the prefix given), and prints:
  1. `perf record -e cpu-clock -g` samples per start, each assigned to the first system call
     entry (__x64_sys_*) or page fault on its kernel stack, or to the user code's object;
  2. `perf record -e page-faults -d` faults per start, each placed in strata-rt's sections
     (its text, rodata, data, .bss.big, .bss), the session file, or the file or anonymous
     memory it hit.
The profiler's own cost inflates every sample count alike: read the shares. Needs perf
(software events only), gcc and readelf; run as root or with perf_event_paranoid <= 1.

With --command, the program started is that command (run in --cwd), e.g. one compile of the
build benchmark's tree: where the CPU that strata adds to a whole compile goes.

Usage: bench/start-profile.py [--starts N] [--strata PATH] [--prefix "strata run --policy F --"]
                              [--command "gcc -O2 -c -o out/x.o src/u001.c" --cwd DIR]
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import build_driver  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENTRY = re.compile(r"\s(__x64_sys_\w+|__do_sys_\w+|exc_page_fault)\b")


def stacks(script):
    """The call stacks (leaf first) of `perf script -F ip,sym,dso` output."""
    cur = []
    for line in script.splitlines():
        if line.strip() and line[0] in " \t":
            cur.append(line.strip())
        elif cur:
            yield cur
            cur = []
    if cur:
        yield cur


def where_time(frames):
    if "[kernel" not in frames[0]:
        m = re.search(r"\((.*)\)\s*$", frames[0])
        return "user: " + (Path(m.group(1)).name if m else "?")
    for f in frames:
        m = ENTRY.search(f)
        if m:
            return m.group(1)
    return "kernel, other"


def sections(rt):
    """(name, lo, hi) of strata-rt's allocated sections."""
    out = subprocess.run(["readelf", "-SW", rt], capture_output=True, text=True).stdout
    secs = []
    for m in re.finditer(r"\]\s+(\.\S+)\s+\S+\s+([0-9a-f]{16})\s+[0-9a-f]+\s+([0-9a-f]+)", out):
        lo, size = int(m.group(2), 16), int(m.group(3), 16)
        if lo and size:
            secs.append((m.group(1), lo, lo + size))
    return secs


def where_fault(line, secs):
    p = line.split()
    try:
        addr = int(p[1], 16)
    except (IndexError, ValueError):
        return "?"
    for name, lo, hi in secs:
        if lo <= addr < hi:
            return f"strata-rt {name}"
    m = re.search(r"\((/[^)]*)\)", line)
    if not m:
        return "anonymous"
    f = m.group(1)
    return "the session file" if "strata-count" in f else ("anonymous" if f == "//anon" else f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--starts", type=int, default=3000)
    ap.add_argument("--strata", default=os.environ.get("STRATA") or str(ROOT / "target/release/strata"))
    ap.add_argument("--prefix", help="the configuration to compare with native (default: STRATA run --)")
    ap.add_argument("--command", help="the program to start, a shell-quoted command (default: a static "
                    "program that only exits)")
    ap.add_argument("--cwd", help="the directory the driver runs in (for --command)")
    a = ap.parse_args()
    prefix = a.prefix.split() if a.prefix else [a.strata, "run", "--"]
    rt = str(Path(a.strata).resolve().parent / "strata-rt")
    work = Path(tempfile.mkdtemp(prefix="start-profile-"))
    try:
        why = build_driver(work / "driver")
        if why:
            sys.exit(f"start-profile: compile_driver does not build: {why}")
        (work / "exit_only.c").write_text(
            'void _start(void) { __asm__ volatile("mov $60, %eax; xor %edi, %edi; syscall"); }\n')
        subprocess.run(["gcc", "-O2", "-static", "-nostdlib", "-o", str(work / "exit_only"),
                        str(work / "exit_only.c")], check=True)
        (work / "cmds.txt").write_text((a.command or str(work / "exit_only")) + "\n")
        (work / "req.txt").write_text("0\n" * a.starts)
        secs = sections(rt)
        res = {}
        for name, pre in (("native", []), ("strata", prefix)):
            run = pre + [str(work / "driver"), str(work / "cmds.txt")]
            rec = work / f"{name}.data"
            with open(work / "req.txt") as req:
                subprocess.run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "20000", "-o", str(rec),
                                "--", "taskset", "-c", "1"] + run, stdin=req, stdout=subprocess.DEVNULL, cwd=a.cwd, check=True)
            script = subprocess.run(["perf", "script", "-i", str(rec), "-F", "ip,sym,dso"], capture_output=True,
                                    text=True).stdout
            time = collections.Counter(where_time(s) for s in stacks(script))
            with open(work / "req.txt") as req:
                subprocess.run(["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", str(rec),
                                "--"] + run, stdin=req, stdout=subprocess.DEVNULL, cwd=a.cwd, check=True)
            script = subprocess.run(["perf", "script", "-i", str(rec), "-F", "comm,addr,ip,sym,dso"],
                                    capture_output=True, text=True).stdout
            # (The launcher's own faults are not a start's.)
            faults = collections.Counter(where_fault(l, secs) for l in script.splitlines()
                                         if l.split() and l.split()[0] != "strata")
            res[name] = (time, faults)
        n = a.starts
        for title, i in (("cpu-clock samples per start", 0), ("page faults per start", 1)):
            nat, st = res["native"][i], res["strata"][i]
            total = sum(st.values()) - sum(nat.values())
            print(f"{title} (native, {' '.join(prefix)}, added; share of what is added)")
            for k in sorted(set(nat) | set(st), key=lambda k: -(st[k] - nat[k]))[:20]:
                d = st[k] - nat[k]
                print(f"  {nat[k] / n:7.2f} {st[k] / n:7.2f} {d / n:+7.2f} {d / total:6.0%}  {k}")
            print(f"  {sum(nat.values()) / n:7.2f} {sum(st.values()) / n:7.2f} {total / n:+7.2f}         all")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
