"""Shared fixtures for strata's integration tests.

Every test runs a program twice, natively and under `strata run`, and compares
what a user can observe: stdout, stderr and the exit status (a negative status
means "killed by that signal", as subprocess reports it).
"""
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("STRATA_TARGET_DIR", ROOT / "target" / "release"))
STRATA = TARGET / "strata"
OUT = ROOT / "tests" / "out"


@dataclass
class Result:
    status: int
    stdout: bytes
    stderr: bytes

    def show(self) -> str:
        return (f"status={self.status}\n--- stdout ---\n{self.stdout[-3000:].decode(errors='replace')}"
                f"\n--- stderr ---\n{self.stderr[-3000:].decode(errors='replace')}")


def run(argv, *, timeout=120, env=None, cwd=None, input=None, user=None) -> Result:
    """Runs argv (as an unprivileged user when `user` is given) and collects its outcome."""
    if user is not None:
        argv = ["runuser", "-u", user, "--"] + list(argv)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       env=env, cwd=cwd, input=input, stdin=None if input is not None else subprocess.DEVNULL)
    return Result(p.returncode, p.stdout, p.stderr)


class Timeout(Exception):
    """A run_bounded() program outlived its time limit; it and its process group were killed."""

    def __init__(self, argv, timeout, partial: Result):
        shown = " ".join(map(str, argv)).replace("\n", "\\n")
        super().__init__(f"timed out after {timeout}s: {shown[:200]}{'...' if len(shown) > 200 else ''}")
        self.argv, self.timeout, self.partial = argv, timeout, partial


def run_bounded(argv, *, timeout=300, env=None, cwd=None, input=None) -> Result:
    """Like run(), but safe when the program leaves descendants behind or hangs.

    The program gets its own session (so its process group holds everything it starts),
    and its stdout and stderr go to unnamed temporary files instead of pipes, so a
    grandchild that keeps a pipe open cannot stall the collection. When the program
    exits, whatever it left running in its group is killed. When `timeout` passes,
    the whole group is killed and Timeout is raised with what had been printed so far.
    """
    import signal
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin = subprocess.DEVNULL
        infile = None
        if input is not None:
            infile = tempfile.TemporaryFile()
            infile.write(input)
            infile.seek(0)
            stdin = infile
        try:
            p = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, env=env, cwd=cwd,
                                 start_new_session=True)
            timed_out = False
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()
        finally:
            if infile is not None:
                infile.close()
        out.seek(0)
        err.seek(0)
        res = Result(p.returncode, out.read(), err.read())
    if timed_out:
        raise Timeout(argv, timeout, res)
    return res


# Extra `strata run` options for every run (tests/run uses it to run the real
# programs again under extension stacks), e.g. "--trace -o /dev/null".
STACK = shlex.split(os.environ.get("STRATA_TEST_STACK", ""))


def strata(*args) -> list:
    """The argv prefix that runs a program under strata with the given options."""
    return [str(STRATA), "run", *STACK, *args, "--"]


@pytest.fixture(scope="session")
def out_dir() -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    os.chmod(OUT, 0o755)
    return OUT


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


def pytest_sessionstart(session):
    if not STRATA.exists():
        raise pytest.UsageError(f"{STRATA} is missing: build with `cargo build --release` first")
