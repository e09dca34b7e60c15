"""The measuring half of bench/run.sh (which builds getpid_loop and calls this).

1. Smoke run: every workload once natively, then once under each strata variant, with
   a time limit; a strata variant whose exit status or stdout differs from native, or
   that fails to start, is left out of the timing and shown as n/a with the reason.
   strace is checked on /bin/true (its workloads take seconds each; no need to pay twice).
2. Timing: `reps` rounds; every round runs each (workload, variant) once, in an order
   rotated from round to round, so the variants alternate (ABCD ABCD ...) and slow
   drift of the machine spreads evenly over them. With hyperfine installed each round
   is one `hyperfine -N --runs 1` over all commands; otherwise a perf_counter loop.
3. Report: medians, ratios to native, and ns per getpid call computed as
   (median(N calls) - median(0 calls)) / N, which removes process start-up (and, under
   strata and strace, their own start-up) from the per-call figure.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--strata", required=True)
    ap.add_argument("--getpid-loop", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--sud-floor", help="bench/sud_floor binary: a bare Syscall User Dispatch round trip")
    ap.add_argument("--reps", type=int, default=10, help="timing rounds (default 10)")
    ap.add_argument("--strace-reps", type=int, default=3,
                    help="rounds that include strace, spread evenly over the others (default 3)")
    ap.add_argument("--getpid-n", type=int, default=100_000, help="getpid calls per loop run (default 100000)")
    ap.add_argument("--no-strace", action="store_true", help="leave strace out (it is most of the run time)")
    ap.add_argument("--out", help="report file (default bench/results/<date>-capture.md)")
    ap.add_argument("--timer", choices=["auto", "hyperfine", "python"], default="auto",
                    help="hyperfine when installed (auto), or a Python perf_counter loop")
    return ap.parse_args()


def sh(argv, timeout=60):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""
    except OSError as e:
        return f"cannot start: {e.strerror}", b"", b""


def fmt_time(s):
    if s is None:
        return "n/a"
    return f"{s * 1e3:.1f} ms" if s >= 0.01 else f"{s * 1e3:.2f} ms"


def main():
    a = parse_args()
    root = Path(a.root)
    n = a.getpid_n
    loop = a.getpid_loop

    workloads = [
        ("getpid loop, 0 calls (start-up)", [loop, "0"]),
        (f"getpid loop, {n} calls", [loop, str(n)]),
        ("dd if=/dev/zero of=/dev/null bs=1 count=200000", ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=200000"]),
        ("/usr/bin/python3 -c pass", ["/usr/bin/python3", "-c", "pass"]),
    ]
    variants = [
        ("native", []),
        ("strata --ext null", [a.strata, "run", "--ext", "null", "--"]),
        ("strata --ext count", [a.strata, "run", "--ext", "count", "-o", "/dev/null", "--"]),
    ]
    if not a.no_strace:
        variants.append(("strace -f -c", ["strace", "-f", "-c", "-o", "/dev/null"]))

    # ---- smoke run
    unavailable = {}  # (workload, variant) -> reason
    native_out = {}
    for wname, wargv in workloads:
        st, out, err = sh(wargv)
        if st != 0:
            sys.exit(f"native {wname} failed ({st}): {err.decode(errors='replace')[-500:]}")
        native_out[wname] = out
    for vname, prefix in variants[1:]:
        if vname.startswith("strace"):
            if not shutil.which("strace"):
                reason = "strace not installed"
            else:
                st, _, err = sh(prefix + ["/bin/true"])
                reason = None if st == 0 else f"strace failed ({st}): {err.decode(errors='replace')[-200:]}"
            for wname, _ in workloads:
                if reason:
                    unavailable[(wname, vname)] = reason
            continue
        if not os.path.exists(a.strata):
            for wname, _ in workloads:
                unavailable[(wname, vname)] = f"{a.strata} missing"
            continue
        for wname, wargv in workloads:
            t0 = time.perf_counter()
            st, out, err = sh(prefix + wargv, timeout=120)
            dt = time.perf_counter() - t0
            if st != 0:
                unavailable[(wname, vname)] = f"exit {st}" + (f": {err.decode(errors='replace').strip()[-160:]}" if err else "")
            elif out != native_out[wname]:
                unavailable[(wname, vname)] = "stdout differs from native"
            print(f"smoke: {vname:20} {wname:48} {'ok' if (wname, vname) not in unavailable else unavailable[(wname, vname)]}"
                  f" ({dt:.2f}s)", file=sys.stderr)

    # ---- timing
    combos = [(w, v) for w, _ in workloads for v, _ in variants if (w, v) not in unavailable]
    argv_of = {(w, v): p + wa for w, wa in workloads for v, p in variants}
    times = {c: [] for c in combos}
    hyperfine = shutil.which("hyperfine") if a.timer != "python" else None
    if a.timer == "hyperfine" and not hyperfine:
        sys.exit("--timer hyperfine: hyperfine is not installed (tests/setup.sh installs it)")
    tool = f"hyperfine ({sh(['hyperfine', '--version'])[1].decode().strip()}), -N --runs 1 per round" if hyperfine \
        else "Python time.perf_counter around subprocess.run"
    t_start = time.monotonic()
    strace_rounds = {i * a.reps // max(1, min(a.strace_reps, a.reps)) for i in range(min(a.strace_reps, a.reps))}
    for r in range(a.reps):
        k = r % len(combos) if combos else 0
        order = combos[k:] + combos[:k]
        if r not in strace_rounds:
            order = [c for c in order if not c[1].startswith("strace")]
        print(f"round {r + 1}/{a.reps} ({time.monotonic() - t_start:.0f}s so far)", file=sys.stderr)
        if hyperfine:
            with tempfile.NamedTemporaryFile(suffix=".json") as js:
                cmd = [hyperfine, "-N", "--runs", "1", "--style", "none", "--export-json", js.name]
                cmd += [shlex.join(argv_of[c]) for c in order]
                subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
                res = json.load(open(js.name))["results"]
            for c, item in zip(order, res):
                times[c] += item["times"]
        else:
            for c in order:
                t0 = time.perf_counter()
                subprocess.run(argv_of[c], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=True)
                times[c].append(time.perf_counter() - t0)
    elapsed = time.monotonic() - t_start

    med = {c: statistics.median(ts) for c, ts in times.items()}

    # ---- report
    vnames = [v for v, _ in variants]
    lines = ["| workload | " + " | ".join(vnames) + " |", "|---" * (len(vnames) + 1) + "|"]
    for w, _ in workloads:
        cells = []
        base = med.get((w, "native"))
        for v in vnames:
            m = med.get((w, v))
            if m is None:
                cells.append("n/a")
            elif v == "native":
                cells.append(fmt_time(m))
            else:
                cells.append(f"{fmt_time(m)} (×{m / base:.2f})")
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    # ns per getpid call
    w0, wn = workloads[0][0], workloads[1][0]
    per_call = {}
    for v in vnames:
        if (w0, v) in med and (wn, v) in med:
            per_call[v] = (med[(wn, v)] - med[(w0, v)]) / n * 1e9
    cells = []
    for v in vnames:
        if v not in per_call:
            cells.append("n/a")
        elif v == "native":
            cells.append(f"{per_call[v]:.0f} ns")
        else:
            cells.append(f"{per_call[v]:.0f} ns (×{per_call[v] / per_call['native']:.1f})")
    lines.append("| **getpid: ns per call** | " + " | ".join(cells) + " |")
    table = "\n".join(lines)

    # The floor: the same trap mechanism with a handler that does nothing but
    # re-issue the call, measured now, on this machine.
    floor = ""
    if a.sud_floor:
        vals = []
        for _ in range(5):
            rc, o, _e = sh([a.sud_floor, str(n)])
            if rc == 0:
                vals.append(float(o.decode().strip()))
        if vals:
            f = statistics.median(vals)
            s_null = per_call.get("strata --ext null")
            rel = f" strata --ext null costs {s_null:.0f} ns per call, {s_null - f:+.0f} ns against this floor." if s_null else ""
            floor = (f"\n\nA bare Syscall User Dispatch round trip (bench/sud_floor.c: SIGSYS to a handler of four\n"
                     f"instructions that re-issues the call, then rt_sigreturn) costs {f:.0f} ns per getpid here\n"
                     f"(median of 5 runs of {n} calls: {', '.join(f'{v:.0f}' for v in vals)}).{rel}\n"
                     f"That is the price of the trap path itself; strata's fast path (issue #4) avoids the trap.")
    table += floor

    cpu = ""
    try:
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = sh(["git", "-C", str(root), "describe", "--always", "--dirty"])[1].decode().strip() or "unknown"
    today = datetime.date.today().isoformat()
    out = Path(a.out) if a.out else root / "bench" / "results" / f"{today}-capture.md"
    out.parent.mkdir(parents=True, exist_ok=True)

    raw = []
    for c in combos:
        raw.append(f"- {c[1]} / {c[0]}: " + ", ".join(f"{t * 1e3:.2f}" for t in times[c]) + " ms")

    report = f"""# Capture overhead, {today}

Medians of {a.reps} interleaved rounds ({min(a.strace_reps, a.reps)} of them with strace, which is slow),
ratio to native in parentheses. The ns-per-call
row is (median of the {n}-call loop − median of the 0-call loop) / {n}, so process and
interposer start-up drop out of it.

{table}

## Machine
- nproc: {os.cpu_count()}
- uname -r: {platform.release()}
- CPU: {cpu or 'unknown'}
- strata: {a.strata} (tree {commit})
- timing: {tool}; timing took {elapsed:.0f}s

## Command
```
{a.command}
```

## Raw times (ms, in round order)
{chr(10).join(raw)}
"""
    if unavailable:
        report += "\n## Left out (n/a above)\n"
        for v in vnames:
            whys = {w: why for (w, vv), why in unavailable.items() if vv == v}
            if len(whys) == len(workloads) and len(set(whys.values())) == 1:
                report += f"- {v}, every workload: {next(iter(whys.values()))}\n"
            else:
                report += "".join(f"- {v} / {w}: {why}\n" for w, why in whys.items())
    out.write_text(report)
    print(table)
    for v in vnames:
        if any(vv == v for (_, vv) in unavailable):
            print(f"n/a for {v}: see {out}", file=sys.stderr)
    print(f"\nwrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
