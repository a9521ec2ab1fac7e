"""to_matrix's threads fit the machine: none beyond the CPUs this process may run on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

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


def _run(prefix: list[str], threads: str) -> tuple[int, int]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    res = subprocess.run(
        [*prefix, sys.executable, "-c", CHILD, threads],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    base, most = map(int, res.stdout.split())
    return base, most


@pytest.mark.parametrize("threads", ["None", "4"])
def test_one_cpu_starts_no_thread(threads):
    base, most = _run(["taskset", "-c", "0"], threads)
    assert most == base


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_the_poller_sees_a_fill_thread_where_two_cpus_are_allowed():
    # the same child on two CPUs with threads=2 does start one: the poller above sees
    # threads, so its "none" under taskset means none
    two = ",".join(map(str, sorted(os.sched_getaffinity(0))[:2]))
    base, most = _run(["taskset", "-c", two], "2")
    assert most > base
