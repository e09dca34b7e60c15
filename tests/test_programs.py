"""The program corpus: tiny self-checking programs run natively and under strata.

Every tests/programs/*.c and *.S is compiled once per session into tests/out/programs/
(gcc -O1 -g plus the file's `// cflags:`), then run natively and under
`strata run --`; stdout, stderr and the exit status must be identical.

A program's leading `//` comment lines may hold directives:

    // cflags: -pthread -static       extra gcc flags
    // args: one '' 'two words'        argv[1..] (shell-quoted); several `args`
                                       lines give several cases; `=> N` at the
                                       end sets that case's expected status
    // status: -6                      expected native exit status (default 0;
                                       negative = killed by that signal)
    // stdin: line one\\nline two       bytes on stdin (\\n and \\t are escapes)
    // fd3: some text                  a file with this text (plus a newline)
                                       is open read-only on descriptor 3
    // under-count: getppid>=7         also run with `--ext count -o FILE` and
                                       check the summary's calls column
    // as-nobody                       also run both ways as the user `nobody`

The native run must itself succeed (expected status, no "FAILED" line from a
self-check) so that a broken program is reported as such, not as a strata bug.

To check the corpus without strata (each program must give the same result
twice), point the harness at the pass-through stand-in:

    STRATA_TARGET_DIR=tests/programs/passthrough python3 -m pytest tests/test_programs.py
"""
import concurrent.futures
import hashlib
import os
import re
import resource
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import OUT, ROOT, STACK, Result, have, run, strata

PROGRAMS = ROOT / "tests" / "programs"
BIN = OUT / "programs"  # binaries, and the programs' working directory
TIMEOUT = 30  # seconds per run; programs take well under 1 s natively
# What every program sees: a fixed environment (with an empty value and a
# value containing '=') and a fixed working directory.
ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "HOME": "/",
    "STRATA_TEST_EMPTY": "",
    "STRATA_TEST_EQ": "a=b=c",
}

# Crashing programs must not leave core files behind.
_soft, _hard = resource.getrlimit(resource.RLIMIT_CORE)
resource.setrlimit(resource.RLIMIT_CORE, (0, _hard))


@dataclass
class Program:
    name: str
    source: Path
    cflags: list = field(default_factory=list)
    cases: list = field(default_factory=list)  # (argv tail, expected status)
    status: int = 0
    stdin: bytes = None
    fd3: str = None
    counts: list = field(default_factory=list)  # (syscall, op, number)
    as_nobody: bool = False


def parse(source: Path) -> Program:
    prog = Program(source.stem, source)
    args_lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.startswith("//"):
            break
        text = line[2:].strip()
        key, sep, value = text.partition(":")
        key, value = key.strip(), value.strip()
        if text == "as-nobody":
            prog.as_nobody = True
        elif not sep:
            continue
        elif key == "cflags":
            prog.cflags += shlex.split(value)
        elif key == "args":
            args_lines.append(value)
        elif key == "status":
            prog.status = int(value)
        elif key == "stdin":
            prog.stdin = value.replace("\\n", "\n").replace("\\t", "\t").encode()
        elif key == "fd3":
            prog.fd3 = value + "\n"
        elif key == "under-count":
            for item in value.split(","):
                m = re.fullmatch(r"\s*(\w+)\s*(>=|==|>)\s*(\d+)\s*", item)
                assert m, f"{source.name}: bad under-count directive {item!r}"
                prog.counts.append((m[1], m[2], int(m[3])))
    for value in args_lines or [None]:
        status = prog.status
        if value is not None and "=>" in value:
            value, _, st = value.rpartition("=>")
            status = int(st)
        prog.cases.append((shlex.split(value) if value else [], status))
    return prog


def discover() -> list:
    return sorted((parse(p) for p in list(PROGRAMS.glob("*.c")) + list(PROGRAMS.glob("*.S"))),
                  key=lambda p: p.name)


ALL = discover()


def case_id(prog: Program, args: list) -> str:
    if len(prog.cases) == 1:
        return prog.name
    return prog.name + "-" + ("_".join(a or "''" for a in args) or "noargs")


CASES = [pytest.param(p, args, st, id=case_id(p, args)) for p in ALL for args, st in p.cases]
NOBODY_CASES = [pytest.param(p, args, st, id=case_id(p, args)) for p in ALL if p.as_nobody for args, st in p.cases]
COUNT_CASES = [pytest.param(p, id=p.name) for p in ALL if p.counts]


