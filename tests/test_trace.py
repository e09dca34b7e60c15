"""strata's `--trace` against strace 6.x, line by line.

Each case runs one program twice in the same (freshly emptied) working directory
with the same fixed environment: `strace -f -o A PROGRAM` and
`strata run --trace -o B -- PROGRAM`. Both traces are parsed into tasks (processes
and threads), normalised, and compared task by task: the list of lines must be
identical. Across tasks only each task's own order is compared (two processes'
lines interleave as the scheduler pleases).

The programs: tiny C programs in tests/programs/trace/ (files, sockets, processes,
memory, time, signals), each making a fixed sequence of calls including failures,
and real programs (ls, cat, sh with a pipe, python3 -S, tar czf).

Normalisation (the same for both traces unless marked):

- strace's lines split by another task's line (`name(args <unfinished ...>` and
  `<... name resumed>rest`) are joined back into one line per call, by pid;
- `--- SIG... ---` lines are dropped (strace shows signal delivery; strata's trace
  shows calls only);
- `+++ exited with N +++` / `+++ killed by SIG +++` are taken out of the line list
  and compared separately: each task must end the same way in both traces;
- pid prefixes (`12345 ` of strace -f -o, `[pid 12345] ` of strata) are removed and
  the line goes to its task; tasks are named by where they were created: the first
  task is `1`, the children it creates (clone/fork/vfork results, in its own order)
  are `1.1`, `1.2`, ..., theirs `1.1.1`, ...;
- the padding before ` = ` is reduced to one space (strace pads so that `=` lands at
  column 40 counting the prefix, and the prefixes differ); strata's padding itself
  is checked separately against that rule, on its raw lines;
- hex numbers of 6 digits or more become ADDR (mappings, brk, stack and heap
  pointers differ between any two runs; strata's brk emulation also places the
  break elsewhere);
- pids and tids where calls take or return them (getpid, gettid, getppid,
  set_tid_address, clone, clone3, fork, vfork, wait4, waitid, kill, tkill, tgkill,
  and `si_pid=`) become PID<task> (PPID for a process outside the trace);
- inode and time fields of stat structures (only printed with strace -v: masked in
  case), clock_gettime/gettimeofday/time results, getrandom's bytes and inet port
  numbers (ephemeral ports, renamed PORT1, PORT2, ... in order of appearance),
  sysinfo's load and free-memory fields;
- for programs whose signal handlers run when another process happens to exit
  (SIGCHLD in sh and tar), each task's rt_sigreturn lines are compared as a multiset
  without their results (where the handler lands, and so the register value
  rt_sigreturn restores, is up to the scheduler); every other line in order.

The known differences (KNOWN_DIFFERENCES below) are the only other edits.
"""
import difflib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import OUT, ROOT, STRATA, have

if not have("strace"):
    pytest.skip("strace is missing (tests/setup.sh installs it)", allow_module_level=True)
if not have("gcc"):
    pytest.skip("gcc is missing (tests/setup.sh installs it)", allow_module_level=True)
if subprocess.run(["strace", "-f", "-o", "/dev/null", "true"], stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL).returncode != 0:
    pytest.skip("strace cannot trace here (ptrace not permitted?)", allow_module_level=True)

SOURCES = ROOT / "tests" / "programs" / "trace"
WORK = OUT / "trace"
BIN = WORK / "bin"
TIMEOUT = 60
PY = "/usr/bin/python3"

# The same fixed environment as tests/test_programs.py (no pyenv shims on PATH).
ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "HOME": "/",
    "STRATA_TEST_EMPTY": "",
    "STRATA_TEST_EQ": "a=b=c",
}

# 2020-09-13 12:26:40 UTC, the mtime of every generated file.
FIXED_TIME = 1_600_000_000

# Differences between the two traces that are expected, each with its reason. Each
# entry: (reason, the trace it applies to, function(task, lines) -> lines), applied
# per task to the normalised lines, before the comparison.

def _drop_initial_execve(task, lines):
    if task == "1" and lines and lines[0].startswith("execve("):
        return lines[1:]
    return lines


def _restart_after_handler(task, lines):
    out, held = [], []
    for line in lines:
        m = re.match(r"^(.*\)) = \? ERESTARTNOHAND \(.*\)$", line)
        if m:
            held.append(m[1])
            continue
        out.append(line)
        if held and line.startswith("rt_sigreturn("):
            result = RESULT.search(line)[1]
            out.append(f"{held.pop()} {result}")
    return out + [h + " = ?" for h in held]


