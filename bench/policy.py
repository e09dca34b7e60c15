"""What a sandbox policy costs (`strata run --policy`), side by side in one run against
native and the usual peers (bench/run-policy.sh calls this). Writes
bench/results/<date>-policy.md.

1. Web server under load: lighttpd (`lighttpd -D -f CONF`, or `python3 -m http.server` when
   lighttpd is unusable) serving a generated static directory (index.html of 4 KiB, big.bin
   of 64 KiB) on 127.0.0.1:PORT (a free port picked at start), loaded by
   `wrk -t2 -c16 -dNs --latency` from the same machine (after a 1-s unrecorded warm-up). Configurations:
   - native
   - `strata run --` (no policy)
   - `strata run --policy bench/policies/web.toml --` (a copy with the chosen port in place
     of 8080)
   - bubblewrap: only /usr, /etc, /proc, /dev, the docroot and the config visible (read
     only), the log directory writable, every namespace unshared but the network (the server
     must be reachable from outside), capabilities dropped, a seccomp filter denying the
     policy's [syscalls] deny list
   - firejail: `--noprofile --read-only=/ --read-write=LOGDIR --private-tmp --seccomp
     --caps.drop=all --nonewprivs --protocol=inet --rlimit-nofile=1024`
   Each round starts every configuration's server once (in an order rotated from round to
   round), waits until it answers, runs wrk once per file, and stops it. Reported: median
   requests/s, its ratio to native and to strata without a policy, the server's CPU time
   per request (utime + stime of its whole process tree over the wrk run, from /proc), and
   the median of wrk's 99th-percentile latency. By default the server is pinned to CPU 1
   and wrk to CPU 0 (`taskset`), so the server has a core to itself and its cost shows as
   throughput; `--pin none` lets the scheduler mix them.
2. A build: a generated tree (N small C files, a header, a Makefile; the tree is chmod'ed
   read-only except ./out) built with `make -jJ` into ./out, in a fresh ./out every run, with
   TMPDIR=./out/.tmp (gcc's temporary files; a policy may not let the program write /tmp,
   where strata sessions keep their state): native, `strata run --`, `strata run --policy
   bench/policies/build.toml --`, bubblewrap (`--ro-bind / /`, ./out writable, every
   namespace unshared, the same seccomp filter), firejail (`--read-only=/ --read-write=./out
   --net=none --protocol=unix --seccomp ...`). Wall time and CPU (the machine's busy time, /proc/stat)
   medians, ratios. Nothing is pinned (make uses both cores). Before timing, a check runs
   bash under each configuration and reports what its confinement let through (write to
   ./out, to the tree, to /tmp; a TCP connect to a listener on 127.0.0.1; exec of a tool).

Each experiment also has a confinement check (what each configuration let through: lighttpd
started with a configuration that binds another port, serves a directory outside the docroot
or logs into the docroot; bash writing ./out, the tree, /tmp, connecting to 127.0.0.1,
executing a program it wrote) and, when strata has `--fast-stats`, one untimed run per strata
configuration that reports how the calls reached strata (rewritten sites or traps).

A configuration that fails its smoke run (or is not installed, or cannot run in this
container) is left out, shown as n/a with the reason, and the run goes on. strata and
strata-rt are copied to a temporary directory first, so a rebuild during the run cannot mix
two builds into one table.
"""
import argparse
import ctypes
import datetime
import hashlib
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import benchlib
from benchlib import Drivers, build_driver, median_interval, ratios, rotated

SIZES = {"4k": ("index.html", 4096), "64k": ("big.bin", 65536)}
TARGET = 0.02  # the target: at most 2 %


def parse_args():
    ap = benchlib.parser(__doc__)
    ap.add_argument("--only", default="web,build,compiles,requests",
                    help="experiments (default web,build,compiles,requests)")
    ap.add_argument("--turn-rounds", type=int, default=15,
                    help="rounds of the requests experiment (web servers loaded in turn; default 15)")
    ap.add_argument("--turn-duration", type=int, default=2, help="seconds per wrk run there (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="web rounds (default 3)")
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run (default 10)")
    ap.add_argument("--warmup", type=int, default=1, help="seconds of unrecorded wrk load after each start "
                                                       "(default 1)")
    ap.add_argument("--sizes", default="4k,64k", help="files to load: 4k, 64k (default both)")
    ap.add_argument("--threads", type=int, default=2, help="wrk -t (default 2)")
    ap.add_argument("--connections", type=int, default=16, help="wrk -c (default 16)")
    ap.add_argument("--pin", default="server=1,wrk=0",
                    help="CPUs for the server and for wrk (default server=1,wrk=0), or none")
    ap.add_argument("--server", choices=["auto", "lighttpd", "python"], default="auto")
    ap.add_argument("--build-rounds", type=int, default=7, help="build rounds (default 7)")
    ap.add_argument("--files", type=int, default=120, help="C files in the generated tree (default 120)")
    ap.add_argument("--jobs", type=int, default=2, help="make -j (default 2)")
    ap.add_argument("--compile-rounds", type=int, default=5,
                    help="rounds of the compiles experiment (--only compiles; default 5)")
    ap.add_argument("--build-pin", default="", metavar="CPU",
                    help="run each build under `taskset -c CPU` (with --jobs 1: CPU time that the other core's "
                         "noise touches least; default: not pinned)")
    ap.add_argument("--disturbed", type=float, default=0.10,
                    help="a timed run during which other processes (and VM steal) used more than this share of "
                         "one CPU is redone (default 0.10)")
    ap.add_argument("--retries", type=int, default=2, help="redos of disturbed runs per round (default 2)")
    ap.add_argument("--quiet-wait", type=float, default=30,
                    help="seconds to wait for a quiet machine before each timed run (default 30)")
    ap.add_argument("--quiet-budget", type=float, default=120,
                    help="seconds the whole run may spend waiting for a quiet machine (default 120)")
    ap.add_argument("--workdir", help="where the temporary trees go (default ROOT/target; not /var/tmp, which "
                                      "firejail hides)")
    ap.add_argument("--install-note", action="append", default=[], help="a note from run-policy.sh")
    ap.add_argument("--out", help="report file (default bench/results/<date>-policy.md)")
    return ap.parse_args()


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(argv, timeout=60, **kw):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, **kw)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    except OSError as e:
        return f"cannot start: {e.strerror}", "", ""


def tail(text, n=240):
    t = " ".join(text.split())
    return t[-n:]


def med(xs):
    return statistics.median(xs) if xs else None


def clean(xs, bad):
    """The runs not marked disturbed, when they are at least half of them; else all (the report says which)."""
    good = [x for x, b in zip(xs, bad) if not b]
    return good if good and len(good) * 2 >= len(xs) else list(xs)


def paired(xs, base):
    """Median over rounds of x / base in the same round; xs, base: {round: value}."""
    rs = ratios(xs, base)
    return med(rs), len(rs)


def verdict(v, ci):
    """The target's verdict for a throughput ratio v (native = 1) with its interval ci (throughput too):
    met or not met when the whole interval is on one side of 1 - TARGET, else (or with no interval:
    fewer than 5 rounds) not resolved."""
    if ci is None:
        return f"**not resolved** ({pct(v)}; fewer than 5 rounds, no interval)"
    lo, hi = ci
    span = f"95% interval ×{lo:.3f}–×{hi:.3f}"
    if lo >= 1 - TARGET:
        return f"met ({span})"
    if hi < 1 - TARGET:
        return f"**not met** ({pct(v)}; {span})"
    return f"**not resolved** ({pct(v)}; {span} spans the target)"


def pct(r):
    return f"{(r - 1) * 100:+.1f}%"


# ---------------------------------------------------------------- processes

def tree_pids(root_pid):
    """root_pid and its descendants, from /proc."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            s = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        ppid = int(s[s.rfind(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root_pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def tree_cpu(root_pid):
    """utime + stime (seconds) of root_pid and its descendants alive now."""
    tck = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in tree_pids(root_pid):
        try:
            s = open(f"/proc/{p}/stat").read()
        except OSError:
            continue
        f = s[s.rfind(")") + 2:].split()
        total += int(f[11]) + int(f[12])
    return total / tck


def stop_tree(proc, grace=5.0):
    """SIGTERM to the process we started and its descendants, SIGKILL what is left after grace."""
    if proc.poll() is not None:
        return proc.returncode
    pids = tree_pids(proc.pid)
    for p in reversed(pids):
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        for p in tree_pids(proc.pid):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return proc.wait()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(port, path, timeout=2.0):
    """(status, body length) of GET path, or raises OSError."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET /{path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, len(body)


# ---------------------------------------------------------------- is anything else running?

