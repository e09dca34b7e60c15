"""What the fast path (rewritten syscall sites, docs/design/fast-path.md) costs and saves,
side by side in one run (bench/run-fast.sh calls this). Writes
bench/results/<date>-fastpath.md with one table per experiment (§13 of the design):

1. getpid loops: bench/getpid_libc.c (`getpid()`: glibc's `mov $39,%eax; syscall`, a P1
   site) and bench/getpid_loop.c (`syscall(3)`: `mov 0x8(%rsp),%r9; syscall`, number in a
   register), N calls and 0 calls; ns per call = (median(N) − median(0)) / N, wall and CPU,
   ratio to native and ns added over native. Variants:
   - one null layer: native; `strata run --rewrite=off --ext null`; `strata run --ext null`
     (rewriting as strata does by default)
   - per layer: `--ext null` ×1, ×4, ×16 (getpid_libc), least-squares slope in ns per layer
   - unwanted calls: `--ext map:/tmp=/tmp` (a layer that does not want getpid), both loops;
     also with `--no-short-circuit` when `strata run --help` lists it
   - short-circuit: `strata run --` (no layer) and `--ext map:/tmp=/tmp`, getpid_libc
     (getpid served in-process), and `strata run --` with getpid_loop
2. Tracing every call of `dd if=/dev/zero of=/dev/null bs=1 count=200000`: native,
   `strata run --trace -o FILE`, the same with `--rewrite=off`, `strace -f -o FILE`.
3. Start-up: `python3 -c pass` natively, under `strata run --ext null` and with
   `--rewrite=off`.
4. Trap share: each real program (dd, python3, a few more) once with `--fast-stats`, which
   prints one `strata: fast path: ...` line per process at exit (calls served through
   rewritten sites, by kind, then `M trapped`, and the sites rewritten and declined); the
   share is trapped / all calls. n/a when strata does not accept the flag.
5. Floors: bench/sud_floor.c (a bare Syscall User Dispatch round trip) and, when it exists,
   bench/fast_floor.c (the design's micro-benchmarks), printed as they report.

Every timed command runs under `taskset -c CPU` (default CPU 1; `--cpu none` to leave the
scheduler free). Each experiment starts with a smoke run (exit status and output checked;
a variant that fails is left out, shown as n/a with the reason, and the run goes on), then
times `rounds` rounds; each round runs every variant once, in an order rotated from round
to round, so drift of a noisy machine falls on all variants alike. Medians are reported.
With hyperfine installed each run is one `hyperfine -N --runs 1` (wall, and user + system
CPU of the process tree); otherwise time.perf_counter and getrusage around subprocess.run.
strata and strata-rt are copied to a temporary directory first, so a rebuild during the
run cannot mix two builds into one table.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = "/usr/bin/python3"  # the system python (a pyenv shim would add a shell script)
PY_IMPORTS = "json, email.parser, http.client, xml.dom.minidom, argparse, decimal, unittest"
DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=200000"]
MAP = "map:/tmp=/tmp"  # a layer that wants path calls only, never getpid
STATS_RE = re.compile(r"strata: fast path:.*")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = Path(__file__).resolve().parent
    ap.add_argument("--root", default=str(here.parent))
    ap.add_argument("--strata", default=os.environ.get("STRATA") or str(here.parent / "target/release/strata"))
    ap.add_argument("--command", help="the command line to record (default: this script's argv)")
    ap.add_argument("--only", default="getpid,dd,python,share,floor",
                    help="experiments to run (default getpid,dd,python,share,floor)")
    ap.add_argument("--getpid-n", type=int, default=1_000_000, help="calls per loop run (default 1000000)")
    ap.add_argument("--getpid-rounds", type=int, default=9, help="rounds of the getpid experiment (default 9)")
    ap.add_argument("--dd-rounds", type=int, default=3, help="rounds of the dd experiment (default 3; strace is slow)")
    ap.add_argument("--python-rounds", type=int, default=21, help="rounds of the python3 start-up (default 21)")
    ap.add_argument("--cpu", default="1", help="CPU for taskset -c (default 1), or none")
    ap.add_argument("--timer", choices=["auto", "hyperfine", "python"], default="auto")
    ap.add_argument("--out", help="report file (default bench/results/<date>-fastpath.md)")
    return ap.parse_args()


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(argv, env=None, timeout=300):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""
    except OSError as e:
        return f"cannot start: {e.strerror}", b"", b""


def fmt_time(s):
    if s is None:
        return "n/a"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1e3:.1f} ms" if s >= 0.01 else f"{s * 1e3:.2f} ms"


def fmt_ns(x, sign=False):
    if x is None:
        return "n/a"
    return f"{x:+.1f} ns" if sign else f"{x:.1f} ns"


class Timer:
    def __init__(self, kind):
        self.hyperfine = shutil.which("hyperfine") if kind != "python" else None
        if kind == "hyperfine" and not self.hyperfine:
            sys.exit("--timer hyperfine: hyperfine is not installed")
        if self.hyperfine:
            v = sh([self.hyperfine, "--version"])[1].decode().strip()
            self.desc = f"{v}, one `hyperfine -N --runs 1` per run"
        else:
            self.desc = "Python time.perf_counter and getrusage around subprocess.run"

    def __call__(self, argv, env=None):
        if self.hyperfine:
            with tempfile.NamedTemporaryFile(suffix=".json") as js:
                cmd = [self.hyperfine, "-N", "--runs", "1", "--style", "none", "--export-json", js.name,
                       shlex.join(argv)]
                p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=env)
                if p.returncode != 0:
                    raise RuntimeError(f"{shlex.join(argv)}: {p.stderr.decode(errors='replace')[-300:]}")
                r = json.load(open(js.name))["results"][0]
                return r["times"][0], r["user"] + r["system"]
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, env=env)
        wall = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)


class Variant:
    """One command: argv, how to check it (expect: stdout bytes, or a callable returning an
    error text for (stdout, stderr), or None), a cheaper smoke form, times."""

    def __init__(self, name, argv, expect=None, note=None, smoke_argv=None, smoke_expect=None):
        self.name, self.argv, self.expect = name, argv, expect
        self.na = note  # reason it is left out, or None
        self.smoke_argv, self.smoke_expect = smoke_argv, smoke_expect
        self.times, self.cpu = [], []
        self.rounds = None  # run in only this many rounds (spread evenly), if set

    @property
    def med(self):
        return statistics.median(self.times) if self.times else None

    @property
    def cmed(self):
        return statistics.median(self.cpu) if self.cpu else None


def smoke(variants, what):
    for v in variants:
        if v.na or v.argv is None:
            continue
        argv = v.smoke_argv or v.argv
        expect = v.smoke_expect if v.smoke_argv else v.expect
        t0 = time.perf_counter()
        st, out, err = sh(argv)
        dt = time.perf_counter() - t0
        if st != 0:
            v.na = f"exit {st}" + (f": `{err.decode(errors='replace').strip()[-200:]}`" if err else "")
        elif callable(expect):
            v.na = expect(out, err)
        elif expect is not None and out != expect:
            v.na = f"stdout differs: {out[:120]!r} instead of {expect[:120]!r}"
        log(f"smoke {what}: {v.name:60} {v.na or 'ok'} ({dt:.2f}s{', short form' if v.smoke_argv else ''})")


def timed(variants, rounds, timer, what, t_start):
    live = [v for v in variants if not v.na and v.argv is not None]
    for r in range(rounds):
        k = r % len(live) if live else 0
        order = live[k:] + live[:k]
        log(f"{what}: round {r + 1}/{rounds} ({time.monotonic() - t_start:.0f}s so far)")
        for v in order:
            if v.rounds is not None and r not in {i * rounds // max(1, v.rounds) for i in range(min(v.rounds, rounds))}:
                continue
            try:
                wall, cpu = timer(v.argv)
            except (RuntimeError, subprocess.CalledProcessError) as e:
                v.na = f"failed in round {r + 1}: {str(e)[-200:]}"
                log(f"{what}: {v.name}: {v.na}")
                live = [x for x in live if x is not v]
                continue
            v.times.append(wall)
            v.cpu.append(cpu)


def raw_lines(variants):
    return [f"- {v.name}: " + ", ".join(f"{t * 1e3:.2f}" for t in v.times) + " ms wall; CPU "
            + ", ".join(f"{t * 1e3:.1f}" for t in v.cpu) + " ms"
            for v in variants if v.times]


def left_out(variants):
    lines = [f"- {v.name}: {v.na}" for v in variants if v.na]
    return ("Left out:\n" + "\n".join(lines) + "\n") if lines else ""


def verdict(value, target, lower_is_better=True):
    if value is None:
        return "n/a"
    ok = value <= target if lower_is_better else value >= target
    return "met" if ok else "**not met**"


# ---------------------------------------------------------------- set-up

class Ctx:
    """What every experiment needs."""

    def __init__(self, a, strata, work, timer, help_text, t_start):
        self.a, self.strata, self.work, self.timer, self.t_start = a, strata, work, timer, t_start
        self.help = help_text
        self.has_rewrite = "--rewrite" in help_text
        m = re.search(r"--rewrite[^\[]*\[default: (\w+)\]", help_text, re.S)
        self.rewrite_default = m.group(1) if m else None
        self.has_stats = "--fast-stats" in help_text
        self.has_no_sc = "--no-short-circuit" in help_text
        self.cpu = None if a.cpu == "none" else a.cpu
        self.pin = ["taskset", "-c", self.cpu] if self.cpu is not None else []
        self.targets = []  # (figure, target, measured, verdict)
        self.summary = []

    def run_prefix(self, *opts):
        return self.pin + [self.strata, "run", *opts, "--"]

    @property
    def pin_desc(self):
        return (f"every command under `taskset -c {self.cpu}`" if self.cpu is not None
                else "no command pinned (`--cpu none`)")


def choose_cpu(want):
    if want == "none":
        return "none", None
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return want, None
    if int(want) in allowed:
        return want, None
    return str(allowed[0]), f"CPU {want} is not available to this process; pinned to CPU {allowed[0]} instead"


# ---------------------------------------------------------------- 1. getpid loops

def exp_getpid(c, libc_bin, loop_bin):
    a, n = c.a, c.a.getpid_n
    bins = {"getpid_libc": libc_bin, "getpid_loop": loop_bin}
    no_rw = None if c.has_rewrite else "strata run has no --rewrite option"
    no_sc = None if c.has_no_sc else "not yet available: strata run has no --no-short-circuit"
    dflt = (f"default --rewrite={c.rewrite_default}" if c.rewrite_default else
            "strata's default rewriting" if c.has_rewrite else "no --rewrite in this build")
    # (key, label, loop, strata options or None for native, note)
    configs = [
        ("native-libc", "native", "getpid_libc", None, None),
        ("native-loop", "native", "getpid_loop", None, None),
        ("off-null-libc", "--rewrite=off --ext null", "getpid_libc", ["--rewrite=off", "--ext", "null"], no_rw),
        ("off-null-loop", "--rewrite=off --ext null", "getpid_loop", ["--rewrite=off", "--ext", "null"], no_rw),
        ("null-libc", f"--ext null ({dflt})", "getpid_libc", ["--ext", "null"], None),
        ("null-loop", f"--ext null ({dflt})", "getpid_loop", ["--ext", "null"], None),
        ("null4-libc", "--ext null ×4", "getpid_libc", ["--ext", "null"] * 4, None),
        ("null16-libc", "--ext null ×16", "getpid_libc", ["--ext", "null"] * 16, None),
        ("map-libc", f"--ext {MAP}", "getpid_libc", ["--ext", MAP], None),
        ("map-loop", f"--ext {MAP}", "getpid_loop", ["--ext", MAP], None),
        ("map-nosc-libc", f"--ext {MAP} --no-short-circuit", "getpid_libc", ["--ext", MAP, "--no-short-circuit"], no_sc),
        ("map-nosc-loop", f"--ext {MAP} --no-short-circuit", "getpid_loop", ["--ext", MAP, "--no-short-circuit"], no_sc),
        ("none-libc", "no layer (`strata run --`)", "getpid_libc", [], None),
        ("none-loop", "no layer (`strata run --`)", "getpid_loop", [], None),
    ]
    variants, by = [], {}
    for key, label, loop, opts, note in configs:
        pre = c.pin if opts is None else c.run_prefix(*opts)
        for calls in (0, n):
            v = Variant(f"{loop}, {label} / {calls} calls", pre + [str(bins[loop]), str(calls)],
                        expect=f"{loop}: {calls} calls, {calls} consistent\n".encode(), note=note)
            if calls:
                v.smoke_argv = pre + [str(bins[loop]), "1000"]
                v.smoke_expect = f"{loop}: 1000 calls, 1000 consistent\n".encode()
            variants.append(v)
            by[(key, calls)] = v
    smoke(variants, "getpid")
    # a variant whose 0-call or N-call form failed is useless: leave out both
    for key, *_ in configs:
        v0, vn = by[(key, 0)], by[(key, n)]
        if v0.na and not vn.na:
            vn.na = "its 0-call run failed"
        elif vn.na and not v0.na:
            v0.na = "its N-call run failed"
    timed(variants, a.getpid_rounds, c.timer, "getpid", c.t_start)

    per = {}  # key -> (ns wall, ns CPU, start-up wall, N wall, N CPU)
    for key, *_ in configs:
        v0, vn = by[(key, 0)], by[(key, n)]
        if v0.med is None or vn.med is None:
            continue
        per[key] = ((vn.med - v0.med) / n * 1e9, (vn.cmed - v0.cmed) / n * 1e9, v0.med, vn.med, vn.cmed)

    def row(key, label, loop):
        nat = per.get("native-" + loop.split("_")[1])
        p = per.get(key)
        v0 = by[(key, 0)]
        if p is None:
            return f"| {loop} | {label} | n/a | | | | | | {by[(key, n)].na or v0.na or ''} |"
        ratio = added = cpu_rel = ""
        if nat and not key.startswith("native"):
            ratio = f"×{p[0] / nat[0]:.2f}"
            added = fmt_ns(p[0] - nat[0], True)
            cpu_rel = f"×{p[1] / nat[1]:.2f} / {fmt_ns(p[1] - nat[1], True)}"
        return (f"| {loop} | {label} | {fmt_time(p[2])} | {fmt_ns(p[0])} | {ratio} | {added} | "
                f"{fmt_ns(p[1])} | {cpu_rel} | |")

    head = ("| loop | variant | start-up (0 calls), wall | ns per call, wall | ratio to native | added per call | "
            "ns per call, CPU | CPU: ratio / added | note |\n|---|---|---|---|---|---|---|---|---|")
    groups = [
        ("One null layer (target: ≤ 1.15× native, ≤ 10 ns added)",
         ["native-libc", "off-null-libc", "null-libc", "native-loop", "off-null-loop", "null-loop"]),
        ("Per layer (target: slope ≤ 2 ns per layer)", ["null-libc", "null4-libc", "null16-libc"]),
        ("Unwanted calls: a map layer that does not want getpid (target: native; ns added reported)",
         ["map-libc", "map-loop", "map-nosc-libc", "map-nosc-loop"]),
        ("Short-circuit: getpid served in-process (target: ≤ 0.3× native)", ["none-libc", "map-libc", "none-loop"]),
    ]
    labels = {key: (label, loop) for key, label, loop, _, _ in configs}
    tables = []
    for title, keys in groups:
        tables.append(f"**{title}**\n\n{head}\n" + "\n".join(row(k, *labels[k]) for k in keys) + "\n")

    # slope over 1, 4, 16 layers
    pts = [(k, per[key][1]) for k, key in ((1, "null-libc"), (4, "null4-libc"), (16, "null16-libc")) if key in per]
    wpts = [(k, per[key][0]) for k, key in ((1, "null-libc"), (4, "null4-libc"), (16, "null16-libc")) if key in per]

    def fit(ps):
        if len(ps) < 2:
            return None, None
        mk = statistics.mean(k for k, _ in ps)
        my = statistics.mean(y for _, y in ps)
        sl = sum((k - mk) * (y - my) for k, y in ps) / sum((k - mk) ** 2 for k, _ in ps)
        return sl, my - sl * mk

    slope, icpt = fit(pts)
    wslope, _ = fit(wpts)
    slope_txt = ("n/a (fewer than two layer counts ran)" if slope is None else
                 f"{slope:.2f} ns per call per layer from CPU time (least squares over "
                 f"{[k for k, _ in pts]} layers, intercept {icpt:.1f} ns), {wslope:.2f} ns from wall time")

    def ratio_added(key, loop="libc", cpu=True):
        i = 1 if cpu else 0
        if key not in per or f"native-{loop}" not in per:
            return None, None
        return per[key][i] / per[f"native-{loop}"][i], per[key][i] - per[f"native-{loop}"][i]

    r1, d1 = ratio_added("null-libc")
    rl1, dl1 = ratio_added("null-loop", "loop")
    roff, doff = ratio_added("off-null-libc")
    rm, dm = ratio_added("map-libc")
    rml, dml = ratio_added("map-loop", "loop")
    rmn, dmn = ratio_added("map-nosc-libc")
    rmnl, dmnl = ratio_added("map-nosc-loop", "loop")
    rsc, _ = ratio_added("none-libc")
    rscm, _ = ratio_added("map-libc")
    t = c.targets
    t.append(("one null layer, getpid()", "≤ 1.15× native", None if r1 is None else f"×{r1:.2f}",
              verdict(r1, 1.15)))
    t.append(("one null layer, getpid(): ns added", "≤ 10 ns", fmt_ns(d1, True), verdict(d1, 10)))
    t.append(("one null layer, syscall(SYS_getpid)", "≤ 1.15× native / ≤ 10 ns",
              "n/a" if rl1 is None else f"×{rl1:.2f} / {fmt_ns(dl1, True)}",
              "n/a" if rl1 is None else ("met" if rl1 <= 1.15 and dl1 <= 10 else "**not met**")))
    t.append(("per layer (slope)", "≤ 2 ns", fmt_ns(slope), verdict(slope, 2)))
    for what, r, d in (("unwanted calls, getpid(), --no-short-circuit", rmn, dmn),
                       ("unwanted calls, syscall(SYS_getpid), --no-short-circuit", rmnl, dmnl)):
        t.append((what, "native (ns added reported)", "n/a" if r is None else f"×{r:.2f} / {fmt_ns(d, True)}", ""))
    t.append(("short-circuit, no layer, getpid()", "≤ 0.3× native", None if rsc is None else f"×{rsc:.2f}",
              verdict(rsc, 0.3)))
    t.append((f"short-circuit, --ext {MAP}, getpid()", "≤ 0.3× native", None if rscm is None else f"×{rscm:.2f}",
              verdict(rscm, 0.3)))
    c.summary.append("[getpid] ns/call CPU: " + ", ".join(f"{k}={per[k][1]:.1f}" for k in per)
                     + (f"; slope {slope:.2f} ns/layer" if slope is not None else ""))

    interp = []
    if r1 is not None and roff is not None:
        interp.append(f"With one null layer, a `getpid()` through a rewritten site costs ×{r1:.2f} of native "
                      f"({fmt_ns(d1, True)} per call, CPU), against ×{roff:.2f} ({fmt_ns(doff, True)}) with every "
                      f"call trapping (`--rewrite=off`): rewriting saves {doff - d1:.0f} ns per call.")
    if rl1 is not None:
        interp.append(f"Through `syscall(3)` (number in a register): ×{rl1:.2f}, {fmt_ns(dl1, True)}.")
    if rm is not None and rml is not None:
        interp.append(f"Under a map layer (which wants no getpid): `getpid()` ×{rm:.2f} ({fmt_ns(dm, True)}), "
                      f"`syscall(SYS_getpid)` ×{rml:.2f} ({fmt_ns(dml, True)}).")
    if rsc is not None:
        interp.append(f"With no layer, `getpid()` takes ×{rsc:.2f} of native.")
    return f"""## 1. getpid loops

