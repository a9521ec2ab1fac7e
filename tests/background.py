"""Child processes that tests need, run ahead of the tests that read their results.

A test module ``submit()``s a command when it is imported (at collection); once collection
is done, conftest.py ``start()``s one runner process that executes the submitted commands
of the collected modules one after the other, while the in-process tests run.  A test
then asks ``job.result()`` for the finished ``subprocess.CompletedProcess`` (waiting if the
runner is not there yet).  Nothing of the test process changes: no thread, no fork; each
command is exactly the child process the test would have started itself.  Without a
runner (the module imported outside pytest, or its jobs not started), ``result()`` runs
the command there and then.
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

_RUNNER = r"""
import json, os, subprocess, sys
for job in json.load(open(sys.argv[1])):
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        try:
            p = subprocess.Popen(job["argv"], stdout=out, stderr=err, env=job["env"],
                                 cwd=job["cwd"], stdin=subprocess.DEVNULL)
        except OSError as e:
            err.write(repr(e).encode())
            rc = "127"
        else:
            try:
                rc = str(p.wait(timeout=job["timeout"]))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = "timeout"
    with open(job["rc"] + ".tmp", "w") as f:
        f.write(rc)
    os.replace(job["rc"] + ".tmp", job["rc"])
"""

_jobs: list[Job] = []
_state: dict = {"dir": None, "runner": None}


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
        out = Path(self.files["out"]).read_text(errors="replace")
        err = Path(self.files["err"]).read_text(errors="replace")
        if rc == "timeout":
            raise subprocess.TimeoutExpired(self.argv, self.timeout, out, err)
        self._result = subprocess.CompletedProcess(self.argv, int(rc), out, err)
        return self._result


def submit(argv, *, owner: str, env: dict | None = None, cwd=None, timeout: float = 300) -> Job:
    """Registers a command for the runner; ``owner``: the submitting module's ``__file__``
    (its jobs run only when one of its tests was collected)."""
    job = Job(argv, env, None if cwd is None else str(cwd), timeout, os.path.abspath(owner))
    _jobs.append(job)
    return job


def scratch_dir() -> Path:
    """A directory removed at the end of the session (by ``stop``)."""
    if _state["dir"] is None:
        _state["dir"] = tempfile.mkdtemp(prefix="dfbuffer-tests-")
    return Path(_state["dir"])


def start(owners: set[str]) -> None:
    """Starts the runner over the submitted jobs of these modules (in submission order)."""
    todo = [j for j in _jobs if j.owner in owners and j.files is None and j._result is None]
    if not todo or _state["runner"] is not None:
        return
    d = scratch_dir() / "jobs"
    d.mkdir(exist_ok=True)
    specs = []
    for i, j in enumerate(todo):
        j.files = {k: str(d / f"{i}.{k}") for k in ("out", "err", "rc")}
        env = dict(os.environ) if j.env is None else j.env
        specs.append({"argv": j.argv, "env": env, "cwd": j.cwd, "timeout": j.timeout, **j.files})
    spec_file = d / "jobs.json"
    spec_file.write_text(json.dumps(specs))
    _state["runner"] = subprocess.Popen([sys.executable, "-c", _RUNNER, str(spec_file)],
                                        stdin=subprocess.DEVNULL, start_new_session=True)


def stop() -> None:
    """Ends the runner (and the job it runs) if the session ends early; removes the files."""
    runner = _state["runner"]
    if runner is not None and runner.poll() is None:
        os.killpg(runner.pid, signal.SIGKILL)  # the runner and the command it runs
        runner.wait()
    if _state["dir"] is not None:
        shutil.rmtree(_state["dir"], ignore_errors=True)
