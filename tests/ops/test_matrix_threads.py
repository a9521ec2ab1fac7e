"""to_matrix's threads fit the machine: none beyond the CPUs this process may run on."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from child_processes import ChildProcess, Command

# A child that fills a 64 MiB matrix (eight threads' worth by size) again and again while
# a poller thread records the most threads /proc/self/task listed; prints
# "<threads before the calls> <most seen during them>".
CHILD = r"""
import os, sys, threading
import numpy as np
import pyarrow as pa
import dfbuffer

threads = None if sys.argv[1] == "None" else int(sys.argv[1])
src = np.random.default_rng(0).random((1 << 19, 16))
t = pa.table({f"c{j}": src[:, j].copy() for j in range(16)})
out = np.empty(src.shape)
stop = threading.Event()
seen = []

def poll():
    while not stop.is_set():
        seen.append(len(os.listdir("/proc/self/task")))

p = threading.Thread(target=poll)
p.start()
while not seen:
    pass
base = max(seen)
for _ in range(60):
    dfbuffer.to_matrix(t, out=out, threads=threads)
    if max(seen) > base:
        break
stop.set()
p.join()
assert (out == src).all()
print(base, max(seen))
"""

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("taskset") is None,
    reason="needs Linux's /proc and taskset",
)


def _child(prefix: list[str], threads: str) -> ChildProcess:
    """The child above under ``prefix`` (taskset), run by tests/child_processes.py on the
    second core while the in-process tests run."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return ChildProcess(
        lambda: Command([*prefix, sys.executable, "-c", CHILD, threads], env=env, timeout=300)
    )


def _result(job: ChildProcess) -> tuple[int, int]:
    res = job.result()
    assert res.returncode == 0, res.stderr
    base, most = map(int, res.stdout.split())
    return base, most


_HAS_TASKSET = sys.platform.startswith("linux") and shutil.which("taskset") is not None
_TWO_CPUS = len(os.sched_getaffinity(0)) >= 2 if _HAS_TASKSET else False
_ONE_CPU = {t: _child(["taskset", "-c", "0"], t) for t in ("None", "4")} if _HAS_TASKSET else {}
_TWO = (
    _child(["taskset", "-c", ",".join(map(str, sorted(os.sched_getaffinity(0))[:2]))], "2")
    if _TWO_CPUS
    else None
)


@pytest.mark.child_process(*_ONE_CPU.values())
@pytest.mark.parametrize("threads", ["None", "4"])
def test_one_cpu_starts_no_thread(threads):
    base, most = _result(_ONE_CPU[threads])
    assert most == base


@pytest.mark.skipif(not _TWO_CPUS, reason="needs two CPUs")
@pytest.mark.child_process(_TWO)
def test_the_poller_sees_a_fill_thread_where_two_cpus_are_allowed():
    # the same child on two CPUs with threads=2 does start one: the poller above sees
    # threads, so its "none" under taskset means none
    base, most = _result(_TWO)
    assert most > base
