"""Extensions written outside strata: the C and Rust examples, built here and
loaded by strata's own loader as shared objects; manifests; and what bad
extensions and bad input get (a message and status 2 before the program
starts; a failing or faulting extension stops the program, naming itself
and the call).
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import OUT, ROOT, STRATA, have, run, strata

EXT_OUT = OUT / "ext"
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": "/"}
CFLAGS = ["-O2", "-fPIC", "-shared", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-fvisibility=hidden",
          "-I", str(ROOT / "include")]


def cc(source: Path, name: str, *extra) -> Path:
    EXT_OUT.mkdir(parents=True, exist_ok=True)
    out = EXT_OUT / name
    p = subprocess.run(["cc", *CFLAGS, *extra, "-o", str(out), str(source)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


@pytest.fixture(scope="module")
def c_objects():
    if not have("cc"):
        pytest.skip("cc is not installed")
    return {
        "hide": cc(ROOT / "examples" / "c-ext" / "hide.c", "libhide.so"),
        "faulty": cc(ROOT / "tests" / "ext" / "faulty.c", "libfaulty.so"),
        "hooks": cc(ROOT / "tests" / "ext" / "hooks.c", "libhooks.so"),
    }


@pytest.fixture(scope="module")
def rust_object():
    cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
    manifest = ROOT / "examples" / "rust-ext" / "Cargo.toml"
    target = EXT_OUT / "rust-target"
    p = subprocess.run([cargo, "build", "--release", "--offline", "--manifest-path", str(manifest),
                        "--target-dir", str(target)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    return target / "release" / "libupper.so"


def test_c_example_hides_a_prefix(c_objects, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key").write_text("k\n")
    (tmp_path / "open.txt").write_text("o\n")
    r = run(strata("--ext", f"{c_objects['hide']}:{secret}") + ["sh", "-c", f"cat {tmp_path}/open.txt {secret}/key; "
                                                                           f"test -e {secret} || echo gone"], env=ENV)
    assert r.stdout == b"o\ngone\n", r.show()
    assert b"No such file or directory" in r.stderr
    # Natively the file is there: the extension, not the test, hides it.
    assert run(["cat", str(secret / "key")], env=ENV).stdout == b"k\n"


def test_rust_example_uppercases_writes(rust_object):
    prog = ["python3", "-S", "-c", "import os; os.write(1, b'hello\\n'); os.write(2, b'quiet\\n')"]
    r = run(strata("--ext", str(rust_object)) + prog, env=ENV)
    assert (r.status, r.stdout, r.stderr) == (0, b"HELLO\n", b"quiet\n"), r.show()
    r = run(strata("--ext", f"{rust_object}:fd=2") + prog, env=ENV)
    assert (r.stdout, r.stderr) == (b"hello\n", b"QUIET\n"), r.show()


def test_objects_compose_with_built_ins(c_objects, rust_object, tmp_path):
    out = tmp_path / "t"
    r = run(strata("--trace=write", "-o", str(out), "--ext", str(rust_object)) + ["echo", "mixed"], env=ENV)
    assert r.stdout == b"MIXED\n", r.show()
    # trace sits above upper: it logs what the program wrote.
    assert 'write(1, "mixed\\n", 6)' in out.read_text()
    r = run(strata("--ext", str(rust_object), "--trace=write", "-o", str(out)) + ["echo", "mixed"], env=ENV)
    assert 'write(1, "MIXED\\n", 6)' in out.read_text()


def test_hook_layers_run_around_the_call(c_objects, tmp_path):
    """ABI 1.1's hook form (tests/ext/hooks.c, before/after, no call): hook layers run
    their `before` top-down and their `after` bottom-up around the rest of the stack, with
    the cookie each `before` left; a `before` that serves the call stops it there (no layer
    below, no kernel, not its own `after`); a nesting layer (trace) between hook layers sees
    what the layers below it returned; built-in hook layers (null, count) compose with them."""
    src = tmp_path / "ppid.c"
    src.write_text('#include <stdio.h>\n#include <unistd.h>\n#include <sys/syscall.h>\n'
                   'int main(void) { printf("%ld\\n", (long)syscall(SYS_getppid)); return 0; }\n')
    exe = tmp_path / "ppid"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(src)], check=True)
    hooks = c_objects["hooks"]
    trace = tmp_path / "t"
    r = run(strata("--ext", f"{hooks}:Aa", "--trace=getppid", "-o", str(trace), "--ext", f"{hooks}:Bs",
                   "--ext", f"{hooks}:C") + [str(exe)], env=ENV)
    assert r.status == 0 and r.stdout == b"1077\n", r.show()
    lines = [l for l in r.stderr.decode().splitlines() if l.startswith("hooks ")]
    assert lines == ["hooks A before 110", "hooks B before 110", "hooks A after 77 cookie ok"], lines
    assert "getppid() = 77" in " ".join(trace.read_text().split()), trace.read_text()

    r = run(strata("--ext", f"{hooks}:A", "--ext", "null", "--ext", "count", "--ext", f"{hooks}:B") + [str(exe)],
            env=ENV)
    assert r.status == 0, r.show()
    ppid = int(r.stdout)
    lines = [l for l in r.stderr.decode().splitlines() if l.startswith("hooks ")]
    assert lines == ["hooks A before 110", "hooks B before 110", f"hooks B after {ppid} cookie ok",
                     f"hooks A after {ppid} cookie ok"], lines
    assert any(l.split()[-1:] == ["getppid"] and l.split()[3] == "1" for l in r.stderr.decode().splitlines()), \
        r.stderr.decode()

    # An exec: each hook layer's exec_commit gets the execve (its view of the call).
    r = run(strata("--ext", f"{hooks}:A", "--ext", f"{hooks}:B") + ["/bin/sh", "-c", f"exec {exe}"], env=ENV)
    assert r.status == 0, r.show()
    lines = [l for l in r.stderr.decode().splitlines() if "exec_commit" in l]
    assert lines == ["hooks A exec_commit 59", "hooks B exec_commit 59"], r.stderr.decode()


def test_manifest(c_objects, rust_object, tmp_path):
    m = tmp_path / "stack.toml"
    m.write_text(f"""