def machine():
    """CPU seconds so far from /proc/stat: tasks (user + nice + system), irq + softirq, steal."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    hz = os.sysconf("SC_CLK_TCK")
    return {"tasks": (f[0] + f[1] + f[2]) / hz, "irq": (f[5] + f[6]) / hz, "steal": f[7] / hz}


def delta(m0, m1):
    return {k: m1[k] - m0[k] for k in m0}


def quiet_gate(c, what):
    """Waits (at most --quiet-wait s) for a half second in which the machine is nearly idle (busy at most
    --disturbed of one CPU, steal included) before a timed run; returns the seconds waited, negative when
    it gave up."""
    t0 = time.monotonic()
    budget = max(0.0, min(c.a.quiet_wait, c.a.quiet_budget - c.gate_spent))
    while True:
        m0 = machine()
        time.sleep(0.5)
        d = delta(m0, machine())
        waited = time.monotonic() - t0
        if d["tasks"] + d["steal"] <= c.a.disturbed * 0.5:
            c.gate_spent += waited
            return waited
        if waited > budget:
            c.gate_spent += waited
            log(f"{what}: the machine is not quiet after {waited:.0f}s; going on")
            return -waited


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


# ---------------------------------------------------------------- seccomp for bubblewrap

def syscall_numbers():
    nrs = {}
    for h in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
        if os.path.exists(h):
            for m in re.finditer(r"#define __NR_(\w+)\s+(\d+)", open(h).read()):
                nrs[m.group(1)] = int(m.group(2))
            break
    return nrs


def seccomp_program(names):
    """A classic BPF program for bwrap --seccomp: calls named in `names` (x86-64) and every
    non-x86-64 call (i386 int 0x80, x32) fail with EPERM, the rest are allowed.
    Returns (bytes, names it could not number)."""
    nrs = syscall_numbers()
    known = [nrs[n] for n in names if n in nrs]
    missing = [n for n in names if n not in nrs]
    LD, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
    ALLOW, EPERM = 0x7fff0000, 0x00050000 | 1
    n_ins = 4 + len(known) + 2
    deny_at = n_ins - 1
    prog = []

    def ins(code, k, jt=0, jf=0):
        prog.append((code, jt, jf, k))

    ins(LD, 4)                                      # seccomp_data.arch
    ins(JEQ, 0xC000003E, 0, deny_at - 2)            # AUDIT_ARCH_X86_64, else deny
    ins(LD, 0)                                      # seccomp_data.nr
    ins(JGE, 0x40000000, deny_at - 4, 0)            # x32 numbers: deny
    for nr in known:
        ins(JEQ, nr, deny_at - (len(prog) + 1), 0)
    ins(RET, ALLOW)
    ins(RET, EPERM)
    assert len(prog) == n_ins
    import struct
    return b"".join(struct.pack("<HBBI", *p) for p in prog), missing


# ---------------------------------------------------------------- strata --fast-stats

STATS_RE = re.compile(r"strata: fast path: (\d+) calls entered strata directly, (\d+) skipped it, (\d+) trapped"
                      r".*?(\d+) sites rewritten, (\d+) declined")


def stats_of(text):
    """Sums of strata's --fast-stats lines (one per process): entered, skipped, trapped, sites rewritten,
    declined, processes; None without any line."""
    rows = [tuple(int(x) for x in m.groups()) for m in STATS_RE.finditer(text)]
    if not rows:
        return None
    return tuple(sum(r[i] for r in rows) for i in range(5)) + (len(rows),)


def stats_txt(st):
    if st is None:
        return "no `strata: fast path:` line"
    e, k, t, rw, dec, n = st
    tot = e + k + t
    return (f"{t:,} of {tot:,} calls trapped ({t / tot * 100 if tot else 0:.1f}%), {e:,} entered strata through "
            f"rewritten sites, {k:,} skipped it; {rw:,} sites rewritten, {dec:,} declined"
            + (f" ({n} processes)" if n > 1 else ""))


def with_stats(cfg):
    """cfg with --fast-stats after `strata run`."""
    def prefix(l):
        p = cfg.prefix(l)
        i = p.index("run")
        return p[:i + 1] + ["--fast-stats"] + p[i + 1:]
    return Config(cfg.key, cfg.label, prefix)


# ---------------------------------------------------------------- configurations

class Config:
    """One way of running a program: argv prefix (a function of the work directory and the
    files to pass), or a reason it cannot run."""

    def __init__(self, key, label, prefix=None, na=None):
        self.key, self.label, self.prefix, self.na = key, label, prefix, na


class Ctx:
    def __init__(self, a, strata, work, t_start):
        self.a, self.strata, self.work, self.t_start = a, strata, work, t_start
        self.notes = list(a.install_note)
        self.tools = {}
        self.seccomp = None  # path of the BPF program for bwrap
        self.seccomp_note = None
        self.policy_ok = None  # None: --policy works; else why not
        self.has_stats = False  # strata run accepts --fast-stats
        self.gate_spent = 0.0  # seconds spent waiting for a quiet machine
        self.stats = {}  # (workload, config key) -> stats_of() of the --fast-stats run
        self.exec_cost = {}  # config key -> seconds per program started (exec_cost)
        self.build_execs = None  # programs the build starts (count_execs)


def check_tools(c):
    """Which of bwrap, firejail, wrk, lighttpd can run here, and why not."""
    t = {}
    if not shutil.which("bwrap"):
        t["bwrap"] = "bwrap is not installed"
    else:
        st, out, err = sh(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
                           "--share-net", "--die-with-parent", "--", "/bin/true"])
        t["bwrap"] = None if st == 0 else f"`bwrap --ro-bind / / --unshare-all --share-net -- /bin/true` failed " \
                                          f"({st}): {tail(err)}"
    if not shutil.which("firejail"):
        t["firejail"] = "firejail is not installed"
    else:
        st, out, err = sh(["firejail", "--noprofile", "--quiet", "--read-only=/", "--", "/bin/true"])
        t["firejail"] = None if st == 0 else f"`firejail --noprofile --read-only=/ -- /bin/true` failed ({st}): " \
                                             f"{tail(err)}"
    t["wrk"] = None if shutil.which("wrk") else "wrk is not installed"
    t["lighttpd"] = None if shutil.which("lighttpd") else "lighttpd is not installed"
    c.tools = t
    for k, v in t.items():
        log(f"tool {k}: {v or 'ok'}")


def check_policy(c):
    c.has_stats = "--fast-stats" in sh([c.strata, "run", "--help"])[1]
    st, out, err = sh([c.strata, "run", "--policy", "builtin:no-network", "--", "/bin/true"])
    c.policy_ok = None if st == 0 else \
        f"`strata run --policy builtin:no-network -- /bin/true` exits {st}: {tail(err, 160)}"
    log(f"strata --policy: {c.policy_ok or 'ok'}")


def deny_list(policy_file):
    try:
        return tomllib.load(open(policy_file, "rb")).get("syscalls", {}).get("deny", [])
    except (OSError, tomllib.TOMLDecodeError) as e:
        log(f"{policy_file}: {e}")
        return []


def make_seccomp(c):
    names = [n for n in deny_list(Path(c.a.root) / "bench/policies/web.toml") if not n.startswith("%")]
    prog, missing = seccomp_program(names)
    if not syscall_numbers():
        c.seccomp_note = "no asm/unistd_64.h to number the calls: bubblewrap runs without a seccomp filter"
        return
    p = c.work / "deny.bpf"
    p.write_bytes(prog)
    c.seccomp = p
    c.seccomp_note = (f"bubblewrap gets a seccomp filter (classic BPF, {len(prog) // 8} instructions, built by "
                      f"bench/policy.py) denying with EPERM the {len(names) - len(missing)} calls of the policies' "
                      f"[syscalls] deny list and any non-x86-64 call"
                      + (f"; not numbered here: {', '.join(missing)}" if missing else ""))


class Launch:
    """Opens what a configuration needs passed (bwrap's seccomp program) and closes it."""

    def __init__(self, c):
        self.c, self.fds = c, []

    def seccomp_args(self):
        if self.c.seccomp is None:
            return []
        fd = os.open(self.c.seccomp, os.O_RDONLY)
        self.fds.append(fd)
        return ["--seccomp", str(fd)]

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def usr_merged_args(ro=True):
    """bwrap arguments recreating /bin, /sbin, /lib* (symlinks into /usr on merged-/usr systems)."""
    args = []
    for p in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(p):
            args += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            args += ["--ro-bind" if ro else "--bind", p, p]
    return args


# ---------------------------------------------------------------- 1. web server

LIGHTTPD_CONF = """server.document-root = "{www}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{var}/{log}"
server.max-fds = 1024
server.max-connections = 256
index-file.names = ("index.html")
mimetype.assign = (".html" => "text/html", ".bin" => "application/octet-stream")
"""


def web_setup(c, port, name="web"):
    web = c.work / name
    www, conf, var = web / "www", web / "conf", web / "var"
    for d in (www, conf, var):
        d.mkdir(parents=True)
    line = ("<p>strata policy benchmark: a static page of exactly 4096 bytes, generated.</p>\n")
    body = ("<!doctype html>\n<html><head><title>bench</title></head><body>\n" + line * 80)
    tail_ = "</body></html>\n"
    body = body[:4096 - len(tail_)] + tail_
    (www / "index.html").write_text(body)
    assert (www / "index.html").stat().st_size == 4096
    (www / "big.bin").write_bytes(os.urandom(65536))
    (conf / "lighttpd.conf").write_text(LIGHTTPD_CONF.format(www=www, var=var, port=port, log="error.log"))
    return web


def web_server_argv(c, web, port, kind):
    if kind == "lighttpd":
        return ["lighttpd", "-D", "-f", str(web / "conf" / "lighttpd.conf")], "/usr/sbin/lighttpd"
    py = os.path.realpath("/usr/bin/python3")
    return [py, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(web / "www")], py


def web_policy(c, web, port, server_bin):
    src = (Path(c.a.root) / "bench/policies/web.toml").read_text()
    text, n = re.subn(r'^ports = "8080"', f'ports = "{port}"', src, flags=re.M)
    if n == 0:
        raise RuntimeError('bench/policies/web.toml: no line `ports = "8080"` to put the port in')
    if server_bin != "/usr/sbin/lighttpd":
        text = text.replace('"/usr/sbin/lighttpd"', f'"{server_bin}"')
    p = web / "web-policy.toml"
    p.write_text(text)
    return p


def sandbox_configs(c, pin, policy, label, bwrap_args, firejail_args):
    """The five configurations of an experiment, each command prefixed with `pin`: native,
    strata without a policy, strata with `policy` (named `label`), bubblewrap with
    `bwrap_args(launch)` and firejail with `firejail_args` (their options before `--`)."""
    def native(l):
        return pin

    def strata(l):
        return pin + [c.strata, "run", "--"]

    def strata_pol(l):
        return pin + [c.strata, "run", "--policy", str(policy), "--"]

    def bwrap(l):
        return pin + ["bwrap", *bwrap_args(l), "--"]

    def firejail(l):
        return pin + ["firejail", *firejail_args, "--"]

    return [
        Config("native", "native", native),
        Config("strata", "strata run -- (no policy)", strata),
        Config("policy", f"strata run --policy {label}", strata_pol, c.policy_ok),
        Config("bwrap", "bubblewrap", bwrap, c.tools.get("bwrap")),
        Config("firejail", "firejail", firejail, c.tools.get("firejail")),
    ]


def web_configs(c, web, policy):
    www, conf, var = web / "www", web / "conf", web / "var"

    def bwrap(l):
        return ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", *usr_merged_args(),
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                "--ro-bind", str(www), str(www), "--ro-bind", str(conf), str(conf), "--bind", str(var), str(var),
                "--chdir", str(web), "--unshare-all", "--share-net", "--die-with-parent", "--new-session",
                "--cap-drop", "ALL", *l.seccomp_args()]

    firejail = ["--noprofile", "--quiet", "--read-only=/", f"--read-write={var}", "--private-tmp",
                "--seccomp", "--caps.drop=all", "--nonewprivs", "--protocol=inet", "--rlimit-nofile=1024"]
    return sandbox_configs(c, c.pin_server, policy, "web.toml", bwrap, firejail)


LIVE = set()  # servers started and not stopped yet (stopped on the way out, whatever happens)


