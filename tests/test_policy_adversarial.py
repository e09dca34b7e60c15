"""Adversarial tests of `strata run --policy`: programs that attack strata itself.

strata enforces a policy in the program's own process, where the program can
reach it: it can jump to a `syscall` instruction in strata-rt's text (Syscall
User Dispatch lets those through untouched), overwrite strata's memory, turn
dispatch off, exec something strata does not load. Each program in
tests/policy/adversarial/ makes one such attempt, prints a line per try
("-> blocked" or "-> ESCAPED") and exits 0 (blocked), 1 (escaped) or 2 (could
not set up). Every attack is run

  natively, where it must escape (exit 1): proof that the program can tell an
      escape from a failure, so the run under strata means something (skipped
      only where this host itself forbids the attack, e.g. for lack of a
      privilege);
  under `strata run --policy builtin:no-network --policy builtin:read-only-fs`
      (or a policy file, where the attack needs a writable directory), where
      every try must fail: the kernel backstop (seccomp, Landlock) has to hold
      wherever strata's own layer is bypassed.

A few run as `nobody` too. The file-system attacks are also judged by the
file system itself after the run. Further tests hand the program IPv4 sockets
it did not create, attack builtin:loopback-only's address rules, signal a
process outside the run, reach an abstract UNIX socket made outside it, and
open another strata session's state file.
"""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import OUT, ROOT, STRATA, Result, have, run

SRC = ROOT / "tests" / "policy" / "adversarial"
BIN = OUT / "policy"
POLICIES = ["--policy", "builtin:no-network", "--policy", "builtin:read-only-fs"]
TIMEOUT = 60


@dataclass
class Attack:
    name: str
    dir: str = ""             # what DIR argument it gets: "write", "meta", "race", "mnt" (see make_dir)
    gadget: bool = True       # it uses strata's syscall;ret: under strata that must come from strata-rt
    host: bool = False        # natively it needs something this host may withhold (a privilege, ptrace)
    nobody: bool = False      # also run as the user nobody

    def __str__(self):
        return self.name


ATTACKS = [
    Attack("raw_socket", gadget=False),           # 1 generated code, raw syscall
    Attack("gadget_socket"),                      # 2 strata's own syscall;ret
    Attack("fs_write", dir="write", nobody=True),  # 2, 10 create/write/rename/unlink, libc, raw, gadget
    Attack("fs_metadata", dir="meta", host=True),  # 10 chmod, chown, utimes, xattr
    Attack("clobber_data", nobody=True),          # 3 overwrite strata's data
    Attack("selector_flip", nobody=True),         # 3 the dispatch selector byte: interception off
    Attack("sud_off", nobody=True),               # 4 Syscall User Dispatch off
    Attack("io_uring", host=True),                # 5
    Attack("ptrace", host=True),                  # 6
    Attack("exec_static", nobody=True),           # 7 raw execve / execveat(memfd) of a static binary
    Attack("reexec_rt", nobody=True),             # 11 exec strata-rt with no layers
    Attack("seccomp_allow"),                      # 8 allow-all filter, prctl tricks
    Attack("seccomp_notif"),                      # 8 USER_NOTIF + CONTINUE
    Attack("procmem"),                            # 9 /proc/self/mem code patches
    Attack("toctou", dir="race", gadget=False),   # 12 race the in-process path check
    Attack("namespaces", dir="mnt", host=True),   # 14 unshare, clone flags, clone3, mount
    Attack("hardening_misc", host=True),          # 15 bpf, perf_event_open, kexec, modules
]


# ------------------------------------------------------------------ build