# trace on top, then upper, then hide
[[layer]]
ext = "trace"
params = {{ trace = "write", failed = false }}

[[layer]]
ext = "{rust_object}"

[[layer]]
ext = "{c_objects['hide']}"
args = "/etc/hostname"
""")
    out = tmp_path / "t"
    r = run([str(STRATA), "run", "--manifest", str(m), "-o", str(out), "--", "sh", "-c",
             "echo hi; cat /etc/hostname"], env=ENV)
    assert r.stdout == b"HI\n", r.show()
    assert b"/etc/hostname: No such file or directory" in r.stderr
    assert 'write(1, "hi\\n", 3)' in out.read_text()


@pytest.mark.parametrize("mode, message", [
    ("segv", b"strata: extension 'faulty' failed in getppid: faulted: SIGSEGV"),
    ("fail", b"strata: extension 'faulty' failed in getppid: refusing on purpose"),
])
def test_failing_extension_stops_the_program(c_objects, mode, message, tmp_path):
    marker = tmp_path / "after"
    r = run(strata("--ext", f"{c_objects['faulty']}:{mode}") + ["python3", "-S", "-c",
            f"import os; os.getppid(); open({str(marker)!r}, 'w')"], env=ENV)
    assert r.status == 125, r.show()
    assert r.stderr.startswith(message), r.show()
    assert not marker.exists(), "the program went on after the extension failed"


def test_faulty_extension_in_ok_mode_passes_calls_on(c_objects):
    r = run(strata("--ext", f"{c_objects['faulty']}:ok") + ["python3", "-S", "-c", "import os; print(os.getppid() > 0)"],
            env=ENV)
    assert (r.status, r.stdout) == (0, b"True\n"), r.show()


def test_signal_upcall_can_suppress_a_delivery(c_objects):
    prog = ["python3", "-S", "-c", "import os, signal\n"
            "signal.signal(signal.SIGSYS, lambda *a: print('handled'))\n"
            "os.kill(os.getpid(), signal.SIGSYS); print('end')"]
    r = run(strata("--ext", f"{c_objects['faulty']}:ok") + prog, env=ENV)
    assert (r.status, r.stdout) == (0, b"handled\nend\n"), r.show()
    r = run(strata("--ext", f"{c_objects['faulty']}:nsys") + prog, env=ENV)
    assert (r.status, r.stdout) == (0, b"end\n"), r.show()


def bad_objects(tmp_path: Path) -> dict:
    src = tmp_path / "x.c"
    src.write_text('#include "strata.h"\n'
                   "__attribute__((visibility(\"default\"))) uint32_t strata_ext_abi_version = VERSION;\n"
                   "__attribute__((visibility(\"default\"))) int strata_ext_init(void) { return 0; }\n")
    nothing = tmp_path / "n.c"
    nothing.write_text("__attribute__((visibility(\"default\"))) int something(void) { return 1; }\n")
    libc = tmp_path / "l.c"
    libc.write_text('#include <stdio.h>\n#include "strata.h"\n'
                    "__attribute__((visibility(\"default\"))) uint32_t strata_ext_abi_version = STRATA_ABI_VERSION;\n"
                    "__attribute__((visibility(\"default\"))) int strata_ext_init(void) { return puts(\"x\"); }\n")
    text = tmp_path / "text.so"
    text.write_text("not an object\n")
    objs = {
        "wrong-version": cc(src, "v2.so", "-DVERSION=0x20000"),
        "no-entry": cc(nothing, "noentry.so"),
        "text": text,
        "missing": tmp_path / "missing.so",
    }
    p = subprocess.run(["cc", "-O2", "-fPIC", "-shared", "-I", str(ROOT / "include"), "-o", str(tmp_path / "libc.so"),
                        str(libc)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    objs["needs-libc"] = tmp_path / "libc.so"
    return objs


@pytest.mark.parametrize("kind, message", [
    ("wrong-version", "ABI 2.0"),
    ("no-entry", "strata_ext_init"),
    ("needs-libc", "libc"),
    ("text", "ELF"),
    ("missing", "No such file"),
])
def test_bad_objects_stop_before_the_program(c_objects, tmp_path, kind, message):
    obj = bad_objects(tmp_path)[kind]
    marker = tmp_path / "ran"
    r = run([str(STRATA), "run", "--ext", str(obj), "--", "touch", str(marker)], env=ENV)
    assert r.status == 2, r.show()
    assert r.stderr.startswith(b"strata: ") and message.encode() in r.stderr, r.show()
    assert len(r.stderr.splitlines()) == 1, r.show()
    assert not marker.exists()


@pytest.mark.parametrize("text, where", [
    ('[[layer]]\next = "trace"\nparams = { trace = "nosuchcall" }\n', "nosuchcall"),
    ('[[layer]]\next = "trace"\nbogus = 1\n', "line 3, column 1"),
    ('[[layer]\next = "trace"\n', "line 1, column"),
    ('[[layer]]\next = "warp"\n', "line 2, column 7"),
    ('[[layer]]\next = "map"\nparams = { map = ["/x=/no/such"] }\n', "/no/such"),
    ("", "no [[layer]] tables"),
])
def test_bad_manifests_stop_before_the_program(tmp_path, text, where):
    m = tmp_path / "m.toml"
    m.write_text(text)
    marker = tmp_path / "ran"
    r = run([str(STRATA), "run", "--manifest", str(m), "--", "touch", str(marker)], env=ENV)
    assert r.status == 2, r.show()
    assert where.encode() in r.stderr and str(m).encode() in r.stderr, r.show()
    assert not marker.exists()


def test_unknown_and_malformed_extensions(tmp_path):
    for args, message in [
        (["--ext", "warp"], "unknown extension 'warp'"),
        (["--ext", "trace:trace=%bogus"], "bogus"),
        (["--trace=nosuchcall"], "nosuchcall"),
        (["--trace-json"], "go with --trace"),
        (["--ext", "count:x"], "count takes no arguments"),
    ]:
        r = run([str(STRATA), "run", *args, "--", "true"], env=ENV)
        assert r.status == 2 and message.encode() in r.stderr, (args, r.show())
