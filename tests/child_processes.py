"""Child processes that tests need, started ahead of the tests that read their results.

A test module declares each child process as a module-level ``ChildProcess``; declaring
one runs nothing.  A test that reads one names it with the marker
``@pytest.mark.child_process(JOB, ...)`` (or a module's ``pytestmark``) and calls
``JOB.result()`` for the finished ``subprocess.CompletedProcess``.

The plugin in conftest.py starts the marked child processes as their tests are collected:
one runner process executes them one after the other while collection goes on and the
in-process tests run, so the child processes use the second core from the start.  Once
collection is done, the child processes that no selected test names are skipped, or
killed if running.  Nothing of the test process changes: no thread, no fork; each command
is exactly the child process the test would have started itself.  Without the plugin
(the module imported outside pytest, a test not marked, or ``--collect-only``),
``result()`` runs the command there and then.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# The runner reads the path of one job's JSON file per line on stdin (until EOF): a line
# of a few dozen bytes, so the pipe never fills while the runner waits on a child (a whole
# job per line, environment and code included, filled the pipe's 64 KiB and blocked
# collection for seconds).  Before starting job i it looks
# for ``i.skip`` (a deselected test's job); it starts the child in a session of its own
# (so that killing it kills what it started), writes its pid to ``i.pid``, and the exit
# status (or "timeout", "skipped", "127") to ``i.rc`` last, atomically.
_RUNNER = r"""
import json, os, subprocess, sys
def finish(job, rc):
    with open(job["rc"] + ".tmp", "w") as f:
        f.write(rc)
    os.replace(job["rc"] + ".tmp", job["rc"])
for line in sys.stdin:
    with open(line.rstrip("\n")) as f:
        job = json.load(f)
    if os.path.exists(job["skip"]):
        finish(job, "skipped")
        continue
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        try:
            p = subprocess.Popen(job["argv"], stdout=out, stderr=err, env=job["env"],
                                 cwd=job["cwd"], stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        except OSError as e:
            err.write(repr(e).encode())
            rc = "127"
        else:
            with open(job["pid"] + ".tmp", "w") as f:
                f.write(str(p.pid))
            os.replace(job["pid"] + ".tmp", job["pid"])
            try:
                rc = str(p.wait(timeout=job["timeout"]))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
                rc = "timeout"
    finish(job, rc)
"""

_state: dict = {"dir": None, "runner": None, "started": []}


@dataclass
class Command:
    """What a child process runs: ``argv`` with ``env`` (None: this process's) in ``cwd``."""

    argv: list
    env: dict | None = None
    cwd: str | Path | None = None
    timeout: float = 300


@dataclass(eq=False)
class ChildProcess:
    """One child process a test needs.  ``make`` returns its ``Command``; it is called
    only when the process starts (it may write files under ``scratch_dir()``)."""

    make: Callable[[], Command]
    _files: dict | None = field(default=None, repr=False)
    _result: subprocess.CompletedProcess | None = field(default=None, repr=False)
    _command: Command | None = field(default=None, repr=False)

    @classmethod
    def python(cls, code: str, *, env: dict | None = None,
               timeout: float = 120) -> ChildProcess:
        """``python -c code`` with this interpreter."""
        return cls(lambda: Command([sys.executable, "-c", code], env=env, timeout=timeout))

    def command(self) -> Command:
        """The command, made once."""
        if self._command is None:
            c = self.make()
            self._command = Command([str(a) for a in c.argv], c.env,
                                    None if c.cwd is None else str(c.cwd), c.timeout)
        return self._command

    def result(self) -> subprocess.CompletedProcess:
        """The finished process (text stdout/stderr); raises subprocess.TimeoutExpired."""
        if self._result is not None:
            return self._result
        c = self.command()
        if self._files is None:
            self._result = subprocess.run(c.argv, capture_output=True, text=True,
                                          env=c.env, cwd=c.cwd, timeout=c.timeout)
            return self._result
        rc_path = Path(self._files["rc"])
        runner = _state["runner"]
        while not rc_path.exists():
            if runner.poll() is not None and not rc_path.exists():
                raise RuntimeError(f"the child-process runner exited ({runner.returncode})")
            time.sleep(0.01)
        rc = rc_path.read_text()
        if rc == "skipped":
            raise RuntimeError("this child process was skipped: no selected test named it")
        out = Path(self._files["out"]).read_text(errors="replace")
        err = Path(self._files["err"]).read_text(errors="replace")
        if rc == "timeout":
            raise subprocess.TimeoutExpired(c.argv, c.timeout, out, err)
        self._result = subprocess.CompletedProcess(c.argv, int(rc), out, err)
        return self._result


def scratch_dir() -> Path:
    """A directory removed at the end of the test session (by ``stop``)."""
    if _state["dir"] is None:
        _state["dir"] = tempfile.mkdtemp(prefix="dfbuffer-tests-")
    return Path(_state["dir"])


def start(job: ChildProcess) -> None:
    """Gives ``job`` to the runner (starting the runner on the first job); a job already
    started is left alone.  Called by conftest.py as a marked test is collected."""
    if job._files is not None:
        return
    d = scratch_dir() / "jobs"
    if _state["runner"] is None:
        d.mkdir(exist_ok=True)
        _state["runner"] = subprocess.Popen([sys.executable, "-c", _RUNNER],
                                            stdin=subprocess.PIPE, text=True,
                                            stdout=subprocess.DEVNULL,
                                            start_new_session=True)
    c = job.command()
    i = len(_state["started"])
    job._files = {k: str(d / f"{i}.{k}") for k in ("out", "err", "rc", "skip", "pid", "json")}
    _state["started"].append(job)
    env = dict(os.environ) if c.env is None else c.env
    spec = {"argv": c.argv, "env": env, "cwd": c.cwd, "timeout": c.timeout, **job._files}
    Path(job._files["json"]).write_text(json.dumps(spec))
    runner = _state["runner"]
    runner.stdin.write(job._files["json"] + "\n")
    runner.stdin.flush()


def keep(needed: set[int]) -> None:
    """Collection is done: skips the started jobs whose ``id`` is not in ``needed``
    (killing the one running, if it is one of them) and tells the runner no job follows."""
    for j in _state["started"]:
        if id(j) in needed:
            continue
        Path(j._files["skip"]).touch()
        _kill(j)
    runner = _state["runner"]
    if runner is not None and not runner.stdin.closed:
        runner.stdin.close()


def _kill(job: ChildProcess) -> None:
    """Kills the job's process group if the runner started it and it has not ended."""
    pid_path, rc_path = Path(job._files["pid"]), Path(job._files["rc"])
    if pid_path.exists() and not rc_path.exists():
        try:
            os.killpg(int(pid_path.read_text()), signal.SIGKILL)
        except (OSError, ValueError):
            pass  # it just ended


def stop() -> None:
    """Ends the runner and the job it runs if the session ends early; removes the files."""
    runner = _state["runner"]
    if runner is not None and not runner.stdin.closed:
        try:
            runner.stdin.close()
        except OSError:
            pass
    if runner is not None and runner.poll() is None:
        os.killpg(runner.pid, signal.SIGKILL)  # the runner first: it starts no other job
        runner.wait()
    for j in _state["started"]:
        _kill(j)  # the job it ran, in a session of its own
    if _state["dir"] is not None:
        shutil.rmtree(_state["dir"], ignore_errors=True)