def under_strata(*args) -> list:
    """conftest's strata() prefix with an absolute path (programs run in BIN)."""
    prefix = strata(*args)
    prefix[0] = str(Path(prefix[0]).resolve())
    return prefix


def local_sources(source: Path, seen=None) -> list:
    """The source and every file it pulls in with #include "..." (recursively)."""
    seen = [] if seen is None else seen
    if source in seen or not source.exists():
        return seen
    seen.append(source)
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', source.read_text(encoding="utf-8"), re.M):
        local_sources(source.parent / m[1], seen)
    return seen


def compile_one(prog: Program, out_dir: Path):
    """Compiles one program unless an up-to-date binary exists (same command
    and sources). The binary is renamed into place, so concurrent sessions
    (pytest -n) never see a half-written file."""
    exe = out_dir / prog.name
    cmd = ["gcc", "-O1", "-g", "-I", str(PROGRAMS), *prog.cflags, "-o", str(exe), str(prog.source)]
    digest = hashlib.sha256(shlex.join(cmd).encode())
    for src in local_sources(prog.source):
        digest.update(src.read_bytes())
    stamp = out_dir / f".{prog.name}.stamp"
    if exe.exists() and stamp.exists() and stamp.read_text() == digest.hexdigest():
        return exe, None
    tmp = out_dir / f".{prog.name}.{os.getpid()}.tmp"
    cmd[cmd.index("-o") + 1] = str(tmp)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        return None, f"$ {shlex.join(cmd)}\n{p.stdout.decode(errors='replace')}"
    os.chmod(tmp, 0o755)
    os.replace(tmp, exe)
    stamp_tmp = out_dir / f".{prog.name}.{os.getpid()}.stamp"
    stamp_tmp.write_text(digest.hexdigest())
    os.replace(stamp_tmp, stamp)
    return exe, None


@pytest.fixture(scope="session")
def built(out_dir):
    """Compiles the whole corpus in parallel; maps name -> (path, error)."""
    if not have("gcc"):
        pytest.skip("gcc is not installed")
    BIN.mkdir(exist_ok=True)
    os.chmod(BIN, 0o755)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {p.name: pool.submit(compile_one, p, BIN) for p in ALL}
        return {name: f.result() for name, f in futures.items()}


def executable(built, prog: Program) -> Path:
    exe, err = built[prog.name]
    if exe is None:
        pytest.fail(f"{prog.source.name} does not compile:\n{err}", pytrace=False)
    return exe


@pytest.fixture(scope="session")
def fd3_files():
    """World-readable files for `// fd3:` programs, created on demand."""
    tmp = Path(tempfile.mkdtemp(prefix="strata-fd3-"))
    os.chmod(tmp, 0o755)
    made = {}

    def get(prog: Program) -> Path:
        if prog.name not in made:
            path = tmp / prog.name
            path.write_text(prog.fd3)
            os.chmod(path, 0o644)
            made[prog.name] = path
        return made[prog.name]

    yield get
    shutil.rmtree(tmp, ignore_errors=True)


def command(prog: Program, exe: Path, args: list, prefix: list, fd3_files) -> list:
    argv = [*prefix, str(exe), *args]
    if prog.fd3 is not None:
        argv = ["/bin/sh", "-c", 'exec 3<"$0"; exec "$@"', str(fd3_files(prog)), *argv]
    # GNU timeout signals its whole process group, so a hung run leaves no
    # stray processes behind (subprocess' own timeout kills one process).
    return ["timeout", "-k", "5", str(TIMEOUT), *argv]


def execute(prog, exe, args, prefix, fd3_files, user=None) -> Result:
    start = time.monotonic()
    result = run(command(prog, exe, args, prefix, fd3_files), timeout=TIMEOUT + 30, env=dict(ENV), cwd=str(BIN),
                 input=prog.stdin, user=user)
    if time.monotonic() - start >= TIMEOUT:
        result.stderr += f"\n[harness: killed after the {TIMEOUT} s time limit]\n".encode()
    return result