{a.getpid_rounds} rounds; bench/getpid_libc.c and bench/getpid_loop.c built with `gcc -O2`;
{c.pin_desc}. Commands: `LOOP N` and `strata run OPTIONS -- LOOP N` for N = 0 and
N = {n}; ns per call = (median(N = {n}) − median(N = 0)) / {n}, from wall time and from CPU time
(user + system of the process tree). "added per call" is over the same loop natively.

{chr(10).join(tables)}
**Slope:** {slope_txt}.

**Interpretation:** {' '.join(interp) or 'Not enough variants ran.'}

{left_out(variants)}
<details><summary>raw times</summary>

{chr(10).join(raw_lines(variants))}
</details>
"""


# ---------------------------------------------------------------- 2. dd, traced

def count_lines(p):
    try:
        with open(p, "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def dd_ok(out, err):
    if b"200000+0 records out" not in err:
        return f"dd did not report 200000 records: {err[-200:]!r}"
    return None


def exp_dd(c):
    a = c.a
    tdir = c.work / "traces"
    tdir.mkdir(exist_ok=True)
    no_rw = None if c.has_rewrite else "strata run has no --rewrite option"
    no_strace = None if shutil.which("strace") else "strace not installed"
    files = {}

    def v(name, argv_of_file, note=None, slow=False):
        f = tdir / f"{len(files)}.txt"
        var = Variant(name, argv_of_file(f), expect=dd_ok, note=note)
        files[name] = f
        if slow:  # checked on a short dd first
            var.smoke_argv = argv_of_file(f)[:-1] + ["count=2000"]
            var.smoke_expect = None
        return var

    variants = [
        Variant("native", c.pin + DD, expect=dd_ok),
        v("strata run --trace -o FILE", lambda f: c.run_prefix("--trace", "-o", str(f)) + DD),
        v("strata run --rewrite=off --trace -o FILE", lambda f: c.run_prefix("--rewrite=off", "--trace", "-o", str(f)) + DD,
          no_rw),
        v("strace -f -o FILE", lambda f: c.pin + ["strace", "-f", "-o", str(f)] + DD, no_strace, slow=True),
    ]
    smoke(variants, "dd")
    timed(variants, a.dd_rounds, c.timer, "dd", c.t_start)
    nlines = {x.name: count_lines(files[x.name]) for x in variants[1:] if not x.na}
    base, cbase = variants[0].med, variants[0].cmed
    calls = nlines.get("strata run --trace -o FILE") or 400000
    lines = ["| variant | wall | ratio to native | CPU | CPU ratio | added per call (CPU) | trace lines (last run) |",
             "|---|---|---|---|---|---|---|"]
    for x in variants:
        if x.med is None:
            lines.append(f"| {x.name} | n/a | | | | | {x.na} |")
        elif x is variants[0]:
            lines.append(f"| {x.name} | {fmt_time(x.med)} | | {fmt_time(x.cmed)} | | | |")
        else:
            lines.append(f"| {x.name} | {fmt_time(x.med)} | ×{x.med / base:.2f} | {fmt_time(x.cmed)} | "
                         f"×{x.cmed / cbase:.2f} | {(x.cmed - cbase) / calls * 1e9:+.0f} ns | {nlines.get(x.name, '')} |")
    tr = variants[1]
    r = None if tr.med is None or base is None else tr.med / base
    c.targets.append(("tracing dd bs=1 (`--trace -o FILE`), wall", "≤ 1.5× native",
                      None if r is None else f"×{r:.2f}", verdict(r, 1.5)))
    c.summary.append("[dd] " + ", ".join(f"{x.name}={fmt_time(x.med)}" for x in variants))
    interp = "strata --trace did not run."
    if r is not None:
        interp = (f"Tracing every call costs ×{r:.2f} of native in wall time, "
                  f"{(tr.cmed - cbase) / calls * 1e9:.0f} ns of CPU per call over native ({calls} calls)")
        off = variants[2]
        if off.med is not None:
            interp += (f"; with every call trapping (`--rewrite=off`) ×{off.med / base:.2f}, so rewriting saves "
                       f"{(off.cmed - tr.cmed) / calls * 1e9:.0f} ns of CPU per traced call")
        st = variants[3]
        if st.med is not None:
            interp += f"; strace -f ×{st.med / base:.1f}"
        interp += "."
    return f"""## 2. Tracing every call: `{' '.join(DD)}`

