"""The policy sandbox (#5) on real programs: a web server held to one
loopback port, an HTTP client under builtin:no-network, a build that may
write only under ./out, limits, the firewall on accept, audit mode, and
bad policies (exit status 2 before the program starts).

The adversarial suite (a program attacking strata itself) is
test_policy_adversarial.py.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from conftest import STRATA, run

# Debian's python3: readable by `nobody` too (a pyenv under /root is not).
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else (shutil.which("python3") or sys.executable)


def strata(*args, **kw):
    return run([str(STRATA), "run", *args], **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def tmp(tmp_path):
    # World-readable, so that `nobody` can use it too.
    os.chmod(tmp_path, 0o755)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def wait_listening(port: int, proc, timeout=20.0) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def http_get(port: int) -> bytes:
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/hello.txt", timeout=10) as r:
        return r.read()


def web_policy(tmp: Path, port: int) -> Path:
    return write(tmp / "web.toml", f"""\
        [syscalls]
        deny = ["ptrace", "mount", "keyctl"]

        [paths]
        write = ["/dev/null"]
        create = []

        [network]
        default = "deny"

        [[network.rule]]
        action = "allow"
        ops = ["bind", "accept"]
        family = "inet"
        address = "127.0.0.1"
        ports = {port}
        log = true

        [[network.rule]]
        action = "allow"
        family = "unix"
        """)


def test_http_server_bound_to_its_loopback_port(tmp):
    """python3 -m http.server serves on the port the policy allows; on
    another port its bind is refused, in-process and by Landlock."""
    root = tmp / "www"
    root.mkdir()
    (root / "hello.txt").write_text("hello from the sandbox\n")
    port = free_port()
    pol = web_policy(tmp, port)
    srv = subprocess.Popen([str(STRATA), "run", "--policy", str(pol), "--", PY, "-m", "http.server",
                            "--bind", "127.0.0.1", "--directory", str(root), str(port)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_listening(port, srv), srv.stderr.read().decode(errors="replace") if srv.poll() is not None else "not listening"
        assert http_get(port) == b"hello from the sandbox\n"
    finally:
        srv.terminate()
        _, err = srv.communicate(timeout=30)
    err = err.decode(errors="replace")
    # The allowed bind and accept were logged with their rule.
    assert f"allow bind(" in err.replace("log bind(", "allow bind(") or "log bind(" in err, err
    assert "by network.rule[0]" in err, err

    other = free_port()
    r = strata("--policy", str(pol), "--", PY, "-m", "http.server", "--bind", "127.0.0.1",
               "--directory", str(root), str(other), timeout=60)
    assert r.status != 0, r.show()
    err = r.stderr.decode(errors="replace")
    assert "PermissionError" in err or "Permission denied" in err, r.show()
    assert f"deny bind(" in err and f"127.0.0.1:{other}" in err and "by network.default" in err, r.show()


def test_server_bound_to_all_interfaces_is_refused_under_loopback_only(tmp):
    port = free_port()
    r = strata("--policy", "builtin:loopback-only", "--", PY, "-c",
               f"import socket; s=socket.socket(); s.bind(('0.0.0.0', {port}))", timeout=60)
    assert r.status != 0 and b"deny bind(" in r.stderr, r.show()
    r = strata("--policy", "builtin:loopback-only", "--", PY, "-c",
               f"import socket; s=socket.socket(); s.bind(('127.0.0.1', {port})); print('bound')", timeout=60)
    assert r.status == 0 and r.stdout == b"bound\n", r.show()


CLIENT = """
import sys, urllib.request
try:
    print(urllib.request.urlopen("http://127.0.0.1:%s/hello.txt", timeout=10).read().decode(), end="")
except OSError as e:
    print("refused:", e)
    sys.exit(3)
