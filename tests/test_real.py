"""Real programs that nobody here wrote, run natively and under `strata run --`.

Each test runs the same command line twice, natively first and then under strata, in
the same directory with the same environment, and compares what a user can observe:
exit status, stdout, stderr and, where the program makes files, those files.

The commands are chosen so that two native runs print exactly the same thing: inputs
are generated with fixed contents and fixed mtimes (os.utime), the environment is
fixed (LC_ALL, TZ, HOME, TMPDIR, PATH), output that depends on scheduling is reduced
to facts that hold by a wide margin, and nothing prints pids, times of day or
addresses. So no output needs normalising: where a program would print something that
differs between any two runs, the test avoids asking for it rather than editing it out.

Each test also checks the native run itself (status and a line of its output), so a
test cannot pass because both runs failed the same way.
"""
import difflib
import hashlib
import os
import random
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import OUT, ROOT, STRATA, Result, Timeout, have, run_bounded, strata

REAL = ROOT / "tests" / "real"
PY = "/usr/bin/python3"
GO = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)

NATIVE_TIMEOUT = 120
STRATA_TIMEOUT = int(os.environ.get("STRATA_TEST_TIMEOUT", "300"))
MODES = ("native", "strata")

# 2020-09-13 12:26:40 UTC; every generated file gets this mtime plus a small offset.
FIXED_TIME = 1_600_000_000


# --------------------------------------------------------------------------- helpers

def base_env(home: Path, **extra) -> dict:
    """A fixed environment, the same for both runs (no pyenv shims, no user locale)."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": "/usr/local/go/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONDONTWRITEBYTECODE": "1",
        # so that a Python program that hangs under strata still shows how far it got
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


def run_mode(mode: str, argv, *, timeout=None, **kw) -> Result:
    """Runs argv natively or under strata; a hang fails the test with what was printed."""
    prefix = [] if mode == "native" else strata()
    limit = timeout or (NATIVE_TIMEOUT if mode == "native" else STRATA_TIMEOUT)
    try:
        return run_bounded(prefix + [str(a) for a in argv], timeout=limit, **kw)
    except Timeout as e:
        timeout = e
    pytest.fail(f"{mode} run {timeout}\n(process group killed)\n{timeout.partial.show()}", pytrace=False)


def _diff(a: bytes, b: bytes, name: str) -> str:
    al = a.decode(errors="replace").splitlines(keepends=True)
    bl = b.decode(errors="replace").splitlines(keepends=True)
    d = list(difflib.unified_diff(al, bl, f"{name} (native)", f"{name} (strata)", n=2))
    if len(d) > 80:
        d = d[:80] + [f"... ({len(d) - 80} more diff lines)\n"]
    return "".join(d) or f"{name}: differs only in bytes not shown ({len(a)} vs {len(b)} bytes)\n"


def assert_same(native: Result, under: Result, what: str = "") -> None:
    problems = []
    if native.status != under.status:
        problems.append(f"exit status: native {native.status}, strata {under.status}")
    if native.stdout != under.stdout:
        problems.append(_diff(native.stdout, under.stdout, "stdout"))
    if native.stderr != under.stderr:
        problems.append(_diff(native.stderr, under.stderr, "stderr"))
    if problems:
        pytest.fail(f"{what}: strata differs from native\n" + "\n".join(problems)
                    + f"\n=== native ===\n{native.show()}\n=== strata ===\n{under.show()}", pytrace=False)


def compare(argv, **kw) -> Result:
    """Runs argv natively and under strata, asserts the same outcome, returns the native one."""
    native = run_mode("native", argv, **kw)
    under = run_mode("strata", argv, **kw)
    assert_same(native, under, " ".join(map(str, argv))[:200])
    return native


def expect(r: Result, status: int, *needles: str) -> None:
    """Checks the native run did what the test is about."""
    assert r.status == status, f"native run: expected status {status}\n{r.show()}"
    for n in needles:
        assert n.encode() in r.stdout, f"native run: expected {n!r} in stdout\n{r.show()}"


def fresh(d: Path) -> Path:
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def snapshot(root: Path) -> dict:
    """What a tree holds: per path, its type, permission bits, size, mtime and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p), st.st_mtime_ns)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), st.st_mtime_ns)
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns,
                            hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def make_tree(root: Path, *, special=False) -> Path:
    """A deterministic tree: text and binary files, odd names, modes, links, fixed mtimes.

    With special=True it also holds a fifo and a setuid file (for ls; tar and find tests
    leave them out)."""
    rng = random.Random(1234)
    files = {
        "a.txt": b"alpha\n",
        "b.log": b"log line\n" * 600,
        "with space.txt": b"spaces\n",
        "\u00fcnic\u00f6de.txt": "\u00e9t\u00e9\n".encode(),
        "sub/c.txt": bytes(range(256)) * 40,
        "sub/run.sh": b"#!/bin/sh\necho run\n",
        "sub/deeper/d.txt": b"",
        "sub/deeper/e.bin": bytes(rng.getrandbits(8) for _ in range(50_000)),
        # compressible but not trivially: words drawn from a small vocabulary
        "sub/deeper/words.txt": " ".join(rng.choice(["lorem", "ipsum", "dolor", "sit", "amet", "strata"])
                                         for _ in range(150_000)).encode(),
        "z/.hidden": b"hidden\n",
    }
    root.mkdir(parents=True)
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        os.chmod(p, 0o644)
    os.chmod(root / "sub/run.sh", 0o755)
    os.chmod(root / "a.txt", 0o600)
    (root / "empty").mkdir()
    os.symlink("sub/c.txt", root / "link-to-c")
    os.symlink("sub/deeper", root / "link-to-dir")
    os.link(root / "a.txt", root / "hardlink-to-a")
    if special:
        os.symlink("nowhere", root / "dangling")
        os.mkfifo(root / "fifo")
        (root / "setuid").write_bytes(b"")
        os.chmod(root / "setuid", 0o4755)
        os.chmod(root / "z", 0o1777)
    # fixed mtimes, deepest first so setting a file's time does not touch its directory's
    paths = sorted((p for p in root.rglob("*")), key=lambda p: (-len(p.parts), str(p)))
    for i, p in enumerate(paths):
        t = FIXED_TIME + 60 * (i % 7)
        os.utime(p, (t, t), follow_symlinks=False)
    os.utime(root, (FIXED_TIME, FIXED_TIME))
    os.utime(root.parent, (FIXED_TIME, FIXED_TIME))  # `ls -la` shows ".." too
    return root