class Server:
    def __init__(self, c, cfg, argv, web, port, logname):
        self.c, self.cfg, self.port = c, cfg, port
        self.launch = Launch(c)
        self.argv = cfg.prefix(self.launch) + argv
        self.errf = open(web / logname, "ab")
        self.proc = subprocess.Popen(self.argv, cwd=web, stdin=subprocess.DEVNULL, stdout=self.errf,
                                     stderr=self.errf, pass_fds=self.launch.fds, start_new_session=True)
        self.launch.close()
        LIVE.add(self)

    def wait_ready(self, path, size, timeout=15.0):
        t0 = time.monotonic()
        last = None
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                return f"exited {self.proc.returncode} before answering"
            try:
                st, n = http_get(self.port, path)
                if st == 200 and n == size:
                    return None
                last = f"GET /{path}: status {st}, {n} bytes (want 200, {size})"
            except OSError as e:
                last = f"GET /{path}: {e}"
            time.sleep(0.05)
        return f"not answering after {timeout:.0f}s ({last})"

    def stop(self):
        rc = stop_tree(self.proc)
        self.errf.close()
        LIVE.discard(self)
        return rc


def web_checks(c, web, configs, port):
    """Starts lighttpd briefly under each configuration with a configuration that oversteps the
    policy: what got through."""
    www, conf, var = web / "www", web / "conf", web / "var"
    secret = web / "secret"
    secret.mkdir(exist_ok=True)
    (secret / "index.html").write_text("secret\n")
    other = free_port()
    checks = [  # name, conf overrides, how to test: (port, path, want) or a file that must appear
        (f"bind 127.0.0.1:{other} (another port)", {"port": other}, ("get", other, "index.html")),
        ("serve WORK/secret (outside the docroot)", {"www": secret}, ("get", port, "index.html")),
        ("error log in the docroot (write outside ./var)", {"var": www}, ("file", www / "error.log")),
    ]
    rows = ["| configuration | " + " | ".join(n for n, _, _ in checks) + " |", "|---" * (len(checks) + 1) + "|"]
    for cfg in configs:
        if cfg.na:
            continue
        cells = []
        for i, (name, over, how) in enumerate(checks):
            d = {"www": www, "var": var, "port": port, "log": "error.log"}
            d.update(over)
            cf = conf / f"check{i}.conf"
            cf.write_text(LIGHTTPD_CONF.format(**d))
            logname = f"check{i}-{cfg.key}.log"
            srv = Server(c, cfg, ["lighttpd", "-D", "-f", str(cf)], web, how[1] if how[0] == "get" else port,
                         logname)
            if how[0] == "get":
                why = srv.wait_ready(how[2], len("secret\n") if over.get("www") == secret else 4096, timeout=3)
                m = re.search(r"status (\d+)", why or "")
                ok = why is None
                cell = (f"HTTP {m.group(1)}" if m else f"server exited {srv.proc.returncode}"
                        if srv.proc.poll() is not None else (why or "")[:60])
            else:
                t0 = time.monotonic()
                while time.monotonic() - t0 < 3 and srv.proc.poll() is None and not how[1].exists():
                    time.sleep(0.05)
                ok = how[1].exists()
                cell = f"server exited {srv.proc.returncode}" if srv.proc.poll() is not None else "no file"
                try:
                    how[1].unlink()
                except OSError:
                    pass
            srv.stop()
            text = (web / logname).read_text(errors="replace")
            strata_why = why_failed(1, text) if "deny " in text else None
            cell = "allowed" if ok else "denied (" + cell + (f"; {strata_why}" if strata_why else "") + ")"
            cells.append(cell.replace("|", "/"))
        rows.append(f"| {cfg.label} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def parse_wrk(out):
    r = {}
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    r["rps"] = float(m.group(1)) if m else None
    m = re.search(r"(\d+) requests in", out)
    r["requests"] = int(m.group(1)) if m else None
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    r["errors"] = sum(int(x) for x in m.groups()) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    r["non2xx"] = int(m.group(1)) if m else 0

    def us(s):
        v, u = re.match(r"([\d.]+)(\w+)", s).groups()
        return float(v) * {"us": 1, "ms": 1e3, "s": 1e6, "m": 6e7}[u]

    m = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    r["p99"] = us(m.group(1)) if m else None
    m = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    r["p50"] = us(m.group(1)) if m else None
    return r


def exp_web(c):
    a = c.a
    sizes = [s.strip() for s in a.sizes.split(",") if s.strip()]
    for s in sizes:
        if s not in SIZES:
            raise RuntimeError(f"--sizes: unknown {s} (4k, 64k)")
    if c.tools.get("wrk"):
        return f"## 1. Web server under load\n\n**n/a**: {c.tools['wrk']} (no load generator).\n", []
    port = free_port()
    web = web_setup(c, port)
    kind = a.server
    server_note = None
    if kind in ("auto", "lighttpd"):
        if c.tools.get("lighttpd"):
            server_note = c.tools["lighttpd"]
        else:
            st, out, err = sh(["lighttpd", "-tt", "-f", str(web / "conf" / "lighttpd.conf")])
            if st != 0:
                server_note = f"`lighttpd -tt` failed ({st}): {tail(out + err)}"
        if server_note and kind == "lighttpd":
            return f"## 1. Web server under load\n\n**n/a**: {server_note}\n", []
        kind = "python" if server_note else "lighttpd"
    if server_note:
        log(f"web: lighttpd unusable ({server_note}); python3 -m http.server instead")
    argv, server_bin = web_server_argv(c, web, port, kind)
    policy = web_policy(c, web, port, server_bin)
    configs = web_configs(c, web, policy)
    wrk_pin = c.pin_wrk

    # smoke: start, answer both files, stop
    for cfg in configs:
        if cfg.na:
            continue
        t0 = time.perf_counter()
        srv = Server(c, cfg, argv, web, port, f"smoke-{cfg.key}.log")
        why = srv.wait_ready("index.html", 4096)
        if why is None:
            for s in sizes:
                path, size = SIZES[s]
                try:
                    st, n = http_get(port, path)
                    if (st, n) != (200, size):
                        why = f"GET /{path}: status {st}, {n} bytes"
                except OSError as e:
                    why = f"GET /{path}: {e}"
        rc = srv.stop()
        if why:
            cfg.na = f"smoke run: {why}; server output: {tail((web / f'smoke-{cfg.key}.log').read_text(errors='replace'))}"
        log(f"smoke web: {cfg.label:34} {cfg.na or 'ok'} ({time.perf_counter() - t0:.2f}s, exit {rc})")

    checks = web_checks(c, web, configs, port) if kind == "lighttpd" else None
    res = {(cfg.key, s): [] for cfg in configs for s in sizes}  # accepted parse_wrk dicts (+ cpu, others)
    rejected = {(cfg.key, s): [] for cfg in configs for s in sizes}  # disturbed runs, redone
    problems = []
    c.gate_waits = []
    live = [cfg for cfg in configs if not cfg.na]

    def measure(cfg, r):
        """One server start, warm-up and wrk per size: {size: result} or None."""
        c.gate_waits.append(quiet_gate(c, f"web {cfg.key}"))
        srv = Server(c, cfg, argv, web, port, f"run-{cfg.key}.log")
        why = srv.wait_ready("index.html", 4096)
        if why:
            problems.append(f"{cfg.label}, round {r + 1}: {why}")
            srv.stop()
            return None
        # warm-up (not recorded): connections, caches, the server's first requests
        sh(wrk_pin + ["wrk", f"-t{a.threads}", f"-c{a.connections}", f"-d{a.warmup}s",
                      f"http://127.0.0.1:{port}/index.html"], timeout=a.warmup + 30)
        got = {}
        for s in sizes:
            path, _ = SIZES[s]
            m0, cpu0, ch0 = machine(), tree_cpu(srv.proc.pid), children_cpu()
            st, out, err = sh(wrk_pin + ["wrk", f"-t{a.threads}", f"-c{a.connections}", f"-d{a.duration}s",
                                         "--latency", f"http://127.0.0.1:{port}/{path}"],
                              timeout=a.duration + 30)
            cpu1, ch1, d = tree_cpu(srv.proc.pid), children_cpu(), delta(m0, machine())
            w = parse_wrk(out)
            if st != 0 or w["rps"] is None:
                problems.append(f"{cfg.label}, {s}, round {r + 1}: wrk exit {st}: {tail(out + err)}")
                continue
            if w["errors"] or w["non2xx"]:
                problems.append(f"{cfg.label}, {s}, round {r + 1}: {w['errors']} socket errors, "
                                f"{w['non2xx']} non-2xx responses")
            w["cpu"] = cpu1 - cpu0
            w["wrk_cpu"] = ch1 - ch0
            # what neither the server nor wrk used: other processes, plus the hypervisor's steal
            w["others"] = max(0.0, d["tasks"] - w["cpu"] - w["wrk_cpu"]) + d["steal"]
            w["disturbed"] = w["others"] > a.disturbed * a.duration
            w["round"] = r
            got[s] = w
            log(f"  {cfg.key:9} {s:4} {w['rps']:10.0f} req/s  server CPU {w['cpu']:.2f}s  wrk CPU "
                f"{w['wrk_cpu']:.2f}s  others {w['others']:.2f}s  p99 {w['p99'] or 0:.0f} us"
                + ("  DISTURBED" if w["disturbed"] else ""))
        srv.stop()
        return got

    for r in range(a.rounds):
        queue = rotated(live, r)
        log(f"web: round {r + 1}/{a.rounds} ({time.monotonic() - c.t_start:.0f}s so far): "
            + ", ".join(x.key for x in queue))
        redos = a.retries
        while queue:
            cfg = queue.pop(0)
            got = measure(cfg, r)
            if not got:
                continue
            if any(w["disturbed"] for w in got.values()) and redos > 0:
                redos -= 1
                for s_, w in got.items():
                    rejected[(cfg.key, s_)].append(w)
                queue.append(cfg)
                log(f"  {cfg.key}: disturbed, redone at the end of the round")
                continue
            for s_, w in got.items():
                res[(cfg.key, s_)].append(w)

    # how calls reached strata (a short extra run per strata configuration, not timed)
    stats = []
    if c.has_stats:
        for cfg in configs:
            if cfg.na or cfg.key not in ("strata", "policy"):
                continue
            logname = f"stats-{cfg.key}.log"
            srv = Server(c, with_stats(cfg), argv, web, port, logname)
            if srv.wait_ready("index.html", 4096) is None:
                sh(wrk_pin + ["wrk", f"-t{a.threads}", f"-c{a.connections}", "-d3s",
                              f"http://127.0.0.1:{port}/index.html"], timeout=40)
            srv.stop()
            st = stats_of((web / logname).read_text(errors="replace"))
            c.stats[("web", cfg.key)] = st
            stats.append(f"- {cfg.label}: {stats_txt(st)}")
            log(f"web: fast-stats {cfg.key}: {stats_txt(st)}")

    # what the policy configuration logged
    pol_log = web / "run-policy.log"
    denials = ""
    if pol_log.exists():
        lines = [l for l in pol_log.read_text(errors="replace").splitlines() if l.strip()]
        if lines:
            denials = (f"The policy run's server output (all rounds, {len(lines)} lines), first lines: "
                       + "; ".join(f"`{l[:160]}`" for l in lines[:5]))
        else:
            denials = "The server under the policy printed nothing (no denial was logged) in the timed rounds."

    # tables
    summary = []
    sec = [f"""## 1. Web server under load

Server: {'lighttpd ' + sh(['lighttpd', '-v'])[1].split()[0].split('/')[-1] if kind == 'lighttpd' else 'python3 -m http.server'}
(`{shlex.join(argv)}`, run in its work directory; `-D`: foreground, one process) on
127.0.0.1:{port}; load: `{shlex.join(wrk_pin + ['wrk', f'-t{a.threads}', f'-c{a.connections}', f'-d{a.duration}s', '--latency', f'http://127.0.0.1:{port}/FILE'])}`.
{a.rounds} rounds; each round starts each configuration's server once (order rotated from round
to round), waits until it serves index.html, loads it for {a.warmup} s unrecorded (warm-up), runs
wrk once per file, and stops it.
{c.pin_desc} wrk runs on the same 2-core machine as the server: the load generator's own
CPU use is part of the picture (with the default pinning it has its own core).
"""]
    if server_note:
        sec.append(f"lighttpd could not be used ({server_note}); python3 -m http.server instead.\n")
    for s in sizes:
        path, size = SIZES[s]
        def use(key):
            ws = res[(key, s)]
            return clean(ws, [w["disturbed"] for w in ws])

        nat = use("native")
        nat_rps, nat_cpu = med([w["rps"] for w in nat]), med([w["cpu"] / w["requests"] for w in nat if w["requests"]])
        st_rps = med([w["rps"] for w in use("strata")])
        nat_by_round = {w["round"]: w["rps"] for w in nat}
        rows = ["| configuration | requests/s (median) | ratio to native | per-round ratio to native (median) | "
                "vs strata, no policy | spread (max−min)/median of requests/s | server CPU per request | CPU ratio to native | p99 latency | p50 latency |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for cfg in configs:
            ws = res[(cfg.key, s)]
            if not ws:
                rows.append(f"| {cfg.label} | n/a | | | | | | | | {cfg.na or 'no successful run'} |"
                            if cfg.na else f"| {cfg.label} | n/a (no successful run) | | | | | | | | |")
                continue
            ws = use(cfg.key)
            rps = med([w["rps"] for w in ws])
            cpu = med([w["cpu"] / w["requests"] for w in ws if w["requests"]])
            spread = (max(w["rps"] for w in ws) - min(w["rps"] for w in ws)) / rps
            ratio = f"×{rps / nat_rps:.3f} ({pct(rps / nat_rps)})" if nat_rps and cfg.key != "native" else ""
            mine = {w["round"]: w["rps"] for w in ws}
            pr, npr = paired(mine, nat_by_round)
            ci = median_interval(ratios(mine, nat_by_round))
            pratio = f"×{pr:.3f} ({pct(pr)}; {npr} rounds)" if pr and cfg.key != "native" else ""
            vs = f"×{rps / st_rps:.3f} ({pct(rps / st_rps)})" if st_rps and cfg.key == "policy" else ""
            cr = f"×{cpu / nat_cpu:.3f}" if nat_cpu and cfg.key != "native" else ""
            p99 = med([w["p99"] for w in ws if w["p99"] is not None])
            p50 = med([w["p50"] for w in ws if w["p50"] is not None])
            rows.append(f"| {cfg.label} | {rps:,.0f} | {ratio} | {pratio} | {vs} | {spread * 100:.1f}% | "
                        f"{cpu * 1e6:.2f} µs | {cr} | {p99 / 1e3 if p99 else 0:.2f} ms | "
                        f"{p50 / 1e3 if p50 else 0:.2f} ms |")
            if cfg.key != "native" and nat_rps:
                summary.append((f"web, {path} ({s})", cfg.key, cfg.label,
                                rps / nat_rps, (rps / st_rps) if cfg.key == "policy" and st_rps else None,
                                cpu / nat_cpu if nat_cpu else None, spread, pr, ci))
        sec.append(f"**{s}: GET /{path} ({size} bytes)**\n\n" + "\n".join(rows) + "\n")
    raw = []
    for cfg in configs:
        for s in sizes:
            ws = res[(cfg.key, s)]
            if ws:
                raw.append(f"- {cfg.label}, {s}: " + ", ".join(f"{w['rps']:.0f}" for w in ws) + " req/s; server CPU "
                           + ", ".join(f"{w['cpu']:.2f}" for w in ws) + " s for "
                           + ", ".join(str(w["requests"]) for w in ws) + " requests; wrk CPU "
                           + ", ".join(f"{w['wrk_cpu']:.2f}" for w in ws) + " s; others "
                           + ", ".join(f"{w['others']:.2f}" + ("!" if w["disturbed"] else "") for w in ws)
                           + " s; p99 " + ", ".join(f"{(w['p99'] or 0) / 1e3:.2f}" for w in ws) + " ms")
            rj = rejected[(cfg.key, s)]
            if rj:
                raw.append(f"  - redone (disturbed, not in the medians): " + ", ".join(
                    f"{w['rps']:.0f} req/s with others {w['others']:.2f} s" for w in rj))
    conf_lines = [f"- {cfg.label}: `{shlex.join(cfg.prefix(_Dry()) + argv) if not cfg.na else 'n/a'}`"
                  for cfg in configs]
    sec.append("Commands (PORT={port}; WORK is the temporary work directory; WORK/web/web-policy.toml is "
               "bench/policies/web.toml with PORT in place of 8080):\n\n".format(port=port)
               + "\n".join(x.replace(c.strata, "strata").replace(str(c.work), "WORK") for x in conf_lines) + "\n")
    if stats:
        sec.append("How the server's calls reached strata (`--fast-stats`, one extra 3-s wrk run of index.html per "
                   "strata configuration, not timed):\n\n" + "\n".join(stats) + "\n")
    if checks:
        sec.append("**Confinement check** (lighttpd started briefly under each configuration with a "
                   "configuration that oversteps the web policy; `allowed`: the server answered / wrote the file):"
                   "\n\n" + checks.replace(str(c.work), "WORK"))
    if denials:
        sec.append(denials.replace(str(c.work), "WORK") + "\n")
    left = [f"- {cfg.label}: {cfg.na}" for cfg in configs if cfg.na]
    if left:
        sec.append("Left out:\n" + "\n".join(left).replace(str(c.work), "WORK") + "\n")
    if problems:
        sec.append("Problems during the timed rounds:\n" + "\n".join(f"- {p}" for p in problems) + "\n")
    n_rej = sum(len(v) for v in rejected.values()) // max(1, len(sizes))
    sec.append(disturb_text(c, n_rej, "a wrk run", "what the machine's tasks used (/proc/stat) minus the "
                            "server's process tree and wrk, plus VM steal"))
    sec.append("<details><summary>raw numbers</summary>\n\n" + "\n".join(raw) + "\n\n(`others`: CPU seconds "
               "other processes and VM steal took during the run; `!`: over the threshold, kept because the "
               "redos were used up; the medians leave `!` runs out when they are fewer than half)\n</details>\n")
    return "\n".join(sec).replace(c.strata, "strata").replace(str(c.work), "WORK"), summary


def disturb_text(c, n_rej, unit, how):
    waits = [w for w in c.gate_waits]
    gave_up = sum(1 for w in waits if w < 0)
    return (f"Disturbance: before each timed run the script waited for a quiet half second (at most "
            f"{c.a.quiet_wait:.0f} s, {c.a.quiet_budget:.0f} s in the whole run; median wait {med([abs(w) for w in waits]) or 0:.1f} s, longest "
            f"{max([abs(w) for w in waits] or [0]):.1f} s{f', gave up {gave_up} times' if gave_up else ''}); "
            f"{unit} during which other processes took more than {c.a.disturbed:.0%} of one CPU ({how}) "
            f"was redone at the end of its round (at most {c.a.retries} redos per round): "
            f"{n_rej} redone.\n")


class _Dry:
    """A Launch stand-in for printing commands: names the seccomp fd FD."""

    def __init__(self):
        self.fds = []

    def seccomp_args(self):
        return ["--seccomp", "FD"]


# ---------------------------------------------------------------- 2. build

HEADER = """#ifndef COMMON_H
#define COMMON_H
#include <stddef.h>
#include <stdint.h>
struct item { uint32_t key; uint32_t val; char name[24]; };
uint64_t mix64(uint64_t x);
"""

UNIT = """#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

#define N{i} {n}

static int cmp_{i}(const void *a, const void *b)
{{
    const struct item *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}}

static uint64_t fill_{i}(struct item *it, size_t n, uint64_t seed)
{{
    for (size_t k = 0; k < n; k++) {{
        seed = mix64(seed + k * {mul}u);
        it[k].key = (uint32_t)seed;
        it[k].val = (uint32_t)(seed >> 32);
        snprintf(it[k].name, sizeof it[k].name, "u{i}-%zu-%u", k, it[k].val % 1000u);
    }}
    return seed;
}}

uint64_t unit_{i}(uint64_t seed)
{{
    struct item *it = calloc(N{i}, sizeof *it);
    if (!it)
        return 0;
    uint64_t h = fill_{i}(it, N{i}, seed ^ {salt}u);
    qsort(it, N{i}, sizeof *it, cmp_{i});
    for (size_t k = 0; k < N{i}; k++) {{
        h ^= mix64(it[k].key) + strlen(it[k].name) * {num}u;
        if (k + 1 < N{i} && it[k].key > it[k + 1].key)
            h = 0;
    }}
    free(it);
    return h;
}}
"""


def build_setup(work, files, name="build"):
    """The build tree (WORK/NAME): `files` units, main.c, a Makefile; read-only but for ./out."""
    b = work / name
    (b / "src").mkdir(parents=True)
    (b / "include").mkdir()
    (b / "out").mkdir()
    n = files
    hdr = HEADER + "".join(f"uint64_t unit_{i:03d}(uint64_t seed);\n" for i in range(n)) + "#endif\n"
    (b / "include" / "common.h").write_text(hdr)
    for i in range(n):
        (b / "src" / f"u{i:03d}.c").write_text(
            UNIT.format(i=f"{i:03d}", num=i + 1, n=64 + i % 50, mul=2654435761 + i, salt=0x9e3779b9 ^ (i * 7919)))
    main = ['#include <stdio.h>', '#include "common.h"',
            'uint64_t mix64(uint64_t x) { x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; return x; }',
            'int main(void)', '{', '    uint64_t h = 1;']
    main += [f"    h = h * 31 + unit_{i:03d}(h);" for i in range(n)]
    main += ['    printf("%016llx\\n", (unsigned long long)h);', '    return 0;', '}']
    (b / "src" / "main.c").write_text("\n".join(main) + "\n")
    (b / "Makefile").write_text(
        "CC = gcc\nCFLAGS = -O2 -Wall -Iinclude\n"
        "SRCS = $(wildcard src/*.c)\nOBJS = $(patsubst src/%.c,out/%.o,$(SRCS))\n\n"
        "out/app: $(OBJS)\n\t$(CC) -o $@ $^\n\n"
        "out/%.o: src/%.c include/common.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n")
    # read-only for the build, except ./out (as root this stops nothing: the sandboxes do)
    for p in [b, b / "src", b / "include"] + list((b / "src").iterdir()) + [b / "include" / "common.h", b / "Makefile"]:
        p.chmod(p.stat().st_mode & ~0o222)
    return b


def compile_commands(b):
    """The build tree's compiles, as its Makefile runs them, one command per source (in its top
    directory)."""
    return [f"gcc -O2 -Wall -Iinclude -c -o out/{p.stem}.o src/{p.name}" for p in sorted((b / "src").glob("*.c"))]


def clean_out(b):
    """Empties ./out but for ./out/.tmp (TMPDIR: gcc's temporary files, which gcc removes, and strata's
    session files, kept from run to run as they would be in /tmp)."""
    out = b / "out"
    for p in out.iterdir():
        if p.name == ".tmp":
            continue
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


def build_configs(c, b):
    out = b / "out"
    pol = Path(c.a.root) / "bench/policies/build.toml"

    def bwrap(l):
        return ["--ro-bind", "/", "/", "--bind", str(out), str(out),
                "--dev", "/dev", "--proc", "/proc", "--chdir", str(b), "--unshare-all", "--die-with-parent",
                "--new-session", "--cap-drop", "ALL", *l.seccomp_args()]

    firejail = ["--noprofile", "--quiet", "--read-only=/", f"--read-write={out}",
                "--net=none", "--protocol=unix", "--seccomp", "--caps.drop=all", "--nonewprivs"]
    return sandbox_configs(c, [], pol, "build.toml", bwrap, firejail)


def pinned(c):
    """The build's `taskset` prefix (--build-pin), outside every wrapper: the whole tree stays on that CPU."""
    return ["taskset", "-c", c.a.build_pin] if c.a.build_pin else []


def run_cfg(c, cfg, argv, cwd, timeout):
    """(status, stdout, stderr, wall, cpu) of argv under cfg, with TMPDIR=cwd/out/.tmp; cpu: user + system
    of the waited-for tree (getrusage)."""
    env = dict(os.environ, TMPDIR=str(cwd / "out" / ".tmp"))
    (cwd / "out" / ".tmp").mkdir(exist_ok=True)
    l = Launch(c)
    full = pinned(c) + cfg.prefix(l) + argv
    ch0 = children_cpu()
    t0 = time.perf_counter()
    try:
        p = subprocess.run(full, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                           pass_fds=l.fds, env=env)
        st, out, err = p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        st, out, err = "timeout", "", ""
    wall = time.perf_counter() - t0
    l.close()
    return st, out, err, wall, children_cpu() - ch0


CHECKS = [
    ("write ./out", "echo x > out/.probe"),
    ("write the tree", "echo x > .probe"),
    ("create in /tmp", "f=/tmp/strata-policy-probe.$$; echo x > $f && rm -f $f"),
    ("TCP connect 127.0.0.1", "exec 3<>/dev/tcp/127.0.0.1/{port}"),
    ("exec a program written to ./out", "cp /usr/bin/true out/.t && out/.t"),
]


def why_failed(st, err):
    """The reason in bash's last error line (`bash: line 1: X: Permission denied` -> Permission denied)."""
    lines = [l for l in err.splitlines() if l.strip()]
    if not lines:
        return f"exit {st}"
    deny = [l for l in lines if re.search(r"\[pid \d+\] deny ", l)]  # strata's log line
    if deny:
        m = re.search(r"deny (\w+)\(.*?= -1 (\w+)", deny[-1])
        rule = re.search(r" by (\S+)", deny[-1])
        if m:
            return f"strata: {m.group(1)} → {m.group(2)}" + (f", {rule.group(1)}" if rule else "")
    return lines[-1].rsplit(": ", 1)[-1].strip().replace("|", "/")[:90]


def confinement(c, b, configs):
    """Runs bash with each check under each configuration: what got through."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    port = ls.getsockname()[1]
    bash = shutil.which("bash") or "/bin/bash"
    rows = ["| configuration | " + " | ".join(n for n, _ in CHECKS) + " |", "|---" * (len(CHECKS) + 1) + "|"]
    try:
        for cfg in configs:
            if cfg.na:
                continue
            cells = []
            for name, script in CHECKS:
                st, out, err, _, _ = run_cfg(c, cfg, [bash, "-c", script.format(port=port)], b, 30)
                cells.append("allowed" if st == 0 else f"denied ({why_failed(st, err)})")
            for p in (b / ".probe", b / "out" / ".probe", b / "out" / ".t"):
                try:
                    p.unlink()
                except OSError:
                    pass
            rows.append(f"| {cfg.label} | " + " | ".join(cells) + " |")
    finally:
        ls.close()
    return "\n".join(rows) + "\n"


EXEC_N = 64


def count_execs(c, b, argv):
    """Programs a native build starts (successful execve, from strace -f), or None without strace."""
    if not shutil.which("strace"):
        return None
    clean_out(b)
    f = c.work / "execs.strace"
    st, _, _, _, _ = run_cfg(c, Config("native", "native", lambda l: []),
                             ["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(f), "--"] + argv, b, 600)
    clean_out(b)
    if st != 0 or not f.exists():
        return None
    return sum(1 for l in open(f, errors="replace") if "execve(" in l and l.rstrip().endswith("= 0"))


def exec_cost(c, b, configs, rounds=9):
    """What starting a program costs under each configuration (a build starts hundreds): /bin/sh -c with
    1 and with 1 + EXEC_N /bin/true, interleaved rounds, medians; the difference over EXEC_N is per exec.
    Both start one program at least, so what a run pays once at its first exec (under a policy, strata
    makes its text images anew in each run) is in both and not counted per exec."""
    live = [cfg for cfg in configs if not cfg.na]
    cmds = {0: ["/bin/sh", "-c", "/bin/true"], EXEC_N: ["/bin/sh", "-c", "; ".join(["/bin/true"] * (EXEC_N + 1))]}
    t = {(cfg.key, n): [] for cfg in live for n in cmds}
    for r in range(rounds):
        for cfg in rotated(live, r):
            c.gate_waits.append(quiet_gate(c, f"exec cost {cfg.key}"))
            for n, argv in cmds.items():
                st, _, _, wall, _ = run_cfg(c, cfg, argv, b, 60)
                if st == 0:
                    t[(cfg.key, n)].append(wall)
    rows = ["| configuration | `sh -c /bin/true` (median) | per exec (median difference / " + str(EXEC_N) + ") | "
            "added per exec over native |", "|---|---|---|---|"]
    base = None
    for cfg in live:
        t0, tn = med(t[(cfg.key, 0)]), med(t[(cfg.key, EXEC_N)])
        if t0 is None or tn is None:
            rows.append(f"| {cfg.label} | n/a | | |")
            continue
        per = (tn - t0) / EXEC_N
        if cfg.key == "native":
            base = per
        c.exec_cost[cfg.key] = per
        rows.append(f"| {cfg.label} | {t0 * 1e3:.1f} ms | {per * 1e3:.2f} ms | "
                    f"{'' if cfg.key == 'native' or base is None else f'{(per - base) * 1e3:+.2f} ms'} |")
        log(f"build: exec cost {cfg.key}: start {t0 * 1e3:.1f} ms, per exec {per * 1e3:.2f} ms")
    nproc = (f" The build starts {c.build_execs} programs (successful execve calls of a native build under "
             f"`strace -f -e trace=execve`)." if c.build_execs else "")
    return (f"**Starting a program** (a build starts hundreds): `/bin/sh -c` running /bin/true once and "
            f"{EXEC_N + 1} times (what a run pays once, at its first exec, is in both), under each configuration in WORK/build, {rounds} interleaved rounds "
            f"(a quiet half second before each configuration's pair), wall-time medians.{nproc}\n\n" + "\n".join(rows) + "\n")


def exp_build(c):
    a = c.a
    b = build_setup(c.work, c.a.files)
    configs = build_configs(c, b)
    make = f"make -j{a.jobs} -s"
    # `times` (the shell's) gives the CPU of the whole build from inside every sandbox (bwrap's pid
    # namespace hides it from getrusage)
    argv = ["/bin/sh", "-c", f"{make}; s=$?; times >&2; exit $s"]
    expect = None
    for cfg in configs:
        if cfg.na:
            continue
        clean_out(b)
        st, out, err, wall, _ = run_cfg(c, cfg, argv, b, 600)
        why = None
        if st != 0:
            why = f"smoke build exit {st}: {tail(err)}"
        else:
            rst, rout, rerr = sh([str(b / "out" / "app")])
            if rst != 0:
                why = f"out/app exits {rst}: {tail(rerr)}"
            elif expect is None:
                expect = rout
            elif rout != expect:
                why = f"out/app prints {rout.strip()!r}, native build prints {expect.strip()!r}"
        if why:
            cfg.na = why
        log(f"smoke build: {cfg.label:34} {cfg.na or 'ok'} ({wall:.2f}s)")
    checks = confinement(c, b, configs)
    times = {cfg.key: [] for cfg in configs}
    cpus = {cfg.key: [] for cfg in configs}
    others = {cfg.key: [] for cfg in configs}
    rounds_of = {cfg.key: [] for cfg in configs}
    rejected = {cfg.key: [] for cfg in configs}
    problems = []
    c.gate_waits = []
    live = [cfg for cfg in configs if not cfg.na]
    for r in range(a.build_rounds):
        queue = rotated(live, r)
        redos = a.retries
        log(f"build: round {r + 1}/{a.build_rounds} ({time.monotonic() - c.t_start:.0f}s so far)")
        while queue:
            cfg = queue.pop(0)
            clean_out(b)
            c.gate_waits.append(quiet_gate(c, f"build {cfg.key}"))
            m0 = machine()
            st, out, err, wall, ru = run_cfg(c, cfg, argv, b, 600)
            d = delta(m0, machine())
            if st != 0 or not (b / "out" / "app").exists():
                problems.append(f"{cfg.label}, round {r + 1}: exit {st}: {tail(err)}")
                continue
            # the build's CPU: getrusage of the run (wrappers included), or the shell's own `times` when
            # that is more (bwrap's pid namespace: getrusage sees only bwrap itself)
            tm = re.findall(r"(\d+)m([\d.]+)s (\d+)m([\d.]+)s", err)
            sh_cpu = (sum(int(x[0]) * 60 + float(x[1]) + int(x[2]) * 60 + float(x[3]) for x in tm[-2:])
                      if len(tm) >= 2 else 0.0)
            cpu = max(ru, sh_cpu)
            oth = max(0.0, d["tasks"] - cpu) + d["steal"]
            bad = oth > a.disturbed * wall
            log(f"  {cfg.key:9} {wall:.2f}s wall, {cpu:.2f}s CPU, others {oth:.2f}s"
                + ("  DISTURBED" if bad else ""))
            if bad and redos > 0:
                redos -= 1
                rejected[cfg.key].append((wall, oth))
                queue.append(cfg)
                continue
            times[cfg.key].append(wall)
            cpus[cfg.key].append(cpu)
            others[cfg.key].append((oth, bad))
            rounds_of[cfg.key].append(r)
    stats = []
    if c.has_stats:
        for cfg in configs:
            if cfg.na or cfg.key not in ("strata", "policy"):
                continue
            clean_out(b)
            st, out, err, wall, _ = run_cfg(c, with_stats(cfg), argv, b, 600)
            c.stats[("build", cfg.key)] = stats_of(err)
            stats.append(f"- {cfg.label}: {stats_txt(stats_of(err))}")
            log(f"build: fast-stats {cfg.key}: {stats_txt(stats_of(err))}")
    c.build_execs = count_execs(c, b, argv)
    execs = exec_cost(c, b, configs)
    clean_out(b)

    def use(key, xs):
        return clean(xs[key], [b for _, b in others[key]])

    nat, natc = med(use("native", times)), med(use("native", cpus))
    st_t = med(use("strata", times))
    summary = []
    nat_rounds = {r: t for (t, r) in clean(list(zip(times["native"], rounds_of["native"])),
                                           [b for _, b in others["native"]])}
    nat_cpu_rounds = {r: x for (x, r) in clean(list(zip(cpus["native"], rounds_of["native"])),
                                               [b for _, b in others["native"]])}
    rows = ["| configuration | wall (median) | ratio to native | per-round ratio to native (median) | "
            "vs strata, no policy | spread (max−min)/median | CPU (median) | CPU ratio to native | "
            "per-round CPU ratio to native (median, 95% interval) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for cfg in configs:
        ts = times[cfg.key]
        if not ts:
            rows.append(f"| {cfg.label} | n/a | | | | | | | {cfg.na or 'no successful run'} |")
            continue
        ts = use(cfg.key, times)
        t, cp = med(ts), med(use(cfg.key, cpus))
        ratio = f"×{t / nat:.3f} ({pct(t / nat)})" if nat and cfg.key != "native" else ""
        vs = f"×{t / st_t:.3f} ({pct(t / st_t)})" if st_t and cfg.key == "policy" else ""
        cr = f"×{cp / natc:.3f}" if natc and cfg.key != "native" else ""
        mine = {r: x for (x, r) in clean(list(zip(times[cfg.key], rounds_of[cfg.key])),
                                         [b for _, b in others[cfg.key]])}
        pr, npr = paired(mine, nat_rounds)  # time ratio: config / native
        ci = median_interval([1 / x for x in ratios(mine, nat_rounds)])  # as throughput
        mine_cpu = {r: x for (x, r) in clean(list(zip(cpus[cfg.key], rounds_of[cfg.key])),
                                             [b for _, b in others[cfg.key]])}
        pc, _ = paired(mine_cpu, nat_cpu_rounds)
        cci = median_interval(ratios(mine_cpu, nat_cpu_rounds))
        pcpu = (f"×{pc:.3f}" + (f" (95%: ×{cci[0]:.3f}–×{cci[1]:.3f})" if cci else "")
                if pc and cfg.key != "native" else "")
        pratio = f"×{pr:.3f} ({pct(pr)}; {npr} rounds)" if pr and cfg.key != "native" else ""
        rows.append(f"| {cfg.label} | {t:.2f} s | {ratio} | {pratio} | {vs} | {(max(ts) - min(ts)) / t * 100:.1f}% | "
                    f"{cp:.2f} s | {cr} | {pcpu} |")
        if nat and cfg.key != "native":
            # a longer time is a cost: express as the throughput ratio (native / config) like the web rows
            summary.append(("build", cfg.key, cfg.label, nat / t,
                            (st_t / t) if cfg.key == "policy" and st_t else None, cp / natc if natc else None,
                            (max(ts) - min(ts)) / t, 1 / pr if pr else None, ci))
    raw = []
    for cfg in configs:
        if times[cfg.key]:
            raw.append(f"- {cfg.label}: " + ", ".join(f"{t:.2f}" for t in times[cfg.key]) + " s wall; CPU "
                       + ", ".join(f"{t:.2f}" for t in cpus[cfg.key]) + " s; others "
                       + ", ".join(f"{o:.2f}" + ("!" if bad else "") for o, bad in others[cfg.key]) + " s")
        if rejected[cfg.key]:
            raw.append("  - redone (disturbed, not in the medians): " + ", ".join(
                f"{t:.2f} s with others {o:.2f} s" for t, o in rejected[cfg.key]))
    cmds = [f"- {cfg.label}: `{shlex.join(pinned(c) + cfg.prefix(_Dry()) + argv)}`" for cfg in configs if not cfg.na]
    pin_text = (f"each build pinned to CPU {a.build_pin} (`taskset -c {a.build_pin}`, outside every wrapper)"
                if a.build_pin else "nothing pinned")
    nfiles = a.files + 1
    sec = [f"""## 2. Build: `make -j{a.jobs}` of {nfiles} generated C files

A generated tree (WORK/build: {a.files} units of ~45 lines, each including stdio.h, stdlib.h,
string.h and a common header, plus main.c; a Makefile compiling each with `gcc -O2 -Wall` into
./out and linking out/app). The tree is chmod'ed read-only except ./out (as root that stops
nothing by itself: the sandboxes are what confine the build). Each run starts from an empty
./out (but for ./out/.tmp, which every configuration gets as TMPDIR: gcc's temporary files,
and strata's session files, kept from run to run as in /tmp; a policy may not let the program
write /tmp itself, where strata sessions keep their state) and runs in the tree's top
directory; a smoke build per configuration checks that
out/app prints the same checksum as the native build. {a.build_rounds} rounds, order rotated;
{pin_text}. The command is `/bin/sh -c 'make -j{a.jobs} -s; s=$?; times >&2; exit $s'`: CPU is
user + system time of the waited-for process tree (getrusage, wrappers included), or what the
shell's `times` reports from inside the sandbox when that is more (bwrap: getrusage from
outside misses what its pid namespace reaps).

