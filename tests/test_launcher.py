"""The launcher's own promises, end to end with the real runtime: following
exec (and not following it with --no-follow-exec), counting across the
process tree, and dying of the program's signal."""
import re
import signal

from conftest import STRATA, run, strata

# A shell that execs a program making 7 getsid calls (os.getsid is a plain
# getsid system call; neither the shell nor Python's start-up makes one).
CHILD = ["/usr/bin/python3", "-c", "import os\nfor _ in range(7): os.getsid(0)"]


def counted(path) -> dict:
    """Calls per syscall from a `strace -c` style table: the columns are
    % time, seconds, usecs/call, calls, [errors,] syscall."""
    calls = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and re.fullmatch(r"[a-z_0-9]+", f[-1]) and f[3].isdigit() and f[-1] != "total":
            calls[f[-1]] = int(f[3])
    return calls


def test_count_follows_exec(tmp_path):
    out = tmp_path / "count.txt"
    r = run(strata("--ext", "count", "-o", str(out)) + ["/bin/sh", "-c", " ".join(CHILD[:2]) + " '" + CHILD[2] + "'"])
    assert r.status == 0, r.show()
    assert counted(out).get("getsid", 0) == 7, out.read_text()


def test_no_follow_exec_leaves_the_new_image_alone(tmp_path):
    out = tmp_path / "count.txt"
    r = run(strata("--no-follow-exec", "--ext", "count", "-o", str(out)) + ["/bin/sh", "-c", " ".join(CHILD[:2]) + " '" + CHILD[2] + "'"])
    assert r.status == 0, r.show()
    calls = counted(out)
    assert calls.get("execve", 0) >= 1, out.read_text()  # the shell's exec was seen...
    assert calls.get("getsid", 0) == 0, out.read_text()  # ...but nothing after it


def test_dies_of_the_programs_signal():
    for sig in (signal.SIGSEGV, signal.SIGTERM, signal.SIGKILL):
        r = run(strata() + ["/bin/sh", "-c", f"kill -{sig.name[3:]} $$"])
        assert r.status == -sig, f"{sig.name}: {r.show()}"


def test_exit_status_and_streams():
    r = run(strata() + ["/bin/sh", "-c", "echo out; echo err >&2; exit 42"])
    assert (r.status, r.stdout, r.stderr) == (42, b"out\n", b"err\n"), r.show()


def test_runs_as_an_unprivileged_user(tmp_path):
    # The corpus runs part of itself as nobody; this checks the plain case
    # with no capabilities at all.
    r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
             "--bounding-set=-all", str(STRATA), "run", "--", "/bin/sh", "-c",
             "grep -E '^Cap(Eff|Prm)' /proc/self/status; id -u"])
    assert r.status == 0, r.show()
    assert r.stdout.splitlines()[-1] == b"65534", r.show()
    assert b"CapEff:\t0000000000000000" in r.stdout, r.show()


def test_an_inherited_ignored_sigsys_stays_ignored():
    """SIGSYS ignored by whoever starts strata is ignored for the program,
    in the launcher's own first process (which installs strata's handlers
    with signals unblocked) and after an exec (with every signal blocked),
    as natively: strata virtualises SIGSYS, it must not reset it."""
    import subprocess
    show = "import signal; print('ignored' if signal.getsignal(signal.SIGSYS) == signal.SIG_IGN else 'not ignored')"
    prog = ["/usr/bin/python3", "-c", f"{show}; import os; os.execv('/usr/bin/python3', ['python3', '-c', {show!r}])"]

    def ignoring(argv):
        def pre():
            signal.signal(signal.SIGSYS, signal.SIG_IGN)
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, preexec_fn=pre)
        return p.returncode, p.stdout, p.stderr

    native = ignoring(prog)
    assert native == (0, b"ignored\nignored\n", b""), native
    assert ignoring(strata() + prog) == native
