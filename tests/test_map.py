"""The `map` extension against native runs in an equivalent real tree.

Each test builds a real directory tree T, runs a command natively on T's real
path and under `strata run --map /mapped=T` on /mapped, and compares what the
program printed, with T's path written as /mapped in the native output. So the
program must not be able to tell a mapped tree from a real one: listings,
`..` and relative symbolic links, the working directory as getcwd and
/proc/self/cwd report it, /proc/self/fd/N and /proc/self/exe, unix sockets,
execve. Then the options: read-only and discard-writes, longest prefix,
composition with trace, and bad input.
"""
import os
import shutil
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import OUT, STRATA, run, strata

MAPPED = "/mapped"
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC", "HOME": "/"}
FIXED_TIME = 1_600_000_000


def make_tree(root: Path) -> Path:
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "sub" / "b.txt").write_text("beta\n")
    (root / "sub" / "deep" / "c.txt").write_text("gamma\n")
    (root / "other" / "d.txt").write_text("delta\n")
    os.symlink("sub/deep", root / "deeplink")          # relative, to a directory
    os.symlink("../a.txt", root / "sub" / "up.txt")     # relative, upwards
    os.symlink("../../other", root / "sub" / "deep" / "otherlink")
    os.symlink("missing", root / "dangling")
    for p in sorted(root.rglob("*"), reverse=True):
        os.utime(p, (FIXED_TIME, FIXED_TIME), follow_symlinks=False)
    os.utime(root, (FIXED_TIME, FIXED_TIME))
    return root


@pytest.fixture
def tree(tmp_path):
    return make_tree(tmp_path / "tree")


def both(tree: Path, script: str, *, cwd=None, extra=()):
    """Runs `sh -c script` natively with $R = the real tree and under strata
    with $R = /mapped; returns (native, strata) with the tree's path in the
    native output written as /mapped."""
    n = run(["sh", "-c", script], env={**ENV, "R": str(tree)}, cwd=cwd or str(tree.parent))
    s = run(strata("--map", f"{MAPPED}={tree}", *extra) + ["sh", "-c", script], env={**ENV, "R": MAPPED},
            cwd=cwd or str(tree.parent))
    fix = lambda b: b.replace(str(tree).encode(), MAPPED.encode())  # noqa: E731
    return (n.status, fix(n.stdout), fix(n.stderr)), (s.status, s.stdout, s.stderr)