def _drop_nointr_restarts(task, lines):
    return [l for l in lines if not re.search(r"= \? ERESTARTNOINTR \(To be restarted\)$", l)]


KNOWN_DIFFERENCES = [
    ("strace prints the execve that starts the traced program (the first line of "
     "task 1); under strata the initial image is loaded by strata itself, so the "
     "program never makes that call (the launcher's and strata-rt's own calls "
     "before the program starts are not traced either)",
     "strace", _drop_initial_execve),
    ("a call that a signal handler interrupts: strace prints it when the kernel "
     "stops it (`= ? ERESTARTNOHAND`), before the handler's calls; strata prints "
     "every call whole when it returns to the program, so after the handler's "
     "rt_sigreturn, with the result the program gets (the one strace shows for "
     "rt_sigreturn, e.g. -1 EINTR). strace's line is moved there with that result",
     "strace", _restart_after_handler),
    ("a call a signal interrupts that the kernel restarts by itself (SIGCHLD "
     "during a shell's clone: `= ? ERESTARTNOINTR (To be restarted)`): strace "
     "prints the interrupted attempt and then the call again; the restart happens "
     "inside strata's re-issue, so strata prints the call once. strace's "
     "interrupted attempt is dropped",
     "strace", _drop_nointr_restarts),
]


# --------------------------------------------------------------------------- running

def build_programs() -> dict:
    """Compiles tests/programs/trace/*.c into WORK/bin (when out of date)."""
    BIN.mkdir(parents=True, exist_ok=True)
    exes = {}
    for src in sorted(SOURCES.glob("*.c")):
        exe = BIN / src.stem
        if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
            p = subprocess.run(["gcc", "-O1", "-Wall", "-o", str(exe), str(src)],
                               capture_output=True, text=True)
            assert p.returncode == 0, f"gcc {src.name} failed:\n{p.stderr}"
        exes[src.stem] = exe
    return exes


@pytest.fixture(scope="module")
def exes() -> dict:
    return build_programs()


def fresh(d: Path) -> Path:
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


class Case:
    """One program, its working directory and how to prepare it before each run."""

    def __init__(self, name, argv, prepare=None, async_signals=False):
        self.name, self.argv, self.prepare = name, [str(a) for a in argv], prepare
        # signals that arrive when another task does something (SIGCHLD): see compare_traces
        self.async_signals = async_signals
        self.dir = WORK / name
        self.cwd = self.dir / "cwd"

    def reset(self):
        """Empties the working directory and puts back what the program needs."""
        fresh(self.cwd)
        if self.prepare:
            self.prepare(self.cwd)
        os.utime(self.cwd, (FIXED_TIME, FIXED_TIME))


