"""The fast path (#4): syscall sites rewritten into jumps into strata.

The corpus (test_programs.py) checks that programs behave identically with
rewriting on (the default), off and lazy. These tests check that the fast path
is really taken, from `--fast-stats` (how calls reached strata: through a
rewritten site, entering strata or skipping it, or by a trap) and from strace,
which sees every syscall that reaches the kernel.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import OUT, Result, have, run

STATS = re.compile(r"strata: fast path: (\d+) calls entered strata directly, (\d+) skipped it, "
                   r"(\d+) trapped \([\d.]+% of (\d+)\); (\d+) sites rewritten, (\d+) declined; "
                   r"code scanned in (\d+) mappings, taken from the site cache in (\d+)")
LOOP_SRC = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
    for (long i = 0; i < n; i++) sum += getpid() + syscall(SYS_gettid);
    printf("%d\n", sum == n * (long)(getpid() + syscall(SYS_gettid)));
    return 0;
}
"""
N = 20000


@pytest.fixture(scope="module")
def loop(out_dir):
    src = out_dir / "fast_loop.c"
    exe = out_dir / "fast_loop"
    src.write_text(LOOP_SRC)
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(src)], check=True)
    return str(exe)


def strata_run(*args, user=None) -> Result:
    from conftest import STRATA
    return run([str(STRATA), "run", *args], user=user)


def stats(r: Result) -> dict:
    m = STATS.search(r.stderr.decode(errors="replace"))
    assert m, f"no --fast-stats line:\n{r.show()}"
    keys = ("fast", "native", "trapped", "total", "rewritten", "declined", "scanned", "cached")
    return dict(zip(keys, map(int, m.groups())))


def test_sites_rewritten_and_calls_skip_the_trap(loop):
    r = strata_run("--fast-stats", "--", loop, str(N))
    assert r.status == 0 and r.stdout == b"1\n", r.show()
    s = stats(r)
    assert s["rewritten"] > 300  # libc's and ld.so's sites, rewritten as they are loaded
    # No layer wants getpid: its site (`mov $39,%eax`) skips strata altogether;
    # syscall(3)'s site has its number in a register and enters strata.
    assert s["native"] >= N and s["fast"] >= N, s
    assert s["trapped"] < 100, s


def test_rewrite_off_traps_every_call(loop):
    r = strata_run("--fast-stats", "--rewrite=off", "--", loop, str(N))
    assert r.status == 0 and r.stdout == b"1\n", r.show()
    s = stats(r)
    assert (s["fast"], s["native"], s["rewritten"]) == (0, 0, 0)
    assert s["trapped"] >= 2 * N


def test_lazy_rewrites_at_the_first_trap(loop):
    r = strata_run("--fast-stats", "--rewrite=lazy", "--", loop, str(N))
    assert r.status == 0 and r.stdout == b"1\n", r.show()
    s = stats(r)
    assert 0 < s["rewritten"] < 100
    # getpid's `mov $39,%eax` site is rewritten at its first trap; syscall(3)'s
    # site (a longer instruction, whose bounds only a scan of its function
    # can establish) stays on the trap path.
    assert s["native"] >= N - 10, s
    assert N <= s["trapped"] < N + 200, s


def test_a_layer_sees_fast_calls(loop, tmp_path):
    out = tmp_path / "count.txt"
    r = strata_run("--fast-stats", "--ext", "count", "-o", str(out), "--", loop, str(N))
    assert r.status == 0, r.show()
    s = stats(r)
    assert s["fast"] >= 2 * N and s["native"] == 0, s
    table = out.read_text()
    calls = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$",
                                                              table, re.M)}
    assert calls.get("getpid", 0) >= N and calls.get("gettid", 0) >= N, table


@pytest.mark.skipif(not have("strace"), reason="strace is not installed")
def test_ids_serves_getpid_without_the_kernel(loop, tmp_path):
    """`--ext ids` short-circuits getpid and gettid: strace sees none of the loop's calls."""
    out = tmp_path / "strace.txt"
    from conftest import STRATA
    r = run(["strace", "-f", "-qq", "-o", str(out), "-e", "trace=getpid,gettid",
             str(STRATA), "run", "--ext", "ids", "--", loop, str(N)])
    assert r.status == 0 and r.stdout == b"1\n", r.show()
    seen = len(out.read_text().splitlines())
    assert seen < 50, f"{seen} getpid/gettid calls reached the kernel"


