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


# ---- configurations in turn (bench/compile_driver.c) ----------------------------------------

def rotated(xs, n):
    """xs starting at its (n mod len)th element: the order of turn n, so that no configuration
    always goes first."""
    k = n % len(xs) if xs else 0
    return xs[k:] + xs[:k]


def ratios(xs, base):
    """x / base for every key (a round, or a round and a command) both have; xs, base: {key: value}."""
    return [xs[r] / base[r] for r in xs if r in base and base[r]]


def median_interval(rs, level=0.95, resamples=4000):
    """A bootstrap interval (percentile) for the median of rs: where the median of such rounds would fall
    in `level` of repeated runs. Seeded, so the same rounds give the same interval. None for fewer than
    5 rounds."""
    import random
    import statistics
    if len(rs) < 5:
        return None
    rng = random.Random(0x5eed)
    ms = sorted(statistics.median(rng.choices(rs, k=len(rs))) for _ in range(resamples))
    cut = int(resamples * (1 - level) / 2)
    return ms[cut], ms[-cut - 1]


def build_driver(out):
    """Compiles bench/compile_driver.c to `out`; None, or what gcc said."""
    src = Path(__file__).resolve().parent / "compile_driver.c"
    p = subprocess.run(["gcc", "-O2", "-Wall", "-o", str(out), str(src)], capture_output=True, text=True)
    return None if p.returncode == 0 else (p.stdout + p.stderr).strip()


class Drivers:
    """One bench/compile_driver per configuration, over one list of commands: `start` one, `ask`
    it to run command i (its wait status, and the CPU and wall time of the command and everything
    it waited for, in seconds), `close` them all."""

    def __init__(self, driver, cmdfile, cwd, env):
        self.driver, self.cmdfile, self.cwd, self.env = str(driver), str(cmdfile), cwd, env
        self.procs = {}

    def start(self, key, prefix, pass_fds=(), stderr=subprocess.DEVNULL):
        self.procs[key] = subprocess.Popen(
            list(prefix) + [self.driver, self.cmdfile], cwd=self.cwd, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=stderr, pass_fds=pass_fds, env=self.env, text=True, bufsize=1,
            start_new_session=True)

    def ask(self, key, i):
        p = self.procs[key]
        try:
            p.stdin.write(f"{i}\n")
            p.stdin.flush()
            f = p.stdout.readline().split()
        except BrokenPipeError:
            f = []
        if not f and p.poll() is not None:
            raise RuntimeError(f"{key}: the driver exited with status {p.returncode} before command {i} "
                               f"(its command: {' '.join(p.args)}; run in {self.cwd})")
        if len(f) != 4 or int(f[0]) != i:
            raise RuntimeError(f"{key}: the driver answered {f!r} for command {i}")
        return int(f[1]), int(f[2]) / 1e9, int(f[3]) / 1e9

    def in_turn(self, keys, rounds, ncmds):
        """Every command to every configuration of `keys`, in turn (the order rotated from one command
        to the next), `rounds` times: yields (round, command, key, what `ask` answered)."""
        n = 0
        for r in range(rounds):
            for i in range(ncmds):
                for k in rotated(keys, n):
                    yield r, i, k, self.ask(k, i)
                n += 1

    def drop(self, key):
        self.procs.pop(key).kill()

    def close(self):
        for p in self.procs.values():
            try:
                p.stdin.close()
                p.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                p.kill()
        self.procs = {}