def run_traced(case: Case, tracer: list, out: Path) -> subprocess.CompletedProcess:
    """Runs case.argv under the tracer prefix (which writes its trace to `out`)."""
    case.reset()
    if out.exists():
        out.unlink()
    try:
        return subprocess.run(tracer + case.argv, cwd=case.cwd, env=dict(ENV), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{case.name}: {' '.join(tracer[:2])} run timed out after {TIMEOUT}s: {e}", pytrace=False)


def strace_cmd(out: Path, *opts) -> list:
    return ["strace", "-f", *opts, "-o", str(out)]


def strata_cmd(out: Path, *opts, trace="--trace") -> list:
    return [str(STRATA.resolve()), "run", trace, *opts, "-o", str(out), "--"]


def run_both(case: Case, strace_opts=(), strata_opts=(), tag="", trace="--trace", status=0) -> tuple:
    """Runs the case under strace and under strata; checks both ran the same way
    (exit status `status`, the same stdout).

    Returns (strace text, strata text)."""
    case.dir.mkdir(parents=True, exist_ok=True)
    a, b = case.dir / f"strace{tag}.txt", case.dir / f"strata{tag}.txt"
    ra = run_traced(case, strace_cmd(a, *strace_opts), a)
    rb = run_traced(case, strata_cmd(b, *strata_opts, trace=trace), b)
    show = lambda r: (f"status {r.returncode}\nstdout: {r.stdout[-2000:]!r}\n"
                      f"stderr: {r.stderr[-2000:]!r}")
    assert ra.returncode == status, f"{case.name}: under strace: expected status {status}\n{show(ra)}"
    assert ra.returncode == rb.returncode and ra.stdout == rb.stdout, (
        f"{case.name}: the program ran differently\n--- under strace ---\n{show(ra)}\n"
        f"--- under strata ---\n{show(rb)}")
    assert a.exists() and b.exists(), f"{case.name}: a trace is missing\n{show(ra)}\n{show(rb)}"
    return a.read_text(errors="replace"), b.read_text(errors="replace")


# --------------------------------------------------------------------------- parsing

STRACE_LINE = re.compile(r"^(\d+) +(.*)$")
STRATA_PREFIX = re.compile(r"^\[pid +(\d+)\] (.*)$")
UNFINISHED = " <unfinished ...>"
RESUMED = re.compile(r"^<\.\.\. ([\w]+) resumed>(.*)$")
# The result of a line: the last `) = ...` (results never contain `) =`).
RESULT = re.compile(r"\) +(= (?:(?!\) += ).)*)$")
CLONES = ("clone", "clone3", "fork", "vfork")
EXIT_LINE = re.compile(r"\+\+\+ (exited with \d+|killed by SIG\w+( \(core dumped\))?) \+\+\+")


def parse_strace(text: str) -> list:
    """strace -f -o lines as (pid, text), split lines joined back (by pid)."""
    out, pending = [], {}
    for raw in text.splitlines():
        m = STRACE_LINE.match(raw)
        assert m, f"unexpected strace line {raw!r}"
        pid, rest = int(m[1]), m[2]
        r = RESUMED.match(rest)
        if r:
            head_idx = pending.pop(pid, None)
            assert head_idx is not None, f"resumed line without its start: {raw!r}"
            out[head_idx] = (pid, out[head_idx][1] + r[2])
            continue
        if rest.endswith(UNFINISHED):
            pending[pid] = len(out)
            out.append((pid, rest[: -len(UNFINISHED)]))
            continue
        out.append((pid, rest))
    return out


def parse_strata(text: str) -> list:
    """strata's lines as (pid, text); lines before the first prefixed one get pid None."""
    out = []
    for raw in text.splitlines():
        m = STRATA_PREFIX.match(raw)
        out.append((int(m[1]), m[2]) if m else (None, raw))
    return out


def call_name(line: str) -> str:
    m = re.match(r"^(\w+)\(", line)
    return m[1] if m else ""


def ret_value(line: str):
    m = RESULT.search(line)
    if not m:
        return None
    v = re.match(r"= (-?\d+)", m[1])
    return int(v[1]) if v else None


def tasks_of(lines: list) -> dict:
    """Names every pid by where it was created: {pid: "1.2.1"} (the first task is "1").

    Gives strata's unprefixed lines (pid None) the pid they belong to, in place."""
    pids = [p for p, _ in lines]
    children = {}
    created = set()
    for pid, line in lines:
        if call_name(line) in CLONES:
            r = ret_value(line)
            if r is not None and r > 0:
                children.setdefault(pid, []).append(r)
                created.add(r)
    roots = [p for p in dict.fromkeys(pids) if p not in created]
    # strata: the lines before the session became multi-task have no prefix (None);
    # they belong to the one prefixed pid that nobody created.
    if None in roots and len(roots) == 2:
        real = [p for p in roots if p is not None][0]
        lines[:] = [(real if p is None else p, l) for p, l in lines]
        roots = [real]
    names = {}
    if None in roots:
        # a single-task strata trace: its pid is what getpid and the like return
        for pid, line in lines:
            if pid is None and call_name(line) in ("set_tid_address", "getpid", "gettid"):
                r = ret_value(line)
                if r is not None and r > 0:
                    names[r] = "1"
                    break

    def walk(pid, name):
        names[pid] = name
        for i, c in enumerate(children.get(pid, []), 1):
            if c not in names:
                walk(c, f"{name}.{i}")

    for i, r in enumerate(roots, 1):
        walk(r, str(i) if i == 1 else f"?{i}")
    return names


# --------------------------------------------------------------------------- normalising

HEX = re.compile(r"0x[0-9a-f]{6,}")
PID_RESULT_CALLS = {"getpid", "gettid", "getppid", "set_tid_address", *CLONES, "wait4", "waitid"}
PID_ARG_CALLS = {"wait4": 1, "kill": 1, "tkill": 1, "tgkill": 2, "waitid": 0}
TIME_RESULT_CALLS = {"clock_gettime", "gettimeofday", "time"}
# sysinfo's fields that change from one run to the next (uptime, load, free memory, ...)
SYSINFO_FIELDS = re.compile(r"\b(uptime|loads|freeram|sharedram|bufferram|freeswap|procs|freehigh)=(\[[^]]*\]|\d+)")
STAT_FIELDS = re.compile(r"\b(st_ino|st_atime|st_mtime|st_ctime|st_atime_nsec|st_mtime_nsec|st_ctime_nsec|"
                         r"stx_ino|stx_atime|stx_btime|stx_ctime|stx_mtime)=(\{[^}]*\}|[^,}]*)")
RANDOM = re.compile(r'^getrandom\("(?:[^"\\]|\\.)*"(?:\.\.\.)?')
PORT = re.compile(r"sin6?_port=htons\((\d+)\)")


class Normaliser:
    """The per-trace state: pid names and port numbers."""

    def __init__(self, names: dict):
        self.names = names
        self.ports = {}

    def pid(self, n: int, *, parent_ok=False) -> str:
        if n in self.names:
            return f"PID{self.names[n]}"
        if parent_ok:
            return "PPID"
        return str(n)

    def line(self, line: str) -> str:
        name = call_name(line)
        m = RESULT.search(line)
        if m:
            line = line[: m.start()] + ") " + m[1]
        # pids as arguments: the leading numeric arguments that are pids.
        if name in PID_ARG_CALLS:
            count = PID_ARG_CALLS[name] or 0
            head = name + "("
            rest = line[len(head):]
            parts = rest.split(", ")
            for i in range(count):
                if i < len(parts) and re.fullmatch(r"\d+", parts[i]):
                    parts[i] = self.pid(int(parts[i]))
            line = head + ", ".join(parts)
            if name == "waitid":
                line = re.sub(r"^waitid\((P_PID|P_PIDFD), (\d+)",
                              lambda mm: f"waitid({mm[1]}, {self.pid(int(mm[2]))}", line)
        if name in PID_RESULT_CALLS:
            line = re.sub(r"\) = (\d+)$", lambda mm: ") = " + self.pid(int(mm[1]), parent_ok=name == "getppid"),
                          line)
        line = re.sub(r"\bsi_pid=(\d+)", lambda mm: "si_pid=" + self.pid(int(mm[1]), parent_ok=True), line)
        line = HEX.sub("ADDR", line)
        line = STAT_FIELDS.sub(lambda mm: f"{mm[1]}=MASKED", line)
        if name in TIME_RESULT_CALLS:
            line = re.sub(r"tv_sec=\d+, tv_(n|u)sec=\d+", r"tv_sec=TIME, tv_\1sec=TIME", line)
            if name == "time":
                line = re.sub(r"= \d+$", "= TIME", line)
        if name == "sysinfo":
            line = SYSINFO_FIELDS.sub(lambda mm: f"{mm[1]}=MASKED", line)
        if name == "getrandom":
            line = RANDOM.sub("getrandom(RANDOM", line)
        line = PORT.sub(self.port, line)
        return line

    def port(self, m) -> str:
        p = int(m[1])
        if p not in self.ports:
            self.ports[p] = f"PORT{len(self.ports) + 1}"
        return m[0].replace(f"htons({p})", f"htons({self.ports[p]})")


def normalise(lines: list, who: str) -> tuple:
    """(pid, text) lines -> ({task: [lines]}, {task: exit line}, [problems])."""
    names = tasks_of(lines)
    norm = Normaliser(names)
    per_task, exits, problems = {}, {}, []
    for pid, line in lines:
        task = names.get(pid, f"?{pid}")
        if line.startswith("--- ") and line.endswith(" ---"):
            continue
        if line.startswith("+++ ") and line.endswith(" +++"):
            if task in exits:
                problems.append(f"{who}: task {task} has two exit lines: {exits[task]!r} and {line!r}")
            exits[task] = line
            continue
        if task in exits:
            problems.append(f"{who}: task {task} has a line after its exit line: {line!r}")
        per_task.setdefault(task, []).append(norm.line(line))
    for _, side, fix in KNOWN_DIFFERENCES:
        if side == who:
            per_task = {t: fix(t, seq) for t, seq in per_task.items()}
    return per_task, exits, problems


def padding_problems(text: str) -> list:
    """strata's raw lines: `=` of the result at column 40 (0-based) counting the prefix,
    or one space after the call when the call is longer, as strace pads."""
    bad = []
    for raw in text.splitlines():
        if raw.startswith("+++") or raw.endswith("+++"):
            continue
        m = RESULT.search(raw)
        if not m:
            bad.append(f"no result: {raw!r}")
            continue
        call_end = m.start() + 1  # just after ')'
        eq = m.start(1)
        want = max(40, call_end + 1)
        if eq != want:
            bad.append(f"'=' at column {eq}, expected {want}: {raw!r}")
    return bad


def diff(a: list, b: list, task: str) -> str:
    d = list(difflib.unified_diff([l + "\n" for l in a], [l + "\n" for l in b],
                                  f"strace (task {task})", f"strata (task {task})", n=3))
    if len(d) > 120:
        d = d[:120] + [f"... ({len(d) - 120} more diff lines)\n"]
    return "".join(d)


def compare_traces(name: str, strace_text: str, strata_text: str, *, check_padding=True,
                   async_signals=False) -> None:
    """Asserts that, per task, the normalised lines are the same.

    With async_signals (a program whose handlers run when another process happens to
    exit: SIGCHLD), where a handler's rt_sigreturn lands depends on the scheduler, and
    so does the register value it restores (its result), and even how many there are
    (two children exiting close together raise one SIGCHLD, as POSIX signals do not
    queue): those lines are compared as a set per task, without their results; the
    others in order."""
    sa, ea, pa = normalise(parse_strace(strace_text), "strace")
    sb, eb, pb = normalise(parse_strata(strata_text), "strata")
    problems = pa + pb
    if len(sa.get("1", [])) < 5:
        problems.append(f"strace's trace has almost nothing for task 1: {sa.get('1')}")
    if async_signals:
        for who, seqs in (("strace", sa), ("strata", sb)):
            for t, seq in seqs.items():
                seqs[t] = [l for l in seq if not l.startswith("rt_sigreturn(")]
                seqs[t].append("(rt_sigreturn lines, in any order: "
                               + repr(sorted({RESULT.sub(")", l) for l in seq if l.startswith("rt_sigreturn(")}))
                               + ")")
    if check_padding:
        problems += [f"strata padding: {p}" for p in padding_problems(strata_text)[:10]]
    if sorted(sa) != sorted(sb):
        problems.append(f"tasks differ: strace has {sorted(sa)}, strata has {sorted(sb)}")
    for task in sorted(set(sa) | set(sb)):
        if ea.get(task) != eb.get(task):
            problems.append(f"task {task} ends differently: strace {ea.get(task)!r}, strata {eb.get(task)!r}")
        for who, seqs, exits in (("strace", sa, ea), ("strata", sb, eb)):
            if task in seqs and not EXIT_LINE.fullmatch(exits.get(task, "")):
                problems.append(f"{who}: task {task} does not end with an exit line")
    first_diff = None
    for task in sorted(set(sa) & set(sb)):
        if sa[task] != sb[task] and first_diff is None:
            first_diff = task
    if first_diff is not None:
        problems.append(f"task {first_diff}: the lines differ\n" + diff(sa[first_diff], sb[first_diff], first_diff))
        others = [t for t in sorted(set(sa) & set(sb)) if t != first_diff and sa[t] != sb[t]]
        if others:
            problems.append(f"(tasks {others} differ too)")
    if problems:
        pytest.fail(f"{name}: strata's trace differs from strace's "
                    f"(traces in {WORK / name})\n" + "\n".join(problems), pytrace=False)


# --------------------------------------------------------------------------- cases

def make_tree(root: Path) -> None:
    """A small deterministic tree with fixed mtimes."""
    files = {"a.txt": b"alpha\n", "b/c.txt": b"gamma\n" * 100, "b/d/e.bin": bytes(range(256)) * 8,
             "empty": b""}
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        os.chmod(p, 0o644)
    os.symlink("a.txt", root / "link")
    for p in sorted(root.rglob("*"), key=lambda p: -len(p.parts)):
        os.utime(p, (FIXED_TIME, FIXED_TIME), follow_symlinks=False)
    os.utime(root, (FIXED_TIME, FIXED_TIME))


def tree_prepare(cwd: Path) -> None:
    make_tree(cwd / "tree")


def c_case(name: str) -> Case:
    return Case(name, [BIN / name])


REAL_CASES = {
    "ls": lambda: Case("ls", ["ls", "-la", "tree"], tree_prepare),
    "cat": lambda: Case("cat", ["cat", "/etc/hostname"]),
    "sh_pipe": lambda: Case("sh_pipe", ["sh", "-c", "echo hi | cat"], async_signals=True),
    "python3": lambda: Case("python3", [PY, "-S", "-c", "pass"]),
    "tar": lambda: Case("tar", ["tar", "czf", "out.tgz", "tree"], tree_prepare, async_signals=True),
}
C_PROGRAMS = ["files", "net", "proc", "mem", "timecalls", "sig"]


@pytest.mark.parametrize("name", C_PROGRAMS)
def test_c_program(exes, name):
    case = c_case(name)
    a, b = run_both(case)
    compare_traces(name, a, b)


@pytest.mark.parametrize("name", list(REAL_CASES))
def test_real_program(name):
    if not have(REAL_CASES[name]().argv[0]):
        pytest.skip(f"{REAL_CASES[name]().argv[0]} is missing")
    case = REAL_CASES[name]()
    a, b = run_both(case)
    compare_traces(name, a, b, async_signals=case.async_signals)


# --------------------------------------------------------------------------- options

@pytest.mark.parametrize("spec", ["openat,close", "!mmap,mprotect,munmap,brk"])
def test_filter(exes, spec):
    """--trace=SPEC shows only the calls strace -e trace=SPEC shows, and the same lines."""
    case = Case("filter", ["cat", "/etc/hostname"])
    a, b = run_both(case, ["-e", f"trace={spec}"], tag="-" + re.sub(r"\W", "_", spec), trace=f"--trace={spec}")
    names = {call_name(l) for _, l in parse_strata(b) if call_name(l)}
    wanted = set(spec.lstrip("!").split(","))
    if spec.startswith("!"):
        assert not names & wanted, f"--trace={spec} shows {sorted(names & wanted)}"
    else:
        assert names <= wanted and names, f"--trace={spec} shows {sorted(names)}"
    compare_traces(f"filter {spec}", a, b)


def test_failed_only(exes):
    """--trace-failed: only calls that failed, the same ones as strace -Z."""
    case = c_case("files")
    a, b = run_both(case, ["-Z"], ["--trace-failed"], tag="-failed")
    lines = [l for _, l in parse_strata(b)]
    calls = [l for l in lines if not l.startswith("+++")]
    assert len(calls) >= 10, b
    bad = [l for l in calls if not re.search(r"\) += -1 E[A-Z0-9]+ \(", l)]
    assert not bad, "--trace-failed shows calls that did not fail:\n" + "\n".join(bad)
    compare_traces("failed files", a, b)


def test_json(exes):
    """--trace-json: one object per line with syscall/args/ret; the same calls as the text trace."""
    case = c_case("proc")
    case.dir.mkdir(parents=True, exist_ok=True)
    text_out, json_out = case.dir / "strata-text.txt", case.dir / "strata-json.txt"
    rt = run_traced(case, strata_cmd(text_out), text_out)
    rj = run_traced(case, strata_cmd(json_out, "--trace-json"), json_out)
    assert rt.returncode == rj.returncode == 0 and rt.stdout == rj.stdout
    objs = []
    for i, raw in enumerate(json_out.read_text().splitlines()):
        try:
            objs.append(json.loads(raw))
        except json.JSONDecodeError as e:
            pytest.fail(f"line {i + 1} of the JSON trace does not parse ({e}): {raw!r}", pytrace=False)
    calls = [o for o in objs if "syscall" in o]
    assert calls, "no call in the JSON trace"
    for o in calls:
        missing = {"syscall", "args", "ret"} - set(o)
        assert not missing, f"JSON line without {sorted(missing)}: {o}"
    # per task (pid), the sequence of names is the text trace's
    text = parse_strata(text_out.read_text())
    tasks_of(text)
    by_pid_text, by_pid_json = {}, {}
    for pid, l in text:
        if call_name(l):
            by_pid_text.setdefault(pid, []).append(call_name(l))
    for o in calls:
        by_pid_json.setdefault(o["tid"], []).append(o["syscall"])
    # the pids differ between the runs: compare in order of first appearance
    seq_text = [by_pid_text[p] for p in dict.fromkeys(p for p, l in text if call_name(l))]
    seq_json = [by_pid_json[p] for p in dict.fromkeys(o["tid"] for o in calls)]
    assert sorted(seq_text) == sorted(seq_json), "\n".join(difflib.unified_diff(
        [" ".join(s) for s in sorted(seq_text)], [" ".join(s) for s in sorted(seq_json)], "text", "json",
        lineterm=""))
    # the results agree with the text lines where they are plain numbers
    errors_text = sum(1 for _, l in text if re.search(r"= -1 E", l))
    errors_json = sum(1 for o in calls if o.get("ret") == -1 and "error" in o)
    assert errors_text == errors_json
    exits_text = sorted(l for _, l in text if l.startswith("+++"))
    exits_json = sorted(f"+++ exited with {o['exited']} +++" for o in objs if "exited" in o)
    assert exits_text == exits_json, (exits_text, [o for o in objs if "syscall" not in o])


def test_ring(exes):
    """--trace-ring=64K: only the newest lines, ending with the exit line, at most 64 KiB;
    they are the end of the full trace."""
    case = c_case("many")
    case.dir.mkdir(parents=True, exist_ok=True)
    full_out, ring_out = case.dir / "strata-full.txt", case.dir / "strata-ring.txt"
    rf = run_traced(case, strata_cmd(full_out), full_out)
    rr = run_traced(case, strata_cmd(ring_out, "--trace-ring=64K"), ring_out)
    assert rf.returncode == rr.returncode == 0 and rf.stdout == rr.stdout
    full, ring = full_out.read_bytes(), ring_out.read_bytes()
    assert len(full) > 4 * 65536, f"the program should trace far more than the ring holds ({len(full)} bytes)"
    assert 0 < len(ring) <= 65536, f"ring output is {len(ring)} bytes"
    assert len(ring) > 65536 // 2, f"ring output is only {len(ring)} bytes"
    assert ring.endswith(b"\n")
    ring_lines = ring.decode().splitlines()
    assert ring_lines[-1] == "+++ exited with 0 +++", ring_lines[-3:]
    assert re.match(r"exit_group\(0\) += \?$", ring_lines[-2]), ring_lines[-3:]
    full_lines = full.decode().splitlines()
    mask = lambda ls: [RANDOM.sub("getrandom(RANDOM", HEX.sub("ADDR", l)) for l in ls]
    assert mask(ring_lines) == mask(full_lines[-len(ring_lines):]), (
        "the ring's lines are not the last lines of the full trace:\n"
        + "".join(difflib.unified_diff([l + "\n" for l in mask(full_lines[-len(ring_lines):])][:40],
                                       [l + "\n" for l in mask(ring_lines)][:40], "full", "ring")))
    assert re.match(r"lseek\(3, \d+, SEEK_SET\) += \d+$", ring_lines[0]), f"first ring line: {ring_lines[0]!r}"
    assert "ld.so.preload" not in ring.decode(), "the ring still holds the program's first lines"


def test_stderr_keeps_stdout(exes):
    """Without -o the trace goes to stderr and the program's stdout is untouched."""
    case = Case("stderr", ["sh", "-c", "echo hi | cat; cat /etc/hostname; echo done"])
    case.dir.mkdir(parents=True, exist_ok=True)
    case.reset()
    native = subprocess.run(case.argv, cwd=case.cwd, env=dict(ENV), stdin=subprocess.DEVNULL,
                            capture_output=True, timeout=TIMEOUT)
    under = subprocess.run([str(STRATA.resolve()), "run", "--trace", "--"] + case.argv, cwd=case.cwd,
                           env=dict(ENV), stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
    assert native.returncode == under.returncode == 0
    assert under.stdout == native.stdout, (native.stdout, under.stdout)
    err = under.stderr.decode(errors="replace").splitlines()
    assert any(re.search(r'write\(1, "hi\\n", 3\) += 3$', l) for l in err), err[-20:]
    assert any(re.search(r'write\(1, "done\\n", 5\) += 5$', l) for l in err), err[-20:]
    # (strata keeps the `[pid N] ` prefix once there have been several processes)
    assert re.fullmatch(r"(\[pid +\d+\] )?\+\+\+ exited with 0 \+\+\+", err[-1]), err[-5:]
    bad = [l for l in err if not (STRATA_PREFIX.match(l) or RESULT.search(l) or l.startswith("+++"))]
    assert not bad, "stderr holds lines that are not trace lines:\n" + "\n".join(bad[:10])