# --------------------------------------------------------------------------- coreutils etc.

LS_ARGS = {
    "la": ["-la", "--time-style=full-iso"],
    "laR": ["-laR", "--time-style=+%s"],
    "lai-sorted-by-size": ["-lai", "-S", "--time-style=long-iso"],
    "color-columns": ["-a", "-C", "-w", "50", "--color=always"],
}


@pytest.mark.parametrize("name", list(LS_ARGS))
def test_ls(tmp_path, name):
    tree = make_tree(tmp_path / "top" / "lsdir", special=True)
    env = base_env(tmp_path / "home", LC_ALL="C")
    r = compare(["ls", *LS_ARGS[name], tree.name], cwd=tree.parent, env=env)
    expect(r, 0, "a.txt")


def _sort_input(path: Path) -> Path:
    rng = random.Random(42)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    with open(path, "w") as f:
        for _ in range(200_000):
            f.write(f"{rng.choice(words)} {rng.randint(-5000, 5000)} {rng.random():.6f}\n")
    return path


SORT_ARGS = {
    "keys": ["-k2,2n", "-k1,1", "-s"],
    "unique-parallel-small-buffer": ["-u", "-S", "64K", "--parallel=2", "-T", "{tmp}"],
    "reverse-general-numeric": ["-r", "-g", "-k3,3"],
    "random-with-source": ["-R", "--random-source={input}"],
}


@pytest.mark.parametrize("name", list(SORT_ARGS))
def test_sort(tmp_path, name):
    data = _sort_input(tmp_path / "data.txt")
    env = base_env(tmp_path / "home", LC_ALL="C")
    (tmp_path / "sorttmp").mkdir()
    args = [a.format(tmp=tmp_path / "sorttmp", input=data) for a in SORT_ARGS[name]]
    r = compare(["sort", *args, data], cwd=tmp_path, env=env)
    expect(r, 0)
    assert len(r.stdout) > 100_000
    assert not list((tmp_path / "sorttmp").iterdir()), "sort left temporary files"


