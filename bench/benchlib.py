"""Helpers shared by the benchmark scripts (bench/fast.py, bench/policy.py, bench/stack.py),
which import it from their own directory."""
import argparse
import os
import subprocess
from pathlib import Path


def parser(doc):
    """An argument parser with the options every benchmark script takes: --root (the
    repository), --strata (the binary, $STRATA or target/release/strata) and --command (the
    command line the report records)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = Path(__file__).resolve().parent.parent
    ap.add_argument("--root", default=str(root))
    ap.add_argument("--strata", default=os.environ.get("STRATA") or str(root / "target/release/strata"))
    ap.add_argument("--command", help="the command line to record (default: this script's argv)")
    return ap


def busy_others(min_pcpu=20.0):
    """Other processes (not this one or its children) that used ≥ min_pcpu % of a CPU over their
    lifetime, as `ps` reports it: what else competed for the machine during the run."""
    mine = {os.getpid()}
    try:
        p = subprocess.run(["ps", "-eo", "pid=,ppid=,pcpu=,etime=,args="], capture_output=True, text=True)
    except OSError:
        return "unknown (no ps)"
    if p.returncode != 0:
        return "unknown (no ps)"
    procs = []
    for r in p.stdout.splitlines():
        f = r.split(None, 4)
        if len(f) == 5:
            procs.append((int(f[0]), int(f[1]), float(f[2]), f[3], f[4]))
    changed = True
    while changed:
        changed = False
        for pid, ppid, *_ in procs:
            if ppid in mine and pid not in mine:
                mine.add(pid)
                changed = True
    busy = [f"`{args[:60]}` ({pcpu:.0f}% for {etime})" for pid, _, pcpu, etime, args in
            sorted(procs, key=lambda x: -x[2]) if pid not in mine and pcpu >= min_pcpu]
    return "; ".join(busy[:4]) or "none"


def copy_strata(strata, work):
    """Copies `strata` and the strata-rt beside it into WORK/bin, so that a rebuild of
    target/release during the run cannot mix two builds into one table. Returns the copy's
    path, the original's build time (ISO, from its mtime) and the two files' digests."""
    import datetime
    import hashlib
    import shutil
    orig = Path(strata)
    built = datetime.datetime.fromtimestamp(orig.stat().st_mtime).isoformat(timespec="seconds")
    (Path(work) / "bin").mkdir()
    digests = []
    for name in (orig.name, "strata-rt"):
        src = orig.parent / name
        if src.exists():
            shutil.copy2(src, Path(work) / "bin" / name)
            digests.append(f"{name} sha256 {hashlib.sha256(src.read_bytes()).hexdigest()[:16]}")
    return str(Path(work) / "bin" / orig.name), built, digests