def test_fast_path_as_an_unprivileged_user(loop):
    """No privilege is needed: /proc/self/mem writes and pools near the code."""
    os.chmod(OUT, 0o755)
    r = strata_run("--fast-stats", "--", loop, str(N), user="nobody")
    assert r.status == 0 and r.stdout == b"1\n", r.show()
    s = stats(r)
    assert s["rewritten"] > 300 and s["native"] >= N and s["trapped"] < 100, s


@pytest.mark.parametrize("argv", [
    ["ls", "-la", "/usr/bin"],
    ["python3", "-c", "import json, os; print(len(json.dumps(dict(os.environ))) > 0)"],
    ["bash", "-c", "for i in 1 2 3; do echo $i; done | sort -r | head -1"],
], ids=["ls", "python3", "bash"])
def test_real_programs_mostly_skip_the_trap(argv):
    """Real programs: the same output, and few calls left on the trap path."""
    native = run(argv)
    r = strata_run("--fast-stats", "--", *argv)
    assert (r.status, r.stdout) == (native.status, native.stdout), r.show()
    s = stats(r)
    assert s["rewritten"] > 100, s
    assert s["trapped"] * 10 < s["total"], s


def sigsys_of(tmp_path, native: Result, opts, argv) -> str:
    """strace's record of the Syscall User Dispatch traps (SIGSYS) of `strata run OPTS --
    ARGV`, whose status and output must be `native`'s."""
    from conftest import STRATA
    out = tmp_path / "strace.txt"
    r = run(["strace", "-f", "-qq", "-o", str(out), "-e", "trace=none", "-e", "signal=SIGSYS",
             str(STRATA), "run", *opts, "--", *argv])
    assert (r.status, r.stdout) == (native.status, native.stdout), r.show()
    return out.read_text()


@pytest.mark.skipif(not have("strace"), reason="strace is not installed")
def test_fork_and_exec_take_the_fast_path(tmp_path):
    """A shell's fork (glibc's clone without CLONE_VM) and its children's execve are served
    through their rewritten sites: strace sees no Syscall User Dispatch trap for them, while
    with rewriting off every one traps (the exec's signal hand-over: exec_signal_race.c)."""
    script = "for i in 1 2 3 4 5 6 7 8; do /bin/echo $i; done | /usr/bin/sort -r | /usr/bin/head -2"
    native = run(["bash", "-c", script])

    def traps(*opts):
        text = sigsys_of(tmp_path, native, opts, ["bash", "-c", script])
        return {nr: len(re.findall(rf"si_syscall=__NR_{nr}\b", text)) for nr in ("clone", "execve")}

    on = traps()
    assert on["clone"] == 0 and on["execve"] == 0, on
    off = traps("--rewrite=off")
    assert off["clone"] >= 10 and off["execve"] >= 10, off