@pytest.mark.parametrize("fmt", ["gz", "xz"])
def test_tar(tmp_path, fmt):
    """tar -z runs gzip and tar -J runs xz as children: archive, list, extract, compare."""
    flag = {"gz": "z", "xz": "J"}[fmt]
    work = tmp_path / "work"
    make_tree(work / "tree")
    original = snapshot(work / "tree")
    env = base_env(tmp_path / "home")
    seen = {}
    for mode in MODES:
        out = fresh(work / "out")
        archive = f"out/tree.tar.{fmt}"
        create = run_mode(mode, ["tar", "--sort=name", f"-c{flag}f", archive, "tree"], cwd=work, env=env)
        listing = run_mode(mode, ["tar", f"-tv{flag}f", archive], cwd=work, env=env)
        (out / "x").mkdir()
        extract = run_mode(mode, ["tar", f"-x{flag}f", archive, "-C", "out/x"], cwd=work, env=env)
        seen[mode] = dict(create=create, listing=listing, extract=extract,
                          archive=hashlib.sha256((work / archive).read_bytes()).hexdigest(),
                          tree=snapshot(out / "x" / "tree"))
    n, u = seen["native"], seen["strata"]
    for step in ("create", "listing", "extract"):
        assert_same(n[step], u[step], f"tar {step} ({fmt})")
    expect(n["create"], 0)
    expect(n["listing"], 0, "tree/sub/deeper/words.txt")
    assert n["tree"] == original, "native extraction does not reproduce the tree"
    assert u["tree"] == original, "extraction under strata does not reproduce the tree"
    # gzip and xz write no timestamps of their own here, so the bytes must match too
    assert n["archive"] == u["archive"], "archives differ between native and strata"


FIND_ARGS = {
    "name-type-exec-plus": ["tree", "-name", "*.txt", "-type", "f", "-exec", "wc", "-c", "{}", "+"],
    "type-d-exec-each": ["tree", "-type", "d", "-exec", "sh", "-c",
                         'printf "%s has %s entries\\n" "$1" "$(ls -A "$1" | wc -l)"', "sh", "{}", ";"],
    "links-printf": ["tree", "-type", "l", "-printf", "%p -> %l\\n"],
    "size-perm-printf": ["tree", "-size", "+1k", "-printf", "%s %m %TY-%Tm-%Td %TT %p\\n"],
    "or-depth-perm": ["tree", "-depth", "(", "-name", "*.log", "-o", "-perm", "-u+x", ")", "-print"],
    "newer-follow": ["-L", "tree", "-newer", "tree/a.txt", "-type", "f", "-exec", "md5sum", "{}", ";"],
}


@pytest.mark.parametrize("name", list(FIND_ARGS))
def test_find(tmp_path, name):
    make_tree(tmp_path / "tree")
    env = base_env(tmp_path / "home")
    r = compare(["find", *FIND_ARGS[name]], cwd=tmp_path, env=env)
    expect(r, 0, "tree/")


BASH_SCRIPT = r'''
set -u
trap 'echo "EXIT trap: status $?"' EXIT
trap 'echo "USR1 trap ran"' USR1
x=$(echo hello world | tr a-z A-Z | rev)
echo "command substitution: $x"
echo "nested: $( (echo one; echo two) | wc -l )"
(cd / && echo "subshell cwd: $PWD"; exit 3); echo "subshell status: $?"
echo "cwd kept: $(basename "$PWD")"
seq 1 10000 | awk '{s += $1} END {print "pipe sum:", s}'
printf '%s\n' c a b | sort | paste -sd, -
false | true; echo "PIPESTATUS: ${PIPESTATUS[*]}"
set -o pipefail; false | true; echo "pipefail status: $?"; set +o pipefail
for i in 1 2 3; do (sleep 0.$i; echo "job $i done" > job$i.out) & done
wait
cat job1.out job2.out job3.out
# The victim reports in through a fifo once it has dropped the inherited EXIT trap, so
# the kill cannot land while the forked shell could still run that trap.
mkfifo ready
(trap - EXIT; echo > ready; exec sleep 30) & victim=$!
read -r _ < ready
kill -TERM $victim; wait $victim; echo "killed job status: $?"
(exit 5) & wait $!; echo "background status: $?"
kill -USR1 $$
read -r first < <(printf 'process substitution\n'); echo "$first"
total=0; while read -r n; do total=$((total + n)); done < <(seq 100); echo "loop total: $total"
cat <<EOF | tr a-z A-Z
here document $((6 * 7))
EOF
f() { local v=$1; echo "function got $v"; return 4; }
f argument; echo "function status: $?"
exec 3>fd3.out; echo "written via fd 3" >&3; exec 3>&-; cat fd3.out
coproc UPPER { tr a-z A-Z; }
echo "through a coprocess" >&"${UPPER[1]}"; exec {UPPER[1]}>&-
read -r line <&"${UPPER[0]}"; echo "$line"
bash -c 'echo "child bash sees: $1"; exit 9' child arg; echo "child bash status: $?"
echo "to stderr" >&2
exit 6
'''


