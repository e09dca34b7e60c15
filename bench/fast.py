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
   - calls no layer wants: `--ext map:/tmp=/tmp` (a layer that does not want getpid) and
     `strata run --` (no layer), both loops. A getpid() site then takes the *native*
     trampoline (the call is issued from strata's text, no strata code runs); a syscall(3)
     site (number in a register) enters strata, which issues the call for nobody.
   - short-circuit: `--ext ids` (the built-in extension that serves getpid and gettid
     in-process, without entering the kernel), both loops; the target is on getpid()
   - dispatch-on floor, no strata: `bench/sud_on.c exempt|allow N`, getpid_libc's loop with
     Syscall User Dispatch on and nothing trapping (calls from the exempt range / from
     outside it with the selector at ALLOW)
   The targets table gives, for the one-null-layer and map rows, the ratio to native and the
   ns added over the dispatch-on floor (below, 5.: from the exempt range / with ALLOW).
2. Tracing every call of `dd if=/dev/zero of=/dev/null bs=1 count=200000`: native,
   `strata run --trace -o FILE`, the same with `--rewrite=off`, `strace -f -o FILE`.
3. Start-up: `python3 -c pass` natively, under `strata run --ext null` and with
   `--rewrite=off`.
4. Trap share: each real program (ls -la, tar cz, python3 -c pass, a bash pipeline, gcc
   compiling hello.c, dd; node -e and java -version when installed) once with
   `--fast-stats`, which prints one `strata: fast path: ...` line per process at exit (calls
   that entered strata directly, calls that skipped it, `M trapped`, and the sites rewritten
   and declined); the share is trapped / all calls. n/a when strata does not accept the flag.
5. Floors, each built with `gcc -O2` and run pinned: bench/sud_on.c (getpid() natively and
   with Syscall User Dispatch on, nothing trapping: called from outside the exempt range with
   the selector at ALLOW, and from inside it, as strata issues its calls; the kernel's slow
   entry path for every call, the least any interposer that keeps dispatch on as its
   catch-all can add), bench/rsb_depth.c (getpid issued at call depth 0, 4 and 8: returns after a system
   call mispredict on a machine whose return stack buffer is flushed on kernel entry),
   bench/sud_floor.c (a bare dispatch trap round trip) and bench/fast_floor.c (the design's
   micro-benchmarks: flags, xmm and fxsave/xsave save and restore).

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

import benchlib

PY = "/usr/bin/python3"  # the system python (a pyenv shim would add a shell script)
PY_IMPORTS = "json, email.parser, http.client, xml.dom.minidom, argparse, decimal, unittest"
DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=200000"]
MAP = "map:/tmp=/tmp"  # a layer that wants path calls only, never getpid
STATS_RE = re.compile(r"strata: fast path:.*")


def parse_args():
    ap = benchlib.parser(__doc__)
    ap.add_argument("--only", default="getpid,dd,python,share,floor",
                    help="experiments to run (default getpid,dd,python,share,floor)")
    ap.add_argument("--getpid-n", type=int, default=1_000_000, help="calls per loop run (default 1000000)")
    ap.add_argument("--getpid-rounds", type=int, default=21, help="rounds of the getpid experiment (default 21)")
    ap.add_argument("--dd-rounds", type=int, default=5, help="rounds of the dd experiment (default 5; strace is slow)")
    ap.add_argument("--python-rounds", type=int, default=31, help="rounds of the python3 start-up (default 31)")
    ap.add_argument("--floor-runs", type=int, default=9,
                    help="in-process runs of bench/sud_on.c, section 5 (default 9)")
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
        self.floor = None  # bench/sud_on.c's in-process results, measured once (dispatch_floor)
        self.floor_used = None  # {ex, allow, src}: the floor the targets table subtracts
        self.cpu = None if a.cpu == "none" else a.cpu
        self.pin = ["taskset", "-c", self.cpu] if self.cpu is not None else []
        self.targets = []  # (figure, target, ratio to native, added over native, over the floor, verdict)
        self.summary = []
        self.reading = []  # sentences for the report's reading paragraph

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
    bins = {"getpid_libc": [libc_bin], "getpid_loop": [loop_bin]}
    # the dispatch-on floor, timed like the loops and in the same rounds: bench/sud_on.c MODE N is
    # getpid_libc's loop with Syscall User Dispatch on (no strata)
    sud_exe, sud_err = build(c, "sud_on")
    for mode in ("exempt", "allow"):
        bins[f"sud_on {mode}"] = [sud_exe or "sud_on", mode]
    no_rw = None if c.has_rewrite else "strata run has no --rewrite option"
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
        ("none-libc", "no layer (`strata run --`)", "getpid_libc", [], None),
        ("none-loop", "no layer (`strata run --`)", "getpid_loop", [], None),
        ("ids-libc", "--ext ids", "getpid_libc", ["--ext", "ids"], None),
        ("ids-loop", "--ext ids", "getpid_loop", ["--ext", "ids"], None),
        ("sud-ex", "dispatch on, calls from the exempt range (no strata)", "sud_on exempt", None, sud_err),
        ("sud-allow", "dispatch on, selector ALLOW (no strata)", "sud_on allow", None, sud_err),
    ]
    variants, by = [], {}
    for key, label, loop, opts, note in configs:
        pre = c.pin if opts is None else c.run_prefix(*opts)
        for calls in (0, n):
            prog = [str(x) for x in bins[loop]]
            v = Variant(f"{loop}, {label} / {calls} calls", pre + prog + [str(calls)],
                        expect=f"{loop}: {calls} calls, {calls} consistent\n".encode(), note=note)
            if calls:
                v.smoke_argv = pre + prog + ["1000"]
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
        nat = per.get("native-loop" if loop == "getpid_loop" else "native-libc")
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
        ("Calls no layer wants (target: native, ns added reported): getpid() takes the native trampoline "
         "(issued from strata's text, no strata code runs); syscall(3) enters strata",
         ["map-libc", "none-libc", "map-loop", "none-loop"]),
        ("Short-circuit: `--ext ids` serves getpid in-process (target: ≤ 0.3× native, getpid())",
         ["ids-libc", "ids-loop"]),
        ("Dispatch-on floor: getpid_libc's loop in bench/sud_on.c with Syscall User Dispatch on, nothing "
         "trapping, no strata (ratio and added: over native getpid_libc)", ["native-libc", "sud-ex", "sud-allow"]),
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

    # ns getpid() takes longer with dispatch on: issued from the exempt range (how strata issues every call:
    # from its own text) and from outside it with the selector at ALLOW. From the sud_on rows above
    # (timed like the strata rows, in the same rounds); else from sud_on's own in-process runs.
    fx, fa = ratio_added("sud-ex")[1], ratio_added("sud-allow")[1]
    floor_src = "section 1: bench/sud_on.c's loop timed like the others, in the same rounds, CPU time"
    if fx is None or fa is None:
        fl = dispatch_floor(c)
        fx, fa = fl.get("exadded"), fl.get("added")
        floor_src = "section 5: bench/sud_on.c's own in-process timing"
    c.floor_used = None if fx is None else {"ex": fx, "allow": fa, "src": floor_src}
    t = c.targets

    def over_txt(d):
        return "n/a" if fx is None else f"{fmt_ns(d - fx, True)} / {fmt_ns(d - fa, True)}"

    def target(figure, target_txt, key, loop, ratio_max=None, added_max=None, floor=True):
        r, d = ratio_added(key, loop)
        if r is None:
            t.append((figure, target_txt, "n/a", "n/a", "n/a" if floor else "", "n/a (did not run)"))
            return None, None
        misses = []
        if ratio_max is not None and r > ratio_max:
            misses.append(f"×{r:.2f} > ×{ratio_max}")
        if added_max is not None and d > added_max:
            misses.append(f"{d:+.0f} ns > {added_max} ns")
        t.append((figure, target_txt, f"×{r:.2f}", fmt_ns(d, True), over_txt(d) if floor else "",
                  "met" if not misses else "**not met** (" + ", ".join(misses) + ")"))
        return r, d

    r1, d1 = target("one null layer, `getpid()`", "≤ 1.15× native, ≤ 10 ns added", "null-libc", "libc", 1.15, 10)
    rl1, dl1 = target("one null layer, `syscall(SYS_getpid)`", "≤ 1.15× native, ≤ 10 ns added", "null-loop", "loop",
                      1.15, 10)
    t.append(("per layer (slope over 1, 4, 16 null layers)", "≤ 2 ns per layer", "",
              "n/a" if slope is None else f"{slope:.2f} ns per layer", "",
              "n/a" if slope is None else "met" if slope <= 2 else f"**not met** ({slope:.2f} ns > 2 ns)"))
    rm, dm = target(f"calls no layer wants: `--ext {MAP}`, `getpid()` (native trampoline)",
                    "native (met within 10 ns)", "map-libc", "libc", None, 10)
    rml, dml = target(f"calls no layer wants: `--ext {MAP}`, `syscall(SYS_getpid)` (enters strata)",
                      "native (met within 10 ns)", "map-loop", "loop", None, 10)
    rsc, dsc = target("short-circuit: `--ext ids`, `getpid()`", "≤ 0.3× native", "ids-libc", "libc", 0.3, None,
                      floor=False)
    roff, doff = ratio_added("off-null-libc")
    rn, dn = ratio_added("none-libc")
    rnl, dnl = ratio_added("none-loop", "loop")
    rscl, _ = ratio_added("ids-loop", "loop")
    c.summary.append("[getpid] ns/call CPU: " + ", ".join(f"{k}={per[k][1]:.1f}" for k in per)
                     + (f"; slope {slope:.2f} ns/layer" if slope is not None else "")
                     + (f"; dispatch-on floor exempt range +{fx:.1f} ns, ALLOW +{fa:.1f} ns" if fx is not None else ""))

    def over_floor(d):
        return "" if fx is None else f", {fmt_ns(d - fx, True)} over the dispatch-on floor"

    interp = []
    if fx is not None:
        interp.append(f"The dispatch-on floor ({floor_src}; last table): with Syscall User Dispatch on and "
                      f"nothing trapping, `getpid()` takes {fmt_ns(fx, True)} longer than natively when issued from "
                      f"the exempt range, as strata issues every call (from its own text), and {fmt_ns(fa, True)} "
                      f"when issued from outside it with the selector at ALLOW. \"Over the dispatch-on floor\" "
                      f"below is over the exempt-range figure.")
    if r1 is not None:
        txt = (f"With one null layer, a `getpid()` through a rewritten site costs ×{r1:.2f} of native "
               f"({fmt_ns(d1, True)} per call, CPU{over_floor(d1)})")
        if roff is not None:
            txt += (f", against ×{roff:.2f} ({fmt_ns(doff, True)}) with every call trapping (`--rewrite=off`): "
                    f"rewriting saves {doff - d1:.0f} ns per call")
        interp.append(txt + ".")
    if rl1 is not None:
        interp.append(f"Through `syscall(3)` (number in a register): ×{rl1:.2f}, {fmt_ns(dl1, True)}"
                      f"{over_floor(dl1)}.")
    if rm is not None:
        interp.append(f"Under a map layer (which wants no getpid) `getpid()` takes the native trampoline: "
                      f"×{rm:.2f} ({fmt_ns(dm, True)}{over_floor(dm)})"
                      + (f"; with no layer at all ×{rn:.2f} ({fmt_ns(dn, True)})" if rn is not None else "") + ".")
    if rml is not None:
        interp.append(f"`syscall(SYS_getpid)` under the map layer enters strata (the number is only known at run "
                      f"time): ×{rml:.2f} ({fmt_ns(dml, True)}{over_floor(dml)})"
                      + (f"; with no layer ×{rnl:.2f}" if rnl is not None else "") + ".")
    if rsc is not None:
        interp.append(f"`--ext ids` serves `getpid()` in-process at ×{rsc:.2f} of native ({fmt_ns(dsc, True)})"
                      + (f", `syscall(SYS_getpid)` at ×{rscl:.2f}" if rscl is not None else "") + ".")
    if r1 is not None:
        nat = per["native-libc"][1]
        txt = f"Rewriting brings a `getpid()` through one null layer to {per['null-libc'][1]:.0f} ns (native {nat:.0f} ns"
        txt += f", every call trapping {per['off-null-libc'][1]:.0f} ns)" if "off-null-libc" in per else ")"
        if fx is not None:
            txt += (f": of the {d1:.0f} ns it adds, {fx:.0f} ns is the dispatch-on floor (what a call issued from "
                    f"an exempt range costs more with dispatch on) and {d1 - fx:.0f} ns is strata's own trampoline, "
                    f"stack and null layer")
            if fx > 10:
                txt += (f"; the ≤ 10 ns / ≤ 1.15× target is out of reach on this machine for any interposer that "
                        f"keeps dispatch on, since the floor alone is {fx:.0f} ns (×{(nat + fx) / nat:.2f})")
        c.reading.append(txt + ".")
    if slope is not None:
        c.reading.append(f"Each further null layer adds {slope:.1f} ns per call (target ≤ 2 ns).")
    if rm is not None:
        c.reading.append(f"A call no layer wants costs, through a `getpid()` site (native trampoline), "
                         f"{fmt_ns(dm, True)} over native"
                         + (f" ({fmt_ns(dm - fx, True)} over the floor)" if fx is not None else "")
                         + (f", and through `syscall(3)`, which enters strata, {fmt_ns(dml, True)}"
                            + (f" ({fmt_ns(dml - fx, True)} over the floor)" if fx is not None else "")
                            if dml is not None else "") + ".")
    if rsc is not None:
        c.reading.append(f"The short-circuit (`--ext ids`) serves `getpid()` at ×{rsc:.2f} of native "
                         f"({'meets' if rsc <= 0.3 else 'misses'} ≤ 0.3×).")
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
        # Every call through one layer that prints nothing: what catching
        # the calls costs before any line is formatted or written.
        Variant("strata run --ext null (no output)", c.run_prefix("--ext", "null") + DD, expect=dd_ok),
    ]
    smoke(variants, "dd")
    timed(variants, a.dd_rounds, c.timer, "dd", c.t_start)
    nlines = {x.name: count_lines(files[x.name]) for x in variants[1:] if not x.na and x.name in files}
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
                      "n/a" if r is None else f"×{r:.2f} (CPU ×{tr.cmed / cbase:.2f})",
                      "" if r is None else f"{(tr.cmed - cbase) / calls * 1e9:+.0f} ns per call (CPU)", "",
                      "n/a" if r is None else "met" if r <= 1.5 else f"**not met** (×{r:.2f} > ×1.5)"))
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
        null = variants[4]
        if null.med is not None:
            interp += (f". The same calls through one null layer, with no line at all, cost ×{null.med / base:.2f} "
                       f"({(null.cmed - cbase) / calls * 1e9:.0f} ns of CPU per call): the rest, "
                       f"{(tr.cmed - null.cmed) / calls * 1e9:.0f} ns per call, is formatting the line and writing it out")
        interp += "."
        c.reading.append(f"Tracing every call of dd bs=1 costs ×{r:.2f} of native (target ≤ 1.5×), "
                         f"{(tr.cmed - cbase) / calls * 1e9:.0f} ns of CPU per traced call"
                         + (f", against ×{off.med / base:.2f} with every call trapping" if off.med is not None else "")
                         + (f"; catching the same calls with one null layer and no output costs ×"
                            f"{variants[4].med / base:.2f}" if variants[4].med is not None else "")
                         + ".")
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
    hello = c.work / "hello.c"
    hello.write_text('#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n')
    null = ["--ext", "null"]
    # (program, strata options, argv, a real program (counts for the target)?, note if left out)
    rows = [
        ("ls -la /usr/bin", null, ["ls", "-la", "/usr/bin"], True),
        ("tar czf ARCHIVE crates/ (without target/; gzip as a child)", null,
         ["tar", "czf", str(c.work / "share.tgz"), "--exclude=target", "-C", str(root), "crates"], True),
        ("python3 -c pass", null, [PY, "-c", "pass"], True),
        ("python3 -c pass", [], [PY, "-c", "pass"], True),
        ("python3 -S -c 'import json, email.parser, …'", null, [PY, "-S", "-c", f"import {PY_IMPORTS}"], True),
        ("bash -c: a seq, sort, head, wc pipeline", null,
         ["bash", "-c", "seq 1 20000 | sort -rn | head -3 | wc -l"], True),
        ("gcc -O2 hello.c (cc1, as, collect2, ld)", null, ["gcc", "-O2", "-o", str(c.work / "hello"), str(hello)], True),
        ("dd bs=1 count=200000", ["--trace", "-o", str(tfile)], DD, True),
        ("dd bs=1 count=200000", null, DD, True),
        ("node -e 'console.log(1 + 1)'", null, ["node", "-e", "console.log(1 + 1)"], True),
        ("java -version", null, ["java", "-version"], True),
        (f"getpid_libc {c.a.getpid_n} (not a real program)", null, [str(libc_bin), str(c.a.getpid_n)], False),
        (f"getpid_loop {c.a.getpid_n} (not a real program)", null, [str(loop_bin), str(c.a.getpid_n)], False),
    ]
    lines = ["| program | strata options | `fast path` lines | calls through rewritten sites | trapped | "
             "trap share (target < 1%) | sites rewritten / declined | wall (one run) | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    shares = []
    for name, opts, argv, real in rows:
        optxt = " ".join(opts).replace(str(tfile), "FILE") or "(none)"
        if not shutil.which(argv[0]):
            lines.append(f"| {name} | {optxt} | | | | n/a | | | {argv[0]} is not installed: skipped |")
            continue
        if not c.has_stats:
            lines.append(f"| {name} | {optxt} | n/a | n/a | n/a | n/a | n/a | strata run has no --fast-stats |")
            continue
        t0 = time.perf_counter()
        st, out, err = sh(c.run_prefix("--fast-stats", *opts) + argv, timeout=600)
        wall = fmt_time(time.perf_counter() - t0)
        s = parse_stats(err)
        if st != 0:
            lines.append(f"| {name} | {optxt} | | | | n/a | | {wall} | exit {st}: "
                         f"`{err.decode(errors='replace').strip()[-120:]}` |")
        elif s is None:
            lines.append(f"| {name} | {optxt} | n/a | n/a | n/a | n/a | n/a | {wall} | "
                         f"no `strata: fast path:` line on stderr |")
        else:
            procs, fast, trapped, sites, declined, kinds = s
            share = trapped / (fast + trapped) if fast + trapped else 0.0
            if real:
                shares.append((name, optxt, share, trapped, fast + trapped))
            detail = "" if len(kinds) < 2 else " (" + ", ".join(f"{x} {k}" for k, x in kinds.items()) + ")"
            lines.append(f"| {name} | {optxt} | {procs} | {fast}{detail} | {trapped} | "
                         f"{'**' if share >= 0.01 else ''}{share * 100:.2f}%{'**' if share >= 0.01 else ''} | "
                         f"{sites} / {declined} | {wall} | |")
        log(f"share: {name} {optxt}: {lines[-1]}")
    worst = max(shares, key=lambda x: x[2]) if shares else None
    over = [x for x in shares if x[2] >= 0.01]
    c.targets.append(("trap share, real programs (section 4)", "< 1% each",
                      "", "n/a" if worst is None else f"worst {worst[2] * 100:.2f}% ({worst[0]})", "",
                      "n/a" if worst is None else "met" if not over else
                      f"**not met** ({len(over)} of {len(shares)} runs at ≥ 1%)"))
    if shares:
        tr_counts = [x[3] for x in shares]
        c.reading.append(
            f"Trap share: {len(shares) - len(over)} of {len(shares)} real-program runs stay under 1%"
            + (f"; over it: " + ", ".join(f"{x[0]} with {'no layer' if x[1] == '(none)' else x[1]} "
                                          f"{x[2] * 100:.1f}%" for x in over) if over else "")
            + (f". Trapped calls per run: {min(tr_counts)} to {max(tr_counts)}, against "
               f"{min(x[4] for x in shares)} to {max(x[4] for x in shares)} calls in all"
               if tr_counts else "")
            + ".")
    c.summary.append("[share] " + ("n/a" if not shares else ", ".join(f"{x[0]} {x[1]}: {x[2] * 100:.2f}%" for x in shares)))
    return f"""## 4. Trap share

One run each, `strata run --fast-stats OPTIONS -- PROGRAM`, {c.pin_desc}; the share is
trapped / (calls through rewritten sites + trapped), summed over every `strata: fast path:` line
on stderr (strata prints one for the whole process tree). "Calls through rewritten sites" are
the calls that entered strata directly plus those that skipped it (a native trampoline). A
program that is not installed is skipped; the getpid loops are there for comparison and do not
count for the target. Shares of 1% or more are in bold.

{chr(10).join(lines)}
"""


# ---------------------------------------------------------------- 5. floors

def build(c, name):
    """Builds bench/NAME.c into the work directory once: (path, None) or (None, gcc's complaint)."""
    exe = c.work / name
    if exe.exists():
        return exe, None
    src = Path(c.a.root) / "bench" / f"{name}.c"
    if not src.exists():
        return None, f"bench/{name}.c does not exist"
    p = subprocess.run(["gcc", "-O2", "-Wall", "-o", str(exe), str(src)], capture_output=True)
    if p.returncode != 0:
        return None, f"bench/{name}.c does not build: {p.stderr.decode(errors='replace')[-600:]}"
    return exe, None


SUD_ON_RE = re.compile(r"native ([\d.]+) ns, with dispatch on \(ALLOW\) ([\d.]+) ns.*?"
                       r"from the exempt range ([\d.]+) ns")
SUD_ON_N = 2_000_000


def dispatch_floor(c):
    """bench/sud_on.c, --floor-runs runs pinned, measured once per report: {native, on, ex, added,
    exadded (medians; the added figures are medians of the per-run differences), runs: [(native,
    ALLOW, exempt)]} or {na}."""
    if c.floor is not None:
        return c.floor
    exe, err = build(c, "sud_on")
    if exe is None:
        c.floor = {"na": err}
        return c.floor
    runs = []
    for i in range(c.a.floor_runs):
        st, o, e = sh(c.pin + [str(exe), str(SUD_ON_N)])
        m = SUD_ON_RE.search(o.decode(errors="replace"))
        if st != 0 or not m:
            c.floor = {"na": f"bench/sud_on.c: exit {st}: {(o + e).decode(errors='replace').strip()[-200:]}"}
            return c.floor
        runs.append(tuple(float(m.group(k)) for k in (1, 2, 3)))
    c.floor = {"native": statistics.median(r[0] for r in runs), "on": statistics.median(r[1] for r in runs),
               "ex": statistics.median(r[2] for r in runs), "added": statistics.median(r[1] - r[0] for r in runs),
               "exadded": statistics.median(r[2] - r[0] for r in runs), "runs": runs}
    log(f"floor: sud_on native {c.floor['native']:.1f} ns, dispatch on: ALLOW +{c.floor['added']:.1f}, "
        f"exempt range +{c.floor['exadded']:.1f}")
    return c.floor


def exp_floor(c, root):
    rows = ["| floor | source | ns per call | added | runs |", "|---|---|---|---|---|"]
    notes = []
    fl = dispatch_floor(c)
    if "na" in fl:
        rows.append(f"| getpid() with Syscall User Dispatch on | bench/sud_on.c | n/a | | {fl['na']} |")
    else:
        rs = fl["runs"]
        rows.append(f"| `getpid()`, natively | bench/sud_on.c | {fl['native']:.1f} ns | | "
                    f"{', '.join(f'{r[0]:.1f}' for r in rs)} |")
        rows.append(f"| `getpid()`, Syscall User Dispatch on, called from the exempt range (as strata issues its "
                    f"calls) | bench/sud_on.c | {fl['ex']:.1f} ns | **{fl['exadded']:+.1f} ns** | "
                    f"{', '.join(f'{r[2]:.1f}' for r in rs)} |")
        rows.append(f"| `getpid()`, Syscall User Dispatch on, called from outside the range, selector ALLOW | "
                    f"bench/sud_on.c | {fl['on']:.1f} ns | {fl['added']:+.1f} ns | "
                    f"{', '.join(f'{r[1]:.1f}' for r in rs)} |")
        notes.append(f"**Dispatch-on floor: {fl['exadded']:+.1f} ns per call** for a call issued from the range "
                     f"the kernel lets through, {fl['added']:+.1f} ns for one issued from elsewhere with the "
                     f"selector at ALLOW (added: medians of the per-run differences to native; {len(rs)} runs of "
                     f"{SUD_ON_N} calls each way, each run measuring native, ALLOW, exempt in that order). With "
                     f"dispatch on, the kernel takes its slow system-call entry path for every call of the thread, "
                     f"trapping or not; for a call from outside the exempt range it also reads the selector from "
                     f"user memory. strata keeps dispatch on as its catch-all and issues every call from its own "
                     f"text, which is exempt, so its rows pay at least the first figure. Only a call that never "
                     f"enters the kernel (`--ext ids`) gets below. These are sud_on's own in-process timings; "
                     f"section 1 also times its loop from outside (`sud_on exempt|allow N`, CPU time, in the same "
                     f"rounds as the strata rows), and the targets table subtracts those figures.")
    exe, err = build(c, "rsb_depth")
    if exe is None:
        rows.append(f"| getpid at call depth 0, 4, 8 | bench/rsb_depth.c | n/a | | {err} |")
    else:
        got = {}
        for _ in range(3):
            st, o, _e = sh(c.pin + [str(exe)])
            for m in re.finditer(r"^(depth \d+(?: without the syscall)?): ([\d.]+) ns", o.decode(), re.M):
                got.setdefault(m.group(1), []).append(float(m.group(2)))
        d0 = statistics.median(got["depth 0"]) if got.get("depth 0") else None
        for k, vals in got.items():
            med = statistics.median(vals)
            added = ("" if k == "depth 0" or "without" in k or d0 is None else f"{med - d0:+.1f} ns")
            what = (f"8 nested calls and returns, no system call (control)" if "without" in k
                    else f"raw getpid at call {k}" + (" (inline in the loop)" if k == "depth 0" else
                                                      f" ({k.split()[1]} returns after each call)"))
            rows.append(f"| {what} | bench/rsb_depth.c | {med:.1f} ns | {added} | "
                        f"{', '.join(f'{x:.1f}' for x in vals)} |")
        if d0 is not None and got.get("depth 8") and got.get("depth 8 without the syscall"):
            d8 = statistics.median(got["depth 8"])
            c8 = statistics.median(got["depth 8 without the syscall"])
            notes.append(f"**Call depth:** the same getpid costs {d8 - d0:+.1f} ns when issued 8 calls deep, though "
                         f"the 8 calls and returns alone take {c8:.1f} ns: the returns after a system call "
                         f"mispredict (the return stack buffer is apparently flushed on kernel entry on this "
                         f"machine). A fast path that issues the call from inside strata's Rust code pays part of "
                         f"this on top of the dispatch-on floor. Medians of 3 runs (each the median of 3 loops of "
                         f"2·10⁶ calls).")
    sud, err = build(c, "sud_floor")
    if sud is None:
        rows.append(f"| Syscall User Dispatch trap round trip | bench/sud_floor.c | n/a | | {err} |")
    else:
        vals = []
        for _ in range(5):
            st, o, _e = sh(c.pin + [str(sud), "200000"])
            try:
                vals.append(float(o.decode().strip()))
            except ValueError:
                pass
        if vals:
            rows.append(f"| Syscall User Dispatch trap round trip (SIGSYS into a 4-instruction handler, "
                        f"rt_sigreturn) | bench/sud_floor.c | {statistics.median(vals):.0f} ns | | "
                        f"{', '.join(f'{x:.0f}' for x in vals)} |")
    ff, err = build(c, "fast_floor")
    if ff is None:
        notes.append(err)
    else:
        st, o, e = sh(c.pin + [str(ff)], timeout=600)
        text = o.decode(errors="replace")
        head = ""
        for l in text.splitlines():
            m = re.match(r"^(.*?): ([\d.]+) ns$", l)
            if m:
                rows.append(f"| {m.group(1)} | bench/fast_floor.c | {float(m.group(2)):.2f} ns | | |")
            elif l.startswith("empty loop"):
                head = l
            elif l.strip():
                rows.append(f"| {l.split(':')[0]} | bench/fast_floor.c | n/a | | {l.split(':', 1)[-1].strip()} |")
        if st != 0:
            notes.append(f"bench/fast_floor.c exited with {st}: `{e.decode(errors='replace').strip()[-300:]}`")
        m = re.match(r"empty loop: ([\d.]+) ns per iteration.*?(\d+) iterations", head)
        if m:
            notes.append(f"bench/fast_floor.c: each figure is one operation in a loop of {int(m.group(2)):,} "
                         f"iterations, minus the same loop with an empty body ({float(m.group(1)):.2f} ns per "
                         f"iteration), median of 3 loops.")
    return (f"## 5. Floors\n\nMeasured on this machine by small C programs, {c.pin_desc}; what no interposer "
            f"built like strata can go below, and the parts a trampoline is made of.\n\n"
            + "\n".join(rows) + "\n\n" + "\n\n".join(notes) + "\n")


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
    strata, built, digests = benchlib.copy_strata(a.strata, work)
    commit = sh(["git", "-C", str(root), "describe", "--always", "--dirty"])[1].decode().strip() or "unknown"
    t_start = time.monotonic()
    load_before = open("/proc/loadavg").read().split()[:3]
    busy_before = benchlib.busy_others()
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
        busy_after = benchlib.busy_others()

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
        targets = ["| figure | target | ratio to native | added over native | added over the dispatch-on floor "
                   "(exempt range / ALLOW) | verdict |", "|---|---|---|---|---|---|"] + [
            f"| {f} | {t} | {r} | {d} | {o} | {v} |" for f, t, r, d, o, v in c.targets]
        met = [f for f, *_, v in c.targets if v == "met"]
        missed = [f"{f} ({v.split('(', 1)[1].rstrip(')')})" if "(" in v else f
                  for f, *_, v in c.targets if v.startswith("**not met")]
        verdicts = (f"**Met ({len(met)}):** {'; '.join(met) or 'none'}. "
                    f"**Not met ({len(missed)}):** {'; '.join(missed) or 'none'}.")
        fl = c.floor_used
        if fl is not None and fl["ex"] > 10:
            verdicts += (f" The 10 ns budgets are smaller than the dispatch-on floor measured here "
                         f"({fl['ex']:+.1f} ns per call from the exempt range, {fl['allow']:+.1f} ns with the "
                         f"selector at ALLOW; {fl['src']}): on this machine no interposer that keeps Syscall User "
                         f"Dispatch on can meet them. The floor column is what strata adds beyond each of the two "
                         f"(exempt range / ALLOW); strata issues its calls from the exempt range, so the first is "
                         f"the one that applies.")
        rewrite_line = ("strata run has no `--rewrite` option: every strata row traps (no fast path in this build)"
                        if not c.has_rewrite else
                        f"`--rewrite` default: {c.rewrite_default or 'not stated in --help'}")
        report = f"""# Fast path: rewritten syscall sites — {today}

Medians of interleaved rounds (every round runs each variant of an experiment once, in an order
rotated from round to round); ratios to native. Raw times at the end of each section.
Targets from docs/design/fast-path.md §13; getpid figures are per call from CPU time
(section 1). The dispatch-on floor is what getpid() costs more with Syscall User Dispatch on
and nothing trapping, called from the exempt range (as strata issues its calls) / from
elsewhere with the selector at ALLOW: bench/sud_on.c, timed in section 1 like the loops (its
last table), with its own in-process timing in section 5 as a cross-check. The design's short-circuit
row is measured with `--ext ids`, the extension that serves getpid and gettid in-process
(with no layer, or a layer that does not want getpid, a `getpid()` site skips strata: those
are the "calls no layer wants" rows); strata has no `--no-short-circuit`.

{chr(10).join(targets)}

{verdicts}

**Reading.** {' '.join(c.reading) or 'Not enough ran for a reading.'}

{chr(10).join(sections)}
## Machine
- load average (1/5/15 min) before: {' '.join(load_before)}, after: {' '.join(load_after)}
- other processes using ≥ 20% of a CPU (lifetime average, `ps`), at the start: {busy_before};
  at the end: {busy_after}
- nproc: {os.cpu_count()}; CPU: {cpu_model or 'unknown'} ({', '.join(vec) or 'no AVX'}); uname -r: {platform.release()}
- pinning: {c.pin_desc}{f' ({cpu_note})' if cpu_note else ''}
- strata: {a.strata} (built {built}; {', '.join(digests)}), copied to a temporary directory for the
  run; source tree {commit} when the run started; {rewrite_line}; `--fast-stats`:
  {'yes' if c.has_stats else 'no'}
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