{a.dd_rounds} rounds, {c.pin_desc}. FILE is a file in a temporary directory
(overwritten each run). About 400,000 read/write calls; "added per call" divides the CPU time
over native by the number of lines strata's trace wrote ({calls}).

{chr(10).join(lines)}

**Interpretation:** {interp}

{left_out(variants)}
<details><summary>raw times</summary>

{chr(10).join(raw_lines(variants))}
</details>
"""


# ---------------------------------------------------------------- 3. python3 start-up

def exp_python(c):
    a = c.a
    no_rw = None if c.has_rewrite else "strata run has no --rewrite option"
    py = [PY, "-c", "pass"]
    empty = b""
    variants = [
        Variant("native", c.pin + py, expect=empty),
        Variant("strata run --ext null", c.run_prefix("--ext", "null") + py, expect=empty),
        Variant("strata run --rewrite=off --ext null", c.run_prefix("--rewrite=off", "--ext", "null") + py,
                expect=empty, note=no_rw),
        Variant("strata run -- (no layer)", c.run_prefix() + py, expect=empty),
    ]
    smoke(variants, "python")
    timed(variants, a.python_rounds, c.timer, "python", c.t_start)
    base, cbase = variants[0].med, variants[0].cmed
    lines = ["| variant | wall | ratio to native | added | CPU | CPU ratio | CPU added |", "|---|---|---|---|---|---|---|"]
    for x in variants:
        if x.med is None:
            lines.append(f"| {x.name} | n/a | | {x.na} | | | |")
        elif x is variants[0]:
            lines.append(f"| {x.name} | {fmt_time(x.med)} | | | {fmt_time(x.cmed)} | | |")
        else:
            lines.append(f"| {x.name} | {fmt_time(x.med)} | ×{x.med / base:.2f} | {(x.med - base) * 1e3:+.1f} ms | "
                         f"{fmt_time(x.cmed)} | ×{x.cmed / cbase:.2f} | {(x.cmed - cbase) * 1e3:+.1f} ms |")
    c.summary.append("[python] " + ", ".join(f"{x.name}={fmt_time(x.med)}" for x in variants))
    nl, off = variants[1], variants[2]
    interp = "Not all variants ran."
    if nl.med is not None and base:
        interp = f"`python3 -c pass` takes ×{nl.med / base:.2f} of native under one null layer"
        if off.med is not None:
            interp += (f", ×{off.med / base:.2f} with every call trapping: rewriting "
                       + ("pays for itself at start-up" if nl.med < off.med else "costs more than it saves here")
                       + f" ({(nl.med - off.med) * 1e3:+.1f} ms wall with rewriting)")
        interp += "."
    return f"""## 3. Start-up: `{PY} -c pass`