def test_bash(tmp_path):
    env = base_env(tmp_path / "home")
    seen = {}
    for mode in MODES:
        work = fresh(tmp_path / "work")
        seen[mode] = run_mode(mode, ["bash", "-c", BASH_SCRIPT], cwd=work, env=env)
    assert_same(seen["native"], seen["strata"], "bash -c script")
    expect(seen["native"], 6, "EXIT trap: status 6", "job 3 done", "killed job status: 143",
           "USR1 trap ran", "THROUGH A COPROCESS", "child bash status: 9")


# --------------------------------------------------------------------------- python

PY_SCRIPTS = {
    "json": (["py_json.py"], "round trip equal: True"),
    "subprocess": (["py_subprocess.py"], "pipeline: 499500 0 0"),
    "threading": (["py_threading.py"], "counter: 160000"),
    "multiprocessing-fork": (["py_multiprocessing.py", "fork"], "fork queue: from a process"),
    "multiprocessing-spawn": (["py_multiprocessing.py", "spawn"], "spawn queue: from a process"),
    "multiprocessing-forkserver": (["py_multiprocessing.py", "forkserver"], "forkserver queue: from a process"),
}


@pytest.mark.skipif(not os.path.exists(PY), reason=f"{PY} is not installed (run tests/setup.sh)")
@pytest.mark.parametrize("name", list(PY_SCRIPTS))
def test_python(tmp_path, name):
    args, needle = PY_SCRIPTS[name]
    env = base_env(tmp_path / "home")
    r = compare([PY, REAL / args[0], *args[1:]], cwd=tmp_path, env=env)
    expect(r, 0, needle)


# --------------------------------------------------------------------------- gcc and make

@pytest.mark.skipif(not have("gcc"), reason="gcc is not installed (run tests/setup.sh)")
def test_gcc_compile_and_run(tmp_path):
    """gcc runs cc1, as, collect2 and ld; then the program it built runs, all under strata."""
    env = base_env(tmp_path / "home")
    seen = {}
    for mode in MODES:
        work = fresh(tmp_path / "work")
        build = run_mode(mode, ["gcc", "-O2", "-Wall", "-pthread", "-o", "cprog", REAL / "cprog.c"],
                         cwd=work, env=env)
        binary = hashlib.sha256((work / "cprog").read_bytes()).hexdigest() if build.status == 0 else None
        prog = run_mode(mode, ["./cprog", "an-argument"], cwd=work, env=env)
        seen[mode] = (build, binary, prog)
    (nb, nbin, np_), (ub, ubin, up) = seen["native"], seen["strata"]
    assert_same(nb, ub, "gcc")
    expect(nb, 0)
    assert nbin == ubin, "gcc produced a different binary under strata"
    assert_same(np_, up, "compiled program")
    expect(np_, 5, "argv[1]=an-argument", "child exit: 42", "threads: counter=400000")


MAKE_SOURCES = {
    "Makefile": (
        "CFLAGS = -O1 -Wall\n"
        "OBJS = main.o one.o two.o three.o\n"
        "app: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
        "%.o: %.c common.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n"
        "check: app\n\t./app | tr a-z A-Z\n\t@echo \"files: $(words $(wildcard *.c))\"\n"
        ".PHONY: check\n"),
    "common.h": "int one(void); int two(void); int three(void);\n",
    "main.c": '#include <stdio.h>\n#include "common.h"\n'
              'int main(void) { printf("sum is %d\\n", one() + two() + three()); return 0; }\n',
    "one.c": "int one(void) { return 1; }\n",
    "two.c": "int two(void) { return 2; }\n",
    "three.c": "int three(void) { return 3; }\n",
}


@pytest.mark.skipif(not (have("make") and have("gcc")), reason="make or gcc is not installed (run tests/setup.sh)")
def test_make_parallel(tmp_path):
    """make -j2: a jobserver, parallel compiler jobs, then the linked program."""
    env = base_env(tmp_path / "home")
    seen = {}
    for mode in MODES:
        work = fresh(tmp_path / "work")
        for name, text in MAKE_SOURCES.items():
            (work / name).write_text(text)
            os.utime(work / name, (FIXED_TIME, FIXED_TIME))
        seen[mode] = run_mode(mode, ["make", "--no-print-directory", "-j2", "check"], cwd=work, env=env)
    assert_same(seen["native"], seen["strata"], "make -j2")
    expect(seen["native"], 0, "SUM IS 6", "files: 4")