""" + "\n".join(rows) + "\n", "Commands (WORK is the temporary work directory; run in WORK/build):\n\n"
           + "\n".join(cmds).replace(c.strata, "strata").replace(str(c.work), "WORK") + "\n",
           ("How the build's calls reached strata (`--fast-stats`, one extra build per strata configuration, "
            "not timed; summed over every process):\n\n" + "\n".join(stats) + "\n") if stats else "",
           execs,
           "**Confinement check** (one `bash -c` per cell, in WORK/build, under the same configuration "
           "as the build; the connect goes to a listener the benchmark opens on 127.0.0.1):\n\n"
           + checks.replace(str(c.work), "WORK")]
    left = [f"- {cfg.label}: {cfg.na}" for cfg in configs if cfg.na]
    if left:
        sec.append("Left out:\n" + "\n".join(left).replace(str(c.work), "WORK") + "\n")
    if problems:
        sec.append("Problems during the timed rounds:\n" + "\n".join(f"- {p}" for p in problems) + "\n")
    sec.append(disturb_text(c, sum(len(v) for v in rejected.values()), "a build",
                            "the machine's tasks (/proc/stat) minus the build's own CPU, plus VM steal"))
    sec.append("<details><summary>raw numbers</summary>\n\n" + "\n".join(raw) + "\n\n(`others`: CPU seconds "
               "other processes and VM steal took during the build; `!`: over the threshold, kept because the "
               "redos were used up; the medians leave `!` runs out when they are fewer than half)\n</details>\n")
    return "\n".join(sec).replace(c.strata, "strata").replace(str(c.work), "WORK"), summary


# ---------------------------------------------------------------- main

def exp_requests(c):
    """The web server under load, the configurations' servers all running at once (each on its own
    port, idle but for its turn), loaded in turn by short wrk runs: the runs being compared are
    seconds apart, so the machine's drift falls on all of them alike. requests/s of each run is
    paired with native's run of the same round and file."""
    a = c.a
    sizes = [s.strip() for s in a.sizes.split(",") if s.strip()]
    if c.tools.get("wrk"):
        return "## 4. Web server, configurations in turn\n\n**n/a**: no load generator.\n", []
    if c.tools.get("lighttpd"):
        return f"## 4. Web server, configurations in turn\n\n**n/a**: {c.tools['lighttpd']}\n", []
    ports = {}
    web = web_setup(c, 0, "web-turns")
    conf, var = web / "conf", web / "var"
    # one port, configuration file and (for the policy) policy file per configuration
    for key in ("native", "strata", "policy", "bwrap", "firejail"):
        ports[key] = free_port()
        (conf / f"lighttpd-{key}.conf").write_text(
            LIGHTTPD_CONF.format(www=web / "www", var=var, port=ports[key], log=f"error-{key}.log"))
    policy = web_policy(c, web, ports["policy"], "/usr/sbin/lighttpd")
    configs = web_configs(c, web, policy)
    wrk_pin = c.pin_wrk
    servers = {}
    problems = []
    try:
        for cfg in configs:
            if cfg.na:
                continue
            argv = ["lighttpd", "-D", "-f", str(conf / f"lighttpd-{cfg.key}.conf")]
            srv = Server(c, cfg, argv, web, ports[cfg.key], f"turns-{cfg.key}.log")
            why = srv.wait_ready("index.html", 4096)
            if why:
                cfg.na = f"{why}; server output: {tail((web / f'turns-{cfg.key}.log').read_text(errors='replace'))}"
                srv.stop()
                continue
            servers[cfg.key] = srv
            sh(wrk_pin + ["wrk", f"-t{a.threads}", f"-c{a.connections}", f"-d{a.warmup}s",
                          f"http://127.0.0.1:{ports[cfg.key]}/index.html"], timeout=a.warmup + 30)
        keys = [cfg.key for cfg in configs if cfg.key in servers]
        rps = {(k, s): {} for k in keys for s in sizes}
        cpu = {(k, s): {} for k in keys for s in sizes}
        n = 0
        for r in range(a.turn_rounds):
            log(f"web in turn: round {r + 1}/{a.turn_rounds} ({time.monotonic() - c.t_start:.0f}s so far)")
            for s in sizes:
                path, _ = SIZES[s]
                order = rotated(keys, n)
                n += 1
                for k in order:
                    pid = servers[k].proc.pid
                    cpu0 = tree_cpu(pid)
                    st, out, err = sh(wrk_pin + ["wrk", f"-t{a.threads}", f"-c{a.connections}",
                                                 f"-d{a.turn_duration}s", f"http://127.0.0.1:{ports[k]}/{path}"],
                                      timeout=a.turn_duration + 30)
                    w = parse_wrk(out)
                    if st != 0 or w["rps"] is None or w["errors"] or w["non2xx"]:
                        problems.append(f"{k}, {s}, round {r + 1}: wrk exit {st}, {w['errors']} socket errors, "
                                        f"{w['non2xx']} non-2xx: {tail(out + err)}")
                        continue
                    rps[(k, s)][r] = w["rps"]
                    if w["requests"]:
                        cpu[(k, s)][r] = (tree_cpu(pid) - cpu0) / w["requests"]
    finally:
        for srv in servers.values():
            srv.stop()
    summary = []
    rows = ["| file | configuration | requests/s (median) | per-round ratio to native (median, 95% interval) | "
            "server CPU per request, per-round ratio to native (median, 95% interval) |", "|---|---|---|---|---|"]
    for s in sizes:
        nat = rps.get(("native", s), {})
        natc = cpu.get(("native", s), {})
        for cfg in configs:
            k = cfg.key
            if k not in servers:
                rows.append(f"| {s} | {cfg.label} | n/a | {cfg.na or 'not started'} | |")
                continue
            mine = rps[(k, s)]
            if not mine:
                rows.append(f"| {s} | {cfg.label} | n/a (no successful run) | | |")
                continue
            m = med(list(mine.values()))
            if k == "native":
                rows.append(f"| {s} | native | {m:,.0f} | | |")
                continue
            rs = ratios(mine, nat)
            pr, ci = med(rs), median_interval(rs)
            crs = ratios(cpu[(k, s)], natc)
            cr, cci = med(crs), median_interval(crs)
            rows.append(f"| {s} | {cfg.label} | {m:,.0f} | ×{pr:.3f} ({pct(pr)})"
                        + (f"; ×{ci[0]:.3f}–×{ci[1]:.3f}" if ci else "") + f" ({len(rs)} rounds) | "
                        + (f"×{cr:.3f}" if cr else "") + (f"; ×{cci[0]:.3f}–×{cci[1]:.3f}" if cci else "") + " |")
            spread = (max(mine.values()) - min(mine.values())) / m
            summary.append((f"web in turn, {SIZES[s][0]} ({s})", k, cfg.label, pr, None, cr, spread, pr, ci))
    sec = f"""## 4. Web server, configurations in turn

lighttpd as in section 1, but every configuration's server runs at once, each on its own port
(its own copy of the configuration; the policy's copy of web.toml allows that port), idle but
for its turn: each round loads every configuration in turn with `wrk -t{a.threads}
-c{a.connections} -d{a.turn_duration}s` per file (order rotated), so the runs being compared are
seconds apart and the machine's drift falls on all of them alike. {a.turn_rounds} rounds after a
{a.warmup}-s warm-up of each server. The ratios pair each run with native's run of the same
file in the same round; the interval is a seeded bootstrap of their median (95%). Server CPU
per request is from /proc (10 ms ticks).

""" + "\n".join(rows) + "\n"
    if problems:
        sec += "\nProblems:\n" + "\n".join(f"- {p}" for p in problems[:20]) + "\n"
    return sec, summary