def check_native(prog: Program, expected: int, native: Result):
    problem = None
    if native.status != expected:
        problem = f"exit status {native.status}, expected {expected}"
    elif b"FAILED" in native.stderr:
        problem = "a self-check failed"
    if problem:
        pytest.fail(f"{prog.source.name} misbehaves natively ({problem}); the corpus is wrong, not strata:\n"
                    f"{native.show()}", pytrace=False)


def assert_same(what: str, native: Result, under: Result):
    if (native.status, native.stdout, native.stderr) != (under.status, under.stdout, under.stderr):
        diffs = [name for name, a, b in (("status", native.status, under.status),
                                         ("stdout", native.stdout, under.stdout),
                                         ("stderr", native.stderr, under.stderr)) if a != b]
        pytest.fail(f"{what}: {', '.join(diffs)} differ\n=== native ===\n{native.show()}\n"
                    f"=== under strata ===\n{under.show()}", pytrace=False)


@pytest.mark.parametrize("prog, args, expected", CASES)
def test_program(built, fd3_files, prog, args, expected):
    exe = executable(built, prog)
    native = execute(prog, exe, args, [], fd3_files)
    check_native(prog, expected, native)
    under = execute(prog, exe, args, under_strata(), fd3_files)
    assert_same(f"{prog.name} {shlex.join(args)}", native, under)


# ---------------------------------------------------------------- stacks

# The corpus under extension stacks (#3) and fast-path settings (#4). `map` maps the corpus directory
# onto itself, so every path the programs use goes through map's resolution
# and reaches the kernel as map's own string, while what the programs see is
# unchanged; trace writes to a file, whose end must record how the program
# ended.
STACKS = {
    "trace": lambda f: ["--trace", "-o", f],
    "map": lambda f: ["--map", f"{BIN}={BIN}"],
    "trace-over-map": lambda f: ["--trace", "-o", f, "--map", f"{BIN}={BIN}"],
    "map-over-trace": lambda f: ["--map", f"{BIN}={BIN}", "--trace", "-o", f],
    # The fast path (#4) is on by default: the trap path alone, sites
    # rewritten only at their first trap, and getpid/gettid served in-process.
    "trap-only": lambda f: ["--rewrite=off"],
    "lazy": lambda f: ["--rewrite=lazy"],
    "ids": lambda f: ["--ext", "ids"],
    # A layer of `before` hooks that wants every call: strata_fast runs it,
    # then leaves the call to its entry to issue (blocking calls, restarts
    # after a handler and signals during the call included).
    "null": lambda f: ["--ext", "null"],
    # A permissive policy whose kernel backstop is installed: calls are
    # caught by strata's seccomp filter instead of Syscall User Dispatch.
    "policy": lambda f: ["--policy", str(ROOT / "tests" / "policy" / "corpus.toml")],
}

# What a policy's backstop changes by design (docs/policy.md), per program.
POLICY_CHANGES = {
    "clone_raw": "the backstop answers clone3 with ENOSYS (its flags are out of seccomp's reach)",
    "vfork_stack_guard": "the backstop answers clone3 with ENOSYS (its flags are out of seccomp's reach)",
}


@pytest.mark.parametrize("stack", list(STACKS))
@pytest.mark.parametrize("prog, args, expected", CASES)
def test_program_stacked(built, fd3_files, prog, args, expected, stack, tmp_path):
    if stack == "policy" and prog.name in POLICY_CHANGES:
        pytest.skip(POLICY_CHANGES[prog.name])
    exe = executable(built, prog)
    native = execute(prog, exe, args, [], fd3_files)
    check_native(prog, expected, native)
    trace = tmp_path / "trace.txt"
    under = execute(prog, exe, args, under_strata(*STACKS[stack](str(trace))), fd3_files)
    assert_same(f"{prog.name} {shlex.join(args)} under {stack}", native, under)
    if "trace" in stack:
        lines = trace.read_text(errors="replace").splitlines()
        ends = [l for l in lines if re.search(r"\+\+\+ (exited with \d+|killed by SIG\w+( \(core dumped\))?) \+\+\+$", l)]
        assert ends, f"no end-of-process line in the trace of {prog.name}:\n" + "\n".join(lines[-5:])
        if expected >= 0 and native.status == expected:
            assert any(l.endswith(f"+++ exited with {expected} +++") for l in ends), ends


# ---------------------------------------------------------------- count


LINE = re.compile(r"^\s*([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(?:(\d+)\s+)?(\w+)\s*$")