SCRIPTS = {
    # (-A for the root: /mapped/.. is the program's /, not the tree's parent)
    "ls": "ls -lA --time-style=+%s $R; ls -la --time-style=+%s $R/sub $R/deeplink/",
    "cat-through-links": "cat $R/a.txt $R/sub/up.txt $R/deeplink/c.txt $R/sub/deep/otherlink/d.txt",
    "find": "find $R | sort; find -L $R -name '*.txt' | sort",
    "dotdot": "cat $R/sub/../a.txt $R/sub/deep/../../other/d.txt; ls $R/deeplink/.. ; cat $R/deeplink/../b.txt",
    "cwd": "cd $R/sub/deep && pwd && /bin/pwd && readlink /proc/self/cwd && ls .. && cat ../b.txt",
    "cwd-via-link": "cd $R/deeplink && /bin/pwd -P && cat ../b.txt && realpath otherlink",
    "fd": "exec 7<$R/sub/b.txt; readlink /proc/self/fd/7; readlink /proc/$$/fd/7",
    "stat": "stat -c '%n %s %F' $R/a.txt $R/deeplink $R/dangling; stat -L -c '%n %F' $R/deeplink",
    "errors": "cat $R/nope; cat $R/dangling; ls $R/a.txt/x; mkdir $R/sub; true",
    "realpath": "realpath $R/deeplink/otherlink/d.txt $R/sub/up.txt",
    "tar": "tar cf - -C $R . --sort=name --owner=0 --group=0 --mtime=@1600000000 | tar tvf - --utc",
    "python-walk": "python3 -S -c \"import os,sys; r=sys.argv[1]; "
                   "[print(d, sorted(ds), sorted(fs)) for d, ds, fs in sorted(os.walk(r))]; "
                   "print(os.path.realpath(r + '/deeplink'))\" $R",
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_same_as_a_real_tree(tree, name):
    native, under = both(tree, SCRIPTS[name])
    assert under == native, f"native: {native}\nstrata: {under}"


def test_writes_land_in_the_host_tree(tree):
    script = ("mkdir $R/new && echo hi > $R/new/f && mv $R/new/f $R/new/g && ln -s g $R/new/l && "
              "cat $R/new/l && rm $R/new/l && chmod 600 $R/new/g && stat -c %a $R/new/g && "
              "touch -d @1600000000 $R/new/g && stat -c %Y $R/new/g && truncate -s 1 $R/new/g && cat $R/new/g")
    r = run(strata("--map", f"{MAPPED}={tree}") + ["sh", "-c", script], env={**ENV, "R": MAPPED})
    assert (r.status, r.stdout) == (0, b"hi\n600\n1600000000\nh"), r.show()
    assert (tree / "new" / "g").read_bytes() == b"h"
    assert not (tree / "new" / "l").exists() and not (tree / "new" / "f").exists()


def test_outside_paths_are_untouched_and_dotdot_leaves_the_mapping(tree, tmp_path):
    (tmp_path / "outside.txt").write_text("outside\n")
    # /mapped/.. is / in the program's view, not the host tree's parent.
    r = run(strata("--map", f"{MAPPED}={tree}") + ["sh", "-c", f"cat {MAPPED}/../etc/hostname; "
                                                         f"cat {MAPPED}/../outside.txt; "
                                                         f"cat {tmp_path}/outside.txt"], env=ENV)
    assert r.stdout == Path("/etc/hostname").read_bytes() + b"outside\n", r.show()
    assert b"outside.txt: No such file or directory" in r.stderr


def test_absolute_links_resolve_in_the_mapped_view(tree):
    os.symlink(f"{MAPPED}/sub/b.txt", tree / "abs")
    r = run(strata("--map", f"{MAPPED}={tree}") + ["cat", f"{MAPPED}/abs"], env=ENV)
    assert (r.status, r.stdout) == (0, b"beta\n"), r.show()
    # Natively the same link dangles: the view really is different.
    assert run(["cat", str(tree / "abs")], env=ENV).status != 0


def test_longest_prefix_wins(tmp_path):
    a = make_tree(tmp_path / "a")
    b = tmp_path / "b"
    b.mkdir()
    (b / "b.txt").write_text("from b\n")
    r = run(strata("--map", f"/m={a}", "--map", f"/m/sub={b}") + ["sh", "-c", "cat /m/a.txt /m/sub/b.txt; ls /m/sub"],
            env=ENV)
    assert r.stdout == b"alpha\nfrom b\nb.txt\n", r.show()


def test_read_only(tree):
    r = run(strata("--map", f"{MAPPED}={tree}:ro") + ["sh", "-c",
            "cat $R/a.txt; echo x > $R/a.txt; touch $R/n; rm $R/a.txt; mkdir $R/d; mv $R/a.txt $R/z; "
            "chmod 600 $R/a.txt; ln -s a $R/l; echo end"], env={**ENV, "R": MAPPED})
    assert r.stdout == b"alpha\nend\n", r.show()
    assert r.stderr.count(b"Read-only file system") == 7, r.show()
    assert (tree / "a.txt").read_text() == "alpha\n" and sorted(os.listdir(tree)) == [
        "a.txt", "dangling", "deeplink", "other", "sub"]


def test_discard_writes(tree):
    r = run(strata("--map", f"{MAPPED}/sub={tree}/sub:discard", "--map", f"{MAPPED}={tree}") + ["sh", "-c",
            "echo noise >> $R/sub/b.txt && echo new > $R/sub/log && cat $R/sub/b.txt && echo ok"],
            env={**ENV, "R": MAPPED})
    assert (r.status, r.stdout) == (0, b"beta\nok\n"), r.show()
    assert (tree / "sub" / "b.txt").read_text() == "beta\n"
    assert not (tree / "sub" / "log").exists()


def test_unix_socket_in_a_mapped_directory(tree):
    prog = textwrap.dedent("""
        import os, socket, sys
        p = sys.argv[1] + '/sub/sock'
        s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)
        c = socket.socket(socket.AF_UNIX); c.connect(p)
        a, _ = s.accept(); c.send(b'ping'); print(a.recv(4).decode(), s.getsockname())
        print(os.path.exists(p))
    """)
    r = run(strata("--map", f"{MAPPED}={tree}") + ["python3", "-S", "-c", prog, MAPPED], env=ENV)
    assert r.status == 0, r.show()
    assert r.stdout.splitlines()[0].startswith(b"ping"), r.show()
    assert r.stdout.splitlines()[1] == b"True"
    assert (tree / "sub" / "sock").exists()


def test_exec_and_proc_self_exe(tree):
    (tree / "bin").mkdir()
    shutil.copy2("/bin/readlink", tree / "bin" / "rl")
    r = run(strata("--map", f"{MAPPED}={tree}") + ["sh", "-c", f"{MAPPED}/bin/rl /proc/self/exe; cd {MAPPED}/bin && ./rl -f ./rl"],
            env=ENV)
    assert (r.status, r.stdout) == (0, f"{MAPPED}/bin/rl\n{MAPPED}/bin/rl\n".encode()), r.show()


@pytest.mark.parametrize("order", ["trace-over-map", "map-over-trace"])
def test_trace_sees_the_view_of_its_place_in_the_stack(tree, tmp_path, order):
    out = tmp_path / "trace"
    t = ["--trace=openat", "-o", str(out)]
    m = ["--map", f"{MAPPED}={tree}"]
    r = run(strata(*(t + m if order == "trace-over-map" else m + t)) + ["cat", f"{MAPPED}/sub/b.txt"], env=ENV)
    assert (r.status, r.stdout) == (0, b"beta\n"), r.show()
    lines = [l for l in out.read_text().splitlines() if "b.txt" in l]
    want = f"{MAPPED}/sub/b.txt" if order == "trace-over-map" else f"{tree}/sub/b.txt"
    assert len(lines) == 1 and f'"{want}"' in lines[0], lines


def test_monolithic_tracemap_equals_the_composed_stack(tree, tmp_path):
    script = ["sh", "-c", f"cat {MAPPED}/deeplink/c.txt; cd {MAPPED}/sub && ls && cat ../a.txt"]
    composed, mono = tmp_path / "c", tmp_path / "m"
    a = run(strata("--trace", "-o", str(composed), "--map", f"{MAPPED}={tree}") + script, env=ENV)
    b = run(strata("-o", str(mono), "--ext", f"tracemap:@{MAPPED}={tree}") + script, env=ENV)
    assert (a.status, a.stdout, a.stderr) == (b.status, b.stdout, b.stderr) == (0, b"gamma\nb.txt\ndeep\nup.txt\nalpha\n", b"")

    def norm(p):
        """Per-process line sequences (processes interleave differently in any
        two runs), with pids, addresses and random bytes masked. The shell's
        SIGCHLD handler returns (rt_sigreturn) wherever the kernel delivered
        the signal: before the shell's wait4 when the child was quick, after
        it otherwise. Those lines are counted per process instead of placed."""
        import re
        tasks = {}
        for line in p.read_text().splitlines():
            m = re.match(r"\[pid +(\d+)\] (.*)", line)
            pid, text = (m[1], m[2]) if m else ("root", line)
            if text.startswith("rt_sigreturn("):
                text = "rt_sigreturn(...) (moved to the end)"
                tasks.setdefault(pid + " sigreturns", []).append(text)
                continue
            text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
            text = re.sub(r'getrandom\("[^"]*"', "getrandom(BYTES", text)
            tasks.setdefault(pid, []).append(re.sub(r"\b(\d{3,})\b", "N", text))
        # Before the first fork lines carry no pid: they belong to the parent.
        parent = next((pid for pid, ls in tasks.items() if pid != "root" and any("fork()" in l for l in ls)), None)
        if parent and "root" in tasks:
            tasks[parent] = tasks.pop("root") + tasks[parent]
        for pid in [k for k in tasks if k.endswith(" sigreturns")]:
            owner = parent if pid == "root sigreturns" and parent else pid.split()[0]
            tasks.setdefault(owner, []).extend(tasks.pop(pid))
        return sorted(tasks.values())
    assert norm(composed) == norm(mono)


@pytest.mark.parametrize("args, message", [
    (["--map", "/x=/no/such/dir"], "/no/such/dir"),
    (["--map", "relative=/tmp"], "absolute"),
    (["--map", "/x"], "PROGRAM_PATH=HOST_PATH"),
    (["--map", "/x=/tmp:sometimes"], "sometimes"),
])
def test_bad_mappings_stop_before_the_program(args, message, tmp_path):
    marker = tmp_path / "ran"
    r = run([str(STRATA), "run", *args, "--", "touch", str(marker)], env=ENV)
    assert r.status == 2, r.show()
    assert message.encode() in r.stderr and r.stderr.startswith(b"strata: "), r.show()
    assert not marker.exists()


def test_a_process_outliving_strata_keeps_its_stack(tree, tmp_path):
    """The session file goes when the launcher ends; a background process
    that execs afterwards must still run under its whole stack (here: map),
    never silently without it."""
    out = tmp_path / "late.txt"
    r = run(strata("--trace", "-o", str(tmp_path / "t"), "--map", f"{MAPPED}={tree}") +
            ["sh", "-c", f"(sleep 0.5; exec cat {MAPPED}/a.txt > {out}) >/dev/null 2>&1 &"], env=ENV)
    assert r.status == 0, r.show()
    import time
    for _ in range(100):
        if out.exists() and out.stat().st_size:
            break
        time.sleep(0.05)
    assert out.read_text() == "alpha\n"


def test_lookups_of_a_mapping_point_through_its_parent(tree):
    """The fast path for single names must not skip a mapping point: the
    parent's handle is a host directory, where the name is something else."""
    prog = ("import os\n"
            "fd = os.open('/', os.O_RDONLY)\n"
            "a = os.stat('mapped', dir_fd=fd, follow_symlinks=False)\n"
            "os.chdir('/')\n"
            "b = os.lstat('mapped')\n"
            "c = os.stat('sub', dir_fd=os.open('/mapped', os.O_RDONLY), follow_symlinks=False)\n"
            "print(a.st_ino == b.st_ino, a.st_ino, c.st_ino)\n")
    r = run(strata("--map", f"{MAPPED}={tree}") + ["python3", "-S", "-c", prog], env=ENV)
    assert r.status == 0, r.show()
    same, a, c = r.stdout.split()
    assert same == b"True" and int(a) == tree.stat().st_ino and int(c) == (tree / "sub").stat().st_ino, r.show()
