"""Child processes that tests need, run ahead of the tests that read their results.

A test module ``submit()``s a command when it is imported (at collection).  Under pytest
(conftest.py calls ``enable()`` before collecting) the first submission starts one runner
process, which executes the submitted commands one after the other while collection goes
on and the in-process tests run: the child processes use the second core from the start.
Once collection is done, ``keep()`` names the modules that have collected tests; the jobs
of the others (modules imported but deselected) are skipped, or killed if running.  A test
then asks ``job.result()`` for the finished ``subprocess.CompletedProcess`` (waiting if the
runner is not there yet).  Nothing of the test process changes: no thread, no fork; each
command is exactly the child process the test would have started itself.  Without a
runner (the module imported outside pytest, or under ``--collect-only``), ``result()``
runs the command there and then.
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
from pathlib import Path

# The runner reads one job per line on stdin (until EOF).  Before starting job i it looks
# for ``i.skip`` (a deselected module's job); it starts the child in a session of its own
# (so that killing it kills what it started), writes its pid to ``i.pid``, and the exit
# status (or "timeout", "skipped", "127") to ``i.rc`` last, atomically.
_RUNNER = r"""
import json, os, subprocess, sys
def finish(job, rc):
    with open(job["rc"] + ".tmp", "w") as f:
        f.write(rc)
    os.replace(job["rc"] + ".tmp", job["rc"])
for line in sys.stdin:
    job = json.loads(line)
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

_jobs: list[Job] = []
_state: dict = {"dir": None, "runner": None, "enabled": False}


class Job:
    """One child process: ``argv`` with ``env`` (None: this process's) in ``cwd``."""

    def __init__(self, argv, env, cwd, timeout, owner):
        self.argv, self.env, self.cwd = [str(a) for a in argv], env, cwd
        self.timeout, self.owner = timeout, owner
        self.files: dict | None = None  # set once handed to the runner
        self._result: subprocess.CompletedProcess | None = None

    def result(self) -> subprocess.CompletedProcess:
        """The finished process (text stdout/stderr); raises subprocess.TimeoutExpired."""
        if self._result is not None:
            return self._result
        if self.files is None:
            self._result = subprocess.run(self.argv, capture_output=True, text=True,
                                          env=self.env, cwd=self.cwd, timeout=self.timeout)
            return self._result
        rc_path = Path(self.files["rc"])
        runner = _state["runner"]
        while not rc_path.exists():
            if runner.poll() is not None and not rc_path.exists():
                raise RuntimeError(f"the background runner exited ({runner.returncode})")
            time.sleep(0.01)
        rc = rc_path.read_text()
        if rc == "skipped":
            raise RuntimeError(f"the job of {self.owner} was skipped: its module was deselected")
        out = Path(self.files["out"]).read_text(errors="replace")
        err = Path(self.files["err"]).read_text(errors="replace")
        if rc == "timeout":
            raise subprocess.TimeoutExpired(self.argv, self.timeout, out, err)
        self._result = subprocess.CompletedProcess(self.argv, int(rc), out, err)
        return self._result


def submit(argv, *, owner: str, env: dict | None = None, cwd=None, timeout: float = 300) -> Job:
    """Registers a command (and hands it to the runner once ``enable()`` was called);
    ``owner``: the submitting module's ``__file__`` (its job is kept only if one of its
    tests is collected)."""
    job = Job(argv, env, None if cwd is None else str(cwd), timeout, os.path.abspath(owner))
    _jobs.append(job)
    if _state["enabled"]:
        _hand_over(job)
    return job


def python(code: str, *, owner: str, env: dict | None = None, timeout: float = 120) -> Job:
    """Submits ``python -c code`` (this interpreter)."""
    return submit([sys.executable, "-c", code], owner=owner, env=env, timeout=timeout)


def scratch_dir() -> Path:
    """A directory removed at the end of the session (by ``stop``)."""
    if _state["dir"] is None:
        _state["dir"] = tempfile.mkdtemp(prefix="dfbuffer-tests-")
    return Path(_state["dir"])


def enable() -> None:
    """Lets ``submit()`` start the runner and hand it each job at once (called by
    conftest.py before collection)."""
    _state["enabled"] = True


def _hand_over(job: Job) -> None:
    """Gives ``job`` to the runner, starting the runner on the first job."""
    d = scratch_dir() / "jobs"
    if _state["runner"] is None:
        d.mkdir(exist_ok=True)
        _state["runner"] = subprocess.Popen([sys.executable, "-c", _RUNNER],
                                            stdin=subprocess.PIPE, text=True,
                                            stdout=subprocess.DEVNULL,
                                            start_new_session=True)
    i = sum(j.files is not None for j in _jobs)
    job.files = {k: str(d / f"{i}.{k}") for k in ("out", "err", "rc", "skip", "pid")}
    env = dict(os.environ) if job.env is None else job.env
    spec = {"argv": job.argv, "env": env, "cwd": job.cwd, "timeout": job.timeout, **job.files}
    runner = _state["runner"]
    runner.stdin.write(json.dumps(spec) + "\n")
    runner.stdin.flush()


def keep(owners: set[str]) -> None:
    """Collection is done: skips the jobs of modules without collected tests (killing the
    one running, if it is one of them) and tells the runner no job follows."""
    for j in _jobs:
        if j.files is None or j.owner in owners:
            continue
        Path(j.files["skip"]).touch()
        _kill(j)
    runner = _state["runner"]
    if runner is not None and not runner.stdin.closed:
        runner.stdin.close()


def _kill(job: Job) -> None:
    """Kills the job's process group if the runner started it and it has not ended."""
    pid_path, rc_path = Path(job.files["pid"]), Path(job.files["rc"])
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
    for j in _jobs:
        if j.files is not None:
            _kill(j)  # the job it ran, in a session of its own
    if _state["dir"] is not None:
        shutil.rmtree(_state["dir"], ignore_errors=True)