# --------------------------------------------------------------------------- go

@pytest.fixture(scope="session")
def gohttp(out_dir):
    if GO is None:
        pytest.skip("go is not installed (run tests/setup.sh)")
    binary = out_dir / "gohttp"
    env = dict(os.environ, CGO_ENABLED="0", GOTOOLCHAIN="local", GOFLAGS="-mod=mod")
    p = subprocess.run([GO, "build", "-o", str(binary), "."], cwd=REAL / "gohttp", env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"go build failed:\n{p.stdout}\n{p.stderr}"
    return binary


def test_go_http_static(tmp_path, gohttp):
    """A static Go binary (raw syscalls, no libc): HTTP on loopback, goroutines, SIGURG preemption."""
    env = base_env(tmp_path / "home")
    r = compare([gohttp], cwd=tmp_path, env=env)
    expect(r, 0, "GOMAXPROCS: 2", "ticker progressed: true", "GET /fib/25 -> 200 75025",
           "server stopped: true", "signal received: user defined signal 1", "child exit status: 3", "done")


# --------------------------------------------------------------------------- java

@pytest.fixture(scope="session")
def java_classes(out_dir):
    if not have("javac"):
        pytest.skip("javac is not installed (run tests/setup.sh)")
    classes = out_dir / "java"
    classes.mkdir(exist_ok=True)
    p = subprocess.run(["javac", "-d", str(classes), str(REAL / "Hello.java")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"javac failed:\n{p.stdout}\n{p.stderr}"
    return classes


JAVA_NEEDLES = ("npe: caught 2000, sum 98802000", "threads: counter 1200000, tasks 12",
                "monitor: 200000", "done")


@pytest.mark.skipif(not have("java"), reason="java is not installed (run tests/setup.sh)")
def test_java_classfile(tmp_path, java_classes):
    env = base_env(tmp_path / "home")
    r = compare(["java", "-cp", java_classes, "Hello"], cwd=tmp_path, env=env)
    expect(r, 0, *JAVA_NEEDLES)


@pytest.mark.skipif(not have("java"), reason="java is not installed (run tests/setup.sh)")
def test_java_source_mode(tmp_path):
    """`java Hello.java` compiles in memory first (javac inside the same JVM), then runs."""
    if not have("javac"):
        pytest.skip("source-file mode needs the JDK's compiler (run tests/setup.sh)")
    env = base_env(tmp_path / "home")
    r = compare(["java", REAL / "Hello.java"], cwd=tmp_path, env=env)
    expect(r, 0, *JAVA_NEEDLES)


# --------------------------------------------------------------------------- node

@pytest.mark.skipif(not have("node"), reason="node is not installed (run tests/setup.sh)")
def test_node(tmp_path):
    env = base_env(tmp_path / "home")
    script = (REAL / "node_script.js").read_text()
    r = compare(["node", "-e", script], cwd=tmp_path, env=env)
    expect(r, 3, "execSync: \"hello from echo\\n\"", "order: sync,microtask,immediate,timeout",
           "file length: 100000", "caught: expected rejection")


# --------------------------------------------------------------------------- Rust programs

def test_rust_programs(tmp_path):
    """Rust programs give every thread a small alternate signal stack (8 KiB);
    strata's SIGSYS frames land there, and its own code must not. rustc runs
    the real compiler driver (threads, dlopen of its backend); strata runs
    strata itself, nested, which execs a program through two runtimes."""
    cargo_bin = Path.home() / ".cargo" / "bin"
    rustc = shutil.which("rustc") or str(cargo_bin / "rustc")
    if not Path(rustc).exists():
        pytest.skip("rustc is not installed")
    env = base_env(tmp_path, PATH=f"{cargo_bin}:/usr/sbin:/usr/bin:/sbin:/bin",
                   RUSTUP_HOME=os.environ.get("RUSTUP_HOME", str(Path.home() / ".rustup")))
    src = tmp_path / "hello.rs"
    src.write_text('fn main() { let h = std::thread::spawn(|| 6 * 7); println!("{}", h.join().unwrap()); }\n')
    r = compare([rustc, "--edition", "2021", "-o", tmp_path / "hello", src], cwd=tmp_path, env=env, timeout=120)
    expect(r, 0)
    r = compare([tmp_path / "hello"], cwd=tmp_path, env=env)
    expect(r, 0, "42")
    r = compare([STRATA, "run", "--", "/bin/echo", "nested"], cwd=tmp_path, env=env)
    expect(r, 0, "nested")