{a.python_rounds} rounds, {c.pin_desc}. Start-up includes loading the program
and, under strata, strata-rt, the eager rewriting of libc and ld.so, and a few hundred calls.

{chr(10).join(lines)}

**Interpretation:** {interp}

{left_out(variants)}
<details><summary>raw times</summary>

{chr(10).join(raw_lines(variants))}
</details>
"""


# ---------------------------------------------------------------- 4. trap share

def parse_stats(err):
    """Sums every `strata: fast path: ...` line (one per process). Reads the first clause
    (up to `;`) as counts of calls: the one labelled `trapped` is the trap count, every other
    one a way of being served fast (`N calls fast`, or `N calls entered strata directly, M
    skipped it`); `N sites patched|rewritten` and `N declined` are anywhere on the line.
    Returns (processes, fast, trapped, sites, declined, {fast label: count}) or None."""
    procs, fast, trapped, sites, declined, kinds = 0, 0, 0, 0, 0, {}
    for line in err.decode(errors="replace").splitlines():
        m = STATS_RE.search(line)
        if not m:
            continue
        text = m.group(0).split(":", 1)[1]
        first = text.split(";", 1)[0]
        got_trapped, got_fast = None, {}
        for num, label in re.findall(r"(\d+) ([^,;(]+)", first):
            label = label.strip()
            if label.startswith("trapped"):
                got_trapped = int(num)
            elif not label.startswith("site") and not label.startswith("declined"):
                got_fast[re.sub(r"^calls? ", "", label)] = int(num)
        if got_trapped is None or not got_fast:
            continue
        procs += 1
        trapped += got_trapped
        fast += sum(got_fast.values())
        for k, x in got_fast.items():
            kinds[k] = kinds.get(k, 0) + x
        ms = re.search(r"(\d+) sites? (?:patched|rewritten)", text)
        sites += int(ms.group(1)) if ms else 0
        md = re.search(r"(\d+) (?:sites? )?declined", text)
        declined += int(md.group(1)) if md else 0
    return (procs, fast, trapped, sites, declined, kinds) if procs else None


def exp_share(c, libc_bin, loop_bin):
    root = Path(c.a.root)
    tfile = c.work / "share-trace.txt"
    rows = [
        ("dd bs=1 count=200000", ["--trace", "-o", str(tfile)], DD),
        ("dd bs=1 count=200000", ["--ext", "null"], DD),
        ("python3 -c pass", ["--ext", "null"], [PY, "-c", "pass"]),
        ("python3 -c pass", [], [PY, "-c", "pass"]),
        ("python3 -S -c 'import json, email.parser, …'", ["--ext", "null"], [PY, "-S", "-c", f"import {PY_IMPORTS}"]),
        ("tar cf /dev/null crates/", ["--ext", "null"], ["tar", "cf", "/dev/null", "-C", str(root), "crates"]),
        ("ls -lR crates/", ["--ext", "null"], ["ls", "-lR", str(root / "crates")]),
        ("sh -c: an echo, tr, sort, wc pipeline", ["--ext", "null"], ["sh", "-c", "echo b a | tr ' ' '\\n' | sort | wc -l"]),
        (f"getpid_libc {c.a.getpid_n}", ["--ext", "null"], [str(libc_bin), str(c.a.getpid_n)]),
        (f"getpid_loop {c.a.getpid_n}", ["--ext", "null"], [str(loop_bin), str(c.a.getpid_n)]),
    ]
    lines = ["| program | strata options | processes reporting | calls fast | trapped | trap share (target < 1%) | "
             "sites rewritten / declined | note |", "|---|---|---|---|---|---|---|---|"]
    shares = []
    for name, opts, argv in rows:
        optxt = " ".join(opts).replace(str(tfile), "FILE") or "(none)"
        if not c.has_stats:
            lines.append(f"| {name} | {optxt} | n/a | n/a | n/a | n/a | n/a | strata run has no --fast-stats |")
            continue
        st, out, err = sh(c.run_prefix("--fast-stats", *opts) + argv, timeout=600)
        s = parse_stats(err)
        if st != 0:
            lines.append(f"| {name} | {optxt} | | | | n/a | | exit {st}: "
                         f"`{err.decode(errors='replace').strip()[-120:]}` |")
        elif s is None:
            lines.append(f"| {name} | {optxt} | n/a | n/a | n/a | n/a | n/a | no `strata: fast path:` line on stderr |")
        else:
            procs, fast, trapped, sites, declined, kinds = s
            share = trapped / (fast + trapped) if fast + trapped else 0.0
            shares.append((name, optxt, share))
            detail = "" if len(kinds) < 2 else " (" + ", ".join(f"{x} {k}" for k, x in kinds.items()) + ")"
            lines.append(f"| {name} | {optxt} | {procs} | {fast}{detail} | {trapped} | {share * 100:.2f}% | "
                         f"{sites} / {declined} | |")
        log(f"share: {name} {optxt}: {lines[-1]}")
    worst = max(shares, key=lambda x: x[2]) if shares else None
    c.targets.append(("trap share, real programs", "< 1% each",
                      "n/a" if worst is None else f"worst {worst[2] * 100:.2f}% ({worst[0]}, {worst[1]})",
                      "n/a" if worst is None else ("met" if worst[2] < 0.01 else "**not met**")))
    c.summary.append("[share] " + ("n/a" if not shares else ", ".join(f"{n} {o}: {s * 100:.2f}%" for n, o, s in shares)))
    return f"""## 4. Trap share