def parse_counts(text: str) -> dict:
    """Parses an `strace -c` style table into {syscall: (calls, errors)}."""
    header = False
    counts = {}
    for line in text.splitlines():
        if re.match(r"^\s*%\s*time\s+seconds\s+usecs/call\s+calls\s+errors\s+syscall\s*$", line):
            header = True
            continue
        m = LINE.match(line)
        if header and m and m[6] != "total":
            counts[m[6]] = (int(m[4]), int(m[5] or 0))
    assert header, f"no `% time seconds usecs/call calls errors syscall` header in:\n{text}"
    return counts


OPS = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "==": lambda a, b: a == b}


def check_counts(prog: Program, run_count):
    """run_count(path) runs the program with `--ext count -o path`."""
    tmp = Path(tempfile.mkdtemp(prefix="strata-count-"))
    os.chmod(tmp, 0o777)
    try:
        path = tmp / "counts.txt"
        result = run_count(path)
        assert path.exists(), f"{prog.name}: `--ext count -o {path}` wrote nothing\n{result.show()}"
        text = path.read_text(errors="replace")
        counts = parse_counts(text)
        for name, op, number in prog.counts:
            calls = counts.get(name, (0, 0))[0]
            assert OPS[op](calls, number), (f"{prog.name}: expected {name} calls {op} {number}, "
                                            f"the summary says {calls}:\n{text}")
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("prog", COUNT_CASES)
def test_program_count(built, fd3_files, prog):
    exe = executable(built, prog)
    args, expected = prog.cases[0]
    native = execute(prog, exe, args, [], fd3_files)
    check_native(prog, expected, native)
    under = check_counts(prog, lambda path: execute(prog, exe, args, under_strata("--ext", "count", "-o", str(path)),
                                                    fd3_files))
    assert_same(f"{prog.name} with --ext count", native, under)


# ---------------------------------------------------------------- nobody


def nobody_can_run(path: Path) -> bool:
    p = subprocess.run(["runuser", "-u", "nobody", "--", "test", "-x", str(path), "-a", "-r", str(path)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


@pytest.fixture(scope="session")
def nobody_strata(built):
    """The strata command prefix usable by `nobody` (a world-readable copy if need be)."""
    if os.geteuid() != 0:
        pytest.skip("running programs as nobody needs root (runuser)")
    if not have("runuser"):
        pytest.skip("runuser is not installed")
    try:
        import pwd
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("there is no user `nobody`")
    some = next((e for e, _ in built.values() if e is not None), None)
    if some is not None:
        assert nobody_can_run(some), f"nobody cannot execute {some}: {BIN} must be world-readable"
    main = Path(under_strata()[0])
    rt = main.parent / "strata-rt"
    binaries = [main] + ([rt] if rt.exists() else [])
    tmp = None
    if all(nobody_can_run(b) for b in binaries):
        exe = main
    else:
        tmp = Path(tempfile.mkdtemp(prefix="strata-bin-"))
        os.chmod(tmp, 0o755)
        for b in binaries:
            shutil.copy2(b, tmp / b.name)
            os.chmod(tmp / b.name, 0o755)
        exe = tmp / main.name
        assert nobody_can_run(exe), f"nobody cannot execute {exe} even after copying it"

    def prefix(*args):
        return [str(exe), "run", *STACK, *args, "--"]

    yield prefix
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("prog, args, expected", NOBODY_CASES)
def test_program_as_nobody(built, fd3_files, nobody_strata, prog, args, expected):
    exe = executable(built, prog)
    native = execute(prog, exe, args, [], fd3_files, user="nobody")
    check_native(prog, expected, native)
    if prog.counts and not STACK:  # (a stack from tests/run has its own -o)
        under = check_counts(prog, lambda path: execute(prog, exe, args, nobody_strata("--ext", "count", "-o",
                                                                                       str(path)),
                                                        fd3_files, user="nobody"))
    else:
        under = execute(prog, exe, args, nobody_strata(), fd3_files, user="nobody")
    assert_same(f"{prog.name} {shlex.join(args)} as nobody", native, under)


def test_corpus_size():
    """The corpus keeps covering the ground it was written for."""
    names = {p.name for p in ALL}
    assert len(names) >= 40
    assert sum(1 for p in ALL if p.as_nobody) >= 10
    assert sum(1 for p in ALL if p.counts) >= 2