def exp_compiles(c):
    """The build's compiles handed to every configuration in turn (bench/compile_driver.c): one
    long-lived driver per configuration runs compile i, then the next configuration's driver runs
    the same compile, milliseconds later, so the machine's drift falls on all of them alike. CPU of
    each compile (wait4's rusage: gcc, cc1 and as) is paired with native's run of the same compile
    in the same round."""
    a = c.a
    b = build_setup(c.work, a.files, "compiles")
    configs = build_configs(c, b)
    driver = c.work / "compile_driver"
    why = build_driver(driver)
    if why:
        return f"## 3. Compiles, one at a time\n\n**failed**: compile_driver does not build: {tail(why)}\n", []
    cmds = compile_commands(b)
    cmdfile = c.work / "compiles.txt"
    cmdfile.write_text("\n".join(cmds) + "\n")
    (b / "out" / ".tmp").mkdir(exist_ok=True)
    drivers = Drivers(driver, cmdfile, b, dict(os.environ, TMPDIR=str(b / "out" / ".tmp")))
    for cfg in configs:
        if cfg.na:
            continue
        l = Launch(c)
        with open(c.work / f"driver-{cfg.key}.err", "w") as errf:
            drivers.start(cfg.key, pinned(c) + cfg.prefix(l), l.fds, errf)
        l.close()
    cpu = {k: {} for k in drivers.procs}  # key -> {(round, i): seconds}
    wall = {k: {} for k in drivers.procs}
    problems = []
    try:
        for cfg in configs:  # a smoke compile per configuration
            if cfg.key not in drivers.procs:
                continue
            status, _, _ = drivers.ask(cfg.key, 0)
            log(f"compiles: smoke compile {cfg.key:9} status {status}")
            if status != 0:
                cfg.na = (f"the first compile's status is {status}: "
                          f"{tail((c.work / f'driver-{cfg.key}.err').read_text(errors='replace'))}")
                drivers.drop(cfg.key)
        keys = [cfg.key for cfg in configs if cfg.key in drivers.procs]
        logged = -1
        for r, i, k, (status, cp, wl) in drivers.in_turn(keys, a.compile_rounds, len(cmds)):
            if r != logged:
                logged = r
                log(f"compiles: round {r + 1}/{a.compile_rounds} ({time.monotonic() - c.t_start:.0f}s so far)")
            if status != 0:
                problems.append(f"{k}: compile {i} (round {r + 1}) status {status}")
                continue
            cpu[k][(r, i)], wall[k][(r, i)] = cp, wl
    finally:
        drivers.close()
    rows = ["| configuration | CPU per compile (median) | per-compile CPU ratio to native (median, 95% interval) | "
            "per-round CPU ratio to native (median of the rounds' sums) | per-compile wall ratio (median, 95% interval) |",
            "|---|---|---|---|---|"]
    summary = []
    nat = cpu.get("native", {})
    natw = wall.get("native", {})
    for cfg in configs:
        if cfg.key not in cpu or not cpu[cfg.key]:
            rows.append(f"| {cfg.label} | n/a | | | {cfg.na or 'no successful compile'} |")
            continue
        mine = cpu[cfg.key]
        med_cpu = med(list(mine.values()))
        if cfg.key == "native":
            rows.append(f"| native | {med_cpu * 1e3:.1f} ms | | | |")
            continue
        rs = ratios(mine, nat)
        pr, ci = med(rs), median_interval(rs)
        ws = ratios(wall[cfg.key], natw)
        pw, wci = med(ws), median_interval(ws)
        sums = {}
        for (r, i), x in mine.items():
            if (r, i) in nat:
                sums.setdefault(r, [0.0, 0.0])
                sums[r][0] += x
                sums[r][1] += nat[(r, i)]
        per_round = med([x / y for x, y in sums.values() if y])
        fmt = lambda v, iv: f"×{v:.3f} ({pct(v)})" + (f"; ×{iv[0]:.3f}–×{iv[1]:.3f}" if iv else "")
        rows.append(f"| {cfg.label} | {med_cpu * 1e3:.1f} ms | {fmt(pr, ci)} ({len(rs)} compiles) | "
                    f"{f'×{per_round:.3f}' if per_round else ''} | {fmt(pw, wci)} |")
        # (of the rounds' totals: the compiles themselves differ in size)
        totals = [x for x, _ in sums.values()]
        spread = (max(totals) - min(totals)) / med(totals)
        # as throughput (native = 1): compiles per CPU second
        summary.append(("compiles (CPU)", cfg.key, cfg.label, 1 / pr, None, pr, spread, 1 / pr,
                        (1 / ci[1], 1 / ci[0]) if ci else None))
    sec = f"""## 3. The build's compiles, handed to every configuration in turn

The {len(cmds)} compiles of the build's tree (a copy: WORK/compiles; `gcc -O2 -Wall -Iinclude -c -o out/uNNN.o
src/uNNN.c`, as the Makefile runs them) are run by one long-lived driver per configuration
(bench/compile_driver.c, started as `CONFIG compile_driver compiles.txt`; it posix_spawns the
compile it is asked for and reports the CPU of the compile and everything it waited for, from
wait4's rusage). Compile i goes to every configuration in turn (order rotated from compile to
compile) before compile i+1, so the runs of one compile under the configurations are
milliseconds apart: the machine's drift, which spreads whole builds by 20–45% here, falls on all
of them alike. {a.compile_rounds} rounds; {"each driver pinned to CPU " + a.build_pin if a.build_pin else "nothing pinned"}.
The ratios pair each compile with native's run of the same compile in the same round; the
interval is a seeded bootstrap of their median (95%). What this leaves out of a build: make
itself, and each sandbox's own start (once per build).

""" + "\n".join(rows) + "\n"
    if problems:
        sec += "\nProblems:\n" + "\n".join(f"- {p}" for p in problems[:20]) + "\n"
    return sec, summary