One run each, `strata run --fast-stats OPTIONS -- PROGRAM`, {c.pin_desc}; the share is
trapped / (fast + trapped), summed over every process that printed a `strata: fast path:` line.

{chr(10).join(lines)}
"""


# ---------------------------------------------------------------- 5. floors

def exp_floor(c, root):
    out = []
    sud = c.work / "sud_floor"
    rc = subprocess.run(["gcc", "-O2", "-Wall", "-o", str(sud), str(root / "bench/sud_floor.c")],
                        capture_output=True)
    if rc.returncode == 0:
        vals = []
        for _ in range(5):
            st, o, _e = sh(c.pin + [str(sud), str(c.a.getpid_n)])
            try:
                vals.append(float(o.decode().strip()))
            except ValueError:
                pass
        if vals:
            out.append(f"A bare Syscall User Dispatch round trip (bench/sud_floor.c, getpid through a trap "
                       f"into a minimal handler) costs {statistics.median(vals):.0f} ns per call (median of "
                       f"{len(vals)} runs of {c.a.getpid_n}: {', '.join(f'{x:.0f}' for x in vals)}).")
    ff = root / "bench/fast_floor.c"
    if ff.exists():
        exe = c.work / "fast_floor"
        p = subprocess.run(["gcc", "-O2", "-Wall", "-o", str(exe), str(ff)], capture_output=True)
        if p.returncode != 0:
            out.append(f"bench/fast_floor.c does not build:\n```\n{p.stderr.decode(errors='replace')[-1500:]}\n```")
        else:
            st, o, e = sh(c.pin + [str(exe)], timeout=600)
            out.append(f"bench/fast_floor.c (exit {st}), as it reports:\n```\n"
                       f"{(o + e).decode(errors='replace').strip()}\n```")
    else:
        out.append("bench/fast_floor.c does not exist yet (the design's micro-benchmarks): not run.")
    return "## 5. Floors\n\n" + "\n\n".join(out) + "\n"


# ---------------------------------------------------------------- main

def main():
    a = parse_args()
    root = Path(a.root)
    only = {x.strip() for x in a.only.split(",") if x.strip()}
    if not os.access(a.strata, os.X_OK):
        sys.exit(f"{a.strata}: not found (cargo build --release)")
    cpu_note = None
    a.cpu, cpu_note = choose_cpu(a.cpu)
    if a.cpu != "none" and not shutil.which("taskset"):
        a.cpu, cpu_note = "none", "taskset is not installed: nothing is pinned"
    command = a.command or shlex.join(["python3", "bench/fast.py"] + sys.argv[1:])
    timer = Timer(a.timer)
    work = Path(tempfile.mkdtemp(prefix="strata-fast."))
    orig = Path(a.strata)
    st = orig.stat()
    built = datetime.datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds")
    (work / "bin").mkdir()
    digests = []
    for name in (orig.name, "strata-rt"):
        src = orig.parent / name
        if src.exists():
            shutil.copy2(src, work / "bin" / name)
            digests.append(f"{name} sha256 {hashlib.sha256(src.read_bytes()).hexdigest()[:16]}")
    strata = str(work / "bin" / orig.name)
    commit = sh(["git", "-C", str(root), "describe", "--always", "--dirty"])[1].decode().strip() or "unknown"
    t_start = time.monotonic()
    load_before = open("/proc/loadavg").read().split()[:3]
    help_text = sh([strata, "run", "--help"])[1].decode(errors="replace")
    c = Ctx(a, strata, work, timer, help_text, t_start)
    sections = []
    try:
        libc_bin, loop_bin = work / "getpid_libc", work / "getpid_loop"
        for exe, src in ((libc_bin, "bench/getpid_libc.c"), (loop_bin, "bench/getpid_loop.c")):
            subprocess.run(["gcc", "-O2", "-Wall", "-o", str(exe), str(root / src)], check=True)

        for key, fn in (("getpid", lambda: exp_getpid(c, libc_bin, loop_bin)), ("dd", lambda: exp_dd(c)),
                        ("python", lambda: exp_python(c)), ("share", lambda: exp_share(c, libc_bin, loop_bin)),
                        ("floor", lambda: exp_floor(c, root))):
            if key not in only:
                continue
            try:
                sections.append(fn())
            except Exception as e:  # one broken experiment must not lose the others
                log(f"{key}: failed: {e!r}")
                sections.append(f"## {key}\n\n**failed**: `{e!r}`\n")
        elapsed = time.monotonic() - t_start
        load_after = open("/proc/loadavg").read().split()[:3]

        cpu_model = ""
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"):
                cpu_model = l.split(":", 1)[1].strip()
                break
        tools = []
        for t, argv in [("strace", ["strace", "-V"]), ("dd", ["dd", "--version"]), ("python", [PY, "--version"]),
                        ("gcc", ["gcc", "--version"]), ("glibc", ["ldd", "--version"])]:
            if shutil.which(argv[0]):
                o = sh(argv)
                mv = re.search(r"\d+\.\d+(\.\d+)?", (o[1] + o[2]).decode(errors="replace"))
                tools.append(f"{t} {mv.group(0) if mv else '?'}")
            else:
                tools.append(f"{t}: not installed")
        flags = open("/proc/cpuinfo").read()
        vec = [f for f in ("avx", "avx2", "avx512f", "fsrm") if re.search(rf"\b{f}\b", flags)]
        today = datetime.date.today().isoformat()
        out = Path(a.out) if a.out else root / "bench" / "results" / f"{today}-fastpath.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        targets = ["| figure | target | measured | |", "|---|---|---|---|"] + [
            f"| {f} | {t} | {m if m is not None else 'n/a'} | {v} |" for f, t, m, v in c.targets]
        rewrite_line = ("strata run has no `--rewrite` option: every strata row traps (no fast path in this build)"
                        if not c.has_rewrite else
                        f"`--rewrite` default: {c.rewrite_default or 'not stated in --help'}")
        report = f"""# Fast path: rewritten syscall sites — {today}

Medians of interleaved rounds (every round runs each variant of an experiment once, in an order
rotated from round to round); ratios to native. Raw times at the end of each section.
Targets from docs/design/fast-path.md §13.

{chr(10).join(targets)}

{chr(10).join(sections)}
## Machine
- load average (1/5/15 min) before: {' '.join(load_before)}, after: {' '.join(load_after)}
- nproc: {os.cpu_count()}; CPU: {cpu_model or 'unknown'} ({', '.join(vec) or 'no AVX'}); uname -r: {platform.release()}
- pinning: {c.pin_desc}{f' ({cpu_note})' if cpu_note else ''}
- strata: {orig} (built {built}; {', '.join(digests)}), copied to a temporary directory for the
  run; source tree {commit} when the run started; {rewrite_line}; `--fast-stats`:
  {'yes' if c.has_stats else 'no'}; `--no-short-circuit`: {'yes' if c.has_no_sc else 'no'}
- {'; '.join(tools)}
- timing: {timer.desc}; whole run {elapsed:.0f}s

## Command
```
{command}
```
"""
        out.write_text(report)
        log(f"\nwrote {out}")
        print("\n".join(c.summary))
        print("\n".join(targets))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