def build(name: str, static: bool = False) -> Path:
    """gcc -O1 tests/policy/adversarial/NAME.c -> tests/out/policy/NAME, unless up to date."""
    src = SRC / f"{name}.c"
    exe = BIN / name
    deps = [src, SRC / "attack.h"]
    if exe.exists() and exe.stat().st_mtime >= max(d.stat().st_mtime for d in deps):
        return exe
    tmp = BIN / f".{name}.{os.getpid()}.tmp"
    cmd = ["gcc", "-O1", "-pthread", *(["-static"] if static else []), "-o", str(tmp), str(src)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if p.returncode != 0:
        pytest.fail(f"$ {' '.join(cmd)}\n{p.stdout.decode(errors='replace')}", pytrace=False)
    os.chmod(tmp, 0o755)
    os.replace(tmp, exe)
    return exe


@pytest.fixture(scope="module")
def built(out_dir) -> dict:
    if not have("gcc"):
        pytest.skip("gcc is not installed")
    BIN.mkdir(exist_ok=True)
    os.chmod(BIN, 0o755)
    exes = {a.name: build(a.name) for a in ATTACKS}
    for extra in ("inherited_socket", "loopback_only", "session_files", "signal_outside", "abstract_unix"):
        exes[extra] = build(extra)
    build("static_probe", static=True)  # found next to exec_static and reexec_rt
    return exes


@pytest.fixture(scope="module")
def policy_supported():
    r = run([str(STRATA), "run", *POLICIES, "--", "/bin/true"])
    if r.status != 0 and b"--policy" in r.stderr:
        pytest.skip("this strata has no --policy")
    assert r.status == 0, f"strata run --policy ... -- /bin/true fails:\n{r.show()}"


@pytest.fixture
def scratch():
    """A world-readable directory (tmp_path is not, and some runs are as nobody)."""
    d = Path(tempfile.mkdtemp(prefix="strata-adv-"))
    os.chmod(d, 0o755)
    yield d
    subprocess.run(["umount", "-l", str(d / "mnt")], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------ the directories attacks get


def config_version() -> str:
    """The launch configuration's version (strata_proto::VERSION)."""
    m = re.search(r"pub const VERSION: u32 = (\d+);", (ROOT / "crates/proto/src/lib.rs").read_text())
    assert m, "no VERSION in crates/proto/src/lib.rs"
    return m.group(1)


def make_dir(attack: Attack, scratch: Path):
    """The attack's arguments, and a check of the file system after a run that must have changed nothing."""
    if attack.name == "reexec_rt":
        # Natively there is no strata-rt in the process to find, nor a
        # configuration to read the version from: both are named here.
        return [str(STRATA.parent / "strata-rt"), config_version()], lambda: None
    if not attack.dir:
        return [], lambda: None
    d = scratch / "target"
    d.mkdir()
    os.chmod(d, 0o777)  # natively writable by whoever runs the attack (root or nobody)
    if attack.dir == "write":
        (d / "existing").write_text("original\n")
        for name in ("victim", "victim2", "victim3"):
            (d / name).write_text("")
        for f in d.iterdir():
            os.chmod(f, 0o666)
        before = sorted(os.listdir(d))

        def check():
            assert sorted(os.listdir(d)) == before, f"the directory changed: {sorted(os.listdir(d))}"
            assert (d / "existing").read_text() == "original\n"
        return [str(d)], check
    if attack.dir == "meta":
        meta = d / "meta"
        meta.write_text("")
        os.chmod(meta, 0o644)
        st = os.stat(meta)

        def check():
            now = os.stat(meta)
            assert (now.st_mode, now.st_gid, now.st_mtime_ns) == (st.st_mode, st.st_gid, st.st_mtime_ns), \
                f"meta changed: mode {oct(now.st_mode)} gid {now.st_gid} mtime {now.st_mtime_ns}"
            try:
                assert "user.strata" not in os.listxattr(meta), "meta got an extended attribute"
            except OSError:
                pass
        return [str(d)], check
    if attack.dir == "race":
        meta = d / "racemeta"
        meta.write_text("")
        os.chmod(meta, 0o644)

        def check():
            assert not (d / "raced").exists(), "the raced file exists"
            assert os.stat(meta).st_mode & 0o7777 == 0o644, "racemeta's mode changed"
        return [str(d)], check
    if attack.dir == "mnt":
        (d / "mnt").mkdir()

        def check():
            assert not os.path.ismount(d / "mnt") and not os.listdir(d / "mnt")
        return [str(d / "mnt")], check
    raise AssertionError(attack.dir)


# ------------------------------------------------------------------ running


def go(argv, user=None, pass_fds=()) -> Result:
    """Runs argv with a time limit (GNU timeout kills what it leaves behind)."""
    argv = ["timeout", "-k", "5", str(TIMEOUT), *map(str, argv)]
    if user is not None:
        argv = ["runuser", "-u", user, "--"] + argv
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                       timeout=TIMEOUT + 30, pass_fds=pass_fds)
    return Result(p.returncode, p.stdout, p.stderr)


def escaped_natively(attack: Attack, r: Result):
    out = r.stdout.decode(errors="replace")
    if r.status == 0 and attack.host:
        pytest.skip(f"this host blocks {attack} natively: the native run proves nothing here\n{out}")
    assert r.status == 1 and "verdict: ESCAPED" in out, f"{attack} should escape natively:\n{r.show()}"


def blocked(attack: Attack, r: Result):
    out = r.stdout.decode(errors="replace")
    assert r.status != 2, f"{attack}: setup failed under strata:\n{r.show()}"
    assert "ESCAPED" not in out and r.status == 0 and "verdict: blocked" in out, \
        f"{attack} ESCAPED the policy:\n{r.show()}"
    if attack.gadget:
        assert "in strata-rt (" in out, f"{attack}: the gadget did not come from strata-rt:\n{r.show()}"


@pytest.mark.parametrize("attack", ATTACKS, ids=str)
def test_escapes_natively(built, scratch, attack):
    args, _ = make_dir(attack, scratch)
    escaped_natively(attack, go([built[attack.name], *args]))


@pytest.mark.parametrize("attack", ATTACKS, ids=str)
def test_blocked_under_policy(built, policy_supported, scratch, attack):
    args, check = make_dir(attack, scratch)
    r = go([STRATA, "run", *POLICIES, "--", built[attack.name], *args])
    blocked(attack, r)
    check()
    if attack.name == "raw_socket":  # trapped calls are refused by strata's own layer, which says so
        assert b"strata: policy" in r.stderr, r.show()
    if attack.name == "gadget_socket":  # the gadget really bypasses strata: only the kernel stopped it
        assert b"the gadget reaches the kernel unseen" in r.stdout, r.show()


def test_raw_exec_of_anything_but_strata_rt_is_refused(built, policy_supported):
    """The hardening: the kernel's execve runs strata-rt only, so nothing can run
    outside strata. exec_static counts a raw exec that runs the probe as blocked
    when the probe's socket then fails (the policy held); this checks the exec
    itself was refused, for every way it is tried (by path, memfd, /proc/self/fd)."""
    r = go([STRATA, "run", *POLICIES, "--", built["exec_static"]])
    blocked(Attack("exec_static"), r)
    ran = [line for line in r.stdout.decode(errors="replace").splitlines()
           if line.startswith("gadget") and "the exec succeeded" in line]
    assert not ran, "a raw kernel exec of something other than strata-rt ran:\n" + "\n".join(ran) + "\n" + r.show()


def test_write_outside_the_allowed_directory(built, policy_supported, scratch):
    """A policy file that lets the program write one directory: the attacks on the
    directory next to it fail, and writing the allowed one works (the backstop is
    not simply 'deny everything')."""
    attack = Attack("fs_write", dir="write")
    args, check = make_dir(attack, scratch)
    ok = scratch / "ok"
    ok.mkdir()
    policy = scratch / "policy.toml"
    policy.write_text(f'[paths]\nwrite = ["{ok}"]\ncreate = ["{ok}"]\n\n[network]\ndefault = "deny"\n')
    r = go([STRATA, "run", "--policy", policy, "--", built["fs_write"], *args, ok])
    blocked(attack, r)
    check()
    assert b"libc ok, gadget ok" in r.stdout, f"the allowed directory is not writable:\n{r.show()}"
    assert sorted(os.listdir(ok)) == ["control-gadget", "control-libc"]
    # truncate(2) is refused by the kernel and served by strata where the rules allow it.
    assert re.search(rb"control: truncate in the allowed \S+: ok", r.stdout), r.show()
    assert (ok / "control-libc").read_text() == "con"


# ------------------------------------------------------------------ inherited sockets


@pytest.fixture
def inet():
    """A TCP and a UDP listener on 127.0.0.1 (same port), and three unconnected
    sockets to hand to the program: TCP (to bind), TCP (to connect), UDP."""
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    udp.settimeout(1)
    given = [socket.socket(), socket.socket(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)]
    for s in given:
        s.set_inheritable(True)
    yield port, given, udp
    for s in [tcp, udp, *given]:
        s.close()


def datagrams(udp) -> list:
    got = []
    try:
        while True:
            got.append(udp.recv(100).decode(errors="replace"))
    except socket.timeout:
        return got


def inherited(built, prefix, inet, with_udp=True) -> (Result, list):
    """Runs inherited_socket with the three sockets (without the UDP one, whose argument is
    then -1: its sends fail with EBADF)."""
    port, given, udp = inet
    fds = [s.fileno() for s in (given if with_udp else given[:2])]
    r = go([*prefix, built["inherited_socket"], port, *fds, *([] if with_udp else [-1])], pass_fds=fds)
    return r, datagrams(udp)


def test_inherited_sockets_natively(built, inet):
    r, arrived = inherited(built, [], inet)
    escaped_natively(Attack("inherited_socket"), r)
    assert arrived == ["udp-libc", "udp-gadget"], r.show()


def test_inherited_tcp_sockets_under_policy(built, policy_supported, inet):
    """bind and connect on IPv4 sockets the program never created: Landlock's TCP rules."""
    r, _ = inherited(built, [STRATA, "run", *POLICIES, "--"], inet, with_udp=False)
    blocked(Attack("inherited_socket"), r)


def test_inherited_udp_socket_stops_the_start(built, policy_supported, inet):
    """A UDP socket the program would inherit under no-network: seccomp cannot read where its
    sends go, so strata refuses to start (exit status 2, naming the descriptor and what to do)
    and nothing runs: no datagram leaves."""
    port, given, udp = inet
    fd = given[2].fileno()
    r, arrived = inherited(built, [STRATA, "run", *POLICIES, "--"], inet)
    assert r.status == 2 and r.stdout == b"", r.show()
    assert f"descriptor {fd} is an inherited IPv4 datagram socket".encode() in r.stderr, r.show()
    assert b'network.inherited = "allow"' in r.stderr, r.show()
    assert arrived == [], f"datagrams {arrived} left although strata refused to start:\n{r.show()}"


def test_inherited_udp_socket_let_in_is_checked_in_process(built, policy_supported, inet, tmp_path):
    """network.inherited = "allow" lets it in, with the rules held in-process only (docs/policy.md,
    Limits): a send through libc is refused by strata's layer, with a line naming the rule."""
    policy = tmp_path / "inherited.toml"
    policy.write_text('[network]\ndefault = "deny"\ninherited = "allow"\n\n'
                      '[[network.rule]]\naction = "allow"\nfamily = "unix"\n')
    r, arrived = inherited(built, [STRATA, "run", "--policy", policy, "--"], inet)
    assert "udp-libc" not in arrived, f"the libc send left under the policy:\n{r.show()}"
    assert re.search(rb"udp: libc sendto\(inherited UDP fd \d+, [^)]*\) = -\d+ -EACCES", r.stdout), r.show()
    assert re.search(rb"strata: policy .*deny sendto\(.* by network\.default", r.stderr), r.show()


def local_address():
    """A non-loopback IPv4 address of this machine, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.123", 9))  # no packet is sent: this only picks the route's source address
        addr = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if addr.startswith("127.") or addr == "0.0.0.0" else addr


@pytest.fixture
def anywhere():
    """TCP and UDP listeners on 0.0.0.0:PORT, and a non-loopback address of this machine."""
    addr = local_address()
    if addr is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    tcp = socket.socket()
    tcp.bind(("0.0.0.0", 0))
    tcp.listen()
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", port))
    udp.settimeout(1)
    yield port, addr, udp
    tcp.close()
    udp.close()


def test_loopback_only_natively(built, anywhere):
    port, addr, udp = anywhere
    r = go([built["loopback_only"], port, addr])
    escaped_natively(Attack("loopback_only"), r)
    assert datagrams(udp) == ["udp-libc", "udp-gadget"]


@pytest.mark.xfail(strict=True, reason="documented (profiles/loopback-only.toml): addresses are checked in-process "
                                       "only; seccomp cannot read a sockaddr and Landlock filters TCP by port")
def test_loopback_only_under_policy(built, policy_supported, anywhere):
    """builtin:loopback-only: a connect (or a datagram) to another address of this
    machine, through strata's own syscall instruction."""
    port, addr, udp = anywhere
    r = go([STRATA, "run", "--policy", "builtin:loopback-only", "--", built["loopback_only"], port, addr])
    assert re.search(rb"control: libc connect\(127.0.0.1:\d+\) = 0\n", r.stdout), r.show()
    arrived = datagrams(udp)
    blocked(Attack("loopback_only"), r)
    assert not arrived, f"datagrams {arrived} reached {addr} under builtin:loopback-only:\n{r.show()}"


# ------------------------------------------------------------------ processes and sockets outside the run


def scopes_supported():
    """Whether this kernel has Landlock's scopes (ABI 6; strata then holds process.signals and
    network.abstract_unix by default), asked of the kernel itself, not of strata."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    sys_landlock_create_ruleset, version_flag = 444, 1
    return libc.syscall(sys_landlock_create_ruleset, None, ctypes.c_size_t(0), ctypes.c_uint(version_flag)) >= 6


@pytest.fixture
def victim():
    """A process of the same user outside any sandbox, in a session of its own."""
    p = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield p
    p.kill()
    p.wait()


def test_signal_outside_natively(built, victim):
    escaped_natively(Attack("signal_outside"), go([built["signal_outside"], victim.pid]))
    assert victim.wait(timeout=10) == -signal.SIGTERM


def test_signal_outside_under_policy(built, policy_supported, victim):
    """kill, tgkill and pidfd_send_signal to a process outside the run, through libc, raw and
    the gadget: refused by the kernel (Landlock's signal scope); signalling its own child works."""
    if not scopes_supported():
        pytest.skip("this kernel has no Landlock scopes (ABI 6, Linux 6.12)")
    r = go([STRATA, "run", *POLICIES, "--", built["signal_outside"], victim.pid])
    blocked(Attack("signal_outside"), r)
    assert b"it was killed, as it should be" in r.stdout, r.show()
    with pytest.raises(subprocess.TimeoutExpired):  # (a signal that got through would end it by then)
        victim.wait(timeout=0.5)


def test_signals_any_lifts_the_scope(built, policy_supported, victim, tmp_path):
    """process.signals = "any": the policy's choice to let signals out (the test can fail)."""
    policy = tmp_path / "signals.toml"
    policy.write_text('[process]\nsignals = "any"\n')
    r = go([STRATA, "run", "--policy", policy, "--", built["signal_outside"], victim.pid])
    escaped_natively(Attack("signal_outside"), r)
    assert victim.wait(timeout=10) == -signal.SIGTERM


@pytest.fixture
def abstract_listeners():
    """A stream and a datagram AF_UNIX socket on abstract names, outside any sandbox."""
    name = f"strata-test-{os.getpid()}-{time.monotonic_ns()}"
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind("\0" + name)
    stream.listen()
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind("\0" + name + "-dgram")
    dgram.settimeout(0.5)
    yield name, dgram
    stream.close()
    dgram.close()


def test_abstract_unix_natively(built, abstract_listeners):
    name, dgram = abstract_listeners
    escaped_natively(Attack("abstract_unix"), go([built["abstract_unix"], name]))
    assert dgram.recv(100) == b"escaped"


def test_abstract_unix_under_policy(built, policy_supported, abstract_listeners):
    """Under no-network, an abstract socket made outside the run is out of reach (Landlock's
    scope), through libc and the gadget; one the program makes itself still works."""
    if not scopes_supported():
        pytest.skip("this kernel has no Landlock scopes (ABI 6, Linux 6.12)")
    name, dgram = abstract_listeners
    r = go([STRATA, "run", *POLICIES, "--", built["abstract_unix"], name])
    blocked(Attack("abstract_unix"), r)
    assert b"(works, as it should)" in r.stdout, r.show()
    with pytest.raises(socket.timeout):
        dgram.recv(100)


# ------------------------------------------------------------------ other sessions


@pytest.fixture
def victim_session():
    """Another strata session (no policy) of the same user, and its session file."""
    p = subprocess.Popen([str(STRATA), "run", "--ext", "count", "-o", "/dev/null", "--", "sleep", "60"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    pattern = os.path.join(tempfile.gettempdir(), f"strata-{os.geteuid()}", f"strata-count.{p.pid}.*")
    files = []
    for _ in range(100):
        # (not the session's directory of text images, PATH.text)
        files = [f for f in glob.glob(pattern) if not f.endswith(".text")]
        if files:
            break
        time.sleep(0.05)
    try:
        if not files:
            pytest.skip(f"no session file {pattern} appeared")
        yield files[0]
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for f in files:  # (what a killed launcher leaves behind)
            Path(f).unlink(missing_ok=True)
            shutil.rmtree(f + ".text", ignore_errors=True)


def test_other_sessions_natively(built, victim_session):
    escaped_natively(Attack("session_files"), go([built["session_files"], victim_session]))


def test_other_sessions_under_read_only_fs(built, policy_supported, victim_session):
    r = go([STRATA, "run", *POLICIES, "--", built["session_files"], victim_session])
    blocked(Attack("session_files"), r)


def test_other_sessions_under_a_policy_that_writes_tmp(built, policy_supported, victim_session, scratch):
    """A policy that lets the program write the temporary directory (as a build's
    might) must not let it write another strata session's file: that file's site
    cache tells the other session's processes, outside this sandbox, which
    instructions to rewrite and how. strata refuses such a policy before the
    program starts (exit 2, naming the rule and the directory); a policy that
    allows a directory below /tmp runs, and the attack fails there."""
    tmp = tempfile.gettempdir()
    policy = scratch / "tmp.toml"
    policy.write_text(f'[paths]\nwrite = ["{tmp}"]\ncreate = ["{tmp}"]\n\n[network]\ndefault = "deny"\n')
    r = go([STRATA, "run", "--policy", policy, "--", built["session_files"], victim_session])
    assert r.status == 2 and b"paths.write[0]" in r.stderr and f"strata-{os.geteuid()}".encode() in r.stderr, r.show()
    sub = Path(tempfile.mkdtemp(prefix="strata-adv-build."))
    try:
        policy.write_text(f'[paths]\nwrite = ["{sub}"]\ncreate = ["{sub}"]\n\n[network]\ndefault = "deny"\n')
        r = go([STRATA, "run", "--policy", policy, "--", built["session_files"], victim_session])
        blocked(Attack("session_files"), r)
    finally:
        shutil.rmtree(sub, ignore_errors=True)


# ------------------------------------------------------------------ as nobody


def nobody_can_run(path: Path) -> bool:
    p = subprocess.run(["runuser", "-u", "nobody", "--", "test", "-x", str(path), "-a", "-r", str(path)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


@pytest.fixture(scope="module")
def nobody_strata():
    """strata and strata-rt as nobody can run them (a world-readable copy if need be)."""
    if os.geteuid() != 0 or not have("runuser"):
        pytest.skip("running programs as nobody needs root and runuser")
    binaries = [STRATA, STRATA.parent / "strata-rt"]
    if all(nobody_can_run(b) for b in binaries):
        yield STRATA
        return
    tmp = Path(tempfile.mkdtemp(prefix="strata-bin-"))
    os.chmod(tmp, 0o755)
    for b in binaries:
        shutil.copy2(b, tmp / b.name)
        os.chmod(tmp / b.name, 0o755)
    yield tmp / "strata"
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a.nobody], ids=str)
def test_as_nobody(built, policy_supported, nobody_strata, scratch, attack):
    assert nobody_can_run(built[attack.name]), f"nobody cannot run {built[attack.name]}"
    args, check = make_dir(attack, scratch)
    if attack.name == "reexec_rt":
        args = [str(nobody_strata.parent / "strata-rt"), config_version()]
    r = go([nobody_strata, "run", *POLICIES, "--", built[attack.name], *args], user="nobody")
    blocked(attack, r)
    check()
    native = go([built[attack.name], *args], user="nobody")
    escaped_natively(attack, native)