"""


@pytest.mark.parametrize("user", [None, "nobody"])
def test_http_client_refused_by_no_network(tmp, user):
    root = tmp / "www"
    root.mkdir()
    (root / "hello.txt").write_text("served\n")
    os.chmod(root, 0o755)
    port = free_port()
    srv = subprocess.Popen([PY, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(root), str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_listening(port, srv)
        # Without the policy the client gets the page (the test can fail).
        r = strata("--", PY, "-c", CLIENT % port, user=user)
        assert r.status == 0 and r.stdout == b"served\n", r.show()
        r = strata("--policy", "builtin:no-network", "--", PY, "-c", CLIENT % port, user=user)
        assert r.status == 3 and b"refused" in r.stdout, r.show()
        assert b"deny socket(AF_INET" in r.stderr and b"by network.default" in r.stderr, r.show()
    finally:
        srv.terminate()
        srv.wait(timeout=30)


def test_build_in_a_read_only_tree_writes_only_under_out(tmp):
    """make + gcc build a small program; the tree is read-only except ./out
    (and gcc's temporary files go to ./out/tmp). A rule that writes into
    the tree fails, and nothing appears there."""
    tree = tmp / "tree"
    tree.mkdir()
    write(tree / "main.c", """\
        #include <stdio.h>
        int add(int, int);
        int main(void) { printf("sum=%d\\n", add(2, 3)); return 0; }
        """)
    write(tree / "add.c", "int add(int a, int b) { return a + b; }\n")
    write(tree / "Makefile", """\
        out/prog: out/main.o out/add.o
        \tgcc -o $@ $^
        out/%.o: %.c
        \tgcc -c -o $@ $<
        stray:
        \techo x > stray.txt
        """)
    (tree / "out" / "tmp").mkdir(parents=True)
    pol = write(tmp / "build.toml", """\
        [paths]
        write = ["./out", "/dev/null"]
        create = ["./out"]

        [network]
        default = "deny"
        [[network.rule]]
        action = "allow"
        family = "unix"
        """)
    env = dict(os.environ, TMPDIR=str(tree / "out" / "tmp"))
    r = run([str(STRATA), "run", "--policy", str(pol), "--", "make", "-s", "out/prog"], cwd=tree, env=env, timeout=300)
    assert r.status == 0, r.show()
    assert subprocess.run([str(tree / "out" / "prog")], capture_output=True).stdout == b"sum=5\n"
    r = run([str(STRATA), "run", "--policy", str(pol), "--", "make", "-s", "stray"], cwd=tree, env=env)
    assert r.status != 0 and not (tree / "stray.txt").exists(), r.show()
    assert b"deny openat(" in r.stderr and b"stray.txt" in r.stderr, r.show()
    # Natively the same rule works (the test can fail).
    r = run(["make", "-s", "stray"], cwd=tree, env=env)
    assert r.status == 0 and (tree / "stray.txt").exists()


def test_denied_calls_leave_nothing_half_done(tmp):
    d = tmp / "d"
    d.mkdir()
    (d / "a").write_text("A")
    pol = write(tmp / "p.toml", f"""\
        [paths]
        write = ["/dev/null"]
        create = []
        deny = ["{d}/a"]
        """)
    prog = f"""
import os
import re
for f in (lambda: os.rename("{d}/a", "{d}/b"), lambda: open("{d}/new", "w"),
          lambda: os.unlink("{d}/a"), lambda: os.mkdir("{d}/sub"), lambda: open("{d}/a").read()):
    try:
        f(); print("done")
    except OSError as e:
        print(e.errno)
"""
    r = strata("--policy", str(pol), "--", PY, "-c", prog)
    assert r.stdout.split() == [b"13"] * 5, r.show()
    assert sorted(os.listdir(d)) == ["a"] and (d / "a").read_text() == "A"
    assert b'by paths.deny[0]' in r.stderr, r.show()


def test_syscall_rules_errno_and_audit(tmp):
    pol = write(tmp / "p.toml", """\
        [syscalls]
        deny = ["uname"]
        log = ["getppid"]
        errno = { uname = "EPERM" }
        """)
    prog = "import os\ntry:\n    os.uname()\nexcept OSError as e:\n    print(e.errno)\nos.getppid()\nprint('end')"
    r = strata("--policy", str(pol), "--", PY, "-c", prog)
    assert r.stdout == b"1\nend\n", r.show()
    err = r.stderr.decode()
    assert 'deny uname(' in err and 'EPERM' in err and 'by syscalls.deny[0] "uname"' in err, err
    assert 'log getppid()' in err and 'by syscalls.log[0] "getppid"' in err, err
    r = strata("--policy", str(pol), "--audit", "--", PY, "-c", prog)
    assert r.status == 0 and b"end" in r.stdout and b"1\n" not in r.stdout, r.show()
    assert b"audit: would deny uname(" in r.stderr, r.show()


def test_default_deny_with_an_allow_list(tmp):
    pol = write(tmp / "p.toml", """\
        [policy]
        default = "deny"
        errno = "EPERM"
        [syscalls]
        allow = ["%memory", "%file", "%desc", "%signal", "%process", "%time", "%ipc", "%network"]
        deny = ["uname"]
        """)
    r = strata("--policy", str(pol), "--", "uname", "-s")
    assert r.status != 0 and b"deny uname(" in r.stderr, r.show()
    r = strata("--policy", str(pol), "--", "ls", "/")
    assert r.status == 0, r.show()


def test_thread_and_child_limits(tmp):
    pol = write(tmp / "p.toml", """\
        [process]
        max_threads = 3
        max_children = 2
        """)
    prog = textwrap.dedent("""\
        import threading, time, subprocess
        ev = threading.Event()
        ts = []
        try:
            for i in range(5):
                t = threading.Thread(target=ev.wait); t.start(); ts.append(t)
        except RuntimeError as e:
            print("threads", len(ts) + 1)
        ev.set()
        for t in ts: t.join()
        ps = []
        try:
            for i in range(4):
                ps.append(subprocess.Popen(["sleep", "5"]))
        except OSError as e:
            print("children", len(ps), e.errno)
        for p in ps: p.kill(); p.wait()
        # One at a time, any number: the limit is on children alive (strata
        # counts them only when its running bound reaches the limit).
        for i in range(6):
            subprocess.run(["true"], check=True)
        print("one at a time", i + 1)
        """)
    r = strata("--policy", str(pol), "--", PY, "-c", prog, timeout=60)
    assert r.stdout == b"threads 3\nchildren 2 11\none at a time 6\n", r.show()
    assert b"by process.max_threads" in r.stderr and b"by process.max_children" in r.stderr, r.show()


def test_firewall_refuses_accept_from_a_peer_it_does_not_allow(tmp):
    """accept is judged on the peer's address: a client bound to 127.0.0.2
    is closed before the server sees it; one from 127.0.0.1 is served."""
    port = free_port()
    pol = write(tmp / "p.toml", f"""\
        [network]
        default = "deny"
        [[network.rule]]
        action = "allow"
        ops = ["bind", "accept"]
        family = "inet"
        address = "127.0.0.1"
        [[network.rule]]
        action = "allow"
        family = "unix"
        """)
    server = textwrap.dedent(f"""\
        import socket
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", {port})); s.listen(4); print("ready", flush=True)
        for i in range(2):
            try:
                c, a = s.accept(); c.sendall(b"hi " + a[0].encode()); c.close(); print("served", a[0], flush=True)
            except OSError as e:
                print("refused", e.errno, flush=True)
        """)
    srv = subprocess.Popen([str(STRATA), "run", "--policy", str(pol), "--", PY, "-c", server],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert srv.stdout.readline() == b"ready\n"
        got = []
        for src in ("127.0.0.2", "127.0.0.1"):
            c = socket.socket()
            c.bind((src, 0))
            c.connect(("127.0.0.1", port))
            c.settimeout(10)
            try:
                got.append(c.recv(100))
            except OSError:
                got.append(b"")
            c.close()
        out, err = srv.communicate(timeout=30)
    finally:
        srv.kill()
    assert got == [b"", b"hi 127.0.0.1"], (got, err)
    assert out == b"refused 13\nserved 127.0.0.1\n", (out, err)
    assert b"deny accept" in err and b"127.0.0.2" in err and b"by network.default" in err, err


BAD = [
    ("[policy]\ndefault = \"sometimes\"\n", "line 2, column 11"),
    ("[syscalls]\ndeny = [\"frobnicate\"]\n", "unknown system call 'frobnicate'"),
    ("[syscalls]\nallow = [\"read\"]\ndeny = [\"read\"]\n", "contradictory rules"),
    ("[network\n", "line 1"),
    ("[paths]\nwrite = [\"/no/such/place\"]\n", "/no/such/place"),
    ("[paths]\nwrite = [\"/tmp\"]\ndeny = [\"/tmp\"]\n", "contradictory rules"),
    ("[syscalls]\ndeny = [\"exit_group\"]\n", "cannot be denied"),
    ("[policy]\nbackstop = \"strict\"\n[syscalls]\ndeny = [\"mmap\"]\n", "strict"),
    ("[policy]\nbackstop = \"strict\"\n[network]\ndefault = \"deny\"\n[[network.rule]]\naction = \"allow\"\naddress = \"10.0.0.0/8\"\n", "strict"),
]


@pytest.mark.parametrize("text,expect", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_policies_stop_before_the_program(tmp, text, expect):
    pol = tmp / "bad.toml"
    pol.write_text(text)
    marker = tmp / "ran"
    r = strata("--policy", str(pol), "--", "touch", str(marker))
    err = r.stderr.decode()
    assert r.status == 2, r.show()
    assert expect in err and str(pol) in err and len(err.strip().splitlines()) == 1, r.show()
    assert not marker.exists()


def test_combinations_the_backstop_cannot_honour(tmp):
    marker = tmp / "ran"
    r = strata("--policy", "builtin:no-network", "--no-follow-exec", "--", "touch", str(marker))
    assert r.status == 2 and b"--no-follow-exec" in r.stderr and not marker.exists(), r.show()
    pol = write(tmp / "s.toml", "[policy]\nbackstop = \"strict\"\n")
    r = strata("--policy", str(pol), "--audit", "--", "touch", str(marker))
    assert r.status == 2 and b"audit" in r.stderr and not marker.exists(), r.show()
    r = strata("--policy", "builtin:nope", "--", "touch", str(marker))
    assert r.status == 2 and b"no such profile" in r.stderr and not marker.exists(), r.show()
    r = strata("--policy", str(tmp / "missing.toml"), "--", "touch", str(marker))
    assert r.status == 2 and b"missing.toml" in r.stderr and not marker.exists(), r.show()
    r = strata("--audit", "--", "touch", str(marker))
    assert r.status == 2 and not marker.exists(), r.show()


def test_policy_check_says_what_the_kernel_enforces():
    r = run([str(STRATA), "policy", "check", "builtin:loopback-only"])
    assert r.status == 0, r.show()
    out = r.stdout.decode()
    assert "network.rule[0]: kernel: seccomp" in out, out
    assert "network.rule[2]: in-process only" in out, out
    r = run([str(STRATA), "policy", "show", "builtin:no-network"])
    assert r.status == 0 and b"[network]" in r.stdout
    r = run([str(STRATA), "policy", "show"])
    assert r.status == 0 and b"builtin:read-only-fs" in r.stdout


def test_profiles_keep_ordinary_programs_working(tmp):
    for prof in ("builtin:no-network", "builtin:read-only-fs", "builtin:loopback-only"):
        r = strata("--policy", prof, "--", "sh", "-c", "ls / | sort | head -3; echo ok")
        n = run(["sh", "-c", "ls / | sort | head -3; echo ok"])
        assert (r.status, r.stdout) == (n.status, n.stdout), (prof, r.show())
    r = strata("--policy", "builtin:read-only-fs", "--policy", "builtin:no-network", "--", PY, "-c",
               "import json, subprocess; print(json.dumps(subprocess.run(['echo','x'],capture_output=True).stdout.decode()))")
    assert r.status == 0 and r.stdout == b'"x\\n"\n', r.show()


def test_only_listed_programs_may_be_executed(tmp):
    sh = os.path.realpath("/bin/sh")
    echo = os.path.realpath(shutil.which("echo"))
    pol = write(tmp / "p.toml", f"""\
        [paths]
        execute = ["{sh}", "{echo}"]
        """)
    r = strata("--policy", str(pol), "--", "/bin/sh", "-c", "echo one; ls / >/dev/null; echo status=$?")
    assert r.stdout == b"one\nstatus=126\n", r.show()
    assert b"deny execve(" in r.stderr and b"[execute " in r.stderr and b"by paths.execute" in r.stderr, r.show()
    n = run(["/bin/sh", "-c", "echo one; ls / >/dev/null; echo status=$?"])
    assert n.stdout == b"one\nstatus=0\n"


def test_resources_are_kernel_limits(tmp):
    pol = write(tmp / "p.toml", """\
        [resources]
        max_open_files = 64
        max_file_size = "4K"
        """)
    prog = textwrap.dedent(f"""\
        import resource, os, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        print(resource.getrlimit(resource.RLIMIT_NOFILE))
        fds = []
        try:
            while True: fds.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as e:
            print("EMFILE" if e.errno == 24 else e)
        for fd in fds: os.close(fd)
        try:
            with open("{tmp}/big", "wb") as f: f.write(b"x" * 8192)
        except OSError as e:
            print("EFBIG" if e.errno == 27 else e)
        """)
    r = strata("--policy", str(pol), "--", PY, "-c", prog)
    assert r.stdout == b"(64, 64)\nEMFILE\nEFBIG\n", r.show()
    assert (tmp / "big").stat().st_size == 4096
    out = run([str(STRATA), "policy", "check", str(pol)]).stdout.decode()
    assert "resources.max_open_files: kernel: setrlimit" in out, out


def test_fast_path_stays_on_under_a_write_restricting_policy(tmp):
    """Landlock closes /proc/self/mem to strata under read-only-fs; code is still
    rewritten as it is loaded (trampolines go to fresh pool pages), so calls
    do not fall back to the trap path."""
    import re
    r = strata("--fast-stats", "--policy", "builtin:read-only-fs", "--", "ls", "/")
    m = re.search(rb"(\d+) trapped \(([\d.]+)% of (\d+)\); (\d+) sites rewritten", r.stderr)
    assert r.status == 0 and m, r.show()
    assert int(m[4]) > 100 and float(m[2]) < 10, r.show()


def test_links_out_of_an_allowed_prefix(tmp):
    """A link inside an allowed prefix that leads outside it: writing through
    it is refused (Landlock resolves it), and so is executing through it
    (strata resolves execve's path itself: it maps the program)."""
    out = tmp / "out"
    out.mkdir()
    outside = tmp / "outside.txt"
    outside.write_text("orig")
    (out / "link").symlink_to(outside)
    bindir = tmp / "bin"
    bindir.mkdir()
    (bindir / "ls").symlink_to(os.path.realpath(shutil.which("ls")))
    sh = os.path.realpath("/bin/sh")
    pol = write(tmp / "p.toml", f"""\
        [paths]
        write = ["{out}", "/dev/null"]
        execute = ["{bindir}", "{sh}"]
        """)
    r = strata("--policy", str(pol), "--", "/bin/sh", "-c", f"echo new > {out}/link; echo $?; {bindir}/ls / >/dev/null; echo $?")
    assert r.stdout == b"2\n126\n", r.show()
    assert outside.read_text() == "orig"


def test_truncating_under_a_write_restricting_policy(tmp):
    """Truncating is held by seccomp, not Landlock (whose truncate right would
    walk the path of every open): truncate(2) of a file the policy lets the
    program write works (strata serves it as an open for writing), of any other
    file it is refused, even through a link out of the allowed directory, and an
    open with O_TRUNC that does not open for writing is refused with a line
    naming the backstop. Each file keeps what the answer says."""
    out = tmp / "out"
    out.mkdir()
    (out / "f").write_text("0123456789")
    (out / "g").write_text("0123456789")
    outside = tmp / "outside.txt"
    outside.write_text("0123456789")
    (out / "link").symlink_to(outside)
    pol = write(tmp / "p.toml", f"""\
        [paths]
        write = ["{out}"]
        """)
    prog = f"""
import os
def attempt(f):
    try:
        f(); print("ok")
    except OSError as e:
        print(e.errno)
attempt(lambda: os.truncate("{out}/f", 3))
attempt(lambda: os.truncate("{out}", 0))
attempt(lambda: os.truncate("{out}/f", -1))
attempt(lambda: os.truncate("{out}/missing", 0))
attempt(lambda: os.truncate("{outside}", 0))
attempt(lambda: os.truncate("{out}/link", 0))
attempt(lambda: os.close(os.open("{out}/g", os.O_RDONLY | os.O_TRUNC)))
attempt(lambda: os.close(os.open("{out}/g", os.O_WRONLY | os.O_TRUNC)))
"""
    r = strata("--policy", str(pol), "--", PY, "-c", prog)
    assert r.stdout.split() == [b"ok", b"21", b"22", b"2", b"13", b"13", b"13", b"ok"], r.show()
    assert (out / "f").read_text() == "012"
    assert (out / "g").read_text() == ""
    assert outside.read_text() == "0123456789"
    assert b"the kernel backstop (an open that truncates must open for writing)" in r.stderr, r.show()
    # Natively the same program truncates everything it names.
    (out / "f").write_text("0123456789")
    n = run([PY, "-c", prog])
    assert n.stdout.split() == [b"ok", b"21", b"22", b"2", b"ok", b"ok", b"ok", b"ok"], n.show()


CAUGHT = re.compile(rb"calls caught by ([^\n]+)")


@pytest.mark.parametrize("user", [None, "nobody"])
def test_calls_are_caught_by_strata_filter_under_a_backstop(tmp, user):
    """With a kernel backstop (no_new_privs and seccomp filters already
    there) every image of the tree catches calls with strata's own seccomp
    filter instead of Syscall User Dispatch (runtime seccomp.rs): a shell
    pipeline of several execs, a denied write among them, all of it seen by
    the policy; without a backstop (none, --audit, no policy) dispatch is
    used. --fast-stats ORs what each image used, so one image falling back
    shows as both."""
    script = "ls / | wc -l; touch /etc/strata-denied; echo $?"
    r = strata("--fast-stats", "--policy", "builtin:read-only-fs", "--", "sh", "-c", script, user=user)
    assert r.status == 0, r.show()
    out = r.stdout.split()
    assert int(out[0]) > 3 and out[1] != b"0", r.show()
    assert b"[create /etc/strata-denied]" in r.stderr or b"[write /etc/strata-denied]" in r.stderr, r.show()
    assert CAUGHT.search(r.stderr)[1] == b"strata's seccomp filter", r.show()
    assert not os.path.exists("/etc/strata-denied")
    pol = write(tmp / "none.toml", """\
        [policy]
        backstop = "none"
        [paths]
        write = ["/dev/null"]
        """)
    # (The policy file is in a directory only root can read.)
    files = [["--policy", str(pol)]] if user is None else []
    for opts in files + [["--policy", "builtin:read-only-fs", "--audit"], []]:
        r = strata("--fast-stats", *opts, "--", "sh", "-c", "ls / | wc -l", user=user)
        assert r.status == 0 and int(r.stdout) > 3, r.show()
        assert CAUGHT.search(r.stderr)[1] == b"Syscall User Dispatch", (opts, r.show())


def test_links_and_renames_across_directories(tmp):
    """Landlock refuses every link and rename across directories (EXDEV) in
    a ruleset that does not handle its Refer right, and every policy's
    ruleset handles Execute. A policy that does not restrict creating
    (loopback-only) lets them through anywhere; one that does lets them
    through where it allows creating, and refuses them elsewhere."""
    def fresh():
        shutil.rmtree(tmp / "t", ignore_errors=True)
        for d in ["a", "b", "out/x", "out/y"]:
            (tmp / "t" / d).mkdir(parents=True)
        (tmp / "t" / "a" / "f").write_text("f")
        (tmp / "t" / "out" / "x" / "g").write_text("g")
    script = textwrap.dedent(f"""\
        import os
        t = {str(tmp / "t")!r}
        def try_(what, f, *args):
            try:
                f(*args)
                print(what, "ok")
            except OSError as e:
                print(what, e.errno)
        try_("rename", os.rename, t + "/a/f", t + "/b/f")
        try_("link", os.link, t + "/b/f", t + "/a/f2")
        try_("rename-out", os.rename, t + "/out/x/g", t + "/out/y/g")
        try_("link-out", os.link, t + "/out/y/g", t + "/out/x/g2")
        """)
    fresh()
    r = strata("--policy", "builtin:loopback-only", "--", PY, "-c", script)
    lines = r.stdout.split(b"\n")[:4]
    assert r.status == 0 and lines == [b"rename ok", b"link ok", b"rename-out ok", b"link-out ok"], r.show()
    fresh()
    pol = write(tmp / "out.toml", """\
        [paths]
        write = ["./t/out"]
        create = ["./t/out"]
        """)
    r = strata("--policy", str(pol), "--", PY, "-c", script, cwd=tmp)
    lines = r.stdout.split(b"\n")[:4]
    # Outside ./t/out: refused, by the layer (EACCES, with its log line).
    assert r.status == 0 and lines == [b"rename 13", b"link 13", b"rename-out ok", b"link-out ok"], r.show()
    assert b"deny rename(" in r.stderr and b"by paths.create" in r.stderr, r.show()