def reading_text(c, summary):
    """A short reading of the summary, from the numbers only."""
    out = []
    pol = [(w, pr or r, cr) for w, k, _, r, _, cr, _, pr, _ in summary if k == "policy"]
    if pol:
        out.append("Per-round ratios to native (throughput). With the policy: " + "; ".join(
            f"{w.split(':')[0]} ×{r:.3f} ({pct(r)})" + (f", CPU ×{cr:.3f}" if cr else "") for w, r, cr in pol) + ".")
    plain = [(w, pr or r) for w, k, _, r, _, _, _, pr, _ in summary if k == "strata"]
    if plain:
        out.append("strata without a policy: " + "; ".join(f"{w} ×{r:.3f}" for w, r in plain) + ".")
    for wl in ("web", "build"):
        sp, s0 = c.stats.get((wl, "policy")), c.stats.get((wl, "strata"))
        if sp and s0:
            tp, t0 = sp[2] / max(1, sum(sp[:3])), s0[2] / max(1, sum(s0[:3]))
            out.append(f"{wl.capitalize()}: under the policy {tp:.1%} of the calls trapped ({sp[3]:,} sites rewritten) against "
                       f"{t0:.1%} without one ({s0[3]:,} sites rewritten; a trap is strata's slow path, "
                       f"bench/run-stack.sh and bench/run-fast.sh measure it).")
    ec = c.exec_cost
    if "native" in ec and "strata" in ec and "policy" in ec:
        n = c.build_execs
        out.append(f"Starting a program takes {ec['native'] * 1e3:.2f} ms natively, {ec['strata'] * 1e3:.2f} ms under "
                   f"strata and {ec['policy'] * 1e3:.2f} ms under build.toml"
                   + (f"; the build starts {n} programs, so the policy's extra start-up cost alone is about "
                      f"{n * (ec['policy'] - ec['strata']) * 1e3:.0f} ms of work over strata's" if n else "")
                   + ".")
    peers = [(w, l, pr or r) for w, k, l, r, _, _, _, pr, _ in summary if k in ("bwrap", "firejail")]
    if peers:
        out.append("Peers: " + "; ".join(f"{l} {w} ×{r:.3f}" for w, l, r in peers) + ".")
    spreads = [x[6] for x in summary]
    if spreads:
        out.append(f"Noise: the runs behind a median spread {min(spreads) * 100:.0f}–{max(spreads) * 100:.0f}% "
                   f"(max−min over the median) on this shared 2-core VM; the verdict says whether the "
                   f"per-round ratio's 95% interval lies on one side of the target. The CPU ratios are "
                   f"steadier than throughput.")
    return "**Reading.** " + " ".join(out)