@pytest.mark.skipif(not have("strace"), reason="strace is not installed")
def test_threads_start_on_the_fast_path(tmp_path):
    """pthread_create's clone3 is served through its rewritten site (the child starts from
    a frame strata builds: every register, the mask, the xsave state, checked by
    tests/programs/fast_clone_state.c): strace sees no clone3 trap, while with rewriting
    off every thread's creation traps."""
    code = ("import threading\n"
            "r = []\n"
            "ts = [threading.Thread(target=r.append, args=(i,)) for i in range(6)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "print(sorted(r))\n")
    native = run(["python3", "-c", code])

    def traps(*opts):
        text = sigsys_of(tmp_path, native, opts, ["python3", "-c", code])
        return len(re.findall(r"si_syscall=__NR_clone3\b", text))

    assert traps() == 0
    assert traps("--rewrite=off") >= 6


@pytest.mark.skipif(not have("strace"), reason="strace is not installed")
def test_a_branch_into_the_rest_of_a_run_runs_the_original(out_dir, tmp_path):
    """tests/programs/fast_p3_tail.c: a run whose shortest form would put a branch target
    of its own function inside the site's jump is taken from an earlier instruction, and the
    rest of it stays as it was: the calls through the site (getpid) no longer trap, the
    calls that branch into the rest (getppid, gettid) reach the intact syscall and trap."""
    from conftest import ROOT
    exe = out_dir / "fast_p3_tail_t"
    subprocess.run(["gcc", "-O1", "-I", str(ROOT / "tests" / "programs"), "-o", str(exe),
                    str(ROOT / "tests" / "programs" / "fast_p3_tail.c")], check=True)
    native = run([str(exe)])
    assert b"getpid 20/20; entered at L: getppid 20/20, gettid 20/20" in native.stdout
    text = sigsys_of(tmp_path, native, (), [str(exe)])
    counts = {nr: len(re.findall(rf"si_syscall=__NR_{nr}\b", text)) for nr in ("getpid", "getppid", "gettid")}
    assert counts == {"getpid": 0, "getppid": 20, "gettid": 20}, counts


def test_site_cache_kept_across_runs(tmp_path):
    """The site cache outlives a run (sites-KEY.cache in the user's private strata-UID
    directory): a second run takes every library's sites from it instead of decoding them;
    a damaged cache file costs a scan, nothing else; a sandboxed run reads it but never
    writes it."""
    from conftest import STRATA
    env = dict(os.environ, TMPDIR=str(tmp_path))
    argv = ["python3", "-c", "import json; print(json.dumps([1, 2]))"]
    native = run(argv)

    def go(*opts):
        r = run([str(STRATA), "run", "--fast-stats", *opts, "--", *argv], env=env)
        assert (r.status, r.stdout) == (native.status, native.stdout), r.show()
        # (A mapping whose text image a run kept is not counted as taken
        # from the cache, though its sites are in it: a sandboxed run, which
        # uses no kept image, takes them from there.
        # test_text_images_kept_across_runs.)
        return dict(stats(r), imaged=image_stats(r)[0])

    first = go()
    assert first["scanned"] > 0 and first["cached"] == 0, first
    caches = list((tmp_path / f"strata-{os.geteuid()}").glob("sites-*.cache"))
    assert len(caches) == 1 and caches[0].stat().st_mode & 0o777 == 0o600, caches
    second = go()
    assert second["scanned"] == 0 and second["cached"] + second["imaged"] == first["scanned"], second
    assert second["rewritten"] == first["rewritten"], (first, second)
    caches[0].write_bytes(b"\x01" + os.urandom(4000))
    damaged = go()
    assert damaged["scanned"] == first["scanned"] and damaged["cached"] == 0, damaged
    again = go()
    assert again["cached"] + again["imaged"] == first["scanned"], again
    kept = caches[0].read_bytes()
    sandboxed = go("--policy", "builtin:no-network")
    assert sandboxed["scanned"] == 0 and sandboxed["cached"] == first["scanned"], sandboxed
    assert caches[0].read_bytes() == kept
    caches[0].unlink()
    sandboxed = go("--policy", "builtin:no-network")
    assert sandboxed["scanned"] == first["scanned"] and sandboxed["cached"] == 0, sandboxed
    assert not caches[0].exists()


NO_TABLES_SRC = r"""
void _start(void) {
    __asm__ volatile("mov $1, %%eax; mov $1, %%edi; lea msg(%%rip), %%rsi; mov $3, %%edx; syscall\n"
                     "mov $EXIT, %%eax; xor %%edi, %%edi; syscall\n"
                     "msg: .ascii \"hi\\n\"" ::: "rax", "rdi", "rsi", "rdx", "rcx", "r11", "memory");
}
"""


@pytest.mark.parametrize("exit_nr", [231, 60], ids=["exit_group", "exit"])
def test_code_without_unwind_tables_is_scanned_once(tmp_path, exit_nr):
    """A static program without unwind tables has nothing a scan can find (its sites are
    rewritten at their first traps): the site cache says so, and a later process (here the
    next run, through the kept cache) neither scans it again nor maps the scan's buffer.
    The counts are the process's whether it ends with exit_group or with exit (from its
    only thread)."""
    from conftest import STRATA
    src, exe = tmp_path / "hi.c", tmp_path / "hi"
    src.write_text(NO_TABLES_SRC.replace("EXIT", str(exit_nr)))
    subprocess.run(["gcc", "-O2", "-static", "-nostdlib", "-o", str(exe), str(src)], check=True)
    headers = subprocess.run(["readelf", "-lW", str(exe)], capture_output=True, text=True).stdout
    assert "GNU_EH_FRAME" not in headers, headers
    env = dict(os.environ, TMPDIR=str(tmp_path))

    def go():
        r = run([str(STRATA), "run", "--fast-stats", "--", str(exe)], env=env)
        assert (r.status, r.stdout) == (0, b"hi\n"), r.show()
        return stats(r)

    first = go()
    assert (first["scanned"], first["cached"]) == (1, 0), first
    second = go()
    assert (second["scanned"], second["cached"]) == (0, 1), second


IMAGES = re.compile(r"text images: (\d+) mappings, (\d+) written")


def image_stats(r: Result) -> tuple:
    m = IMAGES.search(r.stderr.decode(errors="replace"))
    assert m, f"no text images in the --fast-stats line:\n{r.show()}"
    return int(m.group(1)), int(m.group(2))


def test_text_images_shared_by_a_session(out_dir, tmp_path):
    """Text images (runtime/src/textimage.rs): the process the launcher starts makes none;
    the first program it starts writes the images of ld.so and libc (sites on many pages);
    later programs map them instead of rewriting their own copies, and behave the same,
    signals landing in their trampolines included (fast_signal_in_trampoline.c, whose
    handlers check the interrupted PC against libc's mappings). /proc/self/maps names an
    image under the library's own file name; the images go with the session. Under a
    sandbox policy too: its Landlock ruleset lets the session write its own images only."""
    from conftest import ROOT, STRATA
    env = dict(os.environ, TMPDIR=str(tmp_path))
    exe = out_dir / "fast_signal_in_trampoline_img"
    subprocess.run(["gcc", "-O1", "-I", str(ROOT / "tests" / "programs"), "-o", str(exe),
                    str(ROOT / "tests" / "programs" / "fast_signal_in_trampoline.c")], check=True)
    script = f"/bin/true; /usr/bin/head -c 32 /etc/passwd; {exe}; /usr/bin/wc -c /etc/passwd"
    native = run(["/bin/sh", "-c", script])
    assert native.status == 0, native.show()
    sessions = tmp_path / f"strata-{os.geteuid()}"

    def go(*opts, argv=("/bin/sh", "-c", script)):
        r = run([str(STRATA), "run", "--fast-stats", *opts, "--", *argv], env=env)
        assert not list(sessions.glob("*.text")), "the session's images outlived it"
        return r, image_stats(r)

    # (Under a policy: without one, the images are kept across runs, and the
    # first process makes them too; test_text_images_kept_across_runs.)
    r, (mapped, written) = go("--policy", "builtin:read-only-fs", argv=("/bin/true",))
    assert r.status == 0 and (mapped, written) == (0, 0), r.show()
    for opts in ((), ("--policy", "builtin:read-only-fs")):
        r, (mapped, written) = go(*opts)
        assert (r.status, r.stdout) == (native.status, native.stdout), r.show()
        # ld.so and libc written by /bin/true; mapped by head, the test program and wc (6),
        # but where a process finds the place below a library taken (its pool goes there):
        # that process rewrites its own copy.
        assert written == 2 and mapped >= 4, (opts, mapped, written, r.show())
    # (three readers: one that found the place below libc taken shows libc itself)
    r, _ = go(argv=("/bin/sh", "-c", "/bin/true" + "; /bin/cat /proc/self/maps" * 3))
    text = [line.split()[-1] for line in r.stdout.decode().splitlines() if " r-xp " in line]
    assert any(re.fullmatch(rf"{sessions}/images-[0-9a-f]+/[0-9a-f.]+/libc\.so\.6", p) for p in text), text
    r, _ = go("--policy", "builtin:read-only-fs", argv=("/bin/sh", "-c", "/bin/true" + "; /bin/cat /proc/self/maps" * 3))
    text = [line.split()[-1] for line in r.stdout.decode().splitlines() if " r-xp " in line]
    assert any(re.fullmatch(rf"{sessions}/strata-count\.[^/]+\.text/[0-9a-f.]+/libc\.so\.6", p) for p in text), text
    off, _ = go("--rewrite=off")
    assert off.stdout == native.stdout and image_stats(off) == (0, 0), off.show()


def test_text_images_used_at_every_start(tmp_path):
    """Every process maps ld.so's and libc's text images (none falls back to rewriting its own
    copy): the pool each needs right below the library must find that place free at every
    start, whatever the address-space layout randomization gave (500 starts; a loader that let
    the kernel place ld.so with no room kept below lost its image about once in 130)."""
    from conftest import STRATA
    env = dict(os.environ, TMPDIR=str(tmp_path))
    n = 500
    r = run([str(STRATA), "run", "--fast-stats", "--", "sh", "-c",
             f"i=0; while [ $i -lt {n} ]; do /bin/true; i=$((i+1)); done"], env=env)
    assert r.status == 0, r.show()
    mapped, written = image_stats(r)
    assert mapped + written == 2 * (n + 1), (mapped, written)


def test_text_images_kept_across_runs(tmp_path):
    """Without a sandbox policy, a run's text images outlive it (images-KEY/ beside the session
    files, cli/src/images.rs): the first runs' first processes write them, later runs map them
    from their first process on. A run of another stack keeps its own beside them (their
    trampolines differ); a sandboxed run neither maps nor adds to them; a damaged image costs
    a rewrite, never a wrong run."""
    from conftest import STRATA
    env = dict(os.environ, TMPDIR=str(tmp_path))
    argv = ["/bin/echo", "kept"]
    sessions = tmp_path / f"strata-{os.geteuid()}"

    def go(*opts):
        r = run([str(STRATA), "run", "--fast-stats", *opts, "--", *argv], env=env)
        assert (r.status, r.stdout) == (0, b"kept\n"), r.show()
        assert not list(sessions.glob("*.text")), "the session's link outlived it"
        return image_stats(r)

    def images():
        return sorted(p.name for p in sessions.glob("images-*/*") if p.is_symlink())

    # ld.so and libc, written by the first run's only process, mapped by the next.
    assert go() == (0, 2)
    assert go() == (2, 0)
    kept = images()
    assert len(kept) == 2 and len(list(sessions.glob("images-*"))) == 1, kept
    # Another stack: images of its own, then maps them.
    assert go("--ext", "null") == (0, 2)
    assert go("--ext", "null") == (2, 0)
    assert len(images()) == 4
    # A sandboxed run: none of them, none added.
    assert go("--policy", "builtin:no-network") == (0, 0)
    assert len(images()) == 4
    # A damaged image is not used (the process rewrites its own copy); the run is as good.
    # (Its pool, with the header, starts at the first page boundary past the library's
    # size, in the same file: textimage.rs.) Random bytes over the pool's constants and
    # header, then the file cut short inside the header; the images as they were in between.
    files = {}
    for text in (t for t in sessions.glob("images-*/*/text") if not t.parent.is_symlink()):
        lib = next(p for p in (Path("/lib/x86_64-linux-gnu"), Path("/lib64")) if (p / text.resolve().name).exists())
        at = ((lib / text.resolve().name).stat().st_size + 4095) // 4096 * 4096
        assert text.stat().st_size > at, (text, at)
        files[text.resolve()] = (at, text.read_bytes())
    assert len(files) == 4, files.keys()

    def damaged(how):
        for f, (at, _) in files.items():
            how(f, at)
        r = go()
        for f, (at, whole) in files.items():
            f.write_bytes(whole)
        return r

    def scribble(f, at):
        with open(f, "r+b") as fh:
            fh.seek(at)
            fh.write(os.urandom(200))

    assert damaged(scribble) == (0, 0)
    assert go() == (2, 0)
    assert damaged(lambda f, at: os.truncate(f, at + 100)) == (0, 0)
    assert go() == (2, 0)


def test_libc_text_made_writable_shows_its_code(out_dir, tmp_path):
    """A process that maps libc's text image keeps the image's sites in the image's own table
    (rewrite.rs, overlays) until one must change: when the program makes libc's getpid page
    writable, it reads getpid's original code there, as in a process that rewrote its own
    copy, and getpid works once the page is executable again (fast_libc_text_write.c: the
    program, its /bin/true child, then itself again, which maps the images)."""
    from conftest import ROOT
    exe = out_dir / "fast_libc_text_write_img"
    subprocess.run(["gcc", "-O1", "-I", str(ROOT / "tests" / "programs"), "-o", str(exe),
                    str(ROOT / "tests" / "programs" / "fast_libc_text_write.c")], check=True)
    native = run([str(exe)])
    assert native.status == 0 and native.stdout.count(b"as written: yes") == 2, native.show()
    env = dict(os.environ, TMPDIR=str(tmp_path))
    from conftest import STRATA
    r = run([str(STRATA), "run", "--fast-stats", "--", str(exe)], env=env)
    assert (r.status, r.stdout) == (native.status, native.stdout), r.show()
    mapped, written = image_stats(r)
    assert written == 2 and mapped >= 1, r.show()