def landlock_abi():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        v = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
        if v < 0:
            return f"not available ({os.strerror(ctypes.get_errno())})"
        return f"ABI {v}"
    except OSError as e:
        return f"unknown ({e})"


def version(argv, rx=r"\d+\.\d+(\.\d+)?"):
    if not shutil.which(argv[0]):
        return "not installed"
    st, out, err = sh(argv)
    m = re.search(rx, out + err)
    return m.group(0) if m else "?"


def main():
    # SIGTERM (a timeout, a killed job) ends the run through the cleanup below, as Ctrl-C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    a = parse_args()
    root = Path(a.root)
    only = {x.strip() for x in a.only.split(",") if x.strip()}
    if not os.access(a.strata, os.X_OK):
        sys.exit(f"{a.strata}: not found (cargo build --release)")
    command = a.command or shlex.join(["python3", "bench/policy.py"] + sys.argv[1:])
    base = Path(a.workdir) if a.workdir else root / "target"
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="policy-bench.", dir=base))
    strata, built, digests = benchlib.copy_strata(a.strata, work)
    commit = sh(["git", "-C", str(root), "describe", "--always", "--dirty"])[1].strip() or "unknown"
    t_start = time.monotonic()
    c = Ctx(a, strata, work, t_start)
    if a.pin == "none" or not shutil.which("taskset"):
        c.pin_server, c.pin_wrk = [], []
        c.pin_desc = "Nothing pinned" + (" (taskset is not installed)." if a.pin != "none" else " (`--pin none`).")
    else:
        d = dict(x.split("=", 1) for x in a.pin.split(","))
        allowed = sorted(os.sched_getaffinity(0))
        for k in ("server", "wrk"):
            if int(d[k]) not in allowed:
                c.notes.append(f"CPU {d[k]} is not available for the {k}; CPU {allowed[0]} instead")
                d[k] = str(allowed[0])
        c.pin_server, c.pin_wrk = ["taskset", "-c", d["server"]], ["taskset", "-c", d["wrk"]]
        c.pin_desc = (f"The server (with whatever wraps it) runs under `taskset -c {d['server']}`, wrk under "
                      f"`taskset -c {d['wrk']}`.")
    load_before = open("/proc/loadavg").read().split()[:3]
    busy_before = benchlib.busy_others()
    sections, summary = [], []
    try:
        check_tools(c)
        check_policy(c)
        make_seccomp(c)
        for key, fn in (("web", exp_web), ("build", exp_build), ("compiles", exp_compiles),
                        ("requests", exp_requests)):
            if key not in only:
                continue
            try:
                s, summ = fn(c)
                sections.append(s)
                summary += summ
            except Exception as e:  # one broken experiment must not lose the other
                import traceback
                traceback.print_exc()
                sections.append(f"## {key}\n\n**failed**: `{e!r}`\n")
        elapsed = time.monotonic() - t_start
        load_after = open("/proc/loadavg").read().split()[:3]
        busy_after = benchlib.busy_others()
        cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
                         "unknown")
        today = datetime.date.today().isoformat()
        out = Path(a.out) if a.out else root / "bench" / "results" / f"{today}-policy.md"
        out.parent.mkdir(parents=True, exist_ok=True)

        srows = ["| workload | configuration | throughput ratio to native (of the medians) | per-round ratio "
                 "(median) | CPU per unit of work, ratio to native | policy's throughput vs strata without one | "
                 "spread of the medians' runs | target: ≤ 2% below native (per-round ratio) |",
                 "|---|---|---|---|---|---|---|---|"]
        for what, key, label, r, rp, cr, spread, pr, ci in summary:
            said = verdict(pr if pr else r, ci) if key == "policy" else ""
            srows.append(f"| {what} | {label} | ×{r:.3f} ({pct(r)}) | {f'×{pr:.3f} ({pct(pr)})' if pr else ''} | "
                         f"{f'×{cr:.3f}' if cr else ''} | {pct(rp) if rp is not None else ''} | {spread * 100:.0f}% | "
                         f"{said} |")
        if c.policy_ok:
            srows.append(f"| all | strata run --policy | n/a | | | | | not measured: {c.policy_ok} |")
        reading = reading_text(c, summary)
        notes = list(c.notes)
        for k, v in c.tools.items():
            if v:
                notes.append(f"{k}: {v}")
        if c.seccomp_note:
            notes.append(c.seccomp_note)
        notes += [
            "Ratios are throughput ratios (requests/s, or native build time / build time): below ×1.000 is "
            "slower than native; the cost column is that ratio minus one.",
            "The peers confine differently, so 'roughly equivalent' is approximate. bubblewrap (web) sees only "
            "/usr, /etc, /proc, /dev, the docroot and the config, read only, and writes only the log directory, "
            "which matches web.toml's [paths]; it cannot limit the network by address or port (the network "
            "namespace must be shared for the server to be reachable) nor count threads or children. "
            "firejail (web) can read everything (`--read-only=/`; restricting reads to the docroot would need a "
            "whitelist profile) and limits sockets only by family (`--protocol=inet`); its `--seccomp` default "
            "list is longer than the policy's deny list. The strata policy is the only one with "
            "address/port rules.",
            "bubblewrap and firejail put the server or the build in new namespaces and mounts at start, which "
            "the build's wall time includes (once per build); the web rows measure a running server only.",
        ]
        report = f"""# Sandbox policy: web server under load and a build — {today}

`strata run --policy` against native, `strata run` without a policy, bubblewrap and firejail,
measured side by side in one run (rounds interleaved, order rotated; medians). Target from the
issue: at most 2% below native (Dune's sandbox stayed under 2% on lighttpd). Throughput is
requests/s (web) or native build time / build time (build); CPU per unit of work is the
server's CPU time per request (web) or the build's CPU time (build). The per-round ratio pairs
each run with native's run of the same round (medians of those ratios): it is less exposed to
the machine's drift over the run than the ratio of the two medians. The verdict is "met" or
"not met" only when the 95% interval of that median (a seeded bootstrap over the rounds, at
least 5) lies wholly on one side of the target, and "not resolved" when it spans it or when
there are fewer rounds.

{chr(10).join(srows)}

{reading}

{chr(10).join(sections)}
## Notes
{chr(10).join(f'- {n}' for n in notes)}

## Machine
- nproc: {os.cpu_count()}; CPU: {cpu_model}; uname -r: {platform.release()}; Landlock: {landlock_abi()}
- load average (1/5/15 min) before: {' '.join(load_before)}, after: {' '.join(load_after)}
- other processes using ≥ 20% of a CPU (lifetime average, `ps`), at the start: {busy_before};
  at the end: {busy_after}
- strata: {a.strata} (built {built}; {', '.join(digests)}), copied to a temporary directory for the run;
  source tree {commit} when the run started
- lighttpd {version(['lighttpd', '-v'], r'[0-9][0-9.]+')}; wrk {version(['wrk', '-v'], r'[0-9]+[.][0-9.]+')};
  bubblewrap {version(['bwrap', '--version'])}; firejail {version(['firejail', '--version'])};
  gcc {version(['gcc', '--version'])}; make {version(['make', '--version'])}
- whole run {elapsed:.0f}s

## Command
```
{command}
```
"""
        out.write_text(report)
        log(f"\nwrote {out}")
        print("\n".join(srows))
    finally:
        for srv in list(LIVE):
            srv.stop()
        for p in sorted(work.rglob("*"), reverse=True):
            try:
                if p.is_dir() and not p.is_symlink():
                    p.chmod(0o755)
            except OSError:
                pass
        work.chmod(0o755)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
